//! `mcp serve` with the limits given on its command line, as a real child process over
//! stdio, driven by our client.

use std::time::Duration;

use mcpwire_client::ChildCommand;
use mcpwire_client::{Client, ClientSession};
use serde_json::json;

const WAIT: Duration = Duration::from_secs(20);

async fn serve(args: &[&str]) -> ClientSession {
    let command = args.iter().fold(ChildCommand::new(env!("CARGO_BIN_EXE_mcp")).arg("serve"), |c, a| c.arg(*a));
    let client = Client::builder("limits-test", "1").build();
    tokio::time::timeout(WAIT, client.spawn(&command)).await.expect("in time").expect("mcp serve starts")
}

#[tokio::test]
async fn rate_limit_refuses_what_is_over_it_and_says_when_to_retry() {
    // A burst of 3 and a rate so low that no token comes back during the test.
    let s = serve(&["--rate-limit", "0.001:3"]).await;
    let run = async {
        // The client lists the tools first (to learn their output schemas): one token.
        for _ in 0..2 {
            s.call_tool("echo", json!({"text": "hi"})).await.expect("within the burst");
        }
        let refused = s.call_tool("echo", json!({"text": "hi"})).await.unwrap_err();
        let error = refused.error_object().expect("a JSON-RPC error");
        assert_eq!(error.code, mcpwire_server::middleware::RATE_LIMITED, "{refused}");
        assert!(error.message.starts_with("rate limit exceeded: retry in "), "{}", error.message);
        let wait = error.data.as_ref().and_then(|d| d["retryAfterMs"].as_u64()).expect("retryAfterMs");
        assert!(wait > 900_000, "a token comes back in about 1,000 s: {wait} ms");
    };
    tokio::time::timeout(WAIT, run).await.expect("in time");
    s.close().await.unwrap();
}

#[tokio::test]
async fn max_result_bytes_fails_a_result_larger_than_it() {
    let s = serve(&["--max-result-bytes", "300"]).await;
    let run = async {
        let small = s.call_tool("echo", json!({"text": "hi"})).await.expect("a small result");
        assert_ne!(small.is_error, Some(true), "{small:?}");
        let big = s.call_tool("echo", json!({"text": "x".repeat(400)})).await.expect("a tool error");
        assert_eq!(big.is_error, Some(true));
        let text = big.content[0].as_text().unwrap_or_default();
        assert_eq!(text, "the result of the tool echo is larger than 300 bytes");
    };
    tokio::time::timeout(WAIT, run).await.expect("in time");
    s.close().await.unwrap();
}

#[tokio::test]
async fn a_tool_timeout_cancels_that_tool_and_says_so() {
    // The tool would take a minute: far past its own limit, far within the limit of all.
    let s = serve(&["--tool-timeout", "test_long_running_task=0.5", "--request-timeout", "300"]).await;
    let run = async {
        let call = s.call_tool("test_long_running_task", json!({"steps": 1, "delayMs": 60000}));
        let result = call.await.expect("a tool error");
        assert_eq!(result.is_error, Some(true), "{result:?}");
        let text = result.content[0].as_text().unwrap_or_default();
        assert_eq!(text, "the tool test_long_running_task did not finish within 500ms; it was cancelled");
        let echoed = s.call_tool("echo", json!({"text": "still here"})).await.unwrap();
        assert_eq!(echoed.content[0].as_text(), Some("still here"));
    };
    tokio::time::timeout(WAIT, run).await.expect("in time");
    s.close().await.unwrap();
}

#[test]
fn bad_limit_values_are_usage_errors() {
    for args in [["--rate-limit", "0"], ["--tool-timeout", "echo"], ["--request-timeout", "-1"]] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_mcp")).arg("serve").args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }
}

#[tokio::test]
async fn the_proxy_takes_the_same_limits() {
    let upstream = format!("{} serve", env!("CARGO_BIN_EXE_mcp"));
    let command = ChildCommand::new(env!("CARGO_BIN_EXE_mcp"))
        .arg("proxy")
        .arg(upstream)
        .arg("--stdio")
        .arg("--rate-limit")
        .arg("0.001:3")
        .arg("--tool-timeout")
        .arg("test_long_running_task=0.5");
    let client = Client::builder("limits-test", "1").build();
    let s = tokio::time::timeout(WAIT, client.spawn(&command)).await.expect("in time").expect("mcp proxy starts");
    let run = async {
        // One token for the client's tool list, one for each call.
        let result = s.call_tool("test_long_running_task", json!({"steps": 1, "delayMs": 60000})).await.unwrap();
        let text = result.content[0].as_text().unwrap_or_default();
        assert_eq!(text, "the tool test_long_running_task did not finish within 500ms; it was cancelled");
        s.call_tool("echo", json!({"text": "hi"})).await.expect("within the burst");
        let refused = s.call_tool("echo", json!({"text": "hi"})).await.unwrap_err();
        assert_eq!(refused.code(), Some(mcpwire_server::middleware::RATE_LIMITED), "{refused}");
    };
    tokio::time::timeout(WAIT, run).await.expect("in time");
    s.close().await.unwrap();
}

#[tokio::test]
async fn show_and_hide_decide_what_is_listed_and_usable() {
    let s =
        serve(&["--show", "test_*", "--show", "echo", "--hide", "test_*_content", "--hide", "test_elicitation*"]).await;
    let run = async {
        let names: Vec<String> = s.list_all_tools().await.unwrap().into_iter().map(|t| t.name).collect();
        assert!(names.contains(&"echo".to_owned()) && names.contains(&"test_simple_text".to_owned()), "{names:?}");
        assert!(!names.contains(&"add".to_owned()), "not shown: {names:?}");
        assert!(!names.iter().any(|n| n.ends_with("_content") || n.starts_with("test_elicitation")), "{names:?}");
        let refused = s.call_tool("add", json!({"a": 1, "b": 2})).await.unwrap_err();
        assert_eq!(refused.code(), Some(-32602), "hidden is unknown: {refused}");
        let prompts: Vec<String> = s.list_all_prompts().await.unwrap().into_iter().map(|p| p.name).collect();
        assert!(prompts.iter().all(|p| p.starts_with("test_")), "{prompts:?}");
    };
    tokio::time::timeout(WAIT, run).await.expect("in time");
    s.close().await.unwrap();
}

/// `--http2`: a connection that begins with the HTTP/2 preface is answered in HTTP/2 (the
/// server's SETTINGS frame), one that speaks HTTP/1.1 on the same port as ever; without the
/// flag the preface is not served as HTTP/2.
#[tokio::test]
async fn http2_serves_h2c_beside_http1_on_the_same_port() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    // The preface, then an empty SETTINGS frame (length 0, type 4, no flags, stream 0).
    const HELLO: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\0\0\0\x04\0\0\0\0\0";
    async fn first_bytes(port: u16, hello: &[u8]) -> Vec<u8> {
        let mut tcp = tokio::net::TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        tcp.write_all(hello).await.unwrap();
        let mut seen = vec![0u8; 9];
        let n = tokio::time::timeout(WAIT, tcp.read(&mut seen)).await.expect("an answer").unwrap();
        seen.truncate(n);
        seen
    }
    let (_server, port) = crate::cli_shutdown::start(&["serve", "--http2", "--http2-max-streams", "8"]).await;
    let frame = first_bytes(port, HELLO).await;
    assert_eq!(frame.get(3), Some(&4), "a SETTINGS frame first: {frame:?}");
    let head = first_bytes(port, b"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").await;
    assert!(head.starts_with(b"HTTP/1.1 "), "{}", String::from_utf8_lossy(&head));
    let (_plain, port) = crate::cli_shutdown::start(&["serve"]).await;
    let frame = first_bytes(port, HELLO).await;
    assert_ne!(frame.get(3), Some(&4), "HTTP/2 only with --http2: {frame:?}");
    // --http2-max-streams means nothing without --http2: a usage error.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_mcp"))
        .args(["serve", "--http2-max-streams", "8", "--http", "127.0.0.1:0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
}
