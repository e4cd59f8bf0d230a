//! `mcp proxy --config FILE --http ADDR`: every server of an `mcpServers` file behind one
//! endpoint, each under its name, driven by the real binary's client commands. The servers
//! are `mcp serve` over stdio and `mcp serve --http` over HTTP (the npm servers and the
//! official SDKs' clients are in tests/e2e/run.sh `gateway`). Every wait is bounded; every
//! process is killed on drop.

use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

const MCP: &str = env!("CARGO_BIN_EXE_mcp");
const WAIT: Duration = Duration::from_secs(30);

/// Starts `mcp ARGS` and waits until its stderr says it serves; returns it, its /mcp URL,
/// and its stderr so far.
async fn serving(args: &[&str]) -> (Child, String, String) {
    let mut child = Command::new(MCP).args(args).stderr(Stdio::piped()).kill_on_drop(true).spawn().unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut said = String::new();
    let url = tokio::time::timeout(WAIT, async {
        while let Ok(Some(line)) = lines.next_line().await {
            said.push_str(&line);
            said.push('\n');
            if let Some(at) = line.find("serving on ") {
                let rest = &line[at + "serving on ".len()..];
                return Some(rest.split_whitespace().next().unwrap_or_default().to_owned());
            }
        }
        None
    })
    .await
    .expect("serving in time")
    .unwrap_or_else(|| panic!("mcp {args:?} ended before serving"));
    // Keep draining stderr so that the child never blocks on it.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    (child, url, said)
}

async fn mcp(args: &[&str]) -> (i32, String, String) {
    let out = tokio::time::timeout(WAIT, Command::new(MCP).args(args).kill_on_drop(true).output())
        .await
        .expect("mcp finished in time")
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn config(dir: &std::path::Path, servers: Value) -> std::path::PathBuf {
    let path = dir.join("gateway.json");
    std::fs::write(&path, serde_json::json!({ "mcpServers": servers }).to_string()).unwrap();
    path
}

#[tokio::test]
async fn every_server_of_the_file_under_its_name_to_both_eras() {
    let dir = tempdir();
    let web_port = free_port();
    let (_web, web_url, _) = serving(&["serve", "--http", &format!("127.0.0.1:{web_port}")]).await;
    let file = config(
        &dir,
        serde_json::json!({
            "local": {"command": MCP, "args": ["serve"]},
            "web": {"url": web_url},
        }),
    );
    let (_gateway, url, said) = serving(&["proxy", "--config", file.to_str().unwrap(), "--http", "127.0.0.1:0"]).await;
    assert!(said.contains("mounted under local_") && said.contains("mounted under web_"), "{said}");

    let (code, out, err) = mcp(&["list", &url, "tools", "--json"]).await;
    assert_eq!(code, 0, "{err}");
    let tools: Value = serde_json::from_str(&out).unwrap();
    let names: Vec<&str> = tools["tools"].as_array().unwrap().iter().filter_map(|t| t["name"].as_str()).collect();
    for name in ["local_echo", "local_add", "web_echo", "web_add", "local_test_tool_with_progress"] {
        assert!(names.contains(&name), "{name} in {names:?}");
    }
    assert!(!names.contains(&"echo"), "nothing unprefixed: {names:?}");

    for pin in [None, Some("2025-06-18"), Some("2024-11-05")] {
        let mut args = vec!["call", &url, "local_add", "a=1", "b=2"];
        args.extend(pin.iter().flat_map(|v| ["--protocol-version", *v]));
        let (code, out, err) = mcp(&args).await;
        assert_eq!((code, out.trim()), (0, r#"{"sum":3.0}"#), "{pin:?}: {err}");
        let mut args = vec!["call", &url, "web_echo", "text=through the gateway"];
        args.extend(pin.iter().flat_map(|v| ["--protocol-version", *v]));
        let (code, out, err) = mcp(&args).await;
        assert_eq!((code, out.trim()), (0, "through the gateway"), "{pin:?}: {err}");
    }
    let (code, out, err) = mcp(&["read", &url, "test://local/template/5/data"]).await;
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("Data for ID: 5"), "{out}");
}

#[tokio::test]
async fn a_stdio_server_that_dies_is_started_again() {
    let dir = tempdir();
    let file = config(&dir, serde_json::json!({"local": {"command": MCP, "args": ["serve"]}}));
    let (gateway, url, _) = serving(&["proxy", "--config", file.to_str().unwrap(), "--http", "127.0.0.1:0"]).await;
    let (code, out, _) = mcp(&["call", &url, "local_echo", "text=before"]).await;
    assert_eq!((code, out.trim()), (0, "before"));

    let first = children_of(gateway.id().unwrap());
    assert_eq!(first.len(), 1, "one upstream process: {first:?}");
    assert!(Command::new("kill").args(["-KILL", &first[0].to_string()]).status().await.unwrap().success());
    // Started again (with a backoff from 250 ms): the call succeeds once it is back.
    let answered = mcpwire_testkit::eventually("a call answered once the server is back", || async {
        let (code, out, _) = mcp(&["call", &url, "local_echo", "text=after"]).await;
        (code == 0).then_some(out)
    })
    .await;
    assert_eq!(answered.trim(), "after", "served again");
    let second = children_of(gateway.id().unwrap());
    assert!(second.len() == 1 && second != first, "a new process: {first:?} then {second:?}");
}

#[tokio::test]
async fn an_http_server_that_restarts_is_reached_again() {
    let dir = tempdir();
    let port = free_port();
    let web_addr = format!("127.0.0.1:{port}");
    let (mut web, web_url, _) = serving(&["serve", "--http", &web_addr]).await;
    let file = config(&dir, serde_json::json!({"web": {"url": web_url}}));
    // A legacy session upstream: the restarted server no longer knows it.
    let args =
        ["proxy", "--config", file.to_str().unwrap(), "--http", "127.0.0.1:0", "--protocol-version", "2025-11-25"];
    let (_gateway, url, _) = serving(&args).await;
    let (code, out, _) = mcp(&["call", &url, "web_echo", "text=before"]).await;
    assert_eq!((code, out.trim()), (0, "before"));

    web.kill().await.unwrap();
    let (code, _, err) = mcp(&["call", &url, "web_echo", "text=while down"]).await;
    assert_ne!(code, 0, "no server, no answer");
    assert!(err.contains(&web_addr), "the error names the upstream: {err}");

    let (_web, _, _) = serving(&["serve", "--http", &web_addr]).await;
    let (code, out, err) = mcp(&["call", &url, "web_echo", "text=after"]).await;
    assert_eq!((code, out.trim()), (0, "after"), "{err}");
}

#[tokio::test]
async fn bad_configs_and_unreachable_servers_are_clear_errors() {
    let dir = tempdir();
    let (code, _, err) = mcp(&["proxy", "--stdio"]).await;
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("give a TARGET, or --config FILE"), "{err}");

    let empty = config(&dir, serde_json::json!({}));
    let (code, _, err) = mcp(&["proxy", "--config", empty.to_str().unwrap(), "--stdio"]).await;
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("names no server"), "{err}");

    let spaced = config(&dir, serde_json::json!({"my server": {"command": MCP, "args": ["serve"]}}));
    let (code, _, err) = mcp(&["proxy", "--config", spaced.to_str().unwrap(), "--stdio"]).await;
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("server `my server`") && err.contains("cannot be a prefix"), "{err}");

    let missing = config(
        &dir,
        serde_json::json!({
            "good": {"command": MCP, "args": ["serve"]},
            "gone": {"command": "/nonexistent/mcpwire-server"},
        }),
    );
    let (code, _, err) = mcp(&["proxy", "--config", missing.to_str().unwrap(), "--http", "127.0.0.1:0"]).await;
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("`gone`") && err.contains("no such program"), "{err}");
    assert!(!err.contains("serving on"), "{err}");
}

/// The processes whose parent is `pid` (from /proc).
fn children_of(pid: u32) -> Vec<u32> {
    let mut children = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(child) = entry.file_name().to_string_lossy().parse::<u32>() else { continue };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else { continue };
        // `pid (comm) state ppid ...`: comm may hold spaces, so read after the last `)`.
        let after = stat.rsplit_once(')').map(|(_, rest)| rest).unwrap_or_default();
        let fields: Vec<&str> = after.split_whitespace().collect();
        if fields.get(1).and_then(|p| p.parse::<u32>().ok()) == Some(pid) && fields.first() != Some(&"Z") {
            children.push(child);
        }
    }
    children
}

/// A fresh directory under the target directory's tmp, removed by nobody (small).
fn tempdir() -> std::path::PathBuf {
    let base = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
    let dir = base.join(format!("gateway-{}-{}", std::process::id(), rand_suffix()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn rand_suffix() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}
