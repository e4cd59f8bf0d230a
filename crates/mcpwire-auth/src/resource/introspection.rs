//! Opaque access tokens, asked of the authorization server (RFC 7662 introspection), with a
//! short cache.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use futures::future::BoxFuture;
use mcpwire_protocol::Principal;
use serde_json::{Map, Value};
use tokio::sync::Mutex as AsyncMutex;

use super::availability::Availability;
use super::claims;
use super::clock::Clock;
use super::fetch::{self, Fetcher};
use super::remembered::Remembered;
use super::verifier::{TokenError, TokenVerifier};
use super::MAX_TOKEN_LEN;

/// Checks tokens by asking the authorization server's introspection endpoint, authenticated
/// as this resource server's own client. A token is taken when it is `active`, of the
/// trusted issuer (when the answer names one), for this resource (`aud`, RFC 8707) and not
/// expired. Answers are cached by a hash of the token for [`Self::cache_for`] (and never past
/// the token's expiry), so that a client's burst of requests costs one introspection.
///
/// Made with [`Self::discovering`], it reads the issuer's metadata when first needed, so that
/// it can be made while the authorization server cannot be reached yet. A failure to reach
/// it is tried again after [`RETRY_AFTER`](super::RETRY_AFTER) at the soonest (requests in
/// between are refused at once, `503`) and logged once per streak of failures.
#[derive(Clone)]
pub struct IntrospectionVerifier {
    inner: Arc<Inner>,
}

struct Inner {
    /// Given, or read from the issuer's metadata when first needed.
    endpoint: OnceLock<String>,
    /// Held while the metadata is read, so that one reading serves the requests waiting.
    discovery: AsyncMutex<()>,
    availability: Availability,
    issuer: Option<String>,
    audience: String,
    client_id: String,
    client_secret: String,
    cache_for: u64,
    clock: Clock,
    fetcher: Fetcher,
    cache: Remembered,
}

impl IntrospectionVerifier {
    /// Tokens checked at `endpoint`, authenticated with `client_id` and `client_secret`
    /// (HTTP Basic), taken only for the resource `audience`.
    pub fn new(
        endpoint: impl Into<String>,
        audience: impl Into<String>,
        client_id: impl Into<String>,
        client_secret: impl Into<String>,
    ) -> Self {
        let endpoint = endpoint.into();
        let label = endpoint.clone();
        Self::build(OnceLock::from(endpoint), label, None, audience.into(), client_id.into(), client_secret.into())
    }

    /// Tokens of `issuer`, checked at the `introspection_endpoint` its metadata names, read
    /// when first needed, not now (nothing is fetched until a token comes, or
    /// [`TokenVerifier::prepare`]); tokens it says another issuer made are refused.
    pub fn discovering(
        issuer: impl Into<String>,
        audience: impl Into<String>,
        client_id: impl Into<String>,
        client_secret: impl Into<String>,
    ) -> Self {
        let issuer = issuer.into();
        let (id, secret) = (client_id.into(), client_secret.into());
        Self::build(OnceLock::new(), issuer.clone(), Some(issuer), audience.into(), id, secret)
    }

    /// Finds the issuer's `introspection_endpoint` in its metadata now: `Err` if it cannot
    /// ([`Self::discovering`] waits for the first token instead). Tokens it says another
    /// issuer made are refused.
    pub async fn discover(
        issuer: impl Into<String>,
        audience: impl Into<String>,
        client_id: impl Into<String>,
        client_secret: impl Into<String>,
    ) -> Result<Self, TokenError> {
        let verifier = Self::discovering(issuer, audience, client_id, client_secret);
        verifier.endpoint().await?;
        Ok(verifier)
    }

    fn build(
        endpoint: OnceLock<String>,
        label: String,
        issuer: Option<String>,
        audience: String,
        id: String,
        secret: String,
    ) -> Self {
        Self {
            inner: Arc::new(Inner {
                endpoint,
                discovery: AsyncMutex::new(()),
                availability: Availability::new(label),
                issuer,
                audience,
                client_id: id,
                client_secret: secret,
                cache_for: 30,
                clock: Clock::system(),
                fetcher: Fetcher::default(),
                cache: Remembered::default(),
            }),
        }
    }

    fn with(mut self, f: impl FnOnce(&mut Inner)) -> Self {
        let inner = Arc::get_mut(&mut self.inner).expect("configured before it is shared");
        f(inner);
        self
    }

    /// How long an answer is kept (30 s by default; zero: every request asks). A revoked
    /// token is taken until its answer expires.
    pub fn cache_for(self, duration: Duration) -> Self {
        self.with(|i| i.cache_for = duration.as_secs())
    }

    /// Reads time from `clock` (expiry, cache).
    pub fn clock(self, clock: Clock) -> Self {
        self.with(|i| i.clock = clock)
    }

    /// The introspection endpoint, read from the issuer's metadata if not known yet (unless
    /// the authorization server could not be reached a moment ago: then that failure).
    async fn endpoint(&self) -> Result<&str, TokenError> {
        let inner = &self.inner;
        if let Some(endpoint) = inner.endpoint.get() {
            return Ok(endpoint);
        }
        let _reading = inner.discovery.lock().await;
        if let Some(endpoint) = inner.endpoint.get() {
            return Ok(endpoint);
        }
        inner.availability.check()?;
        // Only `discovering` leaves the endpoint unknown, and it names the issuer.
        let issuer = inner.issuer.as_deref().unwrap_or_default();
        let metadata = inner.availability.note(fetch::issuer_metadata(&inner.fetcher, issuer).await)?;
        let endpoint = metadata
            .get("introspection_endpoint")
            .and_then(Value::as_str)
            .ok_or_else(|| TokenError::Unavailable(format!("the metadata of {issuer} has no introspection_endpoint")));
        let endpoint = inner.availability.note(endpoint)?;
        Ok(inner.endpoint.get_or_init(|| endpoint.to_owned()))
    }

    async fn verify_token(&self, token: &str) -> Result<Principal, TokenError> {
        let inner = &self.inner;
        if token.is_empty() || token.len() > MAX_TOKEN_LEN {
            return Err(TokenError::Malformed(format!("empty or longer than {MAX_TOKEN_LEN} bytes")));
        }
        let key = Remembered::key(token);
        let now = inner.clock.now();
        if let Some(principal) = inner.cache.get(&key, now) {
            return Ok(principal);
        }
        let form = [("token", token), ("token_type_hint", "access_token")];
        let client = Some((inner.client_id.as_str(), inner.client_secret.as_str()));
        let endpoint = self.endpoint().await?;
        inner.availability.check()?;
        let answer: Map<String, Value> =
            inner.availability.note(inner.fetcher.post_form(endpoint, &form, client).await)?;
        if answer.get("active").and_then(Value::as_bool) != Some(true) {
            return Err(TokenError::Inactive);
        }
        if let (Some(issuer), Some(named)) = (&inner.issuer, answer.get("iss").and_then(Value::as_str)) {
            if named != issuer {
                return Err(TokenError::WrongIssuer);
            }
        }
        if !claims::audience_names(&answer, &inner.audience) {
            return Err(TokenError::WrongAudience);
        }
        let exp = answer.get("exp").and_then(Value::as_u64);
        if exp.is_some_and(|exp| exp <= now) {
            return Err(TokenError::Expired);
        }
        let principal = claims::principal(answer);
        let until = now.saturating_add(inner.cache_for).min(exp.unwrap_or(u64::MAX));
        inner.cache.put(key, &principal, until, now);
        Ok(principal)
    }
}

impl TokenVerifier for IntrospectionVerifier {
    fn verify<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Principal, TokenError>> {
        Box::pin(self.verify_token(token))
    }

    /// Reads the issuer's metadata, if not done yet.
    fn prepare(&self) -> BoxFuture<'_, Result<(), TokenError>> {
        Box::pin(async move { self.endpoint().await.map(drop) })
    }
}

impl std::fmt::Debug for IntrospectionVerifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IntrospectionVerifier")
            .field("endpoint", &self.inner.endpoint.get())
            .field("audience", &self.inner.audience)
            .field("client_id", &self.inner.client_id)
            .finish_non_exhaustive()
    }
}
