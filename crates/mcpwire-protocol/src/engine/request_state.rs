//! Sealed `requestState` for multi-round-trip requests (2026-07-28 `input_required`).
//!
//! The server cannot wait for a modern client's answers: it returns `input_required`, and
//! the client retries the whole request later, possibly on another server instance. What
//! the server must remember between rounds travels in `requestState`, which the client
//! echoes verbatim and could alter. So it is sealed: an HMAC-SHA256 over its contents
//! binds it to the original request (a hash of method and params without the per-round
//! members), an optional client identity, and an expiry. Its contents are signed, not
//! encrypted: the client can read them (they are the client's own answers, and state the
//! handler chose to carry).
//!
//! The key comes from a [`KeyRing`]: a sealed state names the key that sealed it, so that
//! instances sharing a rotated ring open each other's states (see [`super::key_ring`]).

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::key_ring::{KeyId, KeyRing};

type HmacSha256 = Hmac<Sha256>;

/// What a sealed request state carries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StateContents {
    /// Hex SHA-256 of the canonical request (see [`request_fingerprint`]).
    #[serde(rename = "r")]
    pub request: String,
    /// The client identity the state is bound to, if any (an OAuth subject, say).
    #[serde(rename = "c", default, skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    /// Expiry, in milliseconds since the Unix epoch.
    #[serde(rename = "e")]
    pub expires_at_ms: u64,
    /// Input answers gathered in earlier rounds, by key.
    #[serde(rename = "a", default, skip_serializing_if = "Map::is_empty")]
    pub answers: Map<String, Value>,
    /// State the handler chose to carry to the next round.
    #[serde(rename = "s", default, skip_serializing_if = "Option::is_none")]
    pub state: Option<Value>,
}

/// Why a request state was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StateError {
    /// Not a state this server sealed, or altered since.
    #[error("requestState is invalid or was tampered with")]
    Invalid,
    /// Sealed for another request or another client.
    #[error("requestState belongs to a different request")]
    Mismatch,
    /// Too old.
    #[error("requestState has expired; start the request again without it")]
    Expired,
}

/// Seals and opens request states with the keys of a [`KeyRing`]: the current key seals, any
/// key held opens.
#[derive(Clone)]
pub struct StateSealer {
    ring: KeyRing,
}

impl std::fmt::Debug for StateSealer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StateSealer { .. }")
    }
}

/// Canonical JSON: object keys sorted at every depth, so a client that reorders members
/// still presents the same request.
fn canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                canonical(&map[k], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical(v, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// The fingerprint of a request: its method and params, leaving out what changes between
/// rounds (`_meta`, `inputResponses`, `requestState`).
pub fn request_fingerprint(method: &str, params: Option<&Value>) -> String {
    let mut stripped = params.cloned().unwrap_or(Value::Null);
    if let Value::Object(map) = &mut stripped {
        map.remove("_meta");
        map.remove("inputResponses");
        map.remove("requestState");
    }
    let mut text = String::new();
    canonical(&stripped, &mut text);
    let mut h = Sha256::new();
    h.update(method.as_bytes());
    h.update([0]);
    h.update(text.as_bytes());
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

impl StateSealer {
    /// A sealer with a fresh random key (states do not survive a restart).
    pub fn random() -> Self {
        Self { ring: KeyRing::random() }
    }

    /// A sealer with a given key (share it between instances behind one address): a ring of
    /// that key alone ([`KeyRing::of_key`]).
    pub fn with_key(key: [u8; 32]) -> Self {
        Self { ring: KeyRing::of_key(key) }
    }

    /// A sealer with the keys of `ring`, following its changes (rotation).
    pub fn with_ring(ring: KeyRing) -> Self {
        Self { ring }
    }

    /// The ring of keys this sealer uses.
    pub fn ring(&self) -> &KeyRing {
        &self.ring
    }

    fn mac(key: &[u8; 32], id: KeyId, body: &[u8]) -> HmacSha256 {
        // HMAC accepts keys of any length, so this cannot fail.
        let mut mac = <HmacSha256 as Mac>::new_from_slice(key).expect("HMAC takes any key length");
        // v2: the key id is sealed too (a state of v1 had none, and is refused).
        mac.update(b"mcp-request-state-v2");
        mac.update(&id.to_be_bytes());
        mac.update(body);
        mac
    }

    /// Seals contents into an opaque string: `KEYID.BODY.TAG`, each base64url.
    pub fn seal(&self, contents: &StateContents) -> String {
        let body = serde_json::to_vec(contents).unwrap_or_default();
        let (id, key) = self.ring.current();
        let tag = Self::mac(&key, id, &body).finalize().into_bytes();
        format!(
            "{}.{}.{}",
            URL_SAFE_NO_PAD.encode(id.to_be_bytes()),
            URL_SAFE_NO_PAD.encode(&body),
            URL_SAFE_NO_PAD.encode(tag)
        )
    }

    /// Opens a sealed state, checking integrity, the request it belongs to, the client
    /// identity and the expiry.
    pub fn open(
        &self,
        sealed: &str,
        request: &str,
        client: Option<&str>,
        now_ms: u64,
    ) -> Result<StateContents, StateError> {
        let mut parts = sealed.split('.');
        let (Some(id), Some(body), Some(tag), None) = (parts.next(), parts.next(), parts.next(), parts.next()) else {
            return Err(StateError::Invalid);
        };
        let id: [u8; 4] =
            URL_SAFE_NO_PAD.decode(id).ok().and_then(|id| id.try_into().ok()).ok_or(StateError::Invalid)?;
        let id = KeyId::from_be_bytes(id);
        // A key no longer held (rotated out) or never held: as good as forged.
        let key = self.ring.get(id).ok_or(StateError::Invalid)?;
        let body = URL_SAFE_NO_PAD.decode(body).map_err(|_| StateError::Invalid)?;
        let tag = URL_SAFE_NO_PAD.decode(tag).map_err(|_| StateError::Invalid)?;
        Self::mac(&key, id, &body).verify_slice(&tag).map_err(|_| StateError::Invalid)?;
        let contents: StateContents = serde_json::from_slice(&body).map_err(|_| StateError::Invalid)?;
        if contents.request != request || contents.client.as_deref() != client {
            return Err(StateError::Mismatch);
        }
        if now_ms > contents.expires_at_ms {
            return Err(StateError::Expired);
        }
        Ok(contents)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn contents(request: &str) -> StateContents {
        StateContents {
            request: request.into(),
            client: None,
            expires_at_ms: 1_000,
            answers: Map::from_iter([("k".into(), json!({"action": "accept"}))]),
            state: Some(json!("carried")),
        }
    }

    #[test]
    fn round_trip_and_refusals() {
        let sealer = StateSealer::random();
        let fp = request_fingerprint("tools/call", Some(&json!({"name": "t", "arguments": {"b": 1, "a": 2}})));
        let reordered = request_fingerprint(
            "tools/call",
            Some(&json!({"arguments": {"a": 2, "b": 1}, "name": "t", "_meta": {"x": 1}, "requestState": "s"})),
        );
        assert_eq!(fp, reordered, "member order and per-round members do not change the fingerprint");
        let sealed = sealer.seal(&contents(&fp));
        assert_eq!(sealer.open(&sealed, &fp, None, 500).unwrap(), contents(&fp));
        assert_eq!(sealer.open(&format!("{sealed}-TAMPERED"), &fp, None, 500), Err(StateError::Invalid));
        assert_eq!(sealer.open("garbage", &fp, None, 500), Err(StateError::Invalid));
        assert_eq!(StateSealer::random().open(&sealed, &fp, None, 500), Err(StateError::Invalid));
        let other = request_fingerprint("tools/call", Some(&json!({"name": "other"})));
        assert_eq!(sealer.open(&sealed, &other, None, 500), Err(StateError::Mismatch));
        assert_eq!(sealer.open(&sealed, &fp, Some("alice"), 500), Err(StateError::Mismatch));
        assert_eq!(sealer.open(&sealed, &fp, None, 1_001), Err(StateError::Expired));
    }

    #[test]
    fn a_state_opens_while_its_key_is_in_the_ring() {
        let ring = KeyRing::new(1, [1; 32]);
        let sealer = StateSealer::with_ring(ring.clone());
        let old = sealer.seal(&contents("r"));
        // Rotate: key 2 seals, key 1 still opens.
        ring.insert(2, [2; 32]);
        assert!(ring.set_current(2));
        let new = sealer.seal(&contents("r"));
        assert!(new.starts_with(&URL_SAFE_NO_PAD.encode(2u32.to_be_bytes())), "{new}");
        assert_eq!(sealer.open(&old, "r", None, 0), Ok(contents("r")));
        assert_eq!(sealer.open(&new, "r", None, 0), Ok(contents("r")));
        // Another instance holding the same keys opens both.
        let other = StateSealer::with_ring(KeyRing::new(2, [2; 32]));
        other.ring().insert(1, [1; 32]);
        assert_eq!(other.open(&old, "r", None, 0), Ok(contents("r")));
        // Key 1 dropped: what it sealed is refused.
        assert!(ring.remove(1));
        assert_eq!(sealer.open(&old, "r", None, 0), Err(StateError::Invalid));
        assert_eq!(sealer.open(&new, "r", None, 0), Ok(contents("r")));
        // The key id is sealed too: pointing a state at another key is refused, even one
        // holding the very key that sealed it.
        ring.insert(3, [2; 32]);
        let (_, rest) = new.split_once('.').unwrap();
        let relabelled = format!("{}.{rest}", URL_SAFE_NO_PAD.encode(3u32.to_be_bytes()));
        assert_eq!(sealer.open(&relabelled, "r", None, 0), Err(StateError::Invalid));
        let unknown = format!("{}.{rest}", URL_SAFE_NO_PAD.encode(9u32.to_be_bytes()));
        assert_eq!(sealer.open(&unknown, "r", None, 0), Err(StateError::Invalid));
        assert_eq!(sealer.open(&format!("AAA.{rest}"), "r", None, 0), Err(StateError::Invalid));
        assert_eq!(sealer.open(rest, "r", None, 0), Err(StateError::Invalid), "no key id");
        assert_eq!(sealer.open(&format!("{new}.x"), "r", None, 0), Err(StateError::Invalid));
        // with_key: instances given one key agree on its id.
        let sealed = StateSealer::with_key([5; 32]).seal(&contents("r"));
        assert_eq!(StateSealer::with_key([5; 32]).open(&sealed, "r", None, 0), Ok(contents("r")));
    }
}
