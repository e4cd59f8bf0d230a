//! Connection limits and graceful shutdown of `McpHttp::serve` / `serve_until`, over real
//! TCP on loopback: slow or idle connections are closed, connections over the cap are
//! refused before anything is read, and a shutdown lets requests in flight finish.

use crate::common;

use std::time::Duration;

use common::*;
use mcpwire_http::{HttpConfig, McpHttp};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Reads until the peer closes; what it sent.
async fn read_to_close(tcp: &mut TcpStream, what: &str) -> String {
    let mut seen = Vec::new();
    within(what, tcp.read_to_end(&mut seen)).await.unwrap_or_else(|e| panic!("{what}: {e}"));
    String::from_utf8_lossy(&seen).into_owned()
}

#[tokio::test]
async fn a_connection_slow_to_send_its_headers_or_idle_after_a_response_is_closed() {
    let config = HttpConfig { header_read_timeout: Some(Duration::from_millis(300)), ..HttpConfig::default() };
    let s = TestServer::reference_with(config).await;
    // Never a header.
    let mut silent = TcpStream::connect(s.addr).await.unwrap();
    assert_eq!(read_to_close(&mut silent, "a silent connection").await, "");
    // Half a request line, then nothing more.
    let mut slow = TcpStream::connect(s.addr).await.unwrap();
    slow.write_all(b"POST /mcp HTTP/1.1\r\nHo").await.unwrap();
    let answer = read_to_close(&mut slow, "a connection stuck in its headers").await;
    assert!(!answer.contains("200 OK"), "{answer}");
    // Kept alive after an answer, then idle.
    let mut idle = TcpStream::connect(s.addr).await.unwrap();
    let body = modern_request(1, "tools/list", json!({})).to_string();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: application/json\r\n\
         MCP-Protocol-Version: {MODERN}\r\nMcp-Method: tools/list\r\nContent-Length: {}\r\n\r\n{body}",
        s.addr,
        body.len()
    );
    idle.write_all(head.as_bytes()).await.unwrap();
    let answer = read_to_close(&mut idle, "an idle keep-alive connection").await;
    assert!(answer.starts_with("HTTP/1.1 200 OK"), "the request itself is served: {answer}");
}

#[tokio::test]
async fn a_connection_over_the_cap_is_refused_before_it_is_read_and_the_others_are_served() {
    let config = HttpConfig { max_connections: 2, ..HttpConfig::default() };
    let s = TestServer::reference_with(config).await;
    let held = [TcpStream::connect(s.addr).await.unwrap(), TcpStream::connect(s.addr).await.unwrap()];
    // The third is answered without sending anything.
    let mut third = TcpStream::connect(s.addr).await.unwrap();
    let answer = read_to_close(&mut third, "a connection over the cap").await;
    assert!(answer.starts_with("HTTP/1.1 503 "), "{answer}");
    assert!(answer.contains("too many connections"), "{answer}");
    // A slot freed is a slot for the next (the server notices the close when it notices it:
    // tried a bounded number of times).
    drop(held);
    mcpwire_testkit::eventually("a connection is served once the held ones are gone", || async {
        let resp = within("after the cap", s.post_modern(&modern_request(1, "tools/list", json!({}))).send()).await;
        resp.is_ok_and(|r| r.status() == 200).then_some(())
    })
    .await;
}

#[tokio::test]
async fn after_shutdown_new_requests_are_503_and_endless_streams_end_with_a_retry_hint() {
    let s = TestServer::reference().await;
    let session = s.legacy_session("2025-11-25", json!({})).await;
    let get = s
        .client
        .get(s.url("/mcp"))
        .header("Accept", "text/event-stream")
        .header("Mcp-Session-Id", &session)
        .header("MCP-Protocol-Version", "2025-11-25");
    let stream = within("GET stream", get.send()).await.unwrap();
    assert_eq!(stream.status(), 200);
    let listen = modern_request(1, "subscriptions/listen", json!({"notifications": {"toolsListChanged": true}}));
    let listen = within("listen", s.post_modern(&listen).send()).await.unwrap();
    assert!(is_sse(&listen), "a listen stream");
    s.http.shutdown();
    let text = within("the GET stream ends", stream.text()).await.unwrap();
    assert!(text.ends_with("retry: 1000\n\n"), "{text:?}");
    let text = within("the listen stream ends", listen.text()).await.unwrap();
    assert!(text.ends_with("retry: 1000\n\n"), "{text:?}");
    let late =
        within("a request after", s.post_modern(&modern_request(2, "tools/list", json!({}))).send()).await.unwrap();
    assert_eq!(late.status(), 503);
    let late = within(
        "a legacy request after",
        s.post_legacy(&session, Some("2025-11-25"), &request(3, "ping", json!({}))).send(),
    );
    assert_eq!(late.await.unwrap().status(), 503);
}

#[tokio::test]
async fn a_shutdown_lets_calls_in_flight_finish_ends_streams_with_a_retry_hint_and_returns() {
    let (server, gate, started) = gated();
    let config = HttpConfig { shutdown_grace: Duration::from_secs(60), ..HttpConfig::default() };
    let http = McpHttp::new(server, config);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(http.clone().serve_until(listener, async move {
        let _ = stopped.await;
    }));
    let client = client();
    let url = format!("http://{addr}/mcp");
    // A legacy session with its GET stream open.
    let init = legacy_initialize(1, "2025-11-25", json!({}));
    let resp = within("initialize", client.post(&url).header("Accept", ACCEPT_BOTH).json(&init).send()).await.unwrap();
    let session = resp.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let initialized = notification("notifications/initialized", json!({}));
    let post = client.post(&url).header("Mcp-Session-Id", &session).header("MCP-Protocol-Version", "2025-11-25");
    within("initialized", post.json(&initialized).send()).await.unwrap();
    let get = client
        .get(&url)
        .header("Accept", "text/event-stream")
        .header("Mcp-Session-Id", &session)
        .header("MCP-Protocol-Version", "2025-11-25");
    let stream = within("GET stream", get.send()).await.unwrap();
    assert_eq!(stream.status(), 200);
    // A call in flight.
    let call = modern_request(2, "tools/call", json!({"name": "wait"}));
    let call = client
        .post(&url)
        .header("Accept", ACCEPT_BOTH)
        .header("MCP-Protocol-Version", MODERN)
        .header("Mcp-Method", "tools/call")
        .header("Mcp-Name", "wait")
        .json(&call)
        .send();
    let call = tokio::spawn(call);
    within("the call starts", started.acquire()).await.unwrap().forget();
    stop.send(()).unwrap();
    // The GET stream ends, with a hint to come back; the call goes on meanwhile.
    let text = within("the GET stream ends", stream.text()).await.unwrap();
    assert!(text.contains("retry: "), "{text:?}");
    assert!(!call.is_finished(), "the call waits for its gate");
    gate.add_permits(1);
    let answer = within("the call in flight", call).await.unwrap().unwrap();
    assert_eq!(tool_text(&final_message(answer).await), "done");
    within("serve_until returns", serving).await.unwrap().unwrap();
    // Nothing listens any more.
    assert!(TcpStream::connect(addr).await.is_err(), "the listener is closed");
}

#[tokio::test]
async fn an_initialize_beyond_max_sessions_is_503_until_a_session_ends() {
    let config = HttpConfig { max_sessions: 2, ..HttpConfig::default() };
    let s = TestServer::reference_with(config).await;
    let first = s.legacy_session("2025-06-18", json!({})).await;
    // An HTTP+SSE session counts too (held open: the stream is the session).
    let sse = within("GET /sse", s.client.get(s.url("/sse")).header("Accept", "text/event-stream").send()).await;
    let sse = sse.unwrap();
    assert_eq!(sse.status(), 200);
    assert_eq!(s.http.session_count(), 2);
    let resp = within("a third initialize", s.post_mcp(&legacy_initialize(7, "2025-11-25", json!({}))).send()).await;
    let resp = resp.unwrap();
    assert_eq!(resp.status(), 503);
    assert_eq!(resp.headers()["retry-after"], "1");
    assert!(resp.headers().get("mcp-session-id").is_none(), "no session for a refused initialize");
    let answer: serde_json::Value = within("body", resp.json()).await.unwrap();
    assert_eq!((answer["id"].clone(), answer["error"]["code"].clone()), (json!(7), json!(-32603)), "{answer}");
    let resp = within("a third GET /sse", s.client.get(s.url("/sse")).send()).await.unwrap();
    assert_eq!(resp.status(), 503);
    assert_eq!(s.http.session_count(), 2);
    // The sessions open are served meanwhile; once one ends, a new one opens.
    let list = request(2, "tools/list", json!({}));
    let resp = within("a held session", s.post_legacy(&first, Some("2025-06-18"), &list).send()).await.unwrap();
    assert_eq!(resp.status(), 200);
    let resp = s.client.delete(s.url("/mcp")).header("Mcp-Session-Id", &first).send();
    assert_eq!(within("DELETE", resp).await.unwrap().status(), 204);
    s.legacy_session("2025-11-25", json!({})).await;
    assert_eq!(s.http.session_count(), 2);
    drop(sse);
}

/// Reads one response with a `content-length` from a kept-alive connection; its head.
async fn read_response(tcp: &mut TcpStream, what: &str) -> String {
    let mut seen = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let text = String::from_utf8_lossy(&seen).into_owned();
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            let length: usize = head
                .lines()
                .find_map(|l| l.to_ascii_lowercase().strip_prefix("content-length: ").map(str::to_owned))
                .and_then(|n| n.trim().parse().ok())
                .unwrap_or_else(|| panic!("{what}: a content-length in {head:?}"));
            if body.len() >= length {
                return head.to_owned();
            }
        }
        let n = within(what, tcp.read(&mut chunk)).await.unwrap_or_else(|e| panic!("{what}: {e}"));
        assert!(n > 0, "{what}: the connection closed before a whole response: {text:?}");
        seen.extend_from_slice(&chunk[..n]);
    }
}

#[tokio::test]
async fn a_request_sent_on_an_idle_connection_as_the_shutdown_begins_is_answered_503() {
    let (server, _gate, _started) = gated();
    let http = McpHttp::new(server, HttpConfig::default());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(http.serve_until(listener, async move {
        let _ = stopped.await;
    }));
    let ask = format!("GET /mcp HTTP/1.1\r\nHost: {addr}\r\nAccept: text/event-stream\r\n\r\n");
    let mut tcp = TcpStream::connect(addr).await.unwrap();
    tcp.write_all(ask.as_bytes()).await.unwrap();
    let first = read_response(&mut tcp, "an answer before the shutdown").await;
    assert!(!first.starts_with("HTTP/1.1 503"), "{first}");

    // The shutdown begins while the connection is idle; the listener closes first.
    stop.send(()).unwrap();
    mcpwire_testkit::eventually("the listener closes", || async {
        TcpStream::connect(addr).await.is_err().then_some(())
    })
    .await;
    // The client, not knowing, sends its next request on the connection it holds.
    tcp.write_all(ask.as_bytes()).await.unwrap();
    let rest = read_to_close(&mut tcp, "the answer during the shutdown").await;
    assert!(rest.starts_with("HTTP/1.1 503"), "answered, not dropped: {rest:?}");
    assert!(rest.to_ascii_lowercase().contains("connection: close"), "{rest:?}");
    within("serve_until returns", serving).await.unwrap().unwrap();
}
