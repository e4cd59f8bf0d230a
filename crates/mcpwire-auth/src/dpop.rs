//! DPoP (RFC 9449): proof-of-possession of a client key for sender-constrained tokens.
//!
//! Proofs are compact JWS objects signed here with ring directly rather than through
//! `jsonwebtoken`: the key is generated on the spot and its public part exported as a JWK,
//! which that crate cannot do, and ring (already used by it) does both in a few lines.

use std::time::{SystemTime, UNIX_EPOCH};

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use ring::rand::SystemRandom;
use ring::signature::{EcdsaKeyPair, KeyPair as _, ECDSA_P256_SHA256_FIXED_SIGNING};
use serde_json::{json, Value};
use sha2::{Digest as _, Sha256};

use crate::AuthError;

/// The JWS algorithm of the proofs made here.
pub const DPOP_ALGORITHM: &str = "ES256";

/// An ephemeral P-256 key that signs DPoP proofs.
pub struct DpopKey {
    pair: EcdsaKeyPair,
    jwk: Value,
    rng: SystemRandom,
}

impl std::fmt::Debug for DpopKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DpopKey").field("jwk", &self.jwk).finish_non_exhaustive()
    }
}

impl DpopKey {
    /// A new random key.
    pub fn generate() -> Result<Self, AuthError> {
        let rng = SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng)
            .map_err(|_| AuthError::Jwt("cannot generate a DPoP key".into()))?;
        let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &rng)
            .map_err(|e| AuthError::Jwt(format!("DPoP key: {e}")))?;
        // An uncompressed point: 0x04 || x || y.
        let point = pair.public_key().as_ref();
        let (x, y) = point[1..].split_at(32);
        let jwk = json!({"kty": "EC", "crv": "P-256", "x": URL_SAFE_NO_PAD.encode(x), "y": URL_SAFE_NO_PAD.encode(y)});
        Ok(Self { pair, jwk, rng })
    }

    /// The public key as a JWK.
    pub fn jwk(&self) -> &Value {
        &self.jwk
    }

    /// A proof for one request: `htm` = `method`, `htu` = `url` without query and
    /// fragment, a fresh `jti`, `iat` = now, and when given `ath` (the hash of the access
    /// token presented with it) and the server's `nonce`.
    pub fn proof(
        &self,
        method: &str,
        url: &str,
        access_token: Option<&str>,
        nonce: Option<&str>,
    ) -> Result<String, AuthError> {
        let header = json!({"typ": "dpop+jwt", "alg": DPOP_ALGORITHM, "jwk": self.jwk});
        let iat = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or_default();
        let mut claims =
            json!({"jti": crate::pkce::random_token(16), "htm": method, "htu": target_uri(url), "iat": iat});
        if let Some(token) = access_token {
            claims["ath"] = json!(URL_SAFE_NO_PAD.encode(Sha256::digest(token.as_bytes())));
        }
        if let Some(nonce) = nonce {
            claims["nonce"] = json!(nonce);
        }
        let input =
            format!("{}.{}", URL_SAFE_NO_PAD.encode(header.to_string()), URL_SAFE_NO_PAD.encode(claims.to_string()));
        let signature = self
            .pair
            .sign(&self.rng, input.as_bytes())
            .map_err(|_| AuthError::Jwt("cannot sign a DPoP proof".into()))?;
        Ok(format!("{input}.{}", URL_SAFE_NO_PAD.encode(signature.as_ref())))
    }
}

/// The `htu` of a request URL: without its query and fragment (RFC 9449 §4.2).
pub fn target_uri(url: &str) -> &str {
    url.split(['?', '#']).next().unwrap_or(url)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ring::signature::{UnparsedPublicKey, ECDSA_P256_SHA256_FIXED};

    fn part(jwt: &str, i: usize) -> Value {
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(jwt.split('.').nth(i).unwrap()).unwrap()).unwrap()
    }

    #[test]
    fn proof_is_signed_and_has_the_claims() {
        let key = DpopKey::generate().unwrap();
        let proof = key.proof("POST", "https://rs.example/mcp?x=1#f", Some("tok"), Some("n1")).unwrap();
        let header = part(&proof, 0);
        assert_eq!(header["typ"], "dpop+jwt");
        assert_eq!(header["alg"], "ES256");
        assert!(header["jwk"].get("d").is_none());
        let claims = part(&proof, 1);
        assert_eq!(claims["htm"], "POST");
        assert_eq!(claims["htu"], "https://rs.example/mcp");
        assert_eq!(claims["nonce"], "n1");
        assert_eq!(claims["ath"], URL_SAFE_NO_PAD.encode(Sha256::digest(b"tok")));
        let (input, sig) = proof.rsplit_once('.').unwrap();
        let public = UnparsedPublicKey::new(&ECDSA_P256_SHA256_FIXED, key.pair.public_key().as_ref().to_vec());
        public.verify(input.as_bytes(), &URL_SAFE_NO_PAD.decode(sig).unwrap()).unwrap();
        let other = key.proof("POST", "https://rs.example/mcp", None, None).unwrap();
        assert_ne!(part(&other, 1)["jti"], claims["jti"]);
        assert!(part(&other, 1).get("ath").is_none());
    }
}
