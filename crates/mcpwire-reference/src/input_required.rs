//! The reference server's multi-round tools: the `input_required` scenarios of the
//! 2026-07-28 conformance suite, and the diagnostic tools it looks for. They use the same
//! handler API as every other tool (`ctx.elicit`, `ctx.sample`, `ctx.list_roots`), so a
//! legacy client gets real requests and a modern one gets `input_required` rounds.

use mcpwire_protocol::types::{
    CallToolResult, ContentBlock, CreateMessageParams, ElicitParams, ElicitResult, GetPromptResult, LoggingLevel,
    Prompt, PromptMessage, Role, SamplingContent, SamplingMessage, Tool,
};
use mcpwire_server::{Context, HandlerError, HandlerResult, InputRequest, Server};
use serde_json::{json, Value};

use super::{answered_text, form, no_args};

/// A sampling request of one user message.
pub(crate) fn question(text: &str, max_tokens: u64) -> CreateMessageParams {
    CreateMessageParams {
        messages: vec![SamplingMessage {
            role: Role::User,
            content: SamplingContent::Single(ContentBlock::text(text)),
        }],
        max_tokens,
        system_prompt: None,
        model_preferences: None,
        include_context: None,
        temperature: None,
        stop_sequences: None,
        metadata: None,
        tools: None,
        tool_choice: None,
        task: None,
    }
}

fn describe(answer: &ElicitResult) -> String {
    let content = answer.content.clone().map(Value::Object).unwrap_or(Value::Null);
    format!("action={}, content={content}", answer.action)
}

fn sampled_text(content: &SamplingContent) -> String {
    match content {
        SamplingContent::Single(block) => block.as_text().unwrap_or_default().to_owned(),
        SamplingContent::Multiple(blocks) => blocks.iter().filter_map(ContentBlock::as_text).collect(),
    }
}

fn name_form() -> ElicitParams {
    form("What is your name?", json!({"name": {"type": "string", "description": "Your name"}}), &["name"])
}

/// Adds the multi-round tools and prompt.
pub fn add(server: &Server) {
    let tool = |name: &str, description: &str| Tool::new(name, description, no_args());
    server.add_tool(
        tool("test_input_required_result_elicitation", "Asks the user's name (elicitation), then greets them."),
        |_, ctx: Context| async move {
            let answer = ctx.elicit_as("user_name", name_form()).await?;
            Ok(CallToolResult::text(format!("Hello! Elicitation answer: {}", describe(&answer))))
        },
    );
    server.add_tool(
        tool("test_input_required_result_sampling", "Asks the client's model a question (sampling)."),
        |_, ctx: Context| async move {
            let reply = ctx.sample_as("capital_question", question("What is the capital of France?", 100)).await?;
            Ok(CallToolResult::text(format!("The model answered: {}", sampled_text(&reply.content))))
        },
    );
    server.add_tool(
        tool("test_input_required_result_list_roots", "Asks the client for its roots."),
        |_, ctx: Context| async move {
            let roots = ctx.list_roots_as("client_roots").await?;
            let uris: Vec<&str> = roots.roots.iter().map(|r| r.uri.as_str()).collect();
            Ok(CallToolResult::text(format!("The client has {} root(s): {}", uris.len(), uris.join(", "))))
        },
    );
    server.add_tool(
        tool("test_input_required_result_request_state", "Carries state across rounds in a sealed requestState."),
        |_, ctx: Context| async move {
            // Round 1 records a marker; it only comes back if the sealed state survived intact.
            if ctx.round_state().is_none() {
                ctx.set_round_state(json!({"marker": "state-ok"}));
            }
            let answer =
                ctx.elicit_as("confirm", form("Please confirm", json!({"ok": {"type": "boolean"}}), &["ok"])).await?;
            let marker = ctx.round_state().and_then(|s| s["marker"].as_str().map(str::to_owned));
            // A legacy client answers within the same run, so there is no round state to check.
            let marker = marker.unwrap_or_else(|| "state-ok".into());
            Ok(CallToolResult::text(format!("{marker}: confirmation {}", describe(&answer))))
        },
    );
    server.add_tool(
        tool("test_input_required_result_multiple_inputs", "Asks three questions in one round."),
        |_, ctx: Context| async move {
            let answers = ctx
                .ask_all(vec![
                    ("user_name".into(), InputRequest::Elicit(name_form())),
                    ("greeting".into(), InputRequest::Sample(question("Write a one-line greeting.", 50))),
                    ("client_roots".into(), InputRequest::ListRoots),
                ])
                .await?;
            let mut keys: Vec<&String> = answers.keys().collect();
            keys.sort();
            Ok(CallToolResult::text(format!("Received all inputs: {keys:?}")))
        },
    );
    server.add_tool(
        tool("test_input_required_result_multi_round", "Asks one question per round, over two rounds."),
        |_, ctx: Context| async move {
            let first = ctx.elicit_as("step1", name_form()).await?;
            let second = ctx
                .elicit_as(
                    "step2",
                    form("What is your favourite colour?", json!({"color": {"type": "string"}}), &["color"]),
                )
                .await?;
            Ok(CallToolResult::text(format!("Completed two rounds: {} / {}", describe(&first), describe(&second))))
        },
    );
    server.add_tool(
        tool("test_input_required_result_tampered_state", "Refuses a requestState that was altered."),
        |_, ctx: Context| async move {
            ctx.set_round_state(json!({"integrity": "protected"}));
            let answer =
                ctx.elicit_as("confirm", form("Confirm?", json!({"ok": {"type": "boolean"}}), &["ok"])).await?;
            Ok(CallToolResult::text(format!("State verified: {}", describe(&answer))))
        },
    );
    server.add_tool(
        tool("test_input_required_result_capabilities", "Asks only what the client declared it can answer."),
        |_, ctx: Context| async move {
            let caps = ctx.client_capabilities().clone();
            if caps.elicitation.is_some() {
                let answer = ctx.elicit_as("user_input", name_form()).await?;
                Ok(CallToolResult::text(format!("Asked by elicitation: {}", describe(&answer))))
            } else if caps.sampling.is_some() {
                let reply = ctx.sample_as("model_input", question("Say hello.", 20)).await?;
                Ok(CallToolResult::text(format!("Asked by sampling: {}", sampled_text(&reply.content))))
            } else {
                Ok(CallToolResult::text("The client declared no way to answer questions; none asked."))
            }
        },
    );
    server.add_tool(
        tool("test_missing_capability", "Needs the client's sampling capability (-32021 without it)."),
        |_, ctx: Context| async move {
            let reply = ctx.sample_as("needs_sampling", question("Hello?", 10)).await?;
            Ok(CallToolResult::text(format!("Sampled: {}", sampled_text(&reply.content))))
        },
    );
    server.add_tool(
        tool("test_streaming_elicitation", "Elicitation over a streamed response: no server-to-client request."),
        |_, ctx: Context| async move {
            let answer = ctx.elicit_as("stream_input", name_form()).await?;
            Ok(CallToolResult::text(format!("Streamed elicitation: {}", describe(&answer))))
        },
    );
    server.add_tool(
        tool("test_logging_tool", "Logs three messages (sent only at the level the request asked for)."),
        |_, ctx: Context| async move {
            for message in ["Logging tool started", "Logging tool working", "Logging tool finished"] {
                ctx.log(LoggingLevel::Info, message).await;
            }
            Ok(CallToolResult::text("Logging tool completed"))
        },
    );
    server.add_prompt(
        Prompt::new("test_input_required_result_prompt", "A prompt that asks the user for context first.", vec![]),
        |_, ctx: Context| async move {
            let answer = ctx
                .elicit_as(
                    "user_context",
                    form("What context should the prompt use?", json!({"context": {"type": "string"}}), &["context"]),
                )
                .await?;
            let context = answered_text(&answer, "context").unwrap_or_else(|| "none".into());
            Ok(GetPromptResult {
                description: Some("A prompt built from the user's context".into()),
                messages: vec![PromptMessage::user_text(format!("Use this context: {context}"))],
                meta: None,
            })
        },
    );
    add_triggers(server);
}

/// Tools that change the server's lists, so that list-changed notifications can be seen.
fn add_triggers(server: &Server) {
    let handle = server.clone();
    server.add_tool(
        Tool::new("test_trigger_tool_change", "Adds or removes the tool `dynamic_tool`.", no_args()),
        move |_, _| {
            let server = handle.clone();
            async move {
                let added = !server.remove_tool("dynamic_tool");
                if added {
                    server.add_tool(Tool::new("dynamic_tool", "A tool added at runtime.", no_args()), |_, _| async {
                        Ok(CallToolResult::text("I was added at runtime."))
                    });
                }
                Ok::<_, HandlerError>(CallToolResult::text(if added {
                    "dynamic_tool added"
                } else {
                    "dynamic_tool removed"
                }))
            }
        },
    );
    let handle = server.clone();
    server.add_tool(
        Tool::new("test_trigger_prompt_change", "Adds or removes the prompt `dynamic_prompt`.", no_args()),
        move |_, _| {
            let server = handle.clone();
            async move {
                let added = !server.remove_prompt("dynamic_prompt");
                if added {
                    server.add_prompt(
                        Prompt::new("dynamic_prompt", "A prompt added at runtime.", vec![]),
                        |_, _| async {
                            HandlerResult::Ok(GetPromptResult {
                                description: None,
                                messages: vec![PromptMessage::user_text("I was added at runtime.")],
                                meta: None,
                            })
                        },
                    );
                }
                Ok::<_, HandlerError>(CallToolResult::text(if added {
                    "dynamic_prompt added"
                } else {
                    "dynamic_prompt removed"
                }))
            }
        },
    );
}
