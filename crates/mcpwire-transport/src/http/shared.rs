//! What every part of an HTTP connection shares: the HTTP client, the URL, the session, the
//! requests in flight, and how a POST is made.

use std::borrow::Cow;
use std::collections::HashMap;
use std::time::Instant;

use bytes::Bytes;
use http::header::{HeaderMap, HeaderName, HeaderValue, ACCEPT, AUTHORIZATION, CONTENT_TYPE, WWW_AUTHENTICATE};
use http::Method as HttpMethod;
use mcpwire_protocol::error::chain;
use mcpwire_protocol::frame::{headers, Frame as OutFrame, FrameKind};
use mcpwire_protocol::method::{Method, MethodName};
use mcpwire_protocol::{ErrorObject, RequestId};
use parking_lot::Mutex;
use tokio::sync::mpsc;
use tokio::task::AbortHandle;
use tokio_util::sync::CancellationToken;

use super::client::{Body, HttpClient, Response, Target};
use super::options::{AuthChallenge, AuthRequest, HttpExchange, HttpOptions, MAX_AUTH_CHALLENGES, TRANSPORT_ERROR};
use crate::{Frame, Inbound};

/// What a connection knows of its session.
#[derive(Default)]
pub(super) struct State {
    /// The legacy session's id, from the answer to `initialize`.
    pub(super) session: Option<String>,
    /// The legacy revision spoken: the latest `MCP-Protocol-Version` a legacy frame carried.
    pub(super) version: Option<String>,
    /// Where to POST in HTTP+SSE mode.
    pub(super) post_url: Option<Target>,
    /// The `initialize` frame, to start a new session when the server forgets ours.
    pub(super) initialize: Option<OutFrame>,
    /// In-flight requests (2026-07-28: cancelling one closes its stream).
    pub(super) in_flight: HashMap<RequestId, AbortHandle>,
    pub(super) get_stream_open: bool,
}

pub(super) struct Shared {
    pub(super) http: HttpClient,
    pub(super) url: Target,
    pub(super) options: HttpOptions,
    pub(super) base_headers: HeaderMap,
    pub(super) state: Mutex<State>,
    pub(super) incoming: mpsc::Sender<Inbound>,
    pub(super) closed: CancellationToken,
}

/// The name of one of a frame's headers: the protocol's own (static, lower-case) taken as
/// they are, not parsed and copied for every request; any other parsed (`None`: not a valid
/// name). A `&Cow`, because whether the name is static is what is read here.
#[allow(clippy::ptr_arg)]
fn header_name(name: &Cow<'static, str>) -> Option<HeaderName> {
    match name {
        Cow::Borrowed(name) if is_lower_token(name) => Some(HeaderName::from_static(name)),
        _ => HeaderName::from_bytes(name.as_bytes()).ok(),
    }
}

/// Puts a header into `h`; one with an invalid name or value is left out.
fn put_header(h: &mut HeaderMap, name: Option<HeaderName>, value: &str) {
    if let (Some(name), Ok(value)) = (name, HeaderValue::from_str(value)) {
        h.insert(name, value);
    }
}

/// Whether `name` can be a [`HeaderName`] as it is (`HeaderName::from_static` panics on
/// anything else).
fn is_lower_token(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

/// Whether a frame is a 2026-07-28 one (it names its method in a header).
pub(super) fn is_modern(frame: &OutFrame) -> bool {
    frame.header(headers::METHOD).is_some()
}

/// An outgoing frame, and what the transport reads off its kind.
pub(super) struct Outgoing {
    pub(super) frame: OutFrame,
    /// The request's id, when the frame is a request.
    pub(super) id: Option<RequestId>,
    pub(super) method: Option<MethodName>,
    pub(super) modern: bool,
}

impl Outgoing {
    pub(super) fn of(frame: OutFrame) -> Self {
        let (id, method) = match &frame.kind {
            FrameKind::Request { id, method } => (Some(id.clone()), Some(method.clone())),
            FrameKind::Notification { method } => (None, Some(method.clone())),
            FrameKind::Cancel { .. } => (None, Some(Method::Cancelled.into())),
            FrameKind::Response { .. } | FrameKind::Batch => (None, None),
        };
        let modern = is_modern(&frame);
        Self { frame, id, method, modern }
    }

    /// Whether this is a request of the method `m`.
    pub(super) fn is(&self, m: Method) -> bool {
        self.method.as_ref().and_then(MethodName::known) == Some(m)
    }
}

impl Shared {
    pub(super) fn state(&self) -> parking_lot::MutexGuard<'_, State> {
        self.state.lock()
    }

    /// The next chunk of an event stream's body: `None` once it ends, fails, or the
    /// connection closes.
    pub(super) async fn next_chunk(&self, body: &mut Body) -> Option<Bytes> {
        tokio::select! {
            chunk = body.chunk() => chunk?.ok(),
            _ = self.closed.cancelled() => None,
        }
    }

    pub(super) async fn deliver(&self, frame: String) {
        let _ = self.incoming.send(Ok(Frame::new(frame))).await;
    }

    /// Answers a request with an error, so the caller does not wait for a reply that cannot come.
    pub(super) async fn fail(&self, id: Option<&RequestId>, message: String) {
        if let Some(id) = id {
            let error = ErrorObject::new(TRANSPORT_ERROR, message).with_data(serde_json::json!({"transport": "http"}));
            let frame = mcpwire_protocol::jsonrpc::encode_error(Some(id), &error);
            self.deliver(frame).await;
        } else {
            tracing::warn!("{message}");
        }
    }

    /// Puts the provider's headers (if any) into `h`; returns the `Authorization` put.
    pub(super) async fn authorize(&self, h: &mut HeaderMap, method: &HttpMethod, target: &Target) -> Option<String> {
        let provider = self.options.auth.as_ref()?;
        for (name, value) in provider.headers(AuthRequest { method: method.as_str(), url: target.url.as_str() }).await {
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
    pub(super) async fn post_authorized(
        &self,
        url: &Target,
        mut h: HeaderMap,
        body: String,
    ) -> Result<Response, String> {
        let body = Bytes::from(body);
        let mut attempt = 0;
        loop {
            // Kept for a retry only when there is a provider to ask for one.
            let mut headers = if self.options.auth.is_some() { h.clone() } else { std::mem::take(&mut h) };
            let authorization = self.authorize(&mut headers, &HttpMethod::POST, url).await;
            let observed = self.options.observer.as_ref().map(|_| (headers.clone(), Instant::now()));
            let sent = self.http.send(HttpMethod::POST, url, headers, body.clone()).await;
            if let (Some(observer), Some((headers, started))) = (&self.options.observer, observed) {
                let pairs = |h: &HeaderMap| {
                    h.iter()
                        .map(|(n, v)| (n.as_str().to_owned(), String::from_utf8_lossy(v.as_bytes()).into_owned()))
                        .collect()
                };
                observer(&HttpExchange {
                    method: HttpMethod::POST.to_string(),
                    url: url.to_string(),
                    request_headers: pairs(&headers),
                    body: String::from_utf8_lossy(&body).into_owned(),
                    status: sent.as_ref().ok().map(|r| r.status().as_u16()),
                    response_headers: sent.as_ref().map(|r| pairs(r.headers())).unwrap_or_default(),
                    error: sent.as_ref().err().map(|e| chain(&**e)),
                    elapsed: started.elapsed(),
                });
            }
            let response = sent.map_err(|e| format!("HTTP request to {url} failed: {}", chain(&*e)))?;
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

    /// The headers of a POST carrying `frame`: the connection's, the frame's own (its
    /// revision and, for a 2026-07-28 request, its method, name and declared parameters), and
    /// in a legacy session the session id and the revision spoken.
    pub(super) fn header_map(&self, frame: &OutFrame) -> HeaderMap {
        let mut h = self.base_headers.clone();
        h.insert(ACCEPT, HeaderValue::from_static("application/json, text/event-stream"));
        h.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        for (name, value) in &frame.headers {
            put_header(&mut h, header_name(name), value);
        }
        if !is_modern(frame) {
            let st = self.state();
            if let Some(s) = &st.session {
                put_header(&mut h, Some(HeaderName::from_static(headers::SESSION_ID)), s);
            }
            if frame.header(headers::PROTOCOL_VERSION).is_none() {
                if let Some(v) = &st.version {
                    put_header(&mut h, Some(HeaderName::from_static(headers::PROTOCOL_VERSION)), v);
                }
            }
        }
        h
    }
}
