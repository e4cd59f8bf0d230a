//! The error type of the OAuth client.

/// Why authorization could not be obtained.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AuthError {
    /// A request to a metadata, registration, authorization or token endpoint failed.
    #[error("HTTP request to {url} failed: {reason}")]
    Http {
        /// The URL asked.
        url: String,
        /// What went wrong.
        reason: String,
    },
    /// A URL (server, issuer, endpoint, redirect) is not usable.
    #[error("invalid URL {url:?}: {reason}")]
    Url {
        /// The offending text.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// Metadata could not be found or read.
    #[error("discovery failed: {0}")]
    Discovery(String),
    /// The protected resource metadata names another resource than the server we talk to
    /// (RFC 9728 §3.3): its authorization servers must not be trusted for this server.
    #[error("the protected resource metadata is for {resource:?}, not for {server:?}")]
    ResourceMismatch {
        /// The MCP server's URL.
        server: String,
        /// The `resource` the metadata gave.
        resource: String,
    },
    /// The authorization server metadata names another issuer than the one its URL was
    /// built from (RFC 8414 §3.3): it must not be used.
    #[error("authorization server metadata has issuer {found:?}, expected {expected:?}")]
    IssuerMismatch {
        /// The issuer the metadata URL was built from.
        expected: String,
        /// The issuer the metadata gave.
        found: String,
    },
    /// The authorization server does not offer PKCE with S256.
    #[error("the authorization server does not support PKCE with S256")]
    PkceUnsupported,
    /// No way to get a client identity at this authorization server: no pre-registered
    /// credentials, no client ID metadata document support, no registration endpoint.
    #[error("no client credentials for authorization server {0:?} and no way to register")]
    NoClient(String),
    /// Dynamic client registration was refused.
    #[error("client registration failed: {0}")]
    Registration(String),
    /// The authorization step (user agent, redirect) failed or was denied.
    #[error("authorization failed: {0}")]
    Authorization(String),
    /// The authorization response's `state` is not the one sent.
    #[error("the authorization response's state does not match the request's")]
    StateMismatch,
    /// The authorization response's `iss` (RFC 9207) is missing where it is required, or is
    /// not the recorded issuer: the code is not exchanged (mix-up defence).
    #[error("authorization response iss {found:?} does not match the issuer {expected:?}")]
    IssMismatch {
        /// The recorded issuer.
        expected: String,
        /// The `iss` received, if any.
        found: Option<String>,
    },
    /// The token endpoint refused the request.
    #[error("token request failed (HTTP {status}): {error}{}", description.as_deref().map(|d| format!(": {d}")).unwrap_or_default())]
    Token {
        /// The HTTP status.
        status: u16,
        /// The OAuth `error` code (or a summary of the body).
        error: String,
        /// The `error_description`, if any.
        description: Option<String>,
    },
    /// The server refused the request for a reason re-authorizing cannot fix.
    #[error("forbidden: {0}")]
    Forbidden(String),
    /// Authorization was tried as often as allowed for one request.
    #[error("gave up after {0} authorization attempts")]
    TooManyAttempts(u32),
    /// A client assertion (JWT) could not be made.
    #[error("client assertion: {0}")]
    Jwt(String),
    /// The configuration cannot work.
    #[error("configuration: {0}")]
    Config(String),
}
