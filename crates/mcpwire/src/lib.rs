//! The Model Context Protocol for Rust: servers and clients of every revision
//! (`2024-11-05` to `2026-07-28`), over stdio, child processes and Streamable HTTP.
//!
//! ```sh
//! cargo add mcpwire                # the library, with every default feature
//! cargo add mcpwire --no-default-features --features server,macros   # a lean stdio server
//! cargo install mcpwire-cli        # the `mcp` command-line tool (client, proxy, inspector)
//! ```
//!
//! The guides: [handlers and their errors](https://github.com/mcpwire/mcpwire/blob/main/docs/HANDLERS.md),
//! [middleware, the bridge and the gateway](https://github.com/mcpwire/mcpwire/blob/main/docs/MIDDLEWARE.md),
//! [authorization (OAuth)](https://github.com/mcpwire/mcpwire/blob/main/docs/AUTHORIZATION.md), [running in production](https://github.com/mcpwire/mcpwire/blob/main/docs/PRODUCTION.md),
//! [several instances on one Redis](https://github.com/mcpwire/mcpwire/blob/main/docs/SCALING.md), and
//! [performance](https://github.com/mcpwire/mcpwire/blob/main/docs/PERFORMANCE.md).
//!
//! # A server in plain functions
//!
//! ```no_run
//! use std::sync::{Arc, Mutex};
//! use mcpwire::{prompt, resource, tool, Json, Server, State, ToolError};
//! use schemars::JsonSchema;
//! use serde::Serialize;
//!
//! #[derive(Serialize, JsonSchema)]
//! struct Sum { sum: f64 }
//!
//! /// Adds two numbers.
//! #[tool(read_only)]
//! async fn add(
//!     /// The first addend.
//!     a: f64,
//!     /// The second addend.
//!     b: f64,
//! ) -> Json<Sum> {
//!     Json(Sum { sum: a + b })
//! }
//!
//! /// A note, by number.
//! #[resource("notes://{id}", mime_type = "text/plain")]
//! async fn note(id: usize, State(notes): State<Arc<Mutex<Vec<String>>>>) -> Option<String> {
//!     notes.lock().unwrap().get(id).cloned()
//! }
//!
//! /// Asks for a review of some code.
//! #[prompt]
//! fn review(code: String, language: Option<String>) -> String {
//!     format!("Review this {} code:\n{code}", language.as_deref().unwrap_or("unknown"))
//! }
//!
//! # async fn run() {
//! let server = Server::builder("demo", "1.0")
//!     .state(Arc::new(Mutex::new(vec!["first".to_owned()])))
//!     .tool(add_tool())
//!     .resource(note_resource())
//!     .prompt(review_prompt())
//!     .build();
//! server.serve_stdio().await;
//! # }
//! ```
//!
//! ## What the macros make of a function
//!
//! - **`#[tool]`** on a function, sync or async: each parameter whose type is
//!   `Deserialize + JsonSchema` is an argument, a property of the input schema, described by
//!   its doc comment; an `Option<T>` is not required. [`Context`] and [`State<T>`] are taken
//!   from the request instead (extractors). The function's doc comment is the description.
//!   Arguments: `name`, `title`, `description`, the hints `read_only`, `destructive`,
//!   `idempotent`, `open_world` (flags, or `= false`), `icon = "url"` (repeatable),
//!   `task = "optional" | "required"`, and `app = "ui://…"` (an MCP App: see [`apps`]).
//! - **`#[tools]`** on an impl block: its methods marked `#[tool]` (taking `&self`) are the
//!   tools of the value given to [`ServerBuilder::tools`] (`T` or `Arc<T>`).
//! - **`#[resource("uri")]`**: a resource, or a resource template when the URI has
//!   variables; each variable is a parameter of the same name, read from its text (`usize`
//!   from `"5"`), and a variable without a parameter (or the reverse) does not compile.
//!   Arguments: `name`, `title`, `description`, `mime_type`.
//! - **`#[prompt]`**: each argument is a prompt argument, read from its text likewise.
//!
//! The function stays as it was written, callable (`add(1.0, 2.0).await` in a unit test),
//! its name a function like any other (a `let add = ...` beside it is a new variable). The
//! macro adds a function beside it, named after it and the macro, that returns its
//! definition: `add_tool()` for `#[tool] fn add`, `note_resource()` for `#[resource] fn
//! note`, `review_prompt()` for `#[prompt] fn review`, with the function's visibility. That
//! is what is registered (`.tool(add_tool())`), after any change
//! (`note_resource().with_completions("id", ["1", "2"])`).
//!
//! What a handler may return, and what it becomes, is in [`server::authoring::output`]:
//! text, numbers, [`Json<T>`] (`structuredContent` with an `outputSchema` from `T`),
//! content blocks, full results, `Option` (for resources: not found), and `Result<T, E>`
//! (`E` a [`ToolError`], `anyhow::Error`, any `Display`). What an `Err` becomes depends on
//! the handler: for a tool, a tool execution error (`isError: true`) carrying `E`'s
//! message, which the model sees; for a resource, a prompt or a completion, the JSON-RPC
//! error `-32603` (Internal error). A [`HandlerError`] keeps its meaning wherever it is
//! returned: [`HandlerError::invalid_params`] is `-32602`,
//! [`HandlerError::resource_not_found`] the revision's "resource not found" (`-32002`, or
//! `-32602` from 2026-07-28). The handlers guide (`docs/HANDLERS.md`) has the whole table,
//! with examples, and [`Context::progress`].
//!
//! ## Validation
//!
//! Every tool's arguments are checked against its input schema (generated or hand-written)
//! before its handler runs, with a validator compiled when the tool is registered. A
//! failure names each offending argument and rule: a tool execution error (`isError: true`)
//! from `2025-11-25` on, `-32602` before. Structured results are checked against the
//! output schema before they are sent; a result that breaks it is replaced by a tool error
//! and logged. That is the `schema-validation` feature (a general JSON Schema validator,
//! about 75 crates). Without it (the lean build) the top level of an input schema is checked
//! (required arguments, each one's JSON type, unknown arguments where the schema closes the
//! object), a typed tool's arguments in full as they are deserialized into its parameter
//! type, and an output schema only for the presence of `structuredContent`. Prompt arguments and template variables that do not read as their types are
//! `-32602`, saying why in words (`` argument `id`: expected an unsigned integer, got "abc" ``).
//!
//! # Features
//!
//! | feature | what | default |
//! |---|---|---|
//! | `server` | [`Server`] and the server runtime | yes |
//! | `macros` | `#[tool]`, `#[tools]`, `#[resource]`, `#[prompt]` | yes |
//! | `schema-validation` | every clause of tool schemas checked by a JSON Schema validator (jsonschema; see Validation) | yes |
//! | `client` | [`Client`], [`ChildCommand`] | yes |
//! | `http` | serving over Streamable HTTP ([`http`]: axum, hyper) | yes |
//! | `http2` | with `http`, HTTP/2 over cleartext (h2c, prior knowledge) beside HTTP/1.1 on one listener (`HttpConfig::http2`; hyper's HTTP/2, the `h2` crate) | no |
//! | `http-client` | connecting to HTTP servers ([`transport::http`]: hyper-util and rustls; reqwest behind a proxy) | yes |
//! | `gateway` | [`Gateway`]: several servers behind one, each under a prefix; the bridge ([`bridge`]) | yes |
//! | `auth` | OAuth ([`auth`]): the client, and with `http` the protected resource | yes |
//! | `redis` | several instances behind one address sharing Redis ([`redis`]): sessions, resumable streams, handles, tasks | no |
//! | `opentelemetry` | trace context in `_meta`: the server's tracing layer continues the caller's trace, the client sends its span's (tracing-opentelemetry) | no |
//!
//! `default` turns on every feature but `http2`, `opentelemetry` and `redis`. A stdio server needs
//! only `default-features = false, features = ["server", "macros"]`: no HTTP stack, no TLS.
#![deny(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

pub use mcpwire_protocol as protocol;
pub use mcpwire_protocol::types;
pub use mcpwire_protocol::{ErrorObject, ProtocolVersion};
pub use mcpwire_transport as transport;

#[cfg(feature = "server")]
pub use mcpwire_server as server;
#[doc(hidden)]
#[cfg(feature = "server")]
pub use mcpwire_server::__private;
#[cfg(feature = "server")]
pub use mcpwire_server::apps;
#[cfg(feature = "server")]
pub use mcpwire_server::{
    BuildError, Context, FromContext, HandleError, HandleStore, HandlerError, HandlerResult, Handles, IntoPromptDef,
    IntoResourceDef, IntoToolDef, IntoToolSet, Json, McpRequest, McpResponse, MemoryHandleStore, Principal, PromptDef,
    ResourceDef, Roots, RootsError, Scopes, Server, ServerBuilder, ServerConfig, State, ToolDef, ToolError, ToolSet,
};

/// Why [`Context::progress`] sent nothing: the client did not ask for progress on this
/// request, the value did not increase (or is not finite), or the request was answered.
#[cfg(feature = "server")]
pub use mcpwire_protocol::engine::progress::ProgressError;

#[cfg(feature = "macros")]
pub use mcpwire_macros::{prompt, resource, tool, tools};

#[cfg(feature = "client")]
pub use mcpwire_client as client;
#[cfg(feature = "client")]
pub use mcpwire_client::{ChildCommand, Client, ClientBuilder, ClientError, ClientSession};

#[cfg(feature = "http")]
pub use mcpwire_http as http;

#[cfg(feature = "auth")]
pub use mcpwire_auth as auth;

#[cfg(feature = "redis")]
pub use mcpwire_store_redis as redis;

#[cfg(feature = "gateway")]
pub use mcpwire_bridge as bridge;
#[cfg(feature = "gateway")]
pub use mcpwire_bridge::Gateway;

#[cfg(all(feature = "server", feature = "client"))]
mod testing;

/// The README's examples, compiled as doctests.
#[cfg(all(doctest, feature = "macros", feature = "http"))]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeExamples;

/// The crate's own README (the page of crates.io), compiled as doctests.
#[cfg(all(doctest, feature = "macros"))]
#[doc = include_str!("../README.md")]
pub struct CrateReadmeExamples;
#[cfg(all(feature = "server", feature = "client"))]
pub use testing::TestClient;

/// The handlers guide's examples (errors, progress), run as doctests.
#[cfg(all(doctest, feature = "macros", feature = "client"))]
#[doc = include_str!("../../../docs/HANDLERS.md")]
pub struct HandlersExamples;

/// The middleware guide's examples, compiled as doctests.
#[cfg(all(doctest, feature = "server", feature = "gateway"))]
#[doc = include_str!("../../../docs/MIDDLEWARE.md")]
pub struct MiddlewareExamples;
