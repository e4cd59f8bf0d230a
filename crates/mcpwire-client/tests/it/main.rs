//! Every integration test of this crate, in one binary: one module a former test file
//! (linking one binary instead of one per file is most of what the test step costs).

mod child_process;
mod common;
mod http_null_id;
mod middleware;
mod scripted;
mod server_pairs;
mod task_requests;
mod tasks;
