//! The live side of a session's streams: how far each got, whether it ended, who waits, and
//! which request it answers.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use mcpwire_protocol::RequestId;
use parking_lot::Mutex;
use tokio::sync::Notify;

/// The live state of one stream: how far it got, whether it ended, who waits.
#[derive(Default)]
pub(crate) struct StreamLog {
    state: Mutex<LogState>,
    pub(crate) changed: Notify,
    /// The request the stream answers (none: the standalone stream, or a batch's).
    pub(crate) request: Option<RequestId>,
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

/// What a session knows of a stream a client asks to resume.
pub(crate) enum StreamLookup {
    /// Kept: it can be read on.
    Kept(Arc<StreamLog>),
    /// Forgotten (too many finished streams since): only the request it answered is known.
    Forgotten(Option<RequestId>),
    /// Forgotten long ago: nothing is known of it.
    Gone,
    /// The session never opened it.
    Never,
}

/// The streams of one session, by number (0 is the standalone GET stream).
#[derive(Default)]
pub(crate) struct SessionStreams {
    logs: Mutex<HashMap<u64, Arc<StreamLog>>>,
    /// The requests of the latest forgotten streams, so that resuming one is answered.
    forgotten: Mutex<VecDeque<(u64, Option<RequestId>)>>,
    next: Mutex<u64>,
}

/// How many finished request streams a session keeps for late resumption.
const KEPT_FINISHED: usize = 16;

/// How many forgotten streams a session still answers a resumption of (with an error).
const KEPT_FORGOTTEN: usize = 64;

impl SessionStreams {
    /// The standalone stream (created on first use).
    pub(crate) fn standalone(&self) -> Arc<StreamLog> {
        self.logs.lock().entry(0).or_default().clone()
    }

    /// Opens a new request stream answering `request`; returns its number and log. Finished
    /// streams beyond a few are forgotten (with `forget` called for each).
    pub(crate) fn open(&self, request: Option<RequestId>, forget: impl FnMut(u64)) -> (u64, Arc<StreamLog>) {
        let id = {
            let mut n = self.next.lock();
            *n += 1;
            *n
        };
        self.open_as(id, request, forget)
    }

    /// [`Self::open`] with a number of the caller's (random, for a session several instances
    /// serve: their numbers must not meet). A number so given and no longer kept is looked up
    /// as [`StreamLookup::Never`].
    pub(crate) fn open_as(
        &self,
        id: u64,
        request: Option<RequestId>,
        mut forget: impl FnMut(u64),
    ) -> (u64, Arc<StreamLog>) {
        let log = Arc::new(StreamLog { request, ..StreamLog::default() });
        let mut logs = self.logs.lock();
        let mut finished: Vec<u64> = logs.iter().filter(|(k, l)| **k != 0 && l.is_done()).map(|(k, _)| *k).collect();
        if finished.len() > KEPT_FINISHED {
            finished.sort_unstable();
            let mut forgotten = self.forgotten.lock();
            for old in &finished[..finished.len() - KEPT_FINISHED] {
                if let Some(gone) = logs.remove(old) {
                    if forgotten.len() >= KEPT_FORGOTTEN {
                        forgotten.pop_front();
                    }
                    forgotten.push_back((*old, gone.request.clone()));
                }
                forget(*old);
            }
        }
        logs.insert(id, log.clone());
        (id, log)
    }

    /// What is known of stream `stream`, for a client resuming it.
    pub(crate) fn lookup(&self, stream: u64) -> StreamLookup {
        if let Some(log) = self.logs.lock().get(&stream) {
            return StreamLookup::Kept(log.clone());
        }
        if let Some((_, request)) = self.forgotten.lock().iter().find(|(s, _)| *s == stream) {
            return StreamLookup::Forgotten(request.clone());
        }
        if stream != 0 && stream <= *self.next.lock() {
            StreamLookup::Gone
        } else {
            StreamLookup::Never
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finished_streams_beyond_the_kept_ones_are_forgotten_but_their_requests_remembered() {
        let streams = SessionStreams::default();
        let mut forgotten = Vec::new();
        let total = KEPT_FINISHED + KEPT_FORGOTTEN + 4;
        for i in 0..total {
            let (_, log) = streams.open(Some(RequestId::Number(i as i64)), |s| forgotten.push(s));
            log.finish();
        }
        // The last one opened is not yet counted among the finished ones it could push out.
        assert_eq!(forgotten.len(), total - KEPT_FINISHED - 1);
        assert!(matches!(streams.lookup(total as u64), StreamLookup::Kept(_)));
        let last_forgotten = *forgotten.last().unwrap();
        match streams.lookup(last_forgotten) {
            StreamLookup::Forgotten(Some(RequestId::Number(n))) => assert_eq!(n as u64, last_forgotten - 1),
            _ => panic!("the latest forgotten stream's request is remembered"),
        }
        assert!(matches!(streams.lookup(1), StreamLookup::Gone), "the first is forgotten entirely");
        assert!(matches!(streams.lookup(total as u64 + 1), StreamLookup::Never));
    }
}
