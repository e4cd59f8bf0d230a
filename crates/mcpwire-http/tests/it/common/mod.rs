//! Helpers shared by the real-HTTP integration tests: a server on an ephemeral port, an SSE
//! reader over a reqwest byte stream, and JSON-RPC builders for both protocol eras.
//!
//! Every wait is bounded: a test that would hang fails with a message instead.
#![allow(dead_code)]

use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use futures::{Stream, StreamExt};
use mcpwire_http::{EventStore, HttpConfig, McpHttp};
use mcpwire_protocol::types::{CallToolResult, Tool};
use mcpwire_server::Server;
use reqwest::header::{HeaderMap, ACCEPT, CONTENT_TYPE};
use reqwest::{RequestBuilder, Response, StatusCode};
use serde_json::{json, Value};
use tokio::sync::Semaphore;
use tokio::task::JoinHandle;

/// The longest any single step of a test may take.
pub const STEP: Duration = Duration::from_secs(10);

pub const MODERN: &str = "2026-07-28";
pub const ACCEPT_BOTH: &str = "application/json, text/event-stream";
pub const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
pub const META_CAPS: &str = "io.modelcontextprotocol/clientCapabilities";
pub const META_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// The reference server's resource that `test_touch_resource` updates.
pub const WATCHED: &str = "test://watched-resource";

/// Awaits `fut`, failing the test if it takes longer than [`STEP`].
pub async fn within<F: std::future::Future>(what: &str, fut: F) -> F::Output {
    within_for(STEP, what, fut).await
}

/// Awaits `fut`, failing the test if it takes longer than `limit`.
pub async fn within_for<F: std::future::Future>(limit: Duration, what: &str, fut: F) -> F::Output {
    match tokio::time::timeout(limit, fut).await {
        Ok(v) => v,
        Err(_) => panic!("timed out after {limit:?}: {what}"),
    }
}

/// A server listening on `127.0.0.1:<ephemeral>`; stopped when dropped.
pub struct TestServer {
    pub http: McpHttp,
    pub addr: std::net::SocketAddr,
    pub client: reqwest::Client,
    task: JoinHandle<std::io::Result<()>>,
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// A client that never goes through a proxy and never waits forever.
pub fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .connect_timeout(Duration::from_secs(5))
        .pool_max_idle_per_host(0)
        .build()
        .expect("reqwest client")
}

impl TestServer {
    /// Serves `server` with `config` on a fresh loopback port.
    pub async fn start(server: Server, config: HttpConfig) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("local addr");
        let http = McpHttp::new(server, config);
        let task = tokio::spawn(http.clone().serve(listener));
        Self { http, addr, client: client(), task }
    }

    /// Serves `server` with `config`, keeping resumable events in `store`.
    pub async fn start_with_store(server: Server, config: HttpConfig, store: Arc<dyn EventStore>) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("local addr");
        let http = McpHttp::with_event_store(server, config, store);
        let task = tokio::spawn(http.clone().serve(listener));
        Self { http, addr, client: client(), task }
    }

    /// A server already serving on `addr`.
    pub fn from_parts(http: McpHttp, addr: std::net::SocketAddr, task: JoinHandle<std::io::Result<()>>) -> Self {
        Self { http, addr, client: client(), task }
    }

    /// The reference server with the default configuration.
    pub async fn reference() -> Self {
        Self::start(mcpwire_reference::server(), HttpConfig::default()).await
    }

    /// The reference server with this configuration.
    pub async fn reference_with(config: HttpConfig) -> Self {
        Self::start(mcpwire_reference::server(), config).await
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{}", self.addr, path)
    }

    /// A POST to `/mcp` with a JSON body and `Accept: application/json, text/event-stream`, no
    /// MCP headers.
    pub fn post_mcp(&self, body: &Value) -> RequestBuilder {
        self.client
            .post(self.url("/mcp"))
            .header(ACCEPT, ACCEPT_BOTH)
            .header(CONTENT_TYPE, "application/json")
            .body(body.to_string())
    }

    /// A correct 2026-07-28 POST: `MCP-Protocol-Version`, `Mcp-Method` and, where the method
    /// needs it, `Mcp-Name`, all taken from the body.
    pub fn post_modern(&self, body: &Value) -> RequestBuilder {
        let mut r = self.post_mcp(body).header("MCP-Protocol-Version", MODERN);
        let method = body["method"].as_str().unwrap_or_default();
        r = r.header("Mcp-Method", method);
        let name = match method {
            "tools/call" | "prompts/get" => body["params"]["name"].as_str(),
            "resources/read" => body["params"]["uri"].as_str(),
            _ => None,
        };
        if let Some(name) = name {
            r = r.header("Mcp-Name", name);
        }
        r
    }

    /// A POST to `/mcp` for a legacy session.
    pub fn post_legacy(&self, session: &str, version: Option<&str>, body: &Value) -> RequestBuilder {
        let mut r = self.post_mcp(body).header("Mcp-Session-Id", session);
        if let Some(v) = version {
            r = r.header("MCP-Protocol-Version", v);
        }
        r
    }

    /// `initialize` (no session) then `notifications/initialized`; returns the session id.
    pub async fn legacy_session(&self, version: &str, capabilities: Value) -> String {
        let init = legacy_initialize(1, version, capabilities);
        let resp = within("initialize", self.post_mcp(&init).send()).await.expect("initialize POST");
        assert_eq!(resp.status(), StatusCode::OK, "initialize status");
        let session = resp
            .headers()
            .get("mcp-session-id")
            .expect("initialize answer carries Mcp-Session-Id")
            .to_str()
            .expect("session id is ASCII")
            .to_owned();
        let answer = final_message(resp).await;
        assert_eq!(answer["result"]["protocolVersion"], json!(version), "negotiated version: {answer}");
        let resp = within(
            "initialized",
            self.post_legacy(&session, Some(version), &notification("notifications/initialized", json!({}))).send(),
        )
        .await
        .expect("initialized POST");
        assert_eq!(resp.status(), StatusCode::ACCEPTED, "notifications/initialized status");
        session
    }
}

/// A JSON-RPC request.
pub fn request(id: impl Into<Value>, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id.into(), "method": method, "params": params})
}

/// A JSON-RPC notification.
pub fn notification(method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "method": method, "params": params})
}

/// The 2026-07-28 `_meta` of a request.
pub fn modern_meta(version: &str, capabilities: Value) -> Value {
    json!({
        META_VERSION: version,
        META_CAPS: capabilities,
        META_INFO: {"name": "mcp-http-tests", "version": "0.0.0"},
    })
}

/// A 2026-07-28 request: `params` with the `_meta` of this revision merged in.
pub fn modern_request(id: impl Into<Value>, method: &str, params: Value) -> Value {
    modern_request_with(id, method, params, modern_meta(MODERN, json!({})))
}

/// A request whose `params._meta` is `meta` (extra keys of an existing `_meta` are kept).
pub fn modern_request_with(id: impl Into<Value>, method: &str, mut params: Value, meta: Value) -> Value {
    if !params.is_object() {
        params = json!({});
    }
    let existing = params.get("_meta").cloned().unwrap_or_else(|| json!({}));
    let mut merged = meta;
    if let (Some(m), Some(e)) = (merged.as_object_mut(), existing.as_object()) {
        for (k, v) in e {
            m.insert(k.clone(), v.clone());
        }
    }
    params["_meta"] = merged;
    request(id, method, params)
}

/// A legacy `initialize` request.
pub fn legacy_initialize(id: impl Into<Value>, version: &str, capabilities: Value) -> Value {
    request(
        id,
        "initialize",
        json!({
            "protocolVersion": version,
            "capabilities": capabilities,
            "clientInfo": {"name": "mcp-http-tests", "version": "0.0.0"},
        }),
    )
}

/// One server-sent event.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SseEvent {
    pub event: Option<String>,
    pub data: String,
    pub id: Option<String>,
}

impl SseEvent {
    /// The data, parsed as JSON.
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.data).unwrap_or_else(|e| panic!("SSE data is not JSON ({e}): {:?}", self.data))
    }
}

/// `bytes::Bytes`, as axum re-exports it (reqwest's chunks are the same type).
type ByteStream = Pin<Box<dyn Stream<Item = reqwest::Result<axum::body::Bytes>> + Send>>;

/// Parses `event:` / `data:` / `id:` lines from an SSE byte stream.
pub struct SseReader {
    stream: ByteStream,
    buf: Vec<u8>,
    ended: bool,
    /// Comment lines seen so far (keep-alives).
    pub comments: usize,
    /// The id of the last event that had one (what a client resumes from).
    last_id: Option<String>,
}

impl SseReader {
    pub fn new(resp: Response) -> Self {
        Self { stream: Box::pin(resp.bytes_stream()), buf: Vec::new(), ended: false, comments: 0, last_id: None }
    }

    /// Takes one complete event block (up to a blank line) out of the buffer, if there is one.
    fn take_block(&mut self) -> Option<String> {
        let text = String::from_utf8_lossy(&self.buf).into_owned();
        let normalized = text.replace("\r\n", "\n").replace('\r', "\n");
        let end = normalized.find("\n\n")?;
        let block = normalized[..end].to_owned();
        let rest = normalized[end + 2..].to_owned();
        self.buf = rest.into_bytes();
        Some(block)
    }

    /// Parses one block; `None` if it held only comments.
    fn parse_block(&mut self, block: &str) -> Option<SseEvent> {
        let mut event = SseEvent::default();
        let mut data: Vec<&str> = Vec::new();
        let mut any = false;
        for line in block.split('\n') {
            if line.is_empty() {
                continue;
            }
            if line.starts_with(':') {
                self.comments += 1;
                continue;
            }
            let (field, value) = match line.split_once(':') {
                Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
                None => (line, ""),
            };
            match field {
                "event" => {
                    event.event = Some(value.to_owned());
                    any = true;
                }
                "data" => {
                    data.push(value);
                    any = true;
                }
                "id" => {
                    event.id = Some(value.to_owned());
                    any = true;
                }
                _ => {}
            }
        }
        event.data = data.join("\n");
        if event.id.is_some() {
            self.last_id = event.id.clone();
        }
        any.then_some(event)
    }

    /// The id of the last event read that had one: the `Last-Event-ID` to resume with.
    pub fn last_event_id(&self) -> Option<&str> {
        self.last_id.as_deref()
    }

    /// The next event (comments skipped); `None` once the stream has ended. Unbounded: use
    /// [`Self::next_within`] or wrap it in [`within`].
    pub async fn next_event(&mut self) -> Option<SseEvent> {
        loop {
            while let Some(block) = self.take_block() {
                if let Some(event) = self.parse_block(&block) {
                    return Some(event);
                }
            }
            if self.ended {
                return None;
            }
            match self.stream.next().await {
                Some(Ok(chunk)) => self.buf.extend_from_slice(chunk.as_ref()),
                Some(Err(e)) => panic!("SSE stream failed: {e}"),
                None => self.ended = true,
            }
        }
    }

    /// The next event, which must come within [`STEP`].
    pub async fn next_within(&mut self, what: &str) -> SseEvent {
        within(what, self.next_event()).await.unwrap_or_else(|| panic!("SSE stream ended before {what}"))
    }

    /// The next `message` event's JSON, which must come within [`STEP`] (a priming event,
    /// which has no data, is skipped).
    pub async fn next_message(&mut self, what: &str) -> Value {
        let mut e = self.next_within(what).await;
        while e.data.is_empty() && e.id.is_some() {
            e = self.next_within(what).await;
        }
        assert!(e.event.is_none() || e.event.as_deref() == Some("message"), "event type of {what}: {e:?}");
        e.json()
    }

    /// Waits (within [`STEP`]) for the end of the stream; fails on any further event.
    pub async fn expect_end(&mut self, what: &str) {
        if let Some(e) = within(what, self.next_event()).await {
            panic!("expected the end of the stream ({what}), got {e:?}");
        }
    }
}

/// Whether a response is an SSE stream.
pub fn is_sse(resp: &Response) -> bool {
    content_type(resp.headers()).starts_with("text/event-stream")
}

pub fn content_type(headers: &HeaderMap) -> String {
    headers.get(CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or_default().to_ascii_lowercase()
}

/// All JSON-RPC messages of a response: the JSON body, or every SSE event's data until the
/// stream ends (a 2025-11-25 priming event, which has no data, is no message).
pub async fn all_messages(resp: Response) -> Vec<Value> {
    if is_sse(&resp) {
        let mut reader = SseReader::new(resp);
        let mut out = Vec::new();
        while let Some(e) = within("the next SSE event", reader.next_event()).await {
            if !e.data.is_empty() {
                out.push(e.json());
            }
        }
        out
    } else {
        let text = within("the response body", resp.text()).await.expect("response body");
        vec![serde_json::from_str(&text).unwrap_or_else(|e| panic!("body is not JSON ({e}): {text:?}"))]
    }
}

/// The last JSON-RPC message of a response (the answer).
pub async fn final_message(resp: Response) -> Value {
    all_messages(resp).await.pop().expect("a response message")
}

/// Checks a 2026-07-28 error answer: its HTTP status, its JSON-RPC code, and the echoed id.
/// Returns the error object.
pub async fn expect_error(resp: Response, status: u16, code: i64, id: &Value, what: &str) -> Value {
    let got_status = resp.status().as_u16();
    let ct = content_type(resp.headers());
    let text = within("the error body", resp.text()).await.expect("error body");
    assert_eq!(got_status, status, "{what}: HTTP status (body {text})");
    assert!(ct.starts_with("application/json"), "{what}: content type {ct:?} (body {text})");
    let body: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{what}: body not JSON ({e}): {text}"));
    assert_eq!(body["jsonrpc"], json!("2.0"), "{what}: {body}");
    assert_eq!(body["error"]["code"], json!(code), "{what}: error code in {body}");
    assert_eq!(&body["id"], id, "{what}: the request id must be echoed in {body}");
    assert!(body.get("result").is_none(), "{what}: {body}");
    body["error"].clone()
}

/// The text of the first content block of a `tools/call` result.
pub fn tool_text(answer: &Value) -> String {
    answer["result"]["content"][0]["text"].as_str().unwrap_or_else(|| panic!("no text content in {answer}")).to_owned()
}

/// A server whose `wait` tool says when it starts (`started`) and answers once the test
/// opens the gate.
pub fn gated() -> (Server, Arc<Semaphore>, Arc<Semaphore>) {
    let server = Server::builder("gated", "1").build();
    let (gate, started) = (Arc::new(Semaphore::new(0)), Arc::new(Semaphore::new(0)));
    let (opens, starts) = (gate.clone(), started.clone());
    server.add_tool(Tool::new("wait", "waits for the gate", json!({"type": "object"})), move |_, _| {
        let (opens, starts) = (opens.clone(), starts.clone());
        async move {
            starts.add_permits(1);
            let _permit = opens.acquire().await;
            Ok(CallToolResult::text("done"))
        }
    });
    (server, gate, started)
}
