//! Tool handles on Redis: one string per handle (`PREFIX:handle:KEY`), its lifetime restarted
//! when read.

use std::time::Duration;

use futures::future::BoxFuture;
use mcpwire_server::handles::HandleStore;
use mcpwire_server::shared::StoreError;

use crate::RedisStore;

impl HandleStore for RedisStore {
    fn put<'a>(&'a self, key: &'a str, value: Vec<u8>, ttl: Duration) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(self.set_for("handle write", self.key("handle", key), value, ttl))
    }

    fn get<'a>(&'a self, key: &'a str, ttl: Duration) -> BoxFuture<'a, Result<Option<Vec<u8>>, StoreError>> {
        Box::pin(self.get_for("handle lookup", self.key("handle", key), ttl))
    }

    fn remove<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(self.delete("handle removal", self.key("handle", key)))
    }
}
