//! `subscriptions/listen` (2026-07-28): a long-lived request whose notifications carry its id.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures::Stream;
use mcp_protocol::jsonrpc;
use mcp_protocol::types::{ListenParams, SubscriptionFilter};
use mcp_protocol::{Era, RequestId};
use serde_json::Value;
use tokio::sync::mpsc;

use crate::error::ClientError;
use crate::notification::ServerNotification;
use crate::session::ClientSession;
use crate::shared::{with_meta, Outcome, Shared, LISTEN_CAPACITY};

const METHOD: &str = "subscriptions/listen";

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
        if self.era() != Era::Modern {
            return Err(ClientError::Unsupported { method: METHOD.to_owned(), version });
        }
        let params = serde_json::to_value(ListenParams { notifications: filter })
            .map_err(|e| ClientError::InvalidArguments(e.to_string()))?;
        let params = with_meta(Some(params), self.request_meta(version, None))?.unwrap_or(Value::Null);
        let (id, mut end) = shared.open_request(METHOD)?;
        let (tx, rx) = mpsc::channel(LISTEN_CAPACITY);
        shared.listens.lock().unwrap_or_else(|e| e.into_inner()).insert(id.clone(), tx);
        let mut stream = ListenStream {
            shared: shared.clone(),
            id: id.clone(),
            rx,
            honoured: SubscriptionFilter::default(),
            first: None,
        };
        shared.send(jsonrpc::encode_request(&id, METHOD, Some(&params))).await?;
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
            Ok(Outcome::Response(Err(error))) => ClientError::Protocol { method: METHOD.to_owned(), error },
            Ok(Outcome::Response(Ok(_))) => {
                ClientError::decode(METHOD, "the subscription ended before it was acknowledged")
            }
            Ok(Outcome::Malformed(detail)) => ClientError::decode(METHOD, detail),
            Ok(Outcome::TimedOut) => ClientError::Timeout { method: METHOD.to_owned(), timeout },
            Ok(Outcome::Closed) | Err(_) => ClientError::Closed,
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
                Err(ended(outcome.unwrap_or(Ok(Outcome::Closed))))
            }
            Ok(Err(outcome)) => Err(ended(outcome)),
        }
    }
}
