//! Tasks through the client's typed calls, against the real server in memory: 2025-11-25
//! (task-augmented calls, `tasks/get`, `tasks/result`, `tasks/list`, `tasks/cancel`, status
//! notifications) and the 2026-07-28 extension (transparent and explicit polling,
//! `tasks/update` answers, cancellation, the bounded wait).
//!
//! The tests run on tokio's paused clock (`start_paused`): the handlers' work, the poll
//! intervals and the bounded wait take no wall-clock time.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use mcpwire_client::{CallToolOutcome, Client, ClientError, ClientSession, ProtocolVersion, ServerNotification};
use mcpwire_protocol::types::{
    CallToolResult, ContentBlock, ElicitParams, ElicitResult, Task, TaskStatus, TaskSupport, Tool,
};
use mcpwire_protocol::ErrorObject;
use mcpwire_server::{Context, HandlerError, Server, TaskConfig};
use serde_json::{json, Value};

fn text(result: &CallToolResult) -> &str {
    result.content.first().and_then(ContentBlock::as_text).unwrap_or_default()
}

/// `count` (optional; `steps` × 20 ms, raises `cancelled` when cancelled), `must`
/// (required), `broken` (a protocol error), `ask` (optional; asks a name).
fn task_server(cancelled: Arc<Signal>) -> Server {
    let config = TaskConfig { poll_interval: Duration::from_millis(20), ..TaskConfig::default() };
    let server = Server::builder("tasks", "1").page_size(2).tasks(config).build();
    server.add_tool(
        Tool::new("count", "counts", json!({"type":"object"})).with_task_support(TaskSupport::Optional),
        move |args, ctx: Context| {
            let cancelled = cancelled.clone();
            async move {
                let steps = args.get("steps").and_then(Value::as_u64).unwrap_or(3);
                for step in 1..=steps {
                    tokio::select! {
                        _ = ctx.cancellation().cancelled() => {
                            cancelled.raise();
                            return Err(HandlerError::tool("cancelled"));
                        }
                        _ = tokio::time::sleep(Duration::from_millis(20)) => {}
                    }
                    let _ = ctx.progress(step as f64, Some(steps as f64), None).await;
                }
                Ok(CallToolResult::text(format!("counted to {steps}")))
            }
        },
    );
    server.add_tool(
        Tool::new("must", "required", json!({"type":"object"})).with_task_support(TaskSupport::Required),
        |_, _| async { Ok(CallToolResult::text("must done")) },
    );
    server.add_tool(
        Tool::new("broken", "fails", json!({"type":"object"})).with_task_support(TaskSupport::Optional),
        |_, _| async {
            // Waits once first (a yield): a 2026-07-28 call becomes a task.
            tokio::task::yield_now().await;
            Err(HandlerError::Protocol(ErrorObject::internal("backend down")))
        },
    );
    server.add_tool(
        Tool::new("ask", "asks", json!({"type":"object"})).with_task_support(TaskSupport::Optional),
        |_, ctx: Context| async move {
            // Waits once first (a yield): a 2026-07-28 call becomes a task before it asks.
            tokio::task::yield_now().await;
            let form = ElicitParams {
                mode: None,
                message: "Your name?".into(),
                requested_schema: Some(
                    json!({"type":"object","properties":{"name":{"type":"string"}}}).as_object().unwrap().clone(),
                ),
                url: None,
                elicitation_id: None,
                task: None,
            };
            let answer = ctx.elicit(form).await?;
            let name = answer.content.and_then(|c| c.get("name").cloned()).unwrap_or_default();
            Ok(CallToolResult::text(format!("hello {}", name.as_str().unwrap_or("?"))))
        },
    );
    server
}

fn client(version: ProtocolVersion, tasks: bool) -> Client {
    Client::builder("c", "1")
        .protocol_version(version)
        .tasks(tasks)
        .task_wait(Duration::from_secs(5))
        .elicitation(|_| async {
            Ok(ElicitResult {
                action: "accept".into(),
                content: Some(json!({"name": "Ada"}).as_object().unwrap().clone()),
                meta: None,
            })
        })
        .build()
}

fn created(outcome: CallToolOutcome) -> Task {
    match outcome {
        CallToolOutcome::Task(t) => t,
        CallToolOutcome::Result(r) => panic!("expected a task, got the result {r:?}"),
    }
}

#[tokio::test(start_paused = true)]
async fn legacy_tasks_from_creation_to_result() {
    let cancelled = Arc::new(Signal::default());
    let server = task_server(cancelled.clone());
    let session = connect(&client(ProtocolVersion::V2025_11_25, false), &server).await;
    assert!(session.server_offers_tool_tasks());
    let mut notes = session.notifications();

    let task =
        created(session.call_tool_as_task("count", json!({"steps": 3}), Some(Duration::from_secs(60))).await.unwrap());
    assert_eq!(task.status, TaskStatus::Working);
    assert_eq!(task.ttl_ms, Some(60_000), "2025-11-25 `ttl` read into ttl_ms");
    assert!(task.poll_interval_ms.is_some());
    let polled = session.get_task(&task.task_id).await.unwrap();
    assert_eq!(polled.task_id, task.task_id);
    let result = session.task_result(&task.task_id).await.unwrap();
    assert_eq!(text(&result), "counted to 3");
    assert_eq!(session.wait_for_task(&task.task_id).await.unwrap().status, TaskStatus::Completed);
    // The status notification arrives (after the progress notifications, which have no
    // callback on this call).
    loop {
        match tokio::time::timeout(WAIT, notes.recv()).await.expect("a notification").unwrap() {
            ServerNotification::TaskStatus(t) if t.task_id == task.task_id => {
                assert_eq!(t.status, TaskStatus::Completed);
                break;
            }
            ServerNotification::Progress(_) => {}
            other => panic!("unexpected {other:?}"),
        }
    }

    // The wrong mode is -32601; a required tool works as a task.
    let e = session.call_tool("must", Value::Null).await.unwrap_err();
    assert_eq!(e.code(), Some(-32601), "{e}");
    let must = created(session.call_tool_as_task("must", Value::Null, None).await.unwrap());
    assert_eq!(text(&session.task_result(&must.task_id).await.unwrap()), "must done");

    // A JSON-RPC failure comes back as that error.
    let broken = created(session.call_tool_as_task("broken", Value::Null, None).await.unwrap());
    let e = session.task_result(&broken.task_id).await.unwrap_err();
    assert_eq!(e.code(), Some(-32603), "{e}");

    // Elicitation from inside a task is answered by the client's handler.
    let ask = created(session.call_tool_as_task("ask", Value::Null, None).await.unwrap());
    assert_eq!(text(&session.task_result(&ask.task_id).await.unwrap()), "hello Ada");

    // Listing, page by page.
    let first = session.list_tasks(None).await.unwrap();
    assert_eq!(first.tasks.len(), 2);
    let mut all = first.tasks.clone();
    let mut cursor = first.next_cursor;
    while let Some(c) = cursor {
        let page = session.list_tasks(Some(c)).await.unwrap();
        all.extend(page.tasks);
        cursor = page.next_cursor;
    }
    let ids: Vec<&str> = all.iter().map(|t| t.task_id.as_str()).collect();
    assert_eq!(ids, [&task.task_id, &must.task_id, &broken.task_id, &ask.task_id]);

    // Cancelling: the handler sees it, the task says so, a second cancel is refused.
    let long = created(session.call_tool_as_task("count", json!({"steps": 500}), None).await.unwrap());
    let after = session.cancel_task(&long.task_id).await.unwrap().expect("the cancelled task");
    assert_eq!(after.status, TaskStatus::Cancelled);
    cancelled.wait("the handler saw the cancellation").await;
    assert_eq!(session.cancel_task(&long.task_id).await.unwrap_err().code(), Some(-32602));
    assert_eq!(session.get_task(&long.task_id).await.unwrap().status, TaskStatus::Cancelled);
    assert_eq!(session.get_task("no-such-task").await.unwrap_err().code(), Some(-32602));
    let e = session.update_task(&long.task_id, Default::default()).await.unwrap_err();
    assert!(e.is_unsupported(), "tasks/update is 2026-07-28 only: {e}");
}

#[tokio::test(start_paused = true)]
async fn older_revisions_have_no_tasks() {
    let server = task_server(Arc::new(Signal::default()));
    let session = connect(&client(ProtocolVersion::V2025_06_18, true), &server).await;
    assert!(!session.server_offers_tool_tasks());
    match session.call_tool_as_task("must", Value::Null, None).await.unwrap() {
        CallToolOutcome::Result(r) => assert_eq!(text(&r), "must done", "run plainly"),
        CallToolOutcome::Task(t) => panic!("no tasks in 2025-06-18: {t:?}"),
    }
    assert!(session.get_task("x").await.unwrap_err().is_unsupported());
    assert!(session.list_tasks(None).await.unwrap_err().is_unsupported());
}

#[tokio::test(start_paused = true)]
async fn modern_tasks_are_followed_transparently_or_by_hand() {
    let cancelled = Arc::new(Signal::default());
    let server = task_server(cancelled.clone());
    let session: ClientSession = connect(&client(ProtocolVersion::V2026_07_28, true), &server).await;
    assert!(session.server_offers_tool_tasks());

    // call_tool hides the task: the result comes back either way.
    let r = session.call_tool("count", json!({"steps": 2})).await.unwrap();
    assert_eq!(text(&r), "counted to 2");
    let r = session.call_tool("must", Value::Null).await.unwrap();
    assert_eq!(text(&r), "must done");
    // Questions asked from inside the task are answered through tasks/update.
    let r = session.call_tool("ask", Value::Null).await.unwrap();
    assert_eq!(text(&r), "hello Ada");
    let e = session.call_tool("broken", Value::Null).await.unwrap_err();
    assert_eq!(e.code(), Some(-32603), "{e}");

    // By hand: the task, its polls, its end.
    let task = created(session.call_tool_as_task("count", json!({"steps": 3}), None).await.unwrap());
    assert!(task.ttl_ms.is_some() && task.poll_interval_ms == Some(20));
    let done = session.wait_for_task(&task.task_id).await.unwrap();
    assert_eq!(done.status, TaskStatus::Completed);
    let inline: CallToolResult = serde_json::from_value(done.result.unwrap()).unwrap();
    assert_eq!(text(&inline), "counted to 3");

    // Cancellation is acknowledged, reaches the handler, and shows in the task.
    let long = created(session.call_tool_as_task("count", json!({"steps": 500}), None).await.unwrap());
    assert_eq!(session.cancel_task(&long.task_id).await.unwrap(), None);
    cancelled.wait("the handler saw the cancellation").await;
    let e = session.task_result(&long.task_id).await.unwrap_err();
    assert!(matches!(e, ClientError::Task { status: TaskStatus::Cancelled, .. }), "{e}");
    assert!(session.list_tasks(None).await.unwrap_err().is_unsupported());
}

#[tokio::test(start_paused = true)]
async fn modern_without_the_extension_and_the_bounded_wait() {
    let server = task_server(Arc::new(Signal::default()));
    // A client that did not enable tasks gets plain results, and -32021 for a tool that
    // only runs as a task.
    let plain = connect(&client(ProtocolVersion::V2026_07_28, false), &server).await;
    let r = plain.call_tool("count", json!({"steps": 1})).await.unwrap();
    assert_eq!(text(&r), "counted to 1");
    let e = plain.call_tool("must", Value::Null).await.unwrap_err();
    assert_eq!(e.code(), Some(-32021), "{e}");
    assert!(matches!(
        plain.call_tool_as_task("count", json!({"steps": 1}), None).await.unwrap(),
        CallToolOutcome::Result(_)
    ));

    // The wait is bounded.
    let impatient = Client::builder("c", "1")
        .protocol_version(ProtocolVersion::V2026_07_28)
        .tasks(true)
        .task_wait(Duration::from_millis(100))
        .build();
    let session = connect(&impatient, &server).await;
    let started = tokio::time::Instant::now();
    let e = session.call_tool("count", json!({"steps": 500})).await.unwrap_err();
    assert!(e.is_timeout(), "{e}");
    // On the paused clock: given up at the bound, not before, and long before the task's end.
    let waited = started.elapsed();
    assert!(waited >= Duration::from_millis(100) && waited < Duration::from_secs(1), "gave up after {waited:?}");
}
