//! Every integration test of this crate, in one binary.

mod app;
mod schema;
