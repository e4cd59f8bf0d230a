//! The MCP client runtime: connect to a server of either era over any transport, call it
//! with typed methods, and answer what it asks of the client.
//!
//! - **Dual-era.** [`Client::connect`] probes with `server/discover` and falls back to a
//!   legacy `initialize` on any other error or no answer (never on one error code); a
//!   revision can also be pinned. In the modern era (2026-07-28) every request carries its
//!   `_meta` (protocol version, client capabilities and info, log level), and a `-32022`
//!   answer is retried once with a mutually supported version.
//! - **Typed calls** for every client-to-server method, decoded into the neutral types of
//!   [`mcpwire_protocol::types`], with pagination helpers (`list_all_*`), per-call timeouts
//!   ([`ClientSession::with_timeout`]) and progress callbacks. A result's `_meta` holds what
//!   the server put there for the caller: the server's info that a 2026-07-28 server adds to
//!   every result is the protocol's, read from `server/discover` into
//!   [`ClientSession::server_info`], and left out (the `_meta` is `None` when nothing else
//!   is in it). [`ClientSession::request`] returns a result as it came.
//! - **Cancellation.** Dropping a call's future sends `notifications/cancelled`; so does a
//!   timeout. A late answer is ignored.
//! - **Handlers** for sampling, elicitation and roots answer legacy server requests and
//!   modern `input_required` rounds alike (MRTR, handled inside `call_tool`, `get_prompt`
//!   and `read_resource`); the capabilities declared follow from what is registered.
//! - **Notifications** reach the application through [`ClientSession::notifications`] or a
//!   callback ([`ClientBuilder::on_notification`]); modern subscriptions through
//!   [`ClientSession::listen`].
//! - **Child processes**: [`Client::spawn`] runs a server command and
//!   [`ClientSession::close`] ends it as the specification says.
//! - **Targets and `mcpServers` files**: [`target::resolve`] takes a server as one string (a
//!   URL, a command line, or the name of a server in a Claude Desktop-style `mcpServers`
//!   file, read by [`config`]) and [`target::Target::connect`] connects to it.
//!
//! ```no_run
//! use mcpwire_client::{ChildCommand, Client};
//! use serde_json::json;
//!
//! # async fn run() -> Result<(), mcpwire_client::ClientError> {
//! let client = Client::builder("my-app", "1.0").build();
//! let session = client.spawn(&ChildCommand::parse("mcp serve")?).await?;
//! println!("{:?} server, revision {}", session.era(), session.protocol_version());
//! for tool in session.list_all_tools().await? {
//!     println!("{}", tool.name);
//! }
//! let result = session.call_tool("echo", json!({"text": "hello"})).await?;
//! println!("{:?}", result.content);
//! session.close().await?;
//! # Ok(())
//! # }
//! ```
#![deny(missing_docs)]
// Errors carry the server's whole JSON-RPC error object by design.
#![allow(clippy::result_large_err)]

mod calls;
mod client;
pub mod config;
mod driver;
mod error;
mod listen;
pub mod middleware;
mod mrtr;
mod outputs;
mod reply;
mod session;
mod settings;
pub mod target;
mod task_requests;
mod tasks;
#[cfg(feature = "opentelemetry")]
mod trace;

pub use client::{
    Client, ClientBuilder, ElicitationHandler, HandlerFuture, NotificationCallback, RootsHandler, SamplingHandler,
};
pub use error::ClientError;
pub use listen::ListenStream;
pub use mcpwire_protocol::message::ServerNotification;
pub use mcpwire_protocol::{Era, ErrorObject, ProtocolVersion};
pub use mcpwire_transport::child::ChildCommand;
pub use session::ClientSession;
pub use tasks::CallToolOutcome;
