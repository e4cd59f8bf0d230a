//! Every integration test of this crate, in one binary: one module a former test file
//! (linking one binary instead of one per file is most of what the test step costs).

mod client_over_http;
mod common;
#[cfg(feature = "http2")]
mod http2;
mod http_event_budget;
mod http_legacy;
mod http_limits;
mod http_middleware;
mod http_modern;
mod http_oauth;
mod http_panics;
mod http_security;
mod http_shared;
mod http_sse_legacy;
#[cfg(feature = "auth")]
#[path = "../../../../tests/auth/provider.rs"]
mod provider;
