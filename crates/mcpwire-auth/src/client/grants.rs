//! Running the grants: authorization code with PKCE, refresh, and the token request they
//! all end with (client authentication, DPoP).

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use url::Url;

use super::discovery::Discovered;
use super::http::{form_encode, post_form};
use super::registration::Registered;
use super::tokens::read_token_response;
use super::{check_authorization_response, ClientAuthMethod, OAuthClient, Session, TokenSet};
use crate::dpop::DPOP_ALGORITHM;
use crate::jwt::{client_assertion, JWT_BEARER_ASSERTION_TYPE};
use crate::metadata::AuthorizationServerMetadata;
use crate::pkce::{random_token, Pkce, S256};
use crate::AuthError;

impl OAuthClient {
    /// The authorization code grant with PKCE.
    pub(super) async fn authorization_code(
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
            // OpenID Connect grants offline access (a refresh token) only on a consent prompt.
            if scopes.iter().any(|s| s == super::OFFLINE_ACCESS) {
                q.append_pair("prompt", "consent");
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
    pub(super) async fn refresh(&self, session: &Session) -> Result<Option<TokenSet>, AuthError> {
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
    pub(super) async fn token_request(
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
                let nonce = self.as_nonce.lock().clone();
                headers.push(("dpop", key.proof("POST", endpoint, None, nonce.as_deref())?));
            }
            let (result, nonce) = post_form(&self.http, endpoint, &headers, &form).await;
            if let Some(n) = &nonce {
                *self.as_nonce.lock() = Some(n.clone());
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
        read_token_response(value, dpop.is_some(), &server.issuer, requested_scopes)
    }
}
