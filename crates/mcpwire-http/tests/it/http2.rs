//! HTTP/2 over cleartext (h2c, prior knowledge) beside HTTP/1.1 (`HttpConfig::http2`), over
//! real TCP on loopback, with hyper's own HTTP/2 client: calls of both eras, many requests at
//! once on one connection, a listen stream and a legacy session's GET stream sharing their
//! connection, the connection limits (`max_connections`, the header read timeout) and the
//! graceful shutdown.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::client::conn::http2;
use hyper::{Request, Response};
use hyper_util::rt::{TokioExecutor, TokioIo};
use mcpwire_http::{HttpConfig, McpHttp};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::task::JoinHandle;

const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

fn h2_config() -> HttpConfig {
    HttpConfig { http2: true, ..HttpConfig::default() }
}

/// One HTTP/2 connection of hyper's client; its driver runs in `conn`.
struct H2 {
    sender: http2::SendRequest<Full<Bytes>>,
    conn: JoinHandle<hyper::Result<()>>,
    authority: String,
}

impl H2 {
    async fn connect(addr: std::net::SocketAddr) -> Self {
        let tcp = within("connect", TcpStream::connect(addr)).await.expect("connect");
        let (sender, conn) = within("the HTTP/2 handshake", http2::handshake(TokioExecutor::new(), TokioIo::new(tcp)))
            .await
            .expect("an HTTP/2 handshake");
        Self { sender, conn: tokio::spawn(conn), authority: addr.to_string() }
    }

    /// A POST to `/mcp` with the headers a 2026-07-28 request needs (see `post_modern`), or
    /// with those given.
    fn post(&self, body: &Value, headers: &[(&str, &str)]) -> Request<Full<Bytes>> {
        let mut r = Request::post(format!("http://{}/mcp", self.authority))
            .header("content-type", "application/json")
            .header("accept", ACCEPT_BOTH);
        for (name, value) in headers {
            r = r.header(*name, *value);
        }
        r.body(Full::new(Bytes::from(body.to_string()))).expect("a request")
    }

    /// A request with no body to `/mcp` (a GET stream, a DELETE), with the headers given.
    fn bodiless(&self, method: hyper::Method, headers: &[(&str, &str)]) -> Request<Full<Bytes>> {
        let mut r = Request::builder().method(method).uri(format!("http://{}/mcp", self.authority));
        for (name, value) in headers {
            r = r.header(*name, *value);
        }
        r.body(Full::default()).expect("a request")
    }

    fn modern(&self, body: &Value) -> Request<Full<Bytes>> {
        let method = body["method"].as_str().unwrap_or_default();
        let name = match method {
            "tools/call" => body["params"]["name"].as_str(),
            _ => None,
        };
        let mut headers = vec![("mcp-protocol-version", MODERN), ("mcp-method", method)];
        if let Some(name) = name {
            headers.push(("mcp-name", name));
        }
        self.post(body, &headers)
    }

    async fn send(&self, request: Request<Full<Bytes>>) -> hyper::Result<Response<Incoming>> {
        let mut sender = self.sender.clone();
        within("ready to send", sender.ready()).await?;
        within("an answer's head", sender.send_request(request)).await
    }
}

/// The messages of a whole body: one JSON document, or the `data` of each SSE event.
async fn messages(response: Response<Incoming>) -> Vec<Value> {
    let body = within("a whole body", response.into_body().collect()).await.expect("a body").to_bytes();
    let text = String::from_utf8_lossy(&body).into_owned();
    if let Ok(one) = serde_json::from_str::<Value>(&text) {
        return vec![one];
    }
    let mut reader = Sse::default();
    reader.push(&text);
    reader.ready.into_iter().collect()
}

/// An SSE reader over an HTTP/2 response body.
#[derive(Default)]
struct Sse {
    pending: String,
    ready: std::collections::VecDeque<Value>,
    /// Whether a `retry:` field was seen.
    retry: bool,
}

impl Sse {
    fn push(&mut self, text: &str) {
        self.pending.push_str(&text.replace("\r\n", "\n"));
        while let Some(end) = self.pending.find("\n\n") {
            let event: String = self.pending.drain(..end + 2).collect();
            let data: Vec<&str> = event.lines().filter_map(|l| l.strip_prefix("data:")).map(str::trim_start).collect();
            self.retry |= event.lines().any(|l| l.starts_with("retry:"));
            if !data.is_empty() && !data.concat().trim().is_empty() {
                self.ready.push_back(serde_json::from_str(&data.join("\n")).expect("an event's data is JSON"));
            }
        }
    }

    /// The next message of `body`; `None` once it ends.
    async fn next(&mut self, body: &mut Incoming, what: &str) -> Option<Value> {
        loop {
            if let Some(message) = self.ready.pop_front() {
                return Some(message);
            }
            let frame = within(what, body.frame()).await?.unwrap_or_else(|e| panic!("{what}: {e}"));
            if let Ok(data) = frame.into_data() {
                self.push(&String::from_utf8_lossy(&data));
            }
        }
    }

    /// The next message of `body` whose method is `method` (others skipped).
    async fn next_of(&mut self, body: &mut Incoming, method: &str) -> Value {
        loop {
            match self.next(body, method).await {
                Some(m) if m["method"] == method => return m,
                Some(_) => {}
                None => panic!("the stream ended before {method}"),
            }
        }
    }
}

/// Opens a 2026-07-28 listen stream on `h2` for [`WATCHED`], once acknowledged: its body
/// and the reader of its events.
async fn listen(h2: &H2) -> (Incoming, Sse) {
    let listen =
        modern_request(1, "subscriptions/listen", json!({"notifications": {"resourceSubscriptions": [WATCHED]}}));
    let response = h2.send(h2.modern(&listen)).await.expect("a listen stream");
    assert_eq!(response.status(), 200);
    let mut stream = response.into_body();
    let mut sse = Sse::default();
    sse.next_of(&mut stream, "notifications/subscriptions/acknowledged").await;
    (stream, sse)
}

/// The text of the tool result in `messages` answering `id`.
fn answer_text(messages: &[Value], id: i64) -> String {
    let answer = messages.iter().find(|m| m["id"] == id).unwrap_or_else(|| panic!("no answer to {id}: {messages:?}"));
    answer["result"]["content"][0]["text"].as_str().unwrap_or_else(|| panic!("not a text result: {answer}")).to_owned()
}

/// Reads until the peer closes; what it sent.
async fn read_to_close(tcp: &mut TcpStream, what: &str) -> Vec<u8> {
    let mut seen = Vec::new();
    within(what, tcp.read_to_end(&mut seen)).await.unwrap_or_else(|e| panic!("{what}: {e}"));
    seen
}

#[tokio::test]
async fn a_2026_call_and_a_legacy_session_over_h2c() {
    let s = TestServer::reference_with(h2_config()).await;
    let h2 = H2::connect(s.addr).await;
    let call = modern_request(1, "tools/call", json!({"name": "echo", "arguments": {"text": "over h2"}}));
    let response = h2.send(h2.modern(&call)).await.expect("a 2026-07-28 call");
    assert_eq!(response.status(), 200);
    assert_eq!(response.version(), hyper::Version::HTTP_2);
    assert_eq!(answer_text(&messages(response).await, 1), "over h2");
    // A legacy session, on the same connection.
    let response = h2.send(h2.post(&legacy_initialize(1, "2025-06-18", json!({})), &[])).await.unwrap();
    assert_eq!(response.status(), 200);
    let session = response.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let init = messages(response).await;
    assert_eq!(init[0]["result"]["protocolVersion"], "2025-06-18", "{init:?}");
    let legacy = [("mcp-session-id", session.as_str()), ("mcp-protocol-version", "2025-06-18")];
    let initialized = h2.send(h2.post(&notification("notifications/initialized", json!({})), &legacy)).await.unwrap();
    assert_eq!(initialized.status(), 202);
    let call = request(2, "tools/call", json!({"name": "echo", "arguments": {"text": "legacy over h2"}}));
    let response = h2.send(h2.post(&call, &legacy)).await.unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(answer_text(&messages(response).await, 2), "legacy over h2");
    assert_eq!(s.http.session_count(), 1);
}

#[tokio::test]
async fn many_calls_at_once_on_one_h2_connection_which_counts_once_against_max_connections() {
    let (server, gate, started) = gated();
    let config = HttpConfig { max_connections: 1, ..h2_config() };
    let s = TestServer::start(server, config).await;
    let h2 = Arc::new(H2::connect(s.addr).await);
    const CALLS: usize = 4;
    let mut calls = Vec::new();
    for id in 0..CALLS {
        let h2 = h2.clone();
        calls.push(tokio::spawn(async move {
            let call = modern_request(id as i64, "tools/call", json!({"name": "wait"}));
            let response = h2.send(h2.modern(&call)).await.expect("a call");
            assert_eq!(response.status(), 200);
            answer_text(&messages(response).await, id as i64)
        }));
    }
    // Every call runs at once on the one connection (over HTTP/1.1 they would take turns).
    within("every call starts", started.acquire_many(CALLS as u32)).await.unwrap().forget();
    // The connection holds the only slot: another is refused, before anything is read.
    let mut other = TcpStream::connect(s.addr).await.unwrap();
    let refused = String::from_utf8_lossy(&read_to_close(&mut other, "a connection over the cap").await).into_owned();
    assert!(refused.starts_with("HTTP/1.1 503 "), "{refused}");
    gate.add_permits(CALLS);
    for call in calls {
        assert_eq!(within("a call's answer", call).await.unwrap(), "done");
    }
}

#[tokio::test]
async fn a_listen_stream_over_h2_gets_its_notification_while_other_requests_share_its_connection() {
    let s = TestServer::reference_with(h2_config()).await;
    let h2 = H2::connect(s.addr).await;
    let (mut stream, mut sse) = listen(&h2).await;
    // Other requests on the same connection while the stream is open.
    for id in 2..5 {
        let call =
            modern_request(id, "tools/call", json!({"name": "echo", "arguments": {"text": format!("call {id}")}}));
        let response = h2.send(h2.modern(&call)).await.expect("a call beside the stream");
        assert_eq!(answer_text(&messages(response).await, id), format!("call {id}"));
    }
    let touch = modern_request(9, "tools/call", json!({"name": "test_touch_resource", "arguments": {"uri": WATCHED}}));
    let response = h2.send(h2.modern(&touch)).await.expect("the touch");
    assert_eq!(response.status(), 200);
    messages(response).await;
    let update = sse.next_of(&mut stream, "notifications/resources/updated").await;
    assert_eq!(update["params"]["uri"], WATCHED);
    assert!(!h2.conn.is_finished(), "the connection is still open");
}

#[tokio::test]
async fn a_legacy_sessions_get_stream_over_h2_gets_its_notification_and_ends_with_the_session() {
    let s = TestServer::reference_with(h2_config()).await;
    let h2 = H2::connect(s.addr).await;
    let response = h2.send(h2.post(&legacy_initialize(1, "2025-06-18", json!({})), &[])).await.unwrap();
    let session = response.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    messages(response).await;
    let legacy = [("mcp-session-id", session.as_str()), ("mcp-protocol-version", "2025-06-18")];
    let initialized = h2.send(h2.post(&notification("notifications/initialized", json!({})), &legacy)).await.unwrap();
    assert_eq!(initialized.status(), 202);
    // The session's standalone stream, an HTTP/2 stream of the same connection.
    let get = h2.bodiless(hyper::Method::GET, &[legacy[0], legacy[1], ("accept", "text/event-stream")]);
    let response = h2.send(get).await.expect("a GET stream");
    assert_eq!(response.status(), 200);
    assert_eq!(response.version(), hyper::Version::HTTP_2);
    let (mut stream, mut sse) = (response.into_body(), Sse::default());
    // Subscribed on a POST beside it; the change comes on the stream, not on the POST.
    let subscribe = request(2, "resources/subscribe", json!({"uri": WATCHED}));
    let response = h2.send(h2.post(&subscribe, &legacy)).await.unwrap();
    assert_eq!(response.status(), 200);
    messages(response).await;
    let touch = request(3, "tools/call", json!({"name": "test_touch_resource", "arguments": {"uri": WATCHED}}));
    let answered = messages(h2.send(h2.post(&touch, &legacy)).await.unwrap()).await;
    assert!(answered.iter().all(|m| m["method"] != "notifications/resources/updated"), "{answered:?}");
    let update = sse.next_of(&mut stream, "notifications/resources/updated").await;
    assert_eq!(update["params"]["uri"], WATCHED);
    // The session deleted: its stream ends, and the connection stays for other requests.
    let deleted = h2.send(h2.bodiless(hyper::Method::DELETE, &legacy)).await.unwrap();
    assert!(deleted.status().is_success(), "{}", deleted.status());
    while sse.next(&mut stream, "the GET stream ends").await.is_some() {}
    let response = h2.send(h2.modern(&modern_request(4, "tools/list", json!({})))).await.unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(s.http.session_count(), 0);
}

#[tokio::test]
async fn http1_is_still_served_on_the_same_listener_with_http2_on() {
    let s = TestServer::reference_with(h2_config()).await;
    let call = modern_request(1, "tools/call", json!({"name": "echo", "arguments": {"text": "over h1"}}));
    let response = within("an HTTP/1.1 call", s.post_modern(&call).send()).await.unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.version(), reqwest::Version::HTTP_11);
    assert_eq!(tool_text(&final_message(response).await), "over h1");
    // A request whose first bytes begin like the preface (`P`), then differ.
    let mut tcp = TcpStream::connect(s.addr).await.unwrap();
    tcp.write_all(format!("POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Length: 2\r\n\r\n{{}}", s.addr).as_bytes())
        .await
        .unwrap();
    let mut head = [0u8; 12];
    within("an HTTP/1.1 answer", tcp.read_exact(&mut head)).await.unwrap();
    assert_eq!(&head[..9], b"HTTP/1.1 ", "{}", String::from_utf8_lossy(&head));
    // And an HTTP/2 connection beside them.
    let h2 = H2::connect(s.addr).await;
    let response = h2.send(h2.modern(&modern_request(2, "tools/list", json!({})))).await.unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.version(), hyper::Version::HTTP_2);
}

#[tokio::test]
async fn silent_partial_and_idle_connections_are_closed_after_the_header_read_timeout_with_http2_on() {
    let config = HttpConfig { header_read_timeout: Some(Duration::from_millis(300)), ..h2_config() };
    let s = TestServer::reference_with(config).await;
    // Never a byte.
    let mut silent = TcpStream::connect(s.addr).await.unwrap();
    assert!(read_to_close(&mut silent, "a silent connection").await.is_empty());
    // Half the preface, then nothing more.
    let mut partial = TcpStream::connect(s.addr).await.unwrap();
    partial.write_all(&PREFACE[..10]).await.unwrap();
    // Closed with its bytes unread (they were only peeked at): a reset, or an end.
    let mut seen = Vec::new();
    match within("a connection stuck in its preface", partial.read_to_end(&mut seen)).await {
        Ok(_) => assert!(seen.is_empty(), "{seen:?}"),
        Err(e) => assert_eq!(e.kind(), std::io::ErrorKind::ConnectionReset, "{e}"),
    }
    // The whole preface, then nothing (no SETTINGS): the handshake never completes.
    let mut stuck = TcpStream::connect(s.addr).await.unwrap();
    stuck.write_all(PREFACE).await.unwrap();
    read_to_close(&mut stuck, "a connection stuck in its handshake").await;
    // A complete HTTP/2 connection, one request answered, then idle: a GOAWAY, then closed.
    let h2 = H2::connect(s.addr).await;
    let response = h2.send(h2.modern(&modern_request(1, "tools/list", json!({})))).await.unwrap();
    assert_eq!(response.status(), 200);
    messages(response).await;
    let ended = within("an idle HTTP/2 connection ends", h2.conn).await.unwrap();
    assert!(ended.is_ok(), "closed cleanly, with a GOAWAY: {ended:?}");
    // HTTP/1.1 still has its own: half a request line, then nothing more.
    let mut slow = TcpStream::connect(s.addr).await.unwrap();
    slow.write_all(b"POST /mcp HTTP/1.1\r\nHo").await.unwrap();
    let answer = read_to_close(&mut slow, "a connection stuck in its headers").await;
    assert!(!String::from_utf8_lossy(&answer).contains("200 OK"));
}

#[tokio::test]
async fn a_connection_busy_with_a_stream_is_not_idle() {
    let config = HttpConfig { header_read_timeout: Some(Duration::from_millis(200)), ..h2_config() };
    let s = TestServer::reference_with(config).await;
    let h2 = H2::connect(s.addr).await;
    let (mut stream, mut sse) = listen(&h2).await;
    // Several timeouts with the stream open and nothing else: the connection stays. The clock
    // is paused only now that nothing is on the wire (a paused clock jumps to the next timer
    // whenever the runtime waits, a socket included), so the four timeouts pass at once.
    tokio::time::pause();
    tokio::time::sleep(Duration::from_millis(800)).await;
    tokio::time::resume();
    assert!(!h2.conn.is_finished(), "a connection with a stream open is not idle");
    let touch = modern_request(2, "tools/call", json!({"name": "test_touch_resource", "arguments": {"uri": WATCHED}}));
    messages(h2.send(h2.modern(&touch)).await.expect("the touch")).await;
    sse.next_of(&mut stream, "notifications/resources/updated").await;
    // The stream closed: now it is idle.
    drop(stream);
    let ended = within("the connection ends once idle", h2.conn).await.unwrap();
    assert!(ended.is_ok(), "{ended:?}");
}

#[tokio::test]
async fn with_http2_off_the_preface_is_not_served_as_http2() {
    let s = TestServer::reference().await;
    let tcp = TcpStream::connect(s.addr).await.unwrap();
    let (mut sender, conn) =
        http2::handshake::<_, _, Full<Bytes>>(TokioExecutor::new(), TokioIo::new(tcp)).await.unwrap();
    let conn = tokio::spawn(conn);
    let request = Request::post(format!("http://{}/mcp", s.addr))
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(modern_request(1, "tools/list", json!({})).to_string())))
        .unwrap();
    let sent = within("an HTTP/2 request to an HTTP/1.1 server", async {
        sender.ready().await?;
        sender.send_request(request).await
    })
    .await;
    assert!(sent.is_err(), "answered over HTTP/2: {sent:?}");
    within("the connection ends", conn).await.unwrap().ok();
    // What the server said to the preface, if anything, is not HTTP/2 (an HTTP/1.1 error).
    let mut raw = TcpStream::connect(s.addr).await.unwrap();
    raw.write_all(PREFACE).await.unwrap();
    let said = read_to_close(&mut raw, "the preface to an HTTP/1.1 server").await;
    assert!(said.is_empty() || said.starts_with(b"HTTP/1.1 "), "{:?}", String::from_utf8_lossy(&said));
}

#[tokio::test]
async fn a_graceful_shutdown_ends_an_open_h2_stream_with_a_goaway_and_returns() {
    let config = HttpConfig {
        shutdown_grace: Duration::from_secs(60),
        shutdown_drain: Duration::from_millis(100),
        ..h2_config()
    };
    let http = McpHttp::new(mcpwire_reference::server(), config);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(http.clone().serve_until(listener, async move {
        let _ = stopped.await;
    }));
    let h2 = H2::connect(addr).await;
    let (mut stream, mut sse) = listen(&h2).await;
    stop.send(()).unwrap();
    // The stream ends, with a hint to come back.
    while sse.next(&mut stream, "the listen stream ends").await.is_some() {}
    assert!(sse.retry, "a retry hint before the end");
    // The connection is sent a GOAWAY and closes; serve_until returns well before the grace.
    let ended = within("the HTTP/2 connection ends", h2.conn).await.unwrap();
    assert!(ended.is_ok(), "closed cleanly, with a GOAWAY: {ended:?}");
    within("serve_until returns", serving).await.unwrap().unwrap();
    assert!(TcpStream::connect(addr).await.is_err(), "the listener is closed");
}

#[tokio::test]
async fn a_shutdown_lets_an_h2_call_in_flight_finish_and_refuses_new_streams() {
    let (server, gate, started) = gated();
    let config = HttpConfig {
        shutdown_grace: Duration::from_secs(60),
        shutdown_drain: Duration::from_millis(100),
        ..h2_config()
    };
    let http = McpHttp::new(server, config);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(http.clone().serve_until(listener, async move {
        let _ = stopped.await;
    }));
    let h2 = Arc::new(H2::connect(addr).await);
    let call = {
        let h2 = h2.clone();
        tokio::spawn(async move {
            let response = h2.send(h2.modern(&modern_request(1, "tools/call", json!({"name": "wait"})))).await.unwrap();
            answer_text(&messages(response).await, 1)
        })
    };
    within("the call starts", started.acquire()).await.unwrap().forget();
    stop.send(()).unwrap();
    // Past the drain: the GOAWAY is sent; a new stream is not taken.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let late = h2.send(h2.modern(&modern_request(2, "tools/list", json!({})))).await;
    match late {
        Err(_) => {}
        Ok(response) => assert_eq!(response.status(), 503, "a request after the shutdown began"),
    }
    assert!(!serving.is_finished(), "the call in flight holds the shutdown");
    gate.add_permits(1);
    assert_eq!(within("the call in flight", call).await.unwrap(), "done");
    within("serve_until returns", serving).await.unwrap().unwrap();
}
