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

mod events;
mod headers;
mod legacy;
mod modern;
mod reply;
mod security;
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
use mcp_protocol::codec;
use mcp_protocol::jsonrpc;
use mcp_protocol::message::{Decoded, FromClient, Received};
use mcp_protocol::{ErrorObject, ProtocolVersion};
use mcp_server::Server;

pub use events::{EventStore, MemoryEventStore};
pub use headers::{METHOD, NAME, PARAM_PREFIX, PROTOCOL_VERSION, SESSION_ID};
pub use security::HostPolicy;

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
    /// A comment is sent on an SSE stream quiet for this long.
    pub keep_alive: Duration,
    /// Whether legacy sessions may open the standalone GET stream (405 otherwise).
    pub get_stream: bool,
    /// The reconnection delay announced to 2025-11-25 clients (SSE `retry`).
    pub sse_retry: Duration,
    /// How long a request may go without a first message (its answer, or a progress or log
    /// message that starts its SSE stream) before it is answered 504 and cancelled.
    pub request_timeout: Duration,
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
            keep_alive: Duration::from_secs(15),
            get_stream: true,
            sse_retry: Duration::from_millis(1000),
            request_timeout: Duration::from_secs(300),
        }
    }
}

pub(crate) struct Inner {
    pub(crate) server: Server,
    pub(crate) config: HttpConfig,
    pub(crate) sessions: Arc<session::Sessions>,
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
    id: Option<&mcp_protocol::RequestId>,
    error: &ErrorObject,
) -> Response {
    reply::json_response(status, jsonrpc::encode_error(id, error), &[])
}

fn plain(status: StatusCode, message: &str) -> Response {
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
        Self::with_event_store(server, config, Arc::new(MemoryEventStore::default()))
    }

    /// Like [`Self::new`], keeping the events of resumable streams in `store`.
    pub fn with_event_store(server: Server, config: HttpConfig, store: Arc<dyn EventStore>) -> Self {
        let sessions = session::Sessions::new(server.clone(), config.session_idle_timeout, store);
        Self { inner: Arc::new(Inner { server, config, sessions }) }
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
        router.layer(DefaultBodyLimit::max(c.max_body)).with_state(self.inner.clone())
    }

    /// Serves on a bound listener until the future is dropped. Nagle is off on every
    /// connection: MCP messages are small and latency-bound.
    pub async fn serve(self, listener: tokio::net::TcpListener) -> std::io::Result<()> {
        use axum::serve::ListenerExt;
        let listener = listener.tap_io(|tcp| {
            let _ = tcp.set_nodelay(true);
        });
        axum::serve(listener, self.router()).await
    }
}

/// Does this body carry a 2026-07-28 `_meta` protocol version?
fn has_modern_meta(frame: &Decoded<FromClient>) -> bool {
    matches!(frame, Decoded::Single(Received::Request(r)) if r.meta.protocol_version.is_some())
}

async fn post_mcp(State(inner): Shared, request: Request) -> Response {
    // The headers are taken out of the request, not copied as the `HeaderMap` extractor does.
    let (mut parts, body) = request.into_parts();
    let headers = std::mem::take(&mut parts.headers);
    let body = match Bytes::from_request(Request::from_parts(parts, body), &()).await {
        Ok(body) => body,
        Err(rejection) => return rejection.into_response(),
    };
    if let Err(why) = inner.config.hosts.check(&headers) {
        return plain(StatusCode::FORBIDDEN, &why);
    }
    if let Some(ct) = headers.get(header::CONTENT_TYPE) {
        if !ct.to_str().unwrap_or_default().to_ascii_lowercase().starts_with("application/json") {
            return plain(StatusCode::UNSUPPORTED_MEDIA_TYPE, "Content-Type must be application/json");
        }
    }
    let Ok(text) = std::str::from_utf8(&body) else {
        return error_response(StatusCode::BAD_REQUEST, None, &ErrorObject::parse_error("body is not UTF-8"));
    };
    let incoming = match codec::read_from_client(text) {
        Ok(i) => i,
        Err(e) => return error_response(StatusCode::BAD_REQUEST, e.id(), e.error()),
    };
    let version_header = match headers::value(&headers, &headers::names::PROTOCOL_VERSION) {
        Ok(v) => v,
        Err(why) => return plain(StatusCode::BAD_REQUEST, &why),
    };
    let legacy_version = version_header.and_then(ProtocolVersion::parse).filter(|v| !v.is_modern());
    let has_session = headers.contains_key(&headers::names::SESSION_ID);
    // A body with 2026-07-28 `_meta` is modern whatever the header says (a disagreement is then
    // a header mismatch a dual-era client understands); so is a non-legacy header without a session.
    let modern = has_modern_meta(&incoming) || (!has_session && version_header.is_some() && legacy_version.is_none());
    if modern {
        modern::post(&inner, &headers, incoming).await
    } else {
        legacy::post_streamable(&inner, &headers, incoming, version_header).await
    }
}

async fn get_mcp(State(inner): Shared, headers: HeaderMap) -> Response {
    if let Err(why) = inner.config.hosts.check(&headers) {
        return plain(StatusCode::FORBIDDEN, &why);
    }
    if !inner.config.get_stream || !headers.contains_key(&headers::names::SESSION_ID) {
        let mut r = plain(StatusCode::METHOD_NOT_ALLOWED, "GET needs a legacy session; this endpoint takes POST");
        r.headers_mut().insert(header::ALLOW, HeaderValue::from_static("POST, DELETE"));
        return r;
    }
    legacy::get_stream(&inner, &headers).await
}

async fn delete_mcp(State(inner): Shared, headers: HeaderMap) -> Response {
    if let Err(why) = inner.config.hosts.check(&headers) {
        return plain(StatusCode::FORBIDDEN, &why);
    }
    match headers::value(&headers, &headers::names::SESSION_ID) {
        Ok(Some(id)) if inner.sessions.remove(id) => StatusCode::NO_CONTENT.into_response(),
        Ok(Some(_)) => plain(StatusCode::NOT_FOUND, "unknown or ended session"),
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
