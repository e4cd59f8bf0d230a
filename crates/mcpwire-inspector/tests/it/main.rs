//! Every integration test of the inspector (but the browser's, tests/browser), in one binary.

mod api;
mod common;
mod security;
