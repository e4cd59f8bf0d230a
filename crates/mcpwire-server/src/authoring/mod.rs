//! Handlers as plain typed functions: what the `#[tool]`, `#[tools]`, `#[resource]` and
//! `#[prompt]` macros of the `mcpwire` crate build on, usable by hand too.
//!
//! - [`extract`]: arguments that are not the client's ([`Context`](crate::Context),
//!   [`State`]).
//! - [`schema`]: JSON Schemas from Rust types (schemars), self-contained.
//! - [`output`]: what a handler may return ([`Json`], [`ToolError`], text, content, results).
//! - [`definition`]: a tool, resource or prompt ready to register ([`ToolDef`],
//!   [`ResourceDef`], [`PromptDef`]) and the traits the macros implement.
//! - `glue`: the functions generated code calls (not a public interface).

pub mod definition;
pub mod extract;
#[doc(hidden)]
pub mod glue;
pub mod output;
pub mod schema;

pub use definition::{
    IntoPromptDef, IntoResourceDef, IntoToolDef, IntoToolSet, PromptDef, ResourceDef, ToolDef, ToolSet,
};
pub use extract::{FromContext, State};
pub use output::{IntoPromptResult, IntoReadResult, IntoToolResult, Json, OutputSchema, ToolError};
pub use schema::Argument;
