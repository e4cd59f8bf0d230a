//! The reference server's task tools (2025-11-25 tasks and the 2026-07-28
//! `io.modelcontextprotocol/tasks` extension): a long-running counter that may run as a
//! task, one that must, and one that asks the user a question while it runs; plus the
//! fixtures the official conformance suite's `tasks-*` scenarios (SEP-2663) call by name:
//! `greet`, `slow_compute`, `confirm_delete`, `multi_input`, `failing_job`,
//! `protocol_error_job` and `test_tool_with_task`.

use std::time::Duration;

use mcpwire_protocol::types::{CallToolResult, ElicitResult, JsonObject, TaskMetadata, TaskSupport, Tool};
use mcpwire_protocol::{ErrorObject, Method, ProtocolVersion};
use mcpwire_server::{Context, HandlerError, InputRequest, Server, TaskConfig};
use serde_json::{json, Value};

use super::{answered_text, form, no_args};

/// How the reference server runs tasks: short polling intervals (it is a test server) and
/// the defaults otherwise.
pub fn config() -> TaskConfig {
    TaskConfig { poll_interval: Duration::from_millis(100), ..TaskConfig::default() }
}

fn integer_arg(args: &JsonObject, name: &str, default: u64, max: u64) -> Result<u64, HandlerError> {
    match args.get(name) {
        None | Some(Value::Null) => Ok(default),
        Some(v) => v
            .as_u64()
            .filter(|n| *n <= max)
            .ok_or_else(|| HandlerError::tool(format!("`{name}` must be an integer from 0 to {max}"))),
    }
}

/// Counts to `steps`, pausing `delay` at each step, with progress and the task's status
/// message; stops at once when cancelled.
async fn count(ctx: &Context, steps: u64, delay: Duration) -> Result<(), HandlerError> {
    for step in 1..=steps {
        tokio::select! {
            _ = ctx.cancellation().cancelled() => return Err(HandlerError::tool("cancelled")),
            _ = tokio::time::sleep(delay) => {}
        }
        let message = format!("step {step} of {steps}");
        // Without a progress token there is nobody to tell: not an error.
        let _ = ctx.progress(step as f64, Some(steps as f64), Some(&message)).await;
        ctx.set_task_status_message(message).await;
    }
    Ok(())
}

fn answered(answer: &ElicitResult, field: &str) -> String {
    answer.content.as_ref().and_then(|c| c.get(field)).map(|v| v.to_string()).unwrap_or_else(|| "null".into())
}

/// Sleeps `seconds` (a number, at most 3600), stopping at once when cancelled.
async fn sleep_or_cancel(ctx: &Context, seconds: f64) -> Result<(), HandlerError> {
    let wait = Duration::from_secs_f64(seconds.clamp(0.0, 3600.0));
    tokio::select! {
        _ = ctx.cancellation().cancelled() => Err(HandlerError::tool("cancelled")),
        _ = tokio::time::sleep(wait) => Ok(()),
    }
}

/// The fixtures of the conformance suite's `tasks-*` scenarios.
fn add_conformance_fixtures(server: &Server) {
    server.add_tool(
        Tool::new(
            "greet",
            "Greets `name` at once (never a task).",
            json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}),
        ),
        |args, _| async move {
            let name = args.get("name").and_then(Value::as_str).unwrap_or("World").to_owned();
            Ok(CallToolResult::text(format!("Hello, {name}!")))
        },
    );
    server.add_tool(
        Tool::new(
            "slow_compute",
            "Sleeps `seconds`, then answers with `label`. May run as a task.",
            json!({"type": "object", "properties": {
                "seconds": {"type": "number", "description": "How long to work", "default": 1},
                "label": {"type": "string", "description": "Echoed in the result", "default": "compute"}
            }}),
        )
        .with_task_support(TaskSupport::Optional),
        |args, ctx: Context| async move {
            let seconds = args.get("seconds").and_then(Value::as_f64).unwrap_or(1.0);
            let label = args.get("label").and_then(Value::as_str).unwrap_or("compute").to_owned();
            sleep_or_cancel(&ctx, seconds).await?;
            Ok(CallToolResult::text(format!("Computed {label} in {seconds}s.")))
        },
    );
    server.add_tool(
        Tool::new(
            "confirm_delete",
            "Asks the user to confirm deleting `filename` while it runs as a task.",
            json!({"type": "object", "properties": {"filename": {"type": "string"}}, "required": ["filename"]}),
        )
        .with_task_support(TaskSupport::Optional),
        |args, ctx: Context| async move {
            let filename = args.get("filename").and_then(Value::as_str).unwrap_or("file").to_owned();
            // A first wait, so that a 2026-07-28 call is a task before it asks.
            tokio::task::yield_now().await;
            let question = form(
                &format!("Delete {filename}?"),
                json!({"confirm": {"type": "boolean", "description": "Delete the file"}}),
                &["confirm"],
            );
            let answer = ctx.elicit_as("confirm", question).await?;
            let verdict = if answered(&answer, "confirm") == "true" { "deleted" } else { "kept" };
            Ok(CallToolResult::text(format!("{filename} {verdict} (action={}).", answer.action)))
        },
    );
    server.add_tool(
        Tool::new("multi_input", "Asks two questions at once while it runs as a task.", no_args())
            .with_task_support(TaskSupport::Optional),
        |_, ctx: Context| async move {
            tokio::task::yield_now().await;
            let name = form("Your name?", json!({"name": {"type": "string"}}), &["name"]);
            let confirm = form("Proceed?", json!({"confirm": {"type": "boolean"}}), &["confirm"]);
            let answers = ctx
                .ask_all(vec![
                    ("name".into(), InputRequest::Elicit(name)),
                    ("confirm".into(), InputRequest::Elicit(confirm)),
                ])
                .await?;
            let parse = |k: &str| serde_json::from_value::<ElicitResult>(answers.get(k).cloned().unwrap_or_default());
            let (name, confirm) = match (parse("name"), parse("confirm")) {
                (Ok(n), Ok(c)) => (n, c),
                _ => return Err(HandlerError::tool("malformed answers")),
            };
            Ok(CallToolResult::text(format!(
                "name={}, confirm={}",
                answered(&name, "name"),
                answered(&confirm, "confirm")
            )))
        },
    );
    server.add_tool(
        Tool::new("failing_job", "Fails (a tool error) after about a second; only runs as a task.", no_args())
            .with_task_support(TaskSupport::Required),
        |_, ctx: Context| async move {
            sleep_or_cancel(&ctx, 1.0).await?;
            Err(HandlerError::tool("The job failed: the input could not be processed."))
        },
    );
    server.add_tool(
        Tool::new("protocol_error_job", "Fails with a JSON-RPC error (not a tool error).", no_args())
            .with_task_support(TaskSupport::Optional),
        |_, ctx: Context| async move {
            sleep_or_cancel(&ctx, 0.1).await?;
            Err(HandlerError::Protocol(ErrorObject::internal("the job's backend is unavailable")))
        },
    );
    server.add_tool(
        Tool::new(
            "test_tool_with_task",
            "Asks the user's name first (a multi-round question), then works on as a task.",
            no_args(),
        )
        .with_task_support(TaskSupport::Required),
        |_, ctx: Context| async move {
            let answer = ctx
                .elicit_as("user_name", form("What is your name?", json!({"name": {"type": "string"}}), &["name"]))
                .await?;
            let name = answered_text(&answer, "name").unwrap_or_else(|| "stranger".into());
            sleep_or_cancel(&ctx, 0.2).await?;
            Ok(CallToolResult::text(format!("Processed the request of {name}.")))
        },
    );
}

/// Adds the task tools.
pub fn add(server: &Server) {
    add_conformance_fixtures(server);
    server.add_tool(
        Tool::new(
            "test_client_task_elicitation",
            "Asks the user for a username and an email; a 2025-11-25 client that answers elicitations as tasks \
             (tasks.requests.elicitation.create) is asked with a task, polled and read. `ttlMs` bounds the task.",
            json!({"type": "object", "properties": {
                "ttlMs": {"type": "integer", "description": "The task's time to live, in ms (at most 3600000)"}
            }}),
        ),
        |args, ctx: Context| async move {
            let as_task = ctx.revision() == ProtocolVersion::V2025_11_25
                && ctx.client_capabilities().takes_task_requests(Method::Elicit);
            let mut question = form(
                "Please provide a username and an email",
                json!({
                    "username": {"type": "string", "description": "User's response"},
                    "email": {"type": "string", "description": "User's email address"}
                }),
                &["username", "email"],
            );
            if args.contains_key("ttlMs") {
                question.task = Some(TaskMetadata { ttl: Some(integer_arg(&args, "ttlMs", 0, 3_600_000)?) });
            }
            let answer = ctx.elicit(question).await?;
            let content = answer.content.map(Value::Object).unwrap_or(Value::Null);
            let how = if as_task { "as a task" } else { "plainly" };
            Ok(CallToolResult::text(format!("User response ({how}): action={}, content={content}", answer.action)))
        },
    );
    server.add_tool(
        Tool::new(
            "test_long_running_task",
            "Counts to `steps`, pausing `delayMs` at each step, reporting progress. May run as a task.",
            json!({"type": "object", "properties": {
                "steps": {"type": "integer", "description": "How far to count (at most 1000)", "default": 5},
                "delayMs": {"type": "integer", "description": "Pause at each step, in ms (at most 60000)", "default": 100}
            }}),
        )
        .with_task_support(TaskSupport::Optional),
        |args, ctx: Context| async move {
            let steps = integer_arg(&args, "steps", 5, 1000)?;
            let delay = Duration::from_millis(integer_arg(&args, "delayMs", 100, 60_000)?);
            count(&ctx, steps, delay).await?;
            Ok(CallToolResult::text(format!("Counted to {steps}.")))
        },
    );
    server.add_tool(
        Tool::new("test_task_required", "Must be called as a task; completes after a short pause.", no_args())
            .with_task_support(TaskSupport::Required),
        |_, ctx: Context| async move {
            count(&ctx, 2, Duration::from_millis(50)).await?;
            let task = ctx.task_id().unwrap_or("none (this revision has no tasks)");
            Ok(CallToolResult::text(format!("Ran as task {task}.")))
        },
    );
    server.add_tool(
        Tool::new("test_task_elicitation", "Asks the user's name while it runs (as a task or not).", no_args())
            .with_task_support(TaskSupport::Optional),
        |_, ctx: Context| async move {
            let question =
                form("What is your name?", json!({"name": {"type": "string", "description": "Your name"}}), &["name"]);
            let answer = ctx.elicit_as("name", question).await?;
            let name = answered_text(&answer, "name").unwrap_or_else(|| "stranger".into());
            Ok(CallToolResult::text(format!("Hello, {name}! (action={})", answer.action)))
        },
    );
}
