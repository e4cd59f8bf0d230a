//! Every integration test of the inspector (but the browser's, tests/browser), in one binary.

mod api;
mod apps;
mod common;
mod exchanges;
#[path = "../shared/lying.rs"]
mod lying;
mod oauth;
#[path = "../../../../tests/auth/provider.rs"]
mod provider;
mod security;
