//! The tokens a token endpoint issues: [`TokenSet`], read from the endpoint's answer.

use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::Value;

use crate::challenge::split_scopes;
use crate::AuthError;

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

/// Reads the successful answer of a token endpoint of `issuer` into a [`TokenSet`]: its
/// `token_type` must be `Bearer`, or `DPoP` when the request carried a DPoP proof (`dpop`);
/// without a `scope`, the tokens have the `requested_scopes`.
pub(super) fn read_token_response(
    value: Value,
    dpop: bool,
    issuer: &str,
    requested_scopes: &[String],
) -> Result<TokenSet, AuthError> {
    let r: TokenResponse = serde_json::from_value(value).map_err(|e| AuthError::Token {
        status: 200,
        error: format!("unreadable token response: {e}"),
        description: None,
    })?;
    let token_type = r.token_type.unwrap_or_else(|| "Bearer".into());
    let dpop_bound = dpop && token_type.eq_ignore_ascii_case("dpop");
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
        issuer: issuer.to_owned(),
    })
}
