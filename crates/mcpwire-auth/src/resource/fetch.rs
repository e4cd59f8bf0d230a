//! The resource server's few requests to its authorization server: metadata, keys,
//! introspection. Bounded in time and size.

use std::time::Duration;

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::verifier::TokenError;
use crate::metadata::authorization_server_metadata_urls;

/// The largest response read from the authorization server.
const MAX_RESPONSE: usize = 1024 * 1024;

/// An HTTP client for the authorization server.
#[derive(Clone)]
pub(crate) struct Fetcher {
    http: reqwest::Client,
}

impl Default for Fetcher {
    fn default() -> Self {
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(10))
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap_or_default();
        Self { http }
    }
}

impl Fetcher {
    /// GETs JSON, or the reason it could not.
    pub(crate) async fn get_json<T: DeserializeOwned>(&self, url: &str) -> Result<T, TokenError> {
        let response = self.http.get(url).header("accept", "application/json").send().await;
        read_json(url, response).await
    }

    /// POSTs a form with HTTP Basic client authentication, and reads the JSON answer.
    pub(crate) async fn post_form<T: DeserializeOwned>(
        &self,
        url: &str,
        form: &[(&str, &str)],
        client: Option<(&str, &str)>,
    ) -> Result<T, TokenError> {
        let mut request = self.http.post(url).header("accept", "application/json").form(form);
        if let Some((id, secret)) = client {
            // RFC 6749 §2.3.1: the id and secret are form-encoded before Basic encoding.
            request = request.basic_auth(form_encode(id), Some(form_encode(secret)));
        }
        read_json(url, request.send().await).await
    }
}

fn form_encode(s: &str) -> String {
    form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

async fn read_json<T: DeserializeOwned>(
    url: &str,
    response: Result<reqwest::Response, reqwest::Error>,
) -> Result<T, TokenError> {
    let unavailable = |why: String| TokenError::Unavailable(format!("{url}: {why}"));
    let response = response.map_err(|e| unavailable(mcpwire_protocol::error::chain(&e)))?;
    let status = response.status();
    if !status.is_success() {
        return Err(unavailable(format!("HTTP {status}")));
    }
    if response.content_length().is_some_and(|n| n > MAX_RESPONSE as u64) {
        return Err(unavailable("the response is too large".into()));
    }
    let body = response.bytes().await.map_err(|e| unavailable(mcpwire_protocol::error::chain(&e)))?;
    if body.len() > MAX_RESPONSE {
        return Err(unavailable("the response is too large".into()));
    }
    serde_json::from_slice(&body).map_err(|e| unavailable(format!("not the JSON expected: {e}")))
}

/// The metadata of the authorization server `issuer` (RFC 8414, then OpenID Connect
/// Discovery), refused unless it names `issuer` itself.
pub(crate) async fn issuer_metadata(fetcher: &Fetcher, issuer: &str) -> Result<Map<String, Value>, TokenError> {
    let urls = authorization_server_metadata_urls(issuer).map_err(|e| TokenError::Unavailable(e.to_string()))?;
    let mut last = None;
    for url in urls {
        match fetcher.get_json::<Map<String, Value>>(&url).await {
            Ok(metadata) => {
                let named = metadata.get("issuer").and_then(Value::as_str);
                if named != Some(issuer) {
                    return Err(TokenError::Unavailable(format!(
                        "the metadata at {url} names the issuer {named:?}, not {issuer:?}"
                    )));
                }
                return Ok(metadata);
            }
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| TokenError::Unavailable(format!("no metadata for {issuer}"))))
}
