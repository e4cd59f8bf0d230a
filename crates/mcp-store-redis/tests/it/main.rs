//! The Redis store against a real Redis, started by each test.

mod store;
mod tasks;
