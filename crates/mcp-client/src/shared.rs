//! The connection's shared state and the task that reads from the server.
//!
//! Outgoing requests are correlated and timed by the engine's [`PendingRequests`] table,
//! behind a lock; the connection task is its only clock: it sleeps until the earliest
//! deadline and fails what expired. It never awaits while handling a frame, so a slow
//! application can never stall the connection: responses go to oneshot channels,
//! notifications to callbacks and bounded channels, and requests from the server run as
//! their own tasks.

use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, RwLock};
use std::time::{Duration, Instant};

use futures::FutureExt;
use mcp_protocol::engine::pending::PendingRequests;
use mcp_protocol::jsonrpc::{self, DecodeError, Incoming, InvalidMessage, Message, Notification, Request, Response};
use mcp_protocol::types::{
    meta_keys, CreateMessageParams, ElicitParams, Implementation, LoggingLevel, ProgressParams, ProgressToken,
    ServerCapabilities,
};
use mcp_protocol::{Era, ErrorObject, ProtocolVersion, RequestId};
use mcp_transport::Inbound;
use serde_json::{json, Map, Value};
use tokio::sync::{broadcast, mpsc, oneshot, Notify};
use tokio::task::AbortHandle;
use tokio_util::sync::CancellationToken;

use crate::client::Config;
use crate::error::ClientError;
use crate::notification::ServerNotification;

/// Capacity of a listen stream's channel; past it, notifications for that stream are
/// dropped with a warning (the application is not reading).
pub(crate) const LISTEN_CAPACITY: usize = 1024;
/// Capacity of the broadcast channel of notifications.
const BROADCAST_CAPACITY: usize = 1024;

/// How a request ended, as the connection task tells its caller.
#[derive(Debug)]
pub(crate) enum Outcome {
    /// The server's response.
    Response(Result<Value, ErrorObject>),
    /// A message with the request's id that is not a valid response.
    Malformed(String),
    /// The deadline passed.
    TimedOut,
    /// The connection closed first.
    Closed,
}

pub(crate) struct Waiter {
    tx: oneshot::Sender<Outcome>,
    /// Send `notifications/cancelled` when the deadline passes (not for the era probe and
    /// `initialize`, which must not be cancelled).
    cancel_on_timeout: bool,
}

/// A progress callback.
pub(crate) type ProgressCallback = Arc<dyn Fn(ProgressParams) + Send + Sync>;

/// What was negotiated with the server.
#[derive(Debug, Clone)]
pub(crate) struct Negotiated {
    pub(crate) era: Era,
    pub(crate) version: ProtocolVersion,
    pub(crate) server_info: Option<Implementation>,
    pub(crate) capabilities: ServerCapabilities,
    pub(crate) instructions: Option<String>,
}

pub(crate) struct Shared {
    pub(crate) config: Arc<Config>,
    outgoing: Mutex<Option<mpsc::Sender<String>>>,
    pending: Mutex<PendingRequests<Waiter>>,
    deadline_changed: Notify,
    progress: Mutex<HashMap<ProgressToken, ProgressCallback>>,
    pub(crate) listens: Mutex<HashMap<RequestId, mpsc::Sender<ServerNotification>>>,
    served: Mutex<HashMap<RequestId, AbortHandle>>,
    pub(crate) notifications: broadcast::Sender<ServerNotification>,
    pub(crate) state: RwLock<Negotiated>,
    pub(crate) log_level: Mutex<Option<LoggingLevel>>,
    next_token: AtomicI64,
    /// Asks the connection task to stop.
    pub(crate) shutdown: CancellationToken,
    /// The connection task has stopped: nothing more will be received.
    pub(crate) ended: CancellationToken,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Removes a progress callback when the call that registered it ends (or is dropped).
pub(crate) struct ProgressGuard<'a> {
    shared: &'a Shared,
    token: ProgressToken,
}

impl ProgressGuard<'_> {
    pub(crate) fn token(&self) -> &ProgressToken {
        &self.token
    }
}

impl Drop for ProgressGuard<'_> {
    fn drop(&mut self) {
        lock(&self.shared.progress).remove(&self.token);
    }
}

/// Cancels an outstanding request when the future waiting for it is dropped: the entry
/// leaves the pending table (a late response is ignored) and the server is told.
struct InFlight<'a> {
    shared: &'a Shared,
    id: Option<RequestId>,
}

impl InFlight<'_> {
    fn disarm(&mut self) {
        self.id = None;
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        if let Some(id) = self.id.take() {
            if lock(&self.shared.pending).cancel(&id).is_some() {
                self.shared.send_cancelled(&id, "the client no longer needs the answer");
            }
        }
    }
}

impl Shared {
    pub(crate) fn new(config: Arc<Config>, outgoing: mpsc::Sender<String>, version: ProtocolVersion) -> Self {
        let (notifications, _) = broadcast::channel(BROADCAST_CAPACITY);
        let log_level = config.log_level;
        Self {
            config,
            outgoing: Mutex::new(Some(outgoing)),
            pending: Mutex::new(PendingRequests::new()),
            deadline_changed: Notify::new(),
            progress: Mutex::default(),
            listens: Mutex::default(),
            served: Mutex::default(),
            notifications,
            state: RwLock::new(Negotiated {
                era: version.era(),
                version,
                server_info: None,
                capabilities: ServerCapabilities::default(),
                instructions: None,
            }),
            log_level: Mutex::new(log_level),
            next_token: AtomicI64::new(1),
            shutdown: CancellationToken::new(),
            ended: CancellationToken::new(),
        }
    }

    pub(crate) fn negotiated(&self) -> Negotiated {
        self.state.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    pub(crate) fn set_negotiated(&self, n: Negotiated) {
        *self.state.write().unwrap_or_else(|e| e.into_inner()) = n;
    }

    pub(crate) fn version(&self) -> ProtocolVersion {
        self.state.read().unwrap_or_else(|e| e.into_inner()).version
    }

    /// Stops sending: the transport flushes what is queued and closes its side.
    pub(crate) fn close_outgoing(&self) {
        lock(&self.outgoing).take();
    }

    fn sender(&self) -> Option<mpsc::Sender<String>> {
        lock(&self.outgoing).clone()
    }

    /// Sends one frame, waiting for room in the transport's queue.
    pub(crate) async fn send(&self, frame: String) -> Result<(), ClientError> {
        let tx = self.sender().ok_or(ClientError::Closed)?;
        tx.send(frame).await.map_err(|_| ClientError::Closed)
    }

    /// Sends a frame from a context that cannot wait (a destructor, the connection task).
    fn send_now(&self, frame: String) {
        let Some(tx) = self.sender() else { return };
        match tx.try_send(frame) {
            Ok(()) => {}
            Err(mpsc::error::TrySendError::Full(frame)) => {
                // The queue is full: send it from a task rather than lose it.
                if let Ok(handle) = tokio::runtime::Handle::try_current() {
                    handle.spawn(async move {
                        let _ = tokio::time::timeout(Duration::from_secs(10), tx.send(frame)).await;
                    });
                }
            }
            Err(mpsc::error::TrySendError::Closed(_)) => {}
        }
    }

    pub(crate) fn send_cancelled(&self, id: &RequestId, reason: &str) {
        let params = json!({"requestId": id, "reason": reason});
        self.send_now(jsonrpc::encode_notification("notifications/cancelled", Some(&params)));
    }

    /// Registers a progress callback under a fresh token.
    pub(crate) fn register_progress(&self, callback: ProgressCallback) -> ProgressGuard<'_> {
        let token = ProgressToken::Number(self.next_token.fetch_add(1, Ordering::Relaxed));
        lock(&self.progress).insert(token.clone(), callback);
        ProgressGuard { shared: self, token }
    }

    /// Sends one request and waits for its outcome, at most `timeout`. Dropping the
    /// returned future cancels the request (`notifications/cancelled`), and so does the
    /// timeout when `cancel_on_timeout`.
    pub(crate) async fn round_trip(
        &self,
        method: &str,
        params: Option<Value>,
        timeout: Duration,
        cancel_on_timeout: bool,
    ) -> Result<Value, ClientError> {
        let timeout_error = || ClientError::Timeout { method: method.to_owned(), timeout };
        let (tx, rx) = oneshot::channel();
        let now = Instant::now();
        let id = lock(&self.pending).register(method, Waiter { tx, cancel_on_timeout }, now, Some(timeout));
        let mut in_flight = InFlight { shared: self, id: Some(id.clone()) };
        if self.ended.is_cancelled() {
            in_flight.disarm();
            lock(&self.pending).cancel(&id);
            return Err(ClientError::Closed);
        }
        self.deadline_changed.notify_one();
        let deadline = tokio::time::Instant::from_std(now + timeout);
        let frame = jsonrpc::encode_request(&id, method, params.as_ref());
        match tokio::time::timeout_at(deadline, self.send(frame)).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                in_flight.disarm();
                lock(&self.pending).cancel(&id);
                return Err(e);
            }
            Err(_) => {
                if !cancel_on_timeout {
                    in_flight.disarm();
                    lock(&self.pending).cancel(&id);
                }
                return Err(timeout_error());
            }
        }
        // The connection task fails the request at its deadline; the extra second only
        // guards against that task being gone.
        let outcome = tokio::time::timeout_at(deadline + Duration::from_secs(1), rx).await;
        in_flight.disarm();
        match outcome {
            Ok(Ok(Outcome::Response(Ok(v)))) => Ok(v),
            Ok(Ok(Outcome::Response(Err(error)))) => Err(ClientError::Protocol { method: method.to_owned(), error }),
            Ok(Ok(Outcome::Malformed(detail))) => Err(ClientError::decode(method, detail)),
            Ok(Ok(Outcome::TimedOut)) => Err(timeout_error()),
            Ok(Ok(Outcome::Closed)) | Ok(Err(_)) => Err(ClientError::Closed),
            Err(_) => {
                if lock(&self.pending).cancel(&id).is_some() && cancel_on_timeout {
                    self.send_cancelled(&id, "timed out");
                }
                Err(timeout_error())
            }
        }
    }

    /// Sends a request with no deadline (a listen stream); its outcome arrives on `rx`.
    pub(crate) fn open_request(&self, method: &str) -> Result<(RequestId, oneshot::Receiver<Outcome>), ClientError> {
        let (tx, rx) = oneshot::channel();
        let id = lock(&self.pending).register(method, Waiter { tx, cancel_on_timeout: false }, Instant::now(), None);
        if self.ended.is_cancelled() {
            lock(&self.pending).cancel(&id);
            return Err(ClientError::Closed);
        }
        Ok((id, rx))
    }

    /// Forgets an open request (a listen stream dropped) and tells the server.
    pub(crate) fn cancel_request(&self, id: &RequestId, reason: &str) {
        let listening = lock(&self.listens).remove(id).is_some();
        let pending = lock(&self.pending).cancel(id).is_some();
        if listening || pending {
            self.send_cancelled(id, reason);
        }
    }

    /// Fails every outstanding request and ends every listen stream.
    fn fail_all(&self) {
        for (_, waiter) in lock(&self.pending).drain() {
            let _ = waiter.tx.send(Outcome::Closed);
        }
        lock(&self.listens).clear();
        lock(&self.progress).clear();
        for (_, task) in lock(&self.served).drain() {
            task.abort();
        }
    }

    fn expire(&self) {
        let expired = lock(&self.pending).expire(Instant::now());
        for (id, method, waiter) in expired {
            tracing::debug!(%id, method, "request timed out");
            if waiter.cancel_on_timeout {
                self.send_cancelled(&id, "timed out");
            }
            let _ = waiter.tx.send(Outcome::TimedOut);
        }
    }

    fn complete(&self, id: &RequestId, outcome: Outcome) {
        lock(&self.listens).remove(id);
        match lock(&self.pending).complete(id) {
            Some(waiter) => {
                let _ = waiter.tx.send(outcome);
            }
            None => tracing::debug!(%id, "ignoring a response to an unknown, finished or cancelled request"),
        }
    }

    /// Hands a notification to the application: the registered callback, then the
    /// broadcast channel.
    fn deliver(&self, notification: ServerNotification) {
        if let Some(callback) = &self.config.on_notification {
            callback(&notification);
        }
        // No receiver just means nobody is listening.
        let _ = self.notifications.send(notification);
    }

    fn handle_frame(self: &Arc<Self>, text: &str) {
        match jsonrpc::decode(text) {
            Ok(Incoming::Single(message)) => self.handle_message(message),
            Ok(Incoming::Batch(items)) => {
                for item in items {
                    match item {
                        Ok(message) => self.handle_message(message),
                        Err(invalid) => tracing::warn!("invalid message from the server: {}", invalid.error),
                    }
                }
            }
            Err(DecodeError::Invalid(invalid)) => {
                let is_request = serde_json::from_str::<Value>(text).is_ok_and(|v| v.get("method").is_some());
                self.handle_invalid(invalid, is_request);
            }
            Err(e @ DecodeError::Parse(_)) => tracing::warn!("unreadable message from the server: {}", e.error()),
        }
    }

    /// A message that is not valid JSON-RPC. A bad request with an id is answered with the
    /// error; a bad response naming one of our requests fails that request now rather than
    /// at its deadline.
    fn handle_invalid(&self, invalid: InvalidMessage, is_request: bool) {
        tracing::warn!("invalid message from the server: {}", invalid.error);
        let Some(id) = invalid.id else { return };
        if is_request {
            self.send_now(jsonrpc::encode_error(Some(&id), &invalid.error));
            return;
        }
        let waiter = lock(&self.pending).complete(&id);
        if let Some(waiter) = waiter {
            let _ = waiter.tx.send(Outcome::Malformed(invalid.error.message));
            lock(&self.listens).remove(&id);
        }
    }

    fn handle_message(self: &Arc<Self>, message: Message) {
        match message {
            Message::Response(Response { id: Some(id), outcome }) => self.complete(&id, Outcome::Response(outcome)),
            Message::Response(Response { id: None, outcome }) => {
                tracing::warn!("error response without an id from the server: {outcome:?}")
            }
            Message::Notification(n) => self.handle_notification(n),
            Message::Request(r) => self.handle_request(r),
        }
    }

    fn handle_notification(&self, n: Notification) {
        // Notifications of a listen stream go to that stream.
        if let Some(id) = mcp_protocol::types::meta_field(n.params.as_ref(), meta_keys::SUBSCRIPTION_ID)
            .and_then(RequestId::from_value)
        {
            let stream = lock(&self.listens).get(&id).cloned();
            if let Some(stream) = stream {
                if stream.try_send(ServerNotification::from_notification(n)).is_err() {
                    tracing::warn!(%id, "listen stream not read: notification dropped");
                }
                return;
            }
        }
        let notification = ServerNotification::from_notification(n);
        match &notification {
            ServerNotification::Progress(p) => {
                let callback = lock(&self.progress).get(&p.progress_token).cloned();
                if let Some(callback) = callback {
                    callback(p.clone());
                    return;
                }
            }
            ServerNotification::Cancelled(c) => {
                if let Some(id) = &c.request_id {
                    // The server gave up on a request it sent us, or (stdio, 2026-07-28)
                    // ended a listen stream.
                    if let Some(task) = lock(&self.served).remove(id) {
                        task.abort();
                    }
                    if lock(&self.listens).remove(id).is_some() {
                        if let Some(waiter) = lock(&self.pending).complete(id) {
                            let _ = waiter.tx.send(Outcome::Closed);
                        }
                    }
                }
            }
            _ => {}
        }
        self.deliver(notification);
    }

    /// Answers a request from the server in its own task.
    fn handle_request(self: &Arc<Self>, req: Request) {
        let shared = self.clone();
        let id = req.id.clone();
        let mut served = lock(&self.served);
        let task = tokio::spawn(async move {
            let method = req.method.clone();
            let outcome = AssertUnwindSafe(shared.answer(&req)).catch_unwind().await.unwrap_or_else(|_| {
                tracing::error!(method, "a client handler panicked");
                Err(ErrorObject::internal(format!("the client's {method} handler failed")))
            });
            let frame = match outcome {
                Ok(v) => jsonrpc::encode_result(&req.id, &v),
                Err(e) => jsonrpc::encode_error(Some(&req.id), &e),
            };
            lock(&shared.served).remove(&req.id);
            let timeout = shared.config.request_timeout;
            let _ = tokio::time::timeout(timeout, shared.send(frame)).await;
        });
        if served.insert(id.clone(), task.abort_handle()).is_some() {
            tracing::warn!(%id, "the server reused the id of a request still being answered");
        }
    }

    async fn answer(&self, req: &Request) -> Result<Value, ErrorObject> {
        answer_input(&self.config, &req.method, req.params.clone()).await
    }
}

/// Answers one server request or MRTR input request with the registered handlers.
pub(crate) async fn answer_input(config: &Config, method: &str, params: Option<Value>) -> Result<Value, ErrorObject> {
    fn decode<T: serde::de::DeserializeOwned>(method: &str, params: Option<Value>) -> Result<T, ErrorObject> {
        serde_json::from_value(params.unwrap_or_else(|| json!({})))
            .map_err(|e| ErrorObject::invalid_params(format!("{method}: {e}")))
    }
    fn encode<T: serde::Serialize>(v: T) -> Result<Value, ErrorObject> {
        serde_json::to_value(v).map_err(ErrorObject::internal)
    }
    match method {
        "ping" => Ok(json!({})),
        "sampling/createMessage" => match &config.sampling {
            Some(handler) => encode(handler(decode::<CreateMessageParams>(method, params)?).await?),
            None => Err(ErrorObject::method_not_found(method)),
        },
        "elicitation/create" => match &config.elicitation {
            Some(handler) => encode(handler(decode::<ElicitParams>(method, params)?).await?),
            None => Err(ErrorObject::method_not_found(method)),
        },
        "roots/list" => match &config.roots {
            Some(handler) => encode(handler().await?),
            None => Err(ErrorObject::method_not_found(method)),
        },
        other => Err(ErrorObject::method_not_found(other)),
    }
}

/// Reads from the server until the connection closes or the session shuts it down.
pub(crate) async fn drive(shared: Arc<Shared>, mut incoming: mpsc::Receiver<Inbound>) {
    loop {
        let deadline = lock(&shared.pending).next_deadline();
        tokio::select! {
            biased;
            _ = shared.shutdown.cancelled() => break,
            frame = incoming.recv() => match frame {
                Some(Ok(frame)) => shared.handle_frame(&frame.text),
                Some(Err(e)) => tracing::warn!("unreadable message from the server: {e}"),
                None => {
                    tracing::debug!("the server closed the connection");
                    break;
                }
            },
            _ = sleep_until(deadline), if deadline.is_some() => shared.expire(),
            _ = shared.deadline_changed.notified() => {}
        }
    }
    shared.ended.cancel();
    shared.fail_all();
}

async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(d) => tokio::time::sleep_until(d.into()).await,
        None => std::future::pending().await,
    }
}

/// Adds `meta` to the `_meta` of `params` (ours win over the caller's on the same key).
pub(crate) fn with_meta(params: Option<Value>, meta: Map<String, Value>) -> Result<Option<Value>, ClientError> {
    if meta.is_empty() {
        return Ok(params);
    }
    let mut obj = match params {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(o)) => o,
        Some(_) => return Err(ClientError::InvalidArguments("request params must be a JSON object".into())),
    };
    match obj.get_mut("_meta") {
        Some(Value::Object(existing)) => existing.extend(meta),
        _ => {
            obj.insert("_meta".into(), Value::Object(meta));
        }
    }
    Ok(Some(Value::Object(obj)))
}
