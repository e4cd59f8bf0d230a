//! Legacy sessions on Redis: one string per session (`PREFIX:session:ID`, its record as JSON),
//! with the session's idle timeout as its expiry, restarted on use.

use std::time::Duration;

use futures::future::BoxFuture;
use mcp_http::{SessionRecord, SessionStore};
use mcp_server::shared::StoreError;

use crate::{millis, RedisStore};

impl SessionStore for RedisStore {
    fn put<'a>(
        &'a self,
        id: &'a str,
        record: &'a SessionRecord,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let json = serde_json::to_vec(record).map_err(|e| StoreError::corrupt("session write", e))?;
            let mut c = self.commands();
            redis::cmd("SET")
                .arg(self.key("session", id))
                .arg(json)
                .arg("PX")
                .arg(millis(ttl))
                .query_async::<()>(&mut c)
                .await
                .map_err(|e| StoreError::unavailable("session write", e))
        })
    }

    fn get<'a>(&'a self, id: &'a str, ttl: Duration) -> BoxFuture<'a, Result<Option<SessionRecord>, StoreError>> {
        Box::pin(async move {
            let mut c = self.commands();
            let kept: Option<Vec<u8>> = redis::cmd("GETEX")
                .arg(self.key("session", id))
                .arg("PX")
                .arg(millis(ttl))
                .query_async(&mut c)
                .await
                .map_err(|e| StoreError::unavailable("session lookup", e))?;
            kept.map(|json| serde_json::from_slice(&json).map_err(|e| StoreError::corrupt("session lookup", e)))
                .transpose()
        })
    }

    fn touch<'a>(&'a self, id: &'a str, ttl: Duration) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(async move {
            let mut c = self.commands();
            redis::cmd("PEXPIRE")
                .arg(self.key("session", id))
                .arg(millis(ttl))
                .query_async::<i64>(&mut c)
                .await
                .map(|n| n == 1)
                .map_err(|e| StoreError::unavailable("session touch", e))
        })
    }

    fn remove<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(async move {
            let mut c = self.commands();
            redis::cmd("DEL")
                .arg(self.key("session", id))
                .query_async::<i64>(&mut c)
                .await
                .map(|n| n > 0)
                .map_err(|e| StoreError::unavailable("session removal", e))
        })
    }
}
