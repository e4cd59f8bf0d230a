//! OAuth 2.1 for MCP, server side: an MCP server as a protected resource.
//!
//! A [`ResourceServer`] is what an HTTP transport consults for each request (`mcpwire-http` does
//! when given one): it publishes the protected resource metadata (RFC 9728) naming the
//! authorization servers and scopes, reads the bearer token of each request, has a
//! [`TokenVerifier`] turn it into a [`Principal`], and says how to refuse when it cannot:
//!
//! - no token: `401` with `WWW-Authenticate: Bearer resource_metadata="…", scope="…"`, from
//!   which a client discovers where to get one;
//! - a token refused (malformed, expired, badly signed, of another issuer, **for another
//!   resource**: the audience must name this server, RFC 8707): `401` with
//!   `error="invalid_token"`;
//! - a token without a scope what the request names needs: `403` with
//!   `error="insufficient_scope"` and the scopes needed, so that the client can step up;
//! - the authorization server unreachable (metadata, keys, introspection): `503` with
//!   `Retry-After` ([`RETRY_AFTER`]). A verifier made with `discovering` reads the issuer's
//!   metadata when first needed, so that a server can start before its authorization server
//!   answers, and serve once it does.
//!
//! Verifiers: [`JwtVerifier`] (JWT access tokens against the issuer's JWKS), and
//! [`IntrospectionVerifier`] (opaque tokens, RFC 7662). The token itself is never passed on:
//! a server that calls other services uses credentials of its own.

mod availability;
mod claims;
mod clock;
mod fetch;
mod introspection;
mod jwt;
mod remembered;
mod verifier;

use std::sync::Arc;
use std::time::Duration;

use http::header::AUTHORIZATION;
use http::{HeaderMap, HeaderValue, StatusCode};
use mcpwire_protocol::Principal;

pub use availability::RETRY_AFTER;
pub use clock::Clock;
pub use introspection::IntrospectionVerifier;
pub use jwt::JwtVerifier;
pub use verifier::{TokenError, TokenVerifier};

use crate::metadata::ProtectedResourceMetadata;

/// The longest access token read (longer ones are refused before any work).
pub const MAX_TOKEN_LEN: usize = 16 * 1024;

/// The well-known path of protected resource metadata (RFC 9728 §3).
pub const METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

/// An MCP server as an OAuth protected resource: its metadata, and the checking of each
/// request's bearer token. Cheap to clone.
#[derive(Clone)]
pub struct ResourceServer {
    inner: Arc<Inner>,
}

struct Inner {
    resource: String,
    authorization_servers: Vec<String>,
    scopes_supported: Vec<String>,
    required_scopes: Vec<String>,
    resource_name: Option<String>,
    verifier: Arc<dyn TokenVerifier>,
}

/// Why a request was not let through, and so how it is answered ([`ResourceServer::refusal`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Rejection {
    /// The request carries no bearer token.
    #[error("the request has no access token")]
    Missing,
    /// The `Authorization` header is not one bearer token (another scheme, several headers,
    /// characters a token does not have).
    #[error("the Authorization header is not a bearer token: {0}")]
    BadHeader(&'static str),
    /// The token was refused.
    #[error(transparent)]
    Token(#[from] TokenError),
    /// The token lacks scopes the request needs (every one of them listed).
    #[error("the access token lacks the scope(s) {}", .0.join(" "))]
    InsufficientScope(Vec<String>),
}

/// How to answer a refused request: the status and the `WWW-Authenticate` value.
#[derive(Debug, Clone)]
pub struct Refusal {
    /// `401`, `403`, `400` or `503`.
    pub status: StatusCode,
    /// The `WWW-Authenticate` header (none for `503`).
    pub www_authenticate: Option<HeaderValue>,
    /// How long the client should wait before it tries again (`Retry-After`; `503` only).
    pub retry_after: Option<Duration>,
    /// A short text for the body.
    pub message: String,
}

impl ResourceServer {
    /// The protected resource `resource` (the MCP endpoint's canonical URL, the audience its
    /// tokens must name), checking tokens with `verifier`.
    pub fn new(resource: impl Into<String>, verifier: impl TokenVerifier) -> Self {
        Self {
            inner: Arc::new(Inner {
                resource: resource.into(),
                authorization_servers: Vec::new(),
                scopes_supported: Vec::new(),
                required_scopes: Vec::new(),
                resource_name: None,
                verifier: Arc::new(verifier),
            }),
        }
    }

    fn with(mut self, f: impl FnOnce(&mut Inner)) -> Self {
        let inner = Arc::get_mut(&mut self.inner).expect("configured before it is shared");
        f(inner);
        self
    }

    /// An authorization server (its issuer URL) clients may get tokens from; the metadata
    /// lists them in the order given.
    pub fn authorization_server(self, issuer: impl Into<String>) -> Self {
        self.with(|i| i.authorization_servers.push(issuer.into()))
    }

    /// The scopes the metadata lists (`scopes_supported`): what a client asks for when a
    /// challenge names none.
    pub fn scopes_supported(self, scopes: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.with(|i| i.scopes_supported = scopes.into_iter().map(Into::into).collect())
    }

    /// Scopes every request needs, whatever it names (a token without them is answered
    /// `403 insufficient_scope`).
    pub fn required_scopes(self, scopes: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.with(|i| i.required_scopes = scopes.into_iter().map(Into::into).collect())
    }

    /// A name for people, in the metadata (`resource_name`).
    pub fn resource_name(self, name: impl Into<String>) -> Self {
        self.with(|i| i.resource_name = Some(name.into()))
    }

    /// The resource identifier.
    pub fn resource(&self) -> &str {
        &self.inner.resource
    }

    /// The protected resource metadata (RFC 9728 §2).
    pub fn metadata(&self) -> ProtectedResourceMetadata {
        let i = &self.inner;
        let mut extra = serde_json::Map::new();
        extra.insert("bearer_methods_supported".into(), serde_json::json!(["header"]));
        if let Some(name) = &i.resource_name {
            extra.insert("resource_name".into(), name.clone().into());
        }
        ProtectedResourceMetadata {
            resource: i.resource.clone(),
            authorization_servers: i.authorization_servers.clone(),
            scopes_supported: (!i.scopes_supported.is_empty()).then(|| i.scopes_supported.clone()),
            extra,
        }
    }

    /// The paths the metadata is served at on this server: the well-known path with the
    /// resource's path inserted (RFC 9728 §3.1), and the plain one.
    pub fn metadata_paths(&self) -> Vec<String> {
        let path = url::Url::parse(&self.inner.resource).map(|u| u.path().trim_end_matches('/').to_owned());
        match path {
            Ok(path) if !path.is_empty() => vec![format!("{METADATA_PATH}{path}"), METADATA_PATH.to_owned()],
            _ => vec![METADATA_PATH.to_owned()],
        }
    }

    /// The metadata's URL, as challenges name it (`resource_metadata`).
    pub fn metadata_url(&self) -> String {
        match url::Url::parse(&self.inner.resource) {
            Ok(url) => format!("{}{}", url.origin().ascii_serialization(), self.metadata_paths()[0]),
            Err(_) => METADATA_PATH.to_owned(),
        }
    }

    /// Has the verifier reach now what it will need (the issuer's metadata, its keys):
    /// `Err` if the authorization server does not answer. The resource server serves either
    /// way (see [`TokenVerifier::prepare`]); a server calls this at start to say so early.
    pub async fn prepare(&self) -> Result<(), TokenError> {
        self.inner.verifier.prepare().await
    }

    /// The principal of a request with these headers, or why it is refused.
    pub async fn authorize(&self, headers: &HeaderMap) -> Result<Principal, Rejection> {
        let token = bearer_token(headers)?;
        let principal = self.inner.verifier.verify(token).await?;
        if !principal.has_scopes(&self.inner.required_scopes) {
            return Err(Rejection::InsufficientScope(self.inner.required_scopes.clone()));
        }
        Ok(principal)
    }

    /// The scopes a token lacking `needed` should ask for next: the required ones and
    /// `needed`, without repeats.
    fn step_up_scopes(&self, needed: &[String]) -> Vec<String> {
        let mut scopes = self.inner.required_scopes.clone();
        for s in needed {
            if !scopes.contains(s) {
                scopes.push(s.clone());
            }
        }
        scopes
    }

    /// How to answer a request refused for `rejection`.
    pub fn refusal(&self, rejection: &Rejection) -> Refusal {
        let metadata = self.metadata_url();
        let mut params = vec![("resource_metadata", metadata)];
        let (status, error) = match rejection {
            Rejection::Missing => {
                let scopes = self.step_up_scopes(&[]);
                if !scopes.is_empty() {
                    params.push(("scope", scopes.join(" ")));
                }
                (StatusCode::UNAUTHORIZED, None)
            }
            Rejection::BadHeader(_) => (StatusCode::BAD_REQUEST, Some("invalid_request")),
            Rejection::Token(e) if e.is_unavailable() => {
                return Refusal {
                    status: StatusCode::SERVICE_UNAVAILABLE,
                    www_authenticate: None,
                    retry_after: Some(RETRY_AFTER),
                    message: "the authorization server cannot be reached to check the access token; try again later"
                        .into(),
                }
            }
            Rejection::Token(_) => (StatusCode::UNAUTHORIZED, Some("invalid_token")),
            Rejection::InsufficientScope(needed) => {
                params.push(("scope", self.step_up_scopes(needed).join(" ")));
                (StatusCode::FORBIDDEN, Some("insufficient_scope"))
            }
        };
        let message = rejection.to_string();
        if let Some(error) = error {
            params.insert(0, ("error", error.to_owned()));
            params.insert(1, ("error_description", message.clone()));
        }
        let value = challenge(&params);
        Refusal { status, www_authenticate: HeaderValue::from_str(&value).ok(), retry_after: None, message }
    }
}

/// `Bearer k="v", …`, each value quoted with what a quoted string cannot hold left out.
fn challenge(params: &[(&str, String)]) -> String {
    let quoted: Vec<String> = params
        .iter()
        .map(|(k, v)| {
            let v: String = v.chars().filter(|c| (' '..='~').contains(c) && *c != '"' && *c != '\\').collect();
            format!("{k}=\"{v}\"")
        })
        .collect();
    format!("Bearer {}", quoted.join(", "))
}

/// The bearer token of the one `Authorization` header (RFC 6750 §2.1).
fn bearer_token(headers: &HeaderMap) -> Result<&str, Rejection> {
    let mut values = headers.get_all(AUTHORIZATION).iter();
    let Some(value) = values.next() else { return Err(Rejection::Missing) };
    if values.next().is_some() {
        return Err(Rejection::BadHeader("more than one Authorization header"));
    }
    let value = value.to_str().map_err(|_| Rejection::BadHeader("not visible ASCII"))?;
    let (scheme, token) = value.split_once(' ').ok_or(Rejection::BadHeader("no scheme and token"))?;
    if !scheme.eq_ignore_ascii_case("bearer") {
        // An authentication method this server does not take (Basic, DPoP): as if none was
        // given, the challenge says which one it takes (RFC 6750 §3.1).
        return Err(Rejection::Missing);
    }
    let token = token.trim_start_matches(' ');
    if token.is_empty() {
        return Err(Rejection::BadHeader("an empty token"));
    }
    if token.len() > MAX_TOKEN_LEN {
        return Err(Rejection::Token(TokenError::Malformed(format!("longer than {MAX_TOKEN_LEN} bytes"))));
    }
    // token68: ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/", then "=" padding.
    let body = token.trim_end_matches('=');
    if !body.bytes().all(|b| b.is_ascii_alphanumeric() || b"-._~+/".contains(&b)) {
        return Err(Rejection::BadHeader("characters a bearer token does not have"));
    }
    Ok(token)
}

impl std::fmt::Debug for ResourceServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResourceServer")
            .field("resource", &self.inner.resource)
            .field("authorization_servers", &self.inner.authorization_servers)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(values: &[&str]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for v in values {
            h.append(AUTHORIZATION, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    #[test]
    fn the_bearer_token_is_read_strictly() {
        assert_eq!(bearer_token(&headers(&["Bearer abc.def-_~+/=="])).unwrap(), "abc.def-_~+/==");
        assert_eq!(bearer_token(&headers(&["bearer x"])).unwrap(), "x");
        assert!(matches!(bearer_token(&headers(&[])), Err(Rejection::Missing)));
        for bad in ["Bearer", "Bearer ", "Bearer a b", "Bearer a\"b"] {
            assert!(matches!(bearer_token(&headers(&[bad])), Err(Rejection::BadHeader(_))), "{bad}");
        }
        for other_scheme in ["Basic abc", "DPoP abc", "Bearerx y"] {
            assert!(matches!(bearer_token(&headers(&[other_scheme])), Err(Rejection::Missing)), "{other_scheme}");
        }
        assert!(matches!(bearer_token(&headers(&["Bearer a", "Bearer b"])), Err(Rejection::BadHeader(_))));
        let huge = format!("Bearer {}", "a".repeat(MAX_TOKEN_LEN + 1));
        assert!(matches!(bearer_token(&headers(&[&huge])), Err(Rejection::Token(TokenError::Malformed(_)))));
    }

    struct Nobody;
    impl TokenVerifier for Nobody {
        fn verify<'a>(&'a self, _: &'a str) -> futures::future::BoxFuture<'a, Result<Principal, TokenError>> {
            Box::pin(async { Err(TokenError::Inactive) })
        }
    }

    #[test]
    fn refusals_carry_the_challenges_clients_step_up_from() {
        let rs = ResourceServer::new("https://mcp.example/mcp", Nobody)
            .authorization_server("https://as.example")
            .required_scopes(["mcp"]);
        assert_eq!(rs.metadata_paths(), ["/.well-known/oauth-protected-resource/mcp", METADATA_PATH]);
        assert_eq!(rs.metadata_url(), "https://mcp.example/.well-known/oauth-protected-resource/mcp");
        let r = rs.refusal(&Rejection::Missing);
        assert_eq!(r.status, StatusCode::UNAUTHORIZED);
        assert_eq!(
            r.www_authenticate.unwrap(),
            "Bearer resource_metadata=\"https://mcp.example/.well-known/oauth-protected-resource/mcp\", scope=\"mcp\""
        );
        let r = rs.refusal(&Rejection::InsufficientScope(vec!["notes:write".into()]));
        assert_eq!(r.status, StatusCode::FORBIDDEN);
        let value = r.www_authenticate.unwrap().to_str().unwrap().to_owned();
        assert!(value.starts_with("Bearer error=\"insufficient_scope\", error_description=\""), "{value}");
        assert!(value.ends_with("scope=\"mcp notes:write\""), "{value}");
        let parsed = crate::BearerChallenge::parse(&value).unwrap();
        assert!(parsed.is_insufficient_scope());
        assert_eq!(parsed.scopes(), ["mcp", "notes:write"]);
        let r = rs.refusal(&Rejection::Token(TokenError::Expired));
        assert_eq!(r.status, StatusCode::UNAUTHORIZED);
        assert!(r.www_authenticate.unwrap().to_str().unwrap().starts_with("Bearer error=\"invalid_token\""));
        let r = rs.refusal(&Rejection::Token(TokenError::Unavailable("down".into())));
        assert_eq!((r.status, r.www_authenticate), (StatusCode::SERVICE_UNAVAILABLE, None));
        assert_eq!(r.retry_after, Some(RETRY_AFTER));
        assert_eq!(rs.refusal(&Rejection::Missing).retry_after, None);
        let metadata = serde_json::to_value(rs.metadata()).unwrap();
        assert_eq!(metadata["resource"], "https://mcp.example/mcp");
        assert_eq!(metadata["authorization_servers"][0], "https://as.example");
        assert_eq!(metadata["bearer_methods_supported"][0], "header");
    }
}
