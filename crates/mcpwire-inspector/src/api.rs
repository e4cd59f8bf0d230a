//! The page's API (every route under `/api/` wants the token, see [`crate::security`]):
//!
//! - `GET /api/health`: `{"ok": true}` (for scripts and tests);
//! - `GET /api/state`: the connection, the initial target, the roots;
//! - `POST /api/connect` `{target?, transport?, era?, headers?, timeoutMs?, oauth?}`: connects
//!   (without `target`, to the one the inspector was started with); an HTTP server given no
//!   `Authorization` that answers 401 is authorized with OAuth (unless `oauth` is false): the
//!   page is sent the authorization URL (an `authorize` event) and the call returns once the
//!   browser has come back to the loopback redirect URI (the tokens kept as the CLI keeps
//!   them);
//! - `POST /api/disconnect`;
//! - `POST /api/request` `{id?, method, params?, task?, timeoutMs?}`: one request through
//!   the client (tool calls, reads and prompts answer the server's questions through the
//!   page), with its timing; progress resets its timeout. The answer adds `outputCheck`
//!   `{valid, errors}` to a tool's result when the tool (as last listed) has an output schema,
//!   and `http` (the request's POSTs: headers sent, status and headers received, credentials
//!   hidden) over HTTP. On a 2026-07-28 server `resources/subscribe` opens a
//!   `subscriptions/listen` stream for the resource (until `resources/unsubscribe`);
//! - `POST /api/cancel` `{id}`: cancels a request in flight;
//! - `POST /api/reply/{id}` `{result}` or `{error}`: answers a question of the server's;
//! - `PUT /api/roots` `{roots: [{uri, name?}]}`: the roots offered to the server;
//! - `GET /api/events`: the event stream (server-sent events);
//! - `POST /api/apps/frame` `{html, ui?}`: keeps an app's document (MCP Apps) and answers the
//!   URL of its frame, `/apps/frame/{id}` (served without the token, with the policy built
//!   from `ui`, its `_meta.ui`: see [`crate::apps`]), and `{csp, allow, permissions, approved,
//!   dropped}`.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::convert::Infallible;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock, Weak};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, put};
use axum::{Json, Router};
use futures::StreamExt;
use mcpwire_auth::{native_client, LoopbackAuthorizer, NativeSettings, OAuthClient, Present, TokenStore};
use mcpwire_client::{CallToolOutcome, Client, ClientError, ClientSession, Era, ErrorObject, ProtocolVersion};
use mcpwire_protocol::method::Method;
use mcpwire_protocol::types::{
    CreateMessageParams, CreateMessageResult, ElicitParams, ElicitResult, ListRootsResult, LoggingLevel, Root,
    SubscriptionFilter, APPS_EXTENSION, APPS_MIME_TYPES, APP_MIME_TYPE,
};
use mcpwire_transport::child::ChildProcess;
use mcpwire_transport::http::{AuthProvider, HttpExchange, HttpObserver};
use mcpwire_transport::{Connection, Outbound, CHANNEL_CAPACITY};
use parking_lot::Mutex;
use serde::Deserialize;
use serde_json::{json, Value};
use tokio::sync::{mpsc, oneshot, Notify};
use tokio_util::sync::CancellationToken;

use crate::events::Events;
use crate::target::{chain, Resolver, Target, TransportChoice};

/// The default time a request may take without progress.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);
/// The longest timeout the page may ask for.
const MAX_TIMEOUT: Duration = Duration::from_secs(3600);
/// How long the user may take to authorize in the browser.
const AUTHORIZE_TIMEOUT: Duration = Duration::from_secs(300);
/// How long the child is given at each step of closing.
const CLOSE_GRACE: Duration = Duration::from_secs(2);

/// The inspector's state, shared by every request.
#[derive(Clone)]
pub(crate) struct AppState(Arc<Inner>);

pub(crate) struct Inner {
    token: String,
    hosts: Vec<String>,
    initial: Option<Target>,
    resolver: Resolver,
    reply_timeout: Duration,
    tokens: Option<TokenStore>,
    shutdown: CancellationToken,
    events: Events,
    /// Connecting and disconnecting, one at a time.
    live: tokio::sync::Mutex<Option<Live>>,
    /// The session of the current connection and its number, for requests.
    current: Mutex<Option<Current>>,
    pending: Mutex<HashMap<u64, oneshot::Sender<Reply>>>,
    inflight: Mutex<HashMap<String, CancellationToken>>,
    roots: Mutex<Vec<Root>>,
    next: AtomicU64,
    /// The connection being made, if any: cancelled to give it up.
    connecting: Mutex<Option<CancellationToken>>,
    /// The output schemas of the tools, as last listed (by name).
    schemas: Mutex<HashMap<String, Value>>,
    /// The `subscriptions/listen` streams open for resources (2026-07-28), by URI: cancelled
    /// to unsubscribe.
    listens: Mutex<HashMap<String, CancellationToken>>,
    /// Requests of the page waiting to learn their JSON-RPC id (the first request of their
    /// method sent after them).
    claims: Mutex<VecDeque<Claim>>,
    /// The JSON-RPC ids (their JSON text) of the page's requests in flight: their HTTP
    /// exchanges are kept.
    wanted: Mutex<std::collections::HashSet<String>>,
    /// The HTTP exchanges of the requests in flight, by JSON-RPC id.
    http_log: Mutex<VecDeque<(String, Value)>>,
    /// The documents of the apps' frames (MCP Apps).
    views: crate::apps::Views,
}

/// A request of the page that waits to learn the JSON-RPC id the client gave it.
#[derive(Clone)]
struct Claim {
    method: String,
    /// What the request addresses (a tool's or prompt's name, a resource's URI): two calls
    /// in flight of one method are told apart by it.
    about: Option<String>,
    id: Arc<OnceLock<String>>,
}

/// What a request's params address: `name` (tools, prompts) or `uri` (resources).
fn addressed(params: Option<&Value>) -> Option<String> {
    let params = params?;
    params.get("name").or_else(|| params.get("uri")).and_then(Value::as_str).map(str::to_owned)
}

/// How many HTTP exchanges are kept for requests still in flight.
const HTTP_LOG: usize = 500;

#[derive(Clone)]
struct Current {
    session: ClientSession,
    generation: u64,
    timeout: Duration,
    summary: Value,
}

struct Live {
    session: ClientSession,
    child: Option<ChildProcess>,
    /// The OAuth client of a protected HTTP server, and its URL: what it holds is kept.
    oauth: Option<(String, Arc<OAuthClient>)>,
}

/// The page's answer to a question of the server's.
#[derive(Debug, Deserialize)]
struct Reply {
    #[serde(default)]
    result: Option<Value>,
    #[serde(default)]
    error: Option<Value>,
}

fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or_default()
}

/// An error of the API itself (not of the server): a status and a message.
pub(crate) struct ApiError(StatusCode, String);

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.0, Json(json!({"error": self.1}))).into_response()
    }
}

fn bad_request(message: impl Into<String>) -> ApiError {
    ApiError(StatusCode::BAD_REQUEST, message.into())
}

/// A JSON body, or a 400 that says what is wrong with it.
pub(crate) struct Body<T>(pub(crate) T);

impl<S: Send + Sync, T: serde::de::DeserializeOwned> axum::extract::FromRequest<S> for Body<T> {
    type Rejection = ApiError;

    async fn from_request(req: axum::extract::Request, state: &S) -> Result<Self, Self::Rejection> {
        let bytes = axum::body::Bytes::from_request(req, state)
            .await
            .map_err(|e| bad_request(format!("cannot read the body: {e}")))?;
        let bytes = if bytes.is_empty() { axum::body::Bytes::from_static(b"{}") } else { bytes };
        serde_json::from_slice(&bytes)
            .map(Body)
            .map_err(|e| bad_request(format!("the body is not what was expected: {e}")))
    }
}

impl AppState {
    pub(crate) fn new(
        token: String,
        hosts: Vec<String>,
        initial: Option<Target>,
        resolver: Resolver,
        reply_timeout: Duration,
        tokens: Option<TokenStore>,
        shutdown: CancellationToken,
    ) -> Self {
        Self(Arc::new(Inner {
            token,
            hosts,
            initial,
            resolver,
            reply_timeout,
            tokens,
            shutdown,
            events: Events::new(),
            live: tokio::sync::Mutex::new(None),
            current: Mutex::new(None),
            pending: Mutex::new(HashMap::new()),
            inflight: Mutex::new(HashMap::new()),
            roots: Mutex::new(Vec::new()),
            next: AtomicU64::new(1),
            connecting: Mutex::new(None),
            schemas: Mutex::new(HashMap::new()),
            listens: Mutex::new(HashMap::new()),
            claims: Mutex::new(VecDeque::new()),
            wanted: Mutex::new(std::collections::HashSet::new()),
            http_log: Mutex::new(VecDeque::new()),
            views: crate::apps::Views::default(),
        }))
    }

    pub(crate) fn token(&self) -> &str {
        &self.0.token
    }

    pub(crate) fn allowed_hosts(&self) -> &[String] {
        &self.0.hosts
    }

    /// The documents of the apps' frames.
    pub(crate) fn views(&self) -> &crate::apps::Views {
        &self.0.views
    }

    pub(crate) fn shutdown_token(&self) -> CancellationToken {
        self.0.shutdown.clone()
    }

    /// Ends the session (and its process) and lets every waiting request go.
    pub(crate) async fn close(&self) {
        self.0.shutdown.cancel();
        self.disconnect("the inspector stopped").await;
    }

    async fn disconnect(&self, why: &str) {
        // A connection still being made (its user authorizing, say) is given up.
        if let Some(connecting) = self.0.connecting.lock().take() {
            connecting.cancel();
        }
        let mut live = self.0.live.lock().await;
        self.disconnect_locked(&mut live, why).await;
    }

    /// Ends the connection in `live` (its lock held).
    async fn disconnect_locked(&self, live: &mut Option<Live>, why: &str) {
        let was = self.0.current.lock().take();
        for (_, cancel) in self.0.inflight.lock().drain() {
            cancel.cancel();
        }
        self.0.pending.lock().clear();
        self.0.schemas.lock().clear();
        self.0.wanted.lock().clear();
        self.0.http_log.lock().clear();
        self.0.views.clear();
        for (_, listen) in self.0.listens.lock().drain() {
            listen.cancel();
        }
        if let Some(Live { session, child, oauth }) = live.take() {
            if let Some((url, client)) = oauth {
                self.persist(&url, &client).await;
            }
            let _ = tokio::time::timeout(CLOSE_GRACE * 2, session.close()).await;
            if let Some(child) = child {
                let _ = tokio::time::timeout(CLOSE_GRACE * 3, child.close(CLOSE_GRACE)).await;
            }
        }
        if was.is_some() {
            self.0.events.emit("state", json!({"connected": false, "reason": why}));
        }
    }

    fn next(&self) -> u64 {
        self.0.next.fetch_add(1, Ordering::Relaxed)
    }

    /// Keeps what an OAuth client holds now (a new or refreshed token), where the command
    /// line keeps it.
    async fn persist(&self, url: &str, client: &OAuthClient) {
        let Some(store) = &self.0.tokens else { return };
        if let Err(e) = store.persist(url, client).await {
            tracing::warn!("the token for {url} could not be kept: {e}");
        }
    }

    /// The OAuth client of a protected HTTP server: on a 401 the page is sent the
    /// authorization URL (`authorize`) to open, and `authorizing` told so.
    fn oauth_client(&self, url: &str, authorizing: Arc<Notify>) -> Result<Arc<OAuthClient>, ApiError> {
        let weak = Arc::downgrade(&self.0);
        let target = url.to_owned();
        let present: Present = Arc::new(move |authorize: &url::Url| {
            authorizing.notify_one();
            if let Some(inner) = weak.upgrade() {
                inner.events.emit("authorize", json!({"target": target, "url": authorize.as_str(), "time": now_ms()}));
            }
        });
        let authorizer = LoopbackAuthorizer::bind(present)
            .map_err(|e| ApiError(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?
            .timeout(AUTHORIZE_TIMEOUT);
        native_client("mcp inspector", url, &NativeSettings::default(), authorizer, self.0.tokens.as_ref())
            .map_err(|e| bad_request(format!("{url}: {e}")))
    }

    /// Keeps the output schemas of a `tools/list` result (a page of it).
    fn learn_schemas(&self, result: &Value) {
        let Some(tools) = result.get("tools").and_then(Value::as_array) else { return };
        let mut schemas = self.0.schemas.lock();
        for tool in tools {
            let Some(name) = tool.get("name").and_then(Value::as_str) else { continue };
            match tool.get("outputSchema") {
                Some(schema) if schema.is_object() => schemas.insert(name.to_owned(), schema.clone()),
                _ => schemas.remove(name),
            };
        }
    }

    /// Checks a tool's result against the tool's output schema, when it has one (and the
    /// result is no error): `{valid, errors}`.
    fn check_output(&self, tool: &str, result: &Value) -> Option<Value> {
        if result.get("isError").and_then(Value::as_bool) == Some(true) || result.get("task").is_some() {
            return None;
        }
        let schema = self.0.schemas.lock().get(tool).cloned()?;
        let validator = match jsonschema::validator_for(&schema) {
            Ok(v) => v,
            Err(e) => {
                return Some(json!({"valid": false, "errors": [format!("the output schema does not compile: {e}")]}))
            }
        };
        let Some(structured) = result.get("structuredContent") else {
            return Some(
                json!({"valid": false, "errors": ["the tool has an output schema but the result has no structuredContent"]}),
            );
        };
        let errors: Vec<String> = validator
            .iter_errors(structured)
            .take(20)
            .map(|e| {
                let at = e.instance_path().to_string();
                if at.is_empty() {
                    e.to_string()
                } else {
                    format!("{at}: {e}")
                }
            })
            .collect();
        Some(json!({"valid": errors.is_empty(), "errors": errors}))
    }
}

impl Inner {
    /// Hands a question of the server's to the page and waits for its answer (`None`: no
    /// answer in time, or the connection ended).
    async fn ask(&self, method: &str, params: Value) -> Option<Reply> {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        self.pending.lock().insert(id, tx);
        // Whatever ends the wait (an answer, the timeout, the call given up), the question is
        // withdrawn from the page.
        let _asked = Asked { inner: self, id };
        self.events.emit("serverRequest", json!({"id": id, "method": method, "params": params, "time": now_ms()}));
        let answer = tokio::time::timeout(self.reply_timeout, rx).await;
        answer.ok().and_then(Result::ok)
    }
}

impl Inner {
    /// A request sent: the oldest page request of its method waiting for an id gets its id.
    fn claim(&self, text: &str) {
        let mut claims = self.claims.lock();
        if claims.is_empty() {
            return;
        }
        let Some((method, id, about)) = rpc_request(text) else { return };
        if let Some(at) = claims.iter().position(|c| c.method == method && c.about == about) {
            if let Some(claim) = claims.remove(at) {
                self.wanted.lock().insert(id.clone());
                let _ = claim.id.set(id);
            }
        }
    }

    /// An HTTP exchange of the connection, kept by the JSON-RPC id of the request it carried.
    fn observed(&self, exchange: &HttpExchange) {
        let Some((_, id, _)) = rpc_request(&exchange.body) else { return };
        if !self.wanted.lock().contains(&id) {
            return;
        }
        let redact = |headers: &[(String, String)]| -> Vec<Value> {
            headers
                .iter()
                .map(|(name, value)| {
                    let value = if name.eq_ignore_ascii_case("authorization") {
                        let scheme = value.split_whitespace().next().unwrap_or("");
                        format!("{scheme} (hidden)")
                    } else {
                        value.clone()
                    };
                    json!([name, value])
                })
                .collect()
        };
        let entry = json!({
            "method": exchange.method,
            "url": exchange.url,
            "requestHeaders": redact(&exchange.request_headers),
            "status": exchange.status,
            "responseHeaders": redact(&exchange.response_headers),
            "error": exchange.error,
            "durationMs": exchange.elapsed.as_secs_f64() * 1000.0,
        });
        let mut log = self.http_log.lock();
        if log.len() == HTTP_LOG {
            log.pop_front();
        }
        log.push_back((id, entry));
    }

    /// The HTTP exchanges of the request with this JSON-RPC id, taken out of the log.
    fn exchanges_of(&self, id: &str) -> Vec<Value> {
        self.wanted.lock().remove(id);
        let mut log = self.http_log.lock();
        let (mine, rest): (Vec<_>, Vec<_>) = log.drain(..).partition(|(of, _)| of == id);
        log.extend(rest);
        mine.into_iter().map(|(_, entry)| entry).collect()
    }
}

/// The method, id (as JSON text) and what it addresses of a JSON-RPC request's text.
fn rpc_request(text: &str) -> Option<(String, String, Option<String>)> {
    let value: Value = serde_json::from_str(text).ok()?;
    let method = value.get("method")?.as_str()?.to_owned();
    let id = value.get("id")?.to_string();
    Some((method, id, addressed(value.get("params"))))
}

/// A question of the server's put to the page: withdrawn when dropped.
struct Asked<'a> {
    inner: &'a Inner,
    id: u64,
}

impl Drop for Asked<'_> {
    fn drop(&mut self) {
        self.inner.pending.lock().remove(&self.id);
        self.inner.events.emit("serverRequestDone", json!({"id": self.id}));
    }
}

fn reply_error(reply: &Reply) -> Option<ErrorObject> {
    let error = reply.error.as_ref()?;
    let code = error.get("code").and_then(Value::as_i64).unwrap_or(-32603);
    let message = error.get("message").and_then(Value::as_str).unwrap_or("refused by the user");
    Some(ErrorObject::new(code, message))
}

/// The client of one connection: its handlers hand the server's questions to the page.
fn build_client(state: &AppState, era: &str) -> Result<Client, ApiError> {
    let weak: Weak<Inner> = Arc::downgrade(&state.0);
    let elicit = weak.clone();
    let sample = weak.clone();
    let roots = weak;
    let mut builder = Client::builder("mcpwire-inspector", env!("CARGO_PKG_VERSION"))
        .request_timeout(MAX_TIMEOUT * 24)
        .validate_outputs(false)
        .log_level(LoggingLevel::Debug)
        // The Apps tab renders app tools' interfaces: a server may tailor its results to that.
        .extension(APPS_EXTENSION, serde_json::json!({ APPS_MIME_TYPES: [APP_MIME_TYPE] }))
        .elicitation(move |params: ElicitParams| {
            let inner = elicit.upgrade();
            async move {
                let decline = ElicitResult { action: "decline".into(), content: None, meta: None };
                let Some(inner) = inner else { return Ok(decline) };
                let params = serde_json::to_value(&params).map_err(ErrorObject::internal)?;
                let Some(reply) = inner.ask(Method::Elicit.as_str(), params).await else { return Ok(decline) };
                if let Some(error) = reply_error(&reply) {
                    return Err(error);
                }
                serde_json::from_value(reply.result.unwrap_or(Value::Null)).map_err(|e| {
                    ErrorObject::internal(format!("the inspector's answer is not an elicitation result: {e}"))
                })
            }
        })
        .sampling(move |params: CreateMessageParams| {
            let inner = sample.upgrade();
            async move {
                let Some(inner) = inner else { return Err(ErrorObject::internal("the inspector stopped")) };
                let params = serde_json::to_value(&params).map_err(ErrorObject::internal)?;
                let Some(reply) = inner.ask(Method::CreateMessage.as_str(), params).await else {
                    return Err(ErrorObject::new(-1, "the user did not answer the sampling request"));
                };
                if let Some(error) = reply_error(&reply) {
                    return Err(error);
                }
                serde_json::from_value::<CreateMessageResult>(reply.result.unwrap_or(Value::Null))
                    .map_err(|e| ErrorObject::internal(format!("the inspector's answer is not a sampling result: {e}")))
            }
        })
        .roots(move || {
            let roots = roots.upgrade().map(|inner| inner.roots.lock().clone()).unwrap_or_default();
            async move { Ok(ListRootsResult { roots }) }
        });
    match era {
        "" | "auto" => {}
        "legacy" => builder = builder.protocol_version(ProtocolVersion::V2025_11_25).accept_negotiated(true),
        "modern" => builder = builder.protocol_version(ProtocolVersion::V2026_07_28),
        other => return Err(bad_request(format!("era {other:?}: expected auto, legacy or modern"))),
    }
    Ok(builder.build())
}

/// Wraps a connection so that every frame is an event (`frame`), and every notification
/// received one more (`notification`).
fn tee(connection: Connection, state: &AppState) -> Connection {
    let Connection { mut incoming, outgoing, writer, sends_headers } = connection;
    let (in_tx, in_rx) = mpsc::channel(CHANNEL_CAPACITY);
    let (out_tx, mut out_rx) = mpsc::channel::<Outbound>(CHANNEL_CAPACITY);
    let weak = Arc::downgrade(&state.0);
    let weak_out = weak.clone();
    tokio::spawn(async move {
        while let Some(inbound) = incoming.recv().await {
            if let Some(inner) = weak.upgrade() {
                match &inbound {
                    Ok(frame) => received(&inner.events, &frame.text),
                    Err(e) => inner.events.emit(
                        "frame",
                        json!({"dir": "received", "text": format!("(unreadable: {e})"), "time": now_ms()}),
                    ),
                }
            }
            if in_tx.send(inbound).await.is_err() {
                break;
            }
        }
    });
    tokio::spawn(async move {
        while let Some(out) = out_rx.recv().await {
            if let (Outbound::Frame(frame), Some(inner)) = (&out, weak_out.upgrade()) {
                inner.events.emit("frame", json!({"dir": "sent", "text": frame.text, "time": now_ms()}));
                inner.claim(&frame.text);
            }
            if outgoing.send(out).await.is_err() {
                break;
            }
        }
    });
    Connection { incoming: in_rx, outgoing: out_tx, writer, sends_headers }
}

fn received(events: &Events, text: &str) {
    events.emit("frame", json!({"dir": "received", "text": text, "time": now_ms()}));
    let Ok(value) = serde_json::from_str::<Value>(text) else { return };
    let messages = match value {
        Value::Array(items) => items,
        one => vec![one],
    };
    for message in messages {
        let Some(method) = message.get("method").and_then(Value::as_str) else { continue };
        if message.get("id").is_none() {
            events.emit(
                "notification",
                json!({"method": method, "params": message.get("params").cloned().unwrap_or(Value::Null), "time": now_ms()}),
            );
        }
    }
}

pub(crate) fn router(state: AppState) -> Router {
    Router::new()
        .route("/", get(crate::assets::index))
        .route("/index.html", get(crate::assets::index))
        .route("/app.js", get(crate::assets::script))
        .route("/app.css", get(crate::assets::style))
        .route("/api/health", get(health))
        .route("/api/state", get(get_state))
        .route("/api/connect", post(connect))
        .route("/api/disconnect", post(disconnect))
        .route("/api/request", post(request))
        .route("/api/cancel", post(cancel))
        .route("/api/reply/{id}", post(reply))
        .route("/api/roots", put(set_roots))
        .route("/api/events", get(events))
        .route("/api/apps/frame", post(crate::apps::frame))
        .route("/apps/frame/{id}", get(crate::apps::serve))
        .fallback(not_found)
        .layer(axum::middleware::from_fn_with_state(state.clone(), crate::security::guard))
        .with_state(state)
}

async fn not_found() -> ApiError {
    ApiError(StatusCode::NOT_FOUND, "no such route".into())
}

async fn health() -> Json<Value> {
    Json(json!({"ok": true, "version": env!("CARGO_PKG_VERSION")}))
}

async fn get_state(State(state): State<AppState>) -> Json<Value> {
    let current = state.0.current.lock().clone();
    let initial = state.0.initial.as_ref();
    Json(json!({
        "connected": current.is_some(),
        "connection": current.map(|c| c.summary),
        "initialTarget": initial.map(Target::label),
        "initialTransport": initial.map(Target::transport),
        "roots": *state.0.roots.lock(),
    }))
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct ConnectBody {
    #[serde(default)]
    target: Option<String>,
    #[serde(default)]
    transport: Option<String>,
    #[serde(default)]
    era: Option<String>,
    #[serde(default)]
    headers: Vec<Header>,
    #[serde(default)]
    timeout_ms: Option<u64>,
    /// Whether to authorize with OAuth on a 401 (default: yes, unless an `Authorization`
    /// header is given).
    #[serde(default)]
    oauth: Option<bool>,
}

#[derive(Deserialize)]
struct Header {
    name: String,
    value: String,
}

fn timeout_of(ms: Option<u64>) -> Result<Duration, ApiError> {
    match ms {
        None => Ok(DEFAULT_TIMEOUT),
        Some(0) => Err(bad_request("timeoutMs must be positive")),
        Some(ms) => Ok(Duration::from_millis(ms).min(MAX_TIMEOUT)),
    }
}

async fn connect(State(state): State<AppState>, Body(body): Body<ConnectBody>) -> Result<Json<Value>, ApiError> {
    let transport = TransportChoice::parse(body.transport.as_deref().unwrap_or("auto"))
        .ok_or_else(|| bad_request("transport: expected auto, stdio, http or sse"))?;
    let timeout = timeout_of(body.timeout_ms)?;
    let target = match body.target.as_deref().map(str::trim).filter(|t| !t.is_empty()) {
        Some(text) => (state.0.resolver)(text, transport).map_err(bad_request)?,
        None => state.0.initial.clone().ok_or_else(|| bad_request("no target: give one"))?,
    };
    let mut headers = Vec::new();
    for Header { name, value } in body.headers {
        let name = name.trim().to_owned();
        if name.is_empty() {
            continue;
        }
        if name.contains(|c: char| c.is_whitespace() || c == ':') {
            return Err(bad_request(format!("header name {name:?} is not valid")));
        }
        headers.push((name, value.trim().to_owned()));
    }
    let target = target.with_headers(headers);
    let era = body.era.as_deref().unwrap_or("auto");
    // Checked before anything is ended.
    build_client(&state, era)?;
    // A connection still being made is given up for this one.
    let given_up = CancellationToken::new();
    if let Some(previous) = state.0.connecting.lock().replace(given_up.clone()) {
        previous.cancel();
    }
    let mut live = state.0.live.lock().await;
    state.disconnect_locked(&mut live, "connecting to another server").await;
    state.0.events.emit("state", json!({"connected": false, "connecting": true, "target": target.label()}));
    let watcher = Arc::downgrade(&state.0);
    let observer: HttpObserver = Arc::new(move |exchange: &HttpExchange| {
        if let Some(inner) = watcher.upgrade() {
            inner.observed(exchange);
        }
    });
    let authorizing = Arc::new(Notify::new());
    let oauth = match target.wants_oauth().filter(|_| body.oauth.unwrap_or(true)) {
        Some(url) => Some((url.to_owned(), state.oauth_client(url, authorizing.clone())?)),
        None => None,
    };
    let auth = oauth.as_ref().map(|(_, c)| c.clone() as Arc<dyn AuthProvider>);
    let started = Instant::now();
    let mut retried = false;
    let (handshake, child) = loop {
        let client = build_client(&state, era)?;
        let (connection, child) =
            target.open(Some(observer.clone()), auth.clone()).map_err(|e| ApiError(StatusCode::BAD_GATEWAY, e))?;
        let connection = tee(connection, &state);
        // The handshake's time limit, but while the user authorizes in the browser, as long as
        // the authorization may take.
        let mut authorized = false;
        let handshake = async {
            let mut connecting = std::pin::pin!(client.connect(connection));
            let mut limit = timeout + Duration::from_secs(5);
            loop {
                tokio::select! {
                    done = &mut connecting => break Ok(done),
                    () = authorizing.notified() => {
                        authorized = true;
                        limit = AUTHORIZE_TIMEOUT + timeout;
                    }
                    () = tokio::time::sleep(limit) => break Err(false),
                    () = given_up.cancelled() => break Err(true),
                }
            }
        }
        .await;
        // The era's probe (`server/discover`) gives up after a few seconds, and the user's
        // authorization takes longer: with the era to detect, the handshake is made again,
        // with the token, so that the era is the server's and not the probe's timeout.
        match &handshake {
            Ok(Ok(session)) if authorized && !retried && era == "auto" && session.era() == Era::Legacy => {
                retried = true;
                let _ = tokio::time::timeout(CLOSE_GRACE * 2, session.close()).await;
                if let Some(child) = child {
                    let _ = tokio::time::timeout(CLOSE_GRACE * 3, child.close(Duration::from_millis(300))).await;
                }
            }
            _ => break (handshake, child),
        }
    };
    let session = match handshake {
        Ok(Ok(session)) => session,
        failed => {
            if let Some(child) = child {
                let _ = tokio::time::timeout(CLOSE_GRACE * 3, child.close(Duration::from_millis(300))).await;
            }
            let message = match failed {
                Ok(Err(e)) => format!("cannot connect to {}: {}", target.label(), chain(&e)),
                Err(true) => format!("connecting to {} was given up", target.label()),
                _ => format!("{} did not complete the handshake in time", target.label()),
            };
            state.0.events.emit("state", json!({"connected": false, "reason": message}));
            return Err(ApiError(StatusCode::BAD_GATEWAY, message));
        }
    };
    let generation = state.next();
    let summary = json!({
        "target": target.label(),
        "transport": target.transport(),
        "era": match session.era() { Era::Modern => "modern", _ => "legacy" },
        "protocolVersion": session.protocol_version().as_str(),
        "serverInfo": session.server_info(),
        "capabilities": session.server_capabilities(),
        "instructions": session.instructions(),
        "serverEntry": target.server_entry(),
        "handshakeMs": started.elapsed().as_millis() as u64,
        "timeoutMs": timeout.as_millis() as u64,
    });
    *state.0.current.lock() = Some(Current { session: session.clone(), generation, timeout, summary: summary.clone() });
    if let Some((url, client)) = &oauth {
        state.persist(url, client).await;
    }
    *live = Some(Live { session: session.clone(), child, oauth });
    drop(live);
    state.0.events.emit("state", json!({"connected": true, "connection": summary}));
    // Say so when the server goes away by itself.
    let watch = Arc::downgrade(&state.0);
    tokio::spawn(async move {
        session.closed().await;
        let Some(inner) = watch.upgrade() else { return };
        let ours = {
            let mut current = inner.current.lock();
            if current.as_ref().is_some_and(|c| c.generation == generation) {
                current.take();
                true
            } else {
                false
            }
        };
        if ours {
            inner.events.emit("state", json!({"connected": false, "reason": "the server closed the connection"}));
        }
    });
    Ok(Json(summary))
}

async fn disconnect(State(state): State<AppState>) -> Json<Value> {
    state.disconnect("disconnected").await;
    Json(json!({"ok": true}))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RequestBody {
    #[serde(default)]
    id: Option<String>,
    method: String,
    #[serde(default)]
    params: Option<Value>,
    #[serde(default)]
    task: bool,
    #[serde(default)]
    timeout_ms: Option<u64>,
}

enum Ended {
    Done(Result<Value, ClientError>),
    Cancelled,
    TimedOut(Duration),
}

async fn request(State(state): State<AppState>, Body(body): Body<RequestBody>) -> Result<Json<Value>, ApiError> {
    let current = state.0.current.lock().clone();
    let Some(current) = current else { return Err(ApiError(StatusCode::CONFLICT, "not connected".into())) };
    let timeout = match body.timeout_ms {
        Some(_) => timeout_of(body.timeout_ms)?,
        None => current.timeout,
    };
    let id = body.id.clone().unwrap_or_else(|| format!("r{}", state.next()));
    let cancel = CancellationToken::new();
    if state.0.inflight.lock().insert(id.clone(), cancel.clone()).is_some() {
        return Err(bad_request(format!("a request {id:?} is already in flight")));
    }
    let progressed = Arc::new(Notify::new());
    let events = Arc::downgrade(&state.0);
    let (notify, progress_id) = (progressed.clone(), id.clone());
    // Progress is asked for where it means something: calls, reads, prompts.
    let session =
        if matches!(Method::parse(&body.method), Some(Method::CallTool | Method::ReadResource | Method::GetPrompt)) {
            current.session.with_progress(move |p| {
                notify.notify_one();
                if let Some(inner) = events.upgrade() {
                    inner.events.emit("progress", json!({"requestId": progress_id, "params": p, "time": now_ms()}));
                }
            })
        } else {
            current.session.clone()
        };
    let request = json!({"jsonrpc": "2.0", "method": body.method, "params": body.params});
    state.0.events.emit("history", json!({"id": id, "phase": "request", "request": request, "time": now_ms()}));
    // The JSON-RPC id the client gives it, to find its HTTP exchanges by.
    let claim =
        Claim { method: body.method.clone(), about: addressed(body.params.as_ref()), id: Arc::new(OnceLock::new()) };
    state.0.claims.lock().push_back(claim.clone());
    let started = Instant::now();
    let mut call = Box::pin(dispatch(state.clone(), session, body.method.clone(), body.params.clone(), body.task));
    let ended = loop {
        tokio::select! {
            result = &mut call => break Ended::Done(result),
            () = cancel.cancelled() => break Ended::Cancelled,
            () = progressed.notified() => continue,
            () = tokio::time::sleep(timeout) => break Ended::TimedOut(timeout),
        }
    };
    // Dropping the call tells the server it was cancelled.
    drop(call);
    state.0.inflight.lock().remove(&id);
    state.0.claims.lock().retain(|c| !Arc::ptr_eq(&c.id, &claim.id));
    let http = claim.id.get().map(|rpc| state.0.exchanges_of(rpc)).unwrap_or_default();
    let duration_ms = started.elapsed().as_secs_f64() * 1000.0;
    let (ok, response) = match ended {
        Ended::Done(Ok(result)) => (true, json!({"result": result})),
        Ended::Done(Err(e)) => {
            let mut error = json!({"message": chain(&e)});
            if let Some(object) = e.error_object() {
                error["code"] = object.code.into();
                error["serverMessage"] = object.message.clone().into();
                if let Some(data) = &object.data {
                    error["data"] = data.clone();
                }
            }
            (false, json!({"error": error}))
        }
        Ended::Cancelled => (false, json!({"error": {"message": "cancelled", "cancelled": true}})),
        Ended::TimedOut(after) => (
            false,
            json!({"error": {"message": format!("no answer within {} s (without progress): cancelled", after.as_secs_f64())}}),
        ),
    };
    let mut answer = json!({"id": id, "ok": ok, "durationMs": duration_ms});
    if let (Value::Object(answer), Value::Object(response)) = (&mut answer, response) {
        answer.extend(response);
    }
    if ok {
        match Method::parse(&body.method) {
            Some(Method::ListTools) => state.learn_schemas(&answer["result"]),
            Some(Method::CallTool) => {
                let tool = body.params.as_ref().and_then(|p| p.get("name")).and_then(Value::as_str).unwrap_or_default();
                if let Some(check) = state.check_output(tool, &answer["result"]) {
                    answer["outputCheck"] = check;
                }
            }
            _ => {}
        }
    }
    if !http.is_empty() {
        answer["http"] = Value::Array(http);
    }
    let mut entry = answer.clone();
    entry["phase"] = "response".into();
    entry["time"] = now_ms().into();
    state.0.events.emit("history", entry);
    Ok(Json(answer))
}

/// Sends one request: the typed calls where the client answers the server's questions in
/// the modern era (tool calls, reads, prompts), and any other method as is.
async fn dispatch(
    state: AppState,
    session: ClientSession,
    method: String,
    params: Option<Value>,
    task: bool,
) -> Result<Value, ClientError> {
    fn to_value<T: serde::Serialize>(v: T) -> Result<Value, ClientError> {
        serde_json::to_value(v).map_err(|e| ClientError::InvalidArguments(format!("cannot encode the result: {e}")))
    }
    let params = params.unwrap_or(Value::Null);
    let text = |key: &str| params.get(key).and_then(Value::as_str).map(str::to_owned);
    match Method::parse(&method) {
        Some(Method::CallTool) => {
            let name = text("name").unwrap_or_default();
            let arguments = params.get("arguments").cloned().unwrap_or(Value::Null);
            if task {
                match session.with_tasks().call_tool_as_task(name, arguments, None).await? {
                    CallToolOutcome::Task(task) => Ok(json!({"task": task})),
                    CallToolOutcome::Result(result) => to_value(result),
                }
            } else {
                to_value(session.call_tool(name, arguments).await?)
            }
        }
        Some(Method::ReadResource) => to_value(session.read_resource(text("uri").unwrap_or_default()).await?),
        // 2026-07-28 has no resources/subscribe: a subscriptions/listen stream per resource,
        // kept open until unsubscribed (its notifications reach the page as every other).
        Some(Method::Subscribe) if session.era() == Era::Modern => {
            let uri = text("uri").unwrap_or_default();
            let filter = SubscriptionFilter { resource_subscriptions: Some(vec![uri.clone()]), ..Default::default() };
            let mut stream = session.listen(filter).await?;
            let answer = json!({
                "listen": {"subscriptionId": stream.id(), "honoured": stream.honoured()},
            });
            let stop = CancellationToken::new();
            if let Some(old) = state.0.listens.lock().insert(uri.clone(), stop.clone()) {
                old.cancel();
            }
            let weak = Arc::downgrade(&state.0);
            tokio::spawn(async move {
                loop {
                    tokio::select! {
                        () = stop.cancelled() => break,
                        next = stream.next() => if next.is_none() {
                            if let Some(inner) = weak.upgrade() {
                                inner.listens.lock().remove(&uri);
                                inner.events.emit("notification", json!({
                                    "method": "(subscription ended)",
                                    "params": {"uri": uri},
                                    "time": now_ms(),
                                }));
                            }
                            break;
                        },
                    }
                }
                // Dropping the stream cancels the subscription.
            });
            Ok(answer)
        }
        Some(Method::Unsubscribe) if session.era() == Era::Modern => {
            let uri = text("uri").unwrap_or_default();
            match state.0.listens.lock().remove(&uri) {
                Some(stop) => {
                    stop.cancel();
                    Ok(json!({}))
                }
                None => Err(ClientError::InvalidArguments(format!("not subscribed to {uri}"))),
            }
        }
        Some(Method::GetPrompt) => {
            let arguments: BTreeMap<String, String> = match params.get("arguments") {
                Some(Value::Object(map)) => map
                    .iter()
                    .map(|(k, v)| (k.clone(), v.as_str().map(str::to_owned).unwrap_or_else(|| v.to_string())))
                    .collect(),
                _ => BTreeMap::new(),
            };
            to_value(session.get_prompt(text("name").unwrap_or_default(), arguments).await?)
        }
        // The typed calls of tasks work in either era (2026-07-28 has no tasks/result: the
        // outcome is polled with tasks/get), with the tasks extension declared.
        Some(Method::GetTask) => to_value(session.with_tasks().get_task(&text("taskId").unwrap_or_default()).await?),
        Some(Method::TaskResult) => {
            to_value(session.with_tasks().task_result(&text("taskId").unwrap_or_default()).await?)
        }
        Some(Method::CancelTask) => {
            match session.with_tasks().cancel_task(&text("taskId").unwrap_or_default()).await? {
                Some(task) => to_value(task),
                None => Ok(json!({})),
            }
        }
        Some(Method::SetLevel) => {
            let level: LoggingLevel = serde_json::from_value(params.get("level").cloned().unwrap_or(Value::Null))
                .map_err(|e| ClientError::InvalidArguments(format!("level: {e}")))?;
            session.set_logging_level(level).await?;
            Ok(json!({}))
        }
        _ => session.request(&method, (!params.is_null()).then_some(params)).await,
    }
}

#[derive(Deserialize)]
struct CancelBody {
    id: String,
}

async fn cancel(State(state): State<AppState>, Body(body): Body<CancelBody>) -> Result<Json<Value>, ApiError> {
    match state.0.inflight.lock().get(&body.id) {
        Some(token) => {
            token.cancel();
            Ok(Json(json!({"ok": true})))
        }
        None => Err(ApiError(StatusCode::NOT_FOUND, format!("no request {:?} in flight", body.id))),
    }
}

async fn reply(
    State(state): State<AppState>,
    Path(id): Path<u64>,
    Body(body): Body<Reply>,
) -> Result<Json<Value>, ApiError> {
    if body.result.is_none() && body.error.is_none() {
        return Err(bad_request("give a result or an error"));
    }
    let waiting = state.0.pending.lock().remove(&id);
    match waiting {
        Some(tx) => {
            let _ = tx.send(body);
            Ok(Json(json!({"ok": true})))
        }
        None => Err(ApiError(StatusCode::NOT_FOUND, format!("no question {id} is waiting for an answer"))),
    }
}

#[derive(Deserialize)]
struct RootsBody {
    roots: Vec<Root>,
}

async fn set_roots(State(state): State<AppState>, Body(body): Body<RootsBody>) -> Result<Json<Value>, ApiError> {
    if let Some(bad) = body.roots.iter().find(|r| !r.uri.starts_with("file://")) {
        return Err(bad_request(format!("root {:?}: a root is a file:// URI", bad.uri)));
    }
    *state.0.roots.lock() = body.roots;
    let current = state.0.current.lock().clone();
    let mut notified = false;
    if let Some(current) = current {
        if current.session.era() == Era::Legacy {
            notified = current.session.notify_roots_list_changed().await.is_ok();
        }
    }
    Ok(Json(json!({"ok": true, "notified": notified})))
}

async fn events(State(state): State<AppState>) -> Sse<impl futures::Stream<Item = Result<SseEvent, Infallible>>> {
    let (kept, receiver) = state.0.events.subscribe();
    let last = kept.last().map(|e| e.seq).unwrap_or(0);
    let backlog = futures::stream::iter(kept);
    let live = futures::stream::unfold(receiver, move |mut receiver| async move {
        loop {
            match receiver.recv().await {
                Ok(event) if event.seq <= last => continue,
                Ok(event) => return Some((event, receiver)),
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return None,
            }
        }
    });
    let stream = backlog
        .chain(live)
        .map(|event| Ok(SseEvent::default().id(event.seq.to_string()).data(event.json)))
        .take_until(state.0.shutdown.clone().cancelled_owned());
    Sse::new(stream).keep_alive(KeepAlive::default())
}
