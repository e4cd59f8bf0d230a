//! The MCP server runtime: register tools, resources and prompts (at start-up or at any
//! time after), then serve them on any transport, to clients of every protocol revision.
//! Long-running tools can run as tasks ([`ServerBuilder::tasks`], a [`TaskStore`]): the
//! 2025-11-25 `tasks/*` methods and the 2026-07-28 `io.modelcontextprotocol/tasks` extension.
//!
//! ```no_run
//! use mcp_server::{Server, HandlerResult};
//! use mcp_protocol::types::{CallToolResult, Tool};
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
//! server.serve(mcp_transport::stdio::stdio()).await;
//! # }
//! ```
#![deny(missing_docs)]

mod connection;
mod context;
mod error;
mod input;
mod listen;
mod methods;
mod outbound;
mod registry;
mod server;
mod session;
mod tasks;

pub use context::Context;
pub use error::{HandlerError, HandlerResult};
pub use input::InputRequest;
pub use registry::Change;
pub use server::{Server, ServerBuilder, ServerConfig};
pub use session::ServerSession;
pub use tasks::{
    now_ms, InMemoryTaskStore, TaskChange, TaskConfig, TaskOutcome, TaskPage, TaskRecord, TaskSettings, TaskStore,
    TaskStoreError,
};

impl Server {
    /// Serves one request that stands alone (a 2026-07-28 request over HTTP): messages related
    /// to it (progress, logs) go to `related` as encoded frames, and the encoded response is
    /// returned; `None` if `cancel` fired first (no response is due then). A request that is not
    /// a 2026-07-28 one gets the error that says what it lacks.
    pub async fn serve_stateless(
        &self,
        request: mcp_protocol::Request,
        related: tokio::sync::mpsc::Sender<String>,
        cancel: tokio_util::sync::CancellationToken,
    ) -> Option<String> {
        connection::serve_stateless(self.clone(), request, related, cancel).await
    }

    /// Serves this server on one connection until the client closes it; in-flight requests
    /// get [`ServerConfig::shutdown_grace`] to finish, and everything sent is flushed.
    pub async fn serve(&self, connection: mcp_transport::Connection) {
        connection::serve(self.clone(), connection).await
    }
}
