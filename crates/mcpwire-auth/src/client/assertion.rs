//! Where the JWT bearer grant gets its assertion: [`AssertionSource`], a fixed
//! [`StaticAssertion`], or an ID-JAG from an enterprise identity provider ([`IdJagExchange`]).

use std::time::Duration;

use futures::future::BoxFuture;

use super::http::post_form;
use crate::AuthError;

/// Supplies the assertion of a JWT bearer grant for an authorization server.
pub trait AssertionSource: Send + Sync + std::fmt::Debug + 'static {
    /// An assertion for the authorization server `issuer`, to access `resource` (the
    /// protected resource metadata's identifier, when there is one).
    fn assertion<'a>(
        &'a self,
        issuer: &'a str,
        resource: Option<&'a str>,
        scopes: &'a [String],
    ) -> BoxFuture<'a, Result<String, AuthError>>;
}

/// A fixed assertion, e.g. a workload identity token from the platform (SEP-1933).
#[derive(Clone)]
pub struct StaticAssertion(pub String);

impl std::fmt::Debug for StaticAssertion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StaticAssertion(<redacted>)")
    }
}

impl AssertionSource for StaticAssertion {
    fn assertion<'a>(
        &'a self,
        _issuer: &'a str,
        _resource: Option<&'a str>,
        _scopes: &'a [String],
    ) -> BoxFuture<'a, Result<String, AuthError>> {
        Box::pin(async move { Ok(self.0.clone()) })
    }
}

/// Enterprise-managed authorization (SEP-990, "cross-app access"): the user's ID token
/// from the enterprise identity provider is exchanged there (RFC 8693 token exchange) for
/// an Identity Assertion JWT Authorization Grant (ID-JAG) aimed at the MCP server's
/// authorization server, which [`Grant::JwtBearer`](super::Grant::JwtBearer) then presents.
#[derive(Clone)]
pub struct IdJagExchange {
    /// The identity provider's token endpoint.
    pub token_endpoint: String,
    /// This client's id at the identity provider.
    pub client_id: Option<String>,
    /// This client's secret at the identity provider (sent with `client_secret_post`).
    pub client_secret: Option<String>,
    /// The user's ID token from the identity provider.
    pub id_token: String,
    http: reqwest::Client,
}

impl std::fmt::Debug for IdJagExchange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IdJagExchange")
            .field("token_endpoint", &self.token_endpoint)
            .field("client_id", &self.client_id)
            .finish_non_exhaustive()
    }
}

impl IdJagExchange {
    /// Exchanges `id_token` at `token_endpoint`.
    pub fn new(token_endpoint: impl Into<String>, id_token: impl Into<String>) -> Self {
        Self {
            token_endpoint: token_endpoint.into(),
            client_id: None,
            client_secret: None,
            id_token: id_token.into(),
            http: reqwest::Client::builder().timeout(Duration::from_secs(30)).build().unwrap_or_default(),
        }
    }

    /// With this client's credentials at the identity provider.
    pub fn client(mut self, client_id: impl Into<String>, client_secret: Option<String>) -> Self {
        self.client_id = Some(client_id.into());
        self.client_secret = client_secret;
        self
    }
}

impl AssertionSource for IdJagExchange {
    fn assertion<'a>(
        &'a self,
        issuer: &'a str,
        resource: Option<&'a str>,
        scopes: &'a [String],
    ) -> BoxFuture<'a, Result<String, AuthError>> {
        Box::pin(async move {
            let mut form = vec![
                ("grant_type", "urn:ietf:params:oauth:grant-type:token-exchange".to_owned()),
                ("requested_token_type", "urn:ietf:params:oauth:token-type:id-jag".to_owned()),
                ("subject_token", self.id_token.clone()),
                ("subject_token_type", "urn:ietf:params:oauth:token-type:id_token".to_owned()),
                ("audience", issuer.to_owned()),
            ];
            if let Some(r) = resource {
                form.push(("resource", r.to_owned()));
            }
            if !scopes.is_empty() {
                form.push(("scope", scopes.join(" ")));
            }
            if let Some(id) = &self.client_id {
                form.push(("client_id", id.clone()));
            }
            if let Some(secret) = &self.client_secret {
                form.push(("client_secret", secret.clone()));
            }
            let value = post_form(&self.http, &self.token_endpoint, &[], &form).await.0?;
            value["access_token"].as_str().map(str::to_owned).ok_or_else(|| AuthError::Token {
                status: 200,
                error: "the token exchange answer has no access_token".into(),
                description: None,
            })
        })
    }
}
