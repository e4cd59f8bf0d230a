//! A ring of secret keys for sealing (`requestState`, pagination cursors), rotated with
//! overlap.
//!
//! Several instances of a server behind one address must open what any of them sealed, and a
//! key should not live forever. So a sealed value names the key that sealed it (a short
//! [`KeyId`]), and each instance holds a ring of keys: the current one seals, every one held
//! opens. Rotating is inserting the next key (before any instance seals with it, so that the
//! others already hold it), making it current, and later dropping the old one: what the old
//! key sealed opens until then, and is refused after.
//!
//! A ring is shared: its clones are the same ring, so whoever rotates it (a background task
//! reading keys from a shared store, say) changes what every sealer made with it uses.

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

use sha2::{Digest, Sha256};

/// The short name of a key in a ring, carried by every value it sealed.
pub type KeyId = u32;

/// A set of 32-byte keys, each under its [`KeyId`], one of them current (the one that seals).
/// Never empty: the current key cannot be removed. Cheap to clone; clones share the keys.
#[derive(Clone)]
pub struct KeyRing {
    inner: Arc<RwLock<Keys>>,
}

struct Keys {
    current: KeyId,
    /// The current key, kept apart as well, so that sealing never looks it up.
    current_key: [u8; 32],
    /// Every key held, the current one included.
    keys: BTreeMap<KeyId, [u8; 32]>,
}

impl std::fmt::Debug for KeyRing {
    // The keys are secrets: only their ids are shown.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let keys = self.read();
        f.debug_struct("KeyRing").field("current", &keys.current).field("ids", &keys.keys.keys()).finish()
    }
}

impl KeyRing {
    /// A ring of one key, `key` under `id`, current.
    pub fn new(id: KeyId, key: [u8; 32]) -> Self {
        Self { inner: Arc::new(RwLock::new(Keys { current: id, current_key: key, keys: BTreeMap::from([(id, key)]) })) }
    }

    /// A ring of one key under the id derived from it ([`Self::id_of`]): instances given the
    /// same key agree on its id.
    pub fn of_key(key: [u8; 32]) -> Self {
        Self::new(Self::id_of(&key), key)
    }

    /// A ring of one fresh random key (what it seals opens only in this process).
    pub fn random() -> Self {
        Self::of_key(rand::random())
    }

    /// An id for a key derived from a secret (the first 4 bytes of a SHA-256 of it), so that
    /// instances given the same secret name its key alike without agreeing on anything else.
    /// The hash is one-way: the id tells nothing of the secret.
    pub fn id_of(secret: &[u8]) -> KeyId {
        let digest = Sha256::new().chain_update(b"mcp key id\0").chain_update(secret).finalize();
        u32::from_be_bytes([digest[0], digest[1], digest[2], digest[3]])
    }

    // A panic while the lock is held cannot leave the keys half changed (every change is one
    // assignment or map operation), so a poisoned lock is taken as it is.
    fn read(&self) -> RwLockReadGuard<'_, Keys> {
        self.inner.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> RwLockWriteGuard<'_, Keys> {
        self.inner.write().unwrap_or_else(|e| e.into_inner())
    }

    /// Adds `key` under `id` (replacing the key held under that id, if any). It opens what it
    /// sealed from now on; it seals once made current.
    pub fn insert(&self, id: KeyId, key: [u8; 32]) {
        let mut keys = self.write();
        if keys.current == id {
            keys.current_key = key;
        }
        keys.keys.insert(id, key);
    }

    /// Makes the key under `id` the one that seals; `false` (and nothing changes) if the ring
    /// holds no such key.
    pub fn set_current(&self, id: KeyId) -> bool {
        let mut keys = self.write();
        let Some(key) = keys.keys.get(&id).copied() else { return false };
        keys.current = id;
        keys.current_key = key;
        true
    }

    /// Drops the key under `id`; `false` if it was not held or is the current one (which
    /// stays: a ring always has a key to seal with).
    pub fn remove(&self, id: KeyId) -> bool {
        let mut keys = self.write();
        if keys.current == id {
            return false;
        }
        keys.keys.remove(&id).is_some()
    }

    /// Keeps only the keys whose id `keep` accepts, and the current one: what the others
    /// sealed is refused from now on.
    pub fn retain(&self, mut keep: impl FnMut(KeyId) -> bool) {
        let mut keys = self.write();
        let current = keys.current;
        keys.keys.retain(|id, _| *id == current || keep(*id));
    }

    /// The current key and its id: the one that seals.
    pub fn current(&self) -> (KeyId, [u8; 32]) {
        let keys = self.read();
        (keys.current, keys.current_key)
    }

    /// The id of the current key.
    pub fn current_id(&self) -> KeyId {
        self.read().current
    }

    /// The key held under `id`, if any.
    pub fn get(&self, id: KeyId) -> Option<[u8; 32]> {
        self.read().keys.get(&id).copied()
    }

    /// The ids of the keys held, in increasing order.
    pub fn ids(&self) -> Vec<KeyId> {
        self.read().keys.keys().copied().collect()
    }

    /// Whether the two are the same ring (clones of one another), not merely equal keys.
    pub fn same_ring(&self, other: &KeyRing) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ring_rotates_and_never_loses_its_current_key() {
        let ring = KeyRing::new(1, [1; 32]);
        let shared = ring.clone();
        assert_eq!(ring.current(), (1, [1; 32]));
        assert!(!ring.set_current(2), "no key 2 yet");
        ring.insert(2, [2; 32]);
        assert!(ring.set_current(2));
        assert_eq!(shared.current(), (2, [2; 32]), "clones see the change");
        assert_eq!(shared.get(1), Some([1; 32]), "the old key is kept until dropped");
        assert!(!ring.remove(2), "the current key stays");
        ring.retain(|_| false);
        assert_eq!(shared.ids(), vec![2], "retain keeps the current key only");
        assert!(shared.same_ring(&ring) && !KeyRing::random().same_ring(&ring));
        assert_eq!(KeyRing::id_of(b"secret"), KeyRing::id_of(b"secret"));
        assert_ne!(KeyRing::id_of(b"secret"), KeyRing::id_of(b"another"));
        assert!(!format!("{ring:?}").contains("2, 2"), "the keys are not shown: {ring:?}");
    }
}
