//! The checks an input schema's top level names, made without a JSON Schema validator: the
//! required arguments, each argument's JSON `type`, and no argument the schema does not name
//! where it closes the object (`additionalProperties: false`). Nested clauses are left to the
//! handler's own deserialization (a typed tool's parameter type) or to the full validator
//! (the `schema-validation` feature).

use mcpwire_protocol::types::JsonObject;
use serde_json::Value;

/// What the top level of an input schema says.
pub(crate) struct TopLevel {
    required: Vec<String>,
    /// The JSON types each named argument may have (any, if the schema names none this
    /// check knows).
    types: Vec<(String, Vec<String>)>,
    /// `additionalProperties: false`: only the named arguments may be given.
    closed: bool,
}

impl TopLevel {
    /// What `schema` says at its top level.
    pub(crate) fn of(schema: &JsonObject) -> Self {
        let required = schema.get("required").and_then(Value::as_array);
        let required = required.into_iter().flatten().filter_map(Value::as_str).map(str::to_owned).collect();
        let properties = schema.get("properties").and_then(Value::as_object);
        let types = properties
            .into_iter()
            .flatten()
            .map(|(name, property)| {
                let types = match property.get("type") {
                    Some(Value::String(t)) => vec![t.clone()],
                    Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).map(str::to_owned).collect(),
                    _ => Vec::new(),
                };
                (name.clone(), types)
            })
            .collect();
        let closed = schema.get("additionalProperties") == Some(&Value::Bool(false));
        Self { required, types, closed }
    }

    /// Checks `arguments`; the error names each offending argument.
    pub(crate) fn check(&self, arguments: &JsonObject) -> Result<(), String> {
        let mut problems = Vec::new();
        let missing: Vec<&str> =
            self.required.iter().map(String::as_str).filter(|name| !arguments.contains_key(*name)).collect();
        if !missing.is_empty() {
            problems.push(format!("missing required argument(s): {}", missing.join(", ")));
        }
        for (name, value) in arguments {
            match self.types.iter().find(|(n, _)| n == name) {
                Some((_, types)) if !fits(value, types) => {
                    problems.push(format!("`{name}`: {value} is not of type {}", types.join(" or ")));
                }
                Some(_) => {}
                None if self.closed => problems.push(format!("`{name}`: not an argument of this tool")),
                None => {}
            }
        }
        match problems.is_empty() {
            true => Ok(()),
            false => Err(problems.join("; ")),
        }
    }
}

/// Whether `value` is of one of the JSON Schema `types` (any, if none is one this check
/// knows: an unknown name is not held against the value).
fn fits(value: &Value, types: &[String]) -> bool {
    let known = ["null", "boolean", "object", "array", "number", "string", "integer"];
    if !types.iter().any(|t| known.contains(&t.as_str())) {
        return true;
    }
    types.iter().any(|t| match t.as_str() {
        "null" => value.is_null(),
        "boolean" => value.is_boolean(),
        "object" => value.is_object(),
        "array" => value.is_array(),
        "number" => value.is_number(),
        "string" => value.is_string(),
        // 1.0 is an integer in JSON Schema.
        "integer" => value.is_i64() || value.is_u64() || value.as_f64().is_some_and(|f| f.fract() == 0.0),
        _ => false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn top(schema: Value) -> TopLevel {
        TopLevel::of(schema.as_object().unwrap())
    }

    fn args(v: Value) -> JsonObject {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn required_names_types_and_unknown_arguments_are_checked() {
        let t = top(json!({"type": "object", "properties": {
            "a": {"type": "number"}, "b": {"type": ["string", "null"]}, "n": {"type": "integer"}, "free": {}},
            "required": ["a"], "additionalProperties": false}));
        assert_eq!(t.check(&args(json!({"a": 1.5, "b": null, "n": 2.0, "free": [1]}))), Ok(()));
        let e = t.check(&args(json!({"b": 3, "n": 1.5, "c": true}))).unwrap_err();
        assert!(e.contains("missing required argument(s): a"), "{e}");
        assert!(e.contains("`b`: 3 is not of type string or null"), "{e}");
        assert!(e.contains("`n`: 1.5 is not of type integer"), "{e}");
        assert!(e.contains("`c`: not an argument of this tool"), "{e}");
    }

    #[test]
    fn an_open_schema_takes_other_arguments_and_unknown_type_names_take_anything() {
        let t = top(json!({"type": "object", "properties": {"a": {"type": "no-such-type"}}}));
        assert_eq!(t.check(&args(json!({"a": {"x": 1}, "other": "y"}))), Ok(()));
    }
}
