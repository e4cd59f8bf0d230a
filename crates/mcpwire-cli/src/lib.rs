//! The library half of the `mcp` tool: the reference server (so tests and other crates can
//! run it in memory), and the pieces of the command-line interface.
#![deny(missing_docs)]

pub mod cli;
pub mod limits;
pub mod proxy;
pub mod reference;
pub mod telemetry;
