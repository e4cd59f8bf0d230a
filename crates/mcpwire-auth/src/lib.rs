//! OAuth 2.1 for MCP. The server side, an MCP server as a protected resource, is
//! [`resource`] ([`ResourceServer`]). The client side: an [`OAuthClient`] that the HTTP transport consults for
//! the `Authorization` header of each request and for each 401/403 answer
//! ([`mcpwire_transport::http::AuthProvider`]).
//!
//! What it does, per the MCP authorization specification (2025-03-26 to 2026-07-28):
//! - **Discovery**: the `WWW-Authenticate` challenge ([`BearerChallenge`]); protected
//!   resource metadata (RFC 9728) from `resource_metadata` or the well-known URLs, refused
//!   unless its `resource` covers the server's URL; the first authorization server's
//!   metadata (RFC 8414 with path insertion, then OpenID Connect Discovery), refused
//!   unless its `issuer` is the one asked for; for 2025-03-26 servers without resource
//!   metadata, the server origin's metadata or its `/authorize`, `/token`, `/register`.
//! - **Client identity**, per issuer: pre-registered [`ClientCredentials`], else a client ID
//!   metadata document URL, else dynamic registration (RFC 7591, `application_type`,
//!   `refresh_token` among the grant types); `client_secret_basic`, `client_secret_post`,
//!   `none` or `private_key_jwt` at the token endpoint as the server offers.
//! - **Grants**: authorization code with PKCE S256, `state`, the RFC 8707 `resource`
//!   exactly as the metadata gives it, and RFC 9207 `iss` checking, through an
//!   [`Authorizer`] (a browser, or [`HeadlessAuthorizer`]); client credentials, with a
//!   secret or a signed JWT assertion; the JWT bearer grant with an ID-JAG from an
//!   enterprise identity provider ([`IdJagExchange`], SEP-990); refresh tokens; DPoP
//!   (RFC 9449) sender-constrained tokens where the authorization server offers them,
//!   with server nonces at both the token endpoint and the MCP server.
//! - **Scopes**: the challenge's, else the resource's `scopes_supported`, else none;
//!   `offline_access` when the authorization server lists it; on 403
//!   `insufficient_scope`, the union of the old and the new scopes, at most
//!   [`OAuthConfig::max_attempts`] authorizations for one request.
//! - **Native applications**: [`native_client`] makes the client of a server as the `mcp`
//!   command line and its inspector do (a [`LoopbackAuthorizer`], no DPoP), with the
//!   authorization kept for the server in a [`TokenStore`] (per server, owner-only) restored.
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use mcpwire_auth::{OAuthClient, OAuthConfig};
//! use mcpwire_transport::http::{self, HttpOptions};
//!
//! let url = "https://mcp.example.com/mcp";
//! let oauth = OAuthClient::new(url, OAuthConfig::new("my-client", "http://localhost:8976/callback"))?;
//! let connection = http::connect(url, HttpOptions { auth: Some(Arc::new(oauth)), ..HttpOptions::default() })?;
//! # drop(connection); Ok(()) }
//! ```
#![deny(missing_docs)]

pub mod challenge;
mod client;
pub mod dpop;
mod error;
pub mod jwt;
pub mod metadata;
pub mod pkce;
pub mod resource;

pub use challenge::BearerChallenge;
pub use client::{
    check_authorization_response, native_client, select_scopes, AssertionSource, Authorizer, ClientAuthMethod,
    ClientCredentials, Grant, HeadlessAuthorizer, IdJagExchange, LoopbackAuthorizer, NativeSettings, OAuthClient,
    OAuthConfig, Present, SavedAuthorization, StaticAssertion, StoredAuthorization, TokenSet, TokenStore,
    JWT_BEARER_GRANT, OFFLINE_ACCESS,
};
pub use error::AuthError;
pub use metadata::{AuthorizationServerMetadata, ProtectedResourceMetadata};
pub use resource::{IntrospectionVerifier, JwtVerifier, Rejection, ResourceServer, TokenError, TokenVerifier};
