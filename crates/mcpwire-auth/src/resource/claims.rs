//! A principal read from a token's claims (a JWT's payload, an introspection response).

use mcpwire_protocol::Principal;
use serde_json::{Map, Value};

/// The principal of these claims: `sub`, `client_id` (else `azp`), the scopes of `scope` (a
/// space-separated string) or `scp` (an array or a string), `iss`, `exp`.
pub(crate) fn principal(claims: Map<String, Value>) -> Principal {
    let text = |key: &str| claims.get(key).and_then(Value::as_str).map(str::to_owned);
    let scopes = match claims.get("scope").or_else(|| claims.get("scp")) {
        Some(Value::String(s)) => s.split_whitespace().map(str::to_owned).collect(),
        Some(Value::Array(items)) => items.iter().filter_map(Value::as_str).map(str::to_owned).collect(),
        _ => Vec::new(),
    };
    Principal {
        subject: text("sub"),
        client_id: text("client_id").or_else(|| text("azp")),
        scopes,
        issuer: text("iss"),
        expires_at: claims.get("exp").and_then(Value::as_u64),
        claims,
    }
}

/// Whether the `aud` claim (a string or an array) names `audience`.
pub(crate) fn audience_names(claims: &Map<String, Value>, audience: &str) -> bool {
    match claims.get("aud") {
        Some(Value::String(a)) => same_resource(a, audience),
        Some(Value::Array(items)) => items.iter().filter_map(Value::as_str).any(|a| same_resource(a, audience)),
        _ => false,
    }
}

/// Resource identifiers compared exactly, but for a trailing `/` (`https://h` and `https://h/`
/// are one resource: URL parsers add it to an origin, and clients send either).
fn same_resource(a: &str, b: &str) -> bool {
    a == b || a.trim_end_matches('/') == b.trim_end_matches('/')
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn scopes_come_from_scope_or_scp() {
        let p = principal(json!({"sub": "alice", "azp": "app", "scope": "a b"}).as_object().unwrap().clone());
        assert_eq!((p.subject.as_deref(), p.client_id.as_deref()), (Some("alice"), Some("app")));
        assert_eq!(p.scopes, ["a", "b"]);
        let p = principal(json!({"scp": ["c"], "client_id": "x", "azp": "y"}).as_object().unwrap().clone());
        assert_eq!((p.scopes, p.client_id.as_deref()), (vec!["c".to_owned()], Some("x")));
    }

    #[test]
    fn the_audience_is_a_string_or_an_array() {
        let one = json!({"aud": "https://mcp.example/mcp"});
        assert!(audience_names(one.as_object().unwrap(), "https://mcp.example/mcp"));
        assert!(!audience_names(one.as_object().unwrap(), "https://other.example/mcp"));
        let many = json!({"aud": ["x", "https://mcp.example/"]});
        assert!(audience_names(many.as_object().unwrap(), "https://mcp.example"));
        assert!(!audience_names(json!({}).as_object().unwrap(), "x"));
    }
}
