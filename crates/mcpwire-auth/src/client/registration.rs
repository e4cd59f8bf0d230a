//! The client identity at an authorization server: pre-registered credentials, a client ID
//! metadata document URL, or dynamic registration (RFC 7591).

use reqwest::header::{ACCEPT, CONTENT_TYPE};
use serde::Deserialize;
use serde_json::json;

use super::http::{http_error, oauth_error_text};
use super::{ClientAuthMethod, ClientCredentials, FlowState, Grant, OAuthClient, JWT_BEARER_GRANT};
use crate::metadata::AuthorizationServerMetadata;
use crate::AuthError;

/// The client identity in use at one issuer.
#[derive(Clone)]
pub(super) struct Registered {
    pub(super) credentials: ClientCredentials,
    pub(super) method: ClientAuthMethod,
}

#[derive(Deserialize)]
struct RegistrationResponse {
    client_id: String,
    #[serde(default)]
    client_secret: Option<String>,
    #[serde(default)]
    token_endpoint_auth_method: Option<String>,
}

impl OAuthClient {
    /// The client identity for the authorization server: pre-registered, already
    /// registered, a metadata document URL, or a new dynamic registration.
    pub(super) async fn client_for(
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
}
