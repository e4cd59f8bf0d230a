//! Which scopes to request.

use crate::challenge::BearerChallenge;
use crate::metadata::{AuthorizationServerMetadata, ProtectedResourceMetadata};

/// The scope that asks for a refresh token (OpenID Connect; SEP-2207).
pub const OFFLINE_ACCESS: &str = "offline_access";

/// The scopes to request: the challenge's, else the resource metadata's
/// `scopes_supported`, else none; on step-up, unioned with `previous` (SEP-2350); plus
/// `offline_access` when wanted and the authorization server lists it (SEP-2207).
pub fn select_scopes(
    challenge: &BearerChallenge,
    resource: Option<&ProtectedResourceMetadata>,
    server: &AuthorizationServerMetadata,
    previous: Option<&[String]>,
    offline_access: bool,
) -> Vec<String> {
    let mut scopes = challenge.scopes();
    if scopes.is_empty() {
        scopes = resource.and_then(|r| r.scopes_supported.clone()).unwrap_or_default();
    }
    let mut out: Vec<String> = previous.map(<[String]>::to_vec).unwrap_or_default();
    for s in scopes {
        if !out.contains(&s) {
            out.push(s);
        }
    }
    if offline_access && server.supports_scope(OFFLINE_ACCESS) && !out.iter().any(|s| s == OFFLINE_ACCESS) {
        out.push(OFFLINE_ACCESS.to_owned());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::tests::server;
    use serde_json::json;

    #[test]
    fn scope_selection() {
        let resource: ProtectedResourceMetadata = serde_json::from_value(
            json!({"resource": "https://r", "authorization_servers": ["https://as"], "scopes_supported": ["a", "b"]}),
        )
        .unwrap();
        let plain = server(json!({"issuer": "https://as"}));
        let offline = server(json!({"issuer": "https://as", "scopes_supported": ["a", "offline_access"]}));
        let challenged = BearerChallenge { scope: Some("x".into()), ..Default::default() };
        let none = BearerChallenge::default();
        assert_eq!(select_scopes(&challenged, Some(&resource), &plain, None, true), ["x"]);
        assert_eq!(select_scopes(&none, Some(&resource), &plain, None, true), ["a", "b"]);
        assert!(select_scopes(&none, None, &plain, None, true).is_empty());
        assert_eq!(select_scopes(&none, Some(&resource), &offline, None, true), ["a", "b", "offline_access"]);
        assert_eq!(select_scopes(&none, Some(&resource), &offline, None, false), ["a", "b"]);
        let previous = ["a".to_owned(), "x".to_owned()];
        let step_up = BearerChallenge { scope: Some("x y".into()), ..Default::default() };
        assert_eq!(select_scopes(&step_up, Some(&resource), &plain, Some(&previous), true), ["a", "x", "y"]);
    }
}
