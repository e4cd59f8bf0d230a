//! The server's changes shared between instances: a resource updated or a list changed on one
//! instance is announced to the clients of every instance. Here: the bus topic, the messages
//! and the publishing side a server keeps; [`crate::Server::share_changes`] starts the sharing.

use std::sync::OnceLock;

use mcpwire_protocol::engine::Change;
use serde_json::{json, Value};
use tokio::sync::mpsc;

/// The bus topic of the servers' changes.
pub const CHANGES_TOPIC: &str = "changes";

/// How this instance publishes its changes.
pub(crate) struct SharedChanges {
    pub(crate) publish: mpsc::UnboundedSender<Change>,
}

impl SharedChanges {
    /// Hands a change made here to the publisher.
    pub(crate) fn publish(&self, change: &Change) {
        // The publisher ends only with the server.
        let _ = self.publish.send(change.clone());
    }
}

/// The message that carries `change`, made on instance `origin`, to the others.
pub(crate) fn encode(origin: &str, change: &Change) -> Vec<u8> {
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
pub(crate) fn decode(message: &[u8]) -> Option<(String, Change)> {
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
