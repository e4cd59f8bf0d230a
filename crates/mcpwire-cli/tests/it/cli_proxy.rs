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
        mcpwire_testkit::eventually(format!("mcp serve listening on {port}"), || async {
            std::net::TcpStream::connect(("127.0.0.1", port)).ok()
        })
        .await;
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

/// Reads stderr to its end on a task of its own (so that a chatty proxy never blocks on it).
fn collect(stderr: tokio::process::ChildStderr) -> tokio::task::JoinHandle<String> {
    tokio::spawn(async move {
        let mut text = String::new();
        let _ = tokio::io::AsyncReadExt::read_to_string(&mut BufReader::new(stderr), &mut text).await;
        text
    })
}

#[tokio::test]
async fn verbose_traces_the_upstream_traffic_on_stderr_and_keeps_stdout_for_the_protocol() {
    let upstream = format!("'{MCP}' serve");
    let mut proxy = Command::new(MCP)
        .args(["proxy", &upstream, "--stdio", "-v"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let stderr = collect(proxy.stderr.take().unwrap());
    let mut stdin = proxy.stdin.take().unwrap();
    let mut stdout = BufReader::new(proxy.stdout.take().unwrap()).lines();
    // A legacy client downstream: initialize, initialized, then a call.
    let messages = [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"traced through"}}}"#,
    ];
    for m in messages {
        stdin.write_all(format!("{m}\n").as_bytes()).await.unwrap();
    }
    let mut out = Vec::new();
    let answered = tokio::time::timeout(Duration::from_secs(20), async {
        while let Ok(Some(line)) = stdout.next_line().await {
            let v: serde_json::Value = serde_json::from_str(&line).unwrap_or_default();
            out.push(line);
            if v["id"] == 2 {
                return Some(v);
            }
        }
        None
    })
    .await
    .expect("the call answered in time")
    .expect("an answer to the call");
    assert_eq!(answered["result"]["content"][0]["text"], "traced through", "{answered}");
    drop(stdin);
    let status = tokio::time::timeout(Duration::from_secs(10), proxy.wait()).await.unwrap().unwrap();
    assert!(status.success());
    while let Ok(Ok(Some(line))) = tokio::time::timeout(Duration::from_secs(5), stdout.next_line()).await {
        out.push(line);
    }
    let err = tokio::time::timeout(Duration::from_secs(10), stderr).await.unwrap().unwrap();

    // stdout: JSON-RPC messages only.
    for line in &out {
        let v: serde_json::Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
        assert_eq!(v["jsonrpc"], "2.0", "{line}");
    }
    assert!(out.iter().any(|l| l.contains(r#""id":1"#) && l.contains("protocolVersion")), "{out:?}");
    // stderr: the upstream exchange, both ways (the downstream one is not traced).
    let traced =
        |arrow: &str, needle: &str| err.lines().any(|l| l.contains(&format!("s] {arrow} {{")) && l.contains(needle));
    assert!(traced("→", r#""method":"server/discover""#), "{err}");
    assert!(traced("←", r#""supportedVersions""#), "{err}");
    assert!(traced("→", r#""method":"tools/call""#) && traced("→", "traced through"), "{err}");
    assert!(traced("←", r#""text":"traced through""#), "{err}");
    assert!(!err.contains(r#""clientInfo":{"name":"t""#), "the downstream side is not traced: {err}");
}

/// The headers of every request a [`recording_server`] got, in order.
type Recorded = std::sync::Arc<std::sync::Mutex<Vec<Vec<(String, String)>>>>;

/// An HTTP server on 127.0.0.1 that records the headers of every request (names in lower
/// case) and refuses each with a 400, so that connecting to it fails after a few requests.
fn recording_server() -> (String, Recorded) {
    use std::io::{BufRead, Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let record = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { break };
            let record = record.clone();
            std::thread::spawn(move || {
                let mut reader = std::io::BufReader::new(stream.try_clone().unwrap());
                let mut headers = Vec::new();
                let mut length = 0;
                let mut line = String::new();
                let _ = reader.read_line(&mut line);
                loop {
                    line.clear();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 || line.trim_end().is_empty() {
                        break;
                    }
                    if let Some((name, value)) = line.trim_end().split_once(':') {
                        let name = name.trim().to_ascii_lowercase();
                        if name == "content-length" {
                            length = value.trim().parse().unwrap_or(0);
                        }
                        headers.push((name, value.trim().to_owned()));
                    }
                }
                let mut body = vec![0; length];
                let _ = reader.read_exact(&mut body);
                record.lock().unwrap().push(headers);
                let _ = stream.write_all(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
            });
        }
    });
    (url, seen)
}

#[tokio::test]
async fn header_and_bearer_go_to_an_http_upstream() {
    let (url, seen) = recording_server();
    let (code, _, err) =
        mcp(&["proxy", &url, "--stdio", "--header", "X-Test: yes", "--bearer", "tok-123", "--timeout", "10"]).await;
    assert_eq!(code, 3, "the upstream refuses everything: {err}");
    let seen = seen.lock().unwrap().clone();
    assert!(seen.len() >= 2, "discover, then initialize: {seen:?}");
    for headers in &seen {
        let has = |name: &str, value: &str| headers.iter().any(|(n, v)| n == name && v == value);
        assert!(has("x-test", "yes") && has("authorization", "Bearer tok-123"), "{headers:?}");
    }
}
