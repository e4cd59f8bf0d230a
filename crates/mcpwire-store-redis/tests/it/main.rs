//! The Redis store against a real Redis, started by each test.

mod budget;
mod keys;
mod store;
mod tasks;
