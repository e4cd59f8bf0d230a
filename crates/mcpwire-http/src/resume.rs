//! Resuming, on this instance, a stream another instance of the deployment produces (or
//! produced): what the client missed is read from the shared store, then what the producer
//! appends, as the store wakes this reader; if the producer's lease runs out before the stream
//! ends, the request is answered with an error, so that no call waits for an answer that will
//! never come.
//!
//! A shared session's standalone stream is read the same way wherever its GET stream is open:
//! every instance files the session's own messages there (a task's status, say, announced
//! where the task was made), and a client that comes back with `Last-Event-ID` on any
//! instance gets what it missed.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::http::StatusCode;
use axum::response::Response;
use futures::StreamExt;
use mcpwire_protocol::{jsonrpc, ErrorObject, RequestId};
use mcpwire_server::shared::{BusMessages, Presence, StoreError};
use tokio::time::Instant;

use crate::deployment::Deployment;
use crate::events::{SharedEventStore, StreamInfo};
use crate::session::{Session, StreamSlot};
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
    if info.evicted {
        return match &info.request {
            Some(request) => legacy::evicted_response(request),
            None => legacy::gone_response(),
        };
    }
    let reader = Remote::new(inner, deployment, session, stream, after, Kind::Request(info), wake);
    respond(reader)
}

/// The standalone stream of a shared session, read from the shared store after event
/// `after` (`Last-Event-ID`), else after what was delivered last (anywhere).
pub(crate) async fn standalone(
    inner: &Arc<Inner>,
    deployment: &Deployment,
    session: Arc<Session>,
    slot: StreamSlot,
    after: Option<u64>,
) -> Response {
    let wake = match deployment.bus.subscribe(deployment.events.wake_topic()).await {
        Ok(wake) => wake,
        Err(e) => return store_unavailable(&e),
    };
    let position = match deployment.events.position(&session.id, 0).await {
        Ok(position) => position,
        Err(e) => return store_unavailable(&e),
    };
    // Beyond the stream's last event: the stream was forgotten (quiet as long as the idle
    // timeout) and began again from 1; what it holds now is all new to the client.
    let cursor = match after {
        Some(seq) if seq <= position.last => seq,
        Some(_) => 0,
        None if position.delivered <= position.last => position.delivered,
        None => 0,
    };
    let reader = Remote::new(inner, deployment, session, 0, cursor, Kind::Standalone { _slot: slot }, wake);
    respond(reader)
}

/// The SSE response reading `reader`.
fn respond(reader: Remote) -> Response {
    let body = futures::stream::unfold(reader, |mut r| async move {
        r.next_chunk().await.map(|chunk| (Ok::<_, std::convert::Infallible>(chunk), r))
    });
    let mut response = Response::new(Body::from_stream(body));
    legacy::sse_headers(&mut response);
    response
}

/// Which stream a [`Remote`] reads.
enum Kind {
    /// A request's, produced by the instance `info` names.
    Request(StreamInfo),
    /// The session's standalone stream, which every instance adds to; this reader holds the
    /// session's one GET stream here.
    Standalone {
        /// Held while the stream is open.
        _slot: StreamSlot,
    },
}

/// A reader of a stream kept in the shared store.
struct Remote {
    session: Arc<Session>,
    stream: u64,
    cursor: u64,
    kind: Kind,
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
    fn new(
        inner: &Arc<Inner>,
        deployment: &Deployment,
        session: Arc<Session>,
        stream: u64,
        cursor: u64,
        kind: Kind,
        wake: BusMessages,
    ) -> Self {
        let retry_ms = inner.config.sse_retry.as_millis() as u64;
        Remote {
            prelude: session.polls().then(|| sse::priming(&format!("{stream}-{cursor}"), retry_ms)),
            wake_key: format!("{} {stream}", session.id),
            session,
            stream,
            cursor,
            kind,
            wake,
            events: deployment.events.clone(),
            presence: deployment.presence.clone(),
            check_every: deployment.lease / 2,
            inner: inner.clone(),
            checked: Instant::now(),
            ended: false,
        }
    }

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
                // An open standalone stream keeps its session, and itself, in the store.
                self.note_delivered();
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
            self.note_delivered();
            return Ok(Some(events));
        }
        let Kind::Request(info) = &mut self.kind else { return Ok(None) };
        if !info.done {
            if let Some(now) = self.events.info(&self.session.id, self.stream).await? {
                info.done = now.done;
                if now.evicted {
                    // What was left to read is gone: the request is answered rather than left
                    // waiting.
                    self.ended = true;
                    return Ok(info.request.as_ref().map(legacy::evicted_answer));
                }
            }
        }
        if info.done {
            // Ended: what was appended before the end is read first.
            let rest = self.read().await?;
            self.ended = rest.is_empty();
            return Ok((!rest.is_empty()).then_some(rest));
        }
        if self.checked.elapsed() >= self.check_every {
            self.checked = Instant::now();
            if !self.presence.alive(&info.instance).await? {
                self.ended = true;
                return Ok(info.request.as_ref().map(stopped_answer));
            }
        }
        Ok(None)
    }

    /// Of the standalone stream: notes, in the background, how far it was delivered (a GET
    /// stream opened later, anywhere, goes on from there), and keeps the session alive.
    fn note_delivered(&self) {
        if !matches!(self.kind, Kind::Standalone { .. }) {
            return;
        }
        self.inner.sessions.keep_alive(&self.session);
        let (events, id, seq, ttl) =
            (self.events.clone(), self.session.id.clone(), self.cursor, self.inner.sessions.idle_timeout);
        tokio::spawn(async move {
            if let Err(e) = events.mark_delivered(&id, 0, seq, ttl).await {
                tracing::debug!(session = %id, error = %e, "how far a standalone stream was delivered was not kept");
            }
        });
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
