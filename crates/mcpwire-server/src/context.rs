//! What a handler gets besides its arguments: who asks, in which revision, and ways to
//! report progress, log, notice cancellation and ask the client for things.
//!
//! Asking works the same in both eras for the handler's author:
//!
//! - Legacy era: each question is a real request to the client, awaited.
//! - 2026-07-28: the server may not send requests, so a question ends the handler early
//!   instead: the ask returns [`HandlerError::InputRequired`], which the handler propagates
//!   with `?`, and the runtime answers `input_required` with every question gathered and a
//!   sealed `requestState`. The client answers and retries the whole request; the handler
//!   runs again from the start, and this time each ask finds its answer (by key: the name the
//!   author gave, or `input-N` for the N-th unnamed question) and returns at once.
//!
//! So a handler must be safe to re-run up to its last question: keep side effects after it.
//! Answers of earlier rounds travel in the sealed `requestState`, and so does anything set
//! with [`Context::set_round_state`].

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use mcpwire_protocol::engine::progress::{ProgressError, ProgressTracker};
use mcpwire_protocol::engine::rounds::InputRound;
use mcpwire_protocol::engine::{missing_capability, Scope};
use mcpwire_protocol::message::ServerRequest;
use mcpwire_protocol::types::{
    ClientCapabilities, CreateMessageParams, CreateMessageResult, ElicitParams, ElicitResult, Implementation,
    ListRootsResult, LoggingLevel, Meta, ProgressToken,
};
use mcpwire_protocol::{Principal, ProtocolVersion, RequestId};
use parking_lot::Mutex;
use serde::de::DeserializeOwned;
use serde_json::{json, Map, Value};
use tokio_util::sync::CancellationToken;

use crate::client_task;
use crate::error::{AskError, HandlerError};
use crate::link::{Link, Sink};
use crate::question::ask;
use crate::state::StateMap;
use crate::tasks::{related_task_meta, TaskLink};

/// A question for the client.
#[derive(Debug, Clone, PartialEq)]
pub enum InputRequest {
    /// Ask the user (`elicitation/create`).
    Elicit(ElicitParams),
    /// Ask the client's model (`sampling/createMessage`).
    Sample(CreateMessageParams),
    /// Ask for the client's roots (`roots/list`).
    ListRoots,
}

impl InputRequest {
    /// The method of the request this question is.
    pub fn method(&self) -> mcpwire_protocol::Method {
        match self {
            Self::Elicit(_) => mcpwire_protocol::Method::Elicit,
            Self::Sample(_) => mcpwire_protocol::Method::CreateMessage,
            Self::ListRoots => mcpwire_protocol::Method::ListRoots,
        }
    }

    /// The request this question is.
    pub fn to_request(&self) -> ServerRequest {
        match self {
            Self::Elicit(p) => ServerRequest::Elicit(p.clone()),
            Self::Sample(p) => ServerRequest::CreateMessage(p.clone()),
            Self::ListRoots => ServerRequest::ListRoots,
        }
    }
}

/// The context of one request, given to its handler. Cheap to clone.
#[derive(Clone)]
pub struct Context {
    inner: Arc<Inner>,
    /// The application's state, given to the server builder (of the mounted server whose
    /// handler runs, for a server mounted in another).
    state: Arc<StateMap>,
}

struct Inner {
    link: Arc<Link>,
    id: RequestId,
    /// Where the request's frames go (one HTTP request's stream); `None`: the connection.
    reply: Option<Sink>,
    scope: Scope,
    progress_token: Option<ProgressToken>,
    cancel: CancellationToken,
    request_timeout: Duration,
    /// The answers and questions of a 2026-07-28 multi-round request; `None` in the legacy
    /// era, where questions are real requests to the client.
    round: Option<Mutex<Box<InputRound>>>,
    /// The task this handler runs as, if it runs as one (set when a 2026-07-28 call is
    /// handed to a task, or from the start for a 2025-11-25 task): its messages carry the
    /// task's id, and its questions go through the task.
    task: OnceLock<Arc<TaskLink>>,
    /// Progress of a handler running as a task, whose request is answered already: the
    /// rules are kept here instead of by the engine.
    task_progress: Mutex<ProgressTracker>,
    /// Who the request comes from, as its transport authorized it.
    principal: Option<Arc<Principal>>,
}

/// What a [`Context`] is made of.
pub(crate) struct ContextParts {
    pub(crate) link: Arc<Link>,
    pub(crate) id: RequestId,
    pub(crate) reply: Option<Sink>,
    pub(crate) scope: Scope,
    pub(crate) progress_token: Option<ProgressToken>,
    pub(crate) cancel: CancellationToken,
    pub(crate) request_timeout: Duration,
    pub(crate) round: Option<Box<InputRound>>,
    pub(crate) task: Option<Arc<TaskLink>>,
    pub(crate) state: Arc<StateMap>,
}

impl Context {
    pub(crate) fn new(parts: ContextParts) -> Self {
        let task = OnceLock::new();
        let principal = parts.link.principal();
        if let Some(link) = parts.task {
            let _ = task.set(link);
        }
        Self {
            inner: Arc::new(Inner {
                task_progress: Mutex::new(ProgressTracker::new(parts.progress_token.clone())),
                link: parts.link,
                id: parts.id,
                reply: parts.reply,
                scope: parts.scope,
                progress_token: parts.progress_token,
                cancel: parts.cancel,
                request_timeout: parts.request_timeout,
                round: parts.round.map(Mutex::new),
                task,
                principal,
            }),
            state: parts.state,
        }
    }

    /// The same context, its handler reaching `state` (a mounted server's own).
    pub(crate) fn with_state(&self, state: Arc<StateMap>) -> Context {
        Context { inner: self.inner.clone(), state }
    }

    /// The application state of type `T` given to [`crate::ServerBuilder::state`], if any.
    /// (Handlers written as plain functions take it as a [`crate::authoring::State`] argument.)
    pub fn state<T: Send + Sync + 'static>(&self) -> Option<&T> {
        self.state.get::<T>()
    }

    /// The id of the request being handled.
    pub fn request_id(&self) -> &RequestId {
        &self.inner.id
    }

    /// Which connection the request came on, unique in the process for as long as it runs:
    /// a stdio connection, or a legacy HTTP session (each of its HTTP requests has the same
    /// id). Every stateless (2026-07-28) HTTP request is a connection of its own. What a
    /// limit kept per client keys on when there is nothing better (a principal).
    pub fn connection_id(&self) -> u64 {
        self.inner.link.id()
    }

    /// The id of the legacy session the request came in, as its transport knows it (the
    /// HTTP `Mcp-Session-Id`); `None` over stdio and for stateless requests.
    pub fn session_id(&self) -> Option<&str> {
        self.inner.link.session_id()
    }

    /// Who the request comes from, as its transport's authorization established it (HTTP
    /// behind a resource server): subject, client, scopes, claims. `None` over a transport
    /// without authorization (stdio, an HTTP endpoint left open). (Handlers written as plain
    /// functions take it as a `Principal` argument, or `Option<Principal>`.)
    pub fn principal(&self) -> Option<&Principal> {
        self.inner.principal.as_deref()
    }

    /// The protocol revision of this request.
    pub fn revision(&self) -> ProtocolVersion {
        self.inner.scope.revision
    }

    /// The client's capabilities (negotiated, or declared on this request in 2026-07-28).
    pub fn client_capabilities(&self) -> &ClientCapabilities {
        &self.inner.scope.capabilities
    }

    /// Who the client says it is.
    pub fn client_info(&self) -> Option<&Implementation> {
        self.inner.scope.client_info.as_deref()
    }

    pub(crate) fn scope(&self) -> &Scope {
        &self.inner.scope
    }

    pub(crate) fn link(&self) -> &Arc<Link> {
        &self.inner.link
    }

    /// Whether this is a multi-round request (2026-07-28).
    pub(crate) fn has_round(&self) -> bool {
        self.inner.round.is_some()
    }

    /// The round of a multi-round request, when this is one.
    pub(crate) fn round(&self) -> Option<InputRound> {
        self.inner.round.as_ref().map(|r| InputRound::clone(&r.lock()))
    }

    /// The context of a 2025-11-25 task's handler, made from its request's: its messages go
    /// to the connection (the request is answered), `cancel` stops it.
    pub(crate) fn for_task(&self, task: Arc<TaskLink>, cancel: CancellationToken) -> Context {
        let inner = &self.inner;
        Context::new(ContextParts {
            link: inner.link.clone(),
            id: inner.id.clone(),
            reply: None,
            scope: inner.scope.clone(),
            // The request's progress token stays valid for the task's life.
            progress_token: inner.progress_token.clone(),
            cancel,
            request_timeout: inner.request_timeout,
            round: None,
            task: Some(task),
            state: self.state.clone(),
        })
    }

    /// Makes this the context of the task `link`.
    pub(crate) fn attach_task(&self, link: Arc<TaskLink>) {
        let _ = self.inner.task.set(link);
    }

    pub(crate) fn task(&self) -> Option<&Arc<TaskLink>> {
        self.inner.task.get()
    }

    /// The token cancelled when the client cancels this request (or the connection closes).
    /// The handler's future is also dropped then; this lets work spawned elsewhere stop too.
    /// A handler running as a task sees it fire on `tasks/cancel`, when the task's `ttl`
    /// elapses, or (2025-11-25) when its session ends; it then has a short grace period
    /// ([`crate::TaskConfig::cancel_grace`]) before its future is dropped.
    pub fn cancellation(&self) -> &CancellationToken {
        &self.inner.cancel
    }

    /// Whether the request was cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.inner.cancel.is_cancelled()
    }

    /// Suggests that the transport close this request's response stream now, the client
    /// resuming it later (HTTP with SSE polling, SEP-1699: long calls need not hold a
    /// connection). Later messages of the request are kept for the client to fetch. A hint:
    /// on stdio, and where the client cannot resume, nothing happens.
    pub async fn close_response_stream(&self) {
        let link = &self.inner.link;
        let (_, out) = link.run(|peer| peer.close_stream(&self.inner.id));
        link.send(out.transmits, self.inner.reply.as_ref()).await;
    }

    /// Whether the client asked for progress on this request.
    pub fn wants_progress(&self) -> bool {
        self.inner.progress_token.is_some()
    }

    /// The `_meta` that ties a message of a task's handler to its task.
    fn task_meta(&self) -> Option<Meta> {
        let task = self.inner.task.get()?;
        match related_task_meta(&task.id) {
            Value::Object(meta) => Some(meta),
            _ => None,
        }
    }

    /// A 2026-07-28 task sends no progress or log notifications (the extension has none).
    fn in_modern_task(&self) -> bool {
        self.inner.task.get().is_some_and(|t| t.modern)
    }

    /// The task's progress is over (its handler ended).
    pub(crate) fn finish(&self) {
        self.inner.task_progress.lock().finish();
    }

    /// Reports progress. Values must increase; nothing is sent if the client did not ask for
    /// progress ([`ProgressError::NotRequested`]) or after the response.
    pub async fn progress(
        &self,
        progress: f64,
        total: Option<f64>,
        message: Option<&str>,
    ) -> Result<(), ProgressError> {
        let inner = &self.inner;
        let link = &inner.link;
        let message = message.map(str::to_owned);
        let Some(task) = inner.task.get() else {
            let (sent, out) = link.run(|peer| peer.progress(&inner.id, progress, total, message, None));
            link.send(out.transmits, inner.reply.as_ref()).await;
            return sent;
        };
        if task.modern {
            return Err(ProgressError::Finished);
        }
        // A 2025-11-25 task: its request is answered, and its token stays valid for its life.
        let token = inner.task_progress.lock().advance(progress)?.clone();
        let params = mcpwire_protocol::types::ProgressParams { progress_token: token, progress, total, message };
        let notification = mcpwire_protocol::message::ServerNotification::Progress(params);
        let meta = self.task_meta();
        let (_, out) = link.run(|peer| peer.notify(&notification, meta.as_ref()));
        link.send(out.transmits, None).await;
        Ok(())
    }

    /// Sends a log message to the client if its level passes the client's threshold.
    /// Returns whether it was sent.
    pub async fn log(&self, level: LoggingLevel, data: impl Into<Value>) -> bool {
        self.log_as(level, None, data).await
    }

    /// Like [`Self::log`], naming the logger.
    pub async fn log_as(&self, level: LoggingLevel, logger: Option<&str>, data: impl Into<Value>) -> bool {
        if self.in_modern_task() {
            return false;
        }
        let inner = &self.inner;
        let meta = self.task_meta();
        let logger = logger.map(str::to_owned);
        let data = data.into();
        let (sent, out) = inner.link.run(|peer| peer.log(Some(&inner.id), level, logger, data, meta.as_ref()));
        let reply = if inner.task.get().is_some() { None } else { inner.reply.as_ref() };
        inner.link.send(out.transmits, reply).await;
        sent
    }

    /// The error for a question the client cannot be asked: the capability it needs is
    /// missing (in 2026-07-28, `-32021` naming it).
    fn lacking(&self, request: &ServerRequest) -> Result<(), HandlerError> {
        let Some(name) = self.inner.scope.lacks(request) else { return Ok(()) };
        if self.revision().is_modern() {
            let required = Map::from_iter([(name.to_owned(), json!({}))]);
            return Err(HandlerError::Protocol(missing_capability(required, &format!("`{name}`"))));
        }
        Err(AskError::Unsupported(name).into())
    }

    /// Asks several questions at once, keyed by name; returns every answer by key.
    ///
    /// Legacy era: the requests go to the client together and are awaited. 2026-07-28: the
    /// answers come from the client's retry; until every one is there this returns
    /// [`HandlerError::InputRequired`] (propagate it with `?`).
    pub async fn ask_all(
        &self,
        questions: Vec<(String, InputRequest)>,
    ) -> Result<HashMap<String, Value>, HandlerError> {
        let questions: Vec<(String, ServerRequest)> = questions.into_iter().map(|(k, q)| (k, q.to_request())).collect();
        for (_, q) in &questions {
            self.lacking(q)?;
        }
        if let Some(task) = self.inner.task.get() {
            return task.ask(self, questions).await;
        }
        let Some(round) = &self.inner.round else {
            let asks = questions.iter().map(|(key, q)| async move {
                let answer = self.ask_on_connection(q).await?;
                Ok::<_, HandlerError>((key.clone(), answer))
            });
            return futures::future::try_join_all(asks).await.map(HashMap::from_iter);
        };
        let mut round = round.lock();
        let mut answers = HashMap::new();
        let mut missing = false;
        for (key, q) in questions {
            match round.answer(&key, &q) {
                Some(answer) => drop(answers.insert(key, answer)),
                // A missing or malformed answer: asked (again).
                None => missing = true,
            }
        }
        if missing {
            return Err(HandlerError::InputRequired);
        }
        Ok(answers)
    }

    /// Asks one question on the connection (legacy era): as a task when the client declared
    /// it answers this kind of question as one (2025-11-25 `tasks.requests`), with the time
    /// to live the author set in the params or else the request timeout; otherwise as a
    /// plain request (any `task` the author set is dropped: the client would not know it).
    async fn ask_on_connection(&self, question: &ServerRequest) -> Result<Value, HandlerError> {
        let inner = &self.inner;
        let reply = inner.reply.as_ref();
        let as_task = self.revision() == ProtocolVersion::V2025_11_25
            && inner.scope.capabilities.takes_task_requests(question.method());
        if as_task {
            let asking = client_task::Asking {
                link: &inner.link,
                related: inner.id.clone(),
                reply,
                timeout: inner.request_timeout,
            };
            return client_task::ask_as_task(&asking, &client_task::with_task(question, inner.request_timeout)).await;
        }
        if question.task().is_some() {
            return self.ask_client(&question.without_task(), None, reply).await;
        }
        self.ask_client(question, None, reply).await
    }

    /// Sends one question to the client (legacy era) and waits for its answer, at most the
    /// request timeout. Dropping the returned future withdraws the question (the client is
    /// told).
    pub(crate) async fn ask_client(
        &self,
        question: &ServerRequest,
        meta: Option<&Meta>,
        reply: Option<&Sink>,
    ) -> Result<Value, HandlerError> {
        let inner = &self.inner;
        ask(&inner.link, question, meta, Some(inner.id.clone()), reply, inner.request_timeout).await
    }

    async fn ask_one<T: DeserializeOwned>(&self, key: Option<&str>, question: InputRequest) -> Result<T, HandlerError> {
        let key = match (key, &self.inner.round) {
            (Some(k), _) => k.to_owned(),
            (None, Some(round)) => round.lock().next_unnamed_key(),
            (None, None) => "input".to_owned(),
        };
        let method = question.to_request().method();
        let mut answers = self.ask_all(vec![(key.clone(), question)]).await?;
        let answer = answers.remove(&key).unwrap_or_default();
        serde_json::from_value(answer).map_err(|e| AskError::malformed(method, e).into())
    }

    /// Asks the client's model for a completion (`sampling/createMessage`).
    ///
    /// A 2025-11-25 client that declares `tasks.requests.sampling.createMessage` is asked
    /// with a task: it answers with the task at once, the server polls `tasks/get` at the
    /// client's interval and reads `tasks/result`, and this returns the answer as if it had
    /// come at once. The task lives for `params.task`'s `ttl` if the author set one, else
    /// the request timeout; one that does not end by then is cancelled and fails with
    /// [`AskError::ClientTaskExpired`] (a tool error, from a tool). Dropping the future
    /// cancels the client's task.
    pub async fn sample(&self, params: CreateMessageParams) -> Result<CreateMessageResult, HandlerError> {
        self.ask_one(None, InputRequest::Sample(params)).await
    }

    /// Like [`Self::sample`], with a key of the author's choosing (stable across code changes).
    pub async fn sample_as(&self, key: &str, params: CreateMessageParams) -> Result<CreateMessageResult, HandlerError> {
        self.ask_one(Some(key), InputRequest::Sample(params)).await
    }

    /// Asks the user for information (`elicitation/create`).
    ///
    /// A 2025-11-25 client that declares `tasks.requests.elicitation.create` is asked with a
    /// task, as [`Self::sample`] describes.
    pub async fn elicit(&self, params: ElicitParams) -> Result<ElicitResult, HandlerError> {
        self.ask_one(None, InputRequest::Elicit(params)).await
    }

    /// Like [`Self::elicit`], with a key of the author's choosing.
    pub async fn elicit_as(&self, key: &str, params: ElicitParams) -> Result<ElicitResult, HandlerError> {
        self.ask_one(Some(key), InputRequest::Elicit(params)).await
    }

    /// Asks the client for its roots (`roots/list`).
    pub async fn list_roots(&self) -> Result<ListRootsResult, HandlerError> {
        self.ask_one(None, InputRequest::ListRoots).await
    }

    /// Like [`Self::list_roots`], with a key of the author's choosing.
    pub async fn list_roots_as(&self, key: &str) -> Result<ListRootsResult, HandlerError> {
        self.ask_one(Some(key), InputRequest::ListRoots).await
    }

    /// The state set with [`Self::set_round_state`] in the previous round of this request
    /// (2026-07-28), if any. It came back sealed: the client could not alter it.
    pub fn round_state(&self) -> Option<Value> {
        self.inner.round.as_ref()?.lock().carried().cloned()
    }

    /// Sets state to carry to the next round of this request (2026-07-28; ignored in the
    /// legacy era, where the handler simply keeps running).
    pub fn set_round_state(&self, state: Value) {
        if let Some(round) = &self.inner.round {
            round.lock().set_next(state);
        }
    }
}
