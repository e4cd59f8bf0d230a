//! The HTTP+SSE transport of 2024-11-05: an event stream whose first event names where to POST.

use std::sync::Arc;

use http::header::{HeaderValue, ACCEPT, CONTENT_TYPE};
use http::Method;

use super::client::Target;
use super::shared::Shared;
use super::sse;

/// Opens an HTTP+SSE (2024-11-05) event stream at the URL; `true` once its `endpoint`
/// event said where to POST. The stream's messages are delivered until it ends, and then
/// the connection ends.
pub(super) async fn open_sse_transport(shared: &Arc<Shared>) -> bool {
    let mut h = shared.base_headers.clone();
    h.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
    shared.authorize(&mut h, &Method::GET, &shared.url).await;
    let Ok(r) = shared.http.send(Method::GET, &shared.url, h, Default::default()).await else { return false };
    let is_sse = r
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| ct.starts_with("text/event-stream"));
    if !r.status().is_success() || !is_sse {
        return false;
    }
    let mut body = r.into_body();
    let mut parser = sse::Parser::default();
    let mut pending = Vec::new();
    let endpoint = loop {
        let Some(Ok(chunk)) = body.chunk().await else { return false };
        let events = parser.feed(&chunk);
        let mut found = None;
        for e in events {
            if found.is_none() && e.event == "endpoint" {
                found = Some(e.data.trim().to_owned());
            } else if found.is_some() {
                pending.push(e);
            }
        }
        if let Some(f) = found {
            break f;
        }
    };
    let Some(post_url) = shared.url.url.join(&endpoint).ok().and_then(|url| Target::new(url).ok()) else {
        return false;
    };
    shared.state().post_url = Some(post_url);
    let shared = shared.clone();
    tokio::spawn(async move {
        for e in pending {
            if !e.data.trim().is_empty() {
                shared.deliver(e.data).await;
            }
        }
        while let Some(chunk) = shared.next_chunk(&mut body).await {
            for e in parser.feed(&chunk) {
                if !e.data.trim().is_empty() && (e.event.is_empty() || e.event == "message") {
                    shared.deliver(e.data).await;
                }
            }
        }
        // The event stream is the connection: its end closes the incoming side.
        shared.closed.cancel();
    });
    true
}
