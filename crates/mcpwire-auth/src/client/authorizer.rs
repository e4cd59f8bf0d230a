//! The authorization step of the authorization code grant: an [`Authorizer`] takes the user
//! agent to the authorization endpoint, and [`check_authorization_response`] reads where it
//! came back.

use std::collections::HashMap;
use std::time::Duration;

use futures::future::BoxFuture;
use reqwest::header::LOCATION;
use url::Url;

use super::http::http_error;
use crate::AuthError;

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

#[cfg(test)]
mod tests {
    use super::*;

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
}
