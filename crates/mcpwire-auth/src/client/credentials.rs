//! The client's identity at an authorization server and how it authenticates at the token
//! endpoint.

use crate::metadata::AuthorizationServerMetadata;

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
    pub(super) fn method_for(&self, metadata: &AuthorizationServerMetadata) -> ClientAuthMethod {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::tests::server;
    use serde_json::json;

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
}
