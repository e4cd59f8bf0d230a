//! Legacy sessions on Redis: one string per session (`PREFIX:session:ID`, its record as JSON),
//! with the session's idle timeout as its expiry, restarted on use; and the set of instances
//! holding a copy of it (`PREFIX:holders:ID`), as long-lived. An HTTP+SSE session's place
//! (`PREFIX:sse:ID`), kept while its stream is open.

use std::time::Duration;

use futures::future::BoxFuture;
use mcpwire_http::{Placement, SessionRecord, SessionStore};
use mcpwire_server::shared::StoreError;

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
            self.set_for("session write", self.key("session", id), json, ttl).await
        })
    }

    fn get<'a>(&'a self, id: &'a str, ttl: Duration) -> BoxFuture<'a, Result<Option<SessionRecord>, StoreError>> {
        Box::pin(async move {
            let kept = self.get_for("session lookup", self.key("session", id), ttl).await?;
            kept.map(|json| serde_json::from_slice(&json).map_err(|e| StoreError::corrupt("session lookup", e)))
                .transpose()
        })
    }

    fn touch<'a>(&'a self, id: &'a str, ttl: Duration) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(async move {
            let command = redis::cmd("PEXPIRE").arg(self.key("session", id)).arg(millis(ttl)).to_owned();
            self.run::<i64>("session touch", &command).await.map(|n| n == 1)
        })
    }

    fn remove<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(async move {
            // Its holders go with it: nobody holds an ended session.
            let mut both = redis::pipe();
            both.cmd("DEL").arg(self.key("session", id)).cmd("DEL").arg(self.key("holders", id));
            let (removed, _): (i64, i64) = self.run_all("session removal", &both).await?;
            Ok(removed > 0)
        })
    }

    fn hold<'a>(&'a self, id: &'a str, instance: &'a str, ttl: Duration) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let key = self.key("holders", id);
            let mut both = redis::pipe();
            both.cmd("SADD").arg(&key).arg(instance).ignore().cmd("PEXPIRE").arg(&key).arg(millis(ttl)).ignore();
            self.run_all("session holder", &both).await
        })
    }

    fn release<'a>(&'a self, id: &'a str, instance: &'a str) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let command = redis::cmd("SREM").arg(self.key("holders", id)).arg(instance).to_owned();
            self.run::<i64>("session holder", &command).await.map(|_| ())
        })
    }

    fn holders<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Vec<String>, StoreError>> {
        Box::pin(async move {
            let command = redis::cmd("SMEMBERS").arg(self.key("holders", id)).to_owned();
            self.run("session holders", &command).await
        })
    }

    fn place<'a>(
        &'a self,
        id: &'a str,
        placement: &'a Placement,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let json = serde_json::to_vec(placement).map_err(|e| StoreError::corrupt("session place", e))?;
            self.set_for("session place", self.key("sse", id), json, ttl).await
        })
    }

    fn placement<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<Placement>, StoreError>> {
        Box::pin(async move {
            let command = redis::cmd("GET").arg(self.key("sse", id)).to_owned();
            let kept: Option<Vec<u8>> = self.run("session place", &command).await?;
            kept.map(|json| serde_json::from_slice(&json).map_err(|e| StoreError::corrupt("session place", e)))
                .transpose()
        })
    }

    fn unplace<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move { self.delete("session place", self.key("sse", id)).await.map(|_| ()) })
    }
}
