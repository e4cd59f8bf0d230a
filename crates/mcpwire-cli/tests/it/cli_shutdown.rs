//! `mcp serve --http` and `mcp proxy --http` on SIGTERM: the listener closes, calls in
//! flight finish and are answered, and the process exits 0 (every wait bounded; every
//! process killed on drop).

use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::process::{Child, Command};

const MCP: &str = env!("CARGO_BIN_EXE_mcp");
const LIMIT: Duration = Duration::from_secs(30);
const CALLS: usize = 8;

/// Starts `mcp ARGS --http 127.0.0.1:0`-like on a free port; returns it once it listens.
pub(crate) async fn start(args: &[&str]) -> (Child, u16) {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut child = Command::new(MCP)
        .args(args)
        .args(["--http", &format!("127.0.0.1:{port}")])
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let ready = tokio::time::timeout(LIMIT, async {
        while let Ok(Some(line)) = lines.next_line().await {
            if line.contains("serving on") {
                return true;
            }
        }
        false
    })
    .await;
    assert_eq!(ready, Ok(true), "{args:?} started");
    // The rest of stderr is drained, so that the child never blocks writing it.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    (child, port)
}

/// A 2026-07-28 call of `test_long_running_task` (10 steps of 100 ms, with progress) on a
/// connection of its own; returns once the call is seen running (its first progress).
async fn call_in_flight(port: u16, id: usize) -> (TcpStream, Vec<u8>) {
    let body = serde_json::json!({
        "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {
            "name": "test_long_running_task", "arguments": {"steps": 10, "delayMs": 100},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
                "progressToken": format!("p{id}"),
            }
        }
    })
    .to_string();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: tools/call\r\nMcp-Name: test_long_running_task\r\nConnection: close\r\n\
         Content-Length: {}\r\n\r\n",
        body.len()
    );
    let mut tcp = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    tcp.write_all(head.as_bytes()).await.unwrap();
    tcp.write_all(body.as_bytes()).await.unwrap();
    let mut seen = Vec::new();
    tokio::time::timeout(LIMIT, async {
        while !String::from_utf8_lossy(&seen).contains("notifications/progress") {
            let mut chunk = [0; 4096];
            let n = tcp.read(&mut chunk).await.unwrap();
            assert!(n > 0, "call {id}: the connection closed before any progress: {}", String::from_utf8_lossy(&seen));
            seen.extend_from_slice(&chunk[..n]);
        }
    })
    .await
    .unwrap_or_else(|_| panic!("call {id}: no progress in time"));
    (tcp, seen)
}

/// Starts `CALLS` calls, sends SIGTERM while all run, and checks that each is answered and
/// that the process exits 0.
async fn calls_in_flight_survive_sigterm(args: &[&str]) {
    let (mut child, port) = start(args).await;
    let mut calls = Vec::new();
    for id in 0..CALLS {
        calls.push(call_in_flight(port, id).await);
    }
    let pid = child.id().expect("running").to_string();
    let killed = Command::new("kill").args(["-TERM", &pid]).status().await.unwrap();
    assert!(killed.success());
    for (id, (mut tcp, mut seen)) in calls.into_iter().enumerate() {
        tokio::time::timeout(LIMIT, tcp.read_to_end(&mut seen))
            .await
            .unwrap_or_else(|_| panic!("{args:?} call {id}: no end in time"))
            .unwrap();
        let text = String::from_utf8_lossy(&seen);
        assert!(text.contains("Counted to 10."), "{args:?} call {id} was not answered: {text}");
    }
    let status = tokio::time::timeout(LIMIT, child.wait()).await.expect("exited in time").unwrap();
    assert_eq!(status.code(), Some(0), "{args:?}");
}

#[tokio::test]
async fn serve_http_answers_the_calls_in_flight_on_sigterm_then_exits_0() {
    calls_in_flight_survive_sigterm(&["serve"]).await;
}

#[tokio::test]
async fn proxy_http_answers_the_calls_in_flight_on_sigterm_then_exits_0() {
    let upstream = format!("'{MCP}' serve");
    calls_in_flight_survive_sigterm(&["proxy", &upstream]).await;
}

#[tokio::test]
async fn sigterm_with_nothing_in_flight_exits_0_at_once() {
    // The grace period is long: only the absence of work lets the process end early.
    let (mut child, _) = start(&["serve", "--shutdown-grace", "3600"]).await;
    let pid = child.id().expect("running").to_string();
    assert!(Command::new("kill").args(["-TERM", &pid]).status().await.unwrap().success());
    let status = tokio::time::timeout(LIMIT, child.wait()).await.expect("exited before the grace period").unwrap();
    assert_eq!(status.code(), Some(0));
}
