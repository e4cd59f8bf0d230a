//! Opaque pagination cursors that need no server state.
//!
//! A cursor names an offset into a list and a fingerprint of that list (a hash of its item
//! keys, so a cursor taken before the list changed is refused rather than silently skipping
//! or repeating items), sealed with an HMAC under a per-server key: a client cannot forge or
//! edit one. A bad cursor is a `-32602` Invalid params error.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};

type HmacSha256 = Hmac<Sha256>;

const TAG_LEN: usize = 16;
const BODY_LEN: usize = 16;

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

/// Makes and checks cursors with one secret key.
#[derive(Clone)]
pub struct CursorCodec {
    key: [u8; 32],
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
        Self { key: rand::random() }
    }

    /// A codec with a given key (several server instances sharing cursors).
    pub fn with_key(key: [u8; 32]) -> Self {
        Self { key }
    }

    fn tag(&self, body: &[u8]) -> [u8; TAG_LEN] {
        // HMAC accepts keys of any length, so this cannot fail.
        let mut mac = <HmacSha256 as Mac>::new_from_slice(&self.key).expect("HMAC takes any key length");
        mac.update(b"mcp-cursor-v1");
        mac.update(body);
        let full = mac.finalize().into_bytes();
        let mut out = [0u8; TAG_LEN];
        out.copy_from_slice(&full[..TAG_LEN]);
        out
    }

    /// The cursor for "continue at `offset` in the list with this fingerprint".
    pub fn encode(&self, offset: usize, list_fingerprint: u64) -> String {
        let mut buf = [0u8; BODY_LEN + TAG_LEN];
        buf[..8].copy_from_slice(&(offset as u64).to_le_bytes());
        buf[8..16].copy_from_slice(&list_fingerprint.to_le_bytes());
        let tag = self.tag(&buf[..BODY_LEN]);
        buf[BODY_LEN..].copy_from_slice(&tag);
        URL_SAFE_NO_PAD.encode(buf)
    }

    /// Checks a cursor against the list's current fingerprint and returns its offset.
    pub fn decode(&self, cursor: &str, list_fingerprint: u64) -> Result<usize, CursorError> {
        let raw = URL_SAFE_NO_PAD.decode(cursor).map_err(|_| CursorError::Invalid)?;
        if raw.len() != BODY_LEN + TAG_LEN {
            return Err(CursorError::Invalid);
        }
        let expected = self.tag(&raw[..BODY_LEN]);
        // Constant-time comparison through the hmac crate's verifier would need the full tag;
        // a truncated tag compared with a fold keeps the timing independent of the mismatch.
        let diff = expected.iter().zip(&raw[BODY_LEN..]).fold(0u8, |acc, (a, b)| acc | (a ^ b));
        if diff != 0 {
            return Err(CursorError::Invalid);
        }
        let offset = u64::from_le_bytes(raw[..8].try_into().map_err(|_| CursorError::Invalid)?);
        let fp = u64::from_le_bytes(raw[8..16].try_into().map_err(|_| CursorError::Invalid)?);
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
    }
}
