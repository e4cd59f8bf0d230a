//! A tool's schemas, compiled once when the tool is registered: its arguments are checked
//! against the input schema before its handler runs, and its structured result against the
//! output schema before it is sent.
//!
//! A schema that cannot be compiled is not enforced (the registration logs why); only the
//! names in its `required` list are then checked, as before validation existed.

use jsonschema::Validator;
use mcp_protocol::types::{CallToolResult, JsonObject, Tool};
use serde_json::Value;

/// The compiled schemas of one tool.
pub(crate) struct ToolSchemas {
    input: Input,
    output: Option<Validator>,
}

enum Input {
    /// The compiled input schema.
    Schema(Validator),
    /// The schema did not compile: the names it requires.
    Required(Vec<String>),
}

impl ToolSchemas {
    /// Compiles the schemas of `tool`.
    pub(crate) fn compile(tool: &Tool) -> Self {
        let input_schema = Value::Object(tool.input_schema.clone());
        let input = match jsonschema::validator_for(&input_schema) {
            Ok(v) => Input::Schema(v),
            Err(e) => {
                tracing::warn!(tool = %tool.name, "the tool's input schema does not compile, so only its required names are checked: {e}");
                let required = tool.input_schema.get("required").and_then(Value::as_array);
                let names = required.into_iter().flatten().filter_map(Value::as_str).map(str::to_owned).collect();
                Input::Required(names)
            }
        };
        let output = tool.output_schema.as_ref().and_then(|schema| {
            match jsonschema::validator_for(&Value::Object(schema.clone())) {
                Ok(v) => Some(v),
                Err(e) => {
                    tracing::warn!(tool = %tool.name, "the tool's output schema does not compile, so results are not checked: {e}");
                    None
                }
            }
        });
        Self { input, output }
    }

    /// Checks the arguments of a call; the error names each offending argument and rule.
    pub(crate) fn check_input(&self, arguments: &mut JsonObject) -> Result<(), String> {
        match &self.input {
            Input::Schema(validator) => {
                // Validated in place: the map is lent to a `Value` and given back.
                let instance = Value::Object(std::mem::take(arguments));
                let verdict = match validator.is_valid(&instance) {
                    true => Ok(()),
                    false => Err(describe(validator, &instance, "arguments")),
                };
                if let Value::Object(map) = instance {
                    *arguments = map;
                }
                verdict
            }
            Input::Required(names) => {
                let missing: Vec<&str> =
                    names.iter().map(String::as_str).filter(|name| !arguments.contains_key(*name)).collect();
                match missing.is_empty() {
                    true => Ok(()),
                    false => Err(format!("missing required argument(s): {}", missing.join(", "))),
                }
            }
        }
    }

    /// Checks a successful result against the output schema, when the tool has one: it must
    /// carry `structuredContent` that fits it.
    pub(crate) fn check_output(&self, result: &CallToolResult) -> Result<(), String> {
        let Some(validator) = &self.output else { return Ok(()) };
        if result.is_error == Some(true) {
            return Ok(());
        }
        match &result.structured_content {
            None => Err("the tool has an output schema but returned no structuredContent".to_owned()),
            Some(value) if validator.is_valid(value) => Ok(()),
            Some(value) => Err(describe(validator, value, "structuredContent")),
        }
    }
}

/// Every violation of `instance`, one per clause: `where: what`.
fn describe(validator: &Validator, instance: &Value, root: &str) -> String {
    let problems: Vec<String> = validator
        .iter_errors(instance)
        .map(|e| {
            let path = e.instance_path().to_string();
            let place = match path.trim_start_matches('/') {
                "" => root.to_owned(),
                p => format!("`{}`", p.replace('/', ".")),
            };
            format!("{place}: {e}")
        })
        .collect();
    problems.join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schemas(input: Value, output: Option<Value>) -> ToolSchemas {
        let mut tool = Tool::new("t", "test", input);
        tool.output_schema = output.and_then(|o| o.as_object().cloned());
        ToolSchemas::compile(&tool)
    }

    fn args(v: Value) -> JsonObject {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn arguments_are_checked_and_each_fault_named() {
        let s = schemas(
            json!({"type":"object","properties":{"a":{"type":"number"},"b":{"type":"string"}},"required":["a","b"],"additionalProperties":false}),
            None,
        );
        let mut ok = args(json!({"a": 1, "b": "x"}));
        assert_eq!(s.check_input(&mut ok), Ok(()));
        assert_eq!(ok, args(json!({"a": 1, "b": "x"})), "the arguments are given back untouched");
        let mut bad = args(json!({"a": "one", "c": true}));
        let e = s.check_input(&mut bad).unwrap_err();
        assert!(e.contains("`a`: \"one\" is not of type \"number\""), "{e}");
        assert!(e.contains("\"b\" is a required property"), "{e}");
        assert!(e.contains("'c' was unexpected"), "{e}");
    }

    #[test]
    fn a_schema_that_does_not_compile_still_checks_required_names() {
        let s = schemas(json!({"type":"object","properties":{"a":{"type":"no-such-type"}},"required":["a"]}), None);
        assert_eq!(s.check_input(&mut args(json!({}))), Err("missing required argument(s): a".to_owned()));
        assert_eq!(s.check_input(&mut args(json!({"a": 1}))), Ok(()));
    }

    #[test]
    fn structured_results_must_fit_the_output_schema() {
        let s = schemas(
            json!({"type":"object"}),
            Some(json!({"type":"object","properties":{"sum":{"type":"number"}},"required":["sum"]})),
        );
        assert_eq!(s.check_output(&CallToolResult::structured(json!({"sum": 3}))), Ok(()));
        let e = s.check_output(&CallToolResult::structured(json!({"sum": "3"}))).unwrap_err();
        assert!(e.contains("`sum`: \"3\" is not of type \"number\""), "{e}");
        assert!(s.check_output(&CallToolResult::text("3")).unwrap_err().contains("no structuredContent"));
        assert_eq!(s.check_output(&CallToolResult::error("failed")), Ok(()), "a tool error is not checked");
        let none = schemas(json!({"type":"object"}), None);
        assert_eq!(none.check_output(&CallToolResult::text("anything")), Ok(()));
    }
}
