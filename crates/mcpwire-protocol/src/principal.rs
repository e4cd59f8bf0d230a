//! Who a request comes from, as its transport's authorization established it: the subject,
//! the OAuth client acting for it, the scopes its token grants, and the token's claims.
//!
//! A transport with authorization (HTTP with a resource server) gives one with each request;
//! a transport without (stdio, an HTTP endpoint left open) gives none, and its requests are
//! not held to any scope.

use serde_json::{Map, Value};

/// The party a request was authorized for.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Principal {
    /// The subject (`sub`): the user, or for a client acting on its own behalf the client.
    pub subject: Option<String>,
    /// The OAuth client the token was issued to (`client_id`, or `azp`).
    pub client_id: Option<String>,
    /// The scopes the token grants.
    pub scopes: Vec<String>,
    /// The issuer of the token (`iss`).
    pub issuer: Option<String>,
    /// When the token expires, in seconds since the Unix epoch (`exp`).
    pub expires_at: Option<u64>,
    /// Every claim of the token (a JWT's payload, or the introspection response).
    pub claims: Map<String, Value>,
}

impl Principal {
    /// Whether the token grants `scope`.
    pub fn has_scope(&self, scope: &str) -> bool {
        self.scopes.iter().any(|s| s == scope)
    }

    /// The scopes of `required` the token does not grant (empty: it may).
    pub fn missing_scopes<'a>(&self, required: &'a [String]) -> Vec<&'a str> {
        required.iter().filter(|s| !self.has_scope(s)).map(String::as_str).collect()
    }

    /// Whether the token grants every scope of `required`.
    pub fn has_scopes(&self, required: &[String]) -> bool {
        required.iter().all(|s| self.has_scope(s))
    }

    /// Whether `other` is the same party: same issuer, subject and client. What binds a
    /// session, a task or a sealed request state to whoever made it; the scopes may differ
    /// (a client that stepped up to more scopes is still the same party).
    pub fn same_party(&self, other: &Principal) -> bool {
        self.issuer == other.issuer && self.subject == other.subject && self.client_id == other.client_id
    }

    /// A stable text naming the party (issuer, subject, client), for keys: a rate limit per
    /// principal, an owner of tasks.
    pub fn key(&self) -> String {
        let part = |s: &Option<String>| s.as_deref().unwrap_or_default().replace('\\', "\\\\").replace(' ', "\\ ");
        format!("{} {} {}", part(&self.issuer), part(&self.subject), part(&self.client_id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn principal(sub: &str, scopes: &[&str]) -> Principal {
        Principal {
            subject: Some(sub.into()),
            client_id: Some("app".into()),
            scopes: scopes.iter().map(|s| s.to_string()).collect(),
            issuer: Some("https://as.example".into()),
            ..Principal::default()
        }
    }

    #[test]
    fn scopes_are_checked_one_by_one() {
        let p = principal("alice", &["notes:read"]);
        let required = vec!["notes:read".to_string(), "notes:write".to_string()];
        assert_eq!(p.missing_scopes(&required), ["notes:write"]);
        assert!(!p.has_scopes(&required));
        assert!(p.has_scopes(&required[..1]));
        assert!(p.has_scopes(&[]));
    }

    #[test]
    fn the_same_party_may_hold_other_scopes() {
        let a = principal("alice", &["notes:read"]);
        assert!(a.same_party(&principal("alice", &["notes:read", "notes:write"])));
        assert!(!a.same_party(&principal("bob", &["notes:read"])));
        let mut other_client = principal("alice", &[]);
        other_client.client_id = Some("other".into());
        assert!(!a.same_party(&other_client));
    }

    #[test]
    fn keys_do_not_run_parts_together() {
        let a = Principal { subject: Some("a b".into()), client_id: Some("c".into()), ..Principal::default() };
        let b = Principal { subject: Some("a".into()), client_id: Some("b c".into()), ..Principal::default() };
        assert_ne!(a.key(), b.key());
    }
}
