//! The MCP server runtime: register tools, resources and prompts (at start-up or at any
//! time after), then serve them on any transport, to clients of every protocol revision.
//! Long-running tools can run as tasks ([`ServerBuilder::tasks`], a [`TaskStore`]): the
//! 2025-11-25 `tasks/*` methods and the 2026-07-28 `io.modelcontextprotocol/tasks` extension.
//!
//! ```no_run
//! use mcpwire_server::{Server, HandlerResult};
//! use mcpwire_protocol::types::{CallToolResult, Tool};
//! use serde_json::json;
//!
//! # async fn run() {
//! let server = Server::builder("demo", "1.0").build();
//! server.add_tool(
//!     Tool::new("echo", "Echoes its text", json!({"type":"object","properties":{"text":{"type":"string"}},"required":["text"]})),
//!     |args, _ctx| async move {
//!         let text = args.get("text").and_then(|v| v.as_str()).unwrap_or_default().to_owned();
//!         HandlerResult::Ok(CallToolResult::text(text))
//!     },
//! );
//! server.serve(mcpwire_transport::stdio::stdio()).await;
//! # }
//! ```
#![deny(missing_docs)]

#[doc(hidden)]
pub use authoring::glue as __private;

// Layers, each file importing only the ones above it (the `Server` near the top):
//   shared/{error, bus, presence, changes}, error, refusal, answer, panic, scopes, link (the
//   engine behind its lock, and the sinks) -> question (one question to the client, awaited), client_task ->
//   state, tasks/{clock, store, config, runtime, shared} (the runtime holds its sharing, whose
//   listener acts on the runtime) -> context, tasks/link (the context holds the link to its
//   task, whose questions go through the context) -> roots -> server/{validation, registry} ->
//   apps/{error, meta, tool, capability} -> authoring ->
//   apps/{resource, mod}, handles (each adds methods to `ToolDef`) -> server/{config, mod},
//   middleware/{mod, request, response} (the server holds its middleware stack, whose requests
//   carry the server) -> server/{access, mount, changes, tasks} (methods of the server),
//   the middleware layers ->
//   admission, tasks/{run, methods}, dispatch -> middleware/stack ->
//   server/builder, connection -> session
mod admission;
mod answer;
pub mod apps;
pub mod authoring;
mod client_task;
mod connection;
mod context;
mod dispatch;
mod error;
pub mod handles;
mod link;
pub mod middleware;
mod panic;
mod question;
mod refusal;
pub mod roots;
mod scopes;
mod server;
mod session;
pub mod shared;
mod state;
mod stream;
mod tasks;

pub use authoring::{
    FromContext, IntoPromptDef, IntoResourceDef, IntoToolDef, IntoToolSet, Json, PromptDef, ResourceDef, State,
    ToolDef, ToolError, ToolSet,
};
pub use context::{Context, InputRequest};
pub use error::{AskError, HandlerError, HandlerResult};
pub use handles::{HandleError, HandleStore, Handles, MemoryHandleStore};
pub use mcpwire_protocol::engine::Change;
pub use mcpwire_protocol::Principal;
pub use middleware::{McpRequest, McpResponse};
pub use roots::{Roots, RootsError};
pub use scopes::Scopes;
pub use server::{BuildError, Server, ServerBuilder, ServerConfig, WeakServer};
pub use session::{Frames, ServerSession};
pub use stream::{stream_channel, StreamReceiver, StreamSender};
pub use tasks::{
    now_ms, InMemoryTaskStore, TaskChange, TaskClock, TaskConfig, TaskOutcome, TaskPage, TaskRecord, TaskSettings,
    TaskStore, TaskStoreError, TASKS_TOPIC, TASK_RUNNER_STOPPED,
};

impl Server {
    /// Serves this server on one connection until the client closes it; in-flight requests
    /// get [`ServerConfig::shutdown_grace`] to finish, and everything sent is flushed.
    pub async fn serve(&self, connection: mcpwire_transport::Connection) {
        connection::serve(self.clone(), connection).await
    }

    /// Serves this server on the process's stdin and stdout until the client closes them.
    pub async fn serve_stdio(&self) {
        self.serve(mcpwire_transport::stdio::stdio()).await
    }
}
