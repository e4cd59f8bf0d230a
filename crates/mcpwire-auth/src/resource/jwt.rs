//! JWT access tokens (RFC 9068) checked against the issuer's published keys.

use std::collections::HashSet;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use futures::future::BoxFuture;
use jsonwebtoken::jwk::{AlgorithmParameters, Jwk, JwkSet};
use jsonwebtoken::{errors::ErrorKind, Algorithm, DecodingKey, Validation};
use mcpwire_protocol::Principal;
use parking_lot::Mutex;
use serde_json::{Map, Value};
use tokio::sync::Mutex as AsyncMutex;

use super::availability::Availability;
use super::claims;
use super::clock::Clock;
use super::fetch::{self, Fetcher};
use super::remembered::Remembered;
use super::verifier::{TokenError, TokenVerifier};
use super::MAX_TOKEN_LEN;

/// The signature algorithms accepted: asymmetric only (`none` and HMAC are refused: a
/// resource server holds no shared secret with the issuer).
const ALGORITHMS: &[Algorithm] = &[
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::EdDSA,
];

/// The `typ` of JWT access tokens (RFC 9068 §2.1), with and without its `application/`.
const ACCESS_TOKEN_TYPES: &[&str] = &["at+jwt", "application/at+jwt"];

/// Checks JWT access tokens: the signature against the issuer's JWKS (fetched when first
/// needed, kept, fetched again when a token names a key it does not hold, at most once per
/// [`Self::refetch_interval`]), the `typ` (`at+jwt`), the issuer, the audience (this
/// server's resource identifier: a token issued for another resource is refused, RFC 8707),
/// expiry and not-before with a small leeway. A token verified is remembered (by its hash)
/// for [`Self::remember_for`], never past its expiry: the requests that follow cost no
/// signature check.
///
/// Made with [`Self::discovering`], it reads the issuer's metadata when first needed: it can
/// be made while the authorization server cannot be reached yet (requests that need it are
/// then refused as [`TokenError::Unavailable`], answered `503`), and serves once it answers.
/// A failure to reach the authorization server is tried again after
/// [`RETRY_AFTER`](super::RETRY_AFTER) at the soonest (the requests in between are refused at
/// once), and logged once per streak of failures.
#[derive(Clone)]
pub struct JwtVerifier {
    inner: Arc<Inner>,
}

struct Inner {
    issuer: String,
    audience: String,
    /// Set at once by [`JwtVerifier::new`], or read from the issuer's metadata when first
    /// needed.
    jwks_uri: OnceLock<String>,
    leeway: u64,
    refetch_interval: u64,
    remember_for: u64,
    require_type: bool,
    clock: Clock,
    fetcher: Fetcher,
    availability: Availability,
    keys: Mutex<Option<Arc<JwkSet>>>,
    remembered: Remembered,
    /// When the keys were last fetched (clock seconds), held while fetching so that one
    /// fetch serves every request that waits on it.
    fetched: AsyncMutex<Option<u64>>,
}

impl JwtVerifier {
    /// Tokens of `issuer`, signed by the keys at `jwks_uri`, for the resource `audience`
    /// (this server's canonical URL, as clients ask for it with `resource=`).
    pub fn new(issuer: impl Into<String>, audience: impl Into<String>, jwks_uri: impl Into<String>) -> Self {
        Self::build(issuer.into(), audience.into(), OnceLock::from(jwks_uri.into()))
    }

    /// Tokens of `issuer` for the resource `audience`, the issuer's `jwks_uri` read from its
    /// metadata (RFC 8414, then OpenID Connect Discovery, which must name the same issuer)
    /// when first needed, not now: nothing is fetched until a token comes (or
    /// [`TokenVerifier::prepare`]).
    pub fn discovering(issuer: impl Into<String>, audience: impl Into<String>) -> Self {
        Self::build(issuer.into(), audience.into(), OnceLock::new())
    }

    /// Finds the issuer's `jwks_uri` in its metadata (RFC 8414, then OpenID Connect
    /// Discovery), checking that the metadata names the same issuer, and fetches its keys:
    /// `Err` if it cannot. ([`Self::discovering`] waits for the first token instead.)
    pub async fn discover(issuer: impl Into<String>, audience: impl Into<String>) -> Result<Self, TokenError> {
        let verifier = Self::discovering(issuer, audience);
        verifier.refetch(false).await?;
        Ok(verifier)
    }

    fn build(issuer: String, audience: String, jwks_uri: OnceLock<String>) -> Self {
        Self {
            inner: Arc::new(Inner {
                availability: Availability::new(issuer.clone()),
                issuer,
                audience,
                jwks_uri,
                leeway: 30,
                refetch_interval: 30,
                remember_for: 60,
                require_type: true,
                clock: Clock::system(),
                fetcher: Fetcher::default(),
                keys: Mutex::new(None),
                remembered: Remembered::default(),
                fetched: AsyncMutex::new(None),
            }),
        }
    }

    fn with(mut self, f: impl FnOnce(&mut Inner)) -> Self {
        let inner = Arc::get_mut(&mut self.inner).expect("configured before it is shared");
        f(inner);
        self
    }

    /// How far past `exp` (or before `nbf`) a token is still taken, for clocks that differ
    /// (30 s by default).
    pub fn leeway(self, leeway: Duration) -> Self {
        self.with(|i| i.leeway = leeway.as_secs())
    }

    /// How long after fetching the keys an unknown `kid` may make them be fetched again (30 s
    /// by default): a flood of tokens with made-up key ids costs the issuer one request per
    /// interval.
    pub fn refetch_interval(self, interval: Duration) -> Self {
        self.with(|i| i.refetch_interval = interval.as_secs())
    }

    /// How long a verified token is remembered (60 s by default, never past its expiry; zero:
    /// every request checks the signature). A key the issuer withdraws stops a remembered
    /// token only once this has passed.
    pub fn remember_for(self, duration: Duration) -> Self {
        self.with(|i| i.remember_for = duration.as_secs())
    }

    /// Takes tokens whatever their `typ` (by default only `at+jwt` ones: RFC 9068 access
    /// tokens, so that an ID token cannot pass for one). For issuers that do not type their
    /// access tokens.
    pub fn accept_untyped(self) -> Self {
        self.with(|i| i.require_type = false)
    }

    /// Reads time from `clock` (expiry, refetch interval).
    pub fn clock(self, clock: Clock) -> Self {
        self.with(|i| i.clock = clock)
    }

    /// The issuer trusted.
    pub fn issuer(&self) -> &str {
        &self.inner.issuer
    }

    async fn verify_token(&self, token: &str) -> Result<Principal, TokenError> {
        let inner = &self.inner;
        if token.len() > MAX_TOKEN_LEN {
            return Err(TokenError::Malformed(format!("longer than {MAX_TOKEN_LEN} bytes")));
        }
        let key = Remembered::key(token);
        let now = inner.clock.now();
        if let Some(principal) = inner.remembered.get(&key, now) {
            return Ok(principal);
        }
        let header = jsonwebtoken::decode_header(token).map_err(|e| TokenError::Malformed(e.to_string()))?;
        if !ALGORITHMS.contains(&header.alg) {
            return Err(TokenError::Malformed(format!("the algorithm {:?} is not accepted", header.alg)));
        }
        if inner.require_type {
            let typ = header.typ.as_deref().map(str::to_ascii_lowercase);
            if !typ.as_deref().is_some_and(|t| ACCESS_TOKEN_TYPES.contains(&t)) {
                return Err(TokenError::WrongType(header.typ));
            }
        }
        let jwk = self.key(header.kid.as_deref(), header.alg).await?;
        let decoding = DecodingKey::from_jwk(&jwk).map_err(|_| TokenError::UnknownKey)?;
        let mut validation = Validation::new(header.alg);
        // Time, audience and issuer are judged below, by this verifier's clock and rules.
        validation.validate_exp = false;
        validation.validate_aud = false;
        validation.required_spec_claims = HashSet::new();
        let data =
            jsonwebtoken::decode::<Map<String, Value>>(token, &decoding, &validation).map_err(|e| match e.kind() {
                ErrorKind::InvalidSignature => TokenError::BadSignature,
                _ => TokenError::Malformed(e.to_string()),
            })?;
        let claims = data.claims;
        if claims.get("iss").and_then(Value::as_str) != Some(inner.issuer.as_str()) {
            return Err(TokenError::WrongIssuer);
        }
        if !claims::audience_names(&claims, &inner.audience) {
            return Err(TokenError::WrongAudience);
        }
        let stands_until = match claims.get("exp").and_then(Value::as_u64) {
            Some(exp) if now <= exp.saturating_add(inner.leeway) => exp.saturating_add(inner.leeway).saturating_add(1),
            Some(_) => return Err(TokenError::Expired),
            None => return Err(TokenError::Malformed("no exp claim".into())),
        };
        if claims.get("nbf").and_then(Value::as_u64).is_some_and(|nbf| now.saturating_add(inner.leeway) < nbf) {
            return Err(TokenError::Expired);
        }
        let principal = claims::principal(claims);
        let until = now.saturating_add(inner.remember_for).min(stands_until);
        inner.remembered.put(key, &principal, until, now);
        Ok(principal)
    }

    /// The key `kid` names (or the only key that fits `alg`, when the token names none),
    /// fetching the keys when there are none yet or when `kid` is unknown and the last fetch
    /// is old enough.
    async fn key(&self, kid: Option<&str>, alg: Algorithm) -> Result<Jwk, TokenError> {
        let held = self.inner.keys.lock().clone();
        if let Some(jwk) = held.as_deref().and_then(|keys| find(keys, kid, alg)) {
            return Ok(jwk);
        }
        let keys = self.refetch(held.is_some()).await?;
        find(&keys, kid, alg).ok_or(TokenError::UnknownKey)
    }

    /// Fetches the keys, unless another request just did (then its keys), or unless they
    /// were fetched less than the refetch interval ago (then the keys held), or unless the
    /// authorization server could not be reached a moment ago (then that failure). Reads the
    /// issuer's metadata first when the `jwks_uri` is not known yet.
    async fn refetch(&self, had_keys: bool) -> Result<Arc<JwkSet>, TokenError> {
        let inner = &self.inner;
        let mut fetched = inner.fetched.lock().await;
        let now = inner.clock.now();
        let held = inner.keys.lock().clone();
        match (had_keys, *fetched, held) {
            (true, Some(at), Some(keys)) if now < at.saturating_add(inner.refetch_interval) => return Ok(keys),
            // Fetched by the request this one waited on.
            (false, Some(_), Some(keys)) => return Ok(keys),
            _ => {}
        }
        inner.availability.check()?;
        let keys: JwkSet = inner.availability.note(self.fetch_keys().await)?;
        let keys = Arc::new(keys);
        *inner.keys.lock() = Some(keys.clone());
        *fetched = Some(now);
        Ok(keys)
    }

    /// The issuer's keys, its metadata read first if need be.
    async fn fetch_keys(&self) -> Result<JwkSet, TokenError> {
        let inner = &self.inner;
        let jwks_uri = match inner.jwks_uri.get() {
            Some(uri) => uri,
            None => {
                let metadata = fetch::issuer_metadata(&inner.fetcher, &inner.issuer).await?;
                let uri = metadata.get("jwks_uri").and_then(Value::as_str).ok_or_else(|| {
                    TokenError::Unavailable(format!("the metadata of {} has no jwks_uri", inner.issuer))
                })?;
                inner.jwks_uri.get_or_init(|| uri.to_owned())
            }
        };
        inner.fetcher.get_json(jwks_uri).await
    }
}

/// The key of `kid`, or without a `kid` the one key whose type fits `alg`; never a key whose
/// own `alg` says otherwise, or that is for encryption.
fn find(keys: &JwkSet, kid: Option<&str>, alg: Algorithm) -> Option<Jwk> {
    let fits = |k: &&Jwk| {
        use Algorithm as A;
        let family = match &k.algorithm {
            AlgorithmParameters::RSA(_) => {
                matches!(alg, A::RS256 | A::RS384 | A::RS512 | A::PS256 | A::PS384 | A::PS512)
            }
            AlgorithmParameters::EllipticCurve(_) => matches!(alg, A::ES256 | A::ES384),
            AlgorithmParameters::OctetKeyPair(_) => alg == A::EdDSA,
            AlgorithmParameters::OctetKey(_) => false,
        };
        let alg_ok = k.common.key_algorithm.is_none_or(|ka| ka.to_string() == format!("{alg:?}"));
        let use_ok = !matches!(k.common.public_key_use, Some(jsonwebtoken::jwk::PublicKeyUse::Encryption));
        family && alg_ok && use_ok
    };
    match kid {
        Some(kid) => keys.keys.iter().filter(|k| k.common.key_id.as_deref() == Some(kid)).find(fits).cloned(),
        None => {
            let mut fitting = keys.keys.iter().filter(fits);
            let one = fitting.next()?;
            fitting.next().is_none().then(|| one.clone())
        }
    }
}

impl TokenVerifier for JwtVerifier {
    fn verify<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<Principal, TokenError>> {
        Box::pin(self.verify_token(token))
    }

    /// Reads the issuer's metadata (if not done yet) and fetches its keys (if none are held).
    fn prepare(&self) -> BoxFuture<'_, Result<(), TokenError>> {
        Box::pin(async move {
            let held = self.inner.keys.lock().is_some();
            if !held {
                self.refetch(false).await?;
            }
            Ok(())
        })
    }
}

impl std::fmt::Debug for JwtVerifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JwtVerifier")
            .field("issuer", &self.inner.issuer)
            .field("audience", &self.inner.audience)
            .field("jwks_uri", &self.inner.jwks_uri.get())
            .finish_non_exhaustive()
    }
}
