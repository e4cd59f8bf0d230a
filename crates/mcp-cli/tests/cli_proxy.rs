//! `mcp proxy`: the real binary bridging transports and eras, driven by the real binary's
//! client commands (every wait bounded; every process killed on drop).

use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, Command};

const MCP: &str = env!("CARGO_BIN_EXE_mcp");

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Starts `mcp proxy TARGET --http` on a free port and waits until it listens.
async fn proxy_http(target: &str, extra: &[&str]) -> (Child, String) {
    let port = free_port();
    let mut child = Command::new(MCP)
        .args(["proxy", target, "--http", &format!("127.0.0.1:{port}")])
        .args(extra)
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let ready = tokio::time::timeout(Duration::from_secs(20), async {
        while let Ok(Some(line)) = lines.next_line().await {
            if line.contains("serving on") {
                return true;
            }
        }
        false
    })
    .await;
    assert_eq!(ready, Ok(true), "the proxy started");
    (child, format!("http://127.0.0.1:{port}/mcp"))
}

async fn mcp(args: &[&str]) -> (i32, String, String) {
    let out = tokio::time::timeout(Duration::from_secs(30), Command::new(MCP).args(args).kill_on_drop(true).output())
        .await
        .expect("mcp finished in time")
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[tokio::test]
async fn a_stdio_server_served_over_http_to_both_eras() {
    let upstream = format!("'{MCP}' serve");
    let (_proxy, url) = proxy_http(&upstream, &[]).await;
    for pin in [None, Some("2025-06-18"), Some("2024-11-05")] {
        let mut args = vec!["call", &url, "echo", "text=bridged"];
        if let Some(v) = pin {
            args.extend(["--protocol-version", v]);
        }
        let (code, out, err) = mcp(&args).await;
        assert_eq!((code, out.trim()), (0, "bridged"), "{pin:?}: {err}");
    }
    // A legacy client's sampling answer travels back through the bridge to a modern upstream.
    let (code, out, err) = mcp(&[
        "call",
        &url,
        "test_sampling",
        "prompt=q",
        "--sample-reply",
        "from the edge",
        "--protocol-version",
        "2025-06-18",
    ])
    .await;
    assert_eq!((code, out.trim()), (0, "LLM response: from the edge"), "{err}");
    let (code, out, _) = mcp(&["list", &url, "prompts", "--json"]).await;
    assert_eq!(code, 0);
    assert!(out.contains("test_prompt_with_arguments"));
}

#[tokio::test]
async fn an_http_server_served_on_stdio_with_the_upstream_pinned_legacy() {
    let (_server, url) = {
        let port = free_port();
        let child = Command::new(MCP)
            .args(["serve", "--http", &format!("127.0.0.1:{port}")])
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        for _ in 0..100 {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        (child, format!("http://127.0.0.1:{port}/mcp"))
    };
    // A modern client on stdio, through the proxy, to the server spoken to as 2025-06-18.
    let mut proxy = Command::new(MCP)
        .args(["proxy", &url, "--stdio", "--protocol-version", "2025-06-18"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdin = proxy.stdin.take().unwrap();
    let mut stdout = BufReader::new(proxy.stdout.take().unwrap()).lines();
    let meta = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;
    let call = format!(
        r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"echo","arguments":{{"text":"x"}},{meta}}}}}"#
    );
    stdin.write_all(format!("{call}\n").as_bytes()).await.unwrap();
    let line = tokio::time::timeout(Duration::from_secs(20), stdout.next_line()).await.unwrap().unwrap().unwrap();
    let v: serde_json::Value = serde_json::from_str(&line).unwrap();
    assert_eq!(v["id"], 7);
    assert_eq!(v["result"]["content"][0]["text"], "x");
    assert_eq!(v["result"]["resultType"], "complete", "answered in the downstream client's revision");
    drop(stdin);
    let status = tokio::time::timeout(Duration::from_secs(10), proxy.wait()).await.unwrap().unwrap();
    assert!(status.success(), "the proxy ends when its stdin does");
}

#[tokio::test]
async fn an_unreachable_upstream_is_one_clear_error() {
    let (code, _, err) = mcp(&["proxy", "http://127.0.0.1:1/mcp", "--stdio", "--timeout", "5"]).await;
    assert_ne!(code, 0);
    assert!(err.starts_with("mcp proxy: cannot connect"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}

#[tokio::test]
async fn a_legacy_client_reaches_a_modern_only_server_through_the_proxy() {
    let modern_only = format!("'{MCP}' serve --modern-only");
    // Directly, a legacy client is refused, told which versions the server speaks.
    let (code, _, err) = mcp(&["info", &modern_only, "--protocol-version", "2025-06-18"]).await;
    assert_ne!(code, 0);
    assert!(err.contains("2026-07-28"), "{err}");
    // Through the proxy, which speaks 2026-07-28 upstream and both eras downstream, it works.
    let (_proxy, url) = proxy_http(&modern_only, &[]).await;
    for version in ["2025-06-18", "2024-11-05"] {
        let (code, out, err) = mcp(&["call", &url, "echo", "text=legacy in", "--protocol-version", version]).await;
        assert_eq!((code, out.trim()), (0, "legacy in"), "{version}: {err}");
    }
    let (code, out, err) = mcp(&["info", &url, "--protocol-version", "2025-11-25", "--json"]).await;
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("2025-11-25"), "{out}");
}
