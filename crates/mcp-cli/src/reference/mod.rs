//! The reference server behind `mcp serve`: every feature, and every tool, resource and
//! prompt the official conformance suite expects, with its exact names and outputs.

use std::collections::HashMap;
use std::time::Duration;

use mcp_protocol::types::{
    CallToolResult, ContentBlock, CreateMessageParams, ElicitParams, ElicitResult, GetPromptResult, JsonObject,
    LoggingLevel, Prompt, PromptArgument, PromptMessage, ReadResourceResult, Resource, ResourceContents,
    ResourceTemplate, Role, SamplingContent, SamplingMessage, Tool, ToolAnnotations,
};
use mcp_server::{Context, HandlerError, HandlerResult, Server};
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
    let server = Server::builder("mcp-reference-server", env!("CARGO_PKG_VERSION"))
        .instructions("The reference server of the `mcp` tool: every MCP feature, for testing clients.")
        .tasks(tasks::config())
        .modern_only(modern_only)
        .build();
    add_tools(&server);
    add_resources(&server);
    add_prompts(&server);
    input_required::add(&server);
    tasks::add(&server);
    server
}

fn add_tools(server: &Server) {
    server.add_tool(
        Tool::new(
            "echo",
            "Returns its `text` argument as text content.",
            json!({"type":"object","properties":{"text":{"type":"string","description":"Text to echo"}},"required":["text"]}),
        ),
        |args, _ctx| async move { Ok(CallToolResult::text(string_arg(&args, "text")?)) },
    );
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
    server.add_tool(Tool::new("test_simple_text", "Returns a simple text response.", no_args()), |_, _| async {
        Ok(CallToolResult::text("This is a simple text response for testing."))
    });
    server.add_tool(Tool::new("test_image_content", "Returns a PNG image.", no_args()), |_, _| async {
        Ok(CallToolResult::success(vec![ContentBlock::image(PNG, "image/png")]))
    });
    server.add_tool(Tool::new("test_audio_content", "Returns a WAV clip.", no_args()), |_, _| async {
        Ok(CallToolResult::success(vec![ContentBlock::audio(WAV, "audio/wav")]))
    });
    server.add_tool(Tool::new("test_embedded_resource", "Returns an embedded resource.", no_args()), |_, _| async {
        Ok(CallToolResult::success(vec![ContentBlock::resource(ResourceContents::text(
            "test://embedded-resource",
            Some("text/plain"),
            "This is an embedded resource content.",
        ))]))
    });
    server.add_tool(
        Tool::new("test_multiple_content_types", "Returns text, an image and a resource.", no_args()),
        |_, _| async {
            Ok(CallToolResult::success(vec![
                ContentBlock::text("Multiple content types test:"),
                ContentBlock::image(PNG, "image/png"),
                ContentBlock::resource(ResourceContents::text(
                    "test://mixed-content-resource",
                    Some("application/json"),
                    r#"{"test":"data","value":123}"#,
                )),
            ]))
        },
    );
    server.add_tool(
        Tool::new("test_tool_with_logging", "Sends three log messages while it runs.", no_args()),
        |_, ctx: Context| async move {
            ctx.log(LoggingLevel::Info, "Tool execution started").await;
            pause().await;
            ctx.log(LoggingLevel::Info, "Tool processing data").await;
            pause().await;
            ctx.log(LoggingLevel::Info, "Tool execution completed").await;
            Ok(CallToolResult::text("Tool with logging executed successfully"))
        },
    );
    server.add_tool(
        Tool::new("test_tool_with_progress", "Reports progress 0, 50, 100 of 100.", no_args()),
        |_, ctx: Context| async move {
            for (i, step) in [0.0, 50.0, 100.0].into_iter().enumerate() {
                if i > 0 {
                    pause().await;
                }
                // Without a progress token there is nobody to tell: not an error.
                let _ = ctx.progress(step, Some(100.0), Some(&format!("step {}", i + 1))).await;
            }
            // Some clients (the TypeScript SDK) drop a progress notification that arrives in
            // the same read as the response: leave a gap, as the reference server's pacing does.
            pause().await;
            Ok(CallToolResult::text("Progress test completed"))
        },
    );
    server.add_tool(Tool::new("test_error_handling", "Always fails, as a tool error.", no_args()), |_, _| async {
        Err(HandlerError::tool("This tool intentionally returns an error for testing"))
    });
    server.add_tool(
        Tool::new(
            "test_sampling",
            "Asks the client's model to answer `prompt`.",
            json!({"type":"object","properties":{"prompt":{"type":"string","description":"The prompt to send"}},"required":["prompt"]}),
        ),
        |args, ctx: Context| async move {
            let prompt = string_arg(&args, "prompt")?;
            let reply = ctx
                .sample(CreateMessageParams {
                    messages: vec![SamplingMessage {
                        role: Role::User,
                        content: SamplingContent::Single(ContentBlock::text(prompt)),
                    }],
                    max_tokens: 100,
                    system_prompt: None,
                    model_preferences: None,
                    include_context: None,
                    temperature: None,
                    stop_sequences: None,
                    metadata: None,
                    tools: None,
                    tool_choice: None,
                })
                .await?;
            let text = match &reply.content {
                SamplingContent::Single(block) => block.as_text().unwrap_or_default().to_owned(),
                SamplingContent::Multiple(blocks) => blocks.iter().filter_map(ContentBlock::as_text).collect(),
            };
            Ok(CallToolResult::text(format!("LLM response: {text}")))
        },
    );
    server.add_tool(
        Tool::new(
            "test_elicitation",
            "Asks the user for a username and an email.",
            json!({"type":"object","properties":{"message":{"type":"string","description":"What to ask"}},"required":["message"]}),
        ),
        |args, ctx: Context| async move {
            let message = string_arg(&args, "message")?;
            let schema = json!({
                "type": "object",
                "properties": {
                    "username": {"type": "string", "description": "User's response"},
                    "email": {"type": "string", "description": "User's email address"}
                },
                "required": ["username", "email"]
            });
            elicit_and_report(&ctx, message, schema, "User response").await
        },
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
    let mut add = Tool::new(
        "add",
        "Adds two numbers; the sum is also given as structured content.",
        json!({"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}),
    );
    add.title = Some("Add numbers".into());
    add.output_schema =
        Some(object(json!({"type":"object","properties":{"sum":{"type":"number"}},"required":["sum"]})));
    add.annotations =
        Some(ToolAnnotations { read_only_hint: Some(true), idempotent_hint: Some(true), ..Default::default() });
    server.add_tool(add, |args, _| async move {
        let number = |k: &str| {
            args.get(k).and_then(Value::as_f64).ok_or_else(|| HandlerError::tool(format!("`{k}` must be a number")))
        };
        let sum = number("a")? + number("b")?;
        Ok(CallToolResult::structured(json!({"sum": sum})))
    });
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

fn add_resources(server: &Server) {
    let mut text = Resource::new("test://static-text", "static-text");
    text.title = Some("Static text".into());
    text.description = Some("A static text resource.".into());
    text.mime_type = Some("text/plain".into());
    server.add_resource(text, |uri, _| async move {
        Ok(ReadResourceResult {
            contents: vec![ResourceContents::text(
                uri,
                Some("text/plain"),
                "This is the content of the static text resource.",
            )],
            meta: None,
        })
    });
    let mut binary = Resource::new("test://static-binary", "static-binary");
    binary.title = Some("Static binary".into());
    binary.description = Some("A static PNG image.".into());
    binary.mime_type = Some("image/png".into());
    server.add_resource(binary, |uri, _| async move {
        Ok(ReadResourceResult { contents: vec![ResourceContents::blob(uri, Some("image/png"), PNG)], meta: None })
    });
    let mut watched = Resource::new("test://watched-resource", "watched-resource");
    watched.title = Some("Watched resource".into());
    watched.description = Some("A resource to subscribe to.".into());
    watched.mime_type = Some("text/plain".into());
    server.add_resource(watched, |uri, _| async move {
        Ok(ReadResourceResult {
            contents: vec![ResourceContents::text(uri, Some("text/plain"), "Watched resource content")],
            meta: None,
        })
    });
    let template = ResourceTemplate {
        uri_template: "test://template/{id}/data".into(),
        name: "template".into(),
        title: Some("Data by id".into()),
        description: Some("JSON data for an id.".into()),
        mime_type: Some("application/json".into()),
        icons: None,
        annotations: None,
        meta: None,
    };
    let completions = HashMap::from([("id".to_owned(), vec!["1".into(), "2".into(), "123".into()])]);
    server
        .add_resource_template_with_completions(template, completions, |uri, vars, _| async move {
            let id = vars.get("id").cloned().unwrap_or_default();
            let text = json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")}).to_string();
            Ok(ReadResourceResult {
                contents: vec![ResourceContents::text(uri, Some("application/json"), text)],
                meta: None,
            })
        })
        .expect("the reference template is valid");
}

fn add_prompts(server: &Server) {
    server.add_prompt(Prompt::new("test_simple_prompt", "A prompt without arguments.", vec![]), |_, _| async {
        Ok(GetPromptResult {
            description: None,
            messages: vec![PromptMessage::user_text("This is a simple prompt for testing.")],
            meta: None,
        })
    });
    let completions = HashMap::from([
        ("arg1".to_owned(), vec!["test1".into(), "test2".into(), "value".into()]),
        ("arg2".to_owned(), vec!["alpha".into(), "beta".into()]),
    ]);
    server.add_prompt_with_completions(
        Prompt::new(
            "test_prompt_with_arguments",
            "A prompt with two required arguments.",
            vec![
                PromptArgument::new("arg1", "First test argument", true),
                PromptArgument::new("arg2", "Second test argument", true),
            ],
        ),
        completions,
        |args, _| async move {
            let arg = |k: &str| args.get(k).cloned().unwrap_or_default();
            let text = format!("Prompt with arguments: arg1='{}', arg2='{}'", arg("arg1"), arg("arg2"));
            Ok(GetPromptResult { description: None, messages: vec![PromptMessage::user_text(text)], meta: None })
        },
    );
    server.add_prompt(
        Prompt::new(
            "test_prompt_with_embedded_resource",
            "A prompt that embeds a resource.",
            vec![PromptArgument::new("resourceUri", "URI of the resource to embed", true)],
        ),
        |args, _| async move {
            let uri = args.get("resourceUri").cloned().unwrap_or_default();
            Ok(GetPromptResult {
                description: None,
                messages: vec![
                    PromptMessage {
                        role: Role::User,
                        content: ContentBlock::resource(ResourceContents::text(
                            uri,
                            Some("text/plain"),
                            "Embedded resource content for testing.",
                        )),
                    },
                    PromptMessage::user_text("Please process the embedded resource above."),
                ],
                meta: None,
            })
        },
    );
    server.add_prompt(Prompt::new("test_prompt_with_image", "A prompt with an image.", vec![]), |_, _| async {
        Ok(GetPromptResult {
            description: None,
            messages: vec![
                PromptMessage { role: Role::User, content: ContentBlock::image(PNG, "image/png") },
                PromptMessage::user_text("Please analyze the image above."),
            ],
            meta: None,
        })
    });
}
