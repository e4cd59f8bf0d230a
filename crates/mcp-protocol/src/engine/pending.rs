//! Requests we sent and are waiting on: id allocation, response correlation, deadlines.
//!
//! Generic over what waits (a channel sender in an async runtime, anything in a test).
//! Time is an argument, so the rules are tested without sleeping.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use crate::jsonrpc::RequestId;

struct Entry<W> {
    waiter: W,
    deadline: Option<Instant>,
    method: String,
}

/// The table of outstanding outgoing requests.
pub struct PendingRequests<W> {
    next_id: i64,
    entries: HashMap<RequestId, Entry<W>>,
}

impl<W> Default for PendingRequests<W> {
    fn default() -> Self {
        Self { next_id: 0, entries: HashMap::new() }
    }
}

impl<W> PendingRequests<W> {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// Allocates an id and registers its waiter, with a deadline `timeout` after `now`.
    pub fn register(&mut self, method: &str, waiter: W, now: Instant, timeout: Option<Duration>) -> RequestId {
        let id = RequestId::Number(self.next_id);
        self.next_id += 1;
        let deadline = timeout.and_then(|t| now.checked_add(t));
        self.entries.insert(id.clone(), Entry { waiter, deadline, method: method.to_owned() });
        id
    }

    /// Takes the waiter for a response's id. `None` means the id is unknown, or the request
    /// already completed, timed out or was cancelled: the response is to be ignored.
    pub fn complete(&mut self, id: &RequestId) -> Option<W> {
        self.entries.remove(id).map(|e| e.waiter)
    }

    /// Forgets a request (cancelled by us); a late response will then be ignored.
    pub fn cancel(&mut self, id: &RequestId) -> Option<W> {
        self.complete(id)
    }

    /// Removes and returns every request whose deadline has passed at `now`.
    pub fn expire(&mut self, now: Instant) -> Vec<(RequestId, String, W)> {
        let due: Vec<RequestId> = self
            .entries
            .iter()
            .filter(|(_, e)| e.deadline.is_some_and(|d| d <= now))
            .map(|(id, _)| id.clone())
            .collect();
        due.into_iter().filter_map(|id| self.entries.remove(&id).map(|e| (id, e.method, e.waiter))).collect()
    }

    /// The earliest deadline, to know when to call [`Self::expire`] next.
    pub fn next_deadline(&self) -> Option<Instant> {
        self.entries.values().filter_map(|e| e.deadline).min()
    }

    /// Removes every entry (the connection closed).
    pub fn drain(&mut self) -> Vec<(RequestId, W)> {
        self.entries.drain().map(|(id, e)| (id, e.waiter)).collect()
    }

    /// How many requests are outstanding.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no request is outstanding.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn correlates_and_ignores_late_responses() {
        let mut p = PendingRequests::new();
        let now = Instant::now();
        let a = p.register("ping", "a", now, None);
        let b = p.register("ping", "b", now, Some(Duration::from_secs(1)));
        assert_ne!(a, b);
        assert_eq!(p.complete(&a), Some("a"));
        assert_eq!(p.complete(&a), None, "a second response is ignored");
        assert_eq!(p.next_deadline(), Some(now + Duration::from_secs(1)));
        assert!(p.expire(now).is_empty());
        let expired = p.expire(now + Duration::from_secs(2));
        assert_eq!(expired.len(), 1);
        assert_eq!(p.complete(&b), None, "a response after the timeout is ignored");
        assert!(p.is_empty());
    }
}
