//! Every integration test of this crate, in one binary: one module a former test file
//! (linking one binary instead of one per file is most of what the test step costs).

mod costs;
mod loopback;
