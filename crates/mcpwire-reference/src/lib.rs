//! The reference MCP server: the server `mcp serve` runs, exercising every feature of the
//! protocol, with every tool, resource and prompt the official conformance suite expects,
//! under their exact names and with their exact outputs.
//!
//! It is a server like any other built with [`mcpwire_server`]: [`server`] builds it, ready to
//! serve on any transport. Besides the `mcp` command, the tests of the HTTP transport, the
//! bridge and the per-revision schema checks run it in memory, and the benchmarks measure it
//! (through `mcp serve`).
//!
//! ```no_run
//! # async fn run() {
//! let server = mcpwire_reference::server();
//! server.serve(mcpwire_transport::stdio::stdio()).await;
//! # }
//! ```
#![deny(missing_docs)]

use std::time::Duration;

use mcpwire::apps::{AppResource, Csp};
use mcpwire::{prompt, resource, tool, Json, ToolError};
use mcpwire_protocol::types::{
    CallToolResult, ContentBlock, ElicitParams, ElicitResult, JsonObject, LoggingLevel, PromptMessage,
    ResourceContents, Role, SamplingContent, Tool,
};
use mcpwire_server::{Context, HandlerError, HandlerResult, Server};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{json, Value};

pub mod input_required;
pub mod tasks;

/// A 1×1 red PNG.
pub const PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
/// A tiny WAV file.
pub const WAV: &str = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=";

pub(crate) fn no_args() -> Value {
    json!({"type": "object", "properties": {}})
}

/// A form-mode elicitation with a flat object schema of these properties.
pub(crate) fn form(message: &str, properties: Value, required: &[&str]) -> ElicitParams {
    form_with(message, json!({"type": "object", "properties": properties, "required": required}))
}

/// A form-mode elicitation with this requested schema.
pub(crate) fn form_with(message: &str, schema: Value) -> ElicitParams {
    ElicitParams {
        mode: None,
        message: message.into(),
        requested_schema: Some(object(schema)),
        url: None,
        elicitation_id: None,
        task: None,
    }
}

/// A string field of an accepted form, if the user gave one.
pub(crate) fn answered_text(answer: &ElicitResult, field: &str) -> Option<String> {
    answer.content.as_ref()?.get(field)?.as_str().map(str::to_owned)
}

pub(crate) fn object(v: Value) -> JsonObject {
    match v {
        Value::Object(m) => m,
        _ => JsonObject::new(),
    }
}

fn string_arg(args: &JsonObject, name: &str) -> Result<String, HandlerError> {
    args.get(name)
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| HandlerError::tool(format!("argument `{name}` must be a string")))
}

async fn pause() {
    tokio::time::sleep(Duration::from_millis(50)).await;
}

/// Builds the reference server.
pub fn server() -> Server {
    server_with(false)
}

/// Builds the reference server; `modern_only` makes it refuse `initialize` (2026-07-28 only).
pub fn server_with(modern_only: bool) -> Server {
    server_from(builder(), modern_only)
}

/// A builder named as the reference server, with nothing in it yet.
pub fn builder() -> mcpwire_server::ServerBuilder {
    Server::builder("mcp-reference-server", env!("CARGO_PKG_VERSION"))
}

/// Builds the reference server from `builder` (with layers of one's own, say).
pub fn server_from(builder: mcpwire_server::ServerBuilder, modern_only: bool) -> Server {
    let server = builder
        .instructions("The reference server of the `mcp` tool: every MCP feature, for testing clients.")
        .tasks(tasks::config())
        .modern_only(modern_only)
        .tool(echo_tool())
        .tool(test_simple_text_tool())
        .tool(test_image_content_tool())
        .tool(test_audio_content_tool())
        .tool(test_embedded_resource_tool())
        .tool(test_multiple_content_types_tool())
        .tool(test_tool_with_logging_tool())
        .tool(test_tool_with_progress_tool())
        .tool(test_error_handling_tool())
        .tool(test_sampling_tool())
        .tool(test_elicitation_tool())
        .tool(add_tool())
        .tool(test_app_tool())
        .resource(static_text_resource())
        .resource(static_binary_resource())
        .resource(watched_resource_resource())
        .resource(template_resource().with_completions("id", ["1", "2", "123"]))
        .resource(app_view())
        .prompt(test_simple_prompt_prompt())
        .prompt(
            test_prompt_with_arguments_prompt()
                .with_completions("arg1", ["test1", "test2", "value"])
                .with_completions("arg2", ["alpha", "beta"]),
        )
        .prompt(test_prompt_with_embedded_resource_prompt())
        .prompt(test_prompt_with_image_prompt())
        .build();
    add_tools(&server);
    input_required::add(&server);
    tasks::add(&server);
    server
}

/// The URI of the reference server's app (MCP Apps), the interface of `test_app`.
pub const APP_URI: &str = "ui://reference/app.html";

/// Returns its text, shown by an MCP App (ui://reference/app.html) in hosts that render apps.
#[tool(app = "ui://reference/app.html", read_only)]
fn test_app(
    /// The text to show.
    text: Option<String>,
) -> String {
    text.unwrap_or_else(|| "Hello from the reference app".to_owned())
}

/// The page of `test_app`: the `ui/initialize` handshake, then the tool's input and result.
/// Its CSP allows requests to one origin and resources from another.
fn app_view() -> AppResource {
    AppResource::html(APP_URI, "test-app-view", APP_HTML)
        .title("Test app")
        .description("Shows the input and the result of test_app")
        .csp(Csp::new().connect("https://api.example.com").resource("https://*.cdn.example.com"))
        .prefers_border(true)
}

const APP_HTML: &str = r#"<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Test app</title></head>
<body><h1>Test app</h1><pre id="input"></pre><pre id="result"></pre>
<script>
"use strict";
const host = window.parent;
const show = (id, v) => { document.getElementById(id).textContent = JSON.stringify(v, null, 2); };
window.addEventListener("message", (e) => {
  const m = e.data;
  if (e.source !== host || !m || m.jsonrpc !== "2.0") return;
  if (m.id === 1 && m.method === undefined) host.postMessage({ jsonrpc: "2.0", method: "ui/notifications/initialized", params: {} }, "*");
  else if (m.method === "ui/notifications/tool-input") show("input", m.params.arguments);
  else if (m.method === "ui/notifications/tool-result") show("result", m.params);
  else if (m.method === "ui/resource-teardown") host.postMessage({ jsonrpc: "2.0", id: m.id, result: {} }, "*");
});
host.postMessage({ jsonrpc: "2.0", id: 1, method: "ui/initialize", params: {
  protocolVersion: "2026-01-26", appInfo: { name: "reference-app", version: "1.0.0" }, appCapabilities: {} } }, "*");
</script></body></html>
"#;

/// Returns its `text` argument as text content.
#[tool]
fn echo(
    /// Text to echo
    text: String,
) -> String {
    text
}

/// Returns a simple text response.
#[tool]
fn test_simple_text() -> &'static str {
    "This is a simple text response for testing."
}

/// Returns a PNG image.
#[tool]
fn test_image_content() -> ContentBlock {
    ContentBlock::image(PNG, "image/png")
}

/// Returns a WAV clip.
#[tool]
fn test_audio_content() -> ContentBlock {
    ContentBlock::audio(WAV, "audio/wav")
}

/// Returns an embedded resource.
#[tool]
fn test_embedded_resource() -> ContentBlock {
    ContentBlock::resource(ResourceContents::text(
        "test://embedded-resource",
        Some("text/plain"),
        "This is an embedded resource content.",
    ))
}

/// Returns text, an image and a resource.
#[tool]
fn test_multiple_content_types() -> Vec<ContentBlock> {
    vec![
        ContentBlock::text("Multiple content types test:"),
        ContentBlock::image(PNG, "image/png"),
        ContentBlock::resource(ResourceContents::text(
            "test://mixed-content-resource",
            Some("application/json"),
            r#"{"test":"data","value":123}"#,
        )),
    ]
}

/// Sends three log messages while it runs.
#[tool]
async fn test_tool_with_logging(ctx: Context) -> &'static str {
    ctx.log(LoggingLevel::Info, "Tool execution started").await;
    pause().await;
    ctx.log(LoggingLevel::Info, "Tool processing data").await;
    pause().await;
    ctx.log(LoggingLevel::Info, "Tool execution completed").await;
    "Tool with logging executed successfully"
}

/// Reports progress 0, 50, 100 of 100.
#[tool]
async fn test_tool_with_progress(ctx: Context) -> &'static str {
    for (i, step) in [0.0, 50.0, 100.0].into_iter().enumerate() {
        if i > 0 {
            pause().await;
        }
        // Without a progress token there is nobody to tell: not an error.
        let _ = ctx.progress(step, Some(100.0), Some(&format!("step {}", i + 1))).await;
    }
    // Some clients (the TypeScript SDK) drop a progress notification that arrives in the same
    // read as the response: leave a gap, as the reference server's pacing does.
    pause().await;
    "Progress test completed"
}

/// Always fails, as a tool error.
#[tool]
fn test_error_handling() -> Result<(), ToolError> {
    Err(ToolError::new("This tool intentionally returns an error for testing"))
}

/// Asks the client's model to answer `prompt`.
#[tool]
async fn test_sampling(
    /// The prompt to send
    prompt: String,
    ctx: Context,
) -> Result<String, HandlerError> {
    let reply = ctx.sample(input_required::question(&prompt, 100)).await?;
    let text: String = match &reply.content {
        SamplingContent::Single(block) => block.as_text().unwrap_or_default().to_owned(),
        SamplingContent::Multiple(blocks) => blocks.iter().filter_map(ContentBlock::as_text).collect(),
    };
    Ok(format!("LLM response: {text}"))
}

/// Asks the user for a username and an email.
#[tool]
async fn test_elicitation(
    /// What to ask
    message: String,
    ctx: Context,
) -> HandlerResult<CallToolResult> {
    let schema = json!({
        "type": "object",
        "properties": {
            "username": {"type": "string", "description": "User's response"},
            "email": {"type": "string", "description": "User's email address"}
        },
        "required": ["username", "email"]
    });
    elicit_and_report(&ctx, message, schema, "User response").await
}

/// The sum of `add`.
#[derive(Serialize, JsonSchema)]
struct Sum {
    sum: f64,
}

/// Adds two numbers; the sum is also given as structured content.
#[tool(title = "Add numbers", read_only, idempotent)]
fn add(a: f64, b: f64) -> Json<Sum> {
    Json(Sum { sum: a + b })
}

/// The tools whose schemas are written by hand: header annotations, 2020-12 features,
/// elicitation forms.
fn add_tools(server: &Server) {
    server.add_tool(
        Tool::new(
            "test_header_echo",
            "Echoes `region`, which HTTP clients also send as the Mcp-Param-Region header (x-mcp-header).",
            json!({"type":"object","properties":{
                "region":{"type":"string","description":"A region name","x-mcp-header":"Region"},
                "note":{"type":"string","description":"Not mirrored in a header"}
            },"required":["region"]}),
        ),
        |args, _ctx| async move { Ok(CallToolResult::text(format!("region={}", string_arg(&args, "region")?))) },
    );
    server.add_tool(
        Tool::new("test_elicitation_sep1034_defaults", "Elicitation with a default for every field.", no_args()),
        |_, ctx: Context| async move {
            let schema = json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string", "description": "User name", "default": "John Doe"},
                    "age": {"type": "integer", "description": "User age", "default": 30},
                    "score": {"type": "number", "description": "User score", "default": 95.5},
                    "status": {"type": "string", "description": "User status", "enum": ["active", "inactive", "pending"], "default": "active"},
                    "verified": {"type": "boolean", "description": "Verification status", "default": true}
                },
                "required": []
            });
            elicit_and_report(&ctx, "Please review and update the form fields with defaults".into(), schema, "Elicitation completed")
                .await
        },
    );
    server.add_tool(
        Tool::new("test_elicitation_sep1330_enums", "Elicitation with every enum form.", no_args()),
        |_, ctx: Context| async move {
            let schema = json!({
                "type": "object",
                "properties": {
                    "untitledSingle": {"type": "string", "description": "Choose an option", "enum": ["option1", "option2", "option3"]},
                    "titledSingle": {"type": "string", "description": "Choose a titled option", "oneOf": [
                        {"const": "value1", "title": "First Option"},
                        {"const": "value2", "title": "Second Option"},
                        {"const": "value3", "title": "Third Option"}
                    ]},
                    "legacyEnum": {"type": "string", "description": "Choose a legacy option", "enum": ["opt1", "opt2", "opt3"],
                        "enumNames": ["Option One", "Option Two", "Option Three"]},
                    "untitledMulti": {"type": "array", "description": "Choose multiple options", "minItems": 1, "maxItems": 3,
                        "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
                    "titledMulti": {"type": "array", "description": "Choose multiple titled options", "minItems": 1, "maxItems": 3,
                        "items": {"anyOf": [
                            {"const": "value1", "title": "First Choice"},
                            {"const": "value2", "title": "Second Choice"},
                            {"const": "value3", "title": "Third Choice"}
                        ]}}
                },
                "required": []
            });
            elicit_and_report(&ctx, "Please select options from the enum fields".into(), schema, "Elicitation completed").await
        },
    );
    server.add_tool(
        Tool::new(
            "json_schema_2020_12_tool",
            "A tool whose input schema uses JSON Schema 2020-12 features.",
            json!({
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "type": "object",
                "$defs": {"address": {"$anchor": "addressDef", "type": "object",
                    "properties": {"street": {"type": "string"}, "city": {"type": "string"}}}},
                "properties": {
                    "name": {"type": "string"},
                    "address": {"$ref": "#/$defs/address"},
                    "contactMethod": {"type": "string", "enum": ["phone", "email"]},
                    "phone": {"type": "string"},
                    "email": {"type": "string"}
                },
                "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
                "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
                "then": {"required": ["phone"]},
                "else": {"required": ["email"]},
                "additionalProperties": false
            }),
        ),
        |args, _| async move { Ok(CallToolResult::text(format!("Received: {}", Value::Object(args)))) },
    );
    // Weak: the server holds this tool, which must not hold the server.
    let weak = server.downgrade();
    server.add_tool(
        Tool::new(
            "test_touch_resource",
            "Announces that a resource changed: every client subscribed to it, on every instance of the server, \
             gets notifications/resources/updated.",
            json!({"type":"object","properties":{
                "uri":{"type":"string","description":"The resource's URI"}
            },"required":["uri"]}),
        ),
        move |args, _| {
            let server = weak.upgrade();
            async move {
                let uri = string_arg(&args, "uri")?;
                if let Some(server) = server {
                    server.notify_resource_updated(uri.clone());
                }
                Ok(CallToolResult::text(format!("announced an update of {uri}")))
            }
        },
    );
    server.add_tool(
        Tool::new("test_reconnection", "Completes after a short pause (SSE reconnection test over HTTP).", no_args()),
        |_, ctx: Context| async move {
            // Over HTTP with a resumable session this closes the response stream: the client
            // reconnects with Last-Event-ID and gets the result from the event store.
            ctx.close_response_stream().await;
            tokio::time::sleep(Duration::from_millis(100)).await;
            Ok(CallToolResult::text("Reconnection test completed successfully. The result arrived after the pause."))
        },
    );
}

async fn elicit_and_report(
    ctx: &Context,
    message: String,
    schema: Value,
    label: &str,
) -> HandlerResult<CallToolResult> {
    let answer = ctx.elicit(form_with(&message, schema)).await?;
    let content = answer.content.map(Value::Object).unwrap_or(Value::Null);
    Ok(CallToolResult::text(format!("{label}: action={}, content={content}", answer.action)))
}

/// A static text resource.
#[resource("test://static-text", name = "static-text", title = "Static text", mime_type = "text/plain")]
fn static_text() -> &'static str {
    "This is the content of the static text resource."
}

/// A static PNG image.
#[resource("test://static-binary", name = "static-binary", title = "Static binary", mime_type = "image/png")]
fn static_binary() -> ResourceContents {
    ResourceContents::blob("test://static-binary", Some("image/png"), PNG)
}

/// A resource to subscribe to.
#[resource("test://watched-resource", name = "watched-resource", title = "Watched resource", mime_type = "text/plain")]
fn watched_resource() -> &'static str {
    "Watched resource content"
}

/// JSON data for an id.
#[resource("test://template/{id}/data", title = "Data by id", mime_type = "application/json")]
fn template(id: String) -> String {
    json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")}).to_string()
}

/// A prompt without arguments.
#[prompt]
fn test_simple_prompt() -> &'static str {
    "This is a simple prompt for testing."
}

/// A prompt with two required arguments.
#[prompt]
fn test_prompt_with_arguments(
    /// First test argument
    arg1: String,
    /// Second test argument
    arg2: String,
) -> String {
    format!("Prompt with arguments: arg1='{arg1}', arg2='{arg2}'")
}

/// A prompt that embeds a resource.
#[prompt]
#[allow(non_snake_case)]
fn test_prompt_with_embedded_resource(
    /// URI of the resource to embed
    resourceUri: String,
) -> Vec<PromptMessage> {
    let contents = ResourceContents::text(resourceUri, Some("text/plain"), "Embedded resource content for testing.");
    vec![
        PromptMessage { role: Role::User, content: ContentBlock::resource(contents) },
        PromptMessage::user_text("Please process the embedded resource above."),
    ]
}

/// A prompt with an image.
#[prompt]
fn test_prompt_with_image() -> Vec<PromptMessage> {
    vec![
        PromptMessage { role: Role::User, content: ContentBlock::image(PNG, "image/png") },
        PromptMessage::user_text("Please analyze the image above."),
    ]
}

/// The README's example, compiled as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeExample;
