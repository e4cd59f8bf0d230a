//! JWT client assertions (RFC 7523 §2.2, `private_key_jwt`).

use std::str::FromStr as _;
use std::time::{SystemTime, UNIX_EPOCH};

use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde::Serialize;

use crate::AuthError;

/// The `client_assertion_type` of a JWT client assertion.
pub const JWT_BEARER_ASSERTION_TYPE: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

#[derive(Serialize)]
struct Claims<'a> {
    iss: &'a str,
    sub: &'a str,
    aud: &'a str,
    iat: u64,
    exp: u64,
    jti: String,
}

/// Signs a client assertion: `iss` = `sub` = `client_id`, `aud` = `audience` (the
/// authorization server's issuer), valid for five minutes, with a random `jti`.
/// `algorithm` is a JWS name (`ES256`, `ES384`, `RS256`, `PS256`, `EdDSA`, ...) and
/// `private_key_pem` a PKCS#8 (or, for RSA, PKCS#1) PEM key of that kind.
pub fn client_assertion(
    client_id: &str,
    audience: &str,
    private_key_pem: &str,
    algorithm: &str,
) -> Result<String, AuthError> {
    let alg = Algorithm::from_str(algorithm).map_err(|_| AuthError::Jwt(format!("unknown algorithm {algorithm:?}")))?;
    let pem = private_key_pem.as_bytes();
    let key = match alg {
        Algorithm::ES256 | Algorithm::ES384 => EncodingKey::from_ec_pem(pem),
        Algorithm::RS256
        | Algorithm::RS384
        | Algorithm::RS512
        | Algorithm::PS256
        | Algorithm::PS384
        | Algorithm::PS512 => EncodingKey::from_rsa_pem(pem),
        Algorithm::EdDSA => EncodingKey::from_ed_pem(pem),
        Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512 => {
            return Err(AuthError::Jwt("HMAC algorithms need a client secret, not a private key".into()))
        }
    }
    .map_err(|e| AuthError::Jwt(format!("private key: {e}")))?;
    let now = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or_default();
    let claims = Claims {
        iss: client_id,
        sub: client_id,
        aud: audience,
        iat: now,
        exp: now + 300,
        jti: crate::pkce::random_token(16),
    };
    jsonwebtoken::encode(&Header::new(alg), &claims, &key).map_err(|e| AuthError::Jwt(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;
    use base64::Engine as _;

    // A throwaway P-256 key made for this test (PKCS#8).
    const KEY: &str = "-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgxb/mWc8BIpiZ5nTH
KIPvFKCY5H/vlLNdmE6CVngqq2uhRANCAATtC9hAZnul4CipRbTgGG+v8btQnWBO
ZmBuf7TaSIxiuaxvjmejcL42w1puie/2J80lsNqF61MYic58YbWJ5vOa
-----END PRIVATE KEY-----
";

    #[test]
    fn es256_assertion_has_the_claims() {
        let jwt = client_assertion("client-1", "https://as.example", KEY, "ES256").unwrap();
        let parts: Vec<&str> = jwt.split('.').collect();
        assert_eq!(parts.len(), 3);
        let header: serde_json::Value = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts[0]).unwrap()).unwrap();
        assert_eq!(header["alg"], "ES256");
        let claims: serde_json::Value = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts[1]).unwrap()).unwrap();
        assert_eq!(claims["iss"], "client-1");
        assert_eq!(claims["sub"], "client-1");
        assert_eq!(claims["aud"], "https://as.example");
        assert!(claims["exp"].as_u64().unwrap() > claims["iat"].as_u64().unwrap());
    }

    #[test]
    fn bad_inputs_are_errors() {
        assert!(client_assertion("c", "a", KEY, "XX999").is_err());
        assert!(client_assertion("c", "a", "not a key", "ES256").is_err());
        assert!(client_assertion("c", "a", KEY, "HS256").is_err());
    }
}
