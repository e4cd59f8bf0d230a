//! Driving the connection's engine: the task that reads from the server, and the path every
//! request of ours takes.
//!
//! The engine ([`ClientPeer`]) keeps the requests we sent (ids, deadlines, progress tokens,
//! cancellation) and finds out the server's era; it is behind one lock. The connection task
//! feeds it what the server sends and wakes it at its deadlines. It never awaits while
//! handling a frame, so a slow application can never stall the connection: answers go to
//! oneshot channels, notifications to callbacks and bounded channels, and requests from the
//! server run as their own tasks.

use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;

use futures::FutureExt;
use mcpwire_protocol::codec;
use mcpwire_protocol::engine::{
    ClientNews, ClientPeer, ClientSettings, ConnectError, Event, Failure, Negotiated, NotSent, Reply, RequestOptions,
    Resume, Transmit,
};
use mcpwire_protocol::frame::{headers, Header, Outbound};
use mcpwire_protocol::jsonrpc::DecodeError;
use mcpwire_protocol::message::{
    ClientNotification, ClientRequest, ClientResult, Notified, ServerNotification, ServerRequest,
};
use mcpwire_protocol::types::ProgressParams;
use mcpwire_protocol::{ErrorObject, ProtocolVersion, RequestId};
use mcpwire_transport::driving::{self, now, Timer};
use mcpwire_transport::Inbound;
use parking_lot::Mutex;
use serde_json::Value;
use smallvec::SmallVec;
use tokio::sync::{broadcast, mpsc, oneshot, Notify};
use tokio_util::sync::CancellationToken;

use crate::error::ClientError;
use crate::settings::Config;
use crate::task_requests::TaskRequests;

/// Capacity of a listen stream's channel; past it, notifications for that stream are
/// dropped with a warning (the application is not reading).
pub(crate) const LISTEN_CAPACITY: usize = 1024;
/// Capacity of the broadcast channel of notifications.
const BROADCAST_CAPACITY: usize = 1024;

/// A progress callback.
pub(crate) type ProgressCallback = Arc<dyn Fn(ProgressParams) + Send + Sync>;

/// How a request of ours ended, as the engine tells it.
pub(crate) type Outcome = Result<Reply, Failure>;

/// What waits for a request of ours: its answer's channel, and its progress callback.
pub(crate) struct Waiter {
    tx: oneshot::Sender<Outcome>,
    progress: Option<ProgressCallback>,
}

/// A 2026-07-28 retry of a request: the answers to the server's questions, under the keys
/// asked, and what the engine carries back.
#[derive(Clone)]
pub(crate) struct Retry {
    pub(crate) resume: Resume,
    pub(crate) answers: Vec<(String, ClientResult)>,
}

type Peer = ClientPeer<Waiter, CancellationToken>;
type PeerEvent = Event<mcpwire_protocol::engine::Client, Waiter, CancellationToken>;

/// What an engine operation produced.
#[derive(Default)]
pub(crate) struct Output {
    transmits: SmallVec<[Transmit; 2]>,
    events: SmallVec<[PeerEvent; 1]>,
    /// The progress callbacks of the progress events, looked up under the lock.
    progress: SmallVec<[(ProgressCallback, ProgressParams); 1]>,
}

/// The connection's shared state.
pub(crate) struct Shared {
    pub(crate) config: Arc<Config>,
    peer: Mutex<Peer>,
    outgoing: Mutex<Option<mpsc::Sender<Outbound>>>,
    /// Told when the handshake ends.
    connecting: Mutex<Option<oneshot::Sender<Result<(), ConnectError>>>>,
    /// The open listen streams (2026-07-28), by request.
    pub(crate) listens: Mutex<HashMap<RequestId, mpsc::Sender<ServerNotification>>>,
    /// The `Mcp-Param-*` headers each listed tool declares, `(property, header)` pairs, for
    /// the tools that declare any.
    tool_headers: Mutex<HashMap<String, Vec<(String, String)>>>,
    /// The output schemas of listed tools.
    pub(crate) outputs: Mutex<crate::outputs::OutputSchemas>,
    /// The transport sends frames' HTTP headers: tools with invalid header annotations
    /// cannot be called over it.
    sends_headers: bool,
    pub(crate) notifications: broadcast::Sender<ServerNotification>,
    /// A deadline may have moved: the connection task looks again.
    wake: Notify,
    /// Asks the connection task to stop.
    pub(crate) shutdown: CancellationToken,
    /// The connection task has stopped: nothing more will be received.
    pub(crate) ended: CancellationToken,
    /// The questions this client answers as tasks (2025-11-25).
    task_requests: TaskRequests,
}

/// Forgets a request of ours when the future waiting for it is dropped: a late answer is
/// ignored, and the server is told.
struct InFlight<'a> {
    shared: &'a Shared,
    id: Option<RequestId>,
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        if let Some(id) = self.id.take() {
            self.shared.cancel_request(&id, "the client no longer needs the answer");
        }
    }
}

impl Shared {
    pub(crate) fn new(config: Arc<Config>, outgoing: mpsc::Sender<Outbound>, sends_headers: bool) -> Self {
        let (notifications, _) = broadcast::channel(BROADCAST_CAPACITY);
        let settings = ClientSettings {
            info: config.info.clone(),
            capabilities: ProtocolVersion::ALL.iter().map(|v| (*v, config.capabilities(*v))).collect(),
            pinned: config.pinned,
            accept_negotiated: config.accept_negotiated,
            probe_timeout: config.probe_timeout,
            request_timeout: config.request_timeout,
            log_level: config.log_level,
            max_input_rounds: u32::try_from(config.max_input_rounds).unwrap_or(u32::MAX),
        };
        Self {
            config,
            peer: Mutex::new(ClientPeer::new(Arc::new(settings))),
            outgoing: Mutex::new(Some(outgoing)),
            connecting: Mutex::new(None),
            listens: Mutex::default(),
            tool_headers: Mutex::default(),
            outputs: Mutex::default(),
            sends_headers,
            notifications,
            wake: Notify::new(),
            shutdown: CancellationToken::new(),
            ended: CancellationToken::new(),
            task_requests: TaskRequests::default(),
        }
    }

    /// Runs `f` on the engine, and takes what it produced. When that moved the engine's
    /// next deadline (a request sent with an earlier deadline than any before), the
    /// connection task is told to set its timer again.
    fn run<R>(&self, f: impl FnOnce(&mut Peer) -> R) -> (R, Output) {
        let mut peer = self.peer.lock();
        let deadline = peer.poll_timeout();
        let r = f(&mut peer);
        if peer.poll_timeout() != deadline {
            self.wake.notify_one();
        }
        let mut out = Output { transmits: peer.take_transmits(), ..Output::default() };
        for e in peer.take_events() {
            if let Event::Progress { id, params } = &e {
                if let Some(callback) = peer.waiter(id).and_then(|w| w.progress.clone()) {
                    out.progress.push((callback, params.clone()));
                    continue;
                }
            }
            out.events.push(e);
        }
        (r, out)
    }

    /// What was agreed with the server.
    pub(crate) fn negotiated(&self) -> Negotiated {
        self.peer.lock().negotiated().clone()
    }

    /// The server's era.
    pub(crate) fn era(&self) -> mcpwire_protocol::Era {
        self.peer.lock().negotiated().era
    }

    /// The revision spoken.
    pub(crate) fn version(&self) -> ProtocolVersion {
        self.peer.lock().negotiated().version
    }

    /// Switches the modern revision spoken.
    pub(crate) fn set_version(&self, version: ProtocolVersion) {
        self.peer.lock().set_version(version);
    }

    /// Refreshes what is known of a modern server.
    pub(crate) fn adopt_discovered(&self, discovered: mcpwire_protocol::types::DiscoverResult) {
        self.peer.lock().adopt_discovered(discovered);
    }

    /// Sets the log level later modern requests ask for.
    pub(crate) fn set_log_level(&self, level: mcpwire_protocol::types::LoggingLevel) {
        self.peer.lock().set_log_level(level);
    }

    /// Learns the `Mcp-Param-*` headers of listed tools; over a transport that sends them, a
    /// tool whose annotations are invalid is dropped (it must not be called) with a warning.
    pub(crate) fn learn_tools<T>(
        &self,
        tools: &mut Vec<T>,
        name: impl Fn(&T) -> &str,
        schema: impl Fn(&T) -> Option<&serde_json::Map<String, Value>>,
    ) {
        let mut learned = self.tool_headers.lock();
        tools.retain(|tool| {
            let pairs = schema(tool).map_or(Ok(Vec::new()), mcpwire_protocol::headers::tool_param_headers);
            match pairs {
                // Only tools with headers are kept: a client of a server that declares
                // none looks nothing up per call.
                Ok(pairs) if pairs.is_empty() => {
                    learned.remove(name(tool));
                    true
                }
                Ok(pairs) => {
                    learned.insert(name(tool).to_owned(), pairs);
                    true
                }
                Err(why) if self.sends_headers => {
                    tracing::warn!(tool = %name(tool), "tool dropped from tools/list: {why}");
                    false
                }
                Err(_) => true,
            }
        });
    }

    /// The `Mcp-Param-*` headers of a call of a listed tool, from its arguments.
    pub(crate) fn param_headers(&self, call: &mcpwire_protocol::types::CallToolParams) -> Vec<(Header, String)> {
        let known = self.tool_headers.lock();
        if known.is_empty() {
            return Vec::new();
        }
        let Some(pairs) = known.get(&call.name) else { return Vec::new() };
        pairs
            .iter()
            .filter_map(|(property, header)| {
                let value = mcpwire_protocol::headers::argument_value(call.arguments.as_ref(), property)?;
                Some((Header::Owned(format!("{}{header}", headers::PARAM_PREFIX)), value))
            })
            .collect()
    }

    /// Stops sending: the transport flushes what is queued and closes its side.
    pub(crate) fn close_outgoing(&self) {
        self.outgoing.lock().take();
    }

    fn sender(&self) -> Option<mpsc::Sender<Outbound>> {
        self.outgoing.lock().clone()
    }

    /// Sends frames, waiting for room in the transport's queue.
    async fn send(&self, transmits: SmallVec<[Transmit; 2]>) -> Result<(), ClientError> {
        if transmits.is_empty() {
            return Ok(());
        }
        let tx = self.sender().ok_or(ClientError::Closed)?;
        for t in transmits {
            tx.send(t.out).await.map_err(|_| ClientError::Closed)?;
        }
        Ok(())
    }

    /// Sends frames from a context that cannot wait (a destructor, the connection task).
    fn send_now(&self, transmits: SmallVec<[Transmit; 2]>) {
        let Some(tx) = self.sender() else { return };
        for t in transmits {
            driving::send_now(&tx, t.out);
        }
    }

    /// Acts on what the engine produced, sending its frames from here (the connection task,
    /// or a destructor: no waiting).
    fn settle_now(self: &Arc<Self>, out: Output) {
        self.deliver_progress(&out.progress);
        self.settle(out.events);
        self.send_now(out.transmits);
    }

    fn deliver_progress(&self, progress: &[(ProgressCallback, ProgressParams)]) {
        for (callback, params) in progress {
            callback(params.clone());
        }
    }

    /// Acts on the engine's events.
    fn settle(self: &Arc<Self>, events: SmallVec<[PeerEvent; 1]>) {
        for event in events {
            match event {
                Event::Response { id, waiter, outcome } => {
                    // A listen stream whose request ended is over. (Most clients have none:
                    // the id is not hashed then.)
                    let mut listens = self.listens.lock();
                    if !listens.is_empty() {
                        listens.remove(&id);
                    }
                    drop(listens);
                    let _ = waiter.tx.send(outcome);
                }
                Event::Request { request, handling } => self.serve(*request, handling),
                Event::Cancelled { handling, .. } => handling.cancel(),
                Event::Notification(n) => self.notification(n),
                // Progress with no callback (the call asked for none) is not routed anywhere.
                Event::Progress { .. } => {}
                Event::Role(news) => {
                    let result = match news {
                        ClientNews::Connected(_) => Ok(()),
                        ClientNews::ConnectFailed(e) => Err(e),
                        ClientNews::Listened { id, notification } => {
                            self.listened(&id, notification);
                            continue;
                        }
                    };
                    if let Some(tx) = self.connecting.lock().take() {
                        let _ = tx.send(result);
                    }
                }
            }
        }
    }

    /// A notification of the listen stream `id`: to its channel.
    fn listened(&self, id: &RequestId, notification: ServerNotification) {
        if matches!(notification, ServerNotification::ToolsListChanged) {
            self.outputs.lock().forget();
        }
        let stream = self.listens.lock().get(id).cloned();
        if let Some(stream) = stream {
            if stream.try_send(notification).is_err() {
                tracing::warn!(%id, "listen stream not read: notification dropped");
            }
        }
    }

    /// A notification of the connection's: to the application (its callback, then the
    /// broadcast channel).
    fn notification(&self, n: Notified<ServerNotification>) {
        if matches!(n.body, ServerNotification::ToolsListChanged) {
            self.outputs.lock().forget();
        }
        if let Some(callback) = &self.config.on_notification {
            callback(&n.body);
        }
        // No receiver just means nobody is listening.
        let _ = self.notifications.send(n.body);
    }

    /// Answers a request of the server's in its own task.
    fn serve(
        self: &Arc<Self>,
        request: mcpwire_protocol::message::Request<ServerRequest>,
        handling: CancellationToken,
    ) {
        let shared = self.clone();
        tokio::spawn(async move {
            let Ok(body) = &request.body else { return };
            let method = body.method();
            let answer = AssertUnwindSafe(shared.answer_request(body)).catch_unwind();
            let outcome = tokio::select! {
                _ = handling.cancelled() => return,
                outcome = answer => outcome.unwrap_or_else(|_| {
                    tracing::error!(%method, "a client handler panicked");
                    Err(ErrorObject::internal(format!("the client's {method} handler failed")))
                }),
            };
            let (_, out) = shared.run(|peer| peer.respond(&request.id, outcome));
            shared.deliver_progress(&out.progress);
            shared.settle(out.events);
            let timeout = shared.config.request_timeout;
            let _ = tokio::time::timeout(timeout, shared.send(out.transmits)).await;
        });
    }

    /// Answers a request of the server's: a question with the handlers (or as a task, when
    /// the server asks for one and the client declared it takes them), a request about a
    /// task from the tasks this client runs.
    async fn answer_request(&self, request: &ServerRequest) -> Result<ClientResult, ErrorObject> {
        let tasks = &self.task_requests;
        match request {
            ServerRequest::GetTask(p) => tasks.get(&p.task_id).map(|t| ClientResult::Task(Box::new(t))),
            ServerRequest::TaskResult(p) => tasks.result(&p.task_id).await.map(ClientResult::TaskPayload),
            ServerRequest::ListTasks(_) => Ok(ClientResult::ListTasks(tasks.list())),
            ServerRequest::CancelTask(p) => tasks.cancel(&p.task_id).map(|t| ClientResult::Task(Box::new(t))),
            question if question.task().is_some() && self.takes_task_for(question.method()) => {
                Ok(self.start_task(question))
            }
            question => answer_input(&self.config, question).await,
        }
    }

    /// Whether the client declared, in the revision spoken, that it answers `method` as a task.
    fn takes_task_for(&self, method: mcpwire_protocol::Method) -> bool {
        self.config.capabilities(self.version()).takes_task_requests(method)
    }

    /// Makes a task of a question and runs its handler in the background: the answer is the
    /// task as created.
    fn start_task(&self, question: &ServerRequest) -> ClientResult {
        let (created, task_id, cancel) = self.task_requests.create(question.task().and_then(|t| t.ttl));
        let (config, tasks, ended, question) =
            (self.config.clone(), self.task_requests.clone(), self.ended.clone(), question.clone());
        tokio::spawn(async move {
            let method = question.method();
            let answer = AssertUnwindSafe(answer_input(&config, &question)).catch_unwind();
            let outcome = tokio::select! {
                // Cancelled by the server, forgotten, or the connection is gone: no answer.
                _ = cancel.cancelled() => return,
                _ = ended.cancelled() => return,
                outcome = answer => outcome.unwrap_or_else(|_| {
                    tracing::error!(%method, "a client handler panicked");
                    Err(ErrorObject::internal(format!("the client's {method} handler failed")))
                }),
            };
            let outcome = outcome.and_then(|result| {
                serde_json::to_value(result)
                    .map_err(|e| ErrorObject::internal(format!("the answer cannot be written: {e}")))
            });
            tasks.finish(&task_id, outcome);
        });
        ClientResult::CreateTask(Box::new(created))
    }

    /// Starts the handshake and waits for its end.
    pub(crate) async fn connect(self: &Arc<Self>) -> Result<(), ClientError> {
        let (tx, rx) = oneshot::channel();
        *self.connecting.lock() = Some(tx);
        let (_, out) = self.run(|peer| peer.connect(now()));
        self.settle(out.events);
        self.send(out.transmits).await?;
        match rx.await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(connect_error(e)),
            Err(_) => Err(ClientError::Closed),
        }
    }

    /// Sends one request and waits for its outcome (the engine fails it at its deadline, and
    /// the server is told). Dropping the returned future cancels the request.
    pub(crate) async fn round_trip(
        self: &Arc<Self>,
        request: Outgoing<'_>,
        retry: Option<&Retry>,
        options: RequestOptions,
        progress: Option<ProgressCallback>,
    ) -> Result<Reply, ClientError> {
        let method = request.method();
        let timeout = options.timeout;
        let (tx, rx) = oneshot::channel();
        let waiter = Waiter { tx, progress };
        let (sent, out) = self.run(|peer| match (request, retry) {
            (Outgoing::Typed(request), None) => peer.send_request(request, options, waiter, now()),
            (Outgoing::Typed(request), Some(Retry { resume, answers })) => {
                peer.retry(request, resume, answers, options, waiter, now())
            }
            (Outgoing::Custom(method, params), _) => peer.send_custom(method, params, options, waiter, now()),
        });
        let id = match sent {
            Ok(id) => id,
            Err(NotSent::Closed) => return Err(ClientError::Closed),
            Err(NotSent::InvalidParams(detail)) => return Err(ClientError::InvalidArguments(detail)),
            Err(NotSent::Unsupported { method, version }) => {
                return Err(ClientError::Unsupported { method: method.as_str().to_owned(), version })
            }
        };
        let mut guard = InFlight { shared: self, id: Some(id) };
        self.settle(out.events);
        self.send(out.transmits).await?;
        let outcome = rx.await;
        guard.id = None;
        match outcome {
            Ok(outcome) => outcome.map_err(|f| failed(&method, timeout.unwrap_or_default(), f)),
            Err(_) => Err(ClientError::Closed),
        }
    }

    /// Sends a request whose answer ends a stream (a listen stream): its id, and the channel
    /// its outcome comes on. `before_sending` runs with the id before the frame goes out.
    pub(crate) async fn open_request(
        self: &Arc<Self>,
        request: &ClientRequest,
        before_sending: impl FnOnce(&RequestId),
    ) -> Result<(RequestId, oneshot::Receiver<Outcome>), ClientError> {
        let (tx, rx) = oneshot::channel();
        let waiter = Waiter { tx, progress: None };
        let (sent, out) = self.run(|peer| peer.send_request(request, RequestOptions::default(), waiter, now()));
        let id = sent.map_err(|_| ClientError::Closed)?;
        before_sending(&id);
        self.settle(out.events);
        if let Err(e) = self.send(out.transmits).await {
            self.run(|peer| peer.forget(&id));
            return Err(e);
        }
        Ok((id, rx))
    }

    /// Forgets a request of ours (a listen stream dropped, a call abandoned) and tells the
    /// server.
    pub(crate) fn cancel_request(self: &Shared, id: &RequestId, reason: &str) {
        self.listens.lock().remove(id);
        let (_, out) = self.run(|peer| peer.cancel(id, reason));
        self.deliver_progress(&out.progress);
        self.send_now(out.transmits);
    }

    /// Sends a notification.
    pub(crate) async fn notify(self: &Arc<Self>, notification: &ClientNotification) -> Result<(), ClientError> {
        let (_, out) = self.run(|peer| peer.notify(notification));
        self.send(out.transmits).await
    }

    fn handle_inbound(self: &Arc<Self>, inbound: Inbound) {
        let text = match inbound {
            Ok(frame) => frame.text,
            Err(e) => return tracing::warn!("unreadable message from the server: {e}"),
        };
        let out = match codec::read_from_server(&text) {
            Ok(frame) => self.run(|peer| peer.handle(frame, now())).1,
            Err(DecodeError::Invalid(invalid)) => {
                tracing::warn!("invalid message from the server: {}", invalid.error);
                self.run(|peer| peer.handle_invalid(invalid, now())).1
            }
            Err(e @ DecodeError::Parse(_)) => {
                return tracing::warn!("unreadable message from the server: {}", e.error())
            }
        };
        self.settle_now(out);
    }
}

/// A request to send: typed, or of a method the protocol does not define.
pub(crate) enum Outgoing<'a> {
    /// A request of the protocol.
    Typed(&'a ClientRequest),
    /// Any other method, params as given.
    Custom(&'a str, Option<Value>),
}

impl Outgoing<'_> {
    fn method(&self) -> String {
        match self {
            Self::Typed(r) => r.method().as_str().to_owned(),
            Self::Custom(m, _) => (*m).to_owned(),
        }
    }
}

/// The client error of a request of `method` that ended without a result (`timeout`: the
/// request's).
pub(crate) fn failed(method: &str, timeout: Duration, failure: Failure) -> ClientError {
    let method = method.to_owned();
    match failure {
        Failure::Error(error) => ClientError::Protocol { method, error },
        Failure::Malformed(detail) => ClientError::decode(&method, detail),
        Failure::TimedOut => ClientError::Timeout { method, timeout },
        Failure::TooManyRounds(rounds) => ClientError::InputRequired { method, rounds: rounds as usize },
        Failure::Closed => ClientError::Closed,
    }
}

/// The client error of a failed handshake.
fn connect_error(e: ConnectError) -> ClientError {
    match e {
        ConnectError::Closed => ClientError::Closed,
        ConnectError::TimedOut { method, timeout } => {
            ClientError::Timeout { method: method.as_str().to_owned(), timeout }
        }
        ConnectError::Refused { method, error } => ClientError::Protocol { method: method.as_str().to_owned(), error },
        ConnectError::Malformed { method, detail } => ClientError::decode(method.as_str(), detail),
        ConnectError::Negotiation(detail) => ClientError::Negotiation(detail),
    }
}

/// Answers one server request or `input_required` question with the registered handlers.
pub(crate) async fn answer_input(config: &Config, request: &ServerRequest) -> Result<ClientResult, ErrorObject> {
    let not_found = || ErrorObject::method_not_found(request.method().as_str());
    match request {
        ServerRequest::Ping => Ok(ClientResult::Empty(Default::default())),
        ServerRequest::CreateMessage(params) => match &config.sampling {
            Some(handler) => handler(params.clone()).await.map(|r| ClientResult::CreateMessage(Box::new(r))),
            None => Err(not_found()),
        },
        ServerRequest::Elicit(params) => match &config.elicitation {
            Some(handler) => handler(params.clone()).await.map(ClientResult::Elicit),
            None => Err(not_found()),
        },
        ServerRequest::ListRoots => match &config.roots {
            Some(handler) => handler().await.map(ClientResult::ListRoots),
            None => Err(not_found()),
        },
        // Requests about tasks are no questions: the connection answers them itself.
        ServerRequest::GetTask(_)
        | ServerRequest::TaskResult(_)
        | ServerRequest::ListTasks(_)
        | ServerRequest::CancelTask(_) => Err(not_found()),
    }
}

/// Reads from the server until the connection closes or the session shuts it down, waking
/// the engine at its deadlines.
pub(crate) async fn drive(shared: Arc<Shared>, mut incoming: mpsc::Receiver<Inbound>) {
    // One timer, set again only when the engine's next deadline moves (rarely: see
    // `ClientPeer::poll_timeout`), not made and registered anew for every frame.
    let mut timer = Timer::default();
    loop {
        timer.set_deadline(shared.peer.lock().poll_timeout());
        tokio::select! {
            biased;
            _ = shared.shutdown.cancelled() => break,
            inbound = incoming.recv() => match inbound {
                Some(inbound) => shared.handle_inbound(inbound),
                None => {
                    tracing::debug!("the server closed the connection");
                    break;
                }
            },
            () = timer.ring() => {
                let (_, out) = shared.run(|peer| peer.handle_timeout(now()));
                shared.settle_now(out);
            }
            _ = shared.wake.notified() => {}
        }
    }
    shared.ended.cancel();
    let (_, out) = shared.run(|peer| peer.close());
    shared.listens.lock().clear();
    shared.settle_now(out);
}
