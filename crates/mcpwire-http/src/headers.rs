//! The standard `Mcp-*` request headers of 2026-07-28 (SEP-2243), read from axum's
//! `HeaderMap` and checked against the body by the protocol's rules
//! ([`mcpwire_protocol::headers`]).

use axum::http::{HeaderMap, HeaderName};
use mcpwire_protocol::types::JsonObject;

pub use mcpwire_protocol::headers::{METHOD, NAME, PARAM_PREFIX, PROTOCOL_VERSION, SESSION_ID};

/// The headers above as `HeaderName`s, so that looking one up parses no name.
pub(crate) mod names {
    use axum::http::HeaderName;

    pub(crate) static PROTOCOL_VERSION: HeaderName = HeaderName::from_static(super::PROTOCOL_VERSION);
    pub(crate) static METHOD: HeaderName = HeaderName::from_static(super::METHOD);
    pub(crate) static NAME: HeaderName = HeaderName::from_static(super::NAME);
    pub(crate) static SESSION_ID: HeaderName = HeaderName::from_static(super::SESSION_ID);
}

/// A header's value, trimmed; `Err` if it is not visible ASCII or is given more than once
/// (a proxy reading the first and the server another must not be able to disagree).
pub fn value<'a>(headers: &'a HeaderMap, name: &HeaderName) -> Result<Option<&'a str>, String> {
    let mut values = headers.get_all(name).iter();
    match (values.next(), values.next()) {
        (None, _) => Ok(None),
        (Some(_), Some(_)) => Err(format!("header {name} is given more than once")),
        (Some(v), None) => v.to_str().map(|s| Some(s.trim())).map_err(|_| format!("header {name} is not ASCII")),
    }
}

pub use mcpwire_protocol::headers::Expected;
use mcpwire_protocol::headers::Lookup;

/// Checks `Mcp-Method`, `Mcp-Name` and the `Mcp-Param-*` headers of a 2026-07-28 request
/// ([`mcpwire_protocol::headers::check`]), read from `headers`. `input_schema` is the called
/// tool's, for `x-mcp-header` parameters.
pub fn check(headers: &HeaderMap, expected: &Expected<'_>, input_schema: Option<&JsonObject>) -> Result<(), String> {
    let lookup = |which: Lookup<'_>| match which {
        Lookup::Method => value(headers, &names::METHOD),
        Lookup::Name => value(headers, &names::NAME),
        // A name no header can have is never present.
        Lookup::Param(name) => match HeaderName::try_from(format!("{PARAM_PREFIX}{}", name.to_ascii_lowercase())) {
            Ok(header) => value(headers, &header),
            Err(_) => Ok(None),
        },
    };
    mcpwire_protocol::headers::check(lookup, expected, input_schema)
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;
    use mcpwire_protocol::message::{ClientRequest, Request};
    use serde_json::json;
    use serde_json::Value;

    fn h(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut m = HeaderMap::new();
        for (k, v) in pairs {
            m.insert(*k, HeaderValue::from_str(v).unwrap());
        }
        m
    }

    fn request(text: &str) -> Request<ClientRequest> {
        match mcpwire_protocol::codec::read_from_client(text) {
            Ok(mcpwire_protocol::message::Decoded::Single(mcpwire_protocol::message::Received::Request(r))) => *r,
            other => panic!("{other:?}"),
        }
    }

    fn call(params: &Value) -> Request<ClientRequest> {
        request(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}).to_string())
    }

    #[test]
    fn method_and_name() {
        let r = call(&json!({"name": "t"}));
        let e = Expected::of(&r);
        assert!(check(&h(&[("mcp-method", "tools/call"), ("mcp-name", " t ")]), &e, None).is_ok());
        assert!(check(&h(&[("mcp-method", "tools/call")]), &e, None).is_err());
        let list = request(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
        assert!(check(&h(&[("mcp-method", "TOOLS/LIST")]), &Expected::of(&list), None).is_err());
        assert!(check(&h(&[("mcp-method", "prompts/list")]), &Expected::of(&list), None).is_err());
        let b64 = "=?base64?dA==?=".to_owned(); // "t", in the encoded form
        assert!(check(&h(&[("mcp-method", "tools/call"), ("mcp-name", &b64)]), &e, None).is_ok());
    }

    #[test]
    fn a_header_given_twice_is_refused() {
        let r = call(&json!({"name":"t","arguments":{"region":"eu"}}));
        let e = Expected::of(&r);
        let schema = json!({"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}});
        let twice = |name: &'static str, a: &str, b: &str| {
            let mut m = h(&[("mcp-method", "tools/call"), ("mcp-name", "t"), ("mcp-param-region", "eu")]);
            m.remove(name);
            m.append(name, HeaderValue::from_str(a).unwrap());
            m.append(name, HeaderValue::from_str(b).unwrap());
            check(&m, &e, schema.as_object()).expect_err("a header given twice")
        };
        assert_eq!(twice("mcp-method", "tools/call", "tools/list"), "header mcp-method is given more than once");
        // Twice the same value is refused too: what matters is that no reader can pick another.
        assert_eq!(twice("mcp-method", "tools/call", "tools/call"), "header mcp-method is given more than once");
        assert_eq!(twice("mcp-name", "t", "u"), "header mcp-name is given more than once");
        assert_eq!(twice("mcp-param-region", "eu", "us"), "header mcp-param-region is given more than once");
        let once = h(&[("mcp-method", "tools/call"), ("mcp-name", "t"), ("mcp-param-region", "eu")]);
        assert!(check(&once, &e, schema.as_object()).is_ok());
    }

    #[test]
    fn params() {
        let schema = json!({"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"n":{"type":"integer","x-mcp-header":"N"}}});
        let schema = schema.as_object().unwrap();
        let r = call(&json!({"name":"t","arguments":{"region":"eu","n":5}}));
        let e = Expected::of(&r);
        let base = [("mcp-method", "tools/call"), ("mcp-name", "t")];
        let with = |extra: &[(&'static str, &str)]| {
            let mut v = base.to_vec();
            v.extend_from_slice(extra);
            h(&v)
        };
        assert!(check(&with(&[("mcp-param-region", "eu"), ("mcp-param-n", "5.0")]), &e, Some(schema)).is_ok());
        assert!(check(&with(&[("mcp-param-region", "us"), ("mcp-param-n", "5")]), &e, Some(schema)).is_err());
        assert!(check(&with(&[("mcp-param-n", "5")]), &e, Some(schema)).is_err());
        assert!(check(&with(&[("mcp-param-region", "=?base64?!!?="), ("mcp-param-n", "5")]), &e, Some(schema)).is_err());
    }
}
