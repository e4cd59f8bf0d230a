//! The server's changes shared between instances: a resource updated or a list changed on one
//! instance is announced to the clients of every instance.

use std::sync::{Arc, OnceLock, Weak};

use futures::StreamExt;
use mcpwire_protocol::engine::Change;
use serde_json::{json, Value};
use tokio::sync::mpsc;

use super::{Bus, StoreError};
use crate::server::{Server, ServerInner};

/// The bus topic of the servers' changes.
pub const CHANGES_TOPIC: &str = "changes";

/// How this instance publishes its changes.
pub(crate) struct SharedChanges {
    publish: mpsc::UnboundedSender<Change>,
}

impl SharedChanges {
    /// Hands a change made here to the publisher.
    pub(crate) fn publish(&self, change: &Change) {
        // The publisher ends only with the server.
        let _ = self.publish.send(change.clone());
    }
}

fn encode(origin: &str, change: &Change) -> Vec<u8> {
    let change = match change {
        Change::Tools => json!("tools"),
        Change::Prompts => json!("prompts"),
        Change::Resources => json!("resources"),
        Change::ResourceUpdated(uri) => json!({ "resourceUpdated": uri }),
    };
    serde_json::to_vec(&json!({ "origin": origin, "change": change })).unwrap_or_default()
}

/// The change in a message, and the instance that published it; `None` for a message this
/// version does not know (a newer instance's, during a rolling upgrade): it is skipped.
fn decode(message: &[u8]) -> Option<(String, Change)> {
    let value: Value = serde_json::from_slice(message).ok()?;
    let origin = value.get("origin")?.as_str()?.to_owned();
    let change = match value.get("change")? {
        Value::String(s) if s == "tools" => Change::Tools,
        Value::String(s) if s == "prompts" => Change::Prompts,
        Value::String(s) if s == "resources" => Change::Resources,
        Value::Object(o) => Change::ResourceUpdated(o.get("resourceUpdated")?.as_str()?.to_owned()),
        _ => return None,
    };
    Some((origin, change))
}

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

/// The slot a server keeps its sharing in, set once.
pub(crate) type SharedChangesSlot = OnceLock<SharedChanges>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_survive_the_bus_and_unknown_ones_are_skipped() {
        for change in [Change::Tools, Change::Prompts, Change::Resources, Change::ResourceUpdated("file:///x".into())] {
            let (origin, back) = decode(&encode("a", &change)).unwrap();
            assert_eq!((origin.as_str(), back), ("a", change));
        }
        assert!(decode(br#"{"origin":"a","change":"apps"}"#).is_none());
        assert!(decode(b"not json").is_none());
    }
}
