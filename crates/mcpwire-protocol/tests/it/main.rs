//! Every integration test of this crate, in one binary.

mod schema;
mod task_requests;
