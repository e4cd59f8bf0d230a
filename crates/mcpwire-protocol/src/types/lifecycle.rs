use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{Implementation, JsonObject};
use crate::revision::ProtocolVersion;

/// A capability with only a `listChanged` flag.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListChangedCapability {
    /// The list-changed notification is sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
}

/// The server's `resources` capability.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourcesCapability {
    /// Subscriptions to resource updates are supported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subscribe: Option<bool>,
    /// The list-changed notification is sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
}

/// What a server can do.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerCapabilities {
    /// Non-standard capabilities.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experimental: Option<JsonObject>,
    /// Log messages are sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logging: Option<JsonObject>,
    /// Argument completion (2025-03-26+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completions: Option<JsonObject>,
    /// Prompts are offered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompts: Option<ListChangedCapability>,
    /// Resources are offered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<ResourcesCapability>,
    /// Tools are offered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<ListChangedCapability>,
    /// Tasks (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tasks: Option<JsonObject>,
    /// Extensions (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<JsonObject>,
}

/// What a client can do. Sub-capabilities are kept as JSON objects: they grow with every
/// revision, and a server only needs to know whether one is present.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClientCapabilities {
    /// Non-standard capabilities.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experimental: Option<JsonObject>,
    /// `roots/list` is answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roots: Option<JsonObject>,
    /// `sampling/createMessage` is answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampling: Option<JsonObject>,
    /// `elicitation/create` is answered (2025-06-18+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elicitation: Option<JsonObject>,
    /// Tasks (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tasks: Option<JsonObject>,
    /// Extensions (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<JsonObject>,
}

impl ServerCapabilities {
    /// Whether the server declared that it runs `method` as a task when asked (2025-11-25
    /// `tasks.requests`: `tools.call`).
    pub fn offers_task_requests(&self, method: crate::Method) -> bool {
        let path: &[&str] = match method {
            crate::Method::CallTool => &["requests", "tools", "call"],
            _ => return false,
        };
        declared(self.tasks.as_ref(), path)
    }
}

/// Whether `tasks` declares the object at `path`.
fn declared(tasks: Option<&JsonObject>, path: &[&str]) -> bool {
    let Some((first, rest)) = path.split_first() else { return false };
    let mut at = tasks.and_then(|t| t.get(*first));
    for key in rest {
        at = at.and_then(|v| v.get(key));
    }
    at.is_some_and(serde_json::Value::is_object)
}

impl ClientCapabilities {
    /// Whether the client declared that it answers `method` as a task when asked
    /// (2025-11-25 `tasks.requests`: `elicitation.create`, `sampling.createMessage`).
    pub fn takes_task_requests(&self, method: crate::Method) -> bool {
        use crate::Method;
        let path: &[&str] = match method {
            Method::Elicit => &["requests", "elicitation", "create"],
            Method::CreateMessage => &["requests", "sampling", "createMessage"],
            _ => return false,
        };
        declared(self.tasks.as_ref(), path)
    }

    /// Whether the client declared the 2025-11-25 task request `method` (`tasks.list`,
    /// `tasks.cancel`; `tasks/get` and `tasks/result` come with any task support).
    pub fn answers_task_request(&self, method: crate::Method) -> bool {
        use crate::Method;
        let Some(tasks) = &self.tasks else { return false };
        match method {
            Method::ListTasks => tasks.get("list").is_some_and(serde_json::Value::is_object),
            Method::CancelTask => tasks.get("cancel").is_some_and(serde_json::Value::is_object),
            Method::GetTask | Method::TaskResult => true,
            _ => false,
        }
    }
}

/// Params of `initialize` (legacy era).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeParams {
    /// The version the client wants (kept as a string: it may be one we do not know).
    pub protocol_version: String,
    /// The client's capabilities.
    #[serde(default)]
    pub capabilities: ClientCapabilities,
    /// Who the client is.
    pub client_info: Implementation,
}

/// The result of `initialize`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeResult {
    /// The negotiated version.
    pub protocol_version: ProtocolVersion,
    /// The server's capabilities.
    pub capabilities: ServerCapabilities,
    /// Who the server is.
    pub server_info: Implementation,
    /// How to use the server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
}

/// Who may cache a cacheable result (2026-07-28).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CacheScope {
    /// Any cache, shared across users.
    Public,
    /// Only caches of the same authorization context.
    Private,
}

/// Caching hints of a cacheable result (2026-07-28).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheHint {
    /// How long the result stays fresh, in milliseconds.
    pub ttl_ms: u64,
    /// Who may cache it.
    pub scope: CacheScope,
}

impl Default for CacheHint {
    fn default() -> Self {
        Self { ttl_ms: 0, scope: CacheScope::Private }
    }
}

/// The result of `server/discover` (2026-07-28).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DiscoverResult {
    /// Versions the server supports.
    pub supported_versions: Vec<String>,
    /// The server's capabilities.
    pub capabilities: ServerCapabilities,
    /// How to use the server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// Other members (caching hints, `_meta`), kept.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// The `_meta` keys of the 2026-07-28 era.
pub mod meta_keys {
    /// The request's protocol version.
    pub const PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
    /// The client's capabilities for this request.
    pub const CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
    /// Who the client is.
    pub const CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
    /// The least severe log level wanted for this request.
    pub const LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
    /// Who the server is (on results).
    pub const SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
    /// The listen stream a notification belongs to.
    pub const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";
    /// Progress token (all revisions).
    pub const PROGRESS_TOKEN: &str = "progressToken";
}

/// Reads a field of a params object's `_meta`.
pub fn meta_field<'a>(params: Option<&'a Value>, key: &str) -> Option<&'a Value> {
    params?.get("_meta")?.get(key)
}
