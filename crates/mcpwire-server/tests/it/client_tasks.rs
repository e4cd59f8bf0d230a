//! Questions the client answers as tasks (2025-11-25), on the wire: the server asks with
//! `params.task` when the client declares `tasks.requests`, follows the task with
//! `tasks/get` and `tasks/result`, and hands the handler the answer; the time to live, a
//! cancelled handler, and malformed answers end the wait with an error, never a hang.
//!
//! The client here is the test, answering by hand; paused clock throughout.

use std::time::Duration;

use mcpwire_protocol::types::{CallToolResult, TaskMetadata, Tool};
use mcpwire_server::{Context, Server};
use serde_json::{json, Value};

use crate::tasks::{name_form, Peer};

/// `ask` asks the name (the author sets no task); `ask_ttl` asks it with a task of
/// `ttl` ms (the author's time to live).
fn server() -> Server {
    let server = Server::builder("s", "1").request_timeout(Duration::from_secs(30)).build();
    let answer = |r: mcpwire_protocol::types::ElicitResult| {
        let name = r.content.and_then(|c| c.get("name").cloned()).unwrap_or_default();
        CallToolResult::text(format!("hello {}", name.as_str().unwrap_or("?")))
    };
    server.add_tool(Tool::new("ask", "asks", json!({"type":"object"})), move |_, ctx: Context| async move {
        Ok(answer(ctx.elicit(name_form()).await?))
    });
    server.add_tool(
        Tool::new("ask_ttl", "asks with a task ttl", json!({"type":"object","properties":{"ttl":{"type":"integer"}}})),
        move |args, ctx: Context| async move {
            let mut form = name_form();
            form.task = Some(TaskMetadata { ttl: args.get("ttl").and_then(Value::as_u64) });
            Ok(answer(ctx.elicit(form).await?))
        },
    );
    server
}

/// Initializes in 2025-11-25; `takes_tasks` declares `tasks.requests.elicitation.create`.
async fn start(takes_tasks: bool) -> Peer {
    let mut peer = Peer::start(&server());
    let mut caps = json!({"elicitation": {}});
    if takes_tasks {
        caps["tasks"] = json!({"list": {}, "cancel": {}, "requests": {"elicitation": {"create": {}}}});
    }
    let r = peer.initialize_with("2025-11-25", caps).await;
    assert!(r.get("result").is_some(), "{r}");
    peer
}

/// Sends a `tools/call` (id 100) without waiting for its answer.
async fn call(peer: &Peer, tool: &str, arguments: Value) {
    peer.send(
        json!({"jsonrpc": "2.0", "id": 100, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}),
    )
    .await;
}

async fn request(peer: &mut Peer, method: &'static str) -> Value {
    peer.wait_for(method, move |m| m["method"] == method && m.get("id").is_some()).await
}

async fn answer(peer: &Peer, request: &Value, result: Value) {
    peer.send(json!({"jsonrpc": "2.0", "id": request["id"], "result": result})).await;
}

async fn call_answer(peer: &mut Peer) -> Value {
    peer.wait_for("the tools/call answer", |m| m["id"] == 100 && m.get("method").is_none()).await
}

fn task(id: &str, status: &str, ttl: u64) -> Value {
    json!({"taskId": id, "status": status, "createdAt": "2026-11-26T00:00:00.000Z",
           "lastUpdatedAt": "2026-11-26T00:00:00.000Z", "ttl": ttl, "pollInterval": 50})
}

#[tokio::test(start_paused = true)]
async fn a_client_that_takes_task_requests_is_asked_with_a_task_polled_and_read() {
    let mut peer = start(true).await;
    call(&peer, "ask", json!({})).await;
    let asked = request(&mut peer, "elicitation/create").await;
    // The server's request timeout is the time to live asked for.
    assert_eq!(asked["params"]["task"], json!({"ttl": 30_000}), "{asked}");
    answer(&peer, &asked, json!({"task": task("c1", "working", 60_000)})).await;
    let polled = request(&mut peer, "tasks/get").await;
    assert_eq!(polled["params"], json!({"taskId": "c1"}));
    answer(&peer, &polled, task("c1", "working", 60_000)).await;
    let polled = request(&mut peer, "tasks/get").await;
    answer(&peer, &polled, task("c1", "completed", 60_000)).await;
    let read = request(&mut peer, "tasks/result").await;
    assert_eq!(read["params"], json!({"taskId": "c1"}));
    answer(&peer, &read, json!({"action": "accept", "content": {"name": "Ada"}})).await;
    let r = call_answer(&mut peer).await;
    assert_eq!(r["result"]["content"][0]["text"], "hello Ada", "{r}");
    assert!(!peer.inbox.iter().any(|m| m["method"] == "tasks/cancel"), "a finished task is not cancelled");
}

#[tokio::test(start_paused = true)]
async fn a_client_that_does_not_is_asked_plainly_even_when_the_author_set_a_task() {
    let mut peer = start(false).await;
    call(&peer, "ask_ttl", json!({"ttl": 1000})).await;
    let asked = request(&mut peer, "elicitation/create").await;
    assert!(asked["params"].get("task").is_none(), "{asked}");
    answer(&peer, &asked, json!({"action": "accept", "content": {"name": "Bo"}})).await;
    assert_eq!(call_answer(&mut peer).await["result"]["content"][0]["text"], "hello Bo");
}

#[tokio::test(start_paused = true)]
async fn a_client_may_answer_a_task_request_at_once() {
    let mut peer = start(true).await;
    call(&peer, "ask", json!({})).await;
    let asked = request(&mut peer, "elicitation/create").await;
    answer(&peer, &asked, json!({"action": "accept", "content": {"name": "Cy"}})).await;
    assert_eq!(call_answer(&mut peer).await["result"]["content"][0]["text"], "hello Cy");
}

#[tokio::test(start_paused = true)]
async fn a_task_that_never_ends_ends_at_its_ttl_with_a_tool_error_and_is_cancelled() {
    let mut peer = start(true).await;
    call(&peer, "ask_ttl", json!({"ttl": 1000})).await;
    let asked = request(&mut peer, "elicitation/create").await;
    assert_eq!(asked["params"]["task"], json!({"ttl": 1000}), "the author's time to live");
    answer(&peer, &asked, json!({"task": task("c2", "working", 1000)})).await;
    let r = loop {
        let m = peer
            .wait_for("a poll or the answer", |m| {
                m["method"] == "tasks/get" || (m["id"] == 100 && m.get("method").is_none())
            })
            .await;
        if m["id"] == 100 {
            break m;
        }
        answer(&peer, &m, task("c2", "working", 1000)).await;
    };
    assert_eq!(r["result"]["isError"], true, "{r}");
    let text = r["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("time to live"), "{text}");
    let cancel = request(&mut peer, "tasks/cancel").await;
    assert_eq!(cancel["params"], json!({"taskId": "c2"}));
}

#[tokio::test(start_paused = true)]
async fn a_cancelled_call_cancels_the_clients_task() {
    let mut peer = start(true).await;
    call(&peer, "ask", json!({})).await;
    let asked = request(&mut peer, "elicitation/create").await;
    answer(&peer, &asked, json!({"task": task("c3", "working", 60_000)})).await;
    let polled = request(&mut peer, "tasks/get").await;
    answer(&peer, &polled, task("c3", "working", 60_000)).await;
    peer.send(json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 100}})).await;
    let cancel = request(&mut peer, "tasks/cancel").await;
    assert_eq!(cancel["params"], json!({"taskId": "c3"}));
}

#[tokio::test(start_paused = true)]
async fn a_task_the_client_cancels_or_fails_ends_the_question_with_its_error() {
    let mut peer = start(true).await;
    call(&peer, "ask", json!({})).await;
    let asked = request(&mut peer, "elicitation/create").await;
    answer(&peer, &asked, json!({"task": task("c4", "working", 60_000)})).await;
    let polled = request(&mut peer, "tasks/get").await;
    answer(&peer, &polled, task("c4", "cancelled", 60_000)).await;
    let r = call_answer(&mut peer).await;
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert!(r["result"]["content"][0]["text"].as_str().unwrap().contains("cancelled"), "{r}");

    let mut peer = start(true).await;
    call(&peer, "ask", json!({})).await;
    let asked = request(&mut peer, "elicitation/create").await;
    answer(&peer, &asked, json!({"task": task("c5", "failed", 60_000)})).await;
    let read = request(&mut peer, "tasks/result").await;
    peer.send(json!({"jsonrpc": "2.0", "id": read["id"], "error": {"code": -32603, "message": "no user at the desk"}}))
        .await;
    let r = call_answer(&mut peer).await;
    assert_eq!(r["error"]["message"], "no user at the desk", "{r}");
}

#[tokio::test(start_paused = true)]
async fn a_malformed_task_or_status_is_a_clear_error_not_a_hang() {
    let mut peer = start(true).await;
    call(&peer, "ask", json!({})).await;
    let asked = request(&mut peer, "elicitation/create").await;
    answer(&peer, &asked, json!({"task": {"taskId": 5}})).await;
    let r = call_answer(&mut peer).await;
    let message = r["error"]["message"].as_str().unwrap_or_else(|| panic!("{r}"));
    assert!(message.contains("malformed elicitation/create result"), "{message}");

    let mut peer = start(true).await;
    call(&peer, "ask", json!({})).await;
    let asked = request(&mut peer, "elicitation/create").await;
    answer(&peer, &asked, json!({"task": task("c6", "working", 60_000)})).await;
    let polled = request(&mut peer, "tasks/get").await;
    answer(&peer, &polled, task("c6", "sleeping", 60_000)).await;
    let r = call_answer(&mut peer).await;
    let message = r["error"]["message"].as_str().unwrap_or_else(|| panic!("{r}"));
    assert!(message.contains("malformed tasks/get result"), "{message}");
}
