//! The program of the typed-authoring contract, as written there, served to a real client of
//! every revision: schemas from types, validated arguments and results, resources and
//! prompts read from plain functions.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use mcpwire::{
    prompt, resource, tool, tools, Client, ClientError, Context, Json, ProtocolVersion, Server, State, TestClient,
    ToolError,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

#[derive(Serialize, JsonSchema)]
struct Sum {
    sum: f64,
}

/// Adds two numbers.
#[tool(read_only)]
async fn add(
    /// The first addend.
    a: f64,
    /// The second addend.
    b: f64,
) -> Json<Sum> {
    Json(Sum { sum: a + b })
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Unit {
    Celsius,
    Fahrenheit,
}

/// Tells the temperature of a city.
#[tool(name = "get_weather", title = "Weather")]
fn weather(city: String, unit: Option<Unit>, _ctx: Context) -> Result<String, ToolError> {
    if city.is_empty() {
        return Err(ToolError::new("city must not be empty"));
    }
    Ok(format!("{city}: 21 {}", if matches!(unit, Some(Unit::Fahrenheit)) { "F" } else { "C" }))
}

#[derive(Default)]
struct Notes {
    notes: Mutex<Vec<String>>,
}

#[tools]
impl Notes {
    /// Stores a note; answers its number.
    #[tool]
    async fn add_note(&self, text: String) -> String {
        let mut notes = self.notes.lock().unwrap();
        notes.push(text);
        (notes.len() - 1).to_string()
    }
}

/// A note, by number.
#[resource("notes://{id}", mime_type = "text/plain")]
async fn note(id: usize, State(notes): State<Arc<Notes>>) -> Option<String> {
    notes.notes.lock().unwrap().get(id).cloned()
}

/// Asks for a review of some code.
#[prompt]
async fn review(code: String, language: Option<String>) -> String {
    format!("Review this {} code:\n{code}", language.as_deref().unwrap_or("unknown"))
}

fn server() -> Server {
    let notes = Arc::new(Notes::default());
    Server::builder("demo", "1.0")
        .state(notes.clone())
        .tool(add_tool())
        .tool(weather_tool())
        .tools(notes)
        .resource(note_resource())
        .prompt(review_prompt())
        .build()
}

async fn session(rev: ProtocolVersion) -> mcpwire::ClientSession {
    let client = Client::builder("contract", "1.0").protocol_version(rev).build();
    let session = server().test_client_with(&client).await.expect("connects");
    assert_eq!(session.protocol_version(), rev);
    session
}

fn text(result: &mcpwire::types::CallToolResult) -> &str {
    result.content[0].as_text().expect("a text block")
}

#[tokio::test]
async fn the_functions_stay_callable() {
    assert_eq!(add(1.0, 2.0).await.sum, 3.0);
    assert_eq!(review("x".into(), Some("rust".into())).await, "Review this rust code:\nx");
    let notes = Notes::default();
    assert_eq!(notes.add_note("a".into()).await, "0");
}

#[tokio::test]
async fn schemas_come_from_the_types() {
    let s = session(ProtocolVersion::LATEST).await;
    let tools = s.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["add", "get_weather", "add_note"]);

    let adder = &tools[0];
    assert_eq!(adder.description.as_deref(), Some("Adds two numbers."));
    assert_eq!(adder.annotations.as_ref().and_then(|a| a.read_only_hint), Some(true));
    assert_eq!(
        Value::Object(adder.input_schema.clone()),
        json!({
            "type": "object",
            "properties": {
                "a": {"type": "number", "format": "double", "description": "The first addend."},
                "b": {"type": "number", "format": "double", "description": "The second addend."}
            },
            "required": ["a", "b"],
            "additionalProperties": false
        })
    );
    let output = Value::Object(adder.output_schema.clone().expect("an output schema"));
    assert_eq!(output["properties"]["sum"]["type"], "number");
    assert_eq!(output["required"], json!(["sum"]));

    let weather_tool = &tools[1];
    assert_eq!(weather_tool.title.as_deref(), Some("Weather"));
    let schema = Value::Object(weather_tool.input_schema.clone());
    assert_eq!(schema["required"], json!(["city"]), "an Option is not required, the Context is no property");
    assert_eq!(schema["properties"].as_object().unwrap().len(), 2);
    let unit = schema["properties"]["unit"].to_string();
    assert!(unit.contains("celsius") && unit.contains("fahrenheit"), "{unit}");
    assert!(weather_tool.output_schema.is_none());

    let add_note = &tools[2];
    assert_eq!(add_note.description.as_deref(), Some("Stores a note; answers its number."));
    assert_eq!(Value::Object(add_note.input_schema.clone())["required"], json!(["text"]));

    let templates = s.list_all_resource_templates().await.unwrap();
    assert_eq!(templates.len(), 1);
    assert_eq!(templates[0].uri_template, "notes://{id}");
    assert_eq!(templates[0].description.as_deref(), Some("A note, by number."));
    assert_eq!(templates[0].mime_type.as_deref(), Some("text/plain"));

    let prompts = s.list_all_prompts().await.unwrap();
    let review_prompt = &prompts[0];
    assert_eq!(review_prompt.description.as_deref(), Some("Asks for a review of some code."));
    let args: Vec<(&str, Option<bool>)> =
        review_prompt.arguments.iter().flatten().map(|a| (a.name.as_str(), a.required)).collect();
    assert_eq!(args, [("code", Some(true)), ("language", Some(false))]);
}

#[tokio::test]
async fn every_revision_calls_the_typed_tools() {
    for rev in ProtocolVersion::ALL {
        let s = session(rev).await;
        let sum = s.call_tool("add", json!({"a": 1.5, "b": 2})).await.unwrap();
        // structuredContent exists from 2025-06-18 on; before, the text block carries the JSON.
        let structured = (rev >= ProtocolVersion::V2025_06_18).then(|| json!({"sum": 3.5}));
        assert_eq!(sum.structured_content, structured, "{rev}");
        assert_eq!(text(&sum), "{\"sum\":3.5}", "{rev}");
        #[derive(Deserialize, Debug, PartialEq)]
        struct Total {
            sum: f64,
        }
        let typed = s.call_tool_as::<Total>("add", json!({"a": 2, "b": 2})).await.unwrap();
        assert_eq!(typed, Total { sum: 4.0 }, "{rev}");

        let hot = s.call_tool("get_weather", json!({"city": "Paris", "unit": "fahrenheit"})).await.unwrap();
        assert_eq!(text(&hot), "Paris: 21 F", "{rev}");
        let plain = s.call_tool("get_weather", json!({"city": "Oslo"})).await.unwrap();
        assert_eq!(text(&plain), "Oslo: 21 C", "{rev}");
        let empty = s.call_tool("get_weather", json!({"city": ""})).await.unwrap();
        assert_eq!((empty.is_error, text(&empty)), (Some(true), "city must not be empty"), "{rev}");

        let first = s.call_tool("add_note", json!({"text": "buy milk"})).await.unwrap();
        assert_eq!(text(&first), "0", "{rev}");
        let read = s.read_resource("notes://0").await.unwrap();
        assert_eq!(read.contents[0].text.as_deref(), Some("buy milk"), "{rev}");
        assert_eq!(read.contents[0].mime_type.as_deref(), Some("text/plain"), "{rev}");

        let prompt = s.get_prompt("review", BTreeMap::from([("code".to_owned(), "fn main() {}".to_owned())])).await;
        let prompt = prompt.unwrap();
        assert_eq!(prompt.messages[0].content.as_text(), Some("Review this unknown code:\nfn main() {}"), "{rev}");
    }
}

#[tokio::test]
async fn invalid_arguments_are_refused_before_the_handler_as_the_revision_says() {
    for rev in ProtocolVersion::ALL {
        let s = session(rev).await;
        let bad = json!({"a": "one", "c": 3});
        let outcome = s.call_tool("add", bad).await;
        let message = match rev.tool_input_errors_are_results() {
            true => {
                let result = outcome.expect("a tool execution error");
                assert_eq!(result.is_error, Some(true), "{rev}");
                text(&result).to_owned()
            }
            false => match outcome {
                Err(ClientError::Protocol { error, .. }) => {
                    assert_eq!(error.code, mcpwire::protocol::error::INVALID_PARAMS, "{rev}");
                    error.message
                }
                other => panic!("{rev}: expected -32602, got {other:?}"),
            },
        };
        assert!(message.contains("Invalid arguments for tool add"), "{rev}: {message}");
        assert!(message.contains("`a`: \"one\" is not of type \"number\""), "{rev}: {message}");
        assert!(message.contains("\"b\" is a required property"), "{rev}: {message}");
        assert!(message.contains("'c' was unexpected"), "{rev}: {message}");

        let wrong_enum = s.call_tool("get_weather", json!({"city": "Rome", "unit": "kelvin"})).await;
        let refused = match wrong_enum {
            Ok(r) => r.is_error == Some(true) && text(&r).contains("`unit`"),
            Err(ClientError::Protocol { error, .. }) => error.message.contains("`unit`"),
            Err(other) => panic!("{rev}: {other:?}"),
        };
        assert!(refused, "{rev}: an unknown enum value is refused, naming the argument");
    }
}

#[tokio::test]
async fn resource_variables_and_prompt_arguments_are_read_as_their_types() {
    let s = session(ProtocolVersion::V2025_11_25).await;
    let missing = s.read_resource("notes://7").await.unwrap_err();
    let ClientError::Protocol { error, .. } = missing else { panic!("{missing:?}") };
    assert_eq!(error.code, mcpwire::protocol::error::RESOURCE_NOT_FOUND);
    let not_a_number = s.read_resource("notes://seven").await.unwrap_err();
    let ClientError::Protocol { error, .. } = not_a_number else { panic!("{not_a_number:?}") };
    assert_eq!(error.code, mcpwire::protocol::error::INVALID_PARAMS);
    assert_eq!(error.message, r#"Invalid params: argument `id`: expected an unsigned integer, got "seven""#);
}

/// A language, by name.
#[prompt]
fn explain(language: String, topic: String) -> String {
    format!("Explain {topic} in {language}")
}

#[tokio::test]
async fn completions_come_from_values_and_functions() {
    use mcpwire::types::{CompleteParams, CompletionArgument, CompletionContext, CompletionReference};
    let server = Server::builder("complete", "1.0")
        .prompt(explain_prompt().with_completions("language", ["rust", "ruby", "python"]).complete_with(
            "topic",
            |value: String, others: BTreeMap<String, String>, _ctx| async move {
                let language = others.get("language").cloned().unwrap_or_default();
                Ok(vec![format!("{language} {value}ownership"), format!("{language} {value}traits")])
            },
        ))
        .resource(note_resource())
        .build();
    let s = server.test_client().await.unwrap();
    let ask = |argument: &str, value: &str, others: Option<BTreeMap<String, String>>| CompleteParams {
        reference: CompletionReference::Prompt { name: "explain".into() },
        argument: CompletionArgument { name: argument.into(), value: value.into() },
        context: others.map(|arguments| CompletionContext { arguments: Some(arguments) }),
    };
    let by_prefix = s.complete(ask("language", "r", None)).await.unwrap();
    assert_eq!(by_prefix.completion.values, ["rust", "ruby"]);
    let chosen = BTreeMap::from([("language".to_owned(), "rust".to_owned())]);
    let computed = s.complete(ask("topic", "x-", Some(chosen))).await.unwrap();
    assert_eq!(computed.completion.values, ["rust x-ownership", "rust x-traits"]);
}

/// Deletes everything.
#[tool(
    title = "Wipe",
    description = "Deletes every note, for good.",
    destructive,
    idempotent,
    open_world = false,
    icon = "https://example.com/wipe.png",
    task = "optional"
)]
async fn wipe() -> Json<Vec<String>> {
    Json(vec!["gone".to_owned()])
}

#[tokio::test]
async fn tool_attributes_reach_the_definition() {
    let server = Server::builder("attrs", "1.0").tool(wipe_tool()).build();
    let tool = server.tool_definition("wipe").expect("registered");
    assert_eq!(tool.title.as_deref(), Some("Wipe"));
    assert_eq!(tool.description.as_deref(), Some("Deletes every note, for good."), "description overrides the doc");
    let hints = tool.annotations.clone().expect("annotations");
    assert_eq!(
        (hints.read_only_hint, hints.destructive_hint, hints.idempotent_hint, hints.open_world_hint),
        (None, Some(true), Some(true), Some(false))
    );
    assert_eq!(tool.icons.as_ref().expect("icons")[0].src, "https://example.com/wipe.png");
    assert_eq!(tool.task_support(), mcpwire::types::TaskSupport::Optional);
    assert_eq!(Value::Object(tool.input_schema), json!({"type": "object", "additionalProperties": false}));
    let output = Value::Object(tool.output_schema.expect("an output schema"));
    assert_eq!(output["required"], json!(["result"]), "a list is wrapped in an object: {output}");
    let s = server.test_client().await.unwrap();
    let r = s.call_tool("wipe", json!({})).await.unwrap();
    assert_eq!(r.structured_content, Some(json!({"result": ["gone"]})));
    let typed: Vec<String> = s.call_tool_as("wipe", json!({})).await.unwrap();
    assert_eq!(typed, ["gone"], "call_tool_as reads a wrapped value from `result`");
}
