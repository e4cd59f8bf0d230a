//! What both roles share: requests we sent and wait on, requests of the peer's we serve, and
//! the queues of events and frames the driver takes out.

use std::collections::HashMap;

use smallvec::SmallVec;
use std::time::{Duration, Instant};

use serde_json::value::RawValue;
use serde_json::Value;

use super::progress::{ProgressError, ProgressTracker};
use super::role::Role;
use crate::error::ErrorObject;
use crate::frame::{Frame, FrameKind, Header, Outbound};
use crate::jsonrpc::{self, RequestId};
use crate::method::{Method, MethodName};
use crate::types::{CancelledParams, ProgressParams, ProgressToken};

/// The moment an input happens, as the driver passes it in: the engine reads no clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Now {
    /// Monotonic time, for deadlines.
    pub instant: Instant,
    /// Wall-clock time in milliseconds since the Unix epoch, for what outlives this process
    /// (the expiry of a sealed `requestState`).
    pub unix_ms: u64,
}

impl Now {
    /// A moment.
    pub fn new(instant: Instant, unix_ms: u64) -> Self {
        Self { instant, unix_ms }
    }

    /// The same moment `d` later.
    pub fn after(self, d: Duration) -> Self {
        Self { instant: self.instant + d, unix_ms: self.unix_ms + d.as_millis() as u64 }
    }
}

/// Why a request of ours ended without the peer's answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Failure {
    /// The peer answered with an error.
    Error(ErrorObject),
    /// No answer before the deadline (the peer was told, where the request asked for it).
    TimedOut,
    /// The connection closed first.
    Closed,
    /// A message with the request's id came that is not a valid response.
    Malformed(String),
    /// The server still asked for input after this many retries of the request (2026-07-28):
    /// the client's bound on rounds was reached.
    TooManyRounds(u32),
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Error(e) => write!(f, "the peer answered with an error: {e}"),
            Self::TimedOut => f.write_str("no answer in time"),
            Self::Closed => f.write_str("the connection closed first"),
            Self::Malformed(detail) => write!(f, "the answer is malformed: {detail}"),
            Self::TooManyRounds(n) => write!(f, "input was still required after {n} retries"),
        }
    }
}

/// The frames an engine has to send, oldest first (one or two, usually: kept inline).
pub type Transmits = SmallVec<[Transmit; 2]>;

/// The events an engine has for the application, oldest first.
pub type Events<R, W, H> = SmallVec<[Event<R, W, H>; 1]>;

/// A frame to send, and the request of the peer's it belongs to.
#[derive(Debug, Clone, PartialEq)]
pub struct Transmit {
    /// The peer's request this frame answers or was sent while serving (progress, a log
    /// message, a question to the client): a transport with a stream per request sends it
    /// there. `None`: the connection's own stream.
    pub related: Option<RequestId>,
    /// What to send.
    pub out: Outbound,
}

/// What the engine tells the application.
#[derive(Debug)]
pub enum Event<R: Role, W, H> {
    /// A request of the peer's to serve: answer it with `respond`. `handling` is a copy of
    /// what the engine keeps for it (given back if the peer cancels).
    Request {
        /// The request, with what the engine decided about it.
        request: R::Served,
        /// The application's handle on the request's work.
        handling: H,
    },
    /// The peer no longer wants the answer to a request of its (or the connection closed):
    /// stop serving it. No response is sent for it any more.
    Cancelled {
        /// The request.
        id: RequestId,
        /// The peer's reason, if it gave one.
        reason: Option<String>,
        /// The handle given with the request.
        handling: H,
    },
    /// The answer to a request of ours, or why there is none.
    Response {
        /// Our request.
        id: RequestId,
        /// What waits for it.
        waiter: W,
        /// The answer, as the role reads it (the server: the result's text; the client: a
        /// [`super::Reply`]), or the failure.
        outcome: Result<R::Reply, Failure>,
    },
    /// Progress on a request of ours that asked for it.
    Progress {
        /// Our request.
        id: RequestId,
        /// The notification.
        params: ProgressParams,
    },
    /// A notification of the peer's that the engine does not handle itself.
    Notification(R::Notified),
    /// A role's own news (the server: a legacy session began; the client: the era is known).
    Role(R::News),
}

/// A request of ours waiting for its answer.
struct Pending<W> {
    method: MethodName,
    waiter: W,
    deadline: Option<Instant>,
    /// Tell the peer when the deadline passes (not for a probe, which must not be cancelled).
    cancel_on_timeout: bool,
    progress: Option<ProgressToken>,
    /// The peer's request this one was sent while serving.
    related: Option<RequestId>,
}

/// A request of the peer's being served.
pub(crate) struct Serving<H, S> {
    pub(crate) handling: H,
    pub(crate) progress: ProgressTracker,
    /// What the role keeps about it.
    pub(crate) state: S,
}

/// A request of ours, written.
pub(crate) struct Written {
    pub(crate) id: RequestId,
    pub(crate) method: MethodName,
    pub(crate) text: String,
    pub(crate) token: Option<ProgressToken>,
    /// The standard HTTP headers of the request.
    pub(crate) headers: Vec<(Header, String)>,
}

/// How a request of ours is to be sent.
#[derive(Debug, Clone, Default)]
pub struct SendOptions {
    /// Fail it with [`Failure::TimedOut`] after this long.
    pub timeout: Option<Duration>,
    /// Tell the peer (`notifications/cancelled`) when it times out.
    pub cancel_on_timeout: bool,
    /// Ask the peer for progress notifications.
    pub progress: bool,
    /// The peer's request this one is sent while serving (its frames go to that request's
    /// stream).
    pub related: Option<RequestId>,
}

/// A first-in first-out queue that keeps its first `N` items inline: an engine's queues hold
/// one or two items between two drains, and an idle connection should hold no buffer for them.
pub(crate) struct Fifo<T, const N: usize>(SmallVec<[T; N]>);

impl<T, const N: usize> Default for Fifo<T, N> {
    fn default() -> Self {
        Self(SmallVec::new())
    }
}

impl<T, const N: usize> Fifo<T, N> {
    pub(crate) fn push_back(&mut self, item: T) {
        self.0.push(item);
    }

    /// The oldest item. (Queues are short: taking from the front is a small move.)
    pub(crate) fn pop_front(&mut self) -> Option<T> {
        (!self.0.is_empty()).then(|| self.0.remove(0))
    }

    /// Every item, oldest first; the queue is left empty and inline.
    pub(crate) fn take(&mut self) -> SmallVec<[T; N]> {
        std::mem::take(&mut self.0)
    }
}

/// A [`Fifo`] on the heap, holding no buffer while empty, for the engines a server keeps by
/// the thousand (its sessions, its listen streams): the two inline queues were about 450 bytes
/// of every idle session. The buffer is made for `N` items when an item comes and let go when
/// the queue is drained (an allocation per use); the items are drained into the same inline
/// `SmallVec` as a [`Fifo`]'s, so that taking them allocates nothing more.
pub(crate) struct LeanFifo<T, const N: usize>(Vec<T>);

impl<T, const N: usize> Default for LeanFifo<T, N> {
    fn default() -> Self {
        Self(Vec::new())
    }
}

impl<T, const N: usize> LeanFifo<T, N> {
    pub(crate) fn push_back(&mut self, item: T) {
        if self.0.capacity() == 0 {
            self.0.reserve_exact(N.max(1));
        }
        self.0.push(item);
    }

    /// The oldest item; the buffer goes with the last one.
    pub(crate) fn pop_front(&mut self) -> Option<T> {
        if self.0.is_empty() {
            return None;
        }
        let item = self.0.remove(0);
        if self.0.is_empty() {
            self.0 = Vec::new();
        }
        Some(item)
    }

    /// Every item, oldest first; the queue is left empty, without a buffer.
    pub(crate) fn take(&mut self) -> SmallVec<[T; N]> {
        if self.0.is_empty() {
            return SmallVec::new();
        }
        std::mem::take(&mut self.0).into_iter().collect()
    }
}

/// The queue of frames a [`Core`] keeps: a [`Fifo`] (inline: a client's one connection) or a
/// [`LeanFifo`] (on the heap: a server's many sessions).
pub(crate) trait TransmitQueue: Default {
    fn push_back(&mut self, item: Transmit);
    fn pop_front(&mut self) -> Option<Transmit>;
    fn take(&mut self) -> Transmits;
}

impl TransmitQueue for Fifo<Transmit, 2> {
    fn push_back(&mut self, item: Transmit) {
        Fifo::push_back(self, item);
    }
    fn pop_front(&mut self) -> Option<Transmit> {
        Fifo::pop_front(self)
    }
    fn take(&mut self) -> Transmits {
        Fifo::take(self)
    }
}

impl TransmitQueue for LeanFifo<Transmit, 2> {
    fn push_back(&mut self, item: Transmit) {
        LeanFifo::push_back(self, item);
    }
    fn pop_front(&mut self) -> Option<Transmit> {
        LeanFifo::pop_front(self)
    }
    fn take(&mut self) -> Transmits {
        LeanFifo::take(self)
    }
}

/// How many requests of ours in flight the table of them keeps room for once they are all
/// answered.
const PENDING_KEPT: usize = 16;

/// The machinery both roles share, generic over what waits for a request of ours (`W`) and
/// the application's handle on a request of the peer's (`H`).
pub(crate) struct Core<W, H, S, Q = Fifo<Transmit, 2>> {
    next_id: i64,
    /// Put before the number of our requests' ids (a string id then), so that several
    /// engines serving one session (instances of one deployment) never make the same id.
    id_prefix: Option<std::sync::Arc<str>>,
    next_token: i64,
    /// Keyed by ids this engine made, so hashed with a fast hasher: SipHash's resistance to
    /// chosen keys is for maps a peer fills (`serving`), and cost two hashes a request.
    pending: HashMap<RequestId, Pending<W>, foldhash::fast::RandomState>,
    /// When to look for requests of ours past their deadline: never later than the earliest
    /// deadline pending, and left in place when a request is answered (finding it again
    /// would walk every request pending after every answer, and would move the driver's
    /// timer each time); recomputed when it is reached.
    wake_at: Option<Instant>,
    pub(crate) serving: HashMap<RequestId, Serving<H, S>>,
    transmits: Q,
    pub(crate) closed: bool,
}

impl<W, H, S, Q: TransmitQueue> Default for Core<W, H, S, Q> {
    fn default() -> Self {
        Self {
            next_id: 0,
            id_prefix: None,
            next_token: 1,
            pending: HashMap::default(),
            wake_at: None,
            serving: HashMap::new(),
            transmits: Q::default(),
            closed: false,
        }
    }
}

impl<W, H: Clone, S, Q: TransmitQueue> Core<W, H, S, Q> {
    pub(crate) fn transmit(&mut self, related: Option<RequestId>, frame: Frame) {
        self.transmits.push_back(Transmit { related, out: Outbound::Frame(frame) });
    }

    pub(crate) fn transmit_close_stream(&mut self, related: RequestId) {
        self.transmits.push_back(Transmit { related: Some(related), out: Outbound::CloseStream });
    }

    pub(crate) fn poll_transmit(&mut self) -> Option<Transmit> {
        self.transmits.pop_front()
    }

    pub(crate) fn take_transmits(&mut self) -> Transmits {
        self.transmits.take()
    }

    /// Answers a request with an error at once, before it is served.
    pub(crate) fn reject(&mut self, id: Option<&RequestId>, error: &ErrorObject) {
        let text = jsonrpc::encode_error(id, error);
        self.transmit(id.cloned(), Frame::response(text, id.cloned(), Some(error.code)));
    }

    /// A fresh id for a request of ours, and a progress token if asked.
    pub(crate) fn allocate(&mut self, progress: bool) -> (RequestId, Option<ProgressToken>) {
        let id = match &self.id_prefix {
            Some(prefix) => RequestId::String(format!("{prefix}-{}", self.next_id)),
            None => RequestId::Number(self.next_id),
        };
        self.next_id += 1;
        let token = progress.then(|| {
            let t = ProgressToken::Number(self.next_token);
            self.next_token += 1;
            t
        });
        (id, token)
    }

    /// Registers a request of ours whose frame is written, and sends it.
    pub(crate) fn send(&mut self, request: Written, options: &SendOptions, waiter: W, now: Instant) {
        let Written { id, method, text, token, headers } = request;
        let deadline = options.timeout.and_then(|t| now.checked_add(t));
        if let Some(d) = deadline {
            self.wake_at = Some(self.wake_at.map_or(d, |w| w.min(d)));
        }
        self.pending.insert(
            id.clone(),
            Pending {
                method: method.clone(),
                waiter,
                deadline,
                cancel_on_timeout: options.cancel_on_timeout,
                progress: token,
                related: options.related.clone(),
            },
        );
        let frame = Frame { text, kind: FrameKind::Request { id, method }, headers };
        self.transmit(options.related.clone(), frame);
    }

    fn send_cancelled(&mut self, id: &RequestId, reason: &str, related: Option<RequestId>) {
        let params = CancelledParams { request_id: Some(id.clone()), reason: Some(reason.to_owned()) };
        let params = serde_json::to_value(params).unwrap_or(Value::Null);
        let text = jsonrpc::encode_notification(Method::Cancelled.as_str(), Some(&params));
        self.transmit(related, Frame::new(text, FrameKind::Cancel { id: id.clone() }));
    }

    /// Forgets a request of ours and tells the peer; its waiter, if it was still pending (a
    /// response that crossed the cancellation is then ignored).
    pub(crate) fn cancel(&mut self, id: &RequestId, reason: &str) -> Option<W> {
        let pending = self.pending.remove(id)?;
        self.send_cancelled(id, reason, pending.related);
        Some(pending.waiter)
    }

    /// Forgets a request of ours without telling the peer (it was never sent).
    pub(crate) fn forget(&mut self, id: &RequestId) -> Option<W> {
        self.pending.remove(id).map(|p| p.waiter)
    }

    /// Makes the ids of our requests from now on `PREFIX-N` strings.
    pub(crate) fn set_id_prefix(&mut self, prefix: Option<std::sync::Arc<str>>) {
        self.id_prefix = prefix;
    }

    /// The waiter of a request of ours still pending.
    pub(crate) fn waiter(&self, id: &RequestId) -> Option<&W> {
        self.pending.get(id).map(|p| &p.waiter)
    }

    /// A response to a request of ours: its waiter and outcome, or `None` for an unknown or
    /// finished one (late, after a timeout or a cancellation), which is ignored.
    pub(crate) fn complete(
        &mut self,
        id: &RequestId,
        outcome: Result<Box<RawValue>, Failure>,
    ) -> Option<(MethodName, W, Result<Box<RawValue>, Failure>)> {
        let pending = self.pending.remove(id)?;
        // Memory held after a burst is given back, but a small table is kept: a client with
        // one request at a time would otherwise allocate and free it on every request.
        if self.pending.is_empty() && self.pending.capacity() > PENDING_KEPT {
            self.pending.shrink_to_fit();
        }
        Some((pending.method, pending.waiter, outcome))
    }

    /// The request of ours a progress token belongs to.
    pub(crate) fn progress_of(&self, token: &ProgressToken) -> Option<RequestId> {
        self.pending.iter().find(|(_, p)| p.progress.as_ref() == Some(token)).map(|(id, _)| id.clone())
    }

    /// Fails every request of ours whose deadline passed at `now`.
    pub(crate) fn expire(&mut self, now: Instant) -> Vec<(RequestId, MethodName, W)> {
        if self.wake_at.is_none_or(|w| w > now) {
            return Vec::new();
        }
        let due: Vec<RequestId> = self
            .pending
            .iter()
            .filter(|(_, p)| p.deadline.is_some_and(|d| d <= now))
            .map(|(id, _)| id.clone())
            .collect();
        let mut expired = Vec::with_capacity(due.len());
        for id in due {
            let Some(p) = self.pending.remove(&id) else { continue };
            if p.cancel_on_timeout {
                self.send_cancelled(&id, "timed out", p.related.clone());
            }
            expired.push((id, p.method, p.waiter));
        }
        self.wake_at = self.pending.values().filter_map(|p| p.deadline).min();
        expired
    }

    /// When [`Self::expire`] must be called next: no later than the earliest deadline of a
    /// request of ours, and possibly earlier (the request that set it was answered since).
    pub(crate) fn next_deadline(&self) -> Option<Instant> {
        self.wake_at
    }

    /// Every request of ours, failed (the connection closed).
    pub(crate) fn drain_pending(&mut self) -> Vec<(RequestId, W)> {
        self.wake_at = None;
        self.pending.drain().map(|(id, p)| (id, p.waiter)).collect()
    }

    /// How many requests of ours wait for an answer.
    pub(crate) fn pending_len(&self) -> usize {
        self.pending.len()
    }

    /// Starts serving a request of the peer's.
    pub(crate) fn begin(&mut self, id: RequestId, progress: Option<ProgressToken>, handling: H, state: S) {
        self.serving.insert(id, Serving { handling, progress: ProgressTracker::new(progress), state });
    }

    /// Stops serving a request (answered or cancelled); what was kept for it. A table left
    /// empty lets its buffer go: an idle session keeps none.
    pub(crate) fn end(&mut self, id: &RequestId) -> Option<Serving<H, S>> {
        let serving = self.serving.remove(id);
        if self.serving.is_empty() {
            self.serving.shrink_to_fit();
        }
        serving
    }

    /// Checks progress for a request being served and returns the notification's params.
    pub(crate) fn progress(
        &mut self,
        id: &RequestId,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    ) -> Result<ProgressParams, ProgressError> {
        let serving = self.serving.get_mut(id).ok_or(ProgressError::Finished)?;
        let token = serving.progress.advance(progress)?.clone();
        Ok(ProgressParams { progress_token: token, progress, total, message })
    }

    /// Writes a notification of ours, related to `related`.
    pub(crate) fn notify(&mut self, related: Option<RequestId>, method: MethodName, text: String) {
        self.transmit(related, Frame::new(text, FrameKind::Notification { method }));
    }

    /// Writes a notification of ours with its HTTP headers.
    pub(crate) fn notify_with(&mut self, method: MethodName, text: String, headers: Vec<(Header, String)>) {
        self.transmit(None, Frame { text, kind: FrameKind::Notification { method }, headers });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn send(core: &mut Core<(), (), ()>, n: i64) {
        let id = RequestId::Number(n);
        let written =
            Written { id, method: Method::Ping.into(), text: String::new(), token: None, headers: Vec::new() };
        core.send(written, &SendOptions::default(), (), Instant::now());
    }

    fn answer(core: &mut Core<(), (), ()>, n: i64) {
        assert!(core.complete(&RequestId::Number(n), Err(Failure::Closed)).is_some());
    }

    #[test]
    fn the_table_of_requests_in_flight_keeps_a_small_buffer_and_gives_back_a_large_one() {
        let mut core = Core::<(), (), ()>::default();
        send(&mut core, 1);
        answer(&mut core, 1);
        let kept = core.pending.capacity();
        assert!(kept > 0, "one request at a time: the table stays");
        send(&mut core, 2);
        answer(&mut core, 2);
        assert_eq!(core.pending.capacity(), kept);

        for n in 10..200 {
            send(&mut core, n);
        }
        assert!(core.pending.capacity() > PENDING_KEPT);
        for n in 10..200 {
            answer(&mut core, n);
        }
        assert_eq!(core.pending.capacity(), 0, "after a burst the table is given back");
    }
}
