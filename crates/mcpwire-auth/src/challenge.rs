//! `WWW-Authenticate: Bearer` challenges (RFC 6750 §3, RFC 9728 §5.1).

use http_auth::parser::ChallengeParser;

/// The parameters of a `Bearer` (or `DPoP`, RFC 9449 §7.1: the same parameters) challenge
/// that matter to an MCP client.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BearerChallenge {
    /// `realm`.
    pub realm: Option<String>,
    /// `scope`: the space-separated scopes the request needs.
    pub scope: Option<String>,
    /// `error`: `invalid_request`, `invalid_token`, `insufficient_scope`, ...
    pub error: Option<String>,
    /// `error_description`.
    pub error_description: Option<String>,
    /// `resource_metadata`: where the protected resource metadata is (RFC 9728).
    pub resource_metadata: Option<String>,
}

impl BearerChallenge {
    /// The first `Bearer` challenge of one `WWW-Authenticate` value, which may hold several
    /// challenges (`Basic realm="x", Bearer scope="a"`). Parsing stops at the first syntax
    /// error; what was read before it is kept.
    pub fn parse(header: &str) -> Option<Self> {
        Self::parse_scheme(header, "Bearer")
    }

    /// The first challenge of scheme `scheme` (`Bearer`, `DPoP`) of one `WWW-Authenticate`
    /// value.
    pub fn parse_scheme(header: &str, scheme: &str) -> Option<Self> {
        for challenge in ChallengeParser::new(header) {
            let Ok(challenge) = challenge else { break };
            if !challenge.scheme.eq_ignore_ascii_case(scheme) {
                continue;
            }
            let mut out = Self::default();
            for (name, value) in challenge.params {
                let value = Some(value.to_unescaped());
                match name.to_ascii_lowercase().as_str() {
                    "realm" => out.realm = value,
                    "scope" => out.scope = value,
                    "error" => out.error = value,
                    "error_description" => out.error_description = value,
                    "resource_metadata" => out.resource_metadata = value,
                    _ => {}
                }
            }
            return Some(out);
        }
        None
    }

    /// The first `Bearer` challenge among several `WWW-Authenticate` values, else the
    /// first `DPoP` one.
    pub fn from_headers<I, S>(values: I) -> Option<Self>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let values: Vec<S> = values.into_iter().collect();
        values
            .iter()
            .find_map(|v| Self::parse(v.as_ref()))
            .or_else(|| values.iter().find_map(|v| Self::parse_scheme(v.as_ref(), "DPoP")))
    }

    /// The challenged scopes, in order, without duplicates.
    pub fn scopes(&self) -> Vec<String> {
        split_scopes(self.scope.as_deref().unwrap_or_default())
    }

    /// Whether the server says the token lacks scopes (`error="insufficient_scope"`).
    pub fn is_insufficient_scope(&self) -> bool {
        self.error.as_deref() == Some("insufficient_scope")
    }
}

/// Splits a space-separated scope string, dropping empty items and duplicates.
pub fn split_scopes(scope: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for s in scope.split(' ').filter(|s| !s.is_empty()) {
        if !out.iter().any(|o| o == s) {
            out.push(s.to_owned());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_rfc6750_and_rfc9728_parameters() {
        let c = BearerChallenge::parse(
            r#"Bearer error="insufficient_scope", scope="mcp:basic mcp:write", resource_metadata="http://localhost:1/.well-known/oauth-protected-resource/mcp", error_description="Token has \"insufficient\" scope""#,
        )
        .unwrap();
        assert!(c.is_insufficient_scope());
        assert_eq!(c.scopes(), ["mcp:basic", "mcp:write"]);
        assert_eq!(c.resource_metadata.as_deref(), Some("http://localhost:1/.well-known/oauth-protected-resource/mcp"));
        assert_eq!(c.error_description.as_deref(), Some(r#"Token has "insufficient" scope"#));
    }

    #[test]
    fn bare_scheme_token_values_and_case() {
        assert_eq!(BearerChallenge::parse("Bearer"), Some(BearerChallenge::default()));
        let c = BearerChallenge::parse("bearer realm=mcp, Error=invalid_token").unwrap();
        assert_eq!(c.realm.as_deref(), Some("mcp"));
        assert_eq!(c.error.as_deref(), Some("invalid_token"));
    }

    #[test]
    fn picks_bearer_among_several_challenges() {
        let c = BearerChallenge::parse(r#"Basic realm="x", Bearer scope="a b a", DPoP algs="ES256""#).unwrap();
        assert_eq!(c.scopes(), ["a", "b"]);
        assert_eq!(BearerChallenge::parse(r#"Basic realm="x""#), None);
        let c = BearerChallenge::from_headers([r#"Basic realm="x""#, r#"Bearer realm="y""#]).unwrap();
        assert_eq!(c.realm.as_deref(), Some("y"));
    }

    #[test]
    fn dpop_challenges() {
        let v = [r#"DPoP error="use_dpop_nonce", resource_metadata="https://r/prm""#];
        let c = BearerChallenge::from_headers(v).unwrap();
        assert_eq!(c.error.as_deref(), Some("use_dpop_nonce"));
        assert_eq!(c.resource_metadata.as_deref(), Some("https://r/prm"));
        assert_eq!(BearerChallenge::parse(v[0]), None);
    }

    #[test]
    fn malformed_challenges_are_none() {
        assert_eq!(BearerChallenge::parse("Bearer scope=\"unterminated"), None);
        assert_eq!(BearerChallenge::parse(""), None);
    }
}
