//! The SSE streams of Streamable HTTP: a request's answer streamed and resumed, a legacy
//! session's standalone GET stream, and a new session when the server forgot ours.

use std::sync::Arc;
use std::time::Duration;

use http::header::{HeaderValue, ACCEPT, CONTENT_TYPE};
use http::{Method, StatusCode};
use mcpwire_protocol::codec;
use mcpwire_protocol::frame::headers;
use mcpwire_protocol::jsonrpc::{decode_raw, RawIncoming, RawMessage, RequestId};
use mcpwire_protocol::message::ClientNotification;

use super::client::Response;
use super::shared::{Outgoing, Shared};
use super::sse;

/// Whether `data` is the response to request `id` (not a request of the server's that
/// happens to share the id).
fn answers(data: &str, id: &RequestId) -> bool {
    match decode_raw(data) {
        Ok(RawIncoming::Single(RawMessage::Response(r))) => r.id.as_ref() == Some(id),
        // A malformed answer naming the request still ends its wait.
        Err(e) => e.id() == Some(id),
        Ok(_) => false,
    }
}

/// Reads a request's SSE response; resumes it with `Last-Event-ID` if it breaks early.
pub(super) async fn read_sse(shared: &Arc<Shared>, response: Response, msg: &Outgoing) {
    let mut last_id: Option<String> = None;
    let mut retry = Duration::from_millis(1000);
    let mut response = Some(response);
    let mut attempts = 0;
    loop {
        let Some(r) = response.take() else { break };
        let mut parser = sse::Parser::default();
        let mut body = r.into_body();
        let mut answered = false;
        while let Some(chunk) = body.chunk().await {
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
                if let Some(id) = &msg.id {
                    answered |= answers(&event.data, id);
                }
                shared.deliver(event.data).await;
            }
        }
        if answered || msg.id.is_none() {
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
        let mut h = shared.header_map(&msg.frame);
        h.remove(CONTENT_TYPE);
        h.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
        if let Ok(v) = HeaderValue::from_str(&last) {
            h.insert("last-event-id", v);
        }
        shared.authorize(&mut h, &Method::GET, &shared.url).await;
        match shared.http.send(Method::GET, &shared.url, h, Default::default()).await {
            Ok(r) if r.status().is_success() => response = Some(r),
            _ => break,
        }
    }
    shared.fail(msg.id.as_ref(), "the response stream ended before the answer".into()).await;
}

/// Starts a new session with the remembered `initialize`, after the server lost ours.
pub(super) async fn reinitialize(shared: &Arc<Shared>) -> bool {
    let Some(init) = shared.state().initialize.clone() else { return false };
    {
        let mut st = shared.state();
        st.session = None;
        st.get_stream_open = false;
    }
    let mut h = shared.base_headers.clone();
    h.insert(ACCEPT, HeaderValue::from_static("application/json, text/event-stream"));
    h.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    let Ok(r) = shared.post_authorized(&shared.url, h.clone(), init.text).await else { return false };
    if !r.status().is_success() {
        return false;
    }
    let Some(sid) = r.headers().get("mcp-session-id").and_then(|v| v.to_str().ok()).map(str::to_owned) else {
        return false;
    };
    drop(r);
    shared.state().session = Some(sid.clone());
    if let Ok(v) = HeaderValue::from_str(&sid) {
        h.insert(headers::SESSION_ID, v);
    }
    if let Some(version) = shared.state().version.clone() {
        if let Ok(v) = HeaderValue::from_str(&version) {
            h.insert(headers::PROTOCOL_VERSION, v);
        }
    }
    let note = codec::write_client_notification(&ClientNotification::Initialized);
    let ok = shared.post_authorized(&shared.url, h, note).await.is_ok_and(|r| r.status().is_success());
    if ok {
        let _ = tokio::time::timeout(shared.options.connect_timeout, start_get_stream(shared.clone())).await;
    }
    ok
}

/// Opens the standalone GET stream of a legacy session, resuming it when it breaks. The
/// returned receiver fires once the first GET has been answered (or failed).
pub(super) fn start_get_stream(shared: Arc<Shared>) -> tokio::sync::oneshot::Receiver<()> {
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
                    h.insert(headers::SESSION_ID, v);
                }
                if let Some(v) = st.version.as_deref().and_then(|v| HeaderValue::from_str(v).ok()) {
                    h.insert(headers::PROTOCOL_VERSION, v);
                }
            }
            if let Some(v) = last_id.as_deref().and_then(|v| HeaderValue::from_str(v).ok()) {
                h.insert("last-event-id", v);
            }
            shared.authorize(&mut h, &Method::GET, &shared.url).await;
            let response = tokio::select! {
                r = shared.http.send(Method::GET, &shared.url, h, Default::default()) => r,
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
                    let mut body = r.into_body();
                    while let Some(chunk) = shared.next_chunk(&mut body).await {
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
