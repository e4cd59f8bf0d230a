//! Turning the frames a request produces into an HTTP response: plain JSON when the answer
//! comes first, an SSE stream when related messages (progress, logs, requests to the
//! client) come before it.

use std::time::Duration;

use axum::body::Body;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::Response;
use futures::{stream, FutureExt};
use mcp_protocol::error;
use mcp_protocol::RequestId;
use serde::Deserialize;
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::sse;

/// When a stream of frames is complete.
#[derive(Debug, Clone)]
pub(crate) enum Expect {
    /// The response to this request id.
    Response(RequestId),
    /// A JSON array: the answers to a batch.
    Batch,
}

#[derive(Deserialize)]
struct Peek {
    #[serde(default)]
    id: Option<Value>,
    #[serde(default)]
    method: Option<serde::de::IgnoredAny>,
    #[serde(default)]
    error: Option<PeekError>,
}

#[derive(Deserialize)]
struct PeekError {
    code: i64,
}

/// What a frame is, as far as the response is concerned.
struct Kind {
    is_final: bool,
    error_code: Option<i64>,
}

/// Recognizes a success response to `id` as our encoder writes it
/// (`{"jsonrpc":"2.0","id":<id>,"result":…`) without parsing the frame; `None` when the frame
/// is anything else (then it is parsed).
fn fast_success(frame: &str, id: &RequestId) -> Option<bool> {
    let rest = frame.strip_prefix(r#"{"jsonrpc":"2.0","id":"#)?;
    let rest = match id {
        RequestId::Number(n) => {
            let digits = rest.find(|c: char| !(c.is_ascii_digit() || c == '-'))?;
            (rest[..digits].parse::<i64>().ok()? == *n).then_some(&rest[digits..])?
        }
        RequestId::String(s) if !s.contains(['"', '\\']) && !s.chars().any(char::is_control) => {
            let quoted = rest.strip_prefix('"')?.strip_prefix(s.as_str())?;
            quoted.strip_prefix('"')?
        }
        RequestId::String(_) => return None,
    };
    rest.starts_with(r#","result":"#).then_some(true)
}

fn classify(frame: &str, expect: &Expect) -> Kind {
    if frame.starts_with('[') {
        return Kind { is_final: matches!(expect, Expect::Batch), error_code: None };
    }
    if let Expect::Response(id) = expect {
        if fast_success(frame, id) == Some(true) {
            return Kind { is_final: true, error_code: None };
        }
    }
    match (serde_json::from_str::<Peek>(frame), expect) {
        (Ok(p), Expect::Response(id)) if p.method.is_none() => Kind {
            is_final: p.id.as_ref().and_then(RequestId::from_value).as_ref() == Some(id) || p.id.is_none(),
            error_code: p.error.map(|e| e.code),
        },
        _ => Kind { is_final: false, error_code: None },
    }
}

/// Whether `frame` completes a stream that expects `expect`.
pub(crate) fn is_final(frame: &str, expect: &Expect) -> bool {
    classify(frame, expect).is_final
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
    pub(crate) async fn recv(&mut self, rx: &mut mpsc::Receiver<String>) -> Option<String> {
        let Some(work) = self.work.as_mut() else { return rx.recv().await };
        tokio::select! {
            biased;
            _ = work.as_mut() => {
                self.work = None;
                rx.recv().await
            }
            frame = rx.recv() => frame,
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

/// Cancels a token when dropped, unless disarmed.
struct CancelGuard(Option<CancellationToken>);

impl Drop for CancelGuard {
    fn drop(&mut self) {
        if let Some(t) = self.0.take() {
            t.cancel();
        }
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
    let error = mcp_protocol::ErrorObject::internal("the request timed out");
    json_response(StatusCode::GATEWAY_TIMEOUT, mcp_protocol::jsonrpc::encode_error(id, &error), headers)
}

/// Builds the response from the frames `work` sends on `rx`.
pub(crate) async fn respond(mut work: Inline, mut rx: mpsc::Receiver<String>, plan: Plan) -> Response {
    let mut guard = CancelGuard(plan.cancel_on_close.clone());
    let status_of = |kind: &Kind| match (plan.modern, kind.error_code) {
        (true, Some(code)) => modern_status(code),
        _ => StatusCode::OK,
    };
    // A stateless request cannot be resumed: hints to close its stream are ignored.
    let deadline = tokio::time::Instant::now() + plan.first_frame_timeout;
    let first = loop {
        match tokio::time::timeout_at(deadline, work.recv(&mut rx)).await {
            Ok(Some(f)) if f == mcp_transport::CLOSE_STREAM_HINT => continue,
            Ok(Some(f)) => break f,
            Ok(None) => {
                guard.0 = None;
                return json_response(StatusCode::ACCEPTED, String::new(), &plan.headers);
            }
            // The guard cancels the request as it drops.
            Err(_) => return timeout_response(&plan.expect, &plan.headers),
        }
    };
    let kind = classify(&first, &plan.expect);
    if kind.is_final || !plan.sse {
        let mut frame = first;
        let mut kind = kind;
        // Without SSE, related messages cannot be delivered: skip them, answer with the response.
        while !kind.is_final {
            match work.recv(&mut rx).await {
                Some(f) => {
                    kind = classify(&f, &plan.expect);
                    frame = f;
                }
                None => {
                    guard.0 = None;
                    return json_response(StatusCode::INTERNAL_SERVER_ERROR, String::new(), &plan.headers);
                }
            }
        }
        guard.0 = None;
        return json_response(status_of(&kind), frame, &plan.headers);
    }
    work.detach();
    let expect = plan.expect.clone();
    let keep_alive = plan.keep_alive;
    struct State {
        rx: mpsc::Receiver<String>,
        pending: Option<String>,
        done: bool,
        guard: CancelGuard,
        expect: Expect,
        keep_alive: Duration,
    }
    let state = State { rx, pending: Some(first), done: false, guard, expect, keep_alive };
    let body = stream::unfold(state, |mut s| async move {
        if s.done {
            return None;
        }
        let frame = match s.pending.take() {
            Some(f) => f,
            None => match tokio::time::timeout(s.keep_alive, s.rx.recv()).await {
                Ok(Some(f)) => f,
                Ok(None) => {
                    // Everything that could answer is gone: end the stream.
                    s.guard.0.take();
                    return None;
                }
                Err(_) => return Some((Ok::<_, std::convert::Infallible>(sse::KEEP_ALIVE.to_owned()), s)),
            },
        };
        if frame == mcp_transport::CLOSE_STREAM_HINT {
            return Some((Ok(String::new()), s));
        }
        if classify(&frame, &s.expect).is_final {
            s.done = true;
            s.guard.0 = None;
        }
        Some((Ok(sse::event(None, Some("message"), &frame)), s))
    });
    sse_response(Body::from_stream(body), &plan.headers)
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_protocol::jsonrpc::{encode_notification, encode_request, encode_result};
    use serde_json::json;

    #[test]
    fn our_encoded_success_responses_are_recognized_without_parsing() {
        for id in [RequestId::Number(7), RequestId::Number(-3), RequestId::String("a-1".into())] {
            let frame = encode_result(&id, &json!({"content": []}));
            assert_eq!(fast_success(&frame, &id), Some(true), "{frame}");
            assert!(classify(&frame, &Expect::Response(id.clone())).is_final);
        }
        // Another id, a request or a notification from the server: never taken for the answer.
        let other = encode_result(&RequestId::Number(70), &json!({}));
        assert_eq!(fast_success(&other, &RequestId::Number(7)), None);
        assert!(!classify(&other, &Expect::Response(RequestId::Number(7))).is_final);
        let request = encode_request(&RequestId::Number(7), "sampling/createMessage", Some(&json!({})));
        assert_eq!(fast_success(&request, &RequestId::Number(7)), None);
        assert!(!classify(&request, &Expect::Response(RequestId::Number(7))).is_final);
        let note = encode_notification("notifications/progress", Some(&json!({})));
        assert!(!classify(&note, &Expect::Response(RequestId::Number(7))).is_final);
        // Ids the fast path does not read are parsed instead, with the same outcome.
        let odd = RequestId::String("q\"uote".into());
        let frame = encode_result(&odd, &json!({}));
        assert_eq!(fast_success(&frame, &odd), None);
        assert!(classify(&frame, &Expect::Response(odd)).is_final);
    }
}
