//! How the client is configured: [`OAuthConfig`], and the [`Grant`] it uses.

use std::sync::Arc;
use std::time::Duration;

use url::Url;

use super::{AssertionSource, ClientCredentials};

/// Which OAuth grant obtains the tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Grant {
    /// Authorization code with PKCE, through an [`Authorizer`](super::Authorizer) (a user, or a headless agent).
    #[default]
    AuthorizationCode,
    /// Client credentials (machine to machine); needs pre-registered [`ClientCredentials`].
    ClientCredentials,
    /// The JWT bearer grant (RFC 7523 §2.1) with an assertion from
    /// [`OAuthConfig::assertion_source`], e.g. an ID-JAG from an enterprise identity
    /// provider ([`IdJagExchange`](super::IdJagExchange)); the client authenticates with its credentials.
    JwtBearer,
}

/// The `grant_type` of the JWT bearer grant (RFC 7523).
pub const JWT_BEARER_GRANT: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";

/// How the OAuth client identifies itself and behaves.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct OAuthConfig {
    /// `client_name` for dynamic registration.
    pub client_name: String,
    /// Where the authorization server sends the user agent back (`redirect_uri`).
    pub redirect_uri: String,
    /// `application_type` for dynamic registration (`native` or `web`); when `None`,
    /// `native` for loopback and custom-scheme redirect URIs, `web` otherwise.
    pub application_type: Option<String>,
    /// The https URL of this client's metadata document, used as `client_id` where the
    /// authorization server supports client ID metadata documents.
    pub client_metadata_url: Option<String>,
    /// Pre-registered credentials, tried first (those for the issuer, then issuer-less ones).
    pub credentials: Vec<ClientCredentials>,
    /// The grant to use.
    pub grant: Grant,
    /// Where [`Grant::JwtBearer`] gets its assertion.
    pub assertion_source: Option<Arc<dyn AssertionSource>>,
    /// Ask for `offline_access` (a refresh token) when the authorization server lists it.
    pub request_offline_access: bool,
    /// Sender-constrain tokens with DPoP (RFC 9449) when the authorization server takes
    /// ES256 proofs (`dpop_signing_alg_values_supported`); on by default.
    pub use_dpop: bool,
    /// How many authorizations one request may trigger (scope step-up included) before
    /// giving up; 3 by default.
    pub max_attempts: u32,
    /// The MCP revision to announce in `MCP-Protocol-Version` on discovery requests.
    pub protocol_version: Option<String>,
    /// Time limit of each HTTP request the flow makes.
    pub timeout: Duration,
}

impl OAuthConfig {
    /// A configuration with the defaults: authorization code, no CIMD URL, no
    /// pre-registered credentials, `offline_access` when offered, 3 attempts, 30 s.
    pub fn new(client_name: impl Into<String>, redirect_uri: impl Into<String>) -> Self {
        Self {
            client_name: client_name.into(),
            redirect_uri: redirect_uri.into(),
            application_type: None,
            client_metadata_url: None,
            credentials: Vec::new(),
            grant: Grant::AuthorizationCode,
            assertion_source: None,
            request_offline_access: true,
            use_dpop: true,
            max_attempts: 3,
            protocol_version: None,
            timeout: Duration::from_secs(30),
        }
    }

    pub(super) fn application_type(&self) -> String {
        if let Some(t) = &self.application_type {
            return t.clone();
        }
        let native = match Url::parse(&self.redirect_uri) {
            Ok(u) if u.scheme() == "http" => {
                matches!(u.host_str(), Some("localhost" | "127.0.0.1" | "[::1]"))
            }
            Ok(u) => u.scheme() != "https",
            Err(_) => true,
        };
        if native { "native" } else { "web" }.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn application_type_from_redirect() {
        assert_eq!(OAuthConfig::new("c", "http://localhost:3000/callback").application_type(), "native");
        assert_eq!(OAuthConfig::new("c", "http://127.0.0.1:1/cb").application_type(), "native");
        assert_eq!(OAuthConfig::new("c", "com.example.app:/cb").application_type(), "native");
        assert_eq!(OAuthConfig::new("c", "https://app.example.com/cb").application_type(), "web");
        let mut c = OAuthConfig::new("c", "https://app.example.com/cb");
        c.application_type = Some("native".into());
        assert_eq!(c.application_type(), "native");
    }
}
