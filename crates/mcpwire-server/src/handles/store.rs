//! The trait of a store of handle values, which one in-memory and one shared (Redis)
//! implementation fulfil.

use std::time::Duration;

use futures::future::BoxFuture;

use crate::shared::StoreError;

/// Where handle values are kept: bytes under a key, each with a lifetime that restarts when read.
pub trait HandleStore: Send + Sync + 'static {
    /// Keeps `value` under `key` for `ttl`, replacing what was there.
    fn put<'a>(&'a self, key: &'a str, value: Vec<u8>, ttl: Duration) -> BoxFuture<'a, Result<(), StoreError>>;
    /// The value under `key`, its lifetime restarted at `ttl`; `None` if unknown or expired.
    fn get<'a>(&'a self, key: &'a str, ttl: Duration) -> BoxFuture<'a, Result<Option<Vec<u8>>, StoreError>>;
    /// Forgets `key`; whether it was there.
    fn remove<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<bool, StoreError>>;
}
