//! The `Mcp-*` request headers a 2026-07-28 client sends, and the validity rules of
//! `x-mcp-header` annotations (SEP-2243).

use mcpwire_protocol::frame::headers::encode_value;
use serde_json::{Map, Value};

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
}
