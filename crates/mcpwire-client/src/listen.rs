//! `subscriptions/listen` (2026-07-28): a long-lived request whose notifications carry its id.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures::Stream;
use mcpwire_protocol::engine::Failure;
use mcpwire_protocol::message::{ClientRequest, ServerNotification};
use mcpwire_protocol::types::{ListenParams, SubscriptionFilter};
use mcpwire_protocol::{Method, RequestId, Sender};
use tokio::sync::mpsc;

use crate::driver::{failed, Outcome, Shared, LISTEN_CAPACITY};
use crate::error::ClientError;
use crate::session::ClientSession;

const METHOD: &str = Method::Listen.as_str();

/// The notifications of one `subscriptions/listen` request: list changes and resource
/// updates, as the server acknowledged them. Ends (`None`) when the server ends the
/// subscription or the connection closes. Dropping it cancels the subscription
/// (`notifications/cancelled`).
pub struct ListenStream {
    shared: Arc<Shared>,
    id: RequestId,
    rx: mpsc::Receiver<ServerNotification>,
    honoured: SubscriptionFilter,
    first: Option<ServerNotification>,
}

impl std::fmt::Debug for ListenStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ListenStream").field("id", &self.id).field("honoured", &self.honoured).finish()
    }
}

impl ListenStream {
    /// The request id of the subscription (the `subscriptionId` of its notifications).
    pub fn id(&self) -> &RequestId {
        &self.id
    }

    /// What the server agreed to send (its acknowledgement): a subset of the filter asked for.
    pub fn honoured(&self) -> &SubscriptionFilter {
        &self.honoured
    }

    /// The next notification; `None` once the subscription has ended.
    pub async fn next(&mut self) -> Option<ServerNotification> {
        if let Some(n) = self.first.take() {
            return Some(n);
        }
        self.rx.recv().await
    }

    /// Cancels the subscription (the same as dropping the stream).
    pub fn cancel(self) {}
}

impl Stream for ListenStream {
    type Item = ServerNotification;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if let Some(n) = self.first.take() {
            return Poll::Ready(Some(n));
        }
        self.rx.poll_recv(cx)
    }
}

impl Drop for ListenStream {
    fn drop(&mut self) {
        self.shared.cancel_request(&self.id, "the client stopped listening");
    }
}

impl ClientSession {
    /// Opens a `subscriptions/listen` stream (modern era; in the legacy era list changes
    /// arrive on [`Self::notifications`] and resources use [`Self::subscribe`]). Returns
    /// once the server has acknowledged it, within the call timeout.
    pub async fn listen(&self, filter: SubscriptionFilter) -> Result<ListenStream, ClientError> {
        let shared = self.shared();
        let version = self.protocol_version();
        if !version.has_request(Method::Listen, Sender::Client) {
            return Err(ClientError::Unsupported { method: METHOD.to_owned(), version });
        }
        let (tx, rx) = mpsc::channel(LISTEN_CAPACITY);
        let request = ClientRequest::Listen(ListenParams { notifications: filter });
        // The stream is routed before the request goes out: its acknowledgement finds it.
        let (id, mut end) = shared
            .open_request(&request, |id| {
                shared.listens.lock().insert(id.clone(), tx);
            })
            .await?;
        let mut stream = ListenStream {
            shared: shared.clone(),
            id: id.clone(),
            rx,
            honoured: SubscriptionFilter::default(),
            first: None,
        };
        let timeout = self.timeout();
        let first = tokio::time::timeout(timeout, async {
            // The acknowledgement, when it came, was routed before any final response:
            // look at it first.
            tokio::select! {
                biased;
                n = stream.rx.recv() => Ok(n),
                outcome = &mut end => Err(outcome),
            }
        })
        .await;
        let ended = |outcome: Result<Outcome, _>| match outcome {
            Ok(Ok(_)) => ClientError::decode(METHOD, "the subscription ended before it was acknowledged"),
            Ok(Err(failure)) => failed(METHOD, timeout, failure),
            Err(_) => ClientError::Closed,
        };
        match first {
            Err(_) => Err(ClientError::Timeout { method: METHOD.to_owned(), timeout }),
            Ok(Ok(Some(ServerNotification::SubscriptionsAcknowledged(honoured)))) => {
                stream.honoured = honoured;
                Ok(stream)
            }
            Ok(Ok(Some(other))) => {
                // The acknowledgement MUST come first; be liberal and keep what came.
                tracing::warn!(method = other.method(), "listen stream began without an acknowledgement");
                stream.first = Some(other);
                Ok(stream)
            }
            // The channel closed: the request ended; its outcome says how.
            Ok(Ok(None)) => {
                let outcome = tokio::time::timeout(std::time::Duration::from_secs(1), end).await;
                Err(ended(outcome.unwrap_or(Ok(Err(Failure::Closed)))))
            }
            Ok(Err(outcome)) => Err(ended(outcome)),
        }
    }
}
