//! The server role: the legacy lifecycle and version negotiation, the modern per-request
//! negotiation, which methods exist in which revision and are offered, the requests it answers
//! itself (`ping`, `server/discover`, `logging/setLevel`, subscriptions, listen streams), input
//! rounds, and what it tells a client when something changes.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Map, Value};

use super::peer::{Core, Event, Events, Failure, Fifo, Now, SendOptions, Transmit, Transmits, Written};
use super::progress::ProgressError;
use super::request_state::StateSealer;
use super::role::Server;
use super::rounds::InputRound;
use crate::codec::{self, ResultContext};
use crate::error::{ErrorObject, MISSING_REQUIRED_CLIENT_CAPABILITY, UNSUPPORTED_PROTOCOL_VERSION};
use crate::frame::{Frame, FrameKind};
use crate::jsonrpc::{InvalidMessage, RequestId, Response};
use crate::message::{
    raw_str, ClientNotification, ClientRequest, Decoded, FromClient, Notified, Received, Request, RequestMeta,
    ServerNotification, ServerRequest, ServerResult,
};
use crate::method::{Method, MethodName};
use crate::revision::ProtocolVersion;
use crate::types::{
    meta_keys, CacheHint, ClientCapabilities, DiscoverResult, EmptyResult, Implementation, InitializeResult,
    JsonObject, LoggingLevel, LoggingMessageParams, Meta, ProgressToken, ServerCapabilities, SubscriptionFilter,
    TASKS_EXTENSION,
};

/// What a server offers, asked when it matters (the registries change at any time).
pub trait Offer {
    /// Whether a feature is offered now.
    fn offers(&self, feature: Feature) -> bool;
    /// The capabilities declared now.
    fn capabilities(&self) -> ServerCapabilities;
}

/// A feature a server may offer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Feature {
    /// Tools.
    Tools,
    /// Resources and templates (and, in the legacy era, subscriptions to them).
    Resources,
    /// Prompts.
    Prompts,
    /// Log messages.
    Logging,
    /// Argument completion.
    Completions,
}

/// Which task methods a server answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskMethods {
    /// `tasks/list` (2025-11-25).
    pub list: bool,
    /// The `io.modelcontextprotocol/tasks` extension for 2026-07-28 clients.
    pub extension: bool,
}

/// A server's settings, shared by all its connections.
#[derive(Debug, Clone)]
pub struct ServerSettings {
    /// Who the server is.
    pub info: Implementation,
    /// How to use it.
    pub instructions: Option<String>,
    /// Caching hints of cacheable results (2026-07-28).
    pub cache: CacheHint,
    /// Serve the modern era only: `initialize` is refused, naming the versions spoken.
    pub modern_only: bool,
    /// Send log messages (and answer `logging/setLevel`).
    pub logging: bool,
    /// Seals the state of multi-round requests.
    pub sealer: StateSealer,
    /// How long a sealed state stays valid.
    pub request_state_ttl: Duration,
    /// The task methods, when tasks are enabled.
    pub tasks: Option<TaskMethods>,
}

impl ServerSettings {
    /// Settings for a server with this info and nothing else set.
    pub fn new(info: Implementation) -> Self {
        Self {
            info,
            instructions: None,
            cache: CacheHint::default(),
            modern_only: false,
            logging: true,
            sealer: StateSealer::random(),
            request_state_ttl: Duration::from_secs(600),
            tasks: None,
        }
    }

    fn result_context(&self) -> ResultContext<'_> {
        ResultContext { server_info: Some(&self.info), cache: self.cache }
    }
}

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

/// The `-32021` error of a 2026-07-28 request that needs a client capability not declared.
pub fn missing_capability(required: JsonObject, what: &str) -> ErrorObject {
    ErrorObject::new(MISSING_REQUIRED_CLIENT_CAPABILITY, format!("Missing required client capability: {what}"))
        .with_data(json!({ crate::error::REQUIRED_CAPABILITIES: required }))
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

/// The answers of a batch, gathered until each of its requests is answered.
struct Batch {
    first: Option<RequestId>,
    /// Its messages are still being read: not complete whatever is answered.
    reading: bool,
    waiting: usize,
    answers: Vec<String>,
}

/// A change the server's clients may be told about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// The tool list changed.
    Tools,
    /// The prompt list changed.
    Prompts,
    /// The resource (or template) list changed.
    Resources,
    /// A resource's contents changed.
    ResourceUpdated(String),
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
    batches: HashMap<u64, Batch>,
    next_batch: u64,
    core: Core<W, H, ServerServing>,
    events: Fifo<Event<Server, W, H>, 1>,
}

/// The methods each revision has (for the server to answer).
fn exists_in(method: Method, rev: ProtocolVersion) -> bool {
    use Method as M;
    let common = matches!(
        method,
        M::ListTools
            | M::CallTool
            | M::ListResources
            | M::ListResourceTemplates
            | M::ReadResource
            | M::ListPrompts
            | M::GetPrompt
            | M::Complete
    );
    if rev.is_modern() {
        // Tasks are the `io.modelcontextprotocol/tasks` extension here: no tasks/result or tasks/list.
        common || matches!(method, M::Discover | M::Listen | M::GetTask | M::UpdateTask | M::CancelTask)
    } else {
        common
            || matches!(method, M::Ping | M::Subscribe | M::Unsubscribe | M::SetLevel)
            || (rev == ProtocolVersion::V2025_11_25
                && matches!(method, M::GetTask | M::TaskResult | M::ListTasks | M::CancelTask))
    }
}

/// The feature a method needs offered.
fn feature_of(method: Method) -> Option<Feature> {
    use Method as M;
    Some(match method {
        M::ListTools | M::CallTool => Feature::Tools,
        M::ListResources | M::ListResourceTemplates | M::ReadResource | M::Subscribe | M::Unsubscribe => {
            Feature::Resources
        }
        M::ListPrompts | M::GetPrompt => Feature::Prompts,
        M::Complete => Feature::Completions,
        M::SetLevel => Feature::Logging,
        _ => return None,
    })
}

fn supported_modern() -> Vec<&'static str> {
    ProtocolVersion::ALL.iter().filter(|v| v.is_modern()).map(|v| v.as_str()).collect()
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
            batches: HashMap::new(),
            next_batch: 0,
            core: Core::default(),
            events: Fifo::default(),
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

    fn handle_batch(&mut self, items: Vec<Result<FromClient, InvalidMessage>>, now: Now, offer: &dyn Offer) {
        let allowed = self.session.as_ref().is_some_and(|s| s.revision.allows_batches());
        if !allowed {
            let e = ErrorObject::invalid_request(
                "JSON-RPC batches are only part of protocol revision 2025-03-26 (after initialize)",
            );
            return self.core.reject(None, &e);
        }
        let key = self.next_batch;
        self.next_batch += 1;
        let first = items.iter().find_map(|i| match i {
            Ok(Received::Request(r)) => Some(r.id.clone()),
            _ => None,
        });
        let requests = items.iter().filter(|i| matches!(i, Ok(Received::Request(_)))).count();
        self.batches.insert(key, Batch { first, reading: true, waiting: requests, answers: Vec::new() });
        for item in items {
            match item {
                Err(invalid) => {
                    let text = codec::write_error(invalid.id.as_ref(), &invalid.error);
                    self.batch_answer(key, text, false);
                }
                Ok(Received::Request(r)) if r.method.known() == Some(Method::Initialize) => {
                    let e = ErrorObject::invalid_request("initialize must not be part of a batch");
                    self.batch_answer(key, codec::write_error(Some(&r.id), &e), true);
                }
                Ok(message) => self.handle_message(message, Some(key), now, offer),
            }
        }
        if let Some(batch) = self.batches.get_mut(&key) {
            batch.reading = false;
        }
        self.flush_batch(key);
    }

    /// Files one answer of a batch (`counts`: it answers one of its requests).
    fn batch_answer(&mut self, key: u64, text: String, counts: bool) {
        if let Some(batch) = self.batches.get_mut(&key) {
            batch.answers.push(text);
            if counts {
                batch.waiting = batch.waiting.saturating_sub(1);
            }
        }
    }

    /// Sends a batch's answers once every request of it is answered.
    fn flush_batch(&mut self, key: u64) {
        let done = self.batches.get(&key).is_some_and(|b| !b.reading && b.waiting == 0);
        if !done {
            return;
        }
        let Some(batch) = self.batches.remove(&key) else { return };
        if batch.answers.is_empty() {
            return;
        }
        let text = format!("[{}]", batch.answers.join(","));
        self.core.transmit(batch.first, Frame::new(text, FrameKind::Batch));
    }

    /// Sends a response: alone, or into its batch.
    fn send_response(&mut self, id: &RequestId, batch: Option<u64>, text: String, error: Option<i64>) {
        match batch {
            Some(key) => {
                self.batch_answer(key, text, true);
                self.flush_batch(key);
            }
            None => self.core.transmit(Some(id.clone()), Frame::response(text, Some(id.clone()), error)),
        }
    }

    fn answer_now(
        &mut self,
        id: &RequestId,
        batch: Option<u64>,
        rev: ProtocolVersion,
        outcome: Result<ServerResult, ErrorObject>,
    ) {
        let (text, error) = match outcome {
            Ok(result) => (codec::write_server_result(id, &result, rev, &self.settings.result_context()), None),
            Err(e) => (codec::write_error(Some(id), &e), Some(e.code)),
        };
        self.send_response(id, batch, text, error);
    }

    fn handle_request(
        &mut self,
        request: Box<Request<ClientRequest>>,
        batch: Option<u64>,
        now: Now,
        offer: &dyn Offer,
    ) {
        let Request { id, method, meta, round, body } = *request;
        if method.known() == Some(Method::Initialize) {
            // A 2026-07-28 request cannot open a legacy session: the method does not exist
            // there, whatever its params.
            let outcome = match self.stateless {
                true => Err(ErrorObject::method_not_found(Method::Initialize.as_str())),
                false => body.and_then(|b| self.initialize(b, offer)),
            };
            let rev = self.session.as_ref().map_or(ProtocolVersion::LATEST_LEGACY, |s| s.revision);
            // A negotiated revision is written without the modern members: no server info in _meta.
            let (text, error) = match outcome {
                Ok(result) => {
                    let ctx = ResultContext { server_info: None, cache: self.settings.cache };
                    (codec::write_server_result(&id, &result, rev, &ctx), None)
                }
                Err(e) => (codec::write_error(Some(&id), &e), Some(e.code)),
            };
            self.send_response(&id, batch, text, error);
            if let Some(session) = self.session.clone().filter(|_| error.is_none()) {
                self.events.push_back(Event::Role(ServerNews::SessionBegan(session)));
            }
            return;
        }
        if self.core.serving.contains_key(&id) {
            let e = ErrorObject::invalid_request(format!("request id {id} is already in use by a request in flight"));
            let text = codec::write_error(Some(&id), &e);
            return self.send_response(&id, batch, text, Some(e.code));
        }
        let scope = match self.scope(&method, &meta) {
            Ok(scope) => scope,
            Err(e) => return self.answer_now(&id, batch, ProtocolVersion::LATEST, Err(e)),
        };
        let rev = scope.revision;
        let log = if rev.is_modern() {
            match self.request_log_level(&meta) {
                Ok(level) => LogSource::Fixed(level),
                Err(e) => return self.answer_now(&id, batch, rev, Err(e)),
            }
        } else {
            LogSource::Session
        };
        let known = method.known().filter(|m| exists_in(*m, rev));
        let Some(known) = known else {
            return self.answer_now(&id, batch, rev, Err(ErrorObject::method_not_found(method.as_str())));
        };
        if let Err(e) = self.gate(known, &scope, offer) {
            return self.answer_now(&id, batch, rev, Err(e));
        }
        let body = match body {
            Ok(body) => body,
            Err(e) => return self.answer_now(&id, batch, rev, Err(e)),
        };
        let serving = |listen| ServerServing { revision: rev, log, batch, listen };
        match &body {
            ClientRequest::Ping => {
                return self.answer_now(&id, batch, rev, Ok(ServerResult::Empty(EmptyResult::default())))
            }
            ClientRequest::Discover => {
                let result = self.discover(offer);
                return self.answer_now(&id, batch, rev, Ok(result));
            }
            ClientRequest::SetLevel(p) => {
                self.log_level = Some(p.level);
                return self.answer_now(&id, batch, rev, Ok(ServerResult::Empty(EmptyResult::default())));
            }
            ClientRequest::Subscribe(p) => {
                self.subscriptions.insert(p.uri.clone());
                return self.answer_now(&id, batch, rev, Ok(ServerResult::Empty(EmptyResult::default())));
            }
            ClientRequest::Unsubscribe(p) => {
                self.subscriptions.remove(&p.uri);
                return self.answer_now(&id, batch, rev, Ok(ServerResult::Empty(EmptyResult::default())));
            }
            ClientRequest::Listen(p) => {
                let honoured = honoured(&p.notifications, &offer.capabilities());
                let ack = ServerNotification::SubscriptionsAcknowledged(honoured.clone());
                let text = codec::write_server_notification(&ack, Some(&subscription_meta(&id)), rev);
                self.core.notify(Some(id.clone()), Method::SubscriptionsAcknowledged.into(), text);
                self.core.begin(id.clone(), None, H::default(), serving(Some(Box::new(honoured))));
                self.events.push_back(Event::Role(ServerNews::Listening(id)));
                return;
            }
            _ => {}
        }
        let round = if rev.is_modern() && known.allows_input_rounds() {
            match InputRound::open(&body, &round, &self.settings.sealer, self.identity.as_deref(), now.unix_ms) {
                Ok(round) => Some(Box::new(round)),
                Err(e) => return self.answer_now(&id, batch, rev, Err(e)),
            }
        } else {
            None
        };
        let handling = H::default();
        self.core.begin(id.clone(), meta.progress_token.clone(), handling.clone(), serving(None));
        let request = Box::new(ServedRequest { id, request: body, scope, meta, round });
        self.events.push_back(Event::Request { request, handling });
    }

    /// The log level a 2026-07-28 request asks for (`None`: no log messages).
    fn request_log_level(&self, meta: &RequestMeta) -> Result<Option<LoggingLevel>, ErrorObject> {
        meta.log_level
            .as_ref()
            .map(|raw| serde_json::from_str::<LoggingLevel>(raw.get()))
            .transpose()
            .map_err(|e| ErrorObject::invalid_params(format!("bad logLevel: {e}")))
    }

    /// Decides the revision and client context of a request, or the error to answer.
    fn scope(&self, method: &crate::method::MethodName, meta: &RequestMeta) -> Result<Scope, ErrorObject> {
        if let Some(session) = &self.session {
            return Ok(Scope {
                revision: session.revision,
                capabilities: session.capabilities.clone(),
                client_info: Some(session.client_info.clone()),
            });
        }
        let Some(version) = &meta.protocol_version else {
            let probe = match method.known() {
                Some(Method::Ping) => Some(ProtocolVersion::LATEST_LEGACY),
                Some(Method::Discover) => Some(ProtocolVersion::LATEST),
                _ => None,
            };
            if let Some(revision) = probe {
                // A probe before any handshake: answered in the newest revision of its era.
                return Ok(Scope { revision, capabilities: Arc::default(), client_info: None });
            }
            return Err(ErrorObject::invalid_params(format!(
                "missing _meta[\"{}\"]: a 2026-07-28 request carries its protocol version; \
                 a client of an earlier revision must send `initialize` first",
                meta_keys::PROTOCOL_VERSION
            )));
        };
        let capabilities = meta.client_capabilities.as_ref().ok_or_else(|| {
            ErrorObject::invalid_params(format!("missing _meta[\"{}\"]", meta_keys::CLIENT_CAPABILITIES))
        })?;
        let requested = raw_str(version).unwrap_or_default();
        let revision = ProtocolVersion::parse(requested).filter(|v| v.is_modern()).ok_or_else(|| {
            let sent: Value = serde_json::from_str(version.get()).unwrap_or(Value::Null);
            ErrorObject::new(UNSUPPORTED_PROTOCOL_VERSION, format!("unsupported protocol version {requested:?}"))
                .with_data(json!({"supported": supported_modern(), "requested": sent}))
        })?;
        let capabilities = serde_json::from_str::<ClientCapabilities>(capabilities.get())
            .map_err(|e| ErrorObject::invalid_params(format!("bad clientCapabilities: {e}")))?;
        let client_info = meta
            .client_info
            .as_ref()
            .map(|raw| serde_json::from_str::<Implementation>(raw.get()))
            .transpose()
            .map_err(|e| ErrorObject::invalid_params(format!("bad clientInfo: {e}")))?;
        Ok(Scope { revision, capabilities: Arc::new(capabilities), client_info: client_info.map(Arc::new) })
    }

    /// Whether the server offers what a method needs, for this client.
    fn gate(&self, method: Method, scope: &Scope, offer: &dyn Offer) -> Result<(), ErrorObject> {
        let not_offered = || ErrorObject::method_not_found(method.as_str());
        if let Some(feature) = feature_of(method) {
            if feature == Feature::Logging && !self.settings.logging {
                return Err(not_offered());
            }
            return if offer.offers(feature) { Ok(()) } else { Err(not_offered()) };
        }
        if matches!(
            method,
            Method::GetTask | Method::TaskResult | Method::ListTasks | Method::CancelTask | Method::UpdateTask
        ) {
            let tasks = self.settings.tasks.ok_or_else(not_offered)?;
            if scope.revision.is_modern() {
                if !tasks.extension {
                    return Err(not_offered());
                }
                if !scope.declares_tasks_extension() {
                    return Err(tasks_extension_missing());
                }
            } else if method == Method::ListTasks && !tasks.list {
                return Err(not_offered());
            }
        }
        Ok(())
    }

    /// Answers `initialize`: negotiates the version and makes this a legacy session.
    fn initialize(&mut self, params: ClientRequest, offer: &dyn Offer) -> Result<ServerResult, ErrorObject> {
        let ClientRequest::Initialize(params) = params else {
            return Err(ErrorObject::internal("initialize read as another request"));
        };
        if self.session.is_some() {
            return Err(ErrorObject::invalid_request("the connection is already initialized"));
        }
        if self.settings.modern_only {
            // A modern-only server names what it speaks, so that a dual-era client can switch.
            let supported = supported_modern();
            return Err(ErrorObject::new(
                UNSUPPORTED_PROTOCOL_VERSION,
                format!("this server speaks only {} (no initialize)", supported.join(", ")),
            )
            .with_data(json!({"supported": supported, "requested": params.protocol_version})));
        }
        let params = *params;
        let revision = ProtocolVersion::parse(&params.protocol_version)
            .filter(|v| !v.is_modern())
            .unwrap_or(ProtocolVersion::LATEST_LEGACY);
        self.session = Some(Session {
            revision,
            capabilities: Arc::new(params.capabilities),
            client_info: Arc::new(params.client_info),
        });
        Ok(ServerResult::Initialize(Box::new(InitializeResult {
            protocol_version: revision,
            capabilities: offer.capabilities(),
            server_info: self.settings.info.clone(),
            instructions: self.settings.instructions.clone(),
        })))
    }

    fn discover(&self, offer: &dyn Offer) -> ServerResult {
        let supported = ProtocolVersion::ALL
            .iter()
            .rev()
            .filter(|v| v.is_modern() || !self.settings.modern_only)
            .map(|v| v.as_str().to_owned())
            .collect();
        ServerResult::Discover(Box::new(DiscoverResult {
            supported_versions: supported,
            capabilities: offer.capabilities(),
            instructions: self.settings.instructions.clone(),
            extra: JsonObject::new(),
        }))
    }

    fn handle_notification(&mut self, n: Notified<ClientNotification>) {
        match &n.body {
            ClientNotification::Cancelled(p) => {
                let Some(id) = &p.request_id else {
                    // A cancellation without a usable request id names nothing to cancel.
                    return;
                };
                self.cancelled_by_client(id, p.reason.clone());
            }
            ClientNotification::Initialized => {}
            ClientNotification::Progress(p) => {
                if let Some(id) = self.core.progress_of(&p.progress_token) {
                    self.events.push_back(Event::Progress { id, params: p.clone() });
                }
            }
            _ => self.events.push_back(Event::Notification(n)),
        }
    }

    fn cancelled_by_client(&mut self, id: &RequestId, reason: Option<String>) {
        let Some(serving) = self.core.end(id) else { return };
        if serving.state.listen.is_some() {
            // A listen stream the client closed: nothing more to send on it.
            return;
        }
        if let Some(key) = serving.state.batch {
            // A batch still answers every request: this one with nothing.
            if let Some(b) = self.batches.get_mut(&key) {
                b.waiting = b.waiting.saturating_sub(1);
            }
            self.flush_batch(key);
        }
        self.events.push_back(Event::Cancelled { id: id.clone(), reason, handling: serving.handling });
    }

    fn handle_response(&mut self, response: Response) {
        let Some(id) = response.id else {
            // An error response without an id answers nothing we can name.
            return;
        };
        let outcome = response.outcome.map_err(Failure::Error);
        if let Some((_, waiter, outcome)) = self.core.complete(&id, outcome) {
            self.events.push_back(Event::Response { id, waiter, outcome });
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

    /// When [`Self::handle_timeout`] must be called next.
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

    /// Reports progress on a request being served. Values must increase; nothing is sent if
    /// the client did not ask for progress, or once the request is answered.
    pub fn progress(
        &mut self,
        id: &RequestId,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
        meta: Option<&Meta>,
    ) -> Result<(), ProgressError> {
        let params = self.core.progress(id, progress, total, message)?;
        let rev = self.core.serving.get(id).map_or(ProtocolVersion::LATEST, |s| s.state.revision);
        let text = codec::write_server_notification(&ServerNotification::Progress(params), meta, rev);
        self.core.notify(Some(id.clone()), Method::Progress.into(), text);
        Ok(())
    }

    /// Sends a log message, related to a request being served (or to the session), if its
    /// level passes the client's threshold; returns whether it was sent.
    pub fn log(
        &mut self,
        related: Option<&RequestId>,
        level: LoggingLevel,
        logger: Option<String>,
        data: Value,
        meta: Option<&Meta>,
    ) -> bool {
        if !self.settings.logging {
            return false;
        }
        let (source, rev) = match related.and_then(|id| self.core.serving.get(id)) {
            Some(s) => (s.state.log, s.state.revision),
            None => match &self.session {
                Some(session) => (LogSource::Session, session.revision),
                None => return false,
            },
        };
        let threshold = match source {
            LogSource::Session => self.log_level,
            LogSource::Fixed(level) => level,
        };
        if threshold.is_none_or(|t| level < t) {
            return false;
        }
        let message = ServerNotification::Log(LoggingMessageParams { level, logger, data });
        let text = codec::write_server_notification(&message, meta, rev);
        self.core.notify(related.cloned(), Method::LogMessage.into(), text);
        true
    }

    /// Sends a notification on the session (legacy era), written for its revision; `false`
    /// when there is no session.
    pub fn notify(&mut self, notification: &ServerNotification, meta: Option<&Meta>) -> bool {
        let Some(session) = &self.session else { return false };
        let text = codec::write_server_notification(notification, meta, session.revision);
        let method = MethodName::parse(notification.method());
        self.core.notify(None, method, text);
        true
    }

    /// Tells the client about a change: a legacy session by notification (if the server
    /// offers what changed, or the client subscribed to the resource), each open listen
    /// stream if its filter asks for it.
    pub fn announce(&mut self, change: &Change, offer: &dyn Offer) {
        if let Some(session) = &self.session {
            let notification = match change {
                Change::Tools if offer.offers(Feature::Tools) => Some(ServerNotification::ToolsListChanged),
                Change::Prompts if offer.offers(Feature::Prompts) => Some(ServerNotification::PromptsListChanged),
                Change::Resources if offer.offers(Feature::Resources) => Some(ServerNotification::ResourcesListChanged),
                Change::ResourceUpdated(uri) if self.subscriptions.contains(uri) => {
                    Some(ServerNotification::ResourceUpdated(crate::types::ResourceUpdatedParams { uri: uri.clone() }))
                }
                _ => None,
            };
            if let Some(n) = notification {
                let text = codec::write_server_notification(&n, None, session.revision);
                self.core.notify(None, MethodName::parse(n.method()), text);
            }
        }
        let streams: Vec<(RequestId, ProtocolVersion, ServerNotification)> = self
            .core
            .serving
            .iter()
            .filter_map(|(id, s)| {
                let filter = s.state.listen.as_ref()?;
                listen_notification(change, filter).map(|n| (id.clone(), s.state.revision, n))
            })
            .collect();
        for (id, rev, n) in streams {
            let text = codec::write_server_notification(&n, Some(&subscription_meta(&id)), rev);
            self.core.notify(Some(id), MethodName::parse(n.method()), text);
        }
    }

    /// Whether a listen stream is open.
    pub fn is_listening(&self) -> bool {
        self.core.serving.values().any(|s| s.state.listen.is_some())
    }

    /// Suggests that the transport close the response stream of request `id` (SSE polling).
    pub fn close_stream(&mut self, id: &RequestId) {
        if self.core.serving.contains_key(id) {
            self.core.transmit_close_stream(id.clone());
        }
    }

    /// Sends a request to the client (legacy era), while serving `related` if given; the
    /// answer comes as an [`Event::Response`] carrying `waiter`. Refused when there is no
    /// legacy session, or the client did not declare the capability the request needs.
    pub fn request(
        &mut self,
        question: &ServerRequest,
        meta: Option<&Meta>,
        options: SendOptions,
        waiter: W,
        now: Now,
    ) -> Result<RequestId, NotAsked> {
        let session = self.session.as_ref().ok_or(NotAsked::NoSession)?;
        let scope = Scope { revision: session.revision, capabilities: session.capabilities.clone(), client_info: None };
        if let Some(capability) = scope.lacks(question) {
            return Err(NotAsked::MissingCapability(capability));
        }
        let (id, _) = self.core.allocate(false);
        let text = codec::write_server_request(&id, question, meta, session.revision);
        let written =
            Written { id: id.clone(), method: question.method().into(), text, token: None, headers: Vec::new() };
        self.core.send(written, &options, waiter, now.instant);
        Ok(id)
    }

    /// Gives up on a request of ours: the client is told, and a late answer is ignored.
    /// Returns its waiter if it was still waiting.
    pub fn cancel(&mut self, id: &RequestId, reason: &str) -> Option<W> {
        self.core.cancel(id, reason)
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

    /// Ends every listen stream with its final result (the connection or server is closing).
    pub fn end_listens(&mut self) {
        let listens: Vec<RequestId> =
            self.core.serving.iter().filter(|(_, s)| s.state.listen.is_some()).map(|(id, _)| id.clone()).collect();
        for id in listens {
            let result = ServerResult::Empty(EmptyResult { meta: Some(subscription_meta(&id)) });
            self.respond(&id, Ok(result));
        }
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

    /// The revision of a request being served.
    pub fn revision_of(&self, id: &RequestId) -> Option<ProtocolVersion> {
        self.core.serving.get(id).map(|s| s.state.revision)
    }

    /// The progress token of a request being served, if it asked for progress.
    pub fn progress_token(&self, id: &RequestId) -> Option<&ProgressToken> {
        self.core.serving.get(id).and_then(|s| s.progress.token())
    }
}

/// Why a request to the client was not sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotAsked {
    /// There is no legacy session to send it on (2026-07-28 asks in rounds instead).
    NoSession,
    /// The client did not declare the capability the request needs.
    MissingCapability(&'static str),
}

/// The `-32021` error of a task method called by a 2026-07-28 client without the extension.
pub fn tasks_extension_missing() -> ErrorObject {
    missing_capability(
        JsonObject::from_iter([("extensions".to_owned(), json!({ TASKS_EXTENSION: {} }))]),
        &format!("the extension {TASKS_EXTENSION}"),
    )
}

fn subscription_meta(id: &RequestId) -> Meta {
    Map::from_iter([(meta_keys::SUBSCRIPTION_ID.to_owned(), id.to_value())])
}

/// The subset of a listen filter the server honours.
fn honoured(filter: &SubscriptionFilter, caps: &ServerCapabilities) -> SubscriptionFilter {
    let flag = |asked: Option<bool>, offered: bool| (asked == Some(true) && offered).then_some(true);
    SubscriptionFilter {
        tools_list_changed: flag(filter.tools_list_changed, caps.tools.is_some()),
        prompts_list_changed: flag(filter.prompts_list_changed, caps.prompts.is_some()),
        resources_list_changed: flag(filter.resources_list_changed, caps.resources.is_some()),
        resource_subscriptions: filter.resource_subscriptions.clone().filter(|_| caps.resources.is_some()),
    }
}

/// The notification a change means for a listen stream with this filter, if any.
fn listen_notification(change: &Change, filter: &SubscriptionFilter) -> Option<ServerNotification> {
    let wants = |flag: Option<bool>| flag == Some(true);
    match change {
        Change::Tools if wants(filter.tools_list_changed) => Some(ServerNotification::ToolsListChanged),
        Change::Prompts if wants(filter.prompts_list_changed) => Some(ServerNotification::PromptsListChanged),
        Change::Resources if wants(filter.resources_list_changed) => Some(ServerNotification::ResourcesListChanged),
        Change::ResourceUpdated(uri) if filter.resource_subscriptions.as_ref().is_some_and(|s| s.contains(uri)) => {
            Some(ServerNotification::ResourceUpdated(crate::types::ResourceUpdatedParams { uri: uri.clone() }))
        }
        _ => None,
    }
}
