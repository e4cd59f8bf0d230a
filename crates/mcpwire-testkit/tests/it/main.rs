//! Every integration test of this crate, in one binary: the real servers it starts for the
//! other crates' tests, checked on their own.

mod haproxy;
mod redis;
