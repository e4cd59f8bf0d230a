//! Tokens a verifier has judged lately, kept by the SHA-256 of the token (never the token):
//! a client's burst of requests costs one signature check or one introspection.

use std::collections::HashMap;
use std::sync::Arc;

use mcpwire_protocol::Principal;
use parking_lot::Mutex;
use sha2::{Digest, Sha256};

/// How many tokens are kept; past that the store starts again empty.
const ENTRIES: usize = 10_000;

/// A token's key in the store.
pub(crate) type Key = [u8; 32];

/// The principals of tokens verified lately, each until a time (clock seconds).
#[derive(Default)]
pub(crate) struct Remembered {
    entries: Mutex<HashMap<Key, (Arc<Principal>, u64)>>,
}

impl Remembered {
    /// The key of `token`.
    pub(crate) fn key(token: &str) -> Key {
        Sha256::digest(token.as_bytes()).into()
    }

    /// The principal kept for `key`, if it still stands at `now`.
    pub(crate) fn get(&self, key: &Key, now: u64) -> Option<Principal> {
        let entries = self.entries.lock();
        let (principal, until) = entries.get(key)?;
        (now < *until).then(|| Principal::clone(principal))
    }

    /// Keeps `principal` for `key` until `until` (nothing when that is not after `now`).
    pub(crate) fn put(&self, key: Key, principal: &Principal, until: u64, now: u64) {
        if until <= now {
            return;
        }
        let mut entries = self.entries.lock();
        if entries.len() >= ENTRIES {
            entries.retain(|_, (_, until)| *until > now);
            if entries.len() >= ENTRIES {
                entries.clear();
            }
        }
        entries.insert(key, (Arc::new(principal.clone()), until));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_principal_stands_until_its_time() {
        let store = Remembered::default();
        let key = Remembered::key("token");
        let p = Principal { subject: Some("alice".into()), ..Principal::default() };
        store.put(key, &p, 100, 50);
        assert_eq!(store.get(&key, 99).and_then(|p| p.subject), Some("alice".into()));
        assert!(store.get(&key, 100).is_none());
        assert!(store.get(&Remembered::key("other"), 60).is_none());
        store.put(Remembered::key("late"), &p, 10, 20);
        assert!(store.get(&Remembered::key("late"), 5).is_none(), "nothing kept past its time");
    }
}
