//! Every integration test of this crate, in one binary: one module a former test file
//! (linking one binary instead of one per file is most of what the test step costs).

mod apps;
mod contract;
mod conversions;
mod docs;
mod examples;
mod features;
mod handles;
mod middleware;
mod mount;
mod names;
mod opentelemetry;
mod packaging;
#[path = "../../../../tests/auth/provider.rs"]
mod provider;
