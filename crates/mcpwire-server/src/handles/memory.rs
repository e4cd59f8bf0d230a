//! The handle store of one process: bounded, each entry expiring by the tokio clock (which a
//! paused test advances at will).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use parking_lot::Mutex;
use tokio::time::Instant;

use super::store::HandleStore;
use crate::shared::StoreError;

/// How many entries a [`MemoryHandleStore`] keeps unless told otherwise.
pub const DEFAULT_MAX_ENTRIES: usize = 100_000;

/// A [`HandleStore`] in this process's memory, for one instance (or several in one process,
/// sharing it through an `Arc`).
///
/// It holds at most a fixed number of entries: when a new key arrives and it is full, an
/// expired entry goes first, else the least recently used one (read or written). A value
/// lives for the `ttl` of its last `put` or `get`, measured by [`tokio::time::Instant`].
pub struct MemoryHandleStore {
    max_entries: usize,
    entries: Mutex<Entries>,
}

/// The entries, indexed three ways. Every use of an entry gives it a new, larger `tick`, so
/// the smallest tick is the least recently used entry, and `(expires, tick)` is unique.
#[derive(Default)]
struct Entries {
    by_key: HashMap<Arc<str>, Entry>,
    by_use: BTreeMap<u64, Arc<str>>,
    by_expiry: BTreeSet<(Instant, u64)>,
    next_tick: u64,
}

struct Entry {
    value: Vec<u8>,
    expires: Instant,
    tick: u64,
}

impl Entries {
    fn tick(&mut self) -> u64 {
        self.next_tick += 1;
        self.next_tick
    }

    /// Takes `key` out of every index.
    fn take(&mut self, key: &str) -> Option<Entry> {
        let entry = self.by_key.remove(key)?;
        self.by_use.remove(&entry.tick);
        self.by_expiry.remove(&(entry.expires, entry.tick));
        Some(entry)
    }

    fn insert(&mut self, key: Arc<str>, value: Vec<u8>, expires: Instant) {
        let tick = self.tick();
        self.by_use.insert(tick, key.clone());
        self.by_expiry.insert((expires, tick));
        self.by_key.insert(key, Entry { value, expires, tick });
    }

    /// Makes room for one more entry: an expired one goes if there is one, else the least
    /// recently used. Whether one went.
    fn evict_one(&mut self, now: Instant) -> bool {
        let expired = self.by_expiry.first().filter(|(expires, _)| *expires <= now).map(|&(_, tick)| tick);
        let victim = expired.or_else(|| self.by_use.keys().next().copied());
        match victim.and_then(|tick| self.by_use.get(&tick).cloned()) {
            Some(key) => self.take(&key).is_some(),
            None => false,
        }
    }
}

impl MemoryHandleStore {
    /// A store of at most [`DEFAULT_MAX_ENTRIES`] entries.
    pub fn new() -> Self {
        Self::with_max_entries(DEFAULT_MAX_ENTRIES)
    }

    /// A store of at most `max_entries` entries (at least one).
    pub fn with_max_entries(max_entries: usize) -> Self {
        Self { max_entries: max_entries.max(1), entries: Mutex::new(Entries::default()) }
    }

    /// How many entries it holds, expired ones not yet dropped included.
    pub fn len(&self) -> usize {
        self.entries.lock().by_key.len()
    }

    /// Whether it holds no entry.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn put_now(&self, key: &str, value: Vec<u8>, ttl: Duration) {
        let now = Instant::now();
        let mut entries = self.entries.lock();
        // A key replaced makes no room for anything; a new one may need some.
        if entries.take(key).is_none() {
            while entries.by_key.len() >= self.max_entries && entries.evict_one(now) {}
        }
        entries.insert(Arc::from(key), value, expires_at(now, ttl));
    }

    fn get_now(&self, key: &str, ttl: Duration) -> Option<Vec<u8>> {
        let now = Instant::now();
        let mut entries = self.entries.lock();
        let entry = entries.take(key)?;
        if entry.expires <= now {
            // Expired: dropped now rather than left to take a place.
            return None;
        }
        let value = entry.value.clone();
        entries.insert(Arc::from(key), entry.value, expires_at(now, ttl));
        Some(value)
    }

    fn remove_now(&self, key: &str) -> bool {
        let now = Instant::now();
        self.entries.lock().take(key).is_some_and(|entry| entry.expires > now)
    }
}

/// `now + ttl`, or as far as the clock goes for a `ttl` too long to add.
fn expires_at(now: Instant, ttl: Duration) -> Instant {
    // A century is "never" for a handle, and it cannot overflow the clock.
    const FAR: Duration = Duration::from_secs(100 * 365 * 24 * 3600);
    now.checked_add(ttl).unwrap_or_else(|| now + FAR)
}

impl Default for MemoryHandleStore {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for MemoryHandleStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemoryHandleStore").field("max_entries", &self.max_entries).field("len", &self.len()).finish()
    }
}

impl HandleStore for MemoryHandleStore {
    fn put<'a>(&'a self, key: &'a str, value: Vec<u8>, ttl: Duration) -> BoxFuture<'a, Result<(), StoreError>> {
        self.put_now(key, value, ttl);
        Box::pin(std::future::ready(Ok(())))
    }

    fn get<'a>(&'a self, key: &'a str, ttl: Duration) -> BoxFuture<'a, Result<Option<Vec<u8>>, StoreError>> {
        Box::pin(std::future::ready(Ok(self.get_now(key, ttl))))
    }

    fn remove<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<bool, StoreError>> {
        Box::pin(std::future::ready(Ok(self.remove_now(key))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::time::advance;

    const TTL: Duration = Duration::from_secs(60);

    #[tokio::test(start_paused = true)]
    async fn values_expire_after_their_ttl_unless_read() {
        let store = MemoryHandleStore::new();
        store.put("a", b"1".to_vec(), TTL).await.unwrap();
        store.put("b", b"2".to_vec(), TTL).await.unwrap();
        advance(Duration::from_secs(59)).await;
        // Reading `a` restarts its lifetime; `b` is left alone.
        assert_eq!(store.get("a", TTL).await.unwrap().as_deref(), Some(&b"1"[..]));
        advance(Duration::from_secs(2)).await;
        assert_eq!(store.get("b", TTL).await.unwrap(), None, "b expired");
        assert_eq!(store.get("a", TTL).await.unwrap().as_deref(), Some(&b"1"[..]), "a slid");
        advance(TTL).await;
        assert_eq!(store.get("a", TTL).await.unwrap(), None);
        assert!(store.is_empty(), "expired entries are dropped when met");
    }

    #[tokio::test(start_paused = true)]
    async fn put_replaces_and_remove_forgets() {
        let store = MemoryHandleStore::new();
        store.put("a", b"1".to_vec(), TTL).await.unwrap();
        store.put("a", b"2".to_vec(), TTL).await.unwrap();
        assert_eq!(store.len(), 1);
        assert_eq!(store.get("a", TTL).await.unwrap().as_deref(), Some(&b"2"[..]));
        assert!(store.remove("a").await.unwrap());
        assert!(!store.remove("a").await.unwrap());
        store.put("b", b"1".to_vec(), TTL).await.unwrap();
        advance(TTL).await;
        assert!(!store.remove("b").await.unwrap(), "an expired value was not there any more");
    }

    #[tokio::test(start_paused = true)]
    async fn when_full_the_least_recently_used_goes() {
        let store = MemoryHandleStore::with_max_entries(2);
        store.put("a", b"1".to_vec(), TTL).await.unwrap();
        store.put("b", b"2".to_vec(), TTL).await.unwrap();
        // `a` used last: `b` is the one to go.
        store.get("a", TTL).await.unwrap();
        store.put("c", b"3".to_vec(), TTL).await.unwrap();
        assert_eq!(store.len(), 2);
        assert_eq!(store.get("b", TTL).await.unwrap(), None);
        assert!(store.get("a", TTL).await.unwrap().is_some());
        assert!(store.get("c", TTL).await.unwrap().is_some());
        // Replacing a key makes no room for anything.
        store.put("c", b"4".to_vec(), TTL).await.unwrap();
        assert!(store.get("a", TTL).await.unwrap().is_some());
    }

    #[tokio::test(start_paused = true)]
    async fn when_full_expired_entries_go_before_used_ones() {
        let store = MemoryHandleStore::with_max_entries(2);
        store.put("old", b"1".to_vec(), TTL).await.unwrap();
        store.put("short", b"2".to_vec(), Duration::from_secs(1)).await.unwrap();
        advance(Duration::from_secs(2)).await;
        // `old` is the least recently used, but `short` has expired: it goes.
        store.put("new", b"3".to_vec(), TTL).await.unwrap();
        assert!(store.get("old", TTL).await.unwrap().is_some());
        assert!(store.get("new", TTL).await.unwrap().is_some());
        assert_eq!(store.len(), 2);
    }

    #[tokio::test(start_paused = true)]
    async fn a_ttl_too_long_for_the_clock_is_forever() {
        let store = MemoryHandleStore::new();
        store.put("a", b"1".to_vec(), Duration::MAX).await.unwrap();
        assert!(store.get("a", Duration::MAX).await.unwrap().is_some());
    }
}
