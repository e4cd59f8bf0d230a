//! Tool handles on Redis: one string per handle (`PREFIX:handle:KEY`), its lifetime restarted
//! when read.

use std::time::Duration;

use futures::future::BoxFuture;
use mcp_server::handles::HandleStore;
use mcp_server::shared::StoreError;

use crate::{millis, RedisStore};

impl HandleStore for RedisStore {
    fn put<'a>(&'a self, key: &'a str, value: Vec<u8>, ttl: Duration) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let mut c = self.commands();
            redis::cmd("SET")
                .arg(self.key("handle", key))
                .arg(value)
                .arg("PX")
                .arg(millis(ttl))
                .query_async::<()>(&mut c)
                .await
                .map_err(|e| StoreError::unavailable("handle write", e))
        })
    }

    fn get<'a>(&'a self, key: &'a str, ttl: Duration) -> BoxFuture<'a, Result<Option<Vec<u8>>, StoreError>> {
        Box::pin(async move {
            let mut c = self.commands();
            redis::cmd("GETEX")
                .arg(self.key("handle", key))
                .arg("PX")
                .arg(millis(ttl))
                .query_async(&mut c)
                .await
                .map_err(|e| StoreError::unavailable("handle lookup", e))
        })
    }

    fn remove<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(async move {
            let mut c = self.commands();
            redis::cmd("DEL")
                .arg(self.key("handle", key))
                .query_async::<i64>(&mut c)
                .await
                .map(|n| n > 0)
                .map_err(|e| StoreError::unavailable("handle removal", e))
        })
    }
}
