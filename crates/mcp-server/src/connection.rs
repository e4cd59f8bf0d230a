//! One connection: the read loop, the lifecycle of both eras, cancellation, notifications.
//!
//! Each request is classified first: an `initialize` makes the connection legacy (for the
//! negotiated revision); before that, a request whose `_meta` names a protocol version is a
//! stateless 2026-07-28 request; anything else is refused with a message that says what
//! to send. Each request runs on the connection until it first waits (most are answered at
//! once), then as a task of its own, so a handler that awaits never blocks the connection and
//! each one can be cancelled. (A handler that computes for long without awaiting should hand
//! that work to `spawn_blocking`.)

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use futures::FutureExt;
use mcp_protocol::engine::request_state::request_fingerprint;
use mcp_protocol::error::UNSUPPORTED_PROTOCOL_VERSION;
use mcp_protocol::json;
use mcp_protocol::jsonrpc::{self, DecodeError, Incoming, Message, Notification, Request};
use mcp_protocol::types::{
    meta_keys, ClientCapabilities, Implementation, InitializeParams, InitializeResult, LoggingLevel, ProgressToken,
    SubscriptionFilter,
};
use mcp_protocol::{codec, ErrorObject, ProtocolVersion, RequestId};
use mcp_transport::{Connection, Frame, FrameError, Inbound};
use serde::Deserialize;
use serde_json::{json, Value};
use tokio::sync::broadcast;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::context::{Context, ContextParts, LogThreshold};
use crate::input::InputRound;
use crate::methods::Answer;
use crate::outbound::Outbound;
use crate::registry::Change;
use crate::server::Server;

/// What the client negotiated with `initialize`.
#[derive(Clone)]
pub(crate) struct LegacySession {
    pub(crate) version: ProtocolVersion,
    pub(crate) capabilities: Arc<ClientCapabilities>,
    pub(crate) client_info: Arc<Implementation>,
}

/// How one request is to be served.
#[derive(Clone)]
pub(crate) struct RequestScope {
    pub(crate) revision: ProtocolVersion,
    pub(crate) capabilities: Arc<ClientCapabilities>,
    pub(crate) client_info: Option<Arc<Implementation>>,
    pub(crate) log: LogThreshold,
}

/// A `subscriptions/listen` stream open on this connection (2026-07-28).
/// Removes a listen stream's end token when the stream ends, however it ends.
struct ListenGuard<'a> {
    state: &'a ConnectionState,
    id: &'a RequestId,
}

impl Drop for ListenGuard<'_> {
    fn drop(&mut self) {
        lock(&self.state.listens).remove(self.id);
    }
}

pub(crate) struct ConnectionState {
    pub(crate) server: Server,
    pub(crate) outbound: Outbound,
    legacy: Mutex<Option<LegacySession>>,
    pub(crate) log_level: Arc<Mutex<Option<LoggingLevel>>>,
    pub(crate) subscriptions: Mutex<HashSet<String>>,
    in_flight: Mutex<HashMap<RequestId, CancellationToken>>,
    /// The end tokens of open `subscriptions/listen` streams (2026-07-28).
    listens: Mutex<HashMap<RequestId, CancellationToken>>,
    closing: CancellationToken,
    /// Who the tasks made on this connection belong to (2025-11-25: the session).
    task_owner: std::sync::OnceLock<String>,
    /// Cancelled when the connection ends: the handlers of its tasks stop.
    pub(crate) tasks_end: CancellationToken,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The methods each era knows; anything else is "method not found".
fn known_in(method: &str, rev: ProtocolVersion) -> bool {
    let common = matches!(
        method,
        "tools/list"
            | "tools/call"
            | "resources/list"
            | "resources/templates/list"
            | "resources/read"
            | "prompts/list"
            | "prompts/get"
            | "completion/complete"
    );
    if rev.is_modern() {
        // Tasks are the `io.modelcontextprotocol/tasks` extension here: no tasks/result or tasks/list.
        common
            || matches!(
                method,
                "server/discover" | "subscriptions/listen" | "tasks/get" | "tasks/update" | "tasks/cancel"
            )
    } else {
        common
            || matches!(method, "ping" | "resources/subscribe" | "resources/unsubscribe" | "logging/setLevel")
            || (rev == ProtocolVersion::V2025_11_25
                && matches!(method, "tasks/get" | "tasks/result" | "tasks/list" | "tasks/cancel"))
    }
}

impl ConnectionState {
    pub(crate) fn new(server: Server, outbound: Outbound) -> Self {
        Self {
            server,
            outbound,
            legacy: Mutex::new(None),
            log_level: Arc::new(Mutex::new(Some(LoggingLevel::Debug))),
            subscriptions: Mutex::default(),
            in_flight: Mutex::default(),
            listens: Mutex::default(),
            closing: CancellationToken::new(),
            task_owner: std::sync::OnceLock::new(),
            tasks_end: CancellationToken::new(),
        }
    }

    /// Ends a session that has no connection loop: what the loop does when the client goes.
    pub(crate) fn close(&self) {
        self.outbound.fail_all();
        self.end_listens();
        self.tasks_end.cancel();
        if lock(&self.in_flight).is_empty() {
            self.closing.cancel();
            return;
        }
        // Requests already running get the grace period to finish.
        let (grace, closing) = (self.server.inner.config.shutdown_grace, self.closing.clone());
        tokio::spawn(async move {
            tokio::time::sleep(grace).await;
            closing.cancel();
        });
    }

    /// Who the tasks made on this connection belong to, drawn when first needed.
    pub(crate) fn task_owner(&self) -> &str {
        self.task_owner.get_or_init(crate::tasks::random_id)
    }

    fn session(&self) -> Option<LegacySession> {
        lock(&self.legacy).clone()
    }

    /// The revision of the connection's legacy session, if it has one.
    pub(crate) fn legacy_version(&self) -> Option<ProtocolVersion> {
        lock(&self.legacy).as_ref().map(|s| s.version)
    }

    async fn send_error(&self, id: Option<&RequestId>, error: &ErrorObject) {
        self.outbound.send_frame(jsonrpc::encode_error(id, error)).await;
    }

    /// Decides the revision and client context of a request, or the error to answer.
    fn scope(&self, req: &Request) -> Result<RequestScope, ErrorObject> {
        if let Some(session) = self.session() {
            return Ok(RequestScope {
                revision: session.version,
                capabilities: session.capabilities,
                client_info: Some(session.client_info),
                log: LogThreshold::Shared(self.log_level.clone()),
            });
        }
        let meta = json::param(req.params.as_ref(), "_meta");
        let version = meta.and_then(|m| json::member(m, meta_keys::PROTOCOL_VERSION));
        let Some(version) = version else {
            if req.method == "ping" || req.method == "server/discover" {
                // A probe before any handshake: answered in the newest revision of its era.
                let revision =
                    if req.method == "ping" { ProtocolVersion::LATEST_LEGACY } else { ProtocolVersion::LATEST };
                return Ok(RequestScope {
                    revision,
                    capabilities: Arc::default(),
                    client_info: None,
                    log: LogThreshold::Fixed(None),
                });
            }
            return Err(ErrorObject::invalid_params(format!(
                "missing _meta[\"{}\"]: a 2026-07-28 request carries its protocol version; \
                 a client of an earlier revision must send `initialize` first",
                meta_keys::PROTOCOL_VERSION
            )));
        };
        let capabilities = meta.and_then(|m| json::member(m, meta_keys::CLIENT_CAPABILITIES)).ok_or_else(|| {
            ErrorObject::invalid_params(format!("missing _meta[\"{}\"]", meta_keys::CLIENT_CAPABILITIES))
        })?;
        let requested = version.as_str().unwrap_or_default();
        let revision = ProtocolVersion::parse(requested).filter(|v| v.is_modern()).ok_or_else(|| {
            let supported: Vec<&str> =
                ProtocolVersion::ALL.iter().filter(|v| v.is_modern()).map(|v| v.as_str()).collect();
            ErrorObject::new(UNSUPPORTED_PROTOCOL_VERSION, format!("unsupported protocol version {requested:?}"))
                .with_data(json!({"supported": supported, "requested": version}))
        })?;
        let capabilities: ClientCapabilities = ClientCapabilities::deserialize(capabilities)
            .map_err(|e| ErrorObject::invalid_params(format!("bad clientCapabilities: {e}")))?;
        let client_info = meta
            .and_then(|m| json::member(m, meta_keys::CLIENT_INFO))
            .map(Implementation::deserialize)
            .transpose()
            .map_err(|e| ErrorObject::invalid_params(format!("bad clientInfo: {e}")))?;
        let level = meta
            .and_then(|m| json::member(m, meta_keys::LOG_LEVEL))
            .map(LoggingLevel::deserialize)
            .transpose()
            .map_err(|e| ErrorObject::invalid_params(format!("bad logLevel: {e}")))?;
        Ok(RequestScope {
            revision,
            capabilities: Arc::new(capabilities),
            client_info: client_info.map(Arc::new),
            log: LogThreshold::Fixed(level),
        })
    }

    /// Answers `initialize`: negotiates the version and makes this a legacy connection.
    fn initialize(&self, req: &Request) -> Result<Value, ErrorObject> {
        let mut legacy = lock(&self.legacy);
        if legacy.is_some() {
            return Err(ErrorObject::invalid_request("the connection is already initialized"));
        }
        let params: InitializeParams = serde_json::from_value(req.params.clone().unwrap_or(Value::Null))
            .map_err(|e| ErrorObject::invalid_params(format!("initialize: {e}")))?;
        if self.server.inner.config.modern_only {
            // A modern-only server names what it speaks, so that a dual-era client can switch.
            let supported: Vec<&str> =
                ProtocolVersion::ALL.iter().filter(|v| v.is_modern()).map(|v| v.as_str()).collect();
            return Err(ErrorObject::new(
                UNSUPPORTED_PROTOCOL_VERSION,
                format!("this server speaks only {} (no initialize)", supported.join(", ")),
            )
            .with_data(json!({"supported": supported, "requested": params.protocol_version})));
        }
        let version = ProtocolVersion::parse(&params.protocol_version)
            .filter(|v| !v.is_modern())
            .unwrap_or(ProtocolVersion::LATEST_LEGACY);
        *legacy = Some(LegacySession {
            version,
            capabilities: Arc::new(params.capabilities),
            client_info: Arc::new(params.client_info),
        });
        drop(legacy);
        let server = &self.server.inner;
        let result = InitializeResult {
            protocol_version: version,
            capabilities: self.server.capabilities(),
            server_info: server.info.clone(),
            instructions: server.instructions.clone(),
        };
        let mut value = serde_json::to_value(result).map_err(ErrorObject::internal)?;
        let ctx = codec::ResultContext { server_info: None, cache: server.config.cache };
        codec::shape_result("initialize", &mut value, version, &ctx);
        Ok(value)
    }

    /// The first state of a 2026-07-28 multi-round request: answers from the retry and
    /// from the sealed state of earlier rounds. `Ok(None)` where rounds do not apply.
    fn input_round(&self, req: &Request, scope: &RequestScope) -> Result<Option<InputRound>, ErrorObject> {
        if !scope.revision.is_modern()
            || !matches!(req.method.as_str(), "tools/call" | "prompts/get" | "resources/read")
        {
            return Ok(None);
        }
        let mut round = InputRound::default();
        let params = req.params.as_ref();
        match json::param(params, "requestState") {
            None | Some(Value::Null) => {}
            Some(Value::String(sealed)) => {
                let now = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_millis() as u64)
                    .unwrap_or_default();
                // Fingerprinted only here and when sealing: most requests need neither.
                let request = request_fingerprint(&req.method, req.params.as_ref());
                let contents =
                    self.server.inner.sealer.open(sealed, &request, None, now).map_err(ErrorObject::invalid_params)?;
                round.answers = contents.answers;
                round.carried = contents.state;
            }
            Some(_) => return Err(ErrorObject::invalid_params("requestState must be a string")),
        }
        // Anything but an object (null included) counts as no answers: the questions are asked again.
        if let Some(Value::Object(responses)) = json::param(params, "inputResponses") {
            round.answers.extend(responses.clone());
        }
        Ok(Some(round))
    }

    fn context(
        &self,
        req: &Request,
        scope: &RequestScope,
        cancel: CancellationToken,
        outbound: &Outbound,
        round: Option<InputRound>,
    ) -> Context {
        let progress_token = req
            .params
            .as_ref()
            .and_then(|p| json::member(p, "_meta"))
            .and_then(|m| json::member(m, meta_keys::PROGRESS_TOKEN))
            .and_then(|t| ProgressToken::deserialize(t).ok());
        Context::new(ContextParts {
            request_id: req.id.clone(),
            revision: scope.revision,
            client_capabilities: scope.capabilities.clone(),
            client_info: scope.client_info.clone(),
            progress_token,
            log: scope.log.clone(),
            logging_enabled: self.server.inner.config.logging,
            cancel,
            outbound: outbound.clone(),
            request_timeout: self.server.inner.config.request_timeout,
            round: round.map(Mutex::new),
            task: Default::default(),
        })
    }

    /// Registers a request as in flight, so that a cancellation arriving right behind it
    /// (even before its task starts) finds it.
    fn begin(&self, id: &RequestId) -> CancellationToken {
        let cancel = self.closing.child_token();
        if lock(&self.in_flight).insert(id.clone(), cancel.clone()).is_some() {
            tracing::warn!(%id, "a request id was reused while the first request is in flight");
        }
        cancel
    }

    /// Serves one request to completion; `None` when no response is due (cancelled).
    /// Related messages (progress, logs, requests to the client) go to `outbound`.
    pub(crate) async fn serve_request(self: &Arc<Self>, req: Request, outbound: &Outbound) -> Option<String> {
        let cancel = self.begin(&req.id);
        self.serve_begun(req, outbound, cancel).await
    }

    /// [`Self::serve_request`] for a request already registered with [`Self::begin`].
    async fn serve_begun(
        self: &Arc<Self>,
        req: Request,
        outbound: &Outbound,
        cancel: CancellationToken,
    ) -> Option<String> {
        let id = req.id.clone();
        let answer = self.answer(req, outbound, cancel).await;
        lock(&self.in_flight).remove(&id);
        answer
    }

    async fn answer(self: &Arc<Self>, req: Request, outbound: &Outbound, cancel: CancellationToken) -> Option<String> {
        if req.method == "initialize" {
            return Some(match self.initialize(&req) {
                Ok(v) => jsonrpc::encode_result(&req.id, &v),
                Err(e) => jsonrpc::encode_error(Some(&req.id), &e),
            });
        }
        let scope = match self.scope(&req) {
            Ok(s) => s,
            Err(e) => return Some(jsonrpc::encode_error(Some(&req.id), &e)),
        };
        if !known_in(&req.method, scope.revision) {
            return Some(jsonrpc::encode_error(Some(&req.id), &ErrorObject::method_not_found(&req.method)));
        }
        let round = match self.input_round(&req, &scope) {
            Ok(r) => r,
            Err(e) => return Some(jsonrpc::encode_error(Some(&req.id), &e)),
        };
        let handler_cancel = crate::tasks::handler_token(&self.server, &req, &scope, &cancel);
        let ctx = self.context(&req, &scope, handler_cancel, outbound, round);
        let outcome = tokio::select! {
            biased;
            _ = cancel.cancelled() => None,
            r = crate::methods::dispatch(self, &req, &scope, &ctx) => Some(r),
        };
        ctx.finish();
        let answer = match outcome? {
            Ok(a) => a,
            Err(e) => return Some(jsonrpc::encode_error(Some(&req.id), &e)),
        };
        let server = &self.server.inner;
        let shape = codec::ResultContext { server_info: Some(&server.info), cache: server.config.cache };
        Some(match answer {
            Answer::Value(mut result) => {
                codec::shape_result(&req.method, &mut result, scope.revision, &shape);
                jsonrpc::encode_result(&req.id, &result)
            }
            Answer::ToolResult(result) => codec::encode_call_tool_result(&req.id, &result, scope.revision, &shape),
        })
    }

    /// Serves a `subscriptions/listen` stream until the server ends it (its final result)
    /// or the client cancels it (the future is dropped).
    pub(crate) async fn listen(&self, id: &RequestId, filter: SubscriptionFilter, outbound: &Outbound) -> Value {
        let end = CancellationToken::new();
        lock(&self.listens).insert(id.clone(), end.clone());
        let _registered = ListenGuard { state: self, id };
        crate::listen::run(&self.server, id, filter, outbound, end).await
    }

    /// Ends every listen stream gracefully (each gets its final result).
    fn end_listens(&self) {
        for end in lock(&self.listens).values() {
            end.cancel();
        }
    }

    fn cancel_request(&self, params: Option<&Value>) {
        let id = params.and_then(|p| p.get("requestId").or_else(|| p.get("id"))).and_then(RequestId::from_value);
        let Some(id) = id else {
            tracing::debug!("cancellation without a usable request id ignored");
            return;
        };
        self.cancel(&id);
    }

    /// Cancels the request `id` if it is in flight.
    pub(crate) fn cancel(&self, id: &RequestId) {
        if let Some(token) = lock(&self.in_flight).get(id) {
            token.cancel();
        }
    }

    fn handle_notification(&self, n: Notification) {
        match n.method.as_str() {
            "notifications/initialized" => {}
            "notifications/cancelled" | "$/cancelRequest" => self.cancel_request(n.params.as_ref()),
            other => tracing::debug!(method = other, "notification ignored"),
        }
    }

    /// Tells a legacy client about a change. (Modern clients hear of changes on their
    /// `subscriptions/listen` streams, which watch the changes themselves.)
    pub(crate) async fn announce(&self, change: &Change) {
        let Some(session) = self.session() else { return };
        let caps = self.server.capabilities();
        let (method, params) = match change {
            Change::Tools if caps.tools.is_some() => ("notifications/tools/list_changed", json!({})),
            Change::Prompts if caps.prompts.is_some() => ("notifications/prompts/list_changed", json!({})),
            Change::Resources if caps.resources.is_some() => ("notifications/resources/list_changed", json!({})),
            Change::ResourceUpdated(uri) if lock(&self.subscriptions).contains(uri) => {
                ("notifications/resources/updated", json!({"uri": uri}))
            }
            _ => return,
        };
        self.outbound.notify(method, params, session.version).await;
    }
}

/// Serves one request with no connection around it (a 2026-07-28 request over HTTP):
/// related messages go to `related`, and the response is returned, unless `cancel` fired.
pub(crate) async fn serve_stateless(
    server: Server,
    req: Request,
    related: tokio::sync::mpsc::Sender<String>,
    cancel: CancellationToken,
) -> Option<String> {
    if req.method == "initialize" {
        // A 2026-07-28 request cannot open a legacy session: the method does not exist there.
        return Some(jsonrpc::encode_error(Some(&req.id), &ErrorObject::method_not_found(&req.method)));
    }
    let state = Arc::new(ConnectionState::new(server, Outbound::new(related)));
    let outbound = state.outbound.clone();
    state.answer(req, &outbound, cancel).await
}

/// Serves `server` on one connection until the client closes it.
pub(crate) async fn serve(server: Server, conn: Connection) {
    let Connection { mut incoming, outgoing, writer } = conn;
    let state = Arc::new(ConnectionState::new(server.clone(), Outbound::new(outgoing)));
    let mut changes = server.inner.changes.subscribe();
    let mut tasks = JoinSet::new();
    loop {
        tokio::select! {
            frame = incoming.recv() => match frame {
                Some(frame) => handle_frame(&state, frame, &mut tasks).await,
                None => break,
            },
            change = changes.recv() => match change {
                Ok(change) => state.announce(&change).await,
                Err(broadcast::error::RecvError::Lagged(_)) => {
                    for change in [Change::Tools, Change::Prompts, Change::Resources] {
                        state.announce(&change).await;
                    }
                }
                Err(broadcast::error::RecvError::Closed) => {}
            },
            Some(_) = tasks.join_next(), if !tasks.is_empty() => {}
        }
    }
    // The client closed its side: nothing more can be answered by it. Requests already
    // running may still finish and be written, within the grace period.
    state.outbound.fail_all();
    state.end_listens();
    // The session's tasks can no longer be fetched by anyone: stop their handlers.
    state.tasks_end.cancel();
    let grace = server.inner.config.shutdown_grace;
    if tokio::time::timeout(grace, async { while tasks.join_next().await.is_some() {} }).await.is_err() {
        state.closing.cancel();
        tasks.shutdown().await;
    }
    drop(state);
    if let Some(writer) = writer {
        let _ = writer.await;
    }
}

/// Where a connection's request tasks run.
pub(crate) enum Tasks<'a> {
    /// In the connection's set, which its end waits for.
    Set(&'a mut JoinSet<()>),
    /// On their own: a session with no connection loop (its closing token stops them).
    Detached,
}

impl Tasks<'_> {
    /// Runs `task` here until it first waits, and makes a task of it only then: most requests
    /// are answered at once, and a task per request (its allocation, scheduling, and the
    /// runtime's I/O polls between tasks) was the larger part of a pipelined call's cost.
    fn spawn(&mut self, task: impl std::future::Future<Output = ()> + Send + 'static) {
        let mut task = Box::pin(task);
        if task.as_mut().now_or_never().is_some() {
            return;
        }
        match self {
            Self::Set(set) => drop(set.spawn(task)),
            Self::Detached => drop(tokio::spawn(task)),
        }
    }
}

async fn handle_frame(state: &Arc<ConnectionState>, frame: Inbound, tasks: &mut JoinSet<()>) {
    let Frame { text, reply } = match frame {
        Ok(frame) => frame,
        Err(FrameError::TooLarge { limit }) => {
            let e = ErrorObject::invalid_request(format!("message larger than {limit} bytes"));
            return state.send_error(None, &e).await;
        }
        Err(FrameError::InvalidUtf8) => {
            let e = ErrorObject::parse_error("message is not valid UTF-8");
            return state.send_error(None, &e).await;
        }
    };
    let outbound = state.outbound_for(reply);
    match jsonrpc::decode(&text) {
        Err(e @ (DecodeError::Parse(_) | DecodeError::Invalid(_))) => {
            outbound.send_frame(jsonrpc::encode_error(e.id(), e.error())).await;
        }
        Ok(incoming) => handle_incoming(state, incoming, outbound, Tasks::Set(tasks)).await,
    }
}

impl ConnectionState {
    /// Where the messages of one received frame go: `reply` (one HTTP request's stream) or
    /// the connection.
    pub(crate) fn outbound_for(&self, reply: Option<tokio::sync::mpsc::Sender<String>>) -> Outbound {
        match reply {
            Some(tx) => self.outbound.with_sink(tx),
            None => self.outbound.clone(),
        }
    }
}

/// Handles one decoded message or batch; requests run as tasks on `tasks`.
pub(crate) async fn handle_incoming(
    state: &Arc<ConnectionState>,
    incoming: Incoming,
    outbound: Outbound,
    mut tasks: Tasks<'_>,
) {
    match incoming {
        Incoming::Single(message) => handle_message(state, message, outbound, &mut tasks).await,
        Incoming::Batch(items) => {
            let allowed = state.legacy_version().is_some_and(|v| v.allows_batches());
            if !allowed {
                let e = ErrorObject::invalid_request(
                    "JSON-RPC batches are only part of protocol revision 2025-03-26 (after initialize)",
                );
                outbound.send_frame(jsonrpc::encode_error(None, &e)).await;
                return;
            }
            let state = state.clone();
            tasks.spawn(async move { serve_batch(&state, items, &outbound).await });
        }
    }
}

/// Answering one request (not `initialize`), wherever it runs. It is registered as in
/// flight at once, so that a cancellation arriving right behind it finds it.
pub(crate) fn request_work(
    state: &Arc<ConnectionState>,
    req: Request,
    outbound: Outbound,
) -> impl std::future::Future<Output = ()> + Send + 'static {
    let state = state.clone();
    let cancel = state.begin(&req.id);
    async move {
        if let Some(frame) = state.serve_begun(req, &outbound, cancel).await {
            outbound.send_frame(frame).await;
        }
    }
}

async fn handle_message(state: &Arc<ConnectionState>, message: Message, outbound: Outbound, tasks: &mut Tasks<'_>) {
    match message {
        Message::Request(req) if req.method == "initialize" => {
            // Inline, so that every later message sees the negotiated revision.
            if let Some(frame) = state.serve_request(req, &outbound).await {
                outbound.send_frame(frame).await;
            }
        }
        Message::Request(req) => tasks.spawn(request_work(state, req, outbound)),
        Message::Notification(n) => state.handle_notification(n),
        Message::Response(r) => match r.id {
            Some(id) => state.outbound.resolve(&id, r.outcome),
            None => tracing::debug!("error response without id from the client: {:?}", r.outcome),
        },
    }
}

async fn serve_batch(
    state: &Arc<ConnectionState>,
    items: Vec<Result<Message, jsonrpc::InvalidMessage>>,
    outbound: &Outbound,
) {
    let mut answers = Vec::new();
    let mut requests = Vec::new();
    for item in items {
        match item {
            Err(invalid) => answers.push(jsonrpc::encode_error(invalid.id.as_ref(), &invalid.error)),
            Ok(Message::Request(req)) if req.method == "initialize" => answers.push(jsonrpc::encode_error(
                Some(&req.id),
                &ErrorObject::invalid_request("initialize must not be part of a batch"),
            )),
            Ok(Message::Request(req)) => requests.push(req),
            Ok(Message::Notification(n)) => state.handle_notification(n),
            Ok(Message::Response(r)) => {
                if let Some(id) = r.id {
                    state.outbound.resolve(&id, r.outcome);
                }
            }
        }
    }
    let served = futures::future::join_all(requests.into_iter().map(|r| state.serve_request(r, outbound))).await;
    answers.extend(served.into_iter().flatten());
    if !answers.is_empty() {
        outbound.send_frame(format!("[{}]", answers.join(","))).await;
    }
}
