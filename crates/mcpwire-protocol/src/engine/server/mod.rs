//! The server role: the legacy lifecycle and version negotiation, the modern per-request
//! negotiation, which methods exist in which revision and are offered, the requests it answers
//! itself (`ping`, `server/discover`, `logging/setLevel`, subscriptions, listen streams), input
//! rounds, and what it tells a client when something changes.
//!
//! This file holds [`ServerPeer`] with its state, the records it hands the application, and its
//! entry points (inputs, outputs, answers, closing); the rest is by concern:
//! - `settings`: what a server offers and how it is set up.
//! - `lifecycle`: `initialize`, each request's revision and client context, `server/discover`.
//! - `methods`: which methods exist in which revision and are offered to this client.
//! - `dispatch`: requests, notifications and answers from the client.
//! - `batch`: JSON-RPC batches (2025-03-26).
//! - `listen`: changes, legacy notifications of them, listen streams (2026-07-28).
//! - `outgoing`: progress, log messages, notifications and requests the server sends itself.

mod batch;
mod declaration;
mod dispatch;
mod lifecycle;
mod listen;
mod methods;
mod outgoing;
mod settings;
mod snapshot;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use super::peer::{Core, Event, Events, Failure, LeanFifo, Now, Transmit, Transmits};
use super::role::{Role, Server};
use super::rounds::InputRound;
use crate::error::ErrorObject;
use crate::jsonrpc::RequestId;
use crate::message::{
    ClientNotification, ClientRequest, Decoded, FromClient, Notified, Received, RequestMeta, ServerRequest,
    ServerResult,
};
use crate::revision::ProtocolVersion;
use crate::types::{
    ClientCapabilities, Implementation, LoggingLevel, ProgressToken, SubscriptionFilter, TASKS_EXTENSION,
};

pub use listen::Change;
pub use methods::{missing_capability, tasks_extension_missing};
pub use outgoing::NotAsked;
pub use settings::{Declared, Feature, Offer, ServerSettings, TaskMethods};
pub use snapshot::{SessionSnapshot, SnapshotRefused};

/// What a legacy client negotiated with `initialize`.
#[derive(Debug, Clone)]
pub struct Session {
    /// The revision agreed.
    pub revision: ProtocolVersion,
    /// What the client declared.
    pub capabilities: Arc<ClientCapabilities>,
    /// Who the client is.
    pub client_info: Arc<Implementation>,
}

/// How one request is served: its revision and what the client declared for it.
#[derive(Debug, Clone)]
pub struct Scope {
    /// The revision.
    pub revision: ProtocolVersion,
    /// The client's capabilities (the session's, or this request's in 2026-07-28).
    pub capabilities: Arc<ClientCapabilities>,
    /// Who the client is, if it said.
    pub client_info: Option<Arc<Implementation>>,
}

impl Scope {
    /// The client capability `question` needs and the client did not declare, if any.
    pub fn lacks(&self, question: &ServerRequest) -> Option<&'static str> {
        let caps = &self.capabilities;
        let present = match question {
            ServerRequest::Ping => true,
            ServerRequest::Elicit(_) => caps.elicitation.is_some() && self.revision >= ProtocolVersion::V2025_06_18,
            ServerRequest::CreateMessage(_) => caps.sampling.is_some(),
            ServerRequest::ListRoots => caps.roots.is_some(),
            ServerRequest::GetTask(_)
            | ServerRequest::TaskResult(_)
            | ServerRequest::ListTasks(_)
            | ServerRequest::CancelTask(_) => {
                caps.answers_task_request(question.method()) && self.revision == ProtocolVersion::V2025_11_25
            }
        };
        if present {
            None
        } else {
            question.capability()
        }
    }

    /// Whether the client declared the tasks extension (2026-07-28).
    pub fn declares_tasks_extension(&self) -> bool {
        self.capabilities.extensions.as_ref().is_some_and(|e| e.contains_key(TASKS_EXTENSION))
    }
}

/// A request for the application to serve.
#[derive(Debug)]
pub struct ServedRequest {
    /// Its id: answer with `respond`.
    pub id: RequestId,
    /// The request.
    pub request: ClientRequest,
    /// Its revision and client.
    pub scope: Scope,
    /// Its `_meta` (the progress token, trace context, ...).
    pub meta: RequestMeta,
    /// For a 2026-07-28 `tools/call`, `prompts/get` or `resources/read`: the round, with the
    /// answers the retry brought.
    pub round: Option<Box<InputRound>>,
}

/// What the server role tells the application besides requests.
#[derive(Debug, Clone)]
pub enum ServerNews {
    /// `initialize` was answered: the connection is a legacy session now.
    SessionBegan(Session),
    /// A listen stream opened (2026-07-28): its frames (the changes [`ServerPeer::announce`]
    /// finds for it, its final result) are related to this request until it ends.
    Listening(RequestId),
}

/// Where a request's log threshold comes from.
#[derive(Debug, Clone, Copy)]
enum LogSource {
    /// The session's (`logging/setLevel`).
    Session,
    /// Fixed for the request (2026-07-28 `_meta` logLevel; `None`: no log messages).
    Fixed(Option<LoggingLevel>),
}

/// What the server keeps about a request it serves.
#[doc(hidden)]
#[derive(Debug)]
pub struct ServerServing {
    revision: ProtocolVersion,
    log: LogSource,
    /// The batch it is part of.
    batch: Option<u64>,
    /// A listen stream's honoured filter (2026-07-28), boxed: most requests are no stream.
    listen: Option<Box<SubscriptionFilter>>,
}

impl Role for Server {
    type Served = Box<ServedRequest>;
    type Notified = Notified<ClientNotification>;
    type News = ServerNews;
    /// The client's answer as its text: the server's questions read it into their own types.
    type Reply = Box<serde_json::value::RawValue>;
    type Serving = ServerServing;
}

/// The answers of a batch, gathered until each of its requests is answered.
struct Batch {
    first: Option<RequestId>,
    /// Its messages are still being read: not complete whatever is answered.
    reading: bool,
    waiting: usize,
    answers: Vec<String>,
}

/// The server's engine for one connection (or one stateless request).
pub struct ServerPeer<W = (), H = ()> {
    settings: Arc<ServerSettings>,
    stateless: bool,
    /// Who the requests come from, as the transport authorized them (a principal's key):
    /// the request states sealed here are bound to it.
    identity: Option<String>,
    session: Option<Session>,
    log_level: Option<LoggingLevel>,
    subscriptions: HashSet<String>,
    /// Counts the changes of what a [`SessionSnapshot`] holds, so that a transport keeping
    /// sessions in a shared store knows when to write one again.
    state_changes: u64,
    batches: HashMap<u64, Batch>,
    next_batch: u64,
    /// Its queues are on the heap, empty while idle: a server keeps thousands of engines.
    core: Core<W, H, ServerServing, LeanFifo<Transmit, 2>>,
    events: LeanFifo<Event<Server, W, H>, 1>,
}

impl<W, H: Clone + Default> ServerPeer<W, H> {
    /// An engine for one connection: it becomes a legacy session with `initialize`, and
    /// serves 2026-07-28 requests (each carrying its own `_meta`) before that.
    pub fn new(settings: Arc<ServerSettings>) -> Self {
        Self {
            settings,
            stateless: false,
            identity: None,
            session: None,
            log_level: Some(LoggingLevel::Debug),
            subscriptions: HashSet::new(),
            state_changes: 0,
            batches: HashMap::new(),
            next_batch: 0,
            core: Core::default(),
            events: LeanFifo::default(),
        }
    }

    /// An engine for requests that stand alone (2026-07-28 over HTTP): `initialize` does not
    /// exist there.
    pub fn stateless(settings: Arc<ServerSettings>) -> Self {
        Self { stateless: true, ..Self::new(settings) }
    }

    /// Who the requests come from, as the transport authorized them (a principal's key), or
    /// `None`: the request states sealed from now on are bound to it, and a state sealed for
    /// another identity is refused.
    pub fn set_identity(&mut self, identity: Option<String>) {
        self.identity = identity;
    }

    /// The settings.
    pub fn settings(&self) -> &Arc<ServerSettings> {
        &self.settings
    }

    /// The legacy session, once `initialize` has been answered.
    pub fn session(&self) -> Option<&Session> {
        self.session.as_ref()
    }

    // ---------------------------------------------------------------------------------------
    // Inputs
    // ---------------------------------------------------------------------------------------

    /// Handles a decoded frame from the client.
    pub fn handle(&mut self, frame: Decoded<FromClient>, now: Now, offer: &dyn Offer) {
        match frame {
            Decoded::Single(message) => self.handle_message(message, None, now, offer),
            Decoded::Batch(items) => self.handle_batch(items, now, offer),
        }
    }

    /// Answers a frame that could not be read at all.
    pub fn handle_unreadable(&mut self, id: Option<&RequestId>, error: &ErrorObject) {
        self.core.reject(id, error);
    }

    /// Fails every request of ours whose deadline passed (the client did not answer in
    /// time; it is told).
    pub fn handle_timeout(&mut self, now: Now) {
        for (id, _, waiter) in self.core.expire(now.instant) {
            self.events.push_back(Event::Response { id, waiter, outcome: Err(Failure::TimedOut) });
        }
    }

    fn handle_message(&mut self, message: FromClient, batch: Option<u64>, now: Now, offer: &dyn Offer) {
        match message {
            Received::Request(request) => self.handle_request(request, batch, now, offer),
            Received::Notification(n) => self.handle_notification(n),
            Received::Response(r) => self.handle_response(r),
        }
    }

    // ---------------------------------------------------------------------------------------
    // Outputs
    // ---------------------------------------------------------------------------------------

    /// The next event for the application.
    pub fn poll_event(&mut self) -> Option<Event<Server, W, H>> {
        self.events.pop_front()
    }

    /// The next frame to send.
    pub fn poll_transmit(&mut self) -> Option<Transmit> {
        self.core.poll_transmit()
    }

    /// Every frame to send, oldest first (the queue is left empty).
    pub fn take_transmits(&mut self) -> Transmits {
        self.core.take_transmits()
    }

    /// Every event, oldest first (the queue is left empty).
    pub fn take_events(&mut self) -> Events<Server, W, H> {
        self.events.take()
    }

    /// When [`Self::handle_timeout`] must be called next: no later than the earliest deadline
    /// of a request of ours, and possibly earlier (a request answered since set it; the call
    /// then finds nothing due and this moves on). It changes only when a request with an
    /// earlier deadline is sent or [`Self::handle_timeout`] has run, so a driver that keeps
    /// one timer resets it rarely.
    pub fn poll_timeout(&self) -> Option<std::time::Instant> {
        self.core.next_deadline()
    }

    // ---------------------------------------------------------------------------------------
    // Mutators
    // ---------------------------------------------------------------------------------------

    /// Answers a request the application served; `false` when no answer is due any more
    /// (the client cancelled it, or it was answered already): then nothing is sent.
    pub fn respond(&mut self, id: &RequestId, outcome: Result<ServerResult, ErrorObject>) -> bool {
        let Some(serving) = self.core.end(id) else { return false };
        self.answer_now(id, serving.state.batch, serving.state.revision, outcome);
        true
    }

    /// Ends a round of a multi-round request with `input_required`: the round's questions, and
    /// its state sealed for `request` (2026-07-28).
    pub fn respond_input_required(
        &mut self,
        id: &RequestId,
        request: &ClientRequest,
        round: &InputRound,
        now: Now,
    ) -> bool {
        let ttl = self.settings.request_state_ttl.as_millis() as u64;
        let result = round.input_required(
            request,
            &self.settings.sealer,
            self.identity.as_deref(),
            now.unix_ms.saturating_add(ttl),
        );
        self.respond(id, Ok(ServerResult::InputRequired(result)))
    }

    /// Suggests that the transport close the response stream of request `id` (SSE polling).
    pub fn close_stream(&mut self, id: &RequestId) {
        if self.core.serving.contains_key(id) {
            self.core.transmit_close_stream(id.clone());
        }
    }

    /// The connection is closing: every request of ours fails, every listen stream ends
    /// with its final result, every request still served is cancelled (its work should stop;
    /// nothing more is sent for it).
    pub fn close(&mut self) {
        if self.core.closed {
            return;
        }
        self.core.closed = true;
        for (id, waiter) in self.core.drain_pending() {
            self.events.push_back(Event::Response { id, waiter, outcome: Err(Failure::Closed) });
        }
        self.end_listens();
    }

    /// Gives up on serving a request (its transport timed out, say): its work is to stop,
    /// and no answer is sent for it.
    pub fn abandon(&mut self, id: &RequestId) {
        self.cancelled_by_client(id, None);
    }

    /// Cancels the work of every request still served (after a grace period, say).
    pub fn cancel_all_served(&mut self) {
        let ids: Vec<RequestId> = self.core.serving.keys().cloned().collect();
        for id in ids {
            if let Some(serving) = self.core.end(&id) {
                if serving.state.listen.is_none() {
                    self.events.push_back(Event::Cancelled { id, reason: None, handling: serving.handling });
                }
            }
        }
    }

    /// How many requests of the client's are being served.
    pub fn serving(&self) -> usize {
        self.core.serving.len()
    }

    /// How many requests of ours wait for the client's answer.
    pub fn waiting(&self) -> usize {
        self.core.pending_len()
    }

    /// The waiter of a request of ours still waiting.
    pub fn waiter(&self, id: &RequestId) -> Option<&W> {
        self.core.waiter(id)
    }

    /// Makes the ids of the requests this engine sends the client from now on `PREFIX-N`
    /// strings (`None`: numbers): engines on several instances serving one session then never
    /// make the same id, and an answer reaching the wrong instance can be told apart and
    /// passed on.
    pub fn set_request_id_prefix(&mut self, prefix: Option<Arc<str>>) {
        self.core.set_id_prefix(prefix);
    }

    /// The revision of a request being served.
    pub fn revision_of(&self, id: &RequestId) -> Option<ProtocolVersion> {
        self.core.serving.get(id).map(|s| s.state.revision)
    }

    /// The progress token of a request being served, if it asked for progress.
    pub fn progress_token(&self, id: &RequestId) -> Option<&ProgressToken> {
        self.core.serving.get(id).and_then(|s| s.progress.token())
    }
}
