//! MCP over HTTP, server side: one endpoint speaking Streamable HTTP to clients of both
//! eras, and the legacy HTTP+SSE transport beside it, as an axum [`Router`] (a
//! `tower::Service`) that any axum or hyper application can mount.
//!
//! - 2026-07-28 requests are stateless POSTs: the `Mcp-*` headers are checked against the
//!   body, no session is minted, closing the response stream cancels the request.
//! - Legacy clients (2025-03-26 .. 2025-11-25) `initialize` into a session (`Mcp-Session-Id`
//!   from a CSPRNG), POST messages, read unrelated messages on a GET stream, and end the
//!   session with DELETE; idle sessions expire.
//! - 2024-11-05 clients use HTTP+SSE: `GET /sse` names the POST endpoint in its first event.
//!
//! Every request's `Host` and `Origin` are checked against an allow-list (loopback names by
//! default) and bodies are bounded.
#![deny(missing_docs)]

mod auth;
mod deployment;
mod events;
mod guard;
mod headers;
mod legacy;
mod modern;
mod reply;
mod resume;
mod security;
mod serve;
mod session;
mod sse;

use std::sync::Arc;
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, FromRequest, Query, Request, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use mcpwire_protocol::codec;
use mcpwire_protocol::jsonrpc;
use mcpwire_protocol::message::{Decoded, FromClient, Received};
use mcpwire_protocol::{ErrorObject, ProtocolVersion};
use mcpwire_server::shared::{Bus, Instance, Presence, StoreError};
use mcpwire_server::Server;
use tokio_util::sync::CancellationToken;

pub use events::{EventBudget, EventStore, Evicted, MemoryEventStore, SharedEventStore, StreamInfo, StreamPosition};
use guard::Admitted;
pub use headers::{METHOD, NAME, PARAM_PREFIX, PROTOCOL_VERSION, SESSION_ID};
pub use security::HostPolicy;
use session::SharedSessions;
pub use session::{Placement, SessionRecord, SessionStore};

/// The state the instances of a deployment share ([`McpHttp::shared`]): `mcpwire-store-redis`
/// makes one on Redis.
#[derive(Clone)]
pub struct SharedState {
    /// Where legacy sessions are kept.
    pub sessions: Arc<dyn SessionStore>,
    /// Where the events of legacy sessions' resumable streams are kept.
    pub events: Arc<dyn SharedEventStore>,
    /// What carries changes between the instances.
    pub bus: Arc<dyn Bus>,
    /// The instances' leases.
    pub presence: Arc<dyn Presence>,
}

impl std::fmt::Debug for SharedState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedState").finish_non_exhaustive()
    }
}

/// Settings of the HTTP transport.
#[derive(Debug, Clone)]
pub struct HttpConfig {
    /// Path of the Streamable HTTP endpoint.
    pub endpoint: String,
    /// Path of the legacy HTTP+SSE stream (`None`: no HTTP+SSE).
    pub sse_endpoint: Option<String>,
    /// Path the HTTP+SSE clients POST to.
    pub message_endpoint: String,
    /// Accepted `Host` and `Origin` names.
    pub hosts: HostPolicy,
    /// Largest request body, in bytes.
    pub max_body: usize,
    /// Sessions idle this long are ended.
    pub session_idle_timeout: Duration,
    /// Legacy sessions held at once (Streamable HTTP and HTTP+SSE together). One more
    /// `initialize` (or `GET /sse`) is refused with `503` until one ends (DELETE, idle expiry):
    /// a session in use is never evicted to make room.
    pub max_sessions: usize,
    /// A comment is sent on an SSE stream quiet for this long.
    pub keep_alive: Duration,
    /// Whether legacy sessions may open the standalone GET stream (405 otherwise).
    pub get_stream: bool,
    /// The reconnection delay announced to 2025-11-25 clients (SSE `retry`).
    pub sse_retry: Duration,
    /// How long a request may go without a first message (its answer, or a progress or log
    /// message that starts its SSE stream) before it is answered 504 and cancelled.
    pub request_timeout: Duration,
    /// How long a connection may take to send a request's headers, counted from when it
    /// connects or when its previous response ended: a connection idle between requests
    /// (keep-alive) is closed after this long too. `None`: no limit, and no timer armed per
    /// request (it costs about 4% of the server's CPU on small calls). ([`McpHttp::serve`];
    /// a router mounted elsewhere is subject to its own server's settings.)
    pub header_read_timeout: Option<Duration>,
    /// Connections served at once; one more is answered `503` and closed at once, before
    /// anything of it is read. An HTTP/2 connection ([`Self::http2`]) is one connection
    /// however many streams it carries. ([`McpHttp::serve`].)
    pub max_connections: usize,
    /// Serve HTTP/2 over cleartext as well (h2c with prior knowledge, RFC 9113 §3.3: the
    /// client begins with the HTTP/2 preface; no `Upgrade: h2c`, no TLS), on the same listener
    /// as HTTP/1.1: each connection's first bytes say which (read without consuming them,
    /// within `header_read_timeout`). Many requests and notification streams then share one
    /// connection, which is what holding many streams open costs least with. Off by default:
    /// then nothing is read ahead and HTTP/1.1 is served as ever. ([`McpHttp::serve`]; the
    /// `http2` feature.)
    ///
    /// The limits carry over: an HTTP/2 connection takes one of `max_connections`; one with no
    /// request in flight for `header_read_timeout` (counted from when it connects, or when its
    /// last request's response ended) is sent a GOAWAY and closed (at the latest one more
    /// `header_read_timeout` later); a shutdown sends every connection a GOAWAY once the
    /// drain is over, and closes what is left at the end of the grace period.
    #[cfg(feature = "http2")]
    pub http2: bool,
    /// With [`Self::http2`]: requests (streams) one HTTP/2 connection may have open at once,
    /// announced to the client (`SETTINGS_MAX_CONCURRENT_STREAMS`); a client that opens more
    /// has them refused (`REFUSED_STREAM`). Each open stream holds what its request holds (a
    /// listen stream, a call in flight), so this times `max_connections` bounds them all.
    /// At least 1.
    #[cfg(feature = "http2")]
    pub http2_max_streams: u32,
    /// After a shutdown begins, how long requests in flight have to finish before their
    /// connections are closed. ([`McpHttp::serve_until`].)
    pub shutdown_grace: Duration,
    /// After a shutdown begins, how long idle keep-alive connections are kept open, so that a
    /// request a client sends on one just then is answered `503` (`Connection: close`: a
    /// load balancer sends it elsewhere) rather than met by a closed connection. Taken from
    /// the grace period; not waited for when no connection is open. ([`McpHttp::serve_until`].)
    pub shutdown_drain: Duration,
    /// What the event store of [`McpHttp::new`] keeps of resumable streams, in events per
    /// stream and bytes per session and overall (a store given to
    /// [`McpHttp::with_event_store`] has its own).
    pub event_budget: EventBudget,
    /// With a shared store ([`McpHttp::shared`]): how long this instance's lease lasts once
    /// renewed (every third of it). A stream of an instance whose lease ran out, resumed on
    /// another, answers its request with an error within about one and a half leases.
    pub instance_lease: Duration,
    /// Serve as an OAuth protected resource: every request needs a bearer token this
    /// resource server takes, handlers see its principal, and the protected resource metadata
    /// is served (`None`: the endpoint is open, as over stdio). The `auth` feature.
    #[cfg(feature = "auth")]
    pub auth: Option<mcpwire_auth::resource::ResourceServer>,
}

impl Default for HttpConfig {
    fn default() -> Self {
        Self {
            endpoint: "/mcp".into(),
            sse_endpoint: Some("/sse".into()),
            message_endpoint: "/message".into(),
            hosts: HostPolicy::default(),
            max_body: 4 * 1024 * 1024,
            session_idle_timeout: Duration::from_secs(30 * 60),
            max_sessions: 10_000,
            keep_alive: Duration::from_secs(15),
            get_stream: true,
            sse_retry: Duration::from_millis(1000),
            request_timeout: Duration::from_secs(300),
            header_read_timeout: Some(Duration::from_secs(30)),
            max_connections: 10_000,
            #[cfg(feature = "http2")]
            http2: false,
            #[cfg(feature = "http2")]
            http2_max_streams: 256,
            shutdown_grace: Duration::from_secs(10),
            shutdown_drain: Duration::from_secs(1),
            event_budget: EventBudget::default(),
            instance_lease: Duration::from_secs(10),
            #[cfg(feature = "auth")]
            auth: None,
        }
    }
}

pub(crate) struct Inner {
    pub(crate) server: Server,
    pub(crate) config: HttpConfig,
    pub(crate) sessions: Arc<session::Sessions>,
    /// Cancelled when the shutdown begins ([`McpHttp::shutdown`]).
    pub(crate) shutdown: CancellationToken,
    /// What this instance shares with the others of its deployment, if it is one of several.
    pub(crate) deployment: Option<deployment::Deployment>,
}

impl Inner {
    /// While shutting down, a new request is answered this (503, come back elsewhere).
    pub(crate) fn refuse_while_shutting_down(&self) -> Option<Response> {
        self.shutdown.is_cancelled().then(shutting_down)
    }
}

/// The answer to a request that would open a session beyond `max_sessions`.
pub(crate) fn sessions_full(id: Option<&mcpwire_protocol::RequestId>) -> Response {
    let error = ErrorObject::internal("the server holds as many sessions as it may; try again later");
    let mut r = error_response(StatusCode::SERVICE_UNAVAILABLE, id, &error);
    r.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    r
}

/// The answer to a request that needs the shared store while it cannot be reached: `503`,
/// come back in a second (the store's client reconnects by itself).
pub(crate) fn store_unavailable(error: &mcpwire_server::shared::StoreError) -> Response {
    tracing::warn!(error = %error, "a request needed the shared store, which failed");
    let error = ErrorObject::internal("the server's shared store is unavailable; try again shortly");
    let mut r = error_response(StatusCode::SERVICE_UNAVAILABLE, None, &error);
    r.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    r
}

/// The answer to a request that comes while the server shuts down.
pub(crate) fn shutting_down() -> Response {
    let mut r = plain(StatusCode::SERVICE_UNAVAILABLE, "the server is shutting down; try again");
    r.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
    r
}

/// An MCP server exposed over HTTP.
#[derive(Clone)]
pub struct McpHttp {
    inner: Arc<Inner>,
}

type Shared = State<Arc<Inner>>;

/// An error response with a JSON-RPC error body (id null) and an HTTP status.
pub(crate) fn error_response(
    status: StatusCode,
    id: Option<&mcpwire_protocol::RequestId>,
    error: &ErrorObject,
) -> Response {
    reply::json_response(status, jsonrpc::encode_error(id, error), &[])
}

/// A plain-text response.
pub(crate) fn plain(status: StatusCode, message: &str) -> Response {
    (status, message.to_owned()).into_response()
}

/// Whether the client accepts SSE responses.
pub(crate) fn accepts_sse(headers: &HeaderMap) -> bool {
    headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|a| a.contains("text/event-stream") || a.contains("*/*"))
}

impl McpHttp {
    /// Exposes `server` with these settings. Must be called within a tokio runtime.
    pub fn new(server: Server, config: HttpConfig) -> Self {
        let store = Arc::new(MemoryEventStore::with_budget(config.event_budget));
        Self::with_event_store(server, config, store)
    }

    /// Like [`Self::new`], keeping the events of resumable streams in `store`.
    pub fn with_event_store(server: Server, config: HttpConfig, store: Arc<dyn EventStore>) -> Self {
        let sessions =
            session::Sessions::new(server.clone(), config.session_idle_timeout, config.max_sessions, store, None);
        let shutdown = CancellationToken::new();
        Self { inner: Arc::new(Inner { server, config, sessions, shutdown, deployment: None }) }
    }

    /// One instance of a deployment of several, behind one address, that act as one server:
    /// Streamable HTTP sessions are kept in the shared store of `shared`, so that any instance
    /// serves any of them; the server's changes ([`Server::share_changes`]) and the sessions'
    /// reach the clients of every instance over its bus, and so does the news of its tasks
    /// ([`Server::share_tasks`]: keep them in a shared store too, with
    /// [`mcpwire_server::ServerBuilder::task_store`]). See docs/SCALING.md.
    ///
    /// A request's resumable stream is kept in the shared store too, so that a client resumes
    /// it on any instance, and so is a session's standalone stream (its own messages, read by
    /// its GET stream wherever that is open). An HTTP+SSE session (2024-11-05) is its stream,
    /// and lives where that is open: the others pass the messages POSTed for it on there.
    pub async fn shared(server: Server, config: HttpConfig, shared: SharedState) -> Result<Self, StoreError> {
        server.share_changes(shared.bus.clone()).await?;
        let instance = Instance::new();
        let lease = instance.keep_alive(shared.presence.clone(), config.instance_lease).await?;
        // Tasks (if the server has them, in a store shared too): their news, and their runners'
        // leases, are this instance's.
        server.share_tasks(shared.bus.clone(), &lease).await?;
        let sessions = SharedSessions::new(
            shared.sessions,
            (shared.events.clone(), config.event_budget),
            shared.bus.clone(),
            shared.presence.clone(),
            instance.id(),
        );
        let deployment = deployment::Deployment {
            events: shared.events,
            bus: shared.bus.clone(),
            presence: shared.presence,
            instance,
            lease: config.instance_lease,
            _lease: lease,
        };
        let events = Arc::new(MemoryEventStore::with_budget(config.event_budget));
        let sessions = session::Sessions::new(
            server.clone(),
            config.session_idle_timeout,
            config.max_sessions,
            events,
            Some(sessions),
        );
        sessions.follow_news().await?;
        let shutdown = CancellationToken::new();
        Ok(Self { inner: Arc::new(Inner { server, config, sessions, shutdown, deployment: Some(deployment) }) })
    }

    /// Begins the shutdown: from now on new requests are answered `503`, and SSE streams
    /// that would not end by themselves (legacy GET streams, 2026-07-28 listen streams, legacy
    /// streams resumed here from another instance) end with a `retry` hint, so that their
    /// clients reconnect, elsewhere if a load balancer sends them there. Requests in flight go
    /// on, their streams too, until they are answered. For a router mounted in an application
    /// of one's own; [`Self::serve_until`] calls it.
    pub fn shutdown(&self) {
        self.inner.shutdown.cancel();
    }

    /// How many legacy sessions are open.
    pub fn session_count(&self) -> usize {
        self.inner.sessions.len()
    }

    /// The routes: the Streamable HTTP endpoint, and the HTTP+SSE pair if enabled.
    pub fn router(&self) -> Router {
        let c = &self.inner.config;
        let mut router = Router::new().route(&c.endpoint, post(post_mcp).get(get_mcp).delete(delete_mcp));
        if let Some(sse) = &c.sse_endpoint {
            router = router.route(sse, get(legacy::open)).route(&c.message_endpoint, post(legacy::post));
        }
        #[cfg(feature = "auth")]
        if let Some(rs) = &c.auth {
            for path in rs.metadata_paths() {
                let rs = rs.clone();
                router = router.route(&path, get(move || std::future::ready(auth::metadata(&rs))));
            }
        }
        router.layer(DefaultBodyLimit::max(c.max_body)).with_state(self.inner.clone())
    }
}

/// Does this body carry a 2026-07-28 `_meta` protocol version?
fn has_modern_meta(frame: &Decoded<FromClient>) -> bool {
    matches!(frame, Decoded::Single(Received::Request(r)) if r.meta.protocol_version.is_some())
}

// The guard judges the headers before the body is read: a refused request costs no body.
async fn post_mcp(State(inner): Shared, Admitted(caller): Admitted, request: Request) -> Response {
    // The headers are taken out of the request, not copied as the `HeaderMap` extractor does.
    let (mut parts, body) = request.into_parts();
    let headers = std::mem::take(&mut parts.headers);
    if let Some(ct) = headers.get(header::CONTENT_TYPE) {
        if !ct.to_str().unwrap_or_default().to_ascii_lowercase().starts_with("application/json") {
            return plain(StatusCode::UNSUPPORTED_MEDIA_TYPE, "Content-Type must be application/json");
        }
    }
    let body = match Bytes::from_request(Request::from_parts(parts, body), &()).await {
        Ok(body) => body,
        Err(rejection) => return rejection.into_response(),
    };
    let Ok(text) = std::str::from_utf8(&body) else {
        return error_response(StatusCode::BAD_REQUEST, None, &ErrorObject::parse_error("body is not UTF-8"));
    };
    let incoming = match codec::read_from_client(text) {
        Ok(i) => i,
        Err(e) => return error_response(StatusCode::BAD_REQUEST, e.id(), e.error()),
    };
    let version_header = match headers::value(&headers, &headers::names::PROTOCOL_VERSION) {
        Ok(v) => v,
        // Given twice (or not ASCII): answered as every other checked header is, with a
        // JSON-RPC `HeaderMismatch` a dual-era client recognizes.
        Err(why) => return header_mismatch(&incoming, why),
    };
    let legacy_version = version_header.and_then(ProtocolVersion::parse).filter(|v| !v.is_modern());
    let has_session = headers.contains_key(&headers::names::SESSION_ID);
    // A body with 2026-07-28 `_meta` is modern whatever the header says (a disagreement is then
    // a header mismatch a dual-era client understands); so is a non-legacy header without a session.
    let modern = has_modern_meta(&incoming) || (!has_session && version_header.is_some() && legacy_version.is_none());
    if modern {
        modern::post(&inner, &headers, incoming, caller).await
    } else {
        legacy::post_streamable(&inner, &headers, incoming, text, version_header, caller).await
    }
}

/// The answer to a request whose headers do not hold together: `-32020` (`HeaderMismatch`),
/// with the request's id when it has one, and its status (400).
fn header_mismatch(incoming: &Decoded<FromClient>, why: String) -> Response {
    let id = match incoming {
        Decoded::Single(Received::Request(r)) => Some(&r.id),
        _ => None,
    };
    let code = mcpwire_protocol::error::HEADER_MISMATCH;
    error_response(reply::modern_status(code), id, &ErrorObject::new(code, why))
}

async fn get_mcp(State(inner): Shared, Admitted(caller): Admitted, headers: HeaderMap) -> Response {
    if !inner.config.get_stream || !headers.contains_key(&headers::names::SESSION_ID) {
        let mut r = plain(StatusCode::METHOD_NOT_ALLOWED, "GET needs a legacy session; this endpoint takes POST");
        r.headers_mut().insert(header::ALLOW, HeaderValue::from_static("POST, DELETE"));
        return r;
    }
    legacy::get_stream(&inner, &headers, &caller).await
}

async fn delete_mcp(State(inner): Shared, Admitted(caller): Admitted, headers: HeaderMap) -> Response {
    match headers::value(&headers, &headers::names::SESSION_ID) {
        Ok(Some(id)) => match inner.sessions.find(id, &caller).await {
            Ok(session::Found::Session(s)) if auth::may_use(&s, &caller) => match inner.sessions.end(id).await {
                Ok(_) => StatusCode::NO_CONTENT.into_response(),
                Err(e) => store_unavailable(&e),
            },
            Ok(session::Found::Full) => sessions_full(None),
            Ok(_) => plain(StatusCode::NOT_FOUND, "unknown or ended session"),
            Err(e) => store_unavailable(&e),
        },
        Ok(None) => {
            let mut r = plain(StatusCode::METHOD_NOT_ALLOWED, "DELETE ends a legacy session; none was named");
            r.headers_mut().insert(header::ALLOW, HeaderValue::from_static("POST, GET, DELETE"));
            r
        }
        Err(why) => plain(StatusCode::BAD_REQUEST, &why),
    }
}

/// Query of the HTTP+SSE POST endpoint.
#[derive(serde::Deserialize)]
pub(crate) struct SessionQuery {
    #[serde(rename = "sessionId")]
    pub(crate) session_id: Option<String>,
}

pub(crate) type SessionQueryExtract = Query<SessionQuery>;
