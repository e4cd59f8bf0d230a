//! Resumable SSE streams of legacy sessions (2025-03-26 .. 2025-11-25).
//!
//! Every event a legacy session sends on an SSE stream gets an id naming its stream and
//! its place in it (`<stream>-<seq>`), and is kept in an [`EventStore`]. A client whose
//! connection broke (or that the server asked to poll, SEP-1699) reconnects with GET and
//! `Last-Event-ID`, and gets what it missed on that stream, then the rest as it comes.
//!
//! The producer (the request's messages, or the session's unrelated ones) appends to a
//! [`StreamLog`]; HTTP bodies read from it at their own pace, so a client going away loses
//! nothing, and a new connection can take over where the last one stopped.
//!
//! What is kept is bounded ([`EventBudget`]): a stream whose events were let go is no longer
//! resumable, and a client resuming it is told so with an error answer to its request, so
//! that no call waits for an answer that will never come.

mod memory;
mod shared;
mod streams;

pub use memory::{EventBudget, MemoryEventStore};
pub use shared::{SharedEventStore, StreamInfo, StreamPosition};
pub(crate) use streams::{SessionStreams, StreamLog, StreamLookup};

/// A stream's events were let go to stay within the store's budget: it cannot be resumed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Evicted;

impl std::fmt::Display for Evicted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the stream's events were evicted to stay within the event budget")
    }
}

impl std::error::Error for Evicted {}

/// Keeps the events of SSE streams for replay.
pub trait EventStore: Send + Sync + 'static {
    /// Keeps event `seq` of a stream of a session.
    fn append(&self, session: &str, stream: u64, seq: u64, frame: &str);
    /// The stream has had its last event: a store over its budget lets finished streams go
    /// before it trims the ones still running.
    fn finish_stream(&self, _session: &str, _stream: u64) {}
    /// The kept events of a stream after `after`, in order (older ones may have been
    /// dropped); [`Evicted`] if the whole stream was let go.
    fn replay(&self, session: &str, stream: u64, after: u64) -> Result<Vec<(u64, String)>, Evicted>;
    /// Forgets one stream.
    fn forget_stream(&self, session: &str, stream: u64);
    /// Forgets everything of a session.
    fn forget_session(&self, session: &str);
}

/// Parses an event id `<stream>-<seq>`.
pub(crate) fn parse_event_id(id: &str) -> Option<(u64, u64)> {
    let (stream, seq) = id.trim().split_once('-')?;
    Some((stream.parse().ok()?, seq.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_ids_parse() {
        assert_eq!(parse_event_id("3-17"), Some((3, 17)));
        assert_eq!(parse_event_id(" 0-1 "), Some((0, 1)));
        assert_eq!(parse_event_id("x"), None);
        assert_eq!(parse_event_id("3-"), None);
    }
}
