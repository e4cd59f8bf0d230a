//! The in-memory event store, bounded in events per stream and in bytes per session and
//! overall.
//!
//! Over a byte budget, the store lets go, in this order: whole finished streams, oldest
//! finished first (their client has most likely read them; a resumption is then answered
//! with an error); then the oldest events of the streams still running, oldest stream
//! first, always keeping each stream's newest event. A running stream can therefore exceed
//! the budget by its newest event; the number of running streams is bounded by the limits on
//! requests in flight.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::Arc;

use parking_lot::Mutex;

use super::{EventStore, Evicted};

/// How much a [`MemoryEventStore`] keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventBudget {
    /// Events kept per stream; the oldest goes first.
    pub per_stream: usize,
    /// Bytes kept per session (event text plus a fixed cost per event).
    pub per_session: usize,
    /// Bytes kept over all sessions.
    pub total: usize,
}

impl Default for EventBudget {
    /// 1,000 events per stream, 1 MiB per session, 64 MiB overall: a session's resumable
    /// streams hold a large answer or thousands of small messages, one session cannot pin
    /// more than 1 MiB however many calls it leaves running, and a flood of sessions cannot
    /// pin more than 64 MiB.
    fn default() -> Self {
        Self { per_stream: 1000, per_session: 1024 * 1024, total: 64 * 1024 * 1024 }
    }
}

/// What an event costs: its text and its slot.
fn cost(frame: &str) -> usize {
    frame.len() + std::mem::size_of::<(u64, String)>()
}

/// Gives back the slots of events let go, once most of a stream's are empty: the budget
/// counts a slot per event kept, so a stream trimmed from the front must not hold the slots of
/// the events it had at its longest.
fn shrink(events: &mut VecDeque<(u64, String)>) {
    if events.capacity() > 16 && events.len() < events.capacity() / 4 {
        events.shrink_to(events.len() * 2);
    }
}

/// The kept events of one stream.
#[derive(Default)]
struct StreamEvents {
    events: VecDeque<(u64, String)>,
    bytes: usize,
    /// When the stream finished, in the store's order of finishing.
    finished: Option<u64>,
    /// Let go to stay within the budget: no longer resumable.
    evicted: bool,
}

/// The kept streams of one session, in flat sorted queues rather than B-trees: a session
/// has a stream or two (a B-tree node holds room for eleven, about 800 bytes here), and new
/// streams and newly finished ones come at the back, the oldest go from the front.
#[derive(Default)]
struct SessionEvents {
    streams: Streams,
    bytes: usize,
    /// Its finished streams, as (order of finishing, stream), in that order.
    finished: VecDeque<(u64, u64)>,
}

/// Adds an item to a queue that holds few, with room for that one only at first.
fn push_small<T>(queue: &mut VecDeque<T>, item: T) {
    if queue.capacity() == 0 {
        queue.reserve_exact(1);
    }
    queue.push_back(item);
}

/// A session's streams by id, in a flat queue sorted by id.
#[derive(Default)]
struct Streams(VecDeque<(u64, StreamEvents)>);

impl Streams {
    fn position(&self, stream: u64) -> Result<usize, usize> {
        self.0.binary_search_by_key(&stream, |(id, _)| *id)
    }

    fn get(&self, stream: u64) -> Option<&StreamEvents> {
        self.position(stream).ok().map(|i| &self.0[i].1)
    }

    fn get_mut(&mut self, stream: u64) -> Option<&mut StreamEvents> {
        self.position(stream).ok().map(|i| &mut self.0[i].1)
    }

    /// The stream's events, made empty if it has none yet (a new stream: at the back).
    fn get_or_default(&mut self, stream: u64) -> &mut StreamEvents {
        let i = match self.position(stream) {
            Ok(i) => i,
            Err(i) if i == self.0.len() => {
                push_small(&mut self.0, (stream, StreamEvents::default()));
                i
            }
            Err(i) => {
                self.0.insert(i, (stream, StreamEvents::default()));
                i
            }
        };
        &mut self.0[i].1
    }

    fn remove(&mut self, stream: u64) -> Option<StreamEvents> {
        let i = self.position(stream).ok()?;
        self.0.remove(i).map(|(_, log)| log)
    }
}

impl SessionEvents {
    fn forget_finished(&mut self, order: u64) {
        if let Ok(i) = self.finished.binary_search_by_key(&order, |(o, _)| *o) {
            self.finished.remove(i);
        }
    }
}

#[derive(Default)]
struct State {
    /// By session id (the same text as in `finished`, held once).
    sessions: HashMap<Arc<str>, SessionEvents>,
    /// Every finished stream, by order of finishing.
    finished: BTreeMap<u64, (Arc<str>, u64)>,
    total: usize,
    next_order: u64,
}

impl State {
    /// Lets a finished stream go, keeping a mark that it was.
    fn evict(&mut self, session: &str, order: u64, stream: u64) {
        self.finished.remove(&order);
        let Some(s) = self.sessions.get_mut(session) else { return };
        s.forget_finished(order);
        if let Some(log) = s.streams.get_mut(stream) {
            s.bytes -= log.bytes;
            self.total -= log.bytes;
            *log = StreamEvents { evicted: true, ..StreamEvents::default() };
        }
    }

    /// Lets the session's oldest finished stream go; false if it has none.
    fn evict_oldest_of(&mut self, session: &str) -> bool {
        let Some(&(order, stream)) = self.sessions.get(session).and_then(|s| s.finished.front()) else {
            return false;
        };
        self.evict(session, order, stream);
        true
    }

    /// Lets the oldest finished stream of any session go; false if there is none.
    fn evict_oldest(&mut self) -> bool {
        let Some((order, (session, stream))) = self.finished.pop_first() else { return false };
        self.evict(&session, order, stream);
        true
    }

    /// Drops the oldest event of the session's oldest running stream that has more than
    /// one; false if there is none.
    fn trim_running_of(&mut self, session: &str) -> bool {
        let Some(s) = self.sessions.get_mut(session) else { return false };
        let Some((_, log)) = s.streams.0.iter_mut().find(|(_, l)| l.finished.is_none() && l.events.len() > 1) else {
            return false;
        };
        if let Some((_, frame)) = log.events.pop_front() {
            let c = cost(&frame);
            log.bytes -= c;
            s.bytes -= c;
            self.total -= c;
        }
        shrink(&mut log.events);
        true
    }

    /// Removes a stream entirely.
    fn remove(&mut self, session: &str, stream: u64) {
        let Some(s) = self.sessions.get_mut(session) else { return };
        if let Some(log) = s.streams.remove(stream) {
            s.bytes -= log.bytes;
            self.total -= log.bytes;
            if let Some(order) = log.finished {
                s.forget_finished(order);
                self.finished.remove(&order);
            }
        }
    }
}

/// An in-memory [`EventStore`] within an [`EventBudget`].
pub struct MemoryEventStore {
    budget: EventBudget,
    state: Mutex<State>,
}

impl MemoryEventStore {
    /// Keeps at most `per_stream` events per stream, within the default byte budgets.
    pub fn new(per_stream: usize) -> Self {
        Self::with_budget(EventBudget { per_stream, ..EventBudget::default() })
    }

    /// Keeps what `budget` allows.
    pub fn with_budget(budget: EventBudget) -> Self {
        let budget = EventBudget { per_stream: budget.per_stream.max(1), ..budget };
        Self { budget, state: Mutex::default() }
    }

    /// The bytes kept, over all sessions (as the budget counts them).
    pub fn kept_bytes(&self) -> usize {
        self.state.lock().total
    }

    /// The bytes kept for one session.
    pub fn kept_bytes_of(&self, session: &str) -> usize {
        self.state.lock().sessions.get(session).map_or(0, |s| s.bytes)
    }
}

impl Default for MemoryEventStore {
    fn default() -> Self {
        Self::with_budget(EventBudget::default())
    }
}

impl EventStore for MemoryEventStore {
    fn append(&self, session: &str, stream: u64, seq: u64, frame: &str) {
        let mut guard = self.state.lock();
        let st = &mut *guard;
        if !st.sessions.contains_key(session) {
            st.sessions.insert(session.into(), SessionEvents::default());
        }
        let Some(s) = st.sessions.get_mut(session) else { return };
        let log = s.streams.get_or_default(stream);
        if log.evicted || log.finished.is_some() {
            return;
        }
        let c = cost(frame);
        log.events.push_back((seq, frame.to_owned()));
        log.bytes += c;
        s.bytes += c;
        st.total += c;
        if log.events.len() > self.budget.per_stream {
            if let Some((_, old)) = log.events.pop_front() {
                let c = cost(&old);
                log.bytes -= c;
                s.bytes -= c;
                st.total -= c;
            }
        }
        while st.sessions.get(session).is_some_and(|s| s.bytes > self.budget.per_session) {
            if !st.evict_oldest_of(session) && !st.trim_running_of(session) {
                break;
            }
        }
        while st.total > self.budget.total {
            // The session growing pays first for its running streams; other sessions' running
            // streams are not growing, and their finished ones go in order.
            if !st.evict_oldest() && !st.trim_running_of(session) {
                break;
            }
        }
    }

    fn finish_stream(&self, session: &str, stream: u64) {
        let mut guard = self.state.lock();
        let st = &mut *guard;
        let order = st.next_order;
        let Some(key) = st.sessions.get_key_value(session).map(|(key, _)| key.clone()) else { return };
        let Some(s) = st.sessions.get_mut(session) else { return };
        let Some(log) = s.streams.get_mut(stream) else { return };
        if log.finished.is_some() || log.evicted {
            return;
        }
        log.finished = Some(order);
        // It grows no more: its slots are its events.
        log.events.shrink_to_fit();
        // Finished in order: at the back.
        push_small(&mut s.finished, (order, stream));
        st.finished.insert(order, (key, stream));
        st.next_order += 1;
    }

    fn replay(&self, session: &str, stream: u64, after: u64) -> Result<Vec<(u64, String)>, Evicted> {
        let st = self.state.lock();
        let Some(log) = st.sessions.get(session).and_then(|s| s.streams.get(stream)) else { return Ok(Vec::new()) };
        if log.evicted {
            return Err(Evicted);
        }
        let start = log.events.partition_point(|(seq, _)| *seq <= after);
        Ok(log.events.range(start..).cloned().collect())
    }

    fn forget_stream(&self, session: &str, stream: u64) {
        self.state.lock().remove(session, stream);
    }

    fn forget_session(&self, session: &str) {
        let mut st = self.state.lock();
        if let Some(s) = st.sessions.remove(session) {
            st.total -= s.bytes;
            for (order, _) in s.finished {
                st.finished.remove(&order);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seqs(store: &MemoryEventStore, session: &str, stream: u64) -> Result<Vec<u64>, Evicted> {
        store.replay(session, stream, 0).map(|events| events.into_iter().map(|(s, _)| s).collect())
    }

    /// A frame that costs exactly `bytes`.
    fn frame(bytes: usize) -> String {
        "x".repeat(bytes - std::mem::size_of::<(u64, String)>())
    }

    #[test]
    fn replay_after_and_per_stream_bound() {
        let store = MemoryEventStore::new(3);
        for seq in 1..=5 {
            store.append("s", 1, seq, &format!("f{seq}"));
        }
        assert_eq!(seqs(&store, "s", 1), Ok(vec![3, 4, 5]), "only the last 3 are kept");
        assert_eq!(store.replay("s", 1, 4), Ok(vec![(5, "f5".to_owned())]));
        assert_eq!(store.replay("s", 2, 0), Ok(Vec::new()));
        store.forget_session("s");
        assert_eq!(store.replay("s", 1, 0), Ok(Vec::new()));
        assert_eq!(store.kept_bytes(), 0);
    }

    #[test]
    fn a_session_over_its_budget_lets_its_oldest_finished_streams_go_first() {
        let store = MemoryEventStore::with_budget(EventBudget { per_stream: 100, per_session: 1000, total: 1 << 30 });
        for stream in 1..=3 {
            store.append("s", stream, 1, &frame(300));
            store.finish_stream("s", stream);
        }
        store.append("other", 1, 1, &frame(300));
        store.finish_stream("other", 1);
        assert_eq!(store.kept_bytes_of("s"), 900);
        // A running stream grows: stream 1 goes, then 2; 3 and the running one stay.
        store.append("s", 4, 1, &frame(200));
        assert_eq!(seqs(&store, "s", 1), Err(Evicted));
        store.append("s", 4, 2, &frame(300));
        assert_eq!(seqs(&store, "s", 2), Err(Evicted));
        assert_eq!(seqs(&store, "s", 3), Ok(vec![1]));
        assert_eq!(seqs(&store, "s", 4), Ok(vec![1, 2]));
        assert_eq!(store.kept_bytes_of("s"), 800);
        assert_eq!(seqs(&store, "other", 1), Ok(vec![1]), "another session's streams are not its budget");
        // An evicted stream stays evicted, and costs nothing.
        store.append("s", 1, 2, &frame(100));
        assert_eq!(seqs(&store, "s", 1), Err(Evicted));
        assert_eq!(store.kept_bytes(), 1100);
    }

    #[test]
    fn with_no_finished_stream_left_the_oldest_events_of_running_streams_go_but_never_the_newest() {
        let store = MemoryEventStore::with_budget(EventBudget { per_stream: 100, per_session: 1000, total: 1 << 30 });
        for seq in 1..=4 {
            store.append("s", 1, seq, &frame(200));
        }
        store.append("s", 2, 1, &frame(200));
        // 1000 bytes: at the budget.
        store.append("s", 2, 2, &frame(200));
        assert_eq!(seqs(&store, "s", 1), Ok(vec![2, 3, 4]), "the oldest stream pays first");
        assert_eq!(store.kept_bytes_of("s"), 1000);
        // An event larger than the budget is kept alone; every other running stream keeps
        // its newest.
        store.append("s", 2, 3, &frame(5000));
        assert_eq!(seqs(&store, "s", 1), Ok(vec![4]));
        assert_eq!(seqs(&store, "s", 2), Ok(vec![3]));
        assert_eq!(store.kept_bytes_of("s"), 5200);
    }

    #[test]
    fn over_the_overall_budget_the_oldest_finished_streams_of_any_session_go_first() {
        let store = MemoryEventStore::with_budget(EventBudget { per_stream: 100, per_session: 10_000, total: 1000 });
        store.append("a", 1, 1, &frame(400));
        store.finish_stream("a", 1);
        store.append("b", 1, 1, &frame(400));
        store.finish_stream("b", 1);
        store.append("c", 1, 1, &frame(400));
        assert_eq!(seqs(&store, "a", 1), Err(Evicted), "the oldest finished, another session's");
        assert_eq!(seqs(&store, "b", 1), Ok(vec![1]));
        store.append("c", 1, 2, &frame(400));
        assert_eq!(seqs(&store, "b", 1), Err(Evicted));
        store.append("c", 1, 3, &frame(400));
        assert_eq!(seqs(&store, "c", 1), Ok(vec![2, 3]), "then the growing session's running streams");
        assert_eq!(store.kept_bytes(), 800);
        store.forget_session("c");
        store.forget_session("a");
        store.forget_session("b");
        assert_eq!(store.kept_bytes(), 0);
    }

    #[test]
    fn forgetting_a_stream_frees_its_bytes_and_its_place_in_the_eviction_order() {
        let store = MemoryEventStore::with_budget(EventBudget { per_stream: 100, per_session: 1000, total: 1000 });
        store.append("s", 1, 1, &frame(500));
        store.finish_stream("s", 1);
        store.forget_stream("s", 1);
        assert_eq!(store.kept_bytes(), 0);
        store.append("s", 2, 1, &frame(600));
        store.append("s", 2, 2, &frame(600));
        assert_eq!(seqs(&store, "s", 2), Ok(vec![2]));
        assert_eq!(store.kept_bytes(), 600);
    }
}
