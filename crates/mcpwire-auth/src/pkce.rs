//! PKCE (RFC 7636) with the S256 method, and the random values of an authorization request.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use rand::RngCore as _;
use sha2::{Digest as _, Sha256};

/// The only code challenge method this client uses (MCP requires S256).
pub const S256: &str = "S256";

/// A PKCE verifier and its S256 challenge.
#[derive(Clone, PartialEq, Eq)]
pub struct Pkce {
    /// The secret sent with the token request (`code_verifier`).
    pub verifier: String,
    /// `BASE64URL(SHA256(verifier))`, sent with the authorization request (`code_challenge`).
    pub challenge: String,
}

impl std::fmt::Debug for Pkce {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pkce").field("verifier", &"<redacted>").field("challenge", &self.challenge).finish()
    }
}

impl Pkce {
    /// A new verifier of 32 random bytes (43 characters) and its challenge.
    pub fn generate() -> Self {
        let verifier = random_token(32);
        let challenge = s256_challenge(&verifier);
        Self { verifier, challenge }
    }
}

/// The S256 code challenge of `verifier` (RFC 7636 §4.2).
pub fn s256_challenge(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

/// `bytes` bytes from the OS-seeded CSPRNG, base64url-encoded without padding (for
/// `state`, PKCE verifiers and JWT ids).
pub fn random_token(bytes: usize) -> String {
    let mut buf = vec![0u8; bytes];
    rand::thread_rng().fill_bytes(&mut buf);
    URL_SAFE_NO_PAD.encode(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc7636_appendix_b() {
        assert_eq!(
            s256_challenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
    }

    #[test]
    fn generated_verifier_is_valid() {
        let p = Pkce::generate();
        assert_eq!(p.verifier.len(), 43);
        assert!(p.verifier.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'));
        assert_eq!(p.challenge, s256_challenge(&p.verifier));
        assert_ne!(Pkce::generate().verifier, p.verifier);
    }
}
