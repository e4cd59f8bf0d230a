//! The Model Context Protocol wire model, for every published revision.
//!
//! - [`jsonrpc`]: the JSON-RPC 2.0 envelope and its reading with precise error classes.
//! - [`json`]: reading members of small JSON objects without hashing their keys.
//! - [`id`]: identifiers nobody can guess.
//! - [`method`]: every method name, spelled once.
//! - [`message`]: typed messages of both directions.
//! - [`revision`]: the revisions and what each one has.
//! - [`types`]: the neutral model that handler code sees.
//! - [`codec`]: writes neutral messages exactly as a revision defines them.
//! - [`engine`]: sans-IO protocol machinery (correlation, progress, cursors).
//! - [`uri_template`]: RFC 6570 URI templates, expanded and matched.
//! - [`principal`]: who a request comes from, as its transport's authorization established it.
//! - [`mismatch`]: why a JSON value does not read as a Rust type, in words.
#![deny(missing_docs)]
// Decode errors are the cold path and carry a whole JSON-RPC error object by design.
#![allow(clippy::result_large_err)]

pub mod codec;
pub mod engine;
pub mod error;
pub mod frame;
pub mod headers;
pub mod id;
pub mod json;
pub mod jsonrpc;
pub mod message;
pub mod method;
pub mod mismatch;
pub mod namespace;
pub mod principal;
pub mod revision;
pub mod telemetry;
pub mod trace_context;
pub mod types;
pub mod uri_template;

pub use error::ErrorObject;
pub use jsonrpc::{Notification, RequestId, Response};
pub use method::Method;
pub use principal::Principal;
pub use revision::{Era, ProtocolVersion, Sender};
