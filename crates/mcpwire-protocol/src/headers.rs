//! The HTTP header protocol of MCP, in one place: the standard header names, how a value is
//! encoded, which `Mcp-Param-*` headers a tool declares (`x-mcp-header`, SEP-2243) and what an
//! argument's header carries, and how a 2026-07-28 request's headers are checked against its
//! body. The client writes by these rules, the server checks by them; the HTTP types stay
//! with each side (this crate knows no HTTP library).

use serde_json::{Map, Value};

use crate::message::{ClientRequest, Request};
use crate::types::JsonObject;
use crate::Method;

/// The revision a message is written in (2025-06-18 on, after `initialize`; every
/// 2026-07-28 request).
pub const PROTOCOL_VERSION: &str = "mcp-protocol-version";
/// The method of a 2026-07-28 message.
pub const METHOD: &str = "mcp-method";
/// What a 2026-07-28 request is about: a tool's or prompt's name, a resource's URI, a
/// task's id.
pub const NAME: &str = "mcp-name";
/// Prefix of the headers a tool's `x-mcp-header` annotations declare (2026-07-28).
pub const PARAM_PREFIX: &str = "mcp-param-";
/// A legacy session's id.
pub const SESSION_ID: &str = "mcp-session-id";

/// A header value for `value`, base64-encoded (`=?base64?…?=`) when plain visible ASCII
/// would not carry it: non-ASCII, control characters, leading or trailing whitespace,
/// or something that looks like the encoded form itself.
pub fn encode_value(value: &str) -> String {
    use base64::engine::general_purpose::STANDARD;
    use base64::Engine;
    let needs_base64 = value.chars().any(|c| !c.is_ascii() || c.is_ascii_control())
        || value.starts_with(char::is_whitespace)
        || value.ends_with(char::is_whitespace)
        || (value.starts_with("=?") && value.ends_with("?="));
    if needs_base64 {
        format!("=?base64?{}?=", STANDARD.encode(value))
    } else {
        value.to_owned()
    }
}

/// The value a header carries: the `=?base64?…?=` form decoded, any other taken as it
/// is (the inverse of [`encode_value`]). `Err` names the value when its base64 or its
/// UTF-8 is invalid.
pub fn decode_value(value: &str) -> Result<String, String> {
    use base64::engine::general_purpose::STANDARD;
    use base64::Engine;
    match value.strip_prefix("=?base64?").and_then(|v| v.strip_suffix("?=")) {
        Some(b64) => STANDARD
            .decode(b64)
            .ok()
            .and_then(|bytes| String::from_utf8(bytes).ok())
            .ok_or_else(|| format!("invalid base64 header value {value:?}")),
        None => Ok(value.to_owned()),
    }
}

/// Whether `name` is a valid `x-mcp-header` name: a non-empty HTTP token.
fn valid_header_name(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// The `(property, header name)` pairs a tool's input schema declares, or why the tool's
/// annotations are invalid (then the tool must not be used).
pub fn tool_param_headers(input_schema: &Map<String, Value>) -> Result<Vec<(String, String)>, String> {
    let mut pairs: Vec<(String, String)> = Vec::new();
    let Some(Value::Object(properties)) = input_schema.get("properties") else { return Ok(pairs) };
    for (property, schema) in properties {
        let Some(annotation) = schema.get("x-mcp-header") else { continue };
        let Some(name) = annotation.as_str() else {
            return Err(format!("x-mcp-header of {property:?} is not a string"));
        };
        if !valid_header_name(name) {
            return Err(format!("x-mcp-header {name:?} of {property:?} is not a valid header name"));
        }
        let primitive = matches!(schema.get("type").and_then(Value::as_str), Some("string" | "integer" | "boolean"));
        if !primitive {
            return Err(format!("x-mcp-header on {property:?}, which is not a string, integer or boolean"));
        }
        if pairs.iter().any(|(_, n)| n.eq_ignore_ascii_case(name)) {
            return Err(format!("x-mcp-header {name:?} is declared twice"));
        }
        pairs.push((property.clone(), name.to_owned()));
    }
    Ok(pairs)
}

/// The header value of an argument, or `None` when it is null or absent (the header is omitted).
pub fn argument_value(arguments: Option<&Map<String, Value>>, property: &str) -> Option<String> {
    match arguments?.get(property)? {
        Value::String(s) => Some(encode_value(s)),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
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

/// A header [`check`] looks up: the method's, the name's, or a tool parameter's (by its
/// `x-mcp-header` name, as the tool declares it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lookup<'a> {
    /// `Mcp-Method`.
    Method,
    /// `Mcp-Name`.
    Name,
    /// `Mcp-Param-{name}`.
    Param(&'a str),
}

/// Checks `Mcp-Method`, `Mcp-Name` and the `Mcp-Param-*` headers of a 2026-07-28 request
/// against its body. `header` gives a header's value (`Err` when it is unusable: given twice,
/// not ASCII); `input_schema` is the called tool's, for `x-mcp-header` parameters.
pub fn check<'h>(
    header: impl Fn(Lookup<'_>) -> Result<Option<&'h str>, String>,
    expected: &Expected<'_>,
    input_schema: Option<&JsonObject>,
) -> Result<(), String> {
    let method = expected.method;
    match header(Lookup::Method)? {
        None => return Err("missing Mcp-Method header".into()),
        Some(m) if m != method => return Err(format!("Mcp-Method {m:?} does not match the body's method {method:?}")),
        Some(_) => {}
    }
    if let Some((field, expected)) = expected.name {
        match header(Lookup::Name)? {
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
        let body_value = arguments.get(property).filter(|v| !v.is_null());
        match (header(Lookup::Param(header_name))?, body_value) {
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
    use base64::engine::general_purpose::STANDARD;
    use base64::Engine;
    use serde_json::json;

    #[test]
    fn encoding_rules() {
        assert_eq!(encode_value("us-west 1"), "us-west 1");
        assert_eq!(encode_value(""), "");
        assert_eq!(encode_value(" x"), format!("=?base64?{}?=", STANDARD.encode(" x")));
        assert_eq!(encode_value("é"), format!("=?base64?{}?=", STANDARD.encode("é")));
        assert_eq!(encode_value("a\tb"), format!("=?base64?{}?=", STANDARD.encode("a\tb")));
    }

    #[test]
    fn annotation_validity() {
        let ok = json!({"properties": {"r": {"type": "string", "x-mcp-header": "Region"}, "q": {"type": "string"}}});
        assert_eq!(tool_param_headers(ok.as_object().unwrap()).unwrap(), vec![("r".into(), "Region".into())]);
        for bad in [
            json!({"properties": {"v": {"type": "string", "x-mcp-header": ""}}}),
            json!({"properties": {"v": {"type": "object", "x-mcp-header": "V"}}}),
            json!({"properties": {"v": {"type": "number", "x-mcp-header": "V"}}}),
            json!({"properties": {"v": {"type": "string", "x-mcp-header": "My Region"}}}),
            json!({"properties": {"v": {"type": "string", "x-mcp-header": "R:1"}}}),
            json!({"properties": {"v": {"type": "string", "x-mcp-header": "Région"}}}),
            json!({"properties": {"a": {"type": "string", "x-mcp-header": "X"}, "b": {"type": "string", "x-mcp-header": "x"}}}),
        ] {
            assert!(tool_param_headers(bad.as_object().unwrap()).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_request_is_checked_through_any_header_lookup() {
        let text =
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"region":"eu"}}}"#;
        let request = match crate::codec::read_from_client(text) {
            Ok(crate::message::Decoded::Single(crate::message::Received::Request(r))) => *r,
            other => panic!("{other:?}"),
        };
        let expected = Expected::of(&request);
        let schema = json!({"properties": {"region": {"type": "string", "x-mcp-header": "Region"}}});
        let sent = |region: Option<&'static str>| {
            move |which: Lookup<'_>| -> Result<Option<&'static str>, String> {
                Ok(match which {
                    Lookup::Method => Some("tools/call"),
                    Lookup::Name => Some("t"),
                    Lookup::Param(name) => {
                        assert_eq!(name, "Region", "looked up by the declared name");
                        region
                    }
                })
            }
        };
        assert_eq!(check(sent(Some("eu")), &expected, schema.as_object()), Ok(()));
        assert!(check(sent(Some("us")), &expected, schema.as_object()).unwrap_err().contains("does not match"));
        assert!(check(sent(None), &expected, schema.as_object()).unwrap_err().contains("missing header"));
        // Without the tool's schema, only the method and the name are checked.
        assert_eq!(check(sent(None), &expected, None), Ok(()));
    }
}
