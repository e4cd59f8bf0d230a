//! Questions answered as tasks (2025-11-25), our server and our client: the client that
//! declares `tasks.requests` gets the question with `params.task`, answers with a task at
//! once and runs its handler in the background; the server polls, reads the answer, and the
//! tool returns it. A call cancelled while the client's task works cancels that task.
//!
//! Paused clock: the handler's wait and the polls take no wall-clock time.

use crate::common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;
use mcpwire_client::{Client, ProtocolVersion};
use mcpwire_protocol::types::{
    CallToolResult, ContentBlock, CreateMessageParams, CreateMessageResult, ElicitParams, ElicitResult, Role,
    SamplingContent, SamplingMessage, Tool,
};
use mcpwire_protocol::ErrorObject;
use mcpwire_server::{Context, Server};
use serde_json::json;

/// `ask`: asks the user's name and greets them.
fn server() -> Server {
    let server = Server::builder("asks", "1").build();
    server.add_tool(Tool::new("ask", "asks", json!({"type": "object"})), |_, ctx: Context| async move {
        let form = ElicitParams {
            mode: None,
            message: "name?".into(),
            requested_schema: Some(
                json!({"type": "object", "properties": {"name": {"type": "string"}}}).as_object().unwrap().clone(),
            ),
            url: None,
            elicitation_id: None,
            task: None,
        };
        let answer = ctx.elicit(form).await?;
        let name = answer.content.and_then(|c| c.get("name").cloned()).unwrap_or_default();
        Ok(CallToolResult::text(format!("hello {}", name.as_str().unwrap_or("?"))))
    });
    server.add_tool(Tool::new("sample", "samples", json!({"type": "object"})), |_, ctx: Context| async move {
        let params = CreateMessageParams {
            messages: vec![SamplingMessage {
                role: Role::User,
                content: SamplingContent::Single(ContentBlock::text("2+2?")),
            }],
            max_tokens: 10,
            system_prompt: None,
            model_preferences: None,
            include_context: None,
            temperature: None,
            stop_sequences: None,
            metadata: None,
            tools: None,
            tool_choice: None,
            task: None,
        };
        let answer = ctx.sample(params).await?;
        Ok(CallToolResult::text(format!("model {}", answer.model)))
    });
    server
}

fn text(r: &CallToolResult) -> &str {
    r.content.first().and_then(ContentBlock::as_text).unwrap_or_default()
}

/// A client pinned to 2025-11-25 whose elicitation handler records whether it was asked
/// with a task and answers `Ada` after `delay`.
fn client(task_requests: bool, delay: Duration, asked_with_task: Arc<Mutex<Vec<bool>>>) -> Client {
    Client::builder("c", "1")
        .protocol_version(ProtocolVersion::V2025_11_25)
        .task_requests(task_requests)
        .elicitation(move |params: ElicitParams| {
            asked_with_task.lock().unwrap().push(params.task.is_some());
            async move {
                tokio::time::sleep(delay).await;
                Ok(ElicitResult {
                    action: "accept".into(),
                    content: json!({"name": "Ada"}).as_object().cloned(),
                    meta: None,
                })
            }
        })
        .build()
}

#[tokio::test(start_paused = true)]
async fn a_client_that_takes_task_requests_answers_a_question_as_a_task() {
    let asked = Arc::new(Mutex::new(Vec::new()));
    let client = client(true, Duration::from_millis(750), asked.clone());
    let caps = client.capabilities(ProtocolVersion::V2025_11_25);
    assert!(caps.takes_task_requests(mcpwire_protocol::Method::Elicit), "{caps:?}");
    assert!(!caps.takes_task_requests(mcpwire_protocol::Method::CreateMessage), "no sampling handler: {caps:?}");
    assert_eq!(client.capabilities(ProtocolVersion::V2026_07_28).tasks, None, "2025-11-25 only");
    let session = connect(&client, &server()).await;
    let r = session.call_tool("ask", json!({})).await.unwrap();
    assert_eq!(text(&r), "hello Ada");
    assert_eq!(*asked.lock().unwrap(), [true], "the question came with a task");
}

#[tokio::test(start_paused = true)]
async fn a_sampling_question_is_answered_as_a_task_too() {
    let asked = Arc::new(Mutex::new(Vec::new()));
    let seen = asked.clone();
    let client = Client::builder("c", "1")
        .protocol_version(ProtocolVersion::V2025_11_25)
        .task_requests(true)
        .sampling(move |params: CreateMessageParams| {
            seen.lock().unwrap().push(params.task.is_some());
            async move {
                tokio::time::sleep(Duration::from_millis(400)).await;
                Ok(CreateMessageResult {
                    role: Role::Assistant,
                    content: SamplingContent::Single(ContentBlock::text("4")),
                    model: "m1".into(),
                    stop_reason: None,
                    meta: None,
                })
            }
        })
        .build();
    assert!(client
        .capabilities(ProtocolVersion::V2025_11_25)
        .takes_task_requests(mcpwire_protocol::Method::CreateMessage));
    let session = connect(&client, &server()).await;
    assert_eq!(text(&session.call_tool("sample", json!({})).await.unwrap()), "model m1");
    assert_eq!(*asked.lock().unwrap(), [true]);
}

#[tokio::test(start_paused = true)]
async fn a_client_that_does_not_is_asked_plainly() {
    let asked = Arc::new(Mutex::new(Vec::new()));
    let client = client(false, Duration::from_millis(10), asked.clone());
    assert_eq!(client.capabilities(ProtocolVersion::V2025_11_25).tasks, None);
    let session = connect(&client, &server()).await;
    assert_eq!(text(&session.call_tool("ask", json!({})).await.unwrap()), "hello Ada");
    assert_eq!(*asked.lock().unwrap(), [false]);
}

#[tokio::test(start_paused = true)]
async fn a_call_given_up_cancels_the_clients_task_and_its_handler() {
    let dropped = Arc::new(Signal::default());
    let on_drop = dropped.clone();
    let client = Client::builder("c", "1")
        .protocol_version(ProtocolVersion::V2025_11_25)
        .task_requests(true)
        .elicitation(move |_| {
            let guard = OnDrop(on_drop.clone());
            async move {
                let _guard = guard;
                std::future::pending::<Result<ElicitResult, ErrorObject>>().await
            }
        })
        .build();
    let session = connect(&client, &server()).await;
    let err = session.with_timeout(Duration::from_secs(2)).call_tool("ask", json!({})).await.unwrap_err();
    assert!(err.is_timeout(), "{err}");
    // The server's handler stops, tells the client to cancel its task, and the client
    // drops the handler.
    dropped.wait("the client's handler dropped by tasks/cancel").await;
}

#[tokio::test(start_paused = true)]
async fn a_failing_handler_fails_the_task_and_the_question_gets_its_error() {
    let client = Client::builder("c", "1")
        .protocol_version(ProtocolVersion::V2025_11_25)
        .task_requests(true)
        .elicitation(|_| async {
            tokio::time::sleep(Duration::from_millis(300)).await;
            Err::<ElicitResult, _>(ErrorObject::internal("nobody at the desk"))
        })
        .build();
    let session = connect(&client, &server()).await;
    let err = session.call_tool("ask", json!({})).await.unwrap_err();
    assert!(err.to_string().contains("nobody at the desk"), "{err}");
}
