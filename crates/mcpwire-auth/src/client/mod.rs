//! The OAuth 2.1 client of an MCP connection, as an [`AuthProvider`] for the HTTP transport.
//!
//! [`OAuthClient`] and what it does on a challenge are here; the steps of that flow are in
//! `discovery` (the resource's and the authorization server's metadata), `registration`
//! (the client identity at an issuer) and `grants` (authorization code, refresh, the token
//! request); what they use is in `config`, `credentials`, `assertion`, `authorizer`,
//! `scopes` and `tokens`, and the HTTP exchanges with OAuth endpoints in `http`.

mod assertion;
mod authorizer;
mod config;
mod credentials;
mod discovery;
mod grants;
mod http;
mod loopback;
mod registration;
mod saved;
mod scopes;
mod store;
mod tokens;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use mcpwire_transport::http::{AuthChallenge, AuthFailure, AuthProvider, AuthRequest};
use parking_lot::Mutex;

use crate::challenge::BearerChallenge;
use crate::dpop::DpopKey;
use crate::metadata::{origin_of, AuthorizationServerMetadata};
use crate::AuthError;
use registration::Registered;

pub use assertion::{AssertionSource, IdJagExchange, StaticAssertion};
pub use authorizer::{check_authorization_response, Authorizer, HeadlessAuthorizer};
pub use config::{Grant, OAuthConfig, JWT_BEARER_GRANT};
pub use credentials::{ClientAuthMethod, ClientCredentials};
pub use loopback::{LoopbackAuthorizer, Present};
pub use saved::SavedAuthorization;
pub use scopes::{select_scopes, OFFLINE_ACCESS};
pub use store::{native_client, NativeSettings, StoredAuthorization, TokenStore};
pub use tokens::TokenSet;

struct Session {
    server: AuthorizationServerMetadata,
    resource: Option<String>,
    client: Registered,
    scopes: Vec<String>,
}

#[derive(Default)]
struct FlowState {
    /// Client identities per issuer (never presented to another issuer).
    clients: HashMap<String, Registered>,
    session: Option<Session>,
}

/// The OAuth 2.1 client of one MCP server: give it to the HTTP transport
/// ([`mcpwire_transport::http::HttpOptions::auth`]) and it answers 401 and 403 challenges.
///
/// On a challenge it discovers the protected resource metadata (the challenge's
/// `resource_metadata`, else the well-known URLs) and checks that it names this server,
/// then the authorization server's metadata (RFC 8414, then OpenID Connect; the issuer
/// must match), or for a 2025-03-26 server without resource metadata, the server's own
/// origin and its default endpoints. It gets a client identity for that issuer
/// (pre-registered credentials, a client ID metadata document URL, or dynamic
/// registration) and runs the grant: authorization code with PKCE S256, `state`, the
/// RFC 8707 `resource`, RFC 9207 `iss` checking, or client credentials. A 403
/// `insufficient_scope` re-authorizes with the union of scopes. Tokens are refreshed when
/// they expire or are refused, if a refresh token was issued.
pub struct OAuthClient {
    server_url: String,
    config: OAuthConfig,
    authorizer: Arc<dyn Authorizer>,
    http: reqwest::Client,
    flow: tokio::sync::Mutex<FlowState>,
    current: Mutex<Option<TokenSet>>,
    /// The DPoP key, with the last nonces the authorization server and the MCP server gave.
    dpop: Option<DpopKey>,
    as_nonce: Mutex<Option<String>>,
    rs_nonce: Mutex<Option<String>>,
}

impl std::fmt::Debug for OAuthClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthClient")
            .field("server_url", &self.server_url)
            .field("config", &self.config)
            .field("tokens", &self.tokens())
            .finish_non_exhaustive()
    }
}

impl OAuthClient {
    /// An OAuth client for the MCP server at `server_url`, with a [`HeadlessAuthorizer`]
    /// (set an interactive one with [`Self::with_authorizer`]).
    pub fn new(server_url: &str, config: OAuthConfig) -> Result<Self, AuthError> {
        origin_of(server_url)?;
        if config.grant == Grant::ClientCredentials && config.credentials.is_empty() {
            return Err(AuthError::Config("the client credentials grant needs client credentials".into()));
        }
        if config.grant == Grant::JwtBearer && config.assertion_source.is_none() {
            return Err(AuthError::Config("the JWT bearer grant needs an assertion source".into()));
        }
        let http = reqwest::Client::builder()
            .timeout(config.timeout)
            .build()
            .map_err(|e| AuthError::Config(format!("HTTP client: {e}")))?;
        let dpop = if config.use_dpop { Some(DpopKey::generate()?) } else { None };
        Ok(Self {
            server_url: server_url.to_owned(),
            config,
            authorizer: Arc::new(HeadlessAuthorizer::new()),
            http,
            flow: tokio::sync::Mutex::default(),
            current: Mutex::default(),
            dpop,
            as_nonce: Mutex::default(),
            rs_nonce: Mutex::default(),
        })
    }

    /// Uses `authorizer` for the authorization step.
    pub fn with_authorizer(mut self, authorizer: Arc<dyn Authorizer>) -> Self {
        self.authorizer = authorizer;
        self
    }

    /// The tokens in use, if any.
    pub fn tokens(&self) -> Option<TokenSet> {
        self.current.lock().clone()
    }

    fn set_tokens(&self, tokens: TokenSet) {
        *self.current.lock() = Some(tokens);
    }

    /// The `Authorization` value of the current token (`Bearer …` or `DPoP …`).
    fn header(&self) -> Option<String> {
        let current = self.current.lock();
        current.as_ref().map(|t| {
            let scheme = if t.is_dpop() { "DPoP" } else { "Bearer" };
            format!("{scheme} {}", t.access_token)
        })
    }

    /// Handles a 401/403 answer: on success the request can be sent again with
    /// [`AuthProvider::headers`].
    pub async fn handle_challenge(&self, challenge: &AuthChallenge) -> Result<(), AuthError> {
        let nonce = challenge.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case("dpop-nonce")).map(|(_, v)| v);
        let dpop_challenge = challenge.www_authenticate.iter().find_map(|v| BearerChallenge::parse_scheme(v, "DPoP"));
        if let (Some(nonce), Some(c)) = (nonce, dpop_challenge) {
            if c.error.as_deref() == Some("use_dpop_nonce") && self.dpop.is_some() {
                // RFC 9449 §9: send the request again with the server's nonce in the proof.
                if challenge.attempt >= self.config.max_attempts {
                    return Err(AuthError::TooManyAttempts(challenge.attempt));
                }
                *self.rs_nonce.lock() = Some(nonce.clone());
                return Ok(());
            }
        }
        let mut st = self.flow.lock().await;
        let held = self.header();
        if held.is_some() && held != challenge.authorization {
            // Another request renewed the token while this one was refused.
            return Ok(());
        }
        if challenge.attempt >= self.config.max_attempts {
            return Err(AuthError::TooManyAttempts(challenge.attempt));
        }
        let bearer = BearerChallenge::from_headers(&challenge.www_authenticate).unwrap_or_default();
        let step_up = match challenge.status {
            401 => false,
            403 if bearer.is_insufficient_scope() => true,
            status => {
                let why = bearer.error_description.or(bearer.error).unwrap_or_else(|| format!("HTTP {status}"));
                return Err(AuthError::Forbidden(why));
            }
        };
        let discovered = self.discover(&bearer).await?;
        let issuer = discovered.server.issuer.clone();
        if !step_up && challenge.attempt == 0 && held.is_some() {
            if let Some(session) = st.session.as_ref().filter(|s| s.server.issuer == issuer) {
                match self.refresh(session).await {
                    Ok(Some(tokens)) => {
                        self.set_tokens(tokens);
                        return Ok(());
                    }
                    Ok(None) => {}
                    Err(e) => tracing::debug!("refresh failed, authorizing again: {e}"),
                }
            }
        }
        let client = self.client_for(&mut st, &discovered.server).await?;
        let previous = st.session.as_ref().filter(|_| step_up).map(|s| s.scopes.clone());
        let offline = self.config.request_offline_access && self.config.grant == Grant::AuthorizationCode;
        let scopes =
            select_scopes(&bearer, discovered.resource.as_ref(), &discovered.server, previous.as_deref(), offline);
        let resource = discovered.resource.as_ref().map(|r| r.resource.clone());
        let tokens = match self.config.grant {
            Grant::AuthorizationCode => self.authorization_code(&discovered, &client, &scopes).await?,
            Grant::ClientCredentials => {
                let mut form = vec![("grant_type", "client_credentials".to_owned())];
                if !scopes.is_empty() {
                    form.push(("scope", scopes.join(" ")));
                }
                if let Some(r) = &resource {
                    form.push(("resource", r.clone()));
                }
                self.token_request(&discovered.server, &client, form, &scopes).await?
            }
            Grant::JwtBearer => {
                let source = self
                    .config
                    .assertion_source
                    .as_ref()
                    .ok_or_else(|| AuthError::Config("the JWT bearer grant needs an assertion source".into()))?;
                let assertion = source.assertion(&issuer, resource.as_deref(), &scopes).await?;
                let mut form = vec![("grant_type", JWT_BEARER_GRANT.to_owned()), ("assertion", assertion)];
                if !scopes.is_empty() {
                    form.push(("scope", scopes.join(" ")));
                }
                self.token_request(&discovered.server, &client, form, &scopes).await?
            }
        };
        tracing::debug!(issuer = %issuer, scopes = ?tokens.scopes, "authorized");
        self.set_tokens(tokens);
        st.session = Some(Session { server: discovered.server, resource, client, scopes });
        Ok(())
    }

    /// Refreshes the token ahead of its expiry, if it can.
    async fn refresh_if_expiring(&self) {
        let st = self.flow.lock().await;
        let expiring = self.tokens().is_some_and(|t| t.expires_within(EXPIRY_MARGIN));
        if let (true, Some(session)) = (expiring, st.session.as_ref()) {
            match self.refresh(session).await {
                Ok(Some(tokens)) => self.set_tokens(tokens),
                Ok(None) => {}
                Err(e) => tracing::debug!("proactive refresh failed: {e}"),
            }
        }
    }
}

/// How long before its expiry a token is refreshed (when a refresh token allows it).
const EXPIRY_MARGIN: Duration = Duration::from_secs(30);

impl AuthProvider for OAuthClient {
    fn headers<'a>(&'a self, request: AuthRequest<'a>) -> BoxFuture<'a, Vec<(String, String)>> {
        Box::pin(async move {
            let expiring = {
                let current = self.current.lock();
                current.as_ref().is_some_and(|t| t.refresh_token.is_some() && t.expires_within(EXPIRY_MARGIN))
            };
            if expiring {
                self.refresh_if_expiring().await;
            }
            let (authorization, dpop_token) = {
                let current = self.current.lock();
                let dpop_token = current.as_ref().filter(|t| t.is_dpop()).map(|t| t.access_token.clone());
                drop(current);
                (self.header(), dpop_token)
            };
            let Some(authorization) = authorization else { return Vec::new() };
            let mut headers = vec![("authorization".to_owned(), authorization)];
            if let (Some(key), Some(token)) = (&self.dpop, dpop_token) {
                let nonce = self.rs_nonce.lock().clone();
                match key.proof(request.method, request.url, Some(&token), nonce.as_deref()) {
                    Ok(proof) => headers.push(("dpop".to_owned(), proof)),
                    Err(e) => tracing::warn!("no DPoP proof: {e}"),
                }
            }
            headers
        })
    }

    fn on_challenge<'a>(&'a self, challenge: &'a AuthChallenge) -> BoxFuture<'a, Result<(), AuthFailure>> {
        Box::pin(async move { self.handle_challenge(challenge).await.map_err(|e| Box::new(e) as AuthFailure) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    /// Authorization server metadata from JSON; the tests of the submodules use it.
    pub(super) fn server(json: Value) -> AuthorizationServerMetadata {
        serde_json::from_value(json).unwrap()
    }
}
