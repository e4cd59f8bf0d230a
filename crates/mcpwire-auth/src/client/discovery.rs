//! Discovery: the protected resource metadata (RFC 9728) and its authorization server's
//! metadata (RFC 8414, OpenID Connect), or a 2025-03-26 server's own origin.

use reqwest::header::ACCEPT;
use serde::de::DeserializeOwned;

use super::http::http_error;
use super::OAuthClient;
use crate::challenge::BearerChallenge;
use crate::metadata::{
    authorization_server_metadata_urls, origin_of, protected_resource_metadata_urls, resource_matches,
    AuthorizationServerMetadata, ProtectedResourceMetadata,
};
use crate::AuthError;

/// What discovery found for the server.
#[derive(Debug, Clone)]
pub(super) struct Discovered {
    pub(super) resource: Option<ProtectedResourceMetadata>,
    pub(super) server: AuthorizationServerMetadata,
}

impl OAuthClient {
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
    pub(super) async fn discover(&self, challenge: &BearerChallenge) -> Result<Discovered, AuthError> {
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
}
