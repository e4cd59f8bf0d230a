//! The sending side of one connection: notifications, and requests to the client with
//! their correlation and deadlines (the engine's [`PendingRequests`] behind a lock).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcp_protocol::engine::pending::PendingRequests;
use mcp_protocol::jsonrpc::{encode_notification, encode_request};
use mcp_protocol::{codec, ErrorObject, ProtocolVersion, RequestId};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

type Waiter = oneshot::Sender<Result<Value, ErrorObject>>;

/// A function that takes a connection's messages as they are sent; `false` when nobody
/// can receive them any more.
pub(crate) type SinkFn = Arc<dyn Fn(String) -> bool + Send + Sync>;

/// Where messages are written: a channel to a writer, or a function that files them
/// (a session with no connection of its own stores them for its readers).
#[derive(Clone)]
pub(crate) enum Sink {
    Channel(mpsc::Sender<String>),
    Function(SinkFn),
}

impl Sink {
    async fn send(&self, frame: String) -> bool {
        match self {
            Self::Channel(tx) => tx.send(frame).await.is_ok(),
            Self::Function(f) => f(frame),
        }
    }

    fn try_send(&self, frame: String) {
        match self {
            Self::Channel(tx) => drop(tx.try_send(frame)),
            Self::Function(f) => drop(f(frame)),
        }
    }
}

/// Where a connection's messages go.
#[derive(Clone)]
pub(crate) struct Outbound {
    tx: Sink,
    /// Whether `tx` is one request's stream (an HTTP response) rather than the connection.
    scoped: bool,
    pending: Arc<Mutex<PendingRequests<Waiter>>>,
}

impl Outbound {
    pub(crate) fn new(tx: mpsc::Sender<String>) -> Self {
        Self::to_sink(Sink::Channel(tx))
    }

    pub(crate) fn to_sink(tx: Sink) -> Self {
        Self { tx, scoped: false, pending: Arc::default() }
    }

    fn pending(&self) -> std::sync::MutexGuard<'_, PendingRequests<Waiter>> {
        self.pending.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The same connection's pending requests, with messages going to another sink (the
    /// stream of one HTTP request, say).
    pub(crate) fn with_sink(&self, tx: mpsc::Sender<String>) -> Self {
        Self { tx: Sink::Channel(tx), scoped: true, pending: self.pending.clone() }
    }

    /// Suggests that the transport close this request's response stream for the client to
    /// resume later; nothing happens unless the stream is request-scoped.
    pub(crate) async fn hint_close_stream(&self) {
        if self.scoped {
            self.tx.send(mcp_transport::CLOSE_STREAM_HINT.to_owned()).await;
        }
    }

    /// Sends one encoded frame; `false` if the connection is gone.
    pub(crate) async fn send_frame(&self, frame: String) -> bool {
        self.tx.send(frame).await
    }

    /// Sends a notification shaped for `rev`.
    pub(crate) async fn notify(&self, method: &str, mut params: Value, rev: ProtocolVersion) -> bool {
        codec::shape_notification_params(method, &mut params, rev);
        self.send_frame(encode_notification(method, Some(&params))).await
    }

    /// Sends a request to the client and waits for its answer, at most `timeout`.
    /// Dropping the returned future cancels the request (the client is told).
    pub(crate) async fn request(
        &self,
        method: &str,
        mut params: Value,
        rev: ProtocolVersion,
        timeout: Duration,
    ) -> Result<Value, ErrorObject> {
        codec::shape_server_request_params(method, &mut params, rev);
        let (tx, rx) = oneshot::channel();
        // The deadline is kept here rather than in the table: sessions over HTTP have no loop to expire it.
        let id = self.pending().register(method, tx, Instant::now(), None);
        let mut guard = CancelOnDrop { outbound: self, id: Some(id.clone()) };
        if !self.send_frame(encode_request(&id, method, Some(&params))).await {
            guard.id = None;
            self.pending().cancel(&id);
            return Err(ErrorObject::internal("connection closed"));
        }
        let outcome = match tokio::time::timeout(timeout, rx).await {
            Ok(answer) => answer.unwrap_or_else(|_| Err(ErrorObject::internal("connection closed"))),
            // The guard tells the client the answer is no longer needed.
            Err(_) => return Err(ErrorObject::internal(format!("the client did not answer {method} in time"))),
        };
        guard.id = None;
        outcome
    }

    /// Delivers a client's response to whoever waits for it; unknown ids are ignored.
    pub(crate) fn resolve(&self, id: &RequestId, outcome: Result<Value, ErrorObject>) {
        match self.pending().complete(id) {
            Some(waiter) => {
                let _ = waiter.send(outcome);
            }
            None => tracing::debug!(%id, "ignoring a response to an unknown or finished request"),
        }
    }

    /// Fails every outstanding request (the connection is closing).
    pub(crate) fn fail_all(&self) {
        for (_, waiter) in self.pending().drain() {
            let _ = waiter.send(Err(ErrorObject::internal("connection closed")));
        }
    }
}

/// Cancels an outstanding request to the client when its waiting future is dropped.
struct CancelOnDrop<'a> {
    outbound: &'a Outbound,
    id: Option<RequestId>,
}

impl Drop for CancelOnDrop<'_> {
    fn drop(&mut self) {
        if let Some(id) = self.id.take() {
            if self.outbound.pending().cancel(&id).is_some() {
                let params = serde_json::json!({"requestId": id, "reason": "the server no longer needs the answer"});
                self.outbound.tx.try_send(encode_notification("notifications/cancelled", Some(&params)));
            }
        }
    }
}
