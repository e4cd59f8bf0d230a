//! Protected resource metadata (RFC 9728), authorization server metadata (RFC 8414 and
//! OpenID Connect Discovery), and where to look for them.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use url::Url;

use crate::AuthError;

/// Protected resource metadata (RFC 9728 §2): what an MCP server says of itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProtectedResourceMetadata {
    /// The resource identifier: the `resource` parameter to send, exactly as written here.
    pub resource: String,
    /// Issuer identifiers of the authorization servers that issue tokens for it.
    #[serde(default)]
    pub authorization_servers: Vec<String>,
    /// Scopes the resource uses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scopes_supported: Option<Vec<String>>,
    /// Every other member.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Authorization server metadata (RFC 8414 §2, OpenID Connect Discovery).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuthorizationServerMetadata {
    /// The issuer identifier; must equal the one the metadata URL was built from.
    pub issuer: String,
    /// Where the user agent is sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authorization_endpoint: Option<String>,
    /// Where codes, refresh tokens and client credentials are exchanged for tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint: Option<String>,
    /// Dynamic client registration (RFC 7591).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registration_endpoint: Option<String>,
    /// Scopes the server knows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scopes_supported: Option<Vec<String>>,
    /// Grant types the server offers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grant_types_supported: Option<Vec<String>>,
    /// Client authentication methods at the token endpoint (absent means `client_secret_basic`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint_auth_methods_supported: Option<Vec<String>>,
    /// PKCE methods.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code_challenge_methods_supported: Option<Vec<String>>,
    /// Whether an https URL may be used as `client_id` (client ID metadata documents).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_id_metadata_document_supported: Option<bool>,
    /// RFC 9207: the authorization response carries `iss`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authorization_response_iss_parameter_supported: Option<bool>,
    /// RFC 9449: the JWS algorithms accepted in DPoP proofs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dpop_signing_alg_values_supported: Option<Vec<String>>,
    /// Every other member.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl AuthorizationServerMetadata {
    /// The endpoints a 2025-03-26 client assumes when an authorization server (the MCP
    /// server's origin) publishes no metadata: `/authorize`, `/token`, `/register`.
    pub fn fallback(origin: &str) -> Self {
        let origin = origin.trim_end_matches('/');
        Self {
            issuer: origin.to_owned(),
            authorization_endpoint: Some(format!("{origin}/authorize")),
            token_endpoint: Some(format!("{origin}/token")),
            registration_endpoint: Some(format!("{origin}/register")),
            scopes_supported: None,
            grant_types_supported: None,
            token_endpoint_auth_methods_supported: None,
            code_challenge_methods_supported: None,
            client_id_metadata_document_supported: None,
            authorization_response_iss_parameter_supported: None,
            dpop_signing_alg_values_supported: None,
            extra: Map::new(),
        }
    }

    /// Whether the metadata rules PKCE with S256 out: it lists methods, and not S256.
    /// (Absent means unknown: the 2025-03-26 fallback has no metadata at all.)
    pub fn refuses_s256(&self) -> bool {
        self.code_challenge_methods_supported.as_ref().is_some_and(|m| !m.iter().any(|m| m == crate::pkce::S256))
    }

    /// Whether the server takes DPoP proofs signed with `algorithm` (RFC 9449 §5.1).
    pub fn supports_dpop(&self, algorithm: &str) -> bool {
        self.dpop_signing_alg_values_supported.as_ref().is_some_and(|a| a.iter().any(|a| a == algorithm))
    }

    /// Whether the metadata lists `scope` among `scopes_supported`.
    pub fn supports_scope(&self, scope: &str) -> bool {
        self.scopes_supported.as_ref().is_some_and(|s| s.iter().any(|s| s == scope))
    }

    /// Whether `method` is an accepted token endpoint client authentication method
    /// (RFC 8414: absent means `client_secret_basic` only).
    pub fn supports_auth_method(&self, method: &str) -> bool {
        match &self.token_endpoint_auth_methods_supported {
            Some(methods) => methods.iter().any(|m| m == method),
            None => method == "client_secret_basic",
        }
    }
}

fn parse_url(url: &str) -> Result<Url, AuthError> {
    let parsed = Url::parse(url).map_err(|e| AuthError::Url { url: url.to_owned(), reason: e.to_string() })?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(AuthError::Url { url: url.to_owned(), reason: "not http or https".into() });
    }
    Ok(parsed)
}

/// `<origin>/.well-known/<suffix><path>`, the RFC 8414 / RFC 9728 path insertion; a
/// terminating `/` of the path is dropped, the query kept.
fn inserted(url: &Url, suffix: &str) -> String {
    let path = url.path().trim_end_matches('/');
    let query = url.query().map(|q| format!("?{q}")).unwrap_or_default();
    format!("{}/.well-known/{suffix}{path}{query}", url.origin().ascii_serialization())
}

/// Where to look for the protected resource metadata of the MCP server at `server_url`
/// when no `resource_metadata` was given (RFC 9728 §3.1; MCP 2025-11-25): the path-inserted
/// well-known URL, then the root one. (Only the root one when the URL has no path.)
pub fn protected_resource_metadata_urls(server_url: &str) -> Result<Vec<String>, AuthError> {
    let url = parse_url(server_url)?;
    let root = format!("{}/.well-known/oauth-protected-resource", url.origin().ascii_serialization());
    let with_path = inserted(&url, "oauth-protected-resource");
    Ok(if with_path == root { vec![root] } else { vec![with_path, root] })
}

/// Where to look for the metadata of the authorization server `issuer`, in the order the
/// MCP specification (2025-11-25) gives: RFC 8414 with path insertion, OpenID Connect
/// Discovery with path insertion, then OpenID Connect Discovery appended to the issuer.
/// For an issuer without a path: RFC 8414, then OpenID Connect.
pub fn authorization_server_metadata_urls(issuer: &str) -> Result<Vec<String>, AuthError> {
    let url = parse_url(issuer)?;
    let path = url.path().trim_end_matches('/');
    let origin = url.origin().ascii_serialization();
    Ok(if path.is_empty() {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server"),
            format!("{origin}/.well-known/openid-configuration"),
        ]
    } else {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server{path}"),
            format!("{origin}/.well-known/openid-configuration{path}"),
            format!("{origin}{path}/.well-known/openid-configuration"),
        ]
    })
}

/// The origin of a URL (`scheme://host[:port]`), as the 2025-03-26 discovery uses it.
pub fn origin_of(url: &str) -> Result<String, AuthError> {
    Ok(parse_url(url)?.origin().ascii_serialization())
}

/// Whether protected resource metadata naming `resource` may be used for the MCP server at
/// `server_url`: same origin, and the server's path at or under the resource's path (so a
/// resource `https://h` covers `https://h/mcp`). Anything else is refused (RFC 9728 §3.3).
pub fn resource_matches(server_url: &str, resource: &str) -> bool {
    let (Ok(server), Ok(res)) = (parse_url(server_url), parse_url(resource)) else { return false };
    if server.origin() != res.origin() || res.fragment().is_some() {
        return false;
    }
    let base = res.path().trim_end_matches('/');
    let path = server.path();
    path == base || path.strip_prefix(base).is_some_and(|rest| rest.starts_with('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prm_urls() {
        assert_eq!(
            protected_resource_metadata_urls("http://localhost:3000/mcp").unwrap(),
            [
                "http://localhost:3000/.well-known/oauth-protected-resource/mcp",
                "http://localhost:3000/.well-known/oauth-protected-resource"
            ]
        );
        assert_eq!(
            protected_resource_metadata_urls("https://example.com/").unwrap(),
            ["https://example.com/.well-known/oauth-protected-resource"]
        );
        assert_eq!(
            protected_resource_metadata_urls("https://example.com:443/a/b/").unwrap()[0],
            "https://example.com/.well-known/oauth-protected-resource/a/b"
        );
        assert!(protected_resource_metadata_urls("ftp://example.com/x").is_err());
    }

    #[test]
    fn as_metadata_urls() {
        assert_eq!(
            authorization_server_metadata_urls("https://auth.example.com").unwrap(),
            [
                "https://auth.example.com/.well-known/oauth-authorization-server",
                "https://auth.example.com/.well-known/openid-configuration"
            ]
        );
        assert_eq!(
            authorization_server_metadata_urls("http://localhost:9/tenant1/").unwrap(),
            [
                "http://localhost:9/.well-known/oauth-authorization-server/tenant1",
                "http://localhost:9/.well-known/openid-configuration/tenant1",
                "http://localhost:9/tenant1/.well-known/openid-configuration"
            ]
        );
    }

    #[test]
    fn resource_matching() {
        assert!(resource_matches("http://localhost:1/mcp", "http://localhost:1/mcp"));
        assert!(resource_matches("http://localhost:1/mcp", "http://localhost:1"));
        assert!(resource_matches("http://localhost:1/mcp", "http://localhost:1/"));
        assert!(resource_matches("http://localhost:1/mcp/x", "http://localhost:1/mcp"));
        assert!(!resource_matches("http://localhost:1/mcpx", "http://localhost:1/mcp"));
        assert!(!resource_matches("http://localhost:1/mcp", "https://evil.example.com/mcp"));
        assert!(!resource_matches("http://localhost:1/mcp", "http://localhost:2/mcp"));
        assert!(!resource_matches("http://localhost:1/mcp", "http://localhost:1/other"));
        assert!(!resource_matches("http://localhost:1/mcp", "not a url"));
    }

    #[test]
    fn metadata_helpers() {
        let mut m = AuthorizationServerMetadata::fallback("http://localhost:5/");
        assert_eq!(m.issuer, "http://localhost:5");
        assert_eq!(m.token_endpoint.as_deref(), Some("http://localhost:5/token"));
        assert!(!m.refuses_s256());
        assert!(m.supports_auth_method("client_secret_basic"));
        assert!(!m.supports_auth_method("none"));
        m.code_challenge_methods_supported = Some(vec!["plain".into()]);
        assert!(m.refuses_s256());
        let parsed: AuthorizationServerMetadata = serde_json::from_str(
            r#"{"issuer":"https://a","token_endpoint":"https://a/t","scopes_supported":["offline_access"],"x":1}"#,
        )
        .unwrap();
        assert!(parsed.supports_scope("offline_access"));
        assert_eq!(parsed.extra["x"], 1);
    }
}
