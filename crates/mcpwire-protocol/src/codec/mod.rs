//! The per-revision codec: writes neutral-model messages exactly as a revision defines them.
//!
//! Handler code builds the neutral types of [`crate::types`], which hold the union of every
//! revision. Before a message leaves, the codec shapes its JSON for the negotiated revision:
//! members a revision lacks are dropped (a `title` for 2024-11-05, `structuredContent`
//! before 2025-06-18, `execution` outside 2025-11-25), content kinds it lacks are turned into
//! text that says what was there, and what a revision requires is added (`resultType`,
//! `ttlMs`/`cacheScope` and `_meta` server info from 2026-07-28). Tasks, which exist only in
//! 2025-11-25 and as a 2026-07-28 extension, are written in each one's shape. The tests
//! validate the output against each revision's official schema with extra members forbidden.

pub mod answer;
mod client_capabilities;
mod own_meta;
mod read;
mod shape;
mod write;

pub use client_capabilities::ClientAbilities;
pub use read::{read_from_client, read_from_server};
pub use shape::{
    encode_call_tool_result, is_cacheable, shape_content, shape_implementation, shape_notification_params,
    shape_result, shape_server_capabilities, shape_server_request_params, shape_task, shape_tool, ResultContext,
};
pub(crate) use write::write_client_request_with;
pub use write::{
    write_client_notification, write_client_request, write_client_result, write_error, write_server_notification,
    write_server_request, write_server_result,
};
