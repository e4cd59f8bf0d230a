//! JSON Schemas from Rust types (schemars 1.x, draft 2020-12), made self-contained so that
//! every client can read them: subschemas are inlined, and `$defs` appear only for
//! recursive types. `$schema` is left out (2020-12 is the default dialect of MCP schemas).

use mcpwire_protocol::types::JsonObject;
use schemars::generate::{SchemaGenerator, SchemaSettings};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// A type a handler can take as an argument from the client: it has a schema and can be
/// read from JSON.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be an argument: it must implement `serde::Deserialize` and `schemars::JsonSchema`",
    label = "this parameter is read from the client's arguments",
    note = "derive both (`#[derive(Deserialize, JsonSchema)]`), or take it from the context instead (`Context`, `State<T>`)"
)]
pub trait Argument: DeserializeOwned + JsonSchema {}

impl<T: DeserializeOwned + JsonSchema> Argument for T {}

/// The generator every schema of this crate is made with.
pub fn generator() -> SchemaGenerator {
    SchemaSettings::draft2020_12()
        .with(|s| {
            s.inline_subschemas = true;
            s.meta_schema = None;
        })
        .into_generator()
}

/// The input schema of a handler, one property per argument.
pub struct ArgumentsSchema {
    generator: SchemaGenerator,
    properties: JsonObject,
    required: Vec<Value>,
}

impl Default for ArgumentsSchema {
    fn default() -> Self {
        Self::new()
    }
}

impl ArgumentsSchema {
    /// No argument yet.
    pub fn new() -> Self {
        Self { generator: generator(), properties: JsonObject::new(), required: Vec::new() }
    }

    /// Adds the argument `name` of type `T`.
    pub fn add<T: Argument>(&mut self, name: &str, description: Option<&str>, required: bool) {
        let mut schema = self.generator.subschema_for::<T>().to_value();
        if let (Some(text), Value::Object(map)) = (description, &mut schema) {
            map.insert("description".to_owned(), Value::from(text));
        }
        self.properties.insert(name.to_owned(), schema);
        if required {
            self.required.push(Value::from(name));
        }
    }

    /// The object schema: `additionalProperties: false`, so that a misspelt argument is
    /// refused rather than ignored.
    pub fn finish(mut self) -> JsonObject {
        let mut schema = JsonObject::new();
        schema.insert("type".to_owned(), Value::from("object"));
        if !self.properties.is_empty() {
            schema.insert("properties".to_owned(), Value::Object(self.properties));
        }
        if !self.required.is_empty() {
            schema.insert("required".to_owned(), Value::Array(self.required));
        }
        schema.insert("additionalProperties".to_owned(), Value::Bool(false));
        let defs = self.generator.take_definitions(true);
        if !defs.is_empty() {
            schema.insert("$defs".to_owned(), Value::Object(defs));
        }
        schema
    }
}

/// The schema of `T` as a root schema (its own `$defs` for recursive types), and whether it
/// describes an object.
pub fn root_schema<T: JsonSchema + ?Sized>() -> (JsonObject, bool) {
    let schema = generator().into_root_schema_for::<T>().to_value();
    let Value::Object(map) = schema else {
        // `true`/`false` schemas: anything, or nothing.
        return (JsonObject::new(), false);
    };
    let is_object = map.get("type").and_then(Value::as_str) == Some("object");
    (map, is_object)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Address {
        /// The street.
        street: String,
        city: Option<String>,
    }

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Tree {
        children: Vec<Tree>,
    }

    #[test]
    fn arguments_are_inlined_properties_with_descriptions() {
        let mut args = ArgumentsSchema::new();
        args.add::<f64>("a", Some("The first addend."), true);
        args.add::<Option<Address>>("home", None, false);
        let schema = Value::Object(args.finish());
        assert_eq!(schema["type"], "object");
        assert_eq!(schema["additionalProperties"], false);
        assert_eq!(schema["required"], json!(["a"]));
        assert_eq!(
            schema["properties"]["a"],
            json!({"type": "number", "format": "double", "description": "The first addend."})
        );
        let home = schema["properties"]["home"].to_string();
        assert!(home.contains("\"street\"") && home.contains("The street."), "{home}");
        assert!(schema.get("$defs").is_none(), "no $defs without recursion: {schema}");
        assert!(!schema.to_string().contains("$ref"), "{schema}");
    }

    #[test]
    fn no_arguments_is_an_empty_closed_object() {
        assert_eq!(
            Value::Object(ArgumentsSchema::new().finish()),
            json!({"type": "object", "additionalProperties": false})
        );
    }

    #[test]
    fn recursive_types_keep_their_defs() {
        let mut args = ArgumentsSchema::new();
        args.add::<Tree>("tree", None, true);
        let schema = Value::Object(args.finish());
        assert!(schema["$defs"].get("Tree").is_some(), "{schema}");
        let compiled = jsonschema::validator_for(&schema).expect("compiles");
        assert!(compiled.is_valid(&json!({"tree": {"children": [{"children": []}]}})));
        assert!(!compiled.is_valid(&json!({"tree": {"children": [{"kids": 1}]}})));
    }

    #[test]
    fn root_schemas_say_whether_they_are_objects() {
        assert!(root_schema::<Address>().1);
        assert!(!root_schema::<Vec<u8>>().1);
        assert!(root_schema::<Address>().0.get("$schema").is_none());
    }
}
