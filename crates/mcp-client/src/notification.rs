//! Notifications from the server, as the application sees them.

use mcp_protocol::jsonrpc::Notification;
use mcp_protocol::types::{
    CancelledParams, LoggingMessageParams, ProgressParams, ResourceUpdatedParams, SubscriptionFilter, Task,
};
use serde::de::DeserializeOwned;
use serde_json::Value;

/// A notification the server sent. Known methods are decoded; anything else (or a known
/// method with params that do not decode) is kept as [`ServerNotification::Other`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ServerNotification {
    /// `notifications/progress` for a request that did not register a progress callback.
    Progress(ProgressParams),
    /// `notifications/message`: a log message.
    Log(LoggingMessageParams),
    /// `notifications/tools/list_changed`.
    ToolsListChanged,
    /// `notifications/prompts/list_changed`.
    PromptsListChanged,
    /// `notifications/resources/list_changed`.
    ResourcesListChanged,
    /// `notifications/resources/updated`.
    ResourceUpdated(ResourceUpdatedParams),
    /// `notifications/elicitation/complete` (2025-11-25): a URL-mode elicitation finished.
    ElicitationComplete {
        /// The elicitation's id.
        elicitation_id: String,
    },
    /// `notifications/subscriptions/acknowledged` for a listen stream this client no longer
    /// knows (a stream's own acknowledgement is read by [`crate::ClientSession::listen`]).
    SubscriptionsAcknowledged(SubscriptionFilter),
    /// `notifications/cancelled` from the server.
    Cancelled(CancelledParams),
    /// `notifications/tasks/status` (2025-11-25): a task's new state.
    TaskStatus(Box<Task>),
    /// Any other notification, as received.
    Other(Notification),
}

fn parse<T: DeserializeOwned>(params: &Option<Value>) -> Option<T> {
    serde_json::from_value(params.clone().unwrap_or(Value::Object(Default::default()))).ok()
}

impl ServerNotification {
    /// Decodes a JSON-RPC notification.
    pub fn from_notification(n: Notification) -> Self {
        let decoded = match n.method.as_str() {
            "notifications/progress" => parse(&n.params).map(Self::Progress),
            "notifications/message" => parse(&n.params).map(Self::Log),
            "notifications/tools/list_changed" => Some(Self::ToolsListChanged),
            "notifications/prompts/list_changed" => Some(Self::PromptsListChanged),
            "notifications/resources/list_changed" => Some(Self::ResourcesListChanged),
            "notifications/resources/updated" => parse(&n.params).map(Self::ResourceUpdated),
            "notifications/elicitation/complete" => n
                .params
                .as_ref()
                .and_then(|p| p.get("elicitationId"))
                .and_then(Value::as_str)
                .map(|id| Self::ElicitationComplete { elicitation_id: id.to_owned() }),
            "notifications/subscriptions/acknowledged" => n
                .params
                .as_ref()
                .and_then(|p| p.get("notifications"))
                .and_then(|f| serde_json::from_value(f.clone()).ok())
                .map(Self::SubscriptionsAcknowledged),
            "notifications/cancelled" | "$/cancelRequest" => parse(&n.params).map(Self::Cancelled),
            "notifications/tasks/status" => parse::<Task>(&n.params).map(|t| Self::TaskStatus(Box::new(t))),
            _ => None,
        };
        decoded.unwrap_or(Self::Other(n))
    }

    /// The notification's method name.
    pub fn method(&self) -> &str {
        match self {
            Self::Progress(_) => "notifications/progress",
            Self::Log(_) => "notifications/message",
            Self::ToolsListChanged => "notifications/tools/list_changed",
            Self::PromptsListChanged => "notifications/prompts/list_changed",
            Self::ResourcesListChanged => "notifications/resources/list_changed",
            Self::ResourceUpdated(_) => "notifications/resources/updated",
            Self::ElicitationComplete { .. } => "notifications/elicitation/complete",
            Self::SubscriptionsAcknowledged(_) => "notifications/subscriptions/acknowledged",
            Self::Cancelled(_) => "notifications/cancelled",
            Self::TaskStatus(_) => "notifications/tasks/status",
            Self::Other(n) => &n.method,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn n(method: &str, params: Value) -> ServerNotification {
        ServerNotification::from_notification(Notification { method: method.into(), params: Some(params) })
    }

    #[test]
    fn decodes_known_and_keeps_the_rest() {
        assert!(matches!(
            n("notifications/progress", json!({"progressToken": 1, "progress": 2.0})),
            ServerNotification::Progress(p) if p.progress == 2.0
        ));
        assert!(matches!(
            n("notifications/message", json!({"level": "info", "data": "x"})),
            ServerNotification::Log(_)
        ));
        assert_eq!(n("notifications/tools/list_changed", json!({})), ServerNotification::ToolsListChanged);
        assert!(matches!(
            n("notifications/resources/updated", json!({"uri": "a://b", "_meta": {}})),
            ServerNotification::ResourceUpdated(p) if p.uri == "a://b"
        ));
        // Malformed params of a known method: kept as is, never an error.
        let bad = n("notifications/progress", json!({"progress": "lots"}));
        assert!(matches!(&bad, ServerNotification::Other(o) if o.method == "notifications/progress"));
        assert_eq!(bad.method(), "notifications/progress");
        assert!(matches!(n("vendor/thing", json!([1])), ServerNotification::Other(_)));
    }
}
