//! Turning the frames a request produces into an HTTP response: plain JSON when the answer
//! comes first, an SSE stream when related messages (progress, logs, requests to the
//! client) come before it.

use std::time::Duration;

use axum::body::Body;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::Response;
use futures::{stream, FutureExt};
use mcpwire_protocol::error;
use mcpwire_protocol::frame::{Frame, FrameKind, Outbound};
use mcpwire_protocol::RequestId;
use tokio::sync::mpsc;
use tokio_util::sync::{CancellationToken, DropGuard};

use crate::sse;

/// When a stream of frames is complete.
#[derive(Debug, Clone)]
pub(crate) enum Expect {
    /// The response to this request id.
    Response(RequestId),
    /// A JSON array: the answers to a batch.
    Batch,
}

/// Whether `frame` completes a stream that expects `expect`: the answer to its request, the
/// answers to its batch, or an error about a message that could not be read at all.
pub(crate) fn is_final(frame: &Frame, expect: &Expect) -> bool {
    match (&frame.kind, expect) {
        (FrameKind::Response { id: None, .. }, _) | (FrameKind::Batch, Expect::Batch) => true,
        (FrameKind::Response { id: Some(answered), .. }, Expect::Response(id)) => answered == id,
        _ => false,
    }
}

/// The HTTP status of a 2026-07-28 error response.
pub(crate) fn modern_status(code: i64) -> StatusCode {
    match code {
        error::METHOD_NOT_FOUND => StatusCode::NOT_FOUND,
        error::PARSE_ERROR
        | error::INVALID_REQUEST
        | error::INVALID_PARAMS
        | error::HEADER_MISMATCH
        | error::MISSING_REQUIRED_CLIENT_CAPABILITY
        | error::UNSUPPORTED_PROTOCOL_VERSION => StatusCode::BAD_REQUEST,
        _ => StatusCode::OK,
    }
}

/// How a request's frames become a response.
pub(crate) struct Plan {
    pub(crate) expect: Expect,
    /// The client accepts `text/event-stream`.
    pub(crate) sse: bool,
    /// 2026-07-28: error responses get their HTTP status.
    pub(crate) modern: bool,
    /// Cancelled if the client goes away before the answer (2026-07-28: closing is cancelling).
    pub(crate) cancel_on_close: Option<CancellationToken>,
    /// Comment lines on a quiet SSE stream.
    pub(crate) keep_alive: Duration,
    /// How long the first message (the answer, or a related message that starts an SSE
    /// stream) may take before the request is answered 504 (and cancelled).
    pub(crate) first_frame_timeout: Duration,
    /// Extra headers (a session id).
    pub(crate) headers: Vec<(header::HeaderName, HeaderValue)>,
    /// A stream that would not end by itself (a listen stream) ends when this is cancelled
    /// (the server shuts down), with a hint to come back in so many milliseconds.
    pub(crate) ends_at_shutdown: Option<(CancellationToken, u64)>,
}

/// Where a request's frames are read from: a tokio channel (most requests, answered at
/// once), or a [`mcpwire_server::stream_channel`] (a listen stream, which lasts: it keeps
/// no buffer while no frame waits).
pub(crate) enum Incoming {
    Channel(mpsc::Receiver<Outbound>),
    Stream(mcpwire_server::StreamReceiver),
}

/// Something frames are read from.
pub(crate) trait Source {
    /// The next frame; `None` once nothing can send any more.
    fn next_frame(&mut self) -> impl std::future::Future<Output = Option<Outbound>> + Send;
}

impl Source for mpsc::Receiver<Outbound> {
    fn next_frame(&mut self) -> impl std::future::Future<Output = Option<Outbound>> + Send {
        self.recv()
    }
}

impl Source for Incoming {
    async fn next_frame(&mut self) -> Option<Outbound> {
        match self {
            Self::Channel(rx) => rx.recv().await,
            Self::Stream(rx) => rx.recv().await,
        }
    }
}

/// The work of answering a request, run in the HTTP request's own task until its first
/// frame: most answers come at once, and then nothing is handed to another task (a
/// spawn and a wake-up saved per call). Work still unfinished then (a streamed answer, a
/// timeout, the client gone) goes on as a task of its own.
pub(crate) struct Inline {
    work: Option<futures::future::BoxFuture<'static, ()>>,
}

impl Inline {
    pub(crate) fn new(work: impl std::future::Future<Output = ()> + Send + 'static) -> Self {
        Self { work: Some(Box::pin(work)) }
    }

    /// No work: the frames come from elsewhere.
    pub(crate) fn idle() -> Self {
        Self { work: None }
    }

    /// The next frame on `rx`, running the work meanwhile.
    pub(crate) async fn recv(&mut self, rx: &mut impl Source) -> Option<Outbound> {
        let Some(work) = self.work.as_mut() else { return rx.next_frame().await };
        tokio::select! {
            biased;
            _ = work.as_mut() => {
                self.work = None;
                rx.next_frame().await
            }
            frame = rx.next_frame() => frame,
        }
    }

    /// Lets unfinished work go on by itself.
    pub(crate) fn detach(&mut self) {
        if let Some(mut work) = self.work.take() {
            if work.as_mut().now_or_never().is_none() {
                tokio::spawn(work);
            }
        }
    }
}

impl Drop for Inline {
    fn drop(&mut self) {
        self.detach();
    }
}

/// Defuses the guard that cancels the request if the client goes away: the request is
/// answered, or nothing is left that could answer it.
fn disarm(guard: Option<DropGuard>) {
    if let Some(g) = guard {
        g.disarm();
    }
}

pub(crate) fn json_response(
    status: StatusCode,
    body: String,
    headers: &[(header::HeaderName, HeaderValue)],
) -> Response {
    let mut r = Response::new(Body::from(body));
    *r.status_mut() = status;
    r.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    for (k, v) in headers {
        r.headers_mut().insert(k.clone(), v.clone());
    }
    r
}

fn sse_response(body: Body, headers: &[(header::HeaderName, HeaderValue)]) -> Response {
    let mut r = Response::new(body);
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    h.insert("x-accel-buffering", HeaderValue::from_static("no"));
    for (k, v) in headers {
        h.insert(k.clone(), v.clone());
    }
    r
}

/// The answer to a request that took too long to start answering.
pub(crate) fn timeout_response(expect: &Expect, headers: &[(header::HeaderName, HeaderValue)]) -> Response {
    let id = match expect {
        Expect::Response(id) => Some(id),
        Expect::Batch => None,
    };
    let error = mcpwire_protocol::ErrorObject::internal("the request timed out");
    json_response(StatusCode::GATEWAY_TIMEOUT, mcpwire_protocol::jsonrpc::encode_error(id, &error), headers)
}

/// What comes next on an SSE stream.
enum Next {
    Frame(Frame),
    /// The server hints that the stream may close (ignored: a stateless request cannot be
    /// resumed).
    CloseHint,
    /// Everything that could send is gone.
    Gone,
    /// Nothing for the keep-alive period.
    Quiet,
    /// The server shuts down (a stream that would not end by itself).
    Shutdown {
        retry_ms: u64,
    },
}

async fn next(rx: &mut Incoming, keep_alive: Duration, shutdown: Option<&(CancellationToken, u64)>) -> Next {
    let received = async {
        match tokio::time::timeout(keep_alive, rx.next_frame()).await {
            Ok(Some(Outbound::Frame(f))) => Next::Frame(f),
            Ok(Some(Outbound::CloseStream)) => Next::CloseHint,
            Ok(None) => Next::Gone,
            Err(_) => Next::Quiet,
        }
    };
    match shutdown {
        None => received.await,
        Some((token, retry_ms)) => tokio::select! {
            biased;
            next = received => next,
            _ = token.cancelled() => Next::Shutdown { retry_ms: *retry_ms },
        },
    }
}

/// Builds the response from the frames `work` sends on `rx`.
pub(crate) async fn respond(mut work: Inline, mut rx: Incoming, plan: Plan) -> Response {
    let guard = plan.cancel_on_close.clone().map(CancellationToken::drop_guard);
    let status_of = |frame: &Frame| match (plan.modern, frame.error_code()) {
        (true, Some(code)) => modern_status(code),
        _ => StatusCode::OK,
    };
    // A stateless request cannot be resumed: hints to close its stream are ignored.
    let deadline = tokio::time::Instant::now() + plan.first_frame_timeout;
    let first = loop {
        match tokio::time::timeout_at(deadline, work.recv(&mut rx)).await {
            Ok(Some(Outbound::CloseStream)) => continue,
            Ok(Some(Outbound::Frame(f))) => break f,
            Ok(None) => {
                disarm(guard);
                return json_response(StatusCode::ACCEPTED, String::new(), &plan.headers);
            }
            // The guard cancels the request as it drops.
            Err(_) => return timeout_response(&plan.expect, &plan.headers),
        }
    };
    if is_final(&first, &plan.expect) || !plan.sse {
        let mut frame = first;
        // Without SSE, related messages cannot be delivered: skip them, answer with the response.
        while !is_final(&frame, &plan.expect) {
            match work.recv(&mut rx).await {
                Some(Outbound::Frame(f)) => frame = f,
                Some(Outbound::CloseStream) => {}
                None => {
                    disarm(guard);
                    return json_response(StatusCode::INTERNAL_SERVER_ERROR, String::new(), &plan.headers);
                }
            }
        }
        disarm(guard);
        return json_response(status_of(&frame), frame.text, &plan.headers);
    }
    work.detach();
    let expect = plan.expect.clone();
    let keep_alive = plan.keep_alive;
    struct State {
        rx: Incoming,
        pending: Option<Frame>,
        done: bool,
        guard: Option<DropGuard>,
        expect: Expect,
        keep_alive: Duration,
        ends_at_shutdown: Option<(CancellationToken, u64)>,
    }
    let ends_at_shutdown = plan.ends_at_shutdown;
    let state = State { rx, pending: Some(first), done: false, guard, expect, keep_alive, ends_at_shutdown };
    let body = stream::unfold(state, |mut s| async move {
        if s.done {
            return None;
        }
        let frame = match s.pending.take() {
            Some(f) => f,
            None => match next(&mut s.rx, s.keep_alive, s.ends_at_shutdown.as_ref()).await {
                Next::Frame(f) => f,
                Next::CloseHint => return Some((Ok(String::new()), s)),
                Next::Gone => {
                    // Everything that could answer is gone: end the stream.
                    disarm(s.guard.take());
                    return None;
                }
                Next::Quiet => return Some((Ok::<_, std::convert::Infallible>(sse::KEEP_ALIVE.to_owned()), s)),
                Next::Shutdown { retry_ms } => {
                    // The request is cancelled as its guard drops; the client listens again,
                    // elsewhere if a load balancer sends it there.
                    s.done = true;
                    return Some((Ok(sse::retry(retry_ms)), s));
                }
            },
        };
        if is_final(&frame, &s.expect) {
            s.done = true;
            disarm(s.guard.take());
        }
        Some((Ok(sse::event(None, Some("message"), &frame.text)), s))
    });
    sse_response(Body::from_stream(body), &plan.headers)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn response(id: Option<RequestId>, error: Option<i64>) -> Frame {
        Frame::new(String::new(), FrameKind::Response { id, error })
    }

    #[test]
    fn a_stream_ends_with_its_answer_and_nothing_else() {
        let id = RequestId::Number(7);
        let expect = Expect::Response(id.clone());
        assert!(is_final(&response(Some(id.clone()), None), &expect));
        assert!(is_final(&response(Some(id), Some(-32602)), &expect));
        assert!(!is_final(&response(Some(RequestId::Number(70)), None), &expect));
        let note =
            Frame::new(String::new(), FrameKind::Notification { method: mcpwire_protocol::Method::Progress.into() });
        assert!(!is_final(&note, &expect));
        let ask = Frame::new(
            String::new(),
            FrameKind::Request { id: RequestId::Number(7), method: mcpwire_protocol::Method::Elicit.into() },
        );
        assert!(!is_final(&ask, &expect), "a request of the server's with the same id is no answer");
        // A batch ends with its answers, or with the error that refuses it whole.
        assert!(is_final(&Frame::new(String::new(), FrameKind::Batch), &Expect::Batch));
        assert!(is_final(&response(None, Some(-32600)), &Expect::Batch));
        assert!(!is_final(&note, &Expect::Batch));
    }
}
