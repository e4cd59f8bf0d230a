//! The neutral model: one Rust type per MCP concept, as handler code sees it.
//!
//! These types hold the union of what every revision can say. Writing them for a given
//! revision (dropping what it lacks, adding what it requires) is the job of [`crate::codec`].
//! Unknown members are ignored on input, never a decode failure; `_meta` is kept.

mod apps;
mod client;
mod common;
mod completion;
mod content;
mod lifecycle;
mod logging;
mod notifications;
mod prompts;
mod resources;
mod subscriptions;
mod tasks;
mod tools;

pub use apps::*;
pub use client::*;
pub use common::*;
pub use completion::*;
pub use content::*;
pub use lifecycle::*;
pub use logging::*;
pub use notifications::*;
pub use prompts::*;
pub use resources::*;
pub use subscriptions::*;
pub use tasks::*;
pub use tools::*;

/// A `_meta` object: reserved metadata attached to requests, results, notifications and types.
pub type Meta = serde_json::Map<String, serde_json::Value>;

/// A JSON object (`{ [key: string]: unknown }`).
pub type JsonObject = serde_json::Map<String, serde_json::Value>;

/// Params of list requests: an opaque pagination cursor.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PaginatedParams {
    /// Where to continue from; absent for the first page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
}

/// How a 2026-07-28 result says what it is: the member, and its values.
pub mod result_type {
    /// The member (`resultType`).
    pub const MEMBER: &str = "resultType";
    /// A complete result (also what an absent member means).
    pub const COMPLETE: &str = "complete";
    /// A result that needs input from the client first.
    pub const INPUT_REQUIRED: &str = "input_required";
    /// A request that became a task (the tasks extension).
    pub const TASK: &str = "task";
}
