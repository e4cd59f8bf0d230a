//! The standard `Mcp-*` request headers of 2026-07-28 (SEP-2243), checked against the body.

use axum::http::{HeaderMap, HeaderName};
use mcpwire_protocol::message::{ClientRequest, Request};
use mcpwire_protocol::types::JsonObject;
use mcpwire_protocol::Method;
use serde_json::Value;

use mcpwire_protocol::frame::headers::decode_value;
pub use mcpwire_protocol::frame::headers::{METHOD, NAME, PARAM_PREFIX, PROTOCOL_VERSION, SESSION_ID};

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

/// Whether a header value stands for this JSON value (numbers compared as numbers).
fn matches(header: &str, value: &Value) -> bool {
    match value {
        Value::String(s) => header == s,
        Value::Bool(b) => header == if *b { "true" } else { "false" },
        // Integers exactly (f64 would equate neighbours above 2^53), other numbers as numbers.
        Value::Number(n) => match (n.as_i64(), n.as_u64(), header.parse::<i64>(), header.parse::<u64>()) {
            (Some(v), _, Ok(h), _) => v == h,
            (_, Some(v), _, Ok(h)) => v == h,
            _ => match (header.parse::<f64>(), n.as_f64()) {
                (Ok(h), Some(v)) => h == v,
                _ => false,
            },
        },
        _ => false,
    }
}

/// What a 2026-07-28 request's body says that its headers must repeat.
#[derive(Debug, Clone, Copy)]
pub struct Expected<'a> {
    /// The method (`Mcp-Method`).
    pub method: &'a str,
    /// The member naming what the request is about and its value (`Mcp-Name`): a tool's or a
    /// prompt's `name`, a resource's `uri`, a task's `taskId`.
    pub name: Option<(&'static str, &'a str)>,
    /// A tool call's arguments (the `Mcp-Param-*` headers its tool declares).
    pub arguments: Option<&'a JsonObject>,
}

/// The member a method's `Mcp-Name` repeats, if it has one.
fn name_member(method: Method) -> Option<&'static str> {
    match method {
        Method::CallTool | Method::GetPrompt => Some("name"),
        Method::ReadResource => Some("uri"),
        Method::GetTask | Method::UpdateTask | Method::CancelTask => Some("taskId"),
        _ => None,
    }
}

impl<'a> Expected<'a> {
    /// What `request` says. (Params that did not read name nothing: their error is answered.)
    pub fn of(request: &'a Request<ClientRequest>) -> Self {
        let body = request.body.as_ref().ok();
        let name = request.method.known().and_then(name_member).and_then(|member| Some((member, body?.name()?)));
        let arguments = match body {
            Some(ClientRequest::CallTool(call)) => call.arguments.as_ref(),
            _ => None,
        };
        Self { method: request.method.as_str(), name, arguments }
    }
}

/// Checks `Mcp-Method`, `Mcp-Name` and the `Mcp-Param-*` headers of a 2026-07-28 request.
/// `input_schema` is the called tool's, for `x-mcp-header` parameters.
pub fn check(headers: &HeaderMap, expected: &Expected<'_>, input_schema: Option<&JsonObject>) -> Result<(), String> {
    let method = expected.method;
    match value(headers, &names::METHOD)? {
        None => return Err("missing Mcp-Method header".into()),
        Some(m) if m != method => return Err(format!("Mcp-Method {m:?} does not match the body's method {method:?}")),
        Some(_) => {}
    }
    if let Some((field, expected)) = expected.name {
        match value(headers, &names::NAME)? {
            None => return Err("missing Mcp-Name header".into()),
            Some(n) if decode_value(n)? != expected => {
                return Err(format!("Mcp-Name does not match the body's {field} {expected:?}"));
            }
            Some(_) => {}
        }
    }
    let (Some(schema), Some(arguments)) = (input_schema, expected.arguments) else { return Ok(()) };
    let Some(Value::Object(properties)) = schema.get("properties") else { return Ok(()) };
    for (property, prop_schema) in properties {
        let Some(header_name) = prop_schema.get("x-mcp-header").and_then(Value::as_str) else { continue };
        // A name no header can have is never present.
        let header = HeaderName::try_from(format!("{PARAM_PREFIX}{}", header_name.to_ascii_lowercase())).ok();
        let body_value = arguments.get(property).filter(|v| !v.is_null());
        let sent = match &header {
            Some(header) => value(headers, header)?,
            None => None,
        };
        match (sent, body_value) {
            (None, None) => {}
            (None, Some(_)) => return Err(format!("missing header Mcp-Param-{header_name} for argument {property:?}")),
            (Some(_), None) => {
                return Err(format!("header Mcp-Param-{header_name} given but argument {property:?} is absent"))
            }
            (Some(h), Some(v)) => {
                if !matches(&decode_value(h)?, v) {
                    return Err(format!("header Mcp-Param-{header_name} does not match argument {property:?}"));
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;
    use serde_json::json;

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
