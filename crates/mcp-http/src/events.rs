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

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use parking_lot::Mutex;
use tokio::sync::Notify;

/// Keeps the events of SSE streams for replay.
pub trait EventStore: Send + Sync + 'static {
    /// Keeps event `seq` of a stream of a session.
    fn append(&self, session: &str, stream: u64, seq: u64, frame: &str);
    /// The kept events of a stream after `after`, in order (older ones may have been dropped).
    fn replay(&self, session: &str, stream: u64, after: u64) -> Vec<(u64, String)>;
    /// Forgets one stream.
    fn forget_stream(&self, session: &str, stream: u64);
    /// Forgets everything of a session.
    fn forget_session(&self, session: &str);
}

/// The kept events of each (session, stream).
type Streams = HashMap<(String, u64), VecDeque<(u64, String)>>;

/// An in-memory [`EventStore`] keeping the last events of each stream.
pub struct MemoryEventStore {
    per_stream: usize,
    streams: Mutex<Streams>,
}

impl MemoryEventStore {
    /// Keeps at most `per_stream` events per stream.
    pub fn new(per_stream: usize) -> Self {
        Self { per_stream: per_stream.max(1), streams: Mutex::default() }
    }
}

impl Default for MemoryEventStore {
    fn default() -> Self {
        Self::new(1000)
    }
}

impl EventStore for MemoryEventStore {
    fn append(&self, session: &str, stream: u64, seq: u64, frame: &str) {
        let mut map = self.streams.lock();
        let log = map.entry((session.to_owned(), stream)).or_default();
        if log.len() >= self.per_stream {
            log.pop_front();
        }
        log.push_back((seq, frame.to_owned()));
    }

    fn replay(&self, session: &str, stream: u64, after: u64) -> Vec<(u64, String)> {
        let map = self.streams.lock();
        let Some(log) = map.get(&(session.to_owned(), stream)) else { return Vec::new() };
        let start = log.partition_point(|(seq, _)| *seq <= after);
        log.range(start..).cloned().collect()
    }

    fn forget_stream(&self, session: &str, stream: u64) {
        self.streams.lock().remove(&(session.to_owned(), stream));
    }

    fn forget_session(&self, session: &str) {
        self.streams.lock().retain(|(s, _), _| s != session);
    }
}

/// The live state of one stream: how far it got, whether it ended, who waits.
#[derive(Default)]
pub(crate) struct StreamLog {
    state: Mutex<LogState>,
    pub(crate) changed: Notify,
}

#[derive(Default)]
struct LogState {
    last_seq: u64,
    done: bool,
    /// Bumped each time the producer asks readers to let go (SSE polling).
    close_requests: u64,
}

impl StreamLog {
    /// Reserves the next sequence number.
    pub(crate) fn next_seq(&self) -> u64 {
        let mut s = self.state.lock();
        s.last_seq += 1;
        s.last_seq
    }

    /// Marks the stream complete.
    pub(crate) fn finish(&self) {
        self.state.lock().done = true;
        self.changed.notify_waiters();
    }

    pub(crate) fn is_done(&self) -> bool {
        self.state.lock().done
    }

    /// Asks current readers to close their connection.
    pub(crate) fn request_close(&self) {
        self.state.lock().close_requests += 1;
        self.changed.notify_waiters();
    }

    pub(crate) fn close_requests(&self) -> u64 {
        self.state.lock().close_requests
    }
}

/// The streams of one session, by number (0 is the standalone GET stream).
#[derive(Default)]
pub(crate) struct SessionStreams {
    logs: Mutex<HashMap<u64, Arc<StreamLog>>>,
    next: Mutex<u64>,
}

/// How many finished request streams a session keeps for late resumption.
const KEPT_FINISHED: usize = 16;

impl SessionStreams {
    /// The standalone stream (created on first use).
    pub(crate) fn standalone(&self) -> Arc<StreamLog> {
        self.logs.lock().entry(0).or_default().clone()
    }

    /// Opens a new request stream; returns its number and log. Finished streams beyond a
    /// few are forgotten (with `forget` called for each).
    pub(crate) fn open(&self, mut forget: impl FnMut(u64)) -> (u64, Arc<StreamLog>) {
        let id = {
            let mut n = self.next.lock();
            *n += 1;
            *n
        };
        let log = Arc::new(StreamLog::default());
        let mut logs = self.logs.lock();
        let mut finished: Vec<u64> = logs.iter().filter(|(k, l)| **k != 0 && l.is_done()).map(|(k, _)| *k).collect();
        if finished.len() > KEPT_FINISHED {
            finished.sort_unstable();
            for old in &finished[..finished.len() - KEPT_FINISHED] {
                logs.remove(old);
                forget(*old);
            }
        }
        logs.insert(id, log.clone());
        (id, log)
    }

    pub(crate) fn get(&self, stream: u64) -> Option<Arc<StreamLog>> {
        self.logs.lock().get(&stream).cloned()
    }
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
    fn replay_after_and_bounds() {
        let store = MemoryEventStore::new(3);
        for seq in 1..=5 {
            store.append("s", 1, seq, &format!("f{seq}"));
        }
        let seqs: Vec<u64> = store.replay("s", 1, 0).into_iter().map(|(s, _)| s).collect();
        assert_eq!(seqs, [3, 4, 5], "only the last 3 are kept");
        assert_eq!(store.replay("s", 1, 4), vec![(5, "f5".to_owned())]);
        assert!(store.replay("s", 2, 0).is_empty());
        store.forget_session("s");
        assert!(store.replay("s", 1, 0).is_empty());
        assert_eq!(parse_event_id("3-17"), Some((3, 17)));
        assert_eq!(parse_event_id("x"), None);
    }
}
