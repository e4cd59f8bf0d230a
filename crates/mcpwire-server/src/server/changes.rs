//! Sharing the server's changes with the other instances of a deployment (scale-out). The
//! messages and the publishing side are [`crate::shared`]'s; starting the sharing needs the
//! server, so it lives here, above both.

use std::sync::{Arc, Weak};

use futures::StreamExt;
use mcpwire_protocol::engine::Change;
use tokio::sync::mpsc;

use super::{Server, ServerInner};
use crate::shared::changes::{decode, encode, SharedChanges};
use crate::shared::{Bus, StoreError, CHANGES_TOPIC};

impl Server {
    /// Shares this server's changes with the other instances of the deployment on `bus`:
    /// what changes here ([`Server::notify_resource_updated`], a tool, prompt or resource
    /// added or removed) is published, and what another instance publishes is announced to
    /// this instance's clients (their subscriptions and revisions decide, as for a local
    /// change). Call it once, within a tokio runtime; a second call is refused.
    ///
    /// Delivery is the bus's: at most once, to the instances running when the change is made.
    pub async fn share_changes(&self, bus: Arc<dyn Bus>) -> Result<(), StoreError> {
        let mut heard = bus.subscribe(CHANGES_TOPIC).await?;
        let origin = mcpwire_protocol::id::random_id();
        let (tx, mut rx) = mpsc::unbounded_channel::<Change>();
        let shared = SharedChanges { publish: tx };
        if self.inner.shared_changes.set(shared).is_err() {
            return Err(StoreError::corrupt("share_changes", "this server already shares its changes"));
        }
        let publisher = bus.clone();
        let publishing_origin = origin.clone();
        tokio::spawn(async move {
            while let Some(change) = rx.recv().await {
                if let Err(e) = publisher.publish(CHANGES_TOPIC, encode(&publishing_origin, &change)).await {
                    tracing::warn!(error = %e, "a change could not be shared with the other instances");
                }
            }
        });
        let weak: Weak<ServerInner> = Arc::downgrade(&self.inner);
        tokio::spawn(async move {
            while let Some(message) = heard.next().await {
                let Some(inner) = weak.upgrade() else { break };
                match decode(&message) {
                    Some((from, _)) if from == origin => {}
                    // Told to this instance's clients only: it was published where it was made.
                    Some((_, change)) => {
                        let _ = inner.changes.send(change);
                    }
                    None => tracing::debug!("a message on the changes topic was not understood; skipped"),
                }
            }
        });
        Ok(())
    }
}
