//! Resuming, on this instance, a stream another instance of the deployment produces (or
//! produced): what the client missed is read from the shared store, then what the producer
//! appends, as the store wakes this reader; if the producer's lease runs out before the stream
//! ends, the request is answered with an error, so that no call waits for an answer that will
//! never come.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::http::StatusCode;
use axum::response::Response;
use futures::StreamExt;
use mcp_protocol::{jsonrpc, ErrorObject, RequestId};
use mcp_server::shared::{BusMessages, Presence, StoreError};
use tokio::time::Instant;

use crate::events::{SharedEventStore, StreamInfo};
use crate::session::Session;
use crate::{legacy, plain, sse, store_unavailable, Inner};

/// How many events one read of the store brings.
const BATCH: usize = 256;

/// How often the store is read when no wake-up came (one may be lost: the bus delivers at most
/// once).
const POLL: Duration = Duration::from_secs(1);

/// Resumes stream `stream` of `session` after event `after`, from the shared store.
pub(crate) async fn elsewhere(inner: &Arc<Inner>, session: Arc<Session>, stream: u64, after: u64) -> Response {
    let Some(deployment) = &inner.deployment else {
        return plain(StatusCode::BAD_REQUEST, "Last-Event-ID names no stream of this session");
    };
    // Subscribed before the first read: a wake-up between the two is not missed.
    let wake = match deployment.bus.subscribe(deployment.events.wake_topic()).await {
        Ok(wake) => wake,
        Err(e) => return store_unavailable(&e),
    };
    let info = match deployment.events.info(&session.id, stream).await {
        Ok(Some(info)) => info,
        Ok(None) => return plain(StatusCode::BAD_REQUEST, "Last-Event-ID names no stream of this session"),
        Err(e) => return store_unavailable(&e),
    };
    let polls = session.polls();
    let retry_ms = inner.config.sse_retry.as_millis() as u64;
    let reader = Remote {
        prelude: polls.then(|| sse::priming(&format!("{stream}-{after}"), retry_ms)),
        wake_key: format!("{} {stream}", session.id),
        session,
        stream,
        cursor: after,
        info,
        wake,
        events: deployment.events.clone(),
        presence: deployment.presence.clone(),
        check_every: deployment.lease / 2,
        inner: inner.clone(),
        checked: Instant::now(),
        ended: false,
    };
    let body = futures::stream::unfold(reader, |mut r| async move {
        r.next_chunk().await.map(|chunk| (Ok::<_, std::convert::Infallible>(chunk), r))
    });
    let mut response = Response::new(Body::from_stream(body));
    legacy::sse_headers(&mut response);
    response
}

/// A reader of a stream kept in the shared store.
struct Remote {
    session: Arc<Session>,
    stream: u64,
    cursor: u64,
    info: StreamInfo,
    /// The wake-ups of every shared stream; this one's say `SESSION STREAM`.
    wake: BusMessages,
    wake_key: String,
    prelude: Option<String>,
    /// Where the stream is kept, and the producers' leases, checked every `check_every`.
    events: Arc<dyn SharedEventStore>,
    presence: Arc<dyn Presence>,
    check_every: Duration,
    inner: Arc<Inner>,
    /// When the producer's lease was last checked.
    checked: Instant,
    ended: bool,
}

impl Remote {
    async fn next_chunk(&mut self) -> Option<String> {
        if self.ended {
            return None;
        }
        if let Some(p) = self.prelude.take() {
            return Some(p);
        }
        let keep_alive = self.inner.config.keep_alive;
        let quiet_since = Instant::now();
        loop {
            match self.step().await {
                Ok(Some(chunk)) => return Some(chunk),
                Ok(None) if self.ended => return None,
                Ok(None) => {}
                Err(e) => {
                    // The store is gone for now: the client comes back in a while and resumes.
                    tracing::warn!(error = %e, "a resumed stream lost the shared store");
                    self.ended = true;
                    return Some(sse::retry(self.inner.config.sse_retry.as_millis() as u64));
                }
            }
            if self.inner.shutdown.is_cancelled() {
                self.ended = true;
                return Some(sse::retry(self.inner.config.sse_retry.as_millis() as u64));
            }
            if quiet_since.elapsed() >= keep_alive {
                return Some(sse::KEEP_ALIVE.to_owned());
            }
            let deadline = POLL.min(keep_alive.saturating_sub(quiet_since.elapsed()));
            let (closed, shutdown) = (self.session.closed.clone(), self.inner.shutdown.clone());
            tokio::select! {
                _ = self.woken() => {}
                _ = tokio::time::sleep(deadline) => {}
                _ = closed.cancelled() => return None,
                _ = shutdown.cancelled() => {}
            }
        }
    }

    /// Waits for a wake-up of this stream.
    async fn woken(&mut self) {
        while let Some(message) = self.wake.next().await {
            if message == self.wake_key.as_bytes() {
                return;
            }
        }
        // The bus ended (the store is gone): the poll timer takes over.
        std::future::pending::<()>().await
    }

    /// One look at the store: the events after the cursor (as one chunk), or the end of the
    /// stream (`ended` set), or nothing yet.
    async fn step(&mut self) -> Result<Option<String>, StoreError> {
        let events = self.read().await?;
        if !events.is_empty() {
            return Ok(Some(events));
        }
        if !self.info.done {
            if let Some(info) = self.events.info(&self.session.id, self.stream).await? {
                self.info.done = info.done;
            }
        }
        if self.info.done {
            // Ended: what was appended before the end is read first.
            let rest = self.read().await?;
            self.ended = rest.is_empty();
            return Ok((!rest.is_empty()).then_some(rest));
        }
        if self.checked.elapsed() >= self.check_every {
            self.checked = Instant::now();
            if !self.presence.alive(&self.info.instance).await? {
                self.ended = true;
                return Ok(self.info.request.as_ref().map(stopped_answer));
            }
        }
        Ok(None)
    }

    /// The events after the cursor as one SSE chunk (empty: none).
    async fn read(&mut self) -> Result<String, StoreError> {
        let events = self.events.read(&self.session.id, self.stream, self.cursor, BATCH).await?;
        let mut chunk = String::new();
        for (seq, frame) in &events {
            chunk.push_str(&sse::event(Some(&format!("{}-{seq}", self.stream)), Some("message"), frame));
            self.cursor = *seq;
        }
        Ok(chunk)
    }
}

/// The SSE event answering `request` when the instance running it stopped before answering.
fn stopped_answer(request: &RequestId) -> String {
    let error =
        ErrorObject::internal("the server instance running this request stopped before answering; send it again");
    sse::event(None, Some("message"), &jsonrpc::encode_error(Some(request), &error))
}
