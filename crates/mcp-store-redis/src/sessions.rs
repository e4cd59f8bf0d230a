//! Legacy sessions on Redis: one string per session (`PREFIX:session:ID`, its record as JSON),
//! with the session's idle timeout as its expiry, restarted on use; and the set of instances
//! holding a copy of it (`PREFIX:holders:ID`), as long-lived.

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
            // Its holders go with it: nobody holds an ended session.
            let (removed, _): (i64, i64) = redis::pipe()
                .cmd("DEL")
                .arg(self.key("session", id))
                .cmd("DEL")
                .arg(self.key("holders", id))
                .query_async(&mut c)
                .await
                .map_err(|e| StoreError::unavailable("session removal", e))?;
            Ok(removed > 0)
        })
    }

    fn hold<'a>(&'a self, id: &'a str, instance: &'a str, ttl: Duration) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let key = self.key("holders", id);
            let mut c = self.commands();
            redis::pipe()
                .cmd("SADD")
                .arg(&key)
                .arg(instance)
                .ignore()
                .cmd("PEXPIRE")
                .arg(&key)
                .arg(millis(ttl))
                .ignore()
                .query_async::<()>(&mut c)
                .await
                .map_err(|e| StoreError::unavailable("session holder", e))
        })
    }

    fn release<'a>(&'a self, id: &'a str, instance: &'a str) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let mut c = self.commands();
            redis::cmd("SREM")
                .arg(self.key("holders", id))
                .arg(instance)
                .query_async::<i64>(&mut c)
                .await
                .map(|_| ())
                .map_err(|e| StoreError::unavailable("session holder", e))
        })
    }

    fn holders<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Vec<String>, StoreError>> {
        Box::pin(async move {
            let mut c = self.commands();
            redis::cmd("SMEMBERS")
                .arg(self.key("holders", id))
                .query_async(&mut c)
                .await
                .map_err(|e| StoreError::unavailable("session holders", e))
        })
    }
}
