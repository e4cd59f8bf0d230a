//! Resumable streams kept for every instance of a deployment ([`SharedEventStore`]): a client
//! whose stream broke (or whose instance shut down) resumes it with `Last-Event-ID` on any
//! instance, which replays what it missed from the store, then follows what the instance still
//! running the request appends.

use std::time::Duration;

use futures::future::BoxFuture;
use mcpwire_protocol::RequestId;
use mcpwire_server::shared::StoreError;
use serde::{Deserialize, Serialize};

use super::EventBudget;

/// What is known of a shared stream besides its events.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StreamInfo {
    /// The request the stream answers (`None`: a batch's).
    pub request: Option<RequestId>,
    /// The instance producing it ([`mcpwire_server::shared::Instance::id`]): if its lease runs out
    /// before the stream ends, the request is answered with an error where it is resumed.
    pub instance: String,
    /// Whether its last event was appended.
    #[serde(default)]
    pub done: bool,
    /// Whether its events were let go to stay within the event budget: it cannot be resumed
    /// (a client resuming it is answered with an error to its request).
    #[serde(default)]
    pub evicted: bool,
}

/// Where a stream stands in the store.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StreamPosition {
    /// The number of its last event kept (0: none, or forgotten).
    pub last: u64,
    /// How far it was delivered to a client ([`SharedEventStore::mark_delivered`]).
    pub delivered: u64,
}

/// Keeps the events of the resumable streams of a deployment's legacy sessions
/// (`mcpwire-store-redis` implements it on Redis streams). Every key lives as long as `ttl` (the
/// session idle timeout) after its last write.
pub trait SharedEventStore: Send + Sync + 'static {
    /// Begins stream `stream` of `session`.
    fn open<'a>(
        &'a self,
        session: &'a str,
        stream: u64,
        info: &'a StreamInfo,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<(), StoreError>>;

    /// Keeps an event of a stream and returns its number: `seq` (1, 2, ...) as the one
    /// producer of a request's stream numbers it, or (`None`) one more than the stream's last,
    /// numbered by the store (the standalone stream, which every instance may add to).
    /// What is kept stays within `budget`, as [`crate::MemoryEventStore`] keeps it: events per
    /// stream, bytes per session and overall, finished streams let go first. Readers on other
    /// instances are woken.
    fn append<'a>(
        &'a self,
        session: &'a str,
        stream: u64,
        seq: Option<u64>,
        frame: &'a str,
        budget: &'a EventBudget,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<u64, StoreError>>;

    /// The stream's last event was appended. Readers are woken.
    fn finish<'a>(&'a self, session: &'a str, stream: u64) -> BoxFuture<'a, Result<(), StoreError>>;

    /// What is known of a stream; `None`: it was never opened in this session, or is forgotten.
    fn info<'a>(&'a self, session: &'a str, stream: u64) -> BoxFuture<'a, Result<Option<StreamInfo>, StoreError>>;

    /// The kept events of a stream after `after`, in order, at most `limit`.
    fn read<'a>(
        &'a self,
        session: &'a str,
        stream: u64,
        after: u64,
        limit: usize,
    ) -> BoxFuture<'a, Result<Vec<(u64, String)>, StoreError>>;

    /// Where a stream stands: its last event and how far it was delivered.
    fn position<'a>(&'a self, session: &'a str, stream: u64) -> BoxFuture<'a, Result<StreamPosition, StoreError>>;

    /// Notes that a stream was delivered up to event `seq`, and restarts its lifetime (`ttl`):
    /// a session's standalone stream opened later, on any instance, begins after it, and an
    /// open stream is not forgotten while it is quiet.
    fn mark_delivered<'a>(
        &'a self,
        session: &'a str,
        stream: u64,
        seq: u64,
        ttl: Duration,
    ) -> BoxFuture<'a, Result<(), StoreError>>;

    /// The bus topic on which appends and ends are told (a message naming the session and
    /// the stream as `SESSION STREAM`), for readers to wake up at once instead of polling.
    fn wake_topic(&self) -> &'static str {
        "events"
    }
}
