//! Redis as the shared state of an MCP server that runs as several instances behind one
//! address: legacy sessions ([`mcpwire_http::SessionStore`]), stateful tool handles
//! ([`mcpwire_server::handles::HandleStore`]), and the bus ([`mcpwire_server::shared::Bus`], Redis
//! pub/sub) that tells every instance what changed on one.
//!
//! ```no_run
//! # async fn run(server: mcpwire_server::Server) -> Result<(), Box<dyn std::error::Error>> {
//! use mcpwire_store_redis::RedisStore;
//!
//! let store = RedisStore::connect("redis://127.0.0.1:6379", "mcp").await?;
//! let http = mcpwire_http::McpHttp::shared(server, mcpwire_http::HttpConfig::default(), store.shared_state()).await?;
//! http.serve(tokio::net::TcpListener::bind("127.0.0.1:8080").await?).await?;
//! # Ok(()) }
//! ```
//!
//! Every key is under the deployment's prefix (`PREFIX:session:ID`, `PREFIX:handle:KIND:HANDLE`)
//! and has a lifetime; nothing is kept forever. The bus's channels are `PREFIX:bus:TOPIC`.
//! The keys that seal `requestState` and cursors are shared, and rotated, there too
//! ([`RedisStore::key_ring`]).
//! A lost connection is made again in the background, with backoff: meanwhile operations fail
//! at once with an unavailable [`StoreError`] (a request that needs the store is answered `503`),
//! and bus messages published meanwhile are not heard.
#![deny(missing_docs)]

mod bus;
mod events;
mod handles;
mod keys;
mod sessions;
mod tasks;

pub use keys::RingKeeper;

use std::sync::Arc;
use std::time::Duration;

use mcpwire_http::SharedState;
use mcpwire_server::shared::{LocalBus, StoreError};
use redis::aio::{ConnectionManager, ConnectionManagerConfig};

/// How long a command may wait for Redis before it fails (the request that needed it is then
/// answered `503`, rather than left hanging).
const RESPONSE_TIMEOUT: Duration = Duration::from_secs(2);

/// How long making a connection may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

/// A deployment's shared state on one Redis: one multiplexed connection for commands, made
/// again by itself when lost, and one for the bus's subscriptions. Cheap to clone.
#[derive(Clone)]
pub struct RedisStore {
    inner: Arc<Inner>,
}

struct Inner {
    commands: ConnectionManager,
    prefix: String,
    /// The bus's messages, as this instance's subscribers hear them (fed by the subscription).
    local: LocalBus,
    url: String,
}

impl std::fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisStore").field("url", &self.inner.url).field("prefix", &self.inner.prefix).finish()
    }
}

impl RedisStore {
    /// Connects to the Redis at `url` (`redis://HOST:PORT[/DB]`, `rediss://` without TLS
    /// support here) for the deployment named `prefix` (every key and channel begins with it).
    /// Fails if Redis cannot be reached now.
    pub async fn connect(url: &str, prefix: &str) -> Result<Self, StoreError> {
        let client = redis::Client::open(url).map_err(|e| StoreError::unavailable("connect", e))?;
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(CONNECT_TIMEOUT))
            .set_response_timeout(Some(RESPONSE_TIMEOUT))
            .set_number_of_retries(2)
            .set_max_delay(Duration::from_secs(2));
        let commands = client
            .get_connection_manager_with_config(config)
            .await
            .map_err(|e| StoreError::unavailable("connect", e))?;
        let inner =
            Arc::new(Inner { commands, prefix: prefix.to_owned(), local: LocalBus::new(), url: url.to_owned() });
        bus::listen(client, &inner).await?;
        Ok(Self { inner })
    }

    /// The state for [`mcpwire_http::McpHttp::shared`]: sessions, resumable streams, the bus and the
    /// instances' leases, on this Redis.
    pub fn shared_state(&self) -> SharedState {
        let this = Arc::new(self.clone());
        SharedState { sessions: this.clone(), events: this.clone(), bus: this.clone(), presence: this }
    }

    /// The prefix of every key and channel.
    pub fn prefix(&self) -> &str {
        &self.inner.prefix
    }

    fn key(&self, kind: &str, name: &str) -> String {
        format!("{}:{kind}:{name}", self.inner.prefix)
    }

    fn commands(&self) -> ConnectionManager {
        self.inner.commands.clone()
    }
}

/// The commands every store here is made of: a value with a lifetime, read with its
/// lifetime restarted, deleted; any failure is the store being unavailable for `what`.
impl RedisStore {
    /// Runs one command.
    async fn run<T: redis::FromRedisValue>(&self, what: &'static str, command: &redis::Cmd) -> Result<T, StoreError> {
        command.query_async(&mut self.commands()).await.map_err(|e| StoreError::unavailable(what, e))
    }

    /// Runs the commands of a pipeline in one round trip.
    async fn run_all<T: redis::FromRedisValue>(
        &self,
        what: &'static str,
        commands: &redis::Pipeline,
    ) -> Result<T, StoreError> {
        commands.query_async(&mut self.commands()).await.map_err(|e| StoreError::unavailable(what, e))
    }

    /// Keeps `value` under `key` for `ttl`.
    async fn set_for(
        &self,
        what: &'static str,
        key: String,
        value: impl redis::ToRedisArgs + Send + Sync,
        ttl: Duration,
    ) -> Result<(), StoreError> {
        self.run(what, redis::cmd("SET").arg(key).arg(value).arg("PX").arg(millis(ttl))).await
    }

    /// The value under `key`, its lifetime restarted at `ttl`.
    async fn get_for(&self, what: &'static str, key: String, ttl: Duration) -> Result<Option<Vec<u8>>, StoreError> {
        self.run(what, redis::cmd("GETEX").arg(key).arg("PX").arg(millis(ttl))).await
    }

    /// Deletes `key`; whether it was there.
    async fn delete(&self, what: &'static str, key: String) -> Result<bool, StoreError> {
        self.run::<i64>(what, redis::cmd("DEL").arg(key)).await.map(|n| n > 0)
    }
}

/// Milliseconds of a lifetime, at least one (Redis refuses a zero expiry).
fn millis(ttl: Duration) -> u64 {
    (ttl.as_millis() as u64).max(1)
}
