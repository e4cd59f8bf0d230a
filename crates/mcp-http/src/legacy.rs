//! Legacy-era HTTP: Streamable HTTP with sessions (2025-03-26 .. 2025-11-25), and the
//! HTTP+SSE transport of 2024-11-05.

use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{header, HeaderMap, HeaderName, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use futures::stream;
use mcp_protocol::jsonrpc::{Incoming, Message};
use mcp_protocol::ErrorObject;
use mcp_transport::Frame;
use tokio::sync::mpsc;

use crate::reply::{self, Expect, Plan};
use crate::session::{Session, Sessions, StreamSlot};
use crate::{accepts_sse, error_response, headers, sse, Inner, SessionQueryExtract};

fn plain(status: StatusCode, message: &str) -> Response {
    (status, message.to_owned()).into_response()
}

/// What a body needs answered.
fn expectation(incoming: &Incoming) -> Option<Expect> {
    match incoming {
        Incoming::Single(Message::Request(r)) => Some(Expect::Response(r.id.clone())),
        Incoming::Batch(items)
            if items.iter().any(|i| !matches!(i, Ok(Message::Notification(_) | Message::Response(_)))) =>
        {
            Some(Expect::Batch)
        }
        _ => None,
    }
}

/// A POST to the Streamable HTTP endpoint from a legacy client.
pub(crate) async fn post_streamable(
    inner: &Arc<Inner>,
    headers_in: &HeaderMap,
    text: &str,
    incoming: Incoming,
    version_header: Option<&str>,
) -> Response {
    if let Some(v) = version_header {
        if mcp_protocol::ProtocolVersion::parse(v).is_none_or(|v| v.is_modern()) {
            return plain(StatusCode::BAD_REQUEST, &format!("unsupported MCP-Protocol-Version {v:?}"));
        }
    }
    let is_initialize = matches!(&incoming, Incoming::Single(Message::Request(r)) if r.method == "initialize");
    let (session, created) = match headers::value(headers_in, headers::SESSION_ID) {
        Ok(Some(id)) => match inner.sessions.get(id) {
            Some(s) => (s, false),
            None => return plain(StatusCode::NOT_FOUND, "unknown or ended session: initialize again"),
        },
        Ok(None) if is_initialize => (inner.sessions.create(), true),
        Ok(None) => {
            let e = ErrorObject::invalid_request("missing Mcp-Session-Id header (send initialize first)");
            return error_response(StatusCode::BAD_REQUEST, None, &e);
        }
        Err(why) => return plain(StatusCode::BAD_REQUEST, &why),
    };
    let Some(expect) = expectation(&incoming) else {
        // Notifications and responses only: nothing to answer.
        if session.inbound.send(Ok(Frame::new(text))).await.is_err() {
            return plain(StatusCode::NOT_FOUND, "session ended");
        }
        return StatusCode::ACCEPTED.into_response();
    };
    let (tx, rx) = mpsc::channel(64);
    if session.inbound.send(Ok(Frame { text: text.to_owned(), reply: Some(tx) })).await.is_err() {
        return plain(StatusCode::NOT_FOUND, "session ended");
    }
    let mut extra = Vec::new();
    if created {
        if let Ok(v) = HeaderValue::from_str(&session.id) {
            extra.push((HeaderName::from_static(headers::SESSION_ID), v));
        }
    }
    let plan = Plan {
        expect,
        sse: accepts_sse(headers_in),
        modern: false,
        // In the legacy era a disconnect is not a cancellation.
        cancel_on_close: None,
        keep_alive: inner.config.keep_alive,
        headers: extra,
    };
    reply::respond(rx, plan).await
}

fn sse_headers(r: &mut Response) {
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    h.insert("x-accel-buffering", HeaderValue::from_static("no"));
}

/// Streams a session's unrelated messages, after an optional first event.
fn backlog_stream(
    slot: StreamSlot,
    first: Option<String>,
    keep_alive: std::time::Duration,
    on_end: Option<(Arc<Sessions>, String)>,
) -> Response {
    struct EndSession(Option<(Arc<Sessions>, String)>);
    impl Drop for EndSession {
        fn drop(&mut self) {
            if let Some((sessions, id)) = self.0.take() {
                sessions.remove(&id);
            }
        }
    }
    let state = (slot, first, EndSession(on_end));
    let body = stream::unfold(state, move |(slot, first, end)| async move {
        if let Some(event) = first {
            return Some((Ok::<_, std::convert::Infallible>(event), (slot, None, end)));
        }
        let session: &Session = &slot.0;
        let event = tokio::select! {
            frame = session.backlog.next() => sse::event(None, Some("message"), &frame),
            _ = tokio::time::sleep(keep_alive) => sse::KEEP_ALIVE.to_owned(),
            _ = session.closed.cancelled() => return None,
        };
        Some((Ok(event), (slot, None, end)))
    });
    let mut r = Response::new(Body::from_stream(body));
    sse_headers(&mut r);
    r
}

/// The standalone GET stream of a Streamable HTTP session.
pub(crate) async fn get_stream(inner: &Arc<Inner>, headers_in: &HeaderMap) -> Response {
    let id = match headers::value(headers_in, headers::SESSION_ID) {
        Ok(Some(id)) => id,
        _ => return plain(StatusCode::BAD_REQUEST, "missing Mcp-Session-Id"),
    };
    let Some(session) = inner.sessions.get(id) else {
        return plain(StatusCode::NOT_FOUND, "unknown or ended session");
    };
    let Some(slot) = session.claim_stream() else {
        return plain(StatusCode::CONFLICT, "this session already has a GET stream open");
    };
    backlog_stream(slot, None, inner.config.keep_alive, None)
}

/// `GET /sse`: opens an HTTP+SSE session; the first event names where to POST.
pub(crate) async fn open(State(inner): State<Arc<Inner>>, headers_in: HeaderMap) -> Response {
    if let Err(why) = inner.config.hosts.check(&headers_in) {
        return plain(StatusCode::FORBIDDEN, &why);
    }
    let session = inner.sessions.create();
    let Some(slot) = session.claim_stream() else {
        return plain(StatusCode::INTERNAL_SERVER_ERROR, "new session already streaming");
    };
    let endpoint = format!("{}?sessionId={}", inner.config.message_endpoint, session.id);
    let first = sse::event(None, Some("endpoint"), &endpoint);
    // The stream is the session: when the client goes away, the session ends.
    backlog_stream(slot, Some(first), inner.config.keep_alive, Some((inner.sessions.clone(), session.id.clone())))
}

/// `POST /message?sessionId=..`: a message for an HTTP+SSE session; answers go on its stream.
pub(crate) async fn post(
    State(inner): State<Arc<Inner>>,
    query: SessionQueryExtract,
    headers_in: HeaderMap,
    body: Bytes,
) -> Response {
    if let Err(why) = inner.config.hosts.check(&headers_in) {
        return plain(StatusCode::FORBIDDEN, &why);
    }
    let Some(id) = query.session_id.as_deref() else {
        return plain(StatusCode::BAD_REQUEST, "missing sessionId");
    };
    let Some(session) = inner.sessions.get(id) else {
        return plain(StatusCode::NOT_FOUND, "unknown or ended session");
    };
    let Ok(text) = String::from_utf8(body.to_vec()) else {
        return plain(StatusCode::BAD_REQUEST, "body is not UTF-8");
    };
    if session.inbound.send(Ok(Frame::new(text))).await.is_err() {
        return plain(StatusCode::NOT_FOUND, "session ended");
    }
    StatusCode::ACCEPTED.into_response()
}
