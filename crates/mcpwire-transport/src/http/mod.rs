//! MCP over HTTP, client side, as a [`Connection`]: every transport and era of HTTP behind
//! the same channels the runtimes use for stdio.
//!
//! - **2026-07-28**: each request is a stateless POST with the headers its frame carries
//!   (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`, the `Mcp-Param-*` its tool
//!   declares); cancelling a request closes its response stream.
//! - **Legacy Streamable HTTP** (2025-03-26 .. 2025-11-25): the session id from
//!   `initialize` is echoed with the revision the frames name, the standalone GET stream is
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
//! the request is sent again when it says so (the OAuth client of `mcpwire-auth` is one).
//!
//! Redirects are followed as browsers and reqwest follow them (a 307 or 308 keeps the POST
//! and its body; the `Authorization` header is not shown to another host; at most ten), and
//! the proxy variables (`HTTP_PROXY`, `HTTPS_PROXY`, `ALL_PROXY`, `NO_PROXY`) are honoured.

//! The transport reads no outgoing frame: what each is (a request and its id, `initialize`,
//! a cancellation, its headers) comes with it ([`crate::Outbound`]).

mod client;
mod legacy_sse;
mod options;
mod shared;
pub mod sse;
mod streams;

use std::sync::Arc;
use std::time::Duration;

use http::header::{HeaderMap, HeaderName, HeaderValue, CONTENT_TYPE};
use http::{Method as HttpMethod, StatusCode};
use mcpwire_protocol::frame::headers as names;
use mcpwire_protocol::{Method, RequestId};
use serde::de::IgnoredAny;
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::{Connection, FrameKind, Outbound, CHANNEL_CAPACITY};
use client::{HttpClient, Target};
use shared::{Outgoing, Shared};

pub use mcpwire_protocol::frame::headers::encode_value;
pub use mcpwire_protocol::headers::{argument_value, tool_param_headers};
pub use options::{
    AuthChallenge, AuthFailure, AuthProvider, AuthRequest, HttpError, HttpExchange, HttpMode, HttpObserver,
    HttpOptions, MAX_AUTH_CHALLENGES, TRANSPORT_ERROR,
};

/// Connects to an MCP server at `url`. Nothing is sent until the first frame.
pub fn connect(url: &str, options: HttpOptions) -> Result<Connection, HttpError> {
    let parsed =
        reqwest::Url::parse(url).map_err(|e| HttpError::Url { url: url.to_owned(), source: Some(Box::new(e)) })?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(HttpError::Url { url: url.to_owned(), source: None });
    }
    let target = Target::new(parsed).map_err(|e| HttpError::Url { url: url.to_owned(), source: Some(Box::new(e)) })?;
    let invalid_header = |name: &str, source: Box<dyn std::error::Error + Send + Sync>| HttpError::Header {
        name: name.to_owned(),
        source,
    };
    let mut base_headers = HeaderMap::new();
    for (name, value) in &options.headers {
        let n = HeaderName::from_bytes(name.trim().as_bytes()).map_err(|e| invalid_header(name, e.into()))?;
        let v = HeaderValue::from_str(value.trim()).map_err(|e| invalid_header(name, e.into()))?;
        base_headers.insert(n, v);
    }
    if let Some(token) = &options.bearer {
        let v =
            HeaderValue::from_str(&format!("Bearer {token}")).map_err(|e| invalid_header("Authorization", e.into()))?;
        base_headers.insert(http::header::AUTHORIZATION, v);
    }
    let http = HttpClient::new(&options)?;
    let (in_tx, in_rx) = mpsc::channel(CHANNEL_CAPACITY);
    let (out_tx, out_rx) = mpsc::channel(CHANNEL_CAPACITY);
    let shared = Arc::new(Shared {
        http,
        url: target,
        options,
        base_headers,
        state: Default::default(),
        incoming: in_tx,
        closed: CancellationToken::new(),
    });
    let writer = tokio::spawn(drive(shared, out_rx));
    Ok(Connection { incoming: in_rx, outgoing: out_tx, writer: Some(writer), sends_headers: true })
}

async fn drive(shared: Arc<Shared>, mut outgoing: mpsc::Receiver<Outbound>) {
    if shared.options.mode == HttpMode::Sse {
        legacy_sse::open_sse_transport(&shared).await;
    }
    while let Some(out) = outgoing.recv().await {
        // A client's frames go to no request-scoped stream: a hint to close one means nothing.
        let Outbound::Frame(frame) = out else { continue };
        if let FrameKind::Cancel { id } = &frame.kind {
            let stateless = {
                let st = shared.state();
                st.session.is_none() && st.post_url.is_none()
            };
            if stateless {
                // Closing a stateless request's stream is how it is cancelled.
                if let Some(handle) = shared.state().in_flight.remove(id) {
                    handle.abort();
                }
                continue;
            }
        }
        let msg = Outgoing::of(frame);
        if !msg.modern {
            if let Some(version) = msg.frame.header(names::PROTOCOL_VERSION) {
                shared.state().version = Some(version.to_owned());
            }
        }
        if msg.is(Method::Initialize) {
            shared.state().initialize = Some(msg.frame.clone());
        }
        let Some(id) = msg.id.clone() else {
            // Notifications and responses go in order: `notifications/initialized` must reach
            // the server before the requests that follow it.
            send(&shared, msg, true).await;
            continue;
        };
        let task_shared = shared.clone();
        let task = tokio::spawn(async move { send(&task_shared, msg, true).await });
        shared.state().in_flight.insert(id, task.abort_handle());
    }
    shared.closed.cancel();
    let (session, post_url) = {
        let st = shared.state();
        (st.session.clone(), st.post_url.clone())
    };
    if let (Some(session), None) = (session, post_url) {
        let mut h = shared.base_headers.clone();
        if let Ok(v) = HeaderValue::from_str(&session) {
            h.insert(names::SESSION_ID, v);
        }
        shared.authorize(&mut h, &HttpMethod::DELETE, &shared.url).await;
        let _ = tokio::time::timeout(
            Duration::from_secs(2),
            shared.http.send(HttpMethod::DELETE, &shared.url, h, Default::default()),
        )
        .await;
    }
}

/// Sends one frame and delivers whatever answers it.
async fn send(shared: &Arc<Shared>, msg: Outgoing, may_retry: bool) {
    let post_url = shared.state().post_url.clone();
    if let Some(post_url) = post_url {
        // HTTP+SSE: answers come on the event stream.
        let h = shared.header_map(&msg.frame);
        match shared.post_authorized(&post_url, h, msg.frame.text.clone()).await {
            Ok(r) if r.status().is_success() => {}
            Ok(r) => shared.fail(msg.id.as_ref(), format!("HTTP {} from the message endpoint", r.status())).await,
            Err(e) => shared.fail(msg.id.as_ref(), e).await,
        }
        return;
    }
    let h = shared.header_map(&msg.frame);
    let response = match shared.post_authorized(&shared.url, h, msg.frame.text.clone()).await {
        Ok(r) => r,
        Err(e) => {
            shared.fail(msg.id.as_ref(), e).await;
            return;
        }
    };
    let status = response.status();
    let initialize = msg.is(Method::Initialize);
    if !msg.modern && initialize && matches!(status.as_u16(), 400 | 404 | 405) && shared.options.mode == HttpMode::Auto
    {
        // Not a Streamable HTTP endpoint: try it as an HTTP+SSE one.
        if legacy_sse::open_sse_transport(shared).await {
            Box::pin(send(shared, msg, false)).await;
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
    if !msg.modern && status == StatusCode::NOT_FOUND && shared.state().session.is_some() && !initialize && may_retry {
        // The server forgot the session: start a new one and send this again.
        if streams::reinitialize(shared).await {
            Box::pin(send(shared, msg, false)).await;
        } else {
            shared.fail(msg.id.as_ref(), "the session expired and a new one could not be started".into()).await;
        }
        return;
    }
    if initialize {
        if let Some(sid) = response.headers().get(names::SESSION_ID).and_then(|v| v.to_str().ok()) {
            shared.state().session = Some(sid.to_owned());
        }
    }
    if msg.is(Method::Initialized) && status.is_success() {
        // Opened before anything else is sent, so that the server sees it as the session's
        // standalone stream and not as a resumption of a request's stream.
        let opened = streams::start_get_stream(shared.clone());
        let _ = tokio::time::timeout(shared.options.connect_timeout, opened).await;
    }
    let is_sse = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| ct.starts_with("text/event-stream"));
    if is_sse {
        streams::read_sse(shared, response, &msg).await;
    } else {
        let body = response.into_body().text().await;
        if body.trim().is_empty() {
            if msg.id.is_some() {
                shared.fail(msg.id.as_ref(), format!("HTTP {status} with no answer")).await;
            }
        } else {
            match delivered(body, msg.id.as_ref()) {
                Ok(message) => shared.deliver(message).await,
                Err(body) if msg.id.is_some() => {
                    let snippet: String = body.chars().take(200).collect();
                    shared.fail(msg.id.as_ref(), format!("HTTP {status}: {snippet}")).await;
                }
                Err(_) => {}
            }
        }
    }
    if let Some(id) = &msg.id {
        shared.state().in_flight.remove(id);
    }
}

/// Whether a body is a JSON object or array (a message or a batch), read without building
/// it.
fn is_message(body: &str) -> bool {
    matches!(body.trim_start().as_bytes().first(), Some(b'{' | b'['))
        && serde_json::from_str::<IgnoredAny>(body).is_ok()
}

/// The members of an answer that say whether it names its request, read without building
/// the rest.
#[derive(serde::Deserialize)]
struct Names<'a> {
    /// `None` when absent or `null`.
    #[serde(borrow, default)]
    id: Option<&'a serde_json::value::RawValue>,
    #[serde(default, deserialize_with = "present")]
    method: bool,
    #[serde(default, deserialize_with = "present")]
    error: bool,
}

/// A member that is there, whatever its value (`null` included).
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    serde::Deserialize::deserialize(d).map(|_: IgnoredAny| true)
}

/// The message a JSON body answering a POST delivers: the body as it is when it is a message
/// or a batch, or, when it is an error naming no request (`"id": null`, or no id, as servers
/// send with a 400 before they have read the request) and the POST carried request `id`,
/// that error given the request's id. `Err` gives back a body that is no JSON object or
/// array.
///
/// The common answer, an object, is read once: a body that reads as [`Names`] is a whole
/// JSON object. Anything else (a batch, an object with a member twice) is checked as
/// [`is_message`] checks it.
fn delivered(body: String, id: Option<&RequestId>) -> Result<String, String> {
    let object = body.trim_start().starts_with('{');
    let may_name_no_request = match object.then(|| serde_json::from_str::<Names>(&body)) {
        Some(Ok(names)) => names.id.is_none() && !names.method && names.error,
        // Read whole by `with_request_id`, which looks again.
        _ if is_message(&body) => true,
        _ => return Err(body),
    };
    let rewritten = id.filter(|_| may_name_no_request).and_then(|id| with_request_id(&body, id));
    Ok(rewritten.unwrap_or(body))
}

/// `body` with `id` as its id, when it is an error object naming no request; `None` when it
/// is anything else.
fn with_request_id(body: &str, id: &RequestId) -> Option<String> {
    let Ok(Value::Object(mut object)) = serde_json::from_str::<Value>(body) else { return None };
    let names_no_request = object.get("id").is_none_or(Value::is_null);
    if !names_no_request || object.contains_key("method") || !object.contains_key("error") {
        return None;
    }
    object.insert("id".into(), id.to_value());
    Some(Value::Object(object).to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_body_is_a_message_when_it_is_a_json_object_or_array() {
        let id = RequestId::from(7);
        // A member twice is still JSON (read past the quick look at its members).
        for body in [r#"{"jsonrpc":"2.0","id":1,"result":{}}"#, " [1, {}]", "{}", r#"{"id":1,"id":2,"result":{}}"#] {
            assert!(is_message(body), "{body}");
            assert_eq!(delivered(body.into(), Some(&id)), Ok(body.to_owned()), "{body}");
            assert_eq!(delivered(body.into(), None), Ok(body.to_owned()), "{body}");
        }
        for body in ["", "  ", "null", "1", r#""text""#, "{", r#"{"a": }"#, "[1,", "<html>", "{} {}", r#"{"id":1} x"#] {
            assert!(!is_message(body), "{body}");
            assert_eq!(delivered(body.into(), Some(&id)), Err(body.to_owned()), "{body}");
        }
    }

    #[test]
    fn an_error_naming_no_request_is_the_posted_requests() {
        let id = RequestId::from(7);
        let answer = |body: Value| {
            let given = delivered(body.to_string(), Some(&id)).expect("a message");
            serde_json::from_str::<Value>(&given).unwrap()
        };
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
            json!({"jsonrpc": "2.0", "method": null, "error": error, "id": null}),
            json!({"jsonrpc": "2.0", "error": error, "id": "a"}),
        ] {
            assert_eq!(answer(body.clone()), body);
        }
    }

    /// Whether `source` is an error of `sample`'s type, equal to it.
    fn is_like<E: std::error::Error + PartialEq + 'static>(
        source: Option<&(dyn std::error::Error + 'static)>,
        sample: &E,
    ) -> bool {
        source.and_then(|s| s.downcast_ref::<E>()) == Some(sample)
    }

    #[test]
    fn setup_errors_keep_their_causes_as_sources() {
        use std::error::Error as _;
        let options = || HttpOptions::default();
        // A URL that does not parse: the parser's error is the source, not part of the text.
        let e = connect("not a url", options()).unwrap_err();
        assert_eq!(e.to_string(), r#"invalid URL "not a url""#);
        assert!(is_like(e.source(), &reqwest::Url::parse("not a url").unwrap_err()), "{e:?}");
        // One that parses with another scheme: the text says why, there is no source.
        let e = connect("ftp://example.com/mcp", options()).unwrap_err();
        assert_eq!(e.to_string(), r#"invalid URL "ftp://example.com/mcp": not http or https"#);
        assert!(e.source().is_none());
        // Invalid header names and values, the bearer token's among them.
        let bad_name = HttpOptions { headers: vec![("bad name".into(), "v".into())], ..options() };
        let e = connect("http://localhost/mcp", bad_name).unwrap_err();
        assert_eq!(e.to_string(), r#"invalid header "bad name""#);
        assert!(e.source().is_some_and(|s| s.is::<reqwest::header::InvalidHeaderName>()), "{e:?}");
        let bad_value = HttpOptions { headers: vec![("X-Key".into(), "a\nb".into())], ..options() };
        let e = connect("http://localhost/mcp", bad_value).unwrap_err();
        assert_eq!(e.to_string(), r#"invalid header "X-Key""#);
        assert!(e.source().is_some_and(|s| s.is::<reqwest::header::InvalidHeaderValue>()), "{e:?}");
        let bad_token = HttpOptions { bearer: Some("a\nb".into()), ..options() };
        let e = connect("http://localhost/mcp", bad_token).unwrap_err();
        assert_eq!(e.to_string(), r#"invalid header "Authorization""#);
        assert!(e.source().is_some_and(|s| s.is::<reqwest::header::InvalidHeaderValue>()), "{e:?}");
        // The HTTP client's own error (building one does not fail here: the variant's wiring).
        let reqwest_error = reqwest::Client::new().get("not a url").build().unwrap_err();
        let e = HttpError::Client(Box::new(reqwest_error));
        assert_eq!(e.to_string(), "HTTP client");
        assert!(e.source().is_some_and(|s| s.is::<reqwest::Error>()), "{e:?}");
    }
}
