use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{ContentBlock, JsonObject, Meta, Role};

/// A message in a sampling conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SamplingMessage {
    /// Who speaks.
    pub role: Role,
    /// One block, or (2025-11-25+) several.
    pub content: SamplingContent,
}

/// The content of a sampling message: one block or a list.
// One inline block is by far the common case; boxing it would cost an allocation each time.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum SamplingContent {
    /// One block.
    Single(ContentBlock),
    /// Several blocks (2025-11-25+).
    Multiple(Vec<ContentBlock>),
}

/// Params of `sampling/createMessage`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateMessageParams {
    /// The conversation.
    pub messages: Vec<SamplingMessage>,
    /// Most tokens to generate.
    pub max_tokens: u64,
    /// A system prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// Model preferences, kept as given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_preferences: Option<Value>,
    /// `none`, `thisServer`, `allServers`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_context: Option<String>,
    /// Sampling temperature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Stop sequences.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_sequences: Option<Vec<String>>,
    /// Provider-specific metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<JsonObject>,
    /// Tools the model may call (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<super::Tool>>,
    /// How the model should choose tools (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<Value>,
    /// Asks the client to answer as a task (2025-11-25, to a client that declares
    /// `tasks.requests.sampling.createMessage`; dropped for other revisions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<super::TaskMetadata>,
}

/// The result of `sampling/createMessage`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateMessageResult {
    /// Who speaks (the assistant).
    pub role: Role,
    /// What the model produced.
    pub content: SamplingContent,
    /// Which model answered.
    pub model: String,
    /// Why generation stopped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Params of `elicitation/create`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitParams {
    /// `form` (default) or `url` (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// What to ask the user.
    pub message: String,
    /// Form mode: a flat object schema of primitive properties.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requested_schema: Option<JsonObject>,
    /// URL mode: the page to open.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// URL mode: identifier of this elicitation (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elicitation_id: Option<String>,
    /// Asks the client to answer as a task (2025-11-25, to a client that declares
    /// `tasks.requests.elicitation.create`; dropped for other revisions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<super::TaskMetadata>,
}

/// The result of `elicitation/create`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ElicitResult {
    /// `accept`, `decline` or `cancel`.
    pub action: String,
    /// The form's values, when accepted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<JsonObject>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// A root the client exposes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Root {
    /// A `file://` URI.
    pub uri: String,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// The result of `roots/list`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ListRootsResult {
    /// The roots.
    pub roots: Vec<Root>,
}
