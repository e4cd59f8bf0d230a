//! The Redis store against a real Redis, started by each test.

mod budget;
mod store;
mod tasks;
