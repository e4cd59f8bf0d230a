//! Every method name of every revision, spelled once.
//!
//! A method is a [`Method`]; its wire name is [`Method::as_str`], and [`Method::parse`] is the
//! one place where a name read off the wire is compared with the known ones. Code above the
//! codec matches on the enum, never on strings.

use std::fmt;

/// A request or notification method of the Model Context Protocol (any revision, either
/// direction).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Method {
    // ---- requests from the client ----
    /// `initialize` (legacy era).
    Initialize,
    /// `ping` (legacy era; both directions).
    Ping,
    /// `server/discover` (2026-07-28).
    Discover,
    /// `tools/list`.
    ListTools,
    /// `tools/call`.
    CallTool,
    /// `resources/list`.
    ListResources,
    /// `resources/templates/list`.
    ListResourceTemplates,
    /// `resources/read`.
    ReadResource,
    /// `resources/subscribe` (legacy era).
    Subscribe,
    /// `resources/unsubscribe` (legacy era).
    Unsubscribe,
    /// `prompts/list`.
    ListPrompts,
    /// `prompts/get`.
    GetPrompt,
    /// `completion/complete`.
    Complete,
    /// `logging/setLevel` (legacy era).
    SetLevel,
    /// `subscriptions/listen` (2026-07-28).
    Listen,
    /// `tasks/get`.
    GetTask,
    /// `tasks/result` (2025-11-25).
    TaskResult,
    /// `tasks/list` (2025-11-25).
    ListTasks,
    /// `tasks/cancel`.
    CancelTask,
    /// `tasks/update` (2026-07-28 tasks extension).
    UpdateTask,
    // ---- requests from the server ----
    /// `sampling/createMessage`.
    CreateMessage,
    /// `elicitation/create` (2025-06-18+).
    Elicit,
    /// `roots/list`.
    ListRoots,
    // ---- notifications ----
    /// `notifications/initialized` (legacy era, from the client).
    Initialized,
    /// `notifications/cancelled` (both directions; `$/cancelRequest` is read as it).
    Cancelled,
    /// `notifications/progress` (both directions).
    Progress,
    /// `notifications/message`: a log message from the server.
    LogMessage,
    /// `notifications/tools/list_changed`.
    ToolsListChanged,
    /// `notifications/prompts/list_changed`.
    PromptsListChanged,
    /// `notifications/resources/list_changed`.
    ResourcesListChanged,
    /// `notifications/resources/updated`.
    ResourceUpdated,
    /// `notifications/roots/list_changed` (legacy era, from the client).
    RootsListChanged,
    /// `notifications/elicitation/complete` (2025-11-25).
    ElicitationComplete,
    /// `notifications/subscriptions/acknowledged` (2026-07-28).
    SubscriptionsAcknowledged,
    /// `notifications/tasks/status` (2025-11-25).
    TaskStatus,
}

/// The alias some peers send for `notifications/cancelled` (an early draft's name); read,
/// never written.
const CANCEL_REQUEST_ALIAS: &str = "$/cancelRequest";

impl Method {
    /// Every method, in declaration order.
    pub const ALL: [Method; 35] = [
        Self::Initialize,
        Self::Ping,
        Self::Discover,
        Self::ListTools,
        Self::CallTool,
        Self::ListResources,
        Self::ListResourceTemplates,
        Self::ReadResource,
        Self::Subscribe,
        Self::Unsubscribe,
        Self::ListPrompts,
        Self::GetPrompt,
        Self::Complete,
        Self::SetLevel,
        Self::Listen,
        Self::GetTask,
        Self::TaskResult,
        Self::ListTasks,
        Self::CancelTask,
        Self::UpdateTask,
        Self::CreateMessage,
        Self::Elicit,
        Self::ListRoots,
        Self::Initialized,
        Self::Cancelled,
        Self::Progress,
        Self::LogMessage,
        Self::ToolsListChanged,
        Self::PromptsListChanged,
        Self::ResourcesListChanged,
        Self::ResourceUpdated,
        Self::RootsListChanged,
        Self::ElicitationComplete,
        Self::SubscriptionsAcknowledged,
        Self::TaskStatus,
    ];

    /// The name on the wire.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Initialize => "initialize",
            Self::Ping => "ping",
            Self::Discover => "server/discover",
            Self::ListTools => "tools/list",
            Self::CallTool => "tools/call",
            Self::ListResources => "resources/list",
            Self::ListResourceTemplates => "resources/templates/list",
            Self::ReadResource => "resources/read",
            Self::Subscribe => "resources/subscribe",
            Self::Unsubscribe => "resources/unsubscribe",
            Self::ListPrompts => "prompts/list",
            Self::GetPrompt => "prompts/get",
            Self::Complete => "completion/complete",
            Self::SetLevel => "logging/setLevel",
            Self::Listen => "subscriptions/listen",
            Self::GetTask => "tasks/get",
            Self::TaskResult => "tasks/result",
            Self::ListTasks => "tasks/list",
            Self::CancelTask => "tasks/cancel",
            Self::UpdateTask => "tasks/update",
            Self::CreateMessage => "sampling/createMessage",
            Self::Elicit => "elicitation/create",
            Self::ListRoots => "roots/list",
            Self::Initialized => "notifications/initialized",
            Self::Cancelled => "notifications/cancelled",
            Self::Progress => "notifications/progress",
            Self::LogMessage => "notifications/message",
            Self::ToolsListChanged => "notifications/tools/list_changed",
            Self::PromptsListChanged => "notifications/prompts/list_changed",
            Self::ResourcesListChanged => "notifications/resources/list_changed",
            Self::ResourceUpdated => "notifications/resources/updated",
            Self::RootsListChanged => "notifications/roots/list_changed",
            Self::ElicitationComplete => "notifications/elicitation/complete",
            Self::SubscriptionsAcknowledged => "notifications/subscriptions/acknowledged",
            Self::TaskStatus => "notifications/tasks/status",
        }
    }

    /// The method a wire name stands for; `None` for a name no revision defines.
    pub fn parse(name: &str) -> Option<Method> {
        if name == CANCEL_REQUEST_ALIAS {
            return Some(Self::Cancelled);
        }
        Self::ALL.into_iter().find(|m| m.as_str() == name)
    }

    /// Whether the method is a notification's (no id, no response).
    pub const fn is_notification(self) -> bool {
        matches!(
            self,
            Self::Initialized
                | Self::Cancelled
                | Self::Progress
                | Self::LogMessage
                | Self::ToolsListChanged
                | Self::PromptsListChanged
                | Self::ResourcesListChanged
                | Self::ResourceUpdated
                | Self::RootsListChanged
                | Self::ElicitationComplete
                | Self::SubscriptionsAcknowledged
                | Self::TaskStatus
        )
    }

    /// Whether the result of this request is cacheable (it carries `ttlMs`/`cacheScope` from
    /// 2026-07-28).
    pub const fn is_cacheable(self) -> bool {
        matches!(
            self,
            Self::ListTools
                | Self::ListPrompts
                | Self::ListResources
                | Self::ListResourceTemplates
                | Self::ReadResource
                | Self::Discover
        )
    }

    /// Whether a 2026-07-28 request of this method may be answered `input_required`
    /// (multi-round requests).
    pub const fn allows_input_rounds(self) -> bool {
        matches!(self, Self::CallTool | Self::GetPrompt | Self::ReadResource)
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A method name read off the wire: a known [`Method`], or a name no revision defines (kept
/// to say which in the error).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum MethodName {
    /// A method of the protocol.
    Known(Method),
    /// Anything else.
    Unknown(String),
}

impl MethodName {
    /// Reads a wire name.
    pub fn parse(name: &str) -> Self {
        match Method::parse(name) {
            Some(m) => Self::Known(m),
            None => Self::Unknown(name.to_owned()),
        }
    }

    /// The name as it was on the wire (the canonical name for an alias).
    pub fn as_str(&self) -> &str {
        match self {
            Self::Known(m) => m.as_str(),
            Self::Unknown(s) => s,
        }
    }

    /// The method, when it is a known one.
    pub fn known(&self) -> Option<Method> {
        match self {
            Self::Known(m) => Some(*m),
            Self::Unknown(_) => None,
        }
    }
}

impl fmt::Display for MethodName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl From<Method> for MethodName {
    fn from(m: Method) -> Self {
        Self::Known(m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_are_unique() {
        let mut seen = std::collections::HashSet::new();
        for m in Method::ALL {
            assert!(seen.insert(m.as_str()), "{m} spelled twice");
            assert_eq!(Method::parse(m.as_str()), Some(m));
        }
        assert_eq!(Method::parse("$/cancelRequest"), Some(Method::Cancelled));
        assert_eq!(Method::parse("tools/cal"), None);
        assert_eq!(MethodName::parse("vendor/x"), MethodName::Unknown("vendor/x".into()));
        assert!(Method::Progress.is_notification() && !Method::Ping.is_notification());
    }

    #[test]
    fn every_method_of_every_schema_is_known() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../spec/schema");
        for rev in crate::ProtocolVersion::ALL {
            let text = std::fs::read_to_string(format!("{root}/{rev}/schema.json")).expect("schema");
            let schema: serde_json::Value = serde_json::from_str(&text).expect("json");
            let defs = schema.get("definitions").or_else(|| schema.get("$defs")).and_then(|d| d.as_object());
            for def in defs.expect("definitions").values() {
                if let Some(name) = def.pointer("/properties/method/const").and_then(|m| m.as_str()) {
                    assert!(Method::parse(name).is_some(), "{rev}: {name} is not a Method");
                }
            }
        }
    }
}
