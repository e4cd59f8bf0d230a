//! MCP over HTTP, client side, as a [`Connection`]: every transport and era of HTTP behind
//! the same channels the runtimes use for stdio.
//!
//! - **2026-07-28**: each request is a stateless POST with `MCP-Protocol-Version`,
//!   `Mcp-Method`, `Mcp-Name` and the `Mcp-Param-*` headers its tool declares
//!   (`x-mcp-header`); tools whose annotations are invalid are dropped from `tools/list`
//!   with a warning; cancelling a request closes its response stream.
//! - **Legacy Streamable HTTP** (2025-03-26 .. 2025-11-25): the session id from
//!   `initialize` is echoed, the negotiated version is sent, the standalone GET stream is
//!   opened, broken SSE streams are resumed with `Last-Event-ID` after the server's
//!   `retry`, a 404 (session gone) re-initializes transparently, and DELETE ends the session.
//! - **HTTP+SSE** (2024-11-05): when `initialize` is refused with 400/404/405, the URL is
//!   tried as an SSE endpoint whose `endpoint` event names where to POST.
//!
//! Answers of every kind (JSON, SSE, errors with or without a JSON-RPC body) come back as
//! frames; an HTTP failure of a request becomes a JSON-RPC error for it, and a JSON-RPC error
//! body naming no request (`"id": null`, as servers answer a request refused before it is
//! read) is given the id of the request the POST carried, so no call hangs.
//!
//! Authorization is pluggable: an [`AuthProvider`] in [`HttpOptions::auth`] supplies the
//! `Authorization` header of every request and is shown each 401/403 answer to a POST, and
//! the request is sent again when it says so (the OAuth client of `mcp-auth` is one).

mod headers;
pub mod sse;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use futures::StreamExt;
use mcp_protocol::types::meta_keys;
use mcp_protocol::{ErrorObject, RequestId};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue, ACCEPT, AUTHORIZATION, CONTENT_TYPE, WWW_AUTHENTICATE};
use reqwest::{Method, StatusCode};
use serde_json::Value;
use tokio::sync::mpsc;
use tokio::task::AbortHandle;
use tokio_util::sync::CancellationToken;

use crate::{Connection, Frame, Inbound, CHANNEL_CAPACITY};

pub use headers::{encode_value, tool_param_headers};

/// The JSON-RPC error code of a request the transport could not carry (the server
/// unreachable, an HTTP failure without a JSON-RPC answer): implementation-defined range.
pub const TRANSPORT_ERROR: i64 = -32000;

/// Which HTTP transport to speak.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum HttpMode {
    /// Streamable HTTP, falling back to HTTP+SSE when `initialize` is refused.
    #[default]
    Auto,
    /// Streamable HTTP only.
    Streamable,
    /// HTTP+SSE (2024-11-05) only: the URL is the SSE endpoint.
    Sse,
}

/// A request about to be sent, as an [`AuthProvider`] sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AuthRequest<'a> {
    /// The HTTP method (`POST`, `GET`, `DELETE`).
    pub method: &'a str,
    /// The target URL.
    pub url: &'a str,
}

/// A 401 or 403 answer to a request, as an [`AuthProvider`] sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthChallenge {
    /// The HTTP status: 401 (no valid credentials) or 403 (e.g. `insufficient_scope`).
    pub status: u16,
    /// Every `WWW-Authenticate` header value of the answer, in order.
    pub www_authenticate: Vec<String>,
    /// All headers of the answer (names in lower case), for schemes that need more than
    /// `WWW-Authenticate` (a `DPoP-Nonce`, say).
    pub headers: Vec<(String, String)>,
    /// The `Authorization` header the refused request carried, if any: a provider that
    /// has obtained a newer credential since can simply ask for a retry.
    pub authorization: Option<String>,
    /// How many challenges this same request met before this one (0 for the first).
    pub attempt: u32,
}

/// Why an [`AuthProvider`] gave up on a challenge; its text becomes the request's error.
pub type AuthFailure = Box<dyn std::error::Error + Send + Sync>;

/// Supplies the authorization headers of an HTTP connection and answers authorization
/// challenges (401/403), e.g. by running an OAuth flow.
///
/// The transport calls [`Self::headers`] before each request, and on a 401 or 403 answer
/// to a POST calls [`Self::on_challenge`]: `Ok(())` sends the request again (with fresh
/// [`Self::headers`]), an error fails the request with that reason. The transport stops
/// after [`MAX_AUTH_CHALLENGES`] challenges of one request whatever the provider says.
pub trait AuthProvider: Send + Sync + 'static {
    /// The headers to put on `request` now: `Authorization` (`Bearer …`), and whatever
    /// else the scheme needs (a DPoP proof, say). Empty when there is no credential yet.
    fn headers<'a>(&'a self, request: AuthRequest<'a>) -> BoxFuture<'a, Vec<(String, String)>>;

    /// Handles a refusal; `Ok(())` means "send the request again".
    fn on_challenge<'a>(&'a self, challenge: &'a AuthChallenge) -> BoxFuture<'a, Result<(), AuthFailure>>;
}

/// How many 401/403 challenges one request may meet before the transport gives up on it.
pub const MAX_AUTH_CHALLENGES: u32 = 8;

/// Settings of an HTTP connection.
#[derive(Clone)]
pub struct HttpOptions {
    /// Extra headers on every request.
    pub headers: Vec<(String, String)>,
    /// A bearer token for `Authorization`.
    pub bearer: Option<String>,
    /// Supplies `Authorization` (overriding [`Self::bearer`]) and handles 401/403 answers.
    pub auth: Option<Arc<dyn AuthProvider>>,
    /// Transport choice.
    pub mode: HttpMode,
    /// How long to wait for a connection and response headers.
    pub connect_timeout: Duration,
    /// How many times a broken SSE stream is resumed in a row before giving up.
    pub max_reconnects: u32,
}

impl Default for HttpOptions {
    fn default() -> Self {
        Self {
            headers: Vec::new(),
            bearer: None,
            auth: None,
            mode: HttpMode::Auto,
            connect_timeout: Duration::from_secs(30),
            max_reconnects: 5,
        }
    }
}

impl std::fmt::Debug for HttpOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpOptions")
            .field("headers", &self.headers)
            .field("bearer", &self.bearer.as_ref().map(|_| "<redacted>"))
            .field("auth", &self.auth.as_ref().map(|_| "<provider>"))
            .field("mode", &self.mode)
            .field("connect_timeout", &self.connect_timeout)
            .field("max_reconnects", &self.max_reconnects)
            .finish()
    }
}

/// Why an HTTP connection could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    /// The URL is not an http(s) URL.
    #[error("invalid URL {0:?}: {1}")]
    Url(String, String),
    /// A header given in the options is invalid.
    #[error("invalid header {0:?}")]
    Header(String),
    /// The HTTP client could not be built.
    #[error("HTTP client: {0}")]
    Client(String),
}

#[derive(Default)]
struct State {
    session: Option<String>,
    /// The negotiated legacy revision.
    version: Option<String>,
    /// Where to POST in HTTP+SSE mode.
    post_url: Option<reqwest::Url>,
    /// `x-mcp-header` parameters of listed tools: tool → (property, header).
    tool_headers: HashMap<String, Vec<(String, String)>>,
    /// The `initialize` request, to start a new session when the server forgets ours.
    initialize: Option<String>,
    /// In-flight requests (2026-07-28: cancelling one closes its stream).
    in_flight: HashMap<RequestId, AbortHandle>,
    get_stream_open: bool,
}

struct Shared {
    http: reqwest::Client,
    url: reqwest::Url,
    options: HttpOptions,
    base_headers: HeaderMap,
    state: Mutex<State>,
    incoming: mpsc::Sender<Inbound>,
    closed: CancellationToken,
}

/// Connects to an MCP server at `url`. Nothing is sent until the first frame.
pub fn connect(url: &str, options: HttpOptions) -> Result<Connection, HttpError> {
    let parsed = reqwest::Url::parse(url).map_err(|e| HttpError::Url(url.to_owned(), e.to_string()))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(HttpError::Url(url.to_owned(), "not http or https".into()));
    }
    let mut base_headers = HeaderMap::new();
    for (name, value) in &options.headers {
        let n = HeaderName::from_bytes(name.trim().as_bytes()).map_err(|_| HttpError::Header(name.clone()))?;
        let v = HeaderValue::from_str(value.trim()).map_err(|_| HttpError::Header(name.clone()))?;
        base_headers.insert(n, v);
    }
    if let Some(token) = &options.bearer {
        let v =
            HeaderValue::from_str(&format!("Bearer {token}")).map_err(|_| HttpError::Header("Authorization".into()))?;
        base_headers.insert(reqwest::header::AUTHORIZATION, v);
    }
    let http = reqwest::Client::builder()
        .connect_timeout(options.connect_timeout)
        .tcp_nodelay(true)
        .build()
        .map_err(|e| HttpError::Client(e.to_string()))?;
    let (in_tx, in_rx) = mpsc::channel(CHANNEL_CAPACITY);
    let (out_tx, out_rx) = mpsc::channel(CHANNEL_CAPACITY);
    let shared = Arc::new(Shared {
        http,
        url: parsed,
        options,
        base_headers,
        state: Mutex::default(),
        incoming: in_tx,
        closed: CancellationToken::new(),
    });
    let writer = tokio::spawn(drive(shared, out_rx));
    Ok(Connection { incoming: in_rx, outgoing: out_tx, writer: Some(writer) })
}

impl Shared {
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    async fn deliver(&self, frame: String) {
        let _ = self.incoming.send(Ok(Frame::new(frame))).await;
    }

    /// Answers a request with an error, so the caller does not wait for a reply that cannot come.
    async fn fail(&self, id: Option<&RequestId>, message: String) {
        if let Some(id) = id {
            let error = ErrorObject::new(TRANSPORT_ERROR, message).with_data(serde_json::json!({"transport": "http"}));
            let frame = mcp_protocol::jsonrpc::encode_error(Some(id), &error);
            self.deliver(frame).await;
        } else {
            tracing::warn!("{message}");
        }
    }

    /// Puts the provider's headers (if any) into `h`; returns the `Authorization` put.
    async fn authorize(&self, h: &mut HeaderMap, method: &str, url: &reqwest::Url) -> Option<String> {
        let provider = self.options.auth.as_ref()?;
        for (name, value) in provider.headers(AuthRequest { method, url: url.as_str() }).await {
            match (HeaderName::from_bytes(name.as_bytes()), HeaderValue::from_str(&value)) {
                (Ok(n), Ok(v)) => {
                    h.insert(n, v);
                }
                _ => tracing::warn!(header = %name, "the auth provider gave an invalid header"),
            }
        }
        h.get(AUTHORIZATION).and_then(|v| v.to_str().ok()).map(str::to_owned)
    }

    /// POSTs `body` to `url` with `h` (plus `Authorization`), and while the answer is a
    /// 401/403 that the auth provider can handle, sends it again. An error is the reason
    /// to give for the request's failure.
    async fn post_authorized(
        &self,
        url: reqwest::Url,
        h: HeaderMap,
        mut body: String,
    ) -> Result<reqwest::Response, String> {
        let mut attempt = 0;
        loop {
            let mut headers = h.clone();
            let authorization = self.authorize(&mut headers, "POST", &url).await;
            // Kept for a retry only when there is a provider to ask for one.
            let payload = if self.options.auth.is_some() { body.clone() } else { std::mem::take(&mut body) };
            let response = self
                .http
                .post(url.clone())
                .headers(headers)
                .body(payload)
                .send()
                .await
                .map_err(|e| format!("HTTP request to {url} failed: {e}"))?;
            let status = response.status().as_u16();
            let Some(provider) = self.options.auth.as_ref().filter(|_| matches!(status, 401 | 403)) else {
                return Ok(response);
            };
            if attempt >= MAX_AUTH_CHALLENGES {
                return Err(format!("HTTP {status}: still refused after {attempt} authorization attempts"));
            }
            let www_authenticate = response
                .headers()
                .get_all(WWW_AUTHENTICATE)
                .iter()
                .filter_map(|v| v.to_str().ok().map(str::to_owned))
                .collect();
            let headers = response
                .headers()
                .iter()
                .filter_map(|(n, v)| v.to_str().ok().map(|v| (n.as_str().to_owned(), v.to_owned())))
                .collect();
            drop(response);
            let challenge = AuthChallenge { status, www_authenticate, headers, authorization, attempt };
            provider.on_challenge(&challenge).await.map_err(|e| format!("HTTP {status}: authorization failed: {e}"))?;
            attempt += 1;
        }
    }

    fn header_map(&self, msg: &Peeked) -> HeaderMap {
        let mut h = self.base_headers.clone();
        h.insert(ACCEPT, HeaderValue::from_static("application/json, text/event-stream"));
        h.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        let mut put = |name: &str, value: &str| {
            if let (Ok(n), Ok(v)) = (HeaderName::from_bytes(name.as_bytes()), HeaderValue::from_str(value)) {
                h.insert(n, v);
            }
        };
        if let Some(version) = &msg.modern_version {
            put("mcp-protocol-version", version);
            if let Some(method) = &msg.method {
                put("mcp-method", method);
                let name_field = match method.as_str() {
                    "tools/call" | "prompts/get" => Some("name"),
                    "resources/read" => Some("uri"),
                    "tasks/get" | "tasks/update" | "tasks/cancel" => Some("taskId"),
                    _ => None,
                };
                let params = msg.value.get("params");
                if let Some(name) = name_field.and_then(|f| params.and_then(|p| p.get(f))).and_then(Value::as_str) {
                    put("mcp-name", &encode_value(name));
                    if method == "tools/call" {
                        let specs = self.state().tool_headers.get(name).cloned().unwrap_or_default();
                        let arguments = params.and_then(|p| p.get("arguments")).and_then(Value::as_object);
                        for (property, header) in specs {
                            if let Some(value) = headers::argument_value(arguments, &property) {
                                put(&format!("mcp-param-{header}"), &value);
                            }
                        }
                    }
                }
            }
        } else {
            let st = self.state();
            if let Some(s) = &st.session {
                put("mcp-session-id", s);
            }
            if let Some(v) = &st.version {
                put("mcp-protocol-version", v);
            }
        }
        h
    }

    /// Drops tools with invalid `x-mcp-header` annotations and remembers the valid ones.
    fn filter_tools(&self, frame: String) -> String {
        let Ok(mut value) = serde_json::from_str::<Value>(&frame) else { return frame };
        let Some(Value::Array(tools)) = value.pointer_mut("/result/tools") else { return frame };
        let mut learned = Vec::new();
        tools.retain(|tool| {
            let name = tool.get("name").and_then(Value::as_str).unwrap_or_default().to_owned();
            match tool_param_headers(tool.get("inputSchema").unwrap_or(&Value::Null)) {
                Ok(pairs) => {
                    learned.push((name, pairs));
                    true
                }
                Err(why) => {
                    tracing::warn!(tool = %name, "tool dropped from tools/list: {why}");
                    false
                }
            }
        });
        self.state().tool_headers.extend(learned);
        value.to_string()
    }
}

/// What the transport needs to know of an outgoing frame.
struct Peeked {
    value: Value,
    id: Option<RequestId>,
    method: Option<String>,
    /// The 2026-07-28 `_meta` protocol version, if the frame carries one.
    modern_version: Option<String>,
}

fn peek(frame: &str) -> Option<Peeked> {
    let value: Value = serde_json::from_str(frame).ok()?;
    let id = value.get("id").and_then(RequestId::from_value);
    let method = value.get("method").and_then(Value::as_str).map(str::to_owned);
    let modern_version = value
        .pointer("/params/_meta")
        .and_then(|m| m.get(meta_keys::PROTOCOL_VERSION))
        .and_then(Value::as_str)
        .map(str::to_owned);
    Some(Peeked { value, id, method, modern_version })
}

async fn drive(shared: Arc<Shared>, mut outgoing: mpsc::Receiver<String>) {
    if shared.options.mode == HttpMode::Sse {
        open_sse_transport(&shared).await;
    }
    while let Some(frame) = outgoing.recv().await {
        let Some(msg) = peek(&frame) else {
            tracing::warn!("not sending a frame that is not JSON");
            continue;
        };
        if msg.method.as_deref() == Some("notifications/cancelled") {
            let stateless = {
                let st = shared.state();
                st.session.is_none() && st.post_url.is_none()
            };
            if stateless {
                // Closing a stateless request's stream is how it is cancelled.
                let target = msg.value.pointer("/params/requestId").and_then(RequestId::from_value);
                if let Some(handle) = target.and_then(|id| shared.state().in_flight.remove(&id)) {
                    handle.abort();
                }
                continue;
            }
        }
        let is_request = msg.id.is_some() && msg.method.is_some();
        if msg.method.as_deref() == Some("initialize") {
            shared.state().initialize = Some(frame.clone());
        }
        if !is_request {
            // Notifications and responses go in order: `notifications/initialized` must reach
            // the server before the requests that follow it.
            send(&shared, frame, msg, true).await;
            continue;
        }
        let task_shared = shared.clone();
        let id = msg.id.clone();
        let task = tokio::spawn(async move { send(&task_shared, frame, msg, true).await });
        if let Some(id) = id {
            shared.state().in_flight.insert(id, task.abort_handle());
        }
    }
    shared.closed.cancel();
    let (session, post_url) = {
        let st = shared.state();
        (st.session.clone(), st.post_url.clone())
    };
    if let (Some(session), None) = (session, post_url) {
        let mut h = shared.base_headers.clone();
        if let Ok(v) = HeaderValue::from_str(&session) {
            h.insert("mcp-session-id", v);
        }
        shared.authorize(&mut h, "DELETE", &shared.url).await;
        let _ = tokio::time::timeout(
            Duration::from_secs(2),
            shared.http.request(Method::DELETE, shared.url.clone()).headers(h).send(),
        )
        .await;
    }
}

/// Sends one frame and delivers whatever answers it.
async fn send(shared: &Arc<Shared>, frame: String, msg: Peeked, may_retry: bool) {
    let post_url = shared.state().post_url.clone();
    if let Some(post_url) = post_url {
        // HTTP+SSE: answers come on the event stream.
        let h = shared.header_map(&msg);
        match shared.post_authorized(post_url, h, frame).await {
            Ok(r) if r.status().is_success() => {}
            Ok(r) => shared.fail(msg.id.as_ref(), format!("HTTP {} from the message endpoint", r.status())).await,
            Err(e) => shared.fail(msg.id.as_ref(), e).await,
        }
        return;
    }
    let response = match shared.post_authorized(shared.url.clone(), shared.header_map(&msg), frame.clone()).await {
        Ok(r) => r,
        Err(e) => {
            shared.fail(msg.id.as_ref(), e).await;
            return;
        }
    };
    let status = response.status();
    let method = msg.method.clone().unwrap_or_default();
    let legacy = msg.modern_version.is_none();
    if legacy
        && method == "initialize"
        && matches!(status.as_u16(), 400 | 404 | 405)
        && shared.options.mode == HttpMode::Auto
    {
        // Not a Streamable HTTP endpoint: try it as an HTTP+SSE one.
        if open_sse_transport(shared).await {
            Box::pin(send(shared, frame, msg, false)).await;
        } else {
            shared
                .fail(
                    msg.id.as_ref(),
                    format!("HTTP {status} to initialize, and the URL is no HTTP+SSE endpoint either"),
                )
                .await;
        }
        return;
    }
    if legacy
        && status == StatusCode::NOT_FOUND
        && shared.state().session.is_some()
        && method != "initialize"
        && may_retry
    {
        // The server forgot the session: start a new one and send this again.
        if reinitialize(shared).await {
            Box::pin(send(shared, frame, msg, false)).await;
        } else {
            shared.fail(msg.id.as_ref(), "the session expired and a new one could not be started".into()).await;
        }
        return;
    }
    if method == "initialize" {
        if let Some(sid) = response.headers().get("mcp-session-id").and_then(|v| v.to_str().ok()) {
            shared.state().session = Some(sid.to_owned());
        }
    }
    if method == "notifications/initialized" && status.is_success() {
        // Opened before anything else is sent, so that the server sees it as the session's
        // standalone stream and not as a resumption of a request's stream.
        let opened = start_get_stream(shared.clone());
        let _ = tokio::time::timeout(shared.options.connect_timeout, opened).await;
    }
    let is_sse = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| ct.starts_with("text/event-stream"));
    if is_sse {
        read_sse(shared, response, &msg, &method).await;
    } else {
        let body = response.text().await.unwrap_or_default();
        if body.trim().is_empty() {
            if msg.id.is_some() && msg.method.is_some() {
                shared.fail(msg.id.as_ref(), format!("HTTP {status} with no answer")).await;
            }
        } else if serde_json::from_str::<Value>(&body).is_ok_and(|v| v.is_object() || v.is_array()) {
            let body = match (&msg.id, &msg.method) {
                (Some(id), Some(_)) => answer_for(body, id),
                _ => body,
            };
            inspect_and_deliver(shared, &method, body).await;
        } else if msg.id.is_some() {
            let snippet: String = body.chars().take(200).collect();
            shared.fail(msg.id.as_ref(), format!("HTTP {status}: {snippet}")).await;
        }
    }
    if let Some(id) = &msg.id {
        shared.state().in_flight.remove(id);
    }
}

/// A JSON body answering the POST of request `id`: an error in it that names no request
/// (`"id": null`, or no id, as servers send with a 400 before they have read the request) is
/// this request's error, since the POST carried this request alone. Anything else is
/// passed on as it is.
fn answer_for(body: String, id: &RequestId) -> String {
    let Ok(Value::Object(mut object)) = serde_json::from_str::<Value>(&body) else { return body };
    let names_no_request = object.get("id").is_none_or(Value::is_null);
    if !names_no_request || object.contains_key("method") || !object.contains_key("error") {
        return body;
    }
    object.insert("id".into(), id.to_value());
    Value::Object(object).to_string()
}

async fn inspect_and_deliver(shared: &Shared, method: &str, frame: String) {
    let frame = match method {
        "tools/list" => shared.filter_tools(frame),
        "initialize" => {
            if let Ok(v) = serde_json::from_str::<Value>(&frame) {
                if let Some(version) = v.pointer("/result/protocolVersion").and_then(Value::as_str) {
                    shared.state().version = Some(version.to_owned());
                }
            }
            frame
        }
        _ => frame,
    };
    shared.deliver(frame).await;
}

/// Reads a request's SSE response; resumes it with `Last-Event-ID` if it breaks early.
async fn read_sse(shared: &Arc<Shared>, response: reqwest::Response, msg: &Peeked, method: &str) {
    let mut last_id: Option<String> = None;
    let mut retry = Duration::from_millis(1000);
    let mut response = Some(response);
    let mut attempts = 0;
    loop {
        let Some(r) = response.take() else { break };
        let mut parser = sse::Parser::default();
        let mut body = r.bytes_stream();
        let mut answered = false;
        while let Some(chunk) = body.next().await {
            let Ok(chunk) = chunk else { break };
            for event in parser.feed(&chunk) {
                if let Some(id) = event.id {
                    last_id = Some(id);
                }
                if let Some(ms) = event.retry {
                    retry = Duration::from_millis(ms);
                }
                if event.data.trim().is_empty() || !(event.event.is_empty() || event.event == "message") {
                    continue;
                }
                if let (Some(id), Ok(v)) = (&msg.id, serde_json::from_str::<Value>(&event.data)) {
                    if v.get("method").is_none() && v.get("id").and_then(RequestId::from_value).as_ref() == Some(id) {
                        answered = true;
                    }
                }
                inspect_and_deliver(shared, method, event.data).await;
            }
        }
        if answered || msg.id.is_none() || msg.method.is_none() {
            return;
        }
        // The stream ended before the answer: resume it where it stopped, if we can.
        let session = shared.state().session.clone();
        let (Some(last), Some(_)) = (last_id.clone(), session) else { break };
        if attempts >= shared.options.max_reconnects || shared.closed.is_cancelled() {
            break;
        }
        attempts += 1;
        tokio::time::sleep(retry).await;
        let mut h = shared.header_map(msg);
        h.remove(CONTENT_TYPE);
        h.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
        if let Ok(v) = HeaderValue::from_str(&last) {
            h.insert("last-event-id", v);
        }
        shared.authorize(&mut h, "GET", &shared.url).await;
        match shared.http.get(shared.url.clone()).headers(h).send().await {
            Ok(r) if r.status().is_success() => response = Some(r),
            _ => break,
        }
    }
    shared.fail(msg.id.as_ref(), "the response stream ended before the answer".into()).await;
}

/// Starts a new session with the remembered `initialize`, after the server lost ours.
async fn reinitialize(shared: &Arc<Shared>) -> bool {
    let Some(init) = shared.state().initialize.clone() else { return false };
    {
        let mut st = shared.state();
        st.session = None;
        st.get_stream_open = false;
    }
    let mut h = shared.base_headers.clone();
    h.insert(ACCEPT, HeaderValue::from_static("application/json, text/event-stream"));
    h.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    let Ok(r) = shared.post_authorized(shared.url.clone(), h.clone(), init).await else { return false };
    if !r.status().is_success() {
        return false;
    }
    let Some(sid) = r.headers().get("mcp-session-id").and_then(|v| v.to_str().ok()).map(str::to_owned) else {
        return false;
    };
    drop(r);
    shared.state().session = Some(sid.clone());
    if let Ok(v) = HeaderValue::from_str(&sid) {
        h.insert("mcp-session-id", v);
    }
    if let Some(version) = shared.state().version.clone() {
        if let Ok(v) = HeaderValue::from_str(&version) {
            h.insert("mcp-protocol-version", v);
        }
    }
    let note = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let ok =
        shared.post_authorized(shared.url.clone(), h, note.to_owned()).await.is_ok_and(|r| r.status().is_success());
    if ok {
        let _ = tokio::time::timeout(shared.options.connect_timeout, start_get_stream(shared.clone())).await;
    }
    ok
}

/// Opens the standalone GET stream of a legacy session, resuming it when it breaks. The
/// returned receiver fires once the first GET has been answered (or failed).
fn start_get_stream(shared: Arc<Shared>) -> tokio::sync::oneshot::Receiver<()> {
    let (opened_tx, opened) = tokio::sync::oneshot::channel();
    {
        let mut st = shared.state();
        if st.get_stream_open || st.session.is_none() {
            return opened;
        }
        st.get_stream_open = true;
    }
    let mut opened_tx = Some(opened_tx);
    tokio::spawn(async move {
        let mut last_id: Option<String> = None;
        let mut retry = Duration::from_millis(1000);
        let mut failures = 0;
        while !shared.closed.is_cancelled() && failures <= shared.options.max_reconnects {
            let mut h = shared.base_headers.clone();
            h.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
            {
                let st = shared.state();
                let Some(session) = st.session.clone() else { break };
                if let Ok(v) = HeaderValue::from_str(&session) {
                    h.insert("mcp-session-id", v);
                }
                if let Some(v) = st.version.as_deref().and_then(|v| HeaderValue::from_str(v).ok()) {
                    h.insert("mcp-protocol-version", v);
                }
            }
            if let Some(v) = last_id.as_deref().and_then(|v| HeaderValue::from_str(v).ok()) {
                h.insert("last-event-id", v);
            }
            shared.authorize(&mut h, "GET", &shared.url).await;
            let response = tokio::select! {
                r = shared.http.get(shared.url.clone()).headers(h).send() => r,
                _ = shared.closed.cancelled() => break,
            };
            if let Some(tx) = opened_tx.take() {
                let _ = tx.send(());
            }
            match response {
                Ok(r) if r.status() == StatusCode::METHOD_NOT_ALLOWED => break,
                Ok(r) if r.status().is_success() => {
                    failures = 0;
                    let mut parser = sse::Parser::default();
                    let mut body = r.bytes_stream();
                    loop {
                        let chunk = tokio::select! {
                            c = body.next() => c,
                            _ = shared.closed.cancelled() => None,
                        };
                        let Some(Ok(chunk)) = chunk else { break };
                        for event in parser.feed(&chunk) {
                            if let Some(id) = event.id {
                                last_id = Some(id);
                            }
                            if let Some(ms) = event.retry {
                                retry = Duration::from_millis(ms);
                            }
                            if !event.data.trim().is_empty() && (event.event.is_empty() || event.event == "message") {
                                shared.deliver(event.data).await;
                            }
                        }
                    }
                }
                _ => failures += 1,
            }
            tokio::select! {
                _ = tokio::time::sleep(retry) => {}
                _ = shared.closed.cancelled() => break,
            }
        }
        shared.state().get_stream_open = false;
    });
    opened
}

/// Opens an HTTP+SSE (2024-11-05) event stream at the URL; `true` once its `endpoint`
/// event said where to POST. The stream's messages are delivered until it ends, and then
/// the connection ends.
async fn open_sse_transport(shared: &Arc<Shared>) -> bool {
    let mut h = shared.base_headers.clone();
    h.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
    shared.authorize(&mut h, "GET", &shared.url).await;
    let Ok(r) = shared.http.get(shared.url.clone()).headers(h).send().await else { return false };
    let is_sse = r
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| ct.starts_with("text/event-stream"));
    if !r.status().is_success() || !is_sse {
        return false;
    }
    let mut body = r.bytes_stream();
    let mut parser = sse::Parser::default();
    let mut pending = Vec::new();
    let endpoint = loop {
        let Some(Ok(chunk)) = body.next().await else { return false };
        let events = parser.feed(&chunk);
        let mut found = None;
        for e in events {
            if found.is_none() && e.event == "endpoint" {
                found = Some(e.data.trim().to_owned());
            } else if found.is_some() {
                pending.push(e);
            }
        }
        if let Some(f) = found {
            break f;
        }
    };
    let Ok(post_url) = shared.url.join(&endpoint) else { return false };
    shared.state().post_url = Some(post_url);
    let shared = shared.clone();
    tokio::spawn(async move {
        for e in pending {
            if !e.data.trim().is_empty() {
                shared.deliver(e.data).await;
            }
        }
        loop {
            let chunk = tokio::select! {
                c = body.next() => c,
                _ = shared.closed.cancelled() => None,
            };
            let Some(Ok(chunk)) = chunk else { break };
            for e in parser.feed(&chunk) {
                if !e.data.trim().is_empty() && (e.event.is_empty() || e.event == "message") {
                    shared.deliver(e.data).await;
                }
            }
        }
        // The event stream is the connection: its end closes the incoming side.
        shared.closed.cancel();
    });
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_error_naming_no_request_is_the_posted_requests() {
        let id = RequestId::from(7);
        let answer = |body: Value| serde_json::from_str::<Value>(&answer_for(body.to_string(), &id)).unwrap();
        let error = json!({"code": -32000, "message": "Bad Request: Server not initialized"});
        let null_id = json!({"jsonrpc": "2.0", "error": error, "id": null});
        assert_eq!(answer(null_id), json!({"jsonrpc": "2.0", "error": error, "id": 7}));
        let no_id = json!({"jsonrpc": "2.0", "error": error});
        assert_eq!(answer(no_id), json!({"jsonrpc": "2.0", "error": error, "id": 7}));
        // An answer naming a request, a result, a request of the server, a batch: as they are.
        for body in [
            json!({"jsonrpc": "2.0", "error": error, "id": 3}),
            json!({"jsonrpc": "2.0", "result": {}, "id": null}),
            json!({"jsonrpc": "2.0", "method": "ping", "error": error}),
            json!([{"jsonrpc": "2.0", "error": error, "id": null}]),
        ] {
            assert_eq!(answer(body.clone()), body);
        }
    }
}
