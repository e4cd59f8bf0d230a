//! Every integration test of this crate, in one binary: one module a former test file
//! (linking one binary instead of one per file is most of what the test step costs).

mod cli_client;
mod cli_everything;
mod cli_filesystem;
mod cli_gateway;
mod cli_inspect;
mod cli_oauth;
mod cli_proxy;
mod cli_scale;
mod cli_settle;
mod cli_shutdown;
mod npm_e2e;
mod otel_export;
#[path = "../../../../tests/auth/provider.rs"]
mod provider;
mod serve_limits;
mod stdio_process;
