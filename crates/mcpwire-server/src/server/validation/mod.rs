//! A tool's schemas, compiled once when the tool is registered: its arguments are checked
//! against the input schema before its handler runs, and its structured result against the
//! output schema before it is sent.
//!
//! With the `schema-validation` feature, a general JSON Schema validator (`jsonschema`) checks
//! every clause. Without it (a lean build: the validator and its dependencies are about 75
//! crates), the top level of the input schema is checked ([`top_level`]: required names,
//! each argument's JSON type, no unknown argument where the schema closes the object); a
//! typed tool's arguments are then checked in full as they are deserialized into its
//! parameter type, and its output is made from its output type. A schema that cannot be
//! compiled is checked at its top level too (the registration logs why).

mod top_level;

#[cfg(feature = "schema-validation")]
use jsonschema::Validator;
use mcpwire_protocol::types::{CallToolResult, JsonObject, Tool};
#[cfg(feature = "schema-validation")]
use serde_json::Value;

use top_level::TopLevel;

/// The compiled schemas of one tool.
pub(crate) struct ToolSchemas {
    input: Input,
    /// Whether the tool has an output schema: a successful result must then carry
    /// `structuredContent`.
    has_output: bool,
    #[cfg(feature = "schema-validation")]
    output: Option<Validator>,
}

enum Input {
    /// The compiled input schema.
    #[cfg(feature = "schema-validation")]
    Schema(Validator),
    /// What the schema's top level says.
    TopLevel(TopLevel),
}

impl ToolSchemas {
    /// Compiles the schemas of `tool`.
    pub(crate) fn compile(tool: &Tool) -> Self {
        Self {
            input: compile_input(tool),
            has_output: tool.output_schema.is_some(),
            #[cfg(feature = "schema-validation")]
            output: tool.output_schema.as_ref().and_then(|schema| {
                match jsonschema::validator_for(&Value::Object(schema.clone())) {
                    Ok(v) => Some(v),
                    Err(e) => {
                        tracing::warn!(tool = %tool.name, "the tool's output schema does not compile, so results are not checked: {e}");
                        None
                    }
                }
            }),
        }
    }

    /// Checks the arguments of a call; the error names each offending argument and rule.
    pub(crate) fn check_input(&self, arguments: &mut JsonObject) -> Result<(), String> {
        match &self.input {
            #[cfg(feature = "schema-validation")]
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
            Input::TopLevel(top) => top.check(arguments),
        }
    }

    /// Checks a successful result against the output schema, when the tool has one: it must
    /// carry `structuredContent` that fits it.
    pub(crate) fn check_output(&self, result: &CallToolResult) -> Result<(), String> {
        if !self.has_output || result.is_error == Some(true) {
            return Ok(());
        }
        let Some(_value) = &result.structured_content else {
            return Err("the tool has an output schema but returned no structuredContent".to_owned());
        };
        #[cfg(feature = "schema-validation")]
        if let Some(validator) = &self.output {
            if !validator.is_valid(_value) {
                return Err(describe(validator, _value, "structuredContent"));
            }
        }
        Ok(())
    }
}

#[cfg(feature = "schema-validation")]
fn compile_input(tool: &Tool) -> Input {
    match jsonschema::validator_for(&Value::Object(tool.input_schema.clone())) {
        Ok(v) => Input::Schema(v),
        Err(e) => {
            tracing::warn!(tool = %tool.name, "the tool's input schema does not compile, so only its top level is checked: {e}");
            Input::TopLevel(TopLevel::of(&tool.input_schema))
        }
    }
}

#[cfg(not(feature = "schema-validation"))]
fn compile_input(tool: &Tool) -> Input {
    Input::TopLevel(TopLevel::of(&tool.input_schema))
}

/// Every violation of `instance`, one per clause: `where: what`.
#[cfg(feature = "schema-validation")]
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
    use serde_json::{json, Value};

    fn schemas(input: Value, output: Option<Value>) -> ToolSchemas {
        let mut tool = Tool::new("t", "test", input);
        tool.output_schema = output.and_then(|o| o.as_object().cloned());
        ToolSchemas::compile(&tool)
    }

    fn args(v: Value) -> JsonObject {
        v.as_object().cloned().unwrap()
    }

    #[cfg(feature = "schema-validation")]
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

    #[cfg(not(feature = "schema-validation"))]
    #[test]
    fn without_the_validator_the_top_level_is_checked() {
        let s = schemas(
            json!({"type":"object","properties":{"a":{"type":"number"}},"required":["a"],"additionalProperties":false}),
            Some(json!({"type":"object"})),
        );
        let e = s.check_input(&mut args(json!({"a": "one", "c": 1}))).unwrap_err();
        assert!(e.contains("`a`: \"one\" is not of type number"), "{e}");
        assert!(e.contains("`c`: not an argument of this tool"), "{e}");
        assert_eq!(s.check_input(&mut args(json!({"a": 1}))), Ok(()));
        assert!(s.check_output(&CallToolResult::text("3")).unwrap_err().contains("no structuredContent"));
    }

    #[test]
    fn a_schema_that_does_not_compile_still_checks_its_top_level() {
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
        #[cfg(feature = "schema-validation")]
        {
            let e = s.check_output(&CallToolResult::structured(json!({"sum": "3"}))).unwrap_err();
            assert!(e.contains("`sum`: \"3\" is not of type \"number\""), "{e}");
        }
        assert!(s.check_output(&CallToolResult::text("3")).unwrap_err().contains("no structuredContent"));
        assert_eq!(s.check_output(&CallToolResult::error("failed")), Ok(()), "a tool error is not checked");
        let none = schemas(json!({"type":"object"}), None);
        assert_eq!(none.check_output(&CallToolResult::text("anything")), Ok(()));
    }
}
