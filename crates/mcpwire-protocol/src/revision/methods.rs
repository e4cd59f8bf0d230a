//! Which requests and notifications each revision has, by who sends them: the one table both
//! roles read (the server to refuse a method the client's revision lacks, the client not to
//! send one).

use super::ProtocolVersion;
use crate::method::Method;

/// Who sends a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Sender {
    /// The client.
    Client,
    /// The server.
    Server,
}

impl ProtocolVersion {
    /// Whether `sender` may send a request of `method` in this revision: the revision's
    /// `ClientRequest` or `ServerRequest` union, and in 2026-07-28 the tasks extension
    /// (`tasks/get`, `tasks/update`, `tasks/cancel`). In 2026-07-28 a server sends no request
    /// at all: its questions travel inside `input_required` results. Notifications are not
    /// requests.
    pub const fn has_request(self, method: Method, sender: Sender) -> bool {
        use Method as M;
        let legacy = !self.is_modern();
        let tasks = matches!(self, Self::V2025_11_25);
        match sender {
            Sender::Client => match method {
                M::ListTools
                | M::CallTool
                | M::ListResources
                | M::ListResourceTemplates
                | M::ReadResource
                | M::ListPrompts
                | M::GetPrompt
                | M::Complete => true,
                M::Initialize | M::Ping | M::Subscribe | M::Unsubscribe | M::SetLevel => legacy,
                M::Discover | M::Listen | M::UpdateTask => !legacy,
                M::GetTask | M::CancelTask => tasks || !legacy,
                M::TaskResult | M::ListTasks => tasks,
                _ => false,
            },
            Sender::Server => match method {
                M::Ping | M::CreateMessage | M::ListRoots => legacy,
                M::Elicit => legacy && !matches!(self, Self::V2024_11_05 | Self::V2025_03_26),
                M::GetTask | M::TaskResult | M::ListTasks | M::CancelTask => tasks,
                _ => false,
            },
        }
    }

    /// Whether `sender` may send a notification of `method` in this revision. In 2026-07-28
    /// a client cancels with `notifications/cancelled` (the transports say so, though the
    /// schema's union of client notifications is empty), and sends nothing else.
    pub const fn has_notification(self, method: Method, sender: Sender) -> bool {
        use Method as M;
        let legacy = !self.is_modern();
        let tasks = matches!(self, Self::V2025_11_25);
        match sender {
            Sender::Client => match method {
                M::Cancelled => true,
                M::Initialized | M::Progress | M::RootsListChanged => legacy,
                M::TaskStatus => tasks,
                _ => false,
            },
            Sender::Server => match method {
                M::Cancelled
                | M::Progress
                | M::LogMessage
                | M::ToolsListChanged
                | M::PromptsListChanged
                | M::ResourcesListChanged
                | M::ResourceUpdated => true,
                M::ElicitationComplete | M::TaskStatus => tasks,
                M::SubscriptionsAcknowledged => !legacy,
                _ => false,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    /// The method names of a union of the official schema of `version` (none when the
    /// schema has no such union).
    fn union(version: ProtocolVersion, name: &str) -> BTreeSet<String> {
        let path = format!("{}/../../spec/schema/{}/schema.json", env!("CARGO_MANIFEST_DIR"), version.as_str());
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let schema: serde_json::Value = serde_json::from_str(&text).unwrap();
        let defs = schema.get("definitions").or_else(|| schema.get("$defs")).unwrap();
        let Some(members) = defs.get(name).and_then(|u| u.get("anyOf").or_else(|| u.get("oneOf"))) else {
            return BTreeSet::new();
        };
        members
            .as_array()
            .unwrap()
            .iter()
            .map(|m| {
                let def = m["$ref"].as_str().unwrap().rsplit('/').next().unwrap();
                defs[def]["properties"]["method"]["const"].as_str().unwrap().to_owned()
            })
            .collect()
    }

    fn table(version: ProtocolVersion, sender: Sender, notifications: bool) -> BTreeSet<String> {
        Method::ALL
            .into_iter()
            .filter(|m| match notifications {
                true => version.has_notification(*m, sender),
                false => version.has_request(*m, sender),
            })
            .map(|m| m.as_str().to_owned())
            .collect()
    }

    /// The table is each revision's schema, plus what lives outside it: the 2026-07-28
    /// tasks extension and the cancellation its transports define.
    #[test]
    fn the_table_is_the_schema_of_each_revision() {
        let beyond_schema = |version: ProtocolVersion, union: &str| -> BTreeSet<String> {
            let names: &[&str] = match (version.is_modern(), union) {
                (true, "ClientRequest") => &["tasks/get", "tasks/update", "tasks/cancel"],
                (true, "ClientNotification") => &["notifications/cancelled"],
                _ => &[],
            };
            names.iter().map(|n| (*n).to_owned()).collect()
        };
        for version in ProtocolVersion::ALL {
            for (name, sender, notifications) in [
                ("ClientRequest", Sender::Client, false),
                ("ServerRequest", Sender::Server, false),
                ("ClientNotification", Sender::Client, true),
                ("ServerNotification", Sender::Server, true),
            ] {
                let mut expected = union(version, name);
                expected.extend(beyond_schema(version, name));
                assert_eq!(table(version, sender, notifications), expected, "{name} of {version}");
            }
        }
    }

    #[test]
    fn a_notification_is_no_request() {
        for version in ProtocolVersion::ALL {
            for method in Method::ALL.into_iter().filter(|m| m.is_notification()) {
                assert!(!version.has_request(method, Sender::Client) && !version.has_request(method, Sender::Server));
            }
        }
    }
}
