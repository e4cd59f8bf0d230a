//! The OAuth 2.1 client of an MCP connection, as an [`AuthProvider`] for the HTTP transport.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use futures::future::BoxFuture;
use mcp_transport::http::{AuthChallenge, AuthFailure, AuthProvider, AuthRequest};
use reqwest::header::{ACCEPT, CONTENT_TYPE, LOCATION};
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::{json, Value};
use url::Url;

use crate::challenge::{split_scopes, BearerChallenge};
use crate::dpop::{DpopKey, DPOP_ALGORITHM};
use crate::jwt::{client_assertion, JWT_BEARER_ASSERTION_TYPE};
use crate::metadata::{
    authorization_server_metadata_urls, origin_of, protected_resource_metadata_urls, resource_matches,
    AuthorizationServerMetadata, ProtectedResourceMetadata,
};
use crate::pkce::{random_token, Pkce, S256};
use crate::AuthError;

/// The scope that asks for a refresh token (OpenID Connect; SEP-2207).
pub const OFFLINE_ACCESS: &str = "offline_access";

/// How a client authenticates at the token endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ClientAuthMethod {
    /// A public client: `client_id` in the body, no secret.
    None,
    /// `Authorization: Basic` with the form-encoded id and secret (RFC 6749 §2.3.1).
    ClientSecretBasic,
    /// `client_id` and `client_secret` in the body.
    ClientSecretPost,
    /// A JWT signed with the client's private key (RFC 7523 §2.2).
    PrivateKeyJwt,
}

impl ClientAuthMethod {
    /// The method's registered name (`none`, `client_secret_basic`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::ClientSecretBasic => "client_secret_basic",
            Self::ClientSecretPost => "client_secret_post",
            Self::PrivateKeyJwt => "private_key_jwt",
        }
    }

    /// The method of a registered name.
    pub fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "none" => Self::None,
            "client_secret_basic" => Self::ClientSecretBasic,
            "client_secret_post" => Self::ClientSecretPost,
            "private_key_jwt" => Self::PrivateKeyJwt,
            _ => return None,
        })
    }
}

/// A client identity known in advance (pre-registration), or obtained by registering.
#[derive(Clone, PartialEq, Eq)]
pub struct ClientCredentials {
    /// The client identifier.
    pub client_id: String,
    /// The client secret, for a confidential client.
    pub client_secret: Option<String>,
    /// A PEM private key, for `private_key_jwt`.
    pub private_key_pem: Option<String>,
    /// The JWS algorithm of [`Self::private_key_pem`] (`ES256` when not given).
    pub signing_algorithm: Option<String>,
    /// How to authenticate at the token endpoint; chosen from the server's metadata when
    /// not given (a key: `private_key_jwt`; a secret: `client_secret_basic`, else
    /// `client_secret_post`, as offered; neither: `none`).
    pub auth_method: Option<ClientAuthMethod>,
    /// The issuer these credentials belong to; `None`: whichever authorization server the
    /// resource names. Credentials are never presented to another issuer.
    pub issuer: Option<String>,
}

impl std::fmt::Debug for ClientCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientCredentials")
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret.as_ref().map(|_| "<redacted>"))
            .field("private_key_pem", &self.private_key_pem.as_ref().map(|_| "<redacted>"))
            .field("signing_algorithm", &self.signing_algorithm)
            .field("auth_method", &self.auth_method)
            .field("issuer", &self.issuer)
            .finish()
    }
}

impl ClientCredentials {
    /// A public client `client_id`, for any issuer.
    pub fn new(client_id: impl Into<String>) -> Self {
        Self {
            client_id: client_id.into(),
            client_secret: None,
            private_key_pem: None,
            signing_algorithm: None,
            auth_method: None,
            issuer: None,
        }
    }

    /// With a client secret.
    pub fn secret(mut self, secret: impl Into<String>) -> Self {
        self.client_secret = Some(secret.into());
        self
    }

    /// With a private key (PEM) and its JWS algorithm, for `private_key_jwt`.
    pub fn private_key(mut self, pem: impl Into<String>, algorithm: impl Into<String>) -> Self {
        self.private_key_pem = Some(pem.into());
        self.signing_algorithm = Some(algorithm.into());
        self
    }

    /// Only for the authorization server `issuer`.
    pub fn for_issuer(mut self, issuer: impl Into<String>) -> Self {
        self.issuer = Some(issuer.into());
        self
    }

    /// With a fixed token endpoint authentication method.
    pub fn auth_method(mut self, method: ClientAuthMethod) -> Self {
        self.auth_method = Some(method);
        self
    }

    /// The method to use at an authorization server with `metadata`.
    fn method_for(&self, metadata: &AuthorizationServerMetadata) -> ClientAuthMethod {
        if let Some(m) = self.auth_method {
            return m;
        }
        if self.private_key_pem.is_some() {
            return ClientAuthMethod::PrivateKeyJwt;
        }
        if self.client_secret.is_none() {
            return ClientAuthMethod::None;
        }
        if metadata.supports_auth_method("client_secret_basic") {
            ClientAuthMethod::ClientSecretBasic
        } else if metadata.supports_auth_method("client_secret_post") {
            ClientAuthMethod::ClientSecretPost
        } else if metadata.supports_auth_method("none") {
            ClientAuthMethod::None
        } else {
            ClientAuthMethod::ClientSecretBasic
        }
    }
}

/// Which OAuth grant obtains the tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Grant {
    /// Authorization code with PKCE, through an [`Authorizer`] (a user, or a headless agent).
    #[default]
    AuthorizationCode,
    /// Client credentials (machine to machine); needs pre-registered [`ClientCredentials`].
    ClientCredentials,
    /// The JWT bearer grant (RFC 7523 §2.1) with an assertion from
    /// [`OAuthConfig::assertion_source`], e.g. an ID-JAG from an enterprise identity
    /// provider ([`IdJagExchange`]); the client authenticates with its credentials.
    JwtBearer,
}

/// The `grant_type` of the JWT bearer grant (RFC 7523).
pub const JWT_BEARER_GRANT: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";

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
/// authorization server, which [`Grant::JwtBearer`] then presents.
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

/// POSTs a form (with extra `headers`) to an OAuth endpoint and returns its JSON answer,
/// or the OAuth error; and the `DPoP-Nonce` the server gave, if any.
async fn post_form(
    http: &reqwest::Client,
    endpoint: &str,
    headers: &[(&'static str, String)],
    form: &[(&str, String)],
) -> (Result<Value, AuthError>, Option<String>) {
    let body = form_urlencoded::Serializer::new(String::new()).extend_pairs(form.iter()).finish();
    let mut request = http
        .post(endpoint)
        .header(ACCEPT, "application/json")
        .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(body);
    for (name, value) in headers {
        request = request.header(*name, value);
    }
    let response = match request.send().await {
        Ok(r) => r,
        Err(e) => return (Err(http_error(endpoint, e)), None),
    };
    let nonce = response.headers().get("dpop-nonce").and_then(|v| v.to_str().ok()).map(str::to_owned);
    let status = response.status();
    let result = match response.text().await {
        Ok(text) => oauth_answer(status, &text),
        Err(e) => Err(http_error(endpoint, e)),
    };
    (result, nonce)
}

/// The JSON object of a successful OAuth answer, or its error.
fn oauth_answer(status: reqwest::StatusCode, text: &str) -> Result<Value, AuthError> {
    let value: Value = serde_json::from_str(text).unwrap_or(Value::Null);
    if !status.is_success() {
        return Err(AuthError::Token {
            status: status.as_u16(),
            error: value["error"].as_str().map(str::to_owned).unwrap_or_else(|| oauth_error_text(text)),
            description: value["error_description"].as_str().map(str::to_owned),
        });
    }
    if !value.is_object() {
        return Err(AuthError::Token {
            status: status.as_u16(),
            error: format!("unreadable answer: {}", oauth_error_text(text)),
            description: None,
        });
    }
    Ok(value)
}

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

    fn application_type(&self) -> String {
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

/// Tokens from a token endpoint.
#[derive(Clone, PartialEq, Eq)]
pub struct TokenSet {
    /// The access token.
    pub access_token: String,
    /// `token_type` (`Bearer`).
    pub token_type: String,
    /// The refresh token, if one was issued.
    pub refresh_token: Option<String>,
    /// When the access token expires, if the server said.
    pub expires_at: Option<Instant>,
    /// The granted scopes (`scope` of the response, else those requested).
    pub scopes: Vec<String>,
    /// The issuer that issued them.
    pub issuer: String,
}

impl std::fmt::Debug for TokenSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenSet")
            .field("access_token", &"<redacted>")
            .field("token_type", &self.token_type)
            .field("refresh_token", &self.refresh_token.as_ref().map(|_| "<redacted>"))
            .field("expires_at", &self.expires_at)
            .field("scopes", &self.scopes)
            .field("issuer", &self.issuer)
            .finish()
    }
}

impl TokenSet {
    /// Whether the token is DPoP-bound (`token_type` `DPoP`).
    pub fn is_dpop(&self) -> bool {
        self.token_type.eq_ignore_ascii_case("dpop")
    }

    /// Whether the access token expires within `margin`.
    pub fn expires_within(&self, margin: Duration) -> bool {
        self.expires_at.is_some_and(|at| at <= Instant::now() + margin)
    }
}

/// Takes the user agent through the authorization endpoint and returns the redirect URI
/// it was sent back to, with its query (`code`, `state`, `iss` or `error`).
///
/// An interactive application opens a browser at `url` and listens on its redirect URI;
/// [`HeadlessAuthorizer`] follows the endpoint's immediate redirect (auto-approving
/// servers, tests).
pub trait Authorizer: Send + Sync + 'static {
    /// Runs the authorization step at `url`, returning the callback URL reached.
    fn authorize<'a>(&'a self, url: &'a Url, redirect_uri: &'a str) -> BoxFuture<'a, Result<Url, AuthError>>;
}

/// An [`Authorizer`] without a user: it requests the authorization URL without following
/// redirects and takes the `Location` that points at the redirect URI.
#[derive(Debug, Clone)]
pub struct HeadlessAuthorizer {
    http: reqwest::Client,
}

impl HeadlessAuthorizer {
    /// A headless authorizer with a 30 s time limit.
    pub fn new() -> Self {
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(Duration::from_secs(30))
            .build()
            .unwrap_or_default();
        Self { http }
    }
}

impl Default for HeadlessAuthorizer {
    fn default() -> Self {
        Self::new()
    }
}

impl Authorizer for HeadlessAuthorizer {
    fn authorize<'a>(&'a self, url: &'a Url, redirect_uri: &'a str) -> BoxFuture<'a, Result<Url, AuthError>> {
        Box::pin(async move {
            let response = self.http.get(url.clone()).send().await.map_err(|e| http_error(url.as_str(), e))?;
            let status = response.status();
            let location = response.headers().get(LOCATION).and_then(|v| v.to_str().ok());
            let Some(location) = location.filter(|_| status.is_redirection()) else {
                return Err(AuthError::Authorization(format!(
                    "the authorization endpoint answered HTTP {status} instead of redirecting (it needs a user)"
                )));
            };
            let callback =
                url.join(location).map_err(|e| AuthError::Url { url: location.into(), reason: e.to_string() })?;
            let expected = redirect_uri.split(['?', '#']).next().unwrap_or(redirect_uri);
            if !callback.as_str().starts_with(expected) {
                return Err(AuthError::Authorization(format!(
                    "the authorization endpoint redirected to {callback}, not to the redirect URI (it needs a user)"
                )));
            }
            Ok(callback)
        })
    }
}

/// Checks an authorization response (the callback URL) and returns its `code`.
///
/// RFC 9207: an `iss` present must equal `issuer` exactly (no normalization), and when
/// `iss_required` (the server advertises `authorization_response_iss_parameter_supported`)
/// it must be present. Then an `error` is reported, then `state` must match.
pub fn check_authorization_response(
    callback: &Url,
    state: &str,
    issuer: &str,
    iss_required: bool,
) -> Result<String, AuthError> {
    let params: HashMap<String, String> = callback.query_pairs().into_owned().collect();
    match params.get("iss") {
        Some(iss) if iss != issuer => {
            return Err(AuthError::IssMismatch { expected: issuer.into(), found: Some(iss.clone()) })
        }
        None if iss_required => return Err(AuthError::IssMismatch { expected: issuer.into(), found: None }),
        _ => {}
    }
    if let Some(error) = params.get("error") {
        let description = params.get("error_description").map(|d| format!(": {d}")).unwrap_or_default();
        return Err(AuthError::Authorization(format!("{error}{description}")));
    }
    if params.get("state").map(String::as_str) != Some(state) {
        return Err(AuthError::StateMismatch);
    }
    params.get("code").cloned().ok_or_else(|| AuthError::Authorization("the authorization response has no code".into()))
}

/// The scopes to request: the challenge's, else the resource metadata's
/// `scopes_supported`, else none; on step-up, unioned with `previous` (SEP-2350); plus
/// `offline_access` when wanted and the authorization server lists it (SEP-2207).
pub fn select_scopes(
    challenge: &BearerChallenge,
    resource: Option<&ProtectedResourceMetadata>,
    server: &AuthorizationServerMetadata,
    previous: Option<&[String]>,
    offline_access: bool,
) -> Vec<String> {
    let mut scopes = challenge.scopes();
    if scopes.is_empty() {
        scopes = resource.and_then(|r| r.scopes_supported.clone()).unwrap_or_default();
    }
    let mut out: Vec<String> = previous.map(<[String]>::to_vec).unwrap_or_default();
    for s in scopes {
        if !out.contains(&s) {
            out.push(s);
        }
    }
    if offline_access && server.supports_scope(OFFLINE_ACCESS) && !out.iter().any(|s| s == OFFLINE_ACCESS) {
        out.push(OFFLINE_ACCESS.to_owned());
    }
    out
}

/// What discovery found for the server.
#[derive(Debug, Clone)]
struct Discovered {
    resource: Option<ProtectedResourceMetadata>,
    server: AuthorizationServerMetadata,
}

/// The client identity in use at one issuer.
#[derive(Clone)]
struct Registered {
    credentials: ClientCredentials,
    method: ClientAuthMethod,
}

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

#[derive(Deserialize)]
struct TokenResponse {
    access_token: String,
    #[serde(default)]
    token_type: Option<String>,
    #[serde(default)]
    expires_in: Option<f64>,
    #[serde(default)]
    refresh_token: Option<String>,
    #[serde(default)]
    scope: Option<String>,
}

#[derive(Deserialize)]
struct RegistrationResponse {
    client_id: String,
    #[serde(default)]
    client_secret: Option<String>,
    #[serde(default)]
    token_endpoint_auth_method: Option<String>,
}

fn http_error(url: &str, e: impl std::fmt::Display) -> AuthError {
    AuthError::Http { url: url.to_owned(), reason: e.to_string() }
}

/// `x-www-form-urlencoded` encoding of one component (RFC 6749 §2.3.1 Basic credentials).
fn form_encode(s: &str) -> String {
    form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

/// The OAuth 2.1 client of one MCP server: give it to the HTTP transport
/// ([`mcp_transport::http::HttpOptions::auth`]) and it answers 401 and 403 challenges.
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
        self.current.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn set_tokens(&self, tokens: TokenSet) {
        *self.current.lock().unwrap_or_else(|e| e.into_inner()) = Some(tokens);
    }

    /// The `Authorization` value of the current token (`Bearer …` or `DPoP …`).
    fn header(&self) -> Option<String> {
        let current = self.current.lock().unwrap_or_else(|e| e.into_inner());
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
                *self.rs_nonce.lock().unwrap_or_else(|e| e.into_inner()) = Some(nonce.clone());
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

    /// GETs JSON metadata: `Ok(None)` when the server has none there (any non-2xx).
    async fn get_json<T: DeserializeOwned>(&self, url: &str) -> Result<Option<T>, AuthError> {
        let mut request = self.http.get(url).header(ACCEPT, "application/json");
        if let Some(v) = &self.config.protocol_version {
            request = request.header("mcp-protocol-version", v);
        }
        let response = request.send().await.map_err(|e| http_error(url, e))?;
        if !response.status().is_success() {
            tracing::debug!(url, status = %response.status(), "no metadata");
            return Ok(None);
        }
        let body = response.bytes().await.map_err(|e| http_error(url, e))?;
        serde_json::from_slice(&body).map(Some).map_err(|e| AuthError::Discovery(format!("{url}: {e}")))
    }

    /// Finds the resource's metadata and its authorization server's.
    async fn discover(&self, challenge: &BearerChallenge) -> Result<Discovered, AuthError> {
        let mut candidates: Vec<String> = challenge.resource_metadata.iter().cloned().collect();
        candidates.extend(protected_resource_metadata_urls(&self.server_url)?);
        let mut resource = None;
        for url in &candidates {
            match self.get_json::<ProtectedResourceMetadata>(url).await {
                Ok(Some(found)) => {
                    resource = Some(found);
                    break;
                }
                Ok(None) => {}
                Err(e) => tracing::debug!("protected resource metadata at {url}: {e}"),
            }
        }
        let Some(resource) = resource else {
            // 2025-03-26: the MCP server's origin is the authorization server.
            let origin = origin_of(&self.server_url)?;
            let url = format!("{origin}/.well-known/oauth-authorization-server");
            let server = match self.get_json::<AuthorizationServerMetadata>(&url).await {
                // The 2025-03-26 revision did not tie the issuer to the metadata URL (servers
                // put theirs under a path): only the origin must be the server's own.
                Ok(Some(m)) if origin_of(&m.issuer).is_ok_and(|o| o == origin) => m,
                Ok(Some(m)) => return Err(AuthError::IssuerMismatch { expected: origin, found: m.issuer }),
                Ok(None) | Err(_) => AuthorizationServerMetadata::fallback(&origin),
            };
            return Ok(Discovered { resource: None, server });
        };
        if !resource_matches(&self.server_url, &resource.resource) {
            return Err(AuthError::ResourceMismatch { server: self.server_url.clone(), resource: resource.resource });
        }
        let issuer = resource.authorization_servers.first().cloned().ok_or_else(|| {
            AuthError::Discovery("the protected resource metadata names no authorization server".into())
        })?;
        let mut last_error = None;
        for url in authorization_server_metadata_urls(&issuer)? {
            match self.get_json::<AuthorizationServerMetadata>(&url).await {
                Ok(Some(server)) if server.issuer == issuer => {
                    return Ok(Discovered { resource: Some(resource), server })
                }
                Ok(Some(server)) => return Err(AuthError::IssuerMismatch { expected: issuer, found: server.issuer }),
                Ok(None) => {}
                Err(e) => last_error = Some(e),
            }
        }
        Err(last_error
            .unwrap_or_else(|| AuthError::Discovery(format!("no metadata found for authorization server {issuer}"))))
    }

    /// The client identity for the authorization server: pre-registered, already
    /// registered, a metadata document URL, or a new dynamic registration.
    async fn client_for(
        &self,
        st: &mut FlowState,
        server: &AuthorizationServerMetadata,
    ) -> Result<Registered, AuthError> {
        let issuer = &server.issuer;
        let configured = self
            .config
            .credentials
            .iter()
            .find(|c| c.issuer.as_deref() == Some(issuer))
            .or_else(|| self.config.credentials.iter().find(|c| c.issuer.is_none()));
        if let Some(c) = configured {
            return Ok(Registered { method: c.method_for(server), credentials: c.clone() });
        }
        if let Some(known) = st.clients.get(issuer) {
            return Ok(known.clone());
        }
        let cimd = self.config.client_metadata_url.as_ref().filter(|_| {
            server.client_id_metadata_document_supported == Some(true) && self.config.grant == Grant::AuthorizationCode
        });
        let registered = if let Some(url) = cimd {
            Registered { credentials: ClientCredentials::new(url.clone()), method: ClientAuthMethod::None }
        } else if let Some(endpoint) = &server.registration_endpoint {
            self.register(endpoint, server).await?
        } else {
            return Err(AuthError::NoClient(issuer.clone()));
        };
        st.clients.insert(issuer.clone(), registered.clone());
        Ok(registered)
    }

    /// Dynamic client registration (RFC 7591).
    async fn register(&self, endpoint: &str, server: &AuthorizationServerMetadata) -> Result<Registered, AuthError> {
        let requested = ["client_secret_basic", "client_secret_post", "none"]
            .into_iter()
            .find(|m| server.token_endpoint_auth_methods_supported.as_ref().is_some_and(|s| s.iter().any(|x| x == m)));
        let grant_types = match self.config.grant {
            Grant::AuthorizationCode => json!(["authorization_code", "refresh_token"]),
            Grant::ClientCredentials => json!(["client_credentials"]),
            Grant::JwtBearer => json!([JWT_BEARER_GRANT]),
        };
        let mut body = json!({
            "client_name": self.config.client_name,
            "redirect_uris": [self.config.redirect_uri],
            "grant_types": grant_types,
            "response_types": ["code"],
            "application_type": self.config.application_type(),
        });
        if let Some(m) = requested {
            body["token_endpoint_auth_method"] = json!(m);
        }
        let response = self
            .http
            .post(endpoint)
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "application/json")
            .body(body.to_string())
            .send()
            .await
            .map_err(|e| http_error(endpoint, e))?;
        let status = response.status();
        let text = response.text().await.map_err(|e| http_error(endpoint, e))?;
        if !status.is_success() {
            return Err(AuthError::Registration(format!("HTTP {status}: {}", oauth_error_text(&text))));
        }
        let r: RegistrationResponse =
            serde_json::from_str(&text).map_err(|e| AuthError::Registration(format!("unreadable answer: {e}")))?;
        let mut credentials = ClientCredentials::new(r.client_id).for_issuer(server.issuer.clone());
        credentials.client_secret = r.client_secret;
        credentials.auth_method = r.token_endpoint_auth_method.as_deref().and_then(ClientAuthMethod::parse);
        let method = credentials.method_for(server);
        Ok(Registered { credentials, method })
    }

    /// The authorization code grant with PKCE.
    async fn authorization_code(
        &self,
        discovered: &Discovered,
        client: &Registered,
        scopes: &[String],
    ) -> Result<TokenSet, AuthError> {
        let server = &discovered.server;
        if server.refuses_s256() {
            return Err(AuthError::PkceUnsupported);
        }
        let endpoint = server
            .authorization_endpoint
            .as_deref()
            .ok_or_else(|| AuthError::Discovery("the authorization server has no authorization_endpoint".into()))?;
        let mut url =
            Url::parse(endpoint).map_err(|e| AuthError::Url { url: endpoint.into(), reason: e.to_string() })?;
        let pkce = Pkce::generate();
        let state = random_token(32);
        let resource = discovered.resource.as_ref().map(|r| r.resource.as_str());
        {
            let mut q = url.query_pairs_mut();
            q.append_pair("response_type", "code")
                .append_pair("client_id", &client.credentials.client_id)
                .append_pair("redirect_uri", &self.config.redirect_uri)
                .append_pair("code_challenge", &pkce.challenge)
                .append_pair("code_challenge_method", S256)
                .append_pair("state", &state);
            if let Some(r) = resource {
                q.append_pair("resource", r);
            }
            if !scopes.is_empty() {
                q.append_pair("scope", &scopes.join(" "));
            }
        }
        let callback = self.authorizer.authorize(&url, &self.config.redirect_uri).await?;
        let iss_required = server.authorization_response_iss_parameter_supported == Some(true);
        let code = check_authorization_response(&callback, &state, &server.issuer, iss_required)?;
        let mut form = vec![
            ("grant_type", "authorization_code".to_owned()),
            ("code", code),
            ("redirect_uri", self.config.redirect_uri.clone()),
            ("code_verifier", pkce.verifier),
        ];
        if let Some(r) = resource {
            form.push(("resource", r.to_owned()));
        }
        self.token_request(server, client, form, scopes).await
    }

    /// A refresh (`Ok(None)` when there is no refresh token).
    async fn refresh(&self, session: &Session) -> Result<Option<TokenSet>, AuthError> {
        let Some(refresh_token) = self.tokens().and_then(|t| t.refresh_token) else { return Ok(None) };
        let mut form = vec![("grant_type", "refresh_token".to_owned()), ("refresh_token", refresh_token.clone())];
        if let Some(r) = &session.resource {
            form.push(("resource", r.clone()));
        }
        let mut tokens = self.token_request(&session.server, &session.client, form, &session.scopes).await?;
        tokens.refresh_token.get_or_insert(refresh_token);
        Ok(Some(tokens))
    }

    /// POSTs a token request with the client's authentication.
    async fn token_request(
        &self,
        server: &AuthorizationServerMetadata,
        client: &Registered,
        mut form: Vec<(&str, String)>,
        requested_scopes: &[String],
    ) -> Result<TokenSet, AuthError> {
        let endpoint = server
            .token_endpoint
            .as_deref()
            .ok_or_else(|| AuthError::Discovery("the authorization server has no token_endpoint".into()))?;
        let creds = &client.credentials;
        let mut authorization = None;
        match client.method {
            ClientAuthMethod::None => form.push(("client_id", creds.client_id.clone())),
            ClientAuthMethod::ClientSecretPost => {
                form.push(("client_id", creds.client_id.clone()));
                form.push(("client_secret", creds.client_secret.clone().unwrap_or_default()));
            }
            ClientAuthMethod::ClientSecretBasic => {
                let secret = creds.client_secret.as_deref().unwrap_or_default();
                let pair = format!("{}:{}", form_encode(&creds.client_id), form_encode(secret));
                authorization = Some(format!("Basic {}", STANDARD.encode(pair)));
            }
            ClientAuthMethod::PrivateKeyJwt => {
                let pem = creds
                    .private_key_pem
                    .as_deref()
                    .ok_or_else(|| AuthError::Config("private_key_jwt without a private key".into()))?;
                let alg = creds.signing_algorithm.as_deref().unwrap_or("ES256");
                let assertion = client_assertion(&creds.client_id, &server.issuer, pem, alg)?;
                form.push(("client_assertion_type", JWT_BEARER_ASSERTION_TYPE.to_owned()));
                form.push(("client_assertion", assertion));
            }
        }
        let mut headers: Vec<(&'static str, String)> =
            authorization.map(|a| vec![("authorization", a)]).unwrap_or_default();
        let dpop = self.dpop.as_ref().filter(|_| server.supports_dpop(DPOP_ALGORITHM));
        let mut retried = false;
        let value = loop {
            headers.retain(|(n, _)| *n != "dpop");
            if let Some(key) = dpop {
                let nonce = self.as_nonce.lock().unwrap_or_else(|e| e.into_inner()).clone();
                headers.push(("dpop", key.proof("POST", endpoint, None, nonce.as_deref())?));
            }
            let (result, nonce) = post_form(&self.http, endpoint, &headers, &form).await;
            if let Some(n) = &nonce {
                *self.as_nonce.lock().unwrap_or_else(|e| e.into_inner()) = Some(n.clone());
            }
            match result {
                // RFC 9449 §8: the server wants its nonce in the proof; once.
                Err(AuthError::Token { error, .. })
                    if error == "use_dpop_nonce" && dpop.is_some() && nonce.is_some() && !retried =>
                {
                    retried = true;
                }
                other => break other?,
            }
        };
        let r: TokenResponse = serde_json::from_value(value).map_err(|e| AuthError::Token {
            status: 200,
            error: format!("unreadable token response: {e}"),
            description: None,
        })?;
        let token_type = r.token_type.unwrap_or_else(|| "Bearer".into());
        let dpop_bound = dpop.is_some() && token_type.eq_ignore_ascii_case("dpop");
        if !token_type.eq_ignore_ascii_case("bearer") && !dpop_bound {
            return Err(AuthError::Token {
                status: 200,
                error: format!("unsupported token_type {token_type:?}"),
                description: None,
            });
        }
        Ok(TokenSet {
            access_token: r.access_token,
            token_type,
            refresh_token: r.refresh_token,
            expires_at: r
                .expires_in
                .filter(|s| s.is_finite() && *s >= 0.0)
                .map(|s| Instant::now() + Duration::from_secs_f64(s.min(1e9))),
            scopes: r.scope.as_deref().map(split_scopes).unwrap_or_else(|| requested_scopes.to_vec()),
            issuer: server.issuer.clone(),
        })
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

/// A short text for a failed OAuth answer: its `error` (and description), else its start.
fn oauth_error_text(body: &str) -> String {
    match serde_json::from_str::<Value>(body) {
        Ok(v) if v["error"].is_string() => {
            let d = v["error_description"].as_str().map(|d| format!(": {d}")).unwrap_or_default();
            format!("{}{d}", v["error"].as_str().unwrap_or_default())
        }
        _ => body.chars().take(200).collect(),
    }
}

impl AuthProvider for OAuthClient {
    fn headers<'a>(&'a self, request: AuthRequest<'a>) -> BoxFuture<'a, Vec<(String, String)>> {
        Box::pin(async move {
            let expiring = {
                let current = self.current.lock().unwrap_or_else(|e| e.into_inner());
                current.as_ref().is_some_and(|t| t.refresh_token.is_some() && t.expires_within(EXPIRY_MARGIN))
            };
            if expiring {
                self.refresh_if_expiring().await;
            }
            let (authorization, dpop_token) = {
                let current = self.current.lock().unwrap_or_else(|e| e.into_inner());
                let dpop_token = current.as_ref().filter(|t| t.is_dpop()).map(|t| t.access_token.clone());
                drop(current);
                (self.header(), dpop_token)
            };
            let Some(authorization) = authorization else { return Vec::new() };
            let mut headers = vec![("authorization".to_owned(), authorization)];
            if let (Some(key), Some(token)) = (&self.dpop, dpop_token) {
                let nonce = self.rs_nonce.lock().unwrap_or_else(|e| e.into_inner()).clone();
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

    fn server(json: Value) -> AuthorizationServerMetadata {
        serde_json::from_value(json).unwrap()
    }

    #[test]
    fn authorization_response_checks() {
        let ok = Url::parse("http://localhost:3000/callback?code=c&state=s&iss=https%3A%2F%2Fas").unwrap();
        assert_eq!(check_authorization_response(&ok, "s", "https://as", true).unwrap(), "c");
        assert!(matches!(check_authorization_response(&ok, "t", "https://as", true), Err(AuthError::StateMismatch)));
        // No normalization: a trailing slash is another issuer.
        assert!(matches!(
            check_authorization_response(&ok, "s", "https://as/", false),
            Err(AuthError::IssMismatch { .. })
        ));
        let no_iss = Url::parse("http://localhost:3000/callback?code=c&state=s").unwrap();
        assert!(check_authorization_response(&no_iss, "s", "https://as", false).is_ok());
        assert!(matches!(
            check_authorization_response(&no_iss, "s", "https://as", true),
            Err(AuthError::IssMismatch { found: None, .. })
        ));
        let denied = Url::parse("http://localhost:3000/callback?error=access_denied&state=s").unwrap();
        assert!(matches!(
            check_authorization_response(&denied, "s", "https://as", false),
            Err(AuthError::Authorization(_))
        ));
    }

    #[test]
    fn scope_selection() {
        let resource: ProtectedResourceMetadata = serde_json::from_value(
            json!({"resource": "https://r", "authorization_servers": ["https://as"], "scopes_supported": ["a", "b"]}),
        )
        .unwrap();
        let plain = server(json!({"issuer": "https://as"}));
        let offline = server(json!({"issuer": "https://as", "scopes_supported": ["a", "offline_access"]}));
        let challenged = BearerChallenge { scope: Some("x".into()), ..Default::default() };
        let none = BearerChallenge::default();
        assert_eq!(select_scopes(&challenged, Some(&resource), &plain, None, true), ["x"]);
        assert_eq!(select_scopes(&none, Some(&resource), &plain, None, true), ["a", "b"]);
        assert!(select_scopes(&none, None, &plain, None, true).is_empty());
        assert_eq!(select_scopes(&none, Some(&resource), &offline, None, true), ["a", "b", "offline_access"]);
        assert_eq!(select_scopes(&none, Some(&resource), &offline, None, false), ["a", "b"]);
        let previous = ["a".to_owned(), "x".to_owned()];
        let step_up = BearerChallenge { scope: Some("x y".into()), ..Default::default() };
        assert_eq!(select_scopes(&step_up, Some(&resource), &plain, Some(&previous), true), ["a", "x", "y"]);
    }

    #[test]
    fn auth_method_choice() {
        let basic_only = server(json!({"issuer": "i"}));
        let post =
            server(json!({"issuer": "i", "token_endpoint_auth_methods_supported": ["client_secret_post", "none"]}));
        let none = server(json!({"issuer": "i", "token_endpoint_auth_methods_supported": ["none"]}));
        let secret = ClientCredentials::new("c").secret("s");
        assert_eq!(secret.method_for(&basic_only), ClientAuthMethod::ClientSecretBasic);
        assert_eq!(secret.method_for(&post), ClientAuthMethod::ClientSecretPost);
        assert_eq!(secret.method_for(&none), ClientAuthMethod::None);
        assert_eq!(ClientCredentials::new("c").method_for(&basic_only), ClientAuthMethod::None);
        assert_eq!(
            ClientCredentials::new("c").private_key("k", "ES256").method_for(&none),
            ClientAuthMethod::PrivateKeyJwt
        );
        assert_eq!(
            secret.clone().auth_method(ClientAuthMethod::ClientSecretPost).method_for(&none),
            ClientAuthMethod::ClientSecretPost
        );
        assert_eq!(ClientAuthMethod::parse("private_key_jwt").map(ClientAuthMethod::as_str), Some("private_key_jwt"));
    }

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

    #[test]
    fn basic_credentials_are_form_encoded() {
        assert_eq!(form_encode("a b:c/é"), "a+b%3Ac%2F%C3%A9");
    }
}
