//! The HTTP exchanges with OAuth endpoints: form POSTs, their JSON or error answers, and
//! the texts of errors.

use reqwest::header::{ACCEPT, CONTENT_TYPE};
use serde_json::Value;

use crate::AuthError;

/// POSTs a form (with extra `headers`) to an OAuth endpoint and returns its JSON answer,
/// or the OAuth error; and the `DPoP-Nonce` the server gave, if any.
pub(super) async fn post_form(
    http: &reqwest::Client,
    endpoint: &str,
    headers: &[(&'static str, String)],
    form: &[(&str, String)],
) -> (Result<Value, AuthError>, Option<String>) {
    let body = form_urlencoded::Serializer::new(String::new()).extend_pairs(form.iter()).finish();
    let mut request = http
        .post(endpoint)
        .header(ACCEPT, "application/json")
        .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(body);
    for (name, value) in headers {
        request = request.header(*name, value);
    }
    let response = match request.send().await {
        Ok(r) => r,
        Err(e) => return (Err(http_error(endpoint, e)), None),
    };
    let nonce = response.headers().get("dpop-nonce").and_then(|v| v.to_str().ok()).map(str::to_owned);
    let status = response.status();
    let result = match response.text().await {
        Ok(text) => oauth_answer(status, &text),
        Err(e) => Err(http_error(endpoint, e)),
    };
    (result, nonce)
}

/// The JSON object of a successful OAuth answer, or its error.
fn oauth_answer(status: reqwest::StatusCode, text: &str) -> Result<Value, AuthError> {
    let value: Value = serde_json::from_str(text).unwrap_or(Value::Null);
    if !status.is_success() {
        return Err(AuthError::Token {
            status: status.as_u16(),
            error: value["error"].as_str().map(str::to_owned).unwrap_or_else(|| oauth_error_text(text)),
            description: value["error_description"].as_str().map(str::to_owned),
        });
    }
    if !value.is_object() {
        return Err(AuthError::Token {
            status: status.as_u16(),
            error: format!("unreadable answer: {}", oauth_error_text(text)),
            description: None,
        });
    }
    Ok(value)
}

pub(super) fn http_error(url: &str, e: impl std::fmt::Display) -> AuthError {
    AuthError::Http { url: url.to_owned(), reason: e.to_string() }
}

/// `x-www-form-urlencoded` encoding of one component (RFC 6749 §2.3.1 Basic credentials).
pub(super) fn form_encode(s: &str) -> String {
    form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

/// A short text for a failed OAuth answer: its `error` (and description), else its start.
pub(super) fn oauth_error_text(body: &str) -> String {
    match serde_json::from_str::<Value>(body) {
        Ok(v) if v["error"].is_string() => {
            let d = v["error_description"].as_str().map(|d| format!(": {d}")).unwrap_or_default();
            format!("{}{d}", v["error"].as_str().unwrap_or_default())
        }
        _ => body.chars().take(200).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basic_credentials_are_form_encoded() {
        assert_eq!(form_encode("a b:c/é"), "a+b%3Ac%2F%C3%A9");
    }
}
