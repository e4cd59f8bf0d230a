//! The event budget kept in Redis: events per stream, bytes per session and overall, counted
//! in the store by the append script, with finished streams let go first and the counts
//! made right again when keys expire unseen (simulated here by deleting them: no test sleeps).

use std::time::Duration;

use mcpwire_http::{EventBudget, SharedEventStore, StreamInfo};
use mcpwire_protocol::RequestId;
use mcpwire_store_redis::RedisStore;
use mcpwire_testkit::redis::RedisServer;
use redis::aio::MultiplexedConnection;
use redis::AsyncCommands;

/// What an event costs besides its text, as the in-memory store counts it.
const SLOT: usize = 32;

const TTL: Duration = Duration::from_secs(600);

/// A store (an instance) and a plain connection to look into Redis with.
struct Setup {
    store: RedisStore,
    redis: MultiplexedConnection,
    budget: EventBudget,
}

async fn setup(server: &RedisServer, budget: EventBudget) -> Setup {
    let prefix = format!("budget-{}", rand::random::<u64>());
    let store = RedisStore::connect(&server.url(), &prefix).await.expect("Redis answers");
    let client = redis::Client::open(server.url()).unwrap();
    let redis = client.get_multiplexed_async_connection().await.unwrap();
    Setup { store, redis, budget }
}

/// A frame that costs exactly `bytes`.
fn frame(bytes: usize) -> String {
    "x".repeat(bytes - SLOT)
}

fn info(request: i64) -> StreamInfo {
    StreamInfo { request: Some(RequestId::Number(request)), instance: "i1".into(), done: false, evicted: false }
}

impl Setup {
    async fn open(&self, session: &str, stream: u64) {
        self.store.open(session, stream, &info(stream as i64), TTL).await.unwrap();
    }

    async fn append(&self, session: &str, stream: u64, seq: u64, bytes: usize) {
        let kept = self.store.append(session, stream, Some(seq), &frame(bytes), &self.budget, TTL).await.unwrap();
        assert_eq!(kept, seq);
    }

    async fn finish(&self, session: &str, stream: u64) {
        self.store.finish(session, stream).await.unwrap();
    }

    async fn seqs(&self, session: &str, stream: u64) -> Vec<u64> {
        self.store.read(session, stream, 0, 10_000).await.unwrap().into_iter().map(|(seq, _)| seq).collect()
    }

    /// The bytes the events of these streams really cost.
    async fn actual(&self, session: &str, streams: &[u64]) -> usize {
        let mut bytes = 0;
        for &stream in streams {
            let events = self.store.read(session, stream, 0, 10_000).await.unwrap();
            bytes += events.iter().map(|(_, f)| f.len() + SLOT).sum::<usize>();
        }
        bytes
    }

    async fn evicted(&self, session: &str, stream: u64) -> bool {
        self.store.info(session, stream).await.unwrap().expect("the stream is known").evicted
    }

    /// Whether a stream, perhaps never opened, is marked evicted.
    async fn evicted_or_unknown(&self, session: &str, stream: u64) -> bool {
        self.store.info(session, stream).await.unwrap().is_some_and(|i| i.evicted)
    }

    /// The bytes the store counts for a session.
    async fn counted_of(&mut self, session: &str) -> usize {
        let key = format!("{}:evbytes:{session}", self.store.prefix());
        let n: Option<usize> = self.redis.hget(key, "_").await.unwrap();
        n.unwrap_or(0)
    }

    /// The bytes the store counts overall.
    async fn counted(&mut self) -> usize {
        let key = format!("{}:evbytes", self.store.prefix());
        let n: Option<usize> = self.redis.hget(key, "_").await.unwrap();
        n.unwrap_or(0)
    }

    /// Lets a key go as its lifetime running out would.
    async fn expire(&mut self, key: &str) {
        let key = format!("{}:{key}", self.store.prefix());
        let gone: usize = self.redis.del(&key).await.unwrap();
        assert_eq!(gone, 1, "{key} was there");
    }
}

fn budget(per_stream: usize, per_session: usize, total: usize) -> EventBudget {
    EventBudget { per_stream, per_session, total }
}

#[tokio::test]
async fn a_stream_keeps_exactly_its_last_per_stream_events() {
    let server = RedisServer::start();
    let mut t = setup(&server, budget(3, 1 << 20, 1 << 30)).await;
    t.open("s", 1).await;
    for seq in 1..=10 {
        t.append("s", 1, seq, 40 + seq as usize).await;
        let kept = t.seqs("s", 1).await;
        let first = seq.saturating_sub(2).max(1);
        assert_eq!(kept, (first..=seq).collect::<Vec<_>>(), "after event {seq}");
        assert_eq!(t.counted_of("s").await, t.actual("s", &[1]).await, "counted as kept");
    }
    assert_eq!(t.counted().await, 48 + 49 + 50);
}

#[tokio::test]
async fn a_session_over_its_budget_lets_its_oldest_finished_streams_go_first() {
    let server = RedisServer::start();
    let mut t = setup(&server, budget(100, 1000, 1 << 30)).await;
    for stream in 1..=4 {
        t.open("s", stream).await;
    }
    for stream in 1..=3 {
        t.append("s", stream, 1, 300).await;
        t.finish("s", stream).await;
    }
    t.open("other", 1).await;
    t.append("other", 1, 1, 300).await;
    t.finish("other", 1).await;
    assert_eq!(t.counted_of("s").await, 900);
    // A running stream grows: stream 1 goes, then 2; 3 and the running one stay.
    t.append("s", 4, 1, 200).await;
    assert!(t.evicted("s", 1).await);
    assert_eq!(t.seqs("s", 1).await, Vec::<u64>::new(), "an evicted stream reads nothing");
    assert!(!t.evicted("s", 2).await);
    t.append("s", 4, 2, 300).await;
    assert!(t.evicted("s", 2).await);
    assert!(!t.evicted("s", 3).await);
    assert_eq!(t.seqs("s", 3).await, vec![1]);
    assert_eq!(t.seqs("s", 4).await, vec![1, 2]);
    assert_eq!(t.counted_of("s").await, 800);
    assert_eq!(t.actual("s", &[1, 2, 3, 4]).await, 800);
    assert_eq!(t.seqs("other", 1).await, vec![1], "another session's streams are not its budget");
    assert!(!t.evicted("other", 1).await);
    // An evicted stream stays evicted, and costs nothing.
    t.append("s", 1, 2, 100).await;
    assert_eq!(t.seqs("s", 1).await, Vec::<u64>::new());
    assert!(t.evicted("s", 1).await);
    assert_eq!(t.counted().await, 1100);
}

#[tokio::test]
async fn with_no_finished_stream_left_running_streams_lose_their_oldest_events_but_never_their_newest() {
    let server = RedisServer::start();
    let mut t = setup(&server, budget(100, 1000, 1 << 30)).await;
    for seq in 1..=4 {
        t.append("s", 1, seq, 200).await;
    }
    t.append("s", 2, 1, 200).await;
    // 1000 bytes: at the budget.
    t.append("s", 2, 2, 200).await;
    assert_eq!(t.seqs("s", 1).await, vec![2, 3, 4], "the oldest stream pays first");
    assert_eq!(t.seqs("s", 2).await, vec![1, 2]);
    assert_eq!(t.counted_of("s").await, 1000);
    // An event larger than the budget is kept alone; every other running stream keeps its
    // newest.
    t.append("s", 2, 3, 5000).await;
    assert_eq!(t.seqs("s", 1).await, vec![4]);
    assert_eq!(t.seqs("s", 2).await, vec![3]);
    assert_eq!(t.counted_of("s").await, 5200);
    // Under any load, what is counted is what is kept, and never more than the budget and one
    // newest event per running stream.
    for seq in 4..=40 {
        let stream = 1 + seq % 3;
        let bytes = 50 + (seq as usize * 37) % 300;
        let next = t.seqs("s", stream).await.last().copied().unwrap_or(0) + 1;
        t.append("s", stream, next, bytes).await;
        let counted = t.counted_of("s").await;
        assert_eq!(counted, t.actual("s", &[1, 2, 3]).await);
        let mut newest = 0;
        for stream in 1..=3 {
            if let Some((_, f)) = t.store.read("s", stream, 0, 10_000).await.unwrap().pop() {
                newest += f.len() + SLOT;
            }
        }
        assert!(counted <= 1000 + newest, "{counted} bytes kept");
    }
}

#[tokio::test]
async fn over_the_overall_budget_the_oldest_finished_streams_of_any_session_go_first_on_any_instance() {
    let server = RedisServer::start();
    let mut a = setup(&server, budget(100, 10_000, 1000)).await;
    // A second instance of the same deployment.
    let b = Setup {
        store: RedisStore::connect(&server.url(), a.store.prefix()).await.unwrap(),
        redis: a.redis.clone(),
        budget: a.budget,
    };
    for session in ["a", "b", "c"] {
        a.open(session, 1).await;
    }
    a.append("a", 1, 1, 400).await;
    a.finish("a", 1).await;
    b.append("b", 1, 1, 400).await;
    b.finish("b", 1).await;
    a.append("c", 1, 1, 400).await;
    assert!(a.evicted("a", 1).await, "the oldest finished, another session's");
    assert!(!a.evicted("b", 1).await);
    assert_eq!(a.seqs("b", 1).await, vec![1]);
    b.append("c", 1, 2, 400).await;
    assert!(a.evicted("b", 1).await);
    assert_eq!(a.counted_of("a").await, 0);
    assert_eq!(a.counted_of("b").await, 0);
    a.append("c", 1, 3, 400).await;
    assert_eq!(a.seqs("c", 1).await, vec![2, 3], "then the running streams");
    assert_eq!(a.counted().await, 800);
    assert_eq!(a.counted_of("c").await, 800);
}

#[tokio::test]
async fn the_standalone_stream_is_numbered_by_the_store_on_every_instance_and_counted() {
    let server = RedisServer::start();
    let mut a = setup(&server, budget(100, 1000, 1 << 30)).await;
    let b = RedisStore::connect(&server.url(), a.store.prefix()).await.unwrap();
    let mut numbers = Vec::new();
    for i in 0..6 {
        let instance = if i % 2 == 0 { &a.store } else { &b };
        numbers.push(instance.append("s", 0, None, &frame(300), &a.budget, TTL).await.unwrap());
    }
    assert_eq!(numbers, vec![1, 2, 3, 4, 5, 6]);
    // It counts as a running stream: its oldest events go, its newest stays.
    assert_eq!(a.seqs("s", 0).await, vec![4, 5, 6]);
    assert_eq!(a.counted_of("s").await, 900);
    assert_eq!(a.counted().await, 900);
    let big = a.store.append("s", 0, None, &frame(3000), &a.budget, TTL).await.unwrap();
    assert_eq!(big, 7);
    assert_eq!(a.seqs("s", 0).await, vec![7]);
    assert_eq!(a.counted_of("s").await, 3000);
}

#[tokio::test]
async fn streams_that_expired_unseen_are_uncounted_by_the_next_walk() {
    let server = RedisServer::start();
    let mut t = setup(&server, budget(100, 1000, 2000)).await;
    // The oldest stream of all, of a session that will expire whole.
    t.append("gone", 1, 1, 500).await;
    t.append("gone", 1, 2, 500).await;
    // A running stream whose events expire (its request went quiet for the idle timeout).
    t.append("s", 1, 1, 400).await;
    t.expire("events:s:1").await;
    assert_eq!(t.counted_of("s").await, 400, "nobody saw it expire");
    t.append("s", 2, 1, 400).await;
    // 1200 counted, 800 kept: the walk finds stream 1 gone and only uncounts it.
    t.append("s", 2, 2, 400).await;
    assert_eq!(t.seqs("s", 2).await, vec![1, 2], "nothing kept was let go for bytes no longer kept");
    assert_eq!(t.counted_of("s").await, 800);
    assert_eq!(t.counted().await, 1800);
    assert!(!t.evicted_or_unknown("s", 1).await);
    let field: Option<usize> = t.redis.hget(format!("{}:evbytes:s", t.store.prefix()), "1").await.unwrap();
    assert_eq!(field, None, "the stream is counted no more");
    let place: Option<f64> = t.redis.zscore(format!("{}:evorder", t.store.prefix()), "s 1").await.unwrap();
    assert_eq!(place, None, "nor is it in the order");

    // A whole session expires: only the overall count remembers it.
    for key in ["events:gone:1", "evbytes:gone", "evorder:gone"] {
        t.expire(key).await;
    }
    // 2200 counted overall, 1200 kept: the walk uncounts the session gone, and the streams
    // kept keep their events.
    t.append("t", 1, 1, 400).await;
    assert_eq!(t.counted().await, 1200);
    assert_eq!(t.seqs("s", 2).await, vec![1, 2]);
    assert_eq!(t.seqs("t", 1).await, vec![1]);
    let place: Option<f64> = t.redis.zscore(format!("{}:evorder", t.store.prefix()), "gone 1").await.unwrap();
    assert_eq!(place, None);
    // A stream that comes back after its events expired starts its count again.
    t.append("s", 3, 1, 100).await;
    t.expire("events:s:3").await;
    t.append("s", 3, 2, 100).await;
    assert_eq!(t.counted_of("s").await, 900);
    assert_eq!(t.actual("s", &[1, 2, 3]).await, 900);
    assert_eq!(t.counted().await, 1300);
}

#[tokio::test]
async fn every_key_the_event_store_writes_has_a_lifetime() {
    let server = RedisServer::start();
    let mut t = setup(&server, budget(2, 1000, 1500)).await;
    for session in ["a", "b"] {
        for stream in 1..=3 {
            t.open(session, stream).await;
            for seq in 1..=3 {
                t.append(session, stream, seq, 150).await;
            }
            t.finish(session, stream).await;
        }
        t.store.append(session, 0, None, &frame(100), &t.budget, TTL).await.unwrap();
    }
    // A stream ended after its counts expired, and one whose hash expired.
    t.expire("evorder:a").await;
    t.finish("a", 3).await;
    t.expire("stream:b:3").await;
    t.finish("b", 3).await;
    t.append("b", 4, 1, 900).await;
    assert!(t.evicted("a", 1).await, "the budgets were at work");
    let keys: Vec<String> = {
        let mut iter = t.redis.scan_match::<_, String>(format!("{}:*", t.store.prefix())).await.unwrap();
        let mut keys = Vec::new();
        while let Some(key) = iter.next_item().await {
            keys.push(key.unwrap());
        }
        keys
    };
    assert!(keys.len() >= 10, "{keys:?}");
    for key in keys {
        let ttl: i64 = t.redis.pttl(&key).await.unwrap();
        assert!(ttl > 0, "{key} has no lifetime ({ttl})");
    }
}

#[tokio::test]
async fn one_append_does_a_bounded_share_of_the_work_and_the_next_ones_the_rest() {
    let server = RedisServer::start();
    let mut t = setup(&server, budget(100, 10_000, 1 << 30)).await;
    for stream in 1..=100 {
        t.open("s", stream).await;
        t.append("s", stream, 1, 100).await;
        t.finish("s", stream).await;
    }
    t.append("s", 1000, 1, 9000).await;
    // 90 streams are to go; one script lets 64 go (its bound of steps).
    assert!(t.evicted("s", 64).await);
    assert!(!t.evicted("s", 65).await);
    assert_eq!(t.counted_of("s").await, 19_000 - 6400);
    t.append("s", 1000, 2, 100).await;
    assert!(t.evicted("s", 91).await);
    assert!(!t.evicted("s", 92).await);
    assert_eq!(t.counted_of("s").await, 10_000);
    assert_eq!(t.seqs("s", 1000).await, vec![1, 2]);
}
