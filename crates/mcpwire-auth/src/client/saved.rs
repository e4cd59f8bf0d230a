//! What an [`OAuthClient`] holds that may outlive its process: the tokens, and what
//! refreshing them needs (the issuer's metadata, the client identity, the resource, the
//! scopes). An application stores it (the `mcp` CLI does, per server, owner-only) and gives it
//! back to the next client of the same server.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use super::registration::Registered;
use super::{ClientAuthMethod, ClientCredentials, OAuthClient, Session, TokenSet};
use crate::metadata::AuthorizationServerMetadata;

/// An authorization to keep: tokens and what refreshing them needs. It holds secrets (the
/// tokens, a client secret): store it where only its owner can read it.
#[derive(Clone, Serialize, Deserialize)]
pub struct SavedAuthorization {
    /// The access token.
    pub access_token: String,
    /// `Bearer` (DPoP-bound tokens are not saved: their key lives with the process).
    pub token_type: String,
    /// The refresh token, if one was issued.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<String>,
    /// When the access token expires, in seconds since the Unix epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<u64>,
    /// The scopes granted.
    #[serde(default)]
    pub scopes: Vec<String>,
    /// The resource the tokens are for (RFC 8707).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<String>,
    /// The client identifier at the issuer.
    pub client_id: String,
    /// Its secret, for a confidential client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    /// How it authenticates at the token endpoint.
    pub client_auth_method: String,
    /// The authorization server's metadata (its issuer, its token endpoint).
    pub server: AuthorizationServerMetadata,
}

impl std::fmt::Debug for SavedAuthorization {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SavedAuthorization")
            .field("issuer", &self.server.issuer)
            .field("client_id", &self.client_id)
            .field("scopes", &self.scopes)
            .field("expires_at", &self.expires_at)
            .field("refresh_token", &self.refresh_token.as_ref().map(|_| "<redacted>"))
            .finish_non_exhaustive()
    }
}

impl SavedAuthorization {
    /// The issuer of the tokens.
    pub fn issuer(&self) -> &str {
        &self.server.issuer
    }

    /// Whether the access token has expired at `now` (seconds since the Unix epoch).
    pub fn expired_at(&self, now: u64) -> bool {
        self.expires_at.is_some_and(|at| at <= now)
    }
}

fn unix_now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or_default()
}

impl OAuthClient {
    /// The authorization in use, to keep (`None` before one was obtained, or when its token
    /// is DPoP-bound).
    pub async fn saved(&self) -> Option<SavedAuthorization> {
        let st = self.flow.lock().await;
        let session = st.session.as_ref()?;
        let tokens = self.tokens().filter(|t| !t.is_dpop())?;
        let expires_at = tokens.expires_at.map(|at| {
            let left = at.saturating_duration_since(Instant::now());
            unix_now().saturating_add(left.as_secs())
        });
        Some(SavedAuthorization {
            access_token: tokens.access_token,
            token_type: tokens.token_type,
            refresh_token: tokens.refresh_token,
            expires_at,
            scopes: tokens.scopes,
            resource: session.resource.clone(),
            client_id: session.client.credentials.client_id.clone(),
            client_secret: session.client.credentials.client_secret.clone(),
            client_auth_method: session.client.method.as_str().to_owned(),
            server: session.server.clone(),
        })
    }

    /// Takes up a saved authorization: its token is sent from now on, refreshed with its
    /// refresh token when it expires or is refused, and a new authorization starts only when
    /// that fails.
    pub async fn restore(&self, saved: SavedAuthorization) {
        let mut st = self.flow.lock().await;
        let left = saved.expires_at.map(|at| Duration::from_secs(at.saturating_sub(unix_now())));
        let issuer = saved.server.issuer.clone();
        let method = ClientAuthMethod::parse(&saved.client_auth_method).unwrap_or(ClientAuthMethod::None);
        let mut credentials = ClientCredentials::new(saved.client_id);
        credentials.client_secret = saved.client_secret;
        credentials.issuer = Some(issuer.clone());
        let client = Registered { credentials, method };
        st.clients.insert(issuer.clone(), client.clone());
        st.session =
            Some(Session { server: saved.server, resource: saved.resource, client, scopes: saved.scopes.clone() });
        self.set_tokens(TokenSet {
            access_token: saved.access_token,
            token_type: saved.token_type,
            refresh_token: saved.refresh_token,
            expires_at: left.map(|left| Instant::now() + left),
            scopes: saved.scopes,
            issuer,
        });
    }
}
