//! What turns an access token into a [`Principal`], and why it may refuse.

use std::sync::Arc;

use futures::future::BoxFuture;
use mcpwire_protocol::Principal;

/// Validates access tokens. [`JwtVerifier`](super::JwtVerifier) (JWTs against the issuer's
/// keys) and [`IntrospectionVerifier`](super::IntrospectionVerifier) (RFC 7662) ship; any
/// other scheme implements this.
pub trait TokenVerifier: Send + Sync + 'static {
    /// The principal `token` stands for, or why it is refused. Called for every request that
    /// carries a token: cache what is costly.
    fn verify<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Principal, TokenError>>;

    /// Reaches now what verifying will need (the issuer's metadata, its keys), so that a
    /// server can tell at start whether its authorization server answers: `Err`
    /// ([`TokenError::Unavailable`]) if it does not. Nothing else depends on it: a verifier
    /// that could not prepare tries again when tokens come. By default, nothing to do.
    fn prepare(&self) -> BoxFuture<'_, Result<(), TokenError>> {
        Box::pin(async { Ok(()) })
    }
}

impl<T: TokenVerifier + ?Sized> TokenVerifier for Arc<T> {
    fn verify<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Principal, TokenError>> {
        (**self).verify(token)
    }

    fn prepare(&self) -> BoxFuture<'_, Result<(), TokenError>> {
        (**self).prepare()
    }
}

/// Why a token was refused. The client is told `invalid_token` with a short description
/// (never the token, never a key); [`Self::Unavailable`] is the server's trouble, not the
/// token's, and is answered `503`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TokenError {
    /// Not a token of the expected form (not a JWT, a bad header, too long, a forbidden
    /// algorithm such as `none` or HMAC).
    #[error("the access token is malformed: {0}")]
    Malformed(String),
    /// The token's `typ` is not an access token's (`at+jwt`): an ID token, say.
    #[error("the token is not an access token (typ {0:?})")]
    WrongType(Option<String>),
    /// Signed by a key the issuer does not publish (after refetching its keys, as often as
    /// allowed).
    #[error("the access token is signed by an unknown key")]
    UnknownKey,
    /// The signature does not verify.
    #[error("the access token's signature is invalid")]
    BadSignature,
    /// Issued by another issuer than the one trusted.
    #[error("the access token was issued by another issuer")]
    WrongIssuer,
    /// Issued for another resource (its audience does not name this server: RFC 8707).
    #[error("the access token was issued for another resource")]
    WrongAudience,
    /// Expired, or not valid yet.
    #[error("the access token has expired")]
    Expired,
    /// The authorization server says the token is not active (revoked, expired, unknown).
    #[error("the access token is not active")]
    Inactive,
    /// The authorization server (its metadata, its keys, its introspection endpoint) could
    /// not be reached or read, now or a moment ago.
    #[error("the authorization server could not be reached to check the token: {0}")]
    Unavailable(String),
}

impl TokenError {
    /// Whether the refusal is the server's trouble rather than the token's (`503`).
    pub fn is_unavailable(&self) -> bool {
        matches!(self, Self::Unavailable(_))
    }
}
