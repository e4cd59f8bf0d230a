//! One connection's engine and where its frames go: the handle every handler of the
//! connection holds.
//!
//! The engine ([`ServerPeer`]) is behind one lock. Every operation takes the lock, asks the
//! engine, and takes out what the engine produced before letting go: frames to send and
//! events to act on. Frames go out after the lock is released, to the sink of whoever asked
//! (the frames a request's handler causes go to that request's stream), except that frames of
//! the session itself go to the connection's own sink, and frames of a listen stream go to
//! that stream.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use futures::future::{BoxFuture, Either};
use mcpwire_protocol::engine::{Event, Failure, ServedRequest, Server, ServerNews, ServerPeer, Transmit};
use mcpwire_protocol::frame::{FrameKind, Outbound};
use mcpwire_protocol::{Principal, RequestId};
use parking_lot::Mutex;
use serde_json::Value;
use smallvec::SmallVec;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

/// What waits for the client's answer to a question of ours.
pub(crate) type Waiter = oneshot::Sender<Result<Value, Failure>>;

/// The application's handle on a request being served: cancelled when the client cancels the
/// request or the connection gives up on it.
pub(crate) type Handling = CancellationToken;

/// The engine of one connection, as the runtime uses it.
pub(crate) type Peer = ServerPeer<Waiter, Handling>;

/// A function that files frames; `false` when nobody can read them any more.
pub(crate) type SinkFn = Arc<dyn Fn(Outbound) -> bool + Send + Sync>;

/// Where frames go.
#[derive(Clone)]
pub(crate) enum Sink {
    /// A channel to a writer of typed frames (a transport, one HTTP request's stream).
    Frames(mpsc::Sender<Outbound>),
    /// A long-lived stream's queue (a 2026-07-28 listen stream): no channel block kept.
    Stream(crate::stream::StreamSender),
    /// A function that files them (a session with no connection of its own).
    Function(SinkFn),
}

impl Sink {
    /// Sends one frame, waiting for room; `false` if nobody reads any more.
    pub(crate) async fn send(&self, out: Outbound) -> bool {
        match self {
            Self::Frames(tx) => tx.send(out).await.is_ok(),
            Self::Stream(tx) => tx.send(out).await,
            Self::Function(f) => f(out),
        }
    }

    /// Sends one frame if there is room now: `Ok(false)` if nobody reads any more, the
    /// frame back if the reader is behind.
    fn offer(&self, out: Outbound) -> Result<bool, Outbound> {
        match self {
            Self::Frames(tx) => match tx.try_send(out) {
                Ok(()) => Ok(true),
                Err(mpsc::error::TrySendError::Full(out)) => Err(out),
                Err(mpsc::error::TrySendError::Closed(_)) => Ok(false),
            },
            Self::Stream(tx) => tx.try_send(out),
            Self::Function(f) => Ok(f(out)),
        }
    }

    /// Sends one frame without waiting (from a destructor): a reader that is behind gets it
    /// from a task of its own, as the client's driver does.
    pub(crate) fn try_send(&self, out: Outbound) {
        match self {
            Self::Frames(tx) => drop(mcpwire_transport::driving::send_now(tx, out)),
            Self::Stream(tx) => {
                // The same policy for a listen stream's queue: a frame that finds it full is
                // sent from a task, for a bounded time.
                if let (Err(out), Ok(runtime)) = (tx.try_send(out), tokio::runtime::Handle::try_current()) {
                    let tx = tx.clone();
                    runtime.spawn(async move {
                        let limit = mcpwire_transport::driving::SEND_LATER_LIMIT;
                        let _ = tokio::time::timeout(limit, tx.send(out)).await;
                    });
                }
            }
            Self::Function(f) => drop(f(out)),
        }
    }
}

/// The rest of a [`Link::send`]: nothing, or the frames that wait for room.
pub(crate) type Sending<'a> = Either<std::future::Ready<bool>, BoxFuture<'a, bool>>;

/// Frames an engine operation produced (most produce one or two: kept inline).
pub(crate) type Transmits = mcpwire_protocol::engine::Transmits;

/// Events an engine operation produced.
pub(crate) type Events = mcpwire_protocol::engine::Events<Server, Waiter, Handling>;

/// What an engine operation produced.
#[derive(Default)]
pub(crate) struct Output {
    pub(crate) transmits: Transmits,
    pub(crate) events: Events,
}

/// One connection's engine and its sinks.
pub(crate) struct Link {
    /// Which connection this is, unique in the process (see [`crate::Context::connection_id`]).
    id: u64,
    /// The legacy session's id, as the transport gave it (`Mcp-Session-Id`).
    session_id: Option<Arc<str>>,
    peer: Mutex<Peer>,
    /// The connection's own sink (a legacy session's standalone stream over HTTP).
    sink: Sink,
    /// The sinks of open listen streams, by request.
    listens: Mutex<HashMap<RequestId, Sink>>,
    /// Who the tasks made on this connection belong to (2025-11-25: the session), drawn
    /// when first needed.
    task_owner: OnceLock<String>,
    /// Cancelled when the connection ends: the handlers of its 2025-11-25 tasks stop. Made
    /// when first needed (most connections make no task).
    tasks_end: OnceLock<CancellationToken>,
    /// The connection has ended.
    ended: std::sync::atomic::AtomicBool,
    /// Who the connection's requests come from, as its transport authorized them: a
    /// stateless request's principal, or the latest of a legacy session's (the same party
    /// each time; its scopes may grow with a step-up).
    principal: Mutex<Option<Arc<Principal>>>,
}

/// The time now, as the engine takes it (the client's driver keeps the same).
pub(crate) use mcpwire_transport::driving::now;

impl Link {
    pub(crate) fn new(peer: Peer, sink: Sink, session_id: Option<Arc<str>>) -> Self {
        static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        Self {
            id: NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            session_id,
            peer: Mutex::new(peer),
            sink,
            listens: Mutex::default(),
            task_owner: OnceLock::new(),
            tasks_end: OnceLock::new(),
            ended: std::sync::atomic::AtomicBool::new(false),
            principal: Mutex::new(None),
        }
    }

    /// Who the connection's requests come from, if its transport authorized them.
    pub(crate) fn principal(&self) -> Option<Arc<Principal>> {
        self.principal.lock().clone()
    }

    /// Sets who the connection's requests come from: the requests served from now on see it,
    /// and the request states sealed for them are bound to it.
    pub(crate) fn set_principal(&self, principal: Option<Arc<Principal>>) {
        self.peer.lock().set_identity(principal.as_ref().map(|p| p.key()));
        *self.principal.lock() = principal;
    }

    /// Which connection this is.
    pub(crate) fn id(&self) -> u64 {
        self.id
    }

    /// The legacy session's id, if the transport gave one.
    pub(crate) fn session_id(&self) -> Option<&str> {
        self.session_id.as_deref()
    }

    /// Who the tasks made on this connection belong to.
    pub(crate) fn task_owner(&self) -> &str {
        self.task_owner.get_or_init(mcpwire_protocol::id::random_id)
    }

    /// Cancelled when the connection ends.
    pub(crate) fn tasks_end(&self) -> CancellationToken {
        let token = self.tasks_end.get_or_init(CancellationToken::new).clone();
        if self.ended.load(std::sync::atomic::Ordering::Acquire) {
            token.cancel();
        }
        token
    }

    /// The connection ended: the handlers of its tasks stop.
    pub(crate) fn end_tasks(&self) {
        self.ended.store(true, std::sync::atomic::Ordering::Release);
        if let Some(token) = self.tasks_end.get() {
            token.cancel();
        }
    }

    /// Runs `f` on the engine and takes out what it produced.
    pub(crate) fn run<R>(&self, f: impl FnOnce(&mut Peer) -> R) -> (R, Output) {
        let mut peer = self.peer.lock();
        let r = f(&mut peer);
        let out = Output { transmits: peer.take_transmits(), events: peer.take_events() };
        (r, out)
    }

    /// Reads the engine without changing it.
    pub(crate) fn read<R>(&self, f: impl FnOnce(&Peer) -> R) -> R {
        f(&self.peer.lock())
    }

    /// The sink a frame goes to: a listen stream's; the asker's (`reply`) for an answer or a
    /// frame sent while serving a request; the connection's for the session's own.
    fn sink_for<'a>(&'a self, t: &Transmit, reply: Option<&'a Sink>) -> Cow<'a, Sink> {
        if let Some(id) = &t.related {
            if let Some(sink) = self.listens.lock().get(id) {
                return Cow::Owned(sink.clone());
            }
        }
        let answer =
            matches!(&t.out, Outbound::Frame(f) if matches!(f.kind, FrameKind::Response { .. } | FrameKind::Batch));
        if t.related.is_some() || answer {
            Cow::Borrowed(reply.unwrap_or(&self.sink))
        } else {
            Cow::Borrowed(&self.sink)
        }
    }

    /// Sends frames; `false` (from the future) if some sink has no reader any more. What has
    /// room goes at once, when this is called (nearly always everything); only a reader that
    /// is behind leaves something to wait for, boxed: every caller's future would otherwise
    /// carry (and move) the size of a channel send it almost never makes.
    pub(crate) fn send<'a>(&'a self, transmits: Transmits, reply: Option<&'a Sink>) -> Sending<'a> {
        let mut frames = transmits.into_iter();
        let mut all = true;
        while let Some(t) = frames.next() {
            let sink = self.sink_for(&t, reply);
            self.forget_ended_listen(&t);
            match sink.offer(t.out) {
                Ok(sent) => all &= sent,
                Err(out) => {
                    let sink = sink.into_owned();
                    let waiting = async move { self.send_waiting(sink, out, frames, reply).await && all };
                    return Either::Right(Box::pin(waiting));
                }
            }
        }
        Either::Left(std::future::ready(all))
    }

    /// Sends `first` to `sink`, then `rest`, each waiting for room (frames keep their order).
    async fn send_waiting(
        &self,
        sink: Sink,
        first: Outbound,
        rest: impl Iterator<Item = Transmit>,
        reply: Option<&Sink>,
    ) -> bool {
        let mut all = sink.send(first).await;
        for t in rest {
            let sink = self.sink_for(&t, reply).into_owned();
            self.forget_ended_listen(&t);
            all &= sink.send(t.out).await;
        }
        all
    }

    /// Sends frames without waiting (from a destructor).
    pub(crate) fn send_now(&self, transmits: Transmits, reply: Option<&Sink>) {
        for t in transmits {
            let sink = self.sink_for(&t, reply);
            self.forget_ended_listen(&t);
            sink.try_send(t.out);
        }
    }

    /// A listen stream's final result ends its route.
    fn forget_ended_listen(&self, t: &Transmit) {
        let (Some(id), Outbound::Frame(frame)) = (&t.related, &t.out) else { return };
        if matches!(frame.kind, FrameKind::Response { .. }) && frame.answers(id) {
            // Most connections have no listen stream: the id is not hashed then.
            let mut listens = self.listens.lock();
            if !listens.is_empty() {
                listens.remove(id);
            }
        }
    }

    /// Whether a listen stream is open on this connection.
    pub(crate) fn is_listening(&self) -> bool {
        !self.listens.lock().is_empty()
    }

    /// Acts on what the engine said, except requests (given back to be served): answers to
    /// our questions go to their waiters, cancelled requests have their work cancelled, and
    /// a listen stream that opened keeps `reply` (or the connection's sink) as its route.
    pub(crate) fn settle(&self, events: Events, reply: Option<&Sink>) -> SmallVec<[(Box<ServedRequest>, Handling); 1]> {
        let mut requests = SmallVec::new();
        for event in events {
            match event {
                Event::Request { request, handling } => requests.push((request, handling)),
                Event::Cancelled { handling, .. } => handling.cancel(),
                Event::Response { waiter, outcome, .. } => {
                    // The client's answers are read as JSON by what asked (sampling,
                    // elicitation, roots, tasks): few, and not on the path of a call.
                    let outcome = outcome
                        .and_then(|raw| serde_json::from_str(raw.get()).map_err(|e| Failure::Malformed(e.to_string())));
                    drop(waiter.send(outcome))
                }
                Event::Role(ServerNews::Listening(id)) => {
                    let sink = reply.unwrap_or(&self.sink).clone();
                    self.listens.lock().insert(id, sink);
                }
                // The server asks for no progress, and the rest needs nothing done.
                Event::Progress { .. } | Event::Notification(_) | Event::Role(ServerNews::SessionBegan(_)) => {}
            }
        }
        requests
    }
}
