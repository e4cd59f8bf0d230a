//! Legacy-era HTTP: Streamable HTTP with sessions (2025-03-26 .. 2025-11-25), and the
//! HTTP+SSE transport of 2024-11-05.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{FromRequest, Request, State};
use axum::http::{header, HeaderMap, HeaderName, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use futures::stream;
use mcpwire_protocol::frame::Outbound;
use mcpwire_protocol::message::{Decoded, FromClient, Received};
use mcpwire_protocol::{jsonrpc, ErrorObject, Method, RequestId};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::auth::{self, Caller};
use crate::events::{parse_event_id, EventStore, Evicted, StreamInfo, StreamLog, StreamLookup};
use crate::guard::Admitted;
use crate::reply::{self, Expect};
use crate::resume;
use crate::session::{Found, Session, Sessions, SessionsFull, StreamSlot};
use crate::{
    accepts_sse, error_response, headers, plain, sessions_full, sse, store_unavailable, Inner, SessionQueryExtract,
};

/// What a body needs answered.
fn expectation(incoming: &Decoded<FromClient>) -> Option<Expect> {
    match incoming {
        Decoded::Single(Received::Request(r)) => Some(Expect::Response(r.id.clone())),
        Decoded::Batch(items)
            if items.iter().any(|i| !matches!(i, Ok(Received::Notification(_) | Received::Response(_)))) =>
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
    incoming: Decoded<FromClient>,
    body: &str,
    version_header: Option<&str>,
    caller: Caller,
) -> Response {
    if let Some(v) = version_header {
        if mcpwire_protocol::ProtocolVersion::parse(v).is_none_or(|v| v.is_modern()) {
            return plain(StatusCode::BAD_REQUEST, &format!("unsupported MCP-Protocol-Version {v:?}"));
        }
    }
    let initialize = match &incoming {
        Decoded::Single(Received::Request(r)) if r.method.known() == Some(Method::Initialize) => Some(&r.id),
        _ => None,
    };
    let (session, created) = match headers::value(headers_in, &headers::names::SESSION_ID) {
        Ok(Some(id)) => match inner.sessions.find(id, &caller).await {
            Ok(Found::Session(s)) if auth::may_use(&s, &caller) => (s, false),
            Ok(Found::Full) => return sessions_full(None),
            Ok(_) => return plain(StatusCode::NOT_FOUND, "unknown or ended session: initialize again"),
            Err(e) => return store_unavailable(&e),
        },
        Ok(None) if initialize.is_some() => match inner.sessions.create(true) {
            Ok(session) => {
                auth::may_use(&session, &caller);
                (session, true)
            }
            Err(SessionsFull) => return sessions_full(initialize),
        },
        Ok(None) => {
            let e = ErrorObject::invalid_request("missing Mcp-Session-Id header (send initialize first)");
            return error_response(StatusCode::BAD_REQUEST, None, &e);
        }
        Err(why) => return plain(StatusCode::BAD_REQUEST, &why),
    };
    if let Decoded::Single(Received::Request(r)) = &incoming {
        if let Ok(request) = &r.body {
            if let Some(refused) = auth::refuse_scopes(inner, &caller, request) {
                return refused;
            }
        }
    }
    let Some(expect) = expectation(&incoming) else {
        // Notifications and responses only: nothing to answer. An answer to a request that
        // another instance sent (it serves the call that asked) is passed on to it.
        if !inner.sessions.pass_on_answer(&session, &incoming, body).await {
            session.core.receive(incoming, None).await;
        }
        return StatusCode::ACCEPTED.into_response();
    };
    let (tx, rx) = mpsc::channel(64);
    let work = match incoming {
        Decoded::Single(Received::Request(req)) if req.method.known() != Some(Method::Initialize) => {
            reply::Inline::new(session.core.request(req, tx))
        }
        other => {
            session.core.receive(other, Some(tx)).await;
            reply::Inline::idle()
        }
    };
    let mut extra = Vec::new();
    if created {
        if let Ok(v) = HeaderValue::from_str(&session.id) {
            extra.push((headers::names::SESSION_ID.clone(), v));
        }
    }
    // In the legacy era a disconnect is not a cancellation: the request runs on, its events kept.
    let response = respond_resumable(inner, session.clone(), work, rx, expect, accepts_sse(headers_in), extra).await;
    // What the request changed of the session (`initialize`, its log level, a subscription) is
    // kept for the other instances before the client hears the answer.
    if let Err(e) = inner.sessions.persist(&session).await {
        if created {
            inner.sessions.remove(&session.id);
        }
        return store_unavailable(&e);
    }
    response
}

pub(crate) fn sse_headers(r: &mut Response) {
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    h.insert("x-accel-buffering", HeaderValue::from_static("no"));
}

/// Ends a session when dropped (the HTTP+SSE stream is the session).
struct EndSession(Option<(Arc<Sessions>, String)>);

impl Drop for EndSession {
    fn drop(&mut self) {
        if let Some((sessions, id)) = self.0.take() {
            sessions.remove(&id);
        }
    }
}

/// How a reader of a stream log starts and what it holds on to.
struct Reader {
    session: Arc<Session>,
    stream: u64,
    log: Arc<StreamLog>,
    /// The last event delivered.
    cursor: u64,
    /// Sent before anything else (a priming or `endpoint` event).
    prelude: Option<String>,
    /// The reader lets go when the producer asks (SSE polling), if the client resumes.
    may_close: bool,
    close_seen: u64,
    keep_alive: Duration,
    /// The server's shutdown: the stream then ends with a `retry` hint.
    shutdown: CancellationToken,
    /// The reconnection delay the hint names, in milliseconds.
    retry_ms: u64,
    /// The hint was sent: the stream ends.
    ended: bool,
    store: Arc<dyn EventStore>,
    _slot: Option<StreamSlot>,
    _end: EndSession,
}

impl Reader {
    async fn next_chunk(&mut self) -> Option<String> {
        if self.ended {
            return None;
        }
        if let Some(p) = self.prelude.take() {
            return Some(p);
        }
        loop {
            let notified = self.log.changed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let events = match self.store.replay(&self.session.id, self.stream, self.cursor) {
                Ok(events) => events,
                Err(Evicted) => {
                    // What the client missed is gone: its request is answered with an error
                    // rather than left waiting.
                    self.ended = true;
                    return self.log.request.as_ref().map(evicted_answer);
                }
            };
            if let Some((last, _)) = events.last() {
                self.cursor = *last;
                if self.stream == 0 {
                    self.session.delivered.fetch_max(self.cursor, Ordering::Relaxed);
                }
                let id_of = |seq: u64| format!("{}-{seq}", self.stream);
                return Some(
                    events.iter().map(|(seq, f)| sse::event(Some(&id_of(*seq)), Some("message"), f)).collect(),
                );
            }
            if self.log.is_done() {
                return None;
            }
            if self.may_close && self.log.close_requests() > self.close_seen {
                // The server asked the client to come back later (SEP-1699): let go.
                return None;
            }
            // The server goes away: a stream that would never end by itself (the standalone
            // one) ends, and its client comes back (elsewhere) and resumes. A request's stream
            // goes on: its call has the shutdown's grace to finish where it runs, and a client
            // that cannot resume loses nothing.
            let endless = self.stream == 0;
            if endless && self.shutdown.is_cancelled() {
                self.ended = true;
                return Some(sse::retry(self.retry_ms));
            }
            let shutdown = async {
                match endless {
                    true => self.shutdown.cancelled().await,
                    false => std::future::pending().await,
                }
            };
            tokio::select! {
                _ = &mut notified => {}
                _ = tokio::time::sleep(self.keep_alive) => return Some(sse::KEEP_ALIVE.to_owned()),
                _ = self.session.closed.cancelled() => return None,
                _ = shutdown => {}
            }
        }
    }
}

/// The SSE event answering `request` when its stream was let go before the client read it
/// (kept here or in the shared store).
pub(crate) fn evicted_answer(request: &RequestId) -> String {
    let error = ErrorObject::internal(
        "the server let this request's stream go before it was read (its event budget is full); send the request again",
    );
    sse::event(None, Some("message"), &jsonrpc::encode_error(Some(request), &error))
}

/// The answer to a resumption of a stream let go whose request is not known (a batch's, or
/// forgotten long ago).
pub(crate) fn gone_response() -> Response {
    plain(StatusCode::GONE, "that stream is no longer kept: it cannot be resumed")
}

/// The answer to a resumption of a stream that was let go: the error answer of its request.
pub(crate) fn evicted_response(request: &RequestId) -> Response {
    let mut response = Response::new(Body::from(evicted_answer(request)));
    sse_headers(&mut response);
    response
}

/// An SSE response reading `reader`'s stream.
fn stream_response(reader: Reader, headers: &[(HeaderName, HeaderValue)]) -> Response {
    let body = stream::unfold(reader, |mut r| async move {
        r.next_chunk().await.map(|chunk| (Ok::<_, std::convert::Infallible>(chunk), r))
    });
    let mut response = Response::new(Body::from_stream(body));
    sse_headers(&mut response);
    for (k, v) in headers {
        response.headers_mut().insert(k.clone(), v.clone());
    }
    response
}

fn reader(inner: &Inner, session: Arc<Session>, stream: u64, log: Arc<StreamLog>, cursor: u64) -> Reader {
    let polls = session.polls();
    let prelude = polls.then(|| sse::priming(&format!("{stream}-{cursor}"), inner.config.sse_retry.as_millis() as u64));
    Reader {
        close_seen: log.close_requests(),
        session,
        stream,
        log,
        cursor,
        prelude,
        may_close: polls,
        keep_alive: inner.config.keep_alive,
        shutdown: inner.shutdown.clone(),
        retry_ms: inner.config.sse_retry.as_millis() as u64,
        ended: false,
        store: inner.sessions.store.clone(),
        _slot: None,
        _end: EndSession(None),
    }
}

/// Answers a request of a legacy session: JSON if the answer comes first, else a resumable
/// SSE stream fed by a task that keeps every event, whether or not a client is reading.
async fn respond_resumable(
    inner: &Arc<Inner>,
    session: Arc<Session>,
    mut work: reply::Inline,
    mut rx: mpsc::Receiver<Outbound>,
    expect: Expect,
    sse_ok: bool,
    headers: Vec<(HeaderName, HeaderValue)>,
) -> Response {
    // A hint to close the stream (SEP-1699) means an SSE stream at once, if the client resumes.
    let resumable = sse_ok && session.polls();
    let mut close_hint = false;
    let deadline = tokio::time::Instant::now() + inner.config.request_timeout;
    let first = loop {
        match tokio::time::timeout_at(deadline, work.recv(&mut rx)).await {
            Ok(Some(Outbound::CloseStream)) => {
                if resumable {
                    close_hint = true;
                    break None;
                }
            }
            Ok(Some(Outbound::Frame(f))) => break Some(f),
            Ok(None) => return reply::json_response(StatusCode::ACCEPTED, String::new(), &headers),
            Err(_) => {
                // Too slow to start answering: cancel it in the session, and say so.
                work.detach();
                if let Expect::Response(id) = &expect {
                    session.core.cancel(id);
                }
                return reply::timeout_response(&expect, &headers);
            }
        }
    };
    // The frame moves into the response: most answers are one JSON body, copied nowhere.
    let first = match first {
        Some(frame) if reply::is_final(&frame, &expect) => {
            return reply::json_response(StatusCode::OK, frame.text, &headers);
        }
        Some(mut frame) if !sse_ok => {
            // Without SSE, related messages cannot be delivered: answer with the response alone.
            while !reply::is_final(&frame, &expect) {
                match work.recv(&mut rx).await {
                    Some(Outbound::Frame(f)) => frame = f,
                    Some(Outbound::CloseStream) => {}
                    None => return reply::json_response(StatusCode::INTERNAL_SERVER_ERROR, String::new(), &headers),
                }
            }
            return reply::json_response(StatusCode::OK, frame.text, &headers);
        }
        other => other,
    };
    work.detach();
    let store = inner.sessions.store.clone();
    let request = match &expect {
        Expect::Response(id) => Some(id.clone()),
        Expect::Batch => None,
    };
    let forget = |old| store.forget_stream(&session.id, old);
    // A session several instances serve: the stream is kept in the shared store as well,
    // under a number no other instance will pick, and begun there before the client hears of it.
    let shared = inner.deployment.as_ref().filter(|_| session.shared).map(|d| {
        let info =
            StreamInfo { request: request.clone(), instance: d.instance.id().to_owned(), done: false, evicted: false };
        (d.events.clone(), info)
    });
    let (stream, log) = match &shared {
        // Never 0 (the standalone stream), and within what a JavaScript number holds exactly.
        Some(_) => session.streams.open_as(rand::random::<u64>() % (1 << 53) + 1, request, forget),
        None => session.streams.open(request, forget),
    };
    let shared = match shared {
        Some((events, info)) => match events.open(&session.id, stream, &info, inner.sessions.idle_timeout).await {
            Ok(()) => Some(events),
            Err(e) => {
                // Resumable here only.
                tracing::warn!(error = %e, "a stream could not be kept in the shared store");
                None
            }
        },
        None => None,
    };
    let (budget, ttl) = (inner.config.event_budget, inner.sessions.idle_timeout);
    let r = reader(inner, session.clone(), stream, log.clone(), 0);
    if close_hint {
        log.request_close();
    }
    let session_id = session.id.clone();
    tokio::spawn(async move {
        let mut next = first;
        loop {
            let frame = match next.take() {
                Some(f) => f,
                None => match rx.recv().await {
                    Some(Outbound::Frame(f)) => f,
                    Some(Outbound::CloseStream) => {
                        log.request_close();
                        continue;
                    }
                    None => break,
                },
            };
            let seq = log.next_seq();
            // Kept in the shared store before it is sent, so that it is never sent and lost.
            if let Some(events) = &shared {
                if let Err(e) = events.append(&session_id, stream, Some(seq), &frame.text, &budget, ttl).await {
                    tracing::warn!(error = %e, "an event could not be kept in the shared store");
                }
            }
            store.append(&session_id, stream, seq, &frame.text);
            log.changed.notify_waiters();
            if reply::is_final(&frame, &expect) {
                break;
            }
        }
        if let Some(events) = &shared {
            if let Err(e) = events.finish(&session_id, stream).await {
                tracing::warn!(error = %e, "the end of a stream could not be kept in the shared store");
            }
        }
        store.finish_stream(&session_id, stream);
        log.finish();
    });
    stream_response(r, &headers)
}

/// The GET stream of a Streamable HTTP session: its standalone stream, or, with
/// `Last-Event-ID`, the rest of the stream that id names.
pub(crate) async fn get_stream(inner: &Arc<Inner>, headers_in: &HeaderMap, caller: &Caller) -> Response {
    let id = match headers::value(headers_in, &headers::names::SESSION_ID) {
        Ok(Some(id)) => id,
        _ => return plain(StatusCode::BAD_REQUEST, "missing Mcp-Session-Id"),
    };
    let session = match inner.sessions.find(id, caller).await {
        Ok(Found::Session(s)) if auth::may_use(&s, caller) => s,
        Ok(Found::Full) => return sessions_full(None),
        Ok(_) => return plain(StatusCode::NOT_FOUND, "unknown or ended session"),
        Err(e) => return store_unavailable(&e),
    };
    let last_event = headers_in.get("last-event-id").and_then(|v| v.to_str().ok());
    if let Some(last) = last_event {
        let Some((stream, seq)) = parse_event_id(last) else {
            return plain(StatusCode::BAD_REQUEST, "malformed Last-Event-ID");
        };
        if stream != 0 {
            return match session.streams.lookup(stream) {
                StreamLookup::Kept(log) => stream_response(reader(inner, session, stream, log, seq), &[]),
                StreamLookup::Forgotten(Some(request)) => evicted_response(&request),
                // Not 404: with a session id, that would tell the client its session ended.
                StreamLookup::Forgotten(None) | StreamLookup::Gone => gone_response(),
                // Another instance's, perhaps: the shared store knows.
                StreamLookup::Never if session.shared && inner.deployment.is_some() => {
                    resume::elsewhere(inner, session, stream, seq).await
                }
                StreamLookup::Never => plain(StatusCode::BAD_REQUEST, "Last-Event-ID names no stream of this session"),
            };
        }
    }
    let resumed_at = last_event.and_then(parse_event_id).map(|(_, seq)| seq);
    let Some(slot) = session.claim_stream() else {
        return plain(StatusCode::CONFLICT, "this session already has a GET stream open");
    };
    if let (true, Some(deployment)) = (session.shared, &inner.deployment) {
        // Kept in the shared store: every instance adds to it, and it resumes anywhere.
        return resume::standalone(inner, deployment, session, slot, resumed_at).await;
    }
    if let Some(seq) = resumed_at {
        session.delivered.fetch_max(seq, Ordering::Relaxed);
    }
    let log = session.streams.standalone();
    let cursor = session.delivered.load(Ordering::Relaxed);
    let mut r = reader(inner, session, 0, log, cursor);
    r._slot = Some(slot);
    stream_response(r, &[])
}

/// `GET /sse`: opens an HTTP+SSE session; the first event names where to POST.
pub(crate) async fn open(State(inner): State<Arc<Inner>>, Admitted(caller): Admitted) -> Response {
    let Ok(session) = inner.sessions.create(false) else {
        return sessions_full(None);
    };
    auth::may_use(&session, &caller);
    // Any instance of a deployment takes its messages, and passes them on here.
    if let Err(e) = inner.sessions.place_sse(&session, caller.as_ref().map(|c| c.key())).await {
        tracing::warn!(session = %session.id, error = %e, "an HTTP+SSE session's place could not be kept: its messages must come here");
    }
    let Some(slot) = session.claim_stream() else {
        return plain(StatusCode::INTERNAL_SERVER_ERROR, "new session already streaming");
    };
    let endpoint = format!("{}?sessionId={}", inner.config.message_endpoint, session.id);
    let log = session.streams.standalone();
    let mut r = reader(&inner, session.clone(), 0, log, 0);
    r.prelude = Some(sse::event(None, Some("endpoint"), &endpoint));
    r.may_close = false;
    r._slot = Some(slot);
    // The stream is the session: when the client goes away, the session ends.
    r._end = EndSession(Some((inner.sessions.clone(), session.id.clone())));
    stream_response(r, &[])
}

/// `POST /message?sessionId=..`: a message for an HTTP+SSE session; answers go on its stream.
// The guard and the session are judged before the body is read: a refused request costs no
// body.
pub(crate) async fn post(
    State(inner): State<Arc<Inner>>,
    Admitted(caller): Admitted,
    query: SessionQueryExtract,
    request: Request,
) -> Response {
    let Some(id) = query.session_id.as_deref() else {
        return plain(StatusCode::BAD_REQUEST, "missing sessionId");
    };
    let session = match inner.sessions.find(id, &caller).await {
        Ok(Found::Session(s)) if auth::may_use(&s, &caller) => Some(s),
        Ok(Found::Full) => return sessions_full(None),
        // Its stream may be open on another instance of the deployment, which takes it.
        Ok(Found::Unknown) => match inner.sessions.placed_elsewhere(id, &caller).await {
            Ok(true) => None,
            Ok(false) => return plain(StatusCode::NOT_FOUND, "unknown or ended session"),
            Err(e) => return store_unavailable(&e),
        },
        Ok(_) => return plain(StatusCode::NOT_FOUND, "unknown or ended session"),
        Err(e) => return store_unavailable(&e),
    };
    let body = match Bytes::from_request(request, &()).await {
        Ok(body) => body,
        Err(rejection) => return rejection.into_response(),
    };
    let Ok(text) = std::str::from_utf8(&body) else {
        return plain(StatusCode::BAD_REQUEST, "body is not UTF-8");
    };
    match session {
        // Answered where the session's answers go: its SSE stream.
        Some(session) => inner.sessions.take_sse_message(&session, text).await,
        None => {
            if let Err(e) = inner.sessions.pass_on_sse(id, text).await {
                return store_unavailable(&e);
            }
        }
    }
    StatusCode::ACCEPTED.into_response()
}
