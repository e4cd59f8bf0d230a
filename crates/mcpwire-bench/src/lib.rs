//! `mcpwire-bench`: the benchmark harness of this repository, usable against any MCP server.
//!
//! What it measures (every call is `tools/call` of a tool `echo` with one string argument
//! `text`, and an answer counts only when its `content[0].text` is the text sent):
//!
//! 1. **Streamable HTTP throughput and latency** ([`http_load`]): N concurrent clients, each
//!    with its own keep-alive HTTP/1.1 connection and one call in flight, in two modes:
//!    legacy *sessions* (`initialize`, `notifications/initialized`, then calls with
//!    `Mcp-Session-Id`) and *stateless* (one self-contained POST per call: the 2026-07-28
//!    headers and `_meta`, or a bare legacy call to a server in stateless mode). Reports
//!    req/s and p50/p99/p99.9 latency (an HDR histogram), beside
//! 2. **server CPU time per call** ([`proc_stats`]): `utime+stime+cutime+cstime` of the
//!    server's process tree over the measured window, divided by the calls.
//! 3. **Memory per idle session** ([`sessions`]): RSS growth after opening N legacy sessions.
//! 4. **stdio throughput** ([`stdio_load`]): round trips (1 in flight) and pipelined calls.
//! 5. **Spawn to first call** ([`spawn`]): process start to the first correct answer.
//! 6. **Soak** ([`soak`]): a mixed load for a given time, the server's memory and open
//!    descriptors sampled, judged flat (or not) after warm-up.
//! 7. **Raw baselines** ([`baseline`]): a plain axum endpoint and a plain stdin/stdout loop
//!    that answer the same messages with nothing but `serde_json`: the ceiling on a machine;
//!    and a plain axum SSE broadcaster, the ceiling for 8.
//! 8. **Many notification streams** ([`streams`]): memory per open `subscriptions/listen` (or
//!    legacy GET) stream and the time to deliver one update to all of them.
//! 9. **Our client against rmcp's** ([`client_load`]): calls/s and client CPU per call of a
//!    driver built on each client library, on the same server.
//!
//! 10. **Costs measured in the same run** ([`costs`]): typed against raw echo, the tracing
//!     layer on against off, the gateway against the server it fronts, as ratios between
//!     servers of one suite run.
//!
//! [`suite`] runs all of them against every server of `bench/servers.toml`, servers pinned to
//! one CPU and the load generator to another, and [`report`] and [`chart`] write
//! `docs/BENCHMARKS.md` and its SVG charts, with [`compare`]'s figures before and after
//! (against the run the new one replaces). No test of this crate asserts on timings.
#![deny(missing_docs)]

pub mod baseline;
pub mod chart;
pub mod client_load;
pub mod compare;
pub mod config;
pub mod costs;
pub mod echo_server;
pub mod http_client;
pub mod http_load;
pub mod machine;
pub mod mcp;
pub mod proc_stats;
pub mod process;
pub mod report;
pub mod sessions;
pub mod soak;
pub mod spawn;
pub mod stats;
pub mod stdio_load;
pub mod streams;
pub mod suite;
