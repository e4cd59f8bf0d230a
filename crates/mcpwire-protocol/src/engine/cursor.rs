//! Opaque pagination cursors that need no server state.
//!
//! A cursor names an offset into a list and a fingerprint of that list (a hash of its item
//! keys, so a cursor taken before the list changed is refused rather than silently skipping
//! or repeating items), sealed with an HMAC under a per-server key: a client cannot forge or
//! edit one. A bad cursor is a `-32602` Invalid params error.
//!
//! The key comes from a [`KeyRing`]: a cursor names the key that sealed it (4 bytes), so that
//! instances sharing a rotated ring read each other's cursors. A cursor is 36 bytes, 48
//! characters of base64url.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};

use super::key_ring::{KeyId, KeyRing};

type HmacSha256 = Hmac<Sha256>;

const TAG_LEN: usize = 16;
/// The key id, then the offset and the list's fingerprint: what the tag covers.
const ID_LEN: usize = 4;
const BODY_LEN: usize = ID_LEN + 16;

/// Why a cursor was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CursorError {
    /// Not a cursor this server made (bad encoding or a failed integrity check).
    #[error("invalid cursor")]
    Invalid,
    /// A cursor made for an earlier version of the list.
    #[error("stale cursor: the list changed since it was issued; list again from the start")]
    Stale,
}

/// Makes and checks cursors with the keys of a [`KeyRing`]: the current key seals, any key
/// held opens.
#[derive(Clone)]
pub struct CursorCodec {
    ring: KeyRing,
}

impl std::fmt::Debug for CursorCodec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CursorCodec { .. }")
    }
}

/// A fingerprint of a list, from its item keys in order.
pub fn fingerprint<'a>(keys: impl IntoIterator<Item = &'a str>) -> u64 {
    let mut h = Sha256::new();
    for k in keys {
        h.update((k.len() as u64).to_le_bytes());
        h.update(k.as_bytes());
    }
    let d = h.finalize();
    u64::from_le_bytes([d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7]])
}

impl CursorCodec {
    /// A codec with a fresh random key.
    pub fn random() -> Self {
        Self { ring: KeyRing::random() }
    }

    /// A codec with a given key (several server instances sharing cursors): a ring of that
    /// key alone ([`KeyRing::of_key`]).
    pub fn with_key(key: [u8; 32]) -> Self {
        Self { ring: KeyRing::of_key(key) }
    }

    /// A codec with the keys of `ring`, following its changes (rotation).
    pub fn with_ring(ring: KeyRing) -> Self {
        Self { ring }
    }

    /// The ring of keys this codec uses.
    pub fn ring(&self) -> &KeyRing {
        &self.ring
    }

    fn tag(key: &[u8; 32], body: &[u8]) -> [u8; TAG_LEN] {
        // HMAC accepts keys of any length, so this cannot fail.
        let mut mac = <HmacSha256 as Mac>::new_from_slice(key).expect("HMAC takes any key length");
        // v2: the body begins with the key id (a cursor of v1 had none, and is refused).
        mac.update(b"mcp-cursor-v2");
        mac.update(body);
        let full = mac.finalize().into_bytes();
        let mut out = [0u8; TAG_LEN];
        out.copy_from_slice(&full[..TAG_LEN]);
        out
    }

    /// The cursor for "continue at `offset` in the list with this fingerprint".
    pub fn encode(&self, offset: usize, list_fingerprint: u64) -> String {
        let (id, key) = self.ring.current();
        let mut buf = [0u8; BODY_LEN + TAG_LEN];
        buf[..ID_LEN].copy_from_slice(&id.to_be_bytes());
        buf[ID_LEN..ID_LEN + 8].copy_from_slice(&(offset as u64).to_le_bytes());
        buf[ID_LEN + 8..BODY_LEN].copy_from_slice(&list_fingerprint.to_le_bytes());
        let tag = Self::tag(&key, &buf[..BODY_LEN]);
        buf[BODY_LEN..].copy_from_slice(&tag);
        URL_SAFE_NO_PAD.encode(buf)
    }

    /// Checks a cursor against the list's current fingerprint and returns its offset.
    pub fn decode(&self, cursor: &str, list_fingerprint: u64) -> Result<usize, CursorError> {
        let raw = URL_SAFE_NO_PAD.decode(cursor).map_err(|_| CursorError::Invalid)?;
        if raw.len() != BODY_LEN + TAG_LEN {
            return Err(CursorError::Invalid);
        }
        let id: [u8; ID_LEN] = raw[..ID_LEN].try_into().map_err(|_| CursorError::Invalid)?;
        // A key no longer held (rotated out) or never held: as good as forged.
        let key = self.ring.get(KeyId::from_be_bytes(id)).ok_or(CursorError::Invalid)?;
        let expected = Self::tag(&key, &raw[..BODY_LEN]);
        // Constant-time comparison through the hmac crate's verifier would need the full tag;
        // a truncated tag compared with a fold keeps the timing independent of the mismatch.
        let diff = expected.iter().zip(&raw[BODY_LEN..]).fold(0u8, |acc, (a, b)| acc | (a ^ b));
        if diff != 0 {
            return Err(CursorError::Invalid);
        }
        let offset = u64::from_le_bytes(raw[ID_LEN..ID_LEN + 8].try_into().map_err(|_| CursorError::Invalid)?);
        let fp = u64::from_le_bytes(raw[ID_LEN + 8..BODY_LEN].try_into().map_err(|_| CursorError::Invalid)?);
        if fp != list_fingerprint {
            return Err(CursorError::Stale);
        }
        usize::try_from(offset).map_err(|_| CursorError::Invalid)
    }

    /// Pages `items`: returns the page's range and the next cursor, if any.
    pub fn page<'a>(
        &self,
        keys: impl IntoIterator<Item = &'a str>,
        len: usize,
        cursor: Option<&str>,
        page_size: usize,
    ) -> Result<(std::ops::Range<usize>, Option<String>), CursorError> {
        let fp = fingerprint(keys);
        let start = match cursor {
            None => 0,
            Some(c) => self.decode(c, fp)?,
        };
        if start > len {
            return Err(CursorError::Invalid);
        }
        let end = start.saturating_add(page_size.max(1)).min(len);
        let next = (end < len).then(|| self.encode(end, fp));
        Ok((start..end, next))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_through_a_list() {
        let c = CursorCodec::random();
        let keys = ["a", "b", "c", "d", "e"];
        let (r, next) = c.page(keys, 5, None, 2).unwrap();
        assert_eq!(r, 0..2);
        let (r, next) = c.page(keys, 5, next.as_deref(), 2).unwrap();
        assert_eq!(r, 2..4);
        let (r, next) = c.page(keys, 5, next.as_deref(), 2).unwrap();
        assert_eq!(r, 4..5);
        assert!(next.is_none());
    }

    #[test]
    fn refuses_tampered_foreign_and_stale_cursors() {
        let c = CursorCodec::random();
        let fp = fingerprint(["a", "b"]);
        let good = c.encode(1, fp);
        assert_eq!(c.decode(&good, fp), Ok(1));
        let mut bytes = URL_SAFE_NO_PAD.decode(&good).unwrap();
        bytes[0] ^= 1;
        assert_eq!(c.decode(&URL_SAFE_NO_PAD.encode(&bytes), fp), Err(CursorError::Invalid));
        assert_eq!(c.decode("not-a-cursor", fp), Err(CursorError::Invalid));
        assert_eq!(c.decode("", fp), Err(CursorError::Invalid));
        assert_eq!(CursorCodec::random().decode(&good, fp), Err(CursorError::Invalid));
        assert_eq!(c.decode(&good, fingerprint(["a", "b", "c"])), Err(CursorError::Stale));
        assert_eq!(good.len(), 48, "a short cursor: {good}");
    }

    #[test]
    fn a_cursor_opens_while_its_key_is_in_the_ring() {
        let ring = KeyRing::new(1, [1; 32]);
        let c = CursorCodec::with_ring(ring.clone());
        let fp = fingerprint(["a", "b"]);
        let old = c.encode(1, fp);
        // Rotate: key 2 seals, key 1 still opens.
        ring.insert(2, [2; 32]);
        assert!(ring.set_current(2));
        let new = c.encode(1, fp);
        assert_eq!(URL_SAFE_NO_PAD.decode(&new).unwrap()[..4], 2u32.to_be_bytes());
        assert_eq!(c.decode(&old, fp), Ok(1));
        assert_eq!(c.decode(&new, fp), Ok(1));
        // Key 1 dropped: what it sealed is refused.
        ring.retain(|id| id != 1);
        assert_eq!(c.decode(&old, fp), Err(CursorError::Invalid));
        assert_eq!(c.decode(&new, fp), Ok(1));
        // The key id is sealed: relabelled to another key (even one holding the very key that
        // sealed it) or to an unknown one, it is refused.
        ring.insert(3, [2; 32]);
        for id in [3u32, 9] {
            let mut bytes = URL_SAFE_NO_PAD.decode(&new).unwrap();
            bytes[..4].copy_from_slice(&id.to_be_bytes());
            assert_eq!(c.decode(&URL_SAFE_NO_PAD.encode(&bytes), fp), Err(CursorError::Invalid), "id {id}");
        }
        // with_key: instances given one key agree on its id.
        let made = CursorCodec::with_key([5; 32]).encode(3, fp);
        assert_eq!(CursorCodec::with_key([5; 32]).decode(&made, fp), Ok(3));
    }
}
