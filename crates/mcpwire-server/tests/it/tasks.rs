//! Tasks over the wire, in memory: 2025-11-25 (task-augmented `tools/call`, `tasks/get`,
//! `tasks/result`, `tasks/list`, `tasks/cancel`, `notifications/tasks/status`) and the
//! 2026-07-28 `io.modelcontextprotocol/tasks` extension (`resultType: "task"`, polling
//! `tasks/get`, `tasks/update`, `tasks/cancel`).
//!
//! Every test runs on tokio's paused clock (`start_paused`): the clock moves only when every
//! task waits, straight to the next timer, so handlers' work, poll intervals and ttls take no
//! wall-clock time and fire in a fixed order. The task store's clock (stamps and expiry)
//! follows it too ([`TaskClock::tokio`]); see `tasks_expire_with_their_ttl_and_end_with_the_session`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use mcpwire_protocol::frame::Outbound;
use mcpwire_protocol::message::{Decoded, Received};
use mcpwire_protocol::types::{CallToolResult, ElicitParams, TaskSupport, Tool};
use mcpwire_protocol::ErrorObject;
use mcpwire_server::{Context, HandlerError, Server, TaskClock, TaskConfig};
use mcpwire_transport::{memory, Connection};
use serde_json::{json, Value};

const WAIT: Duration = Duration::from_secs(5);
const EXT: &str = "io.modelcontextprotocol/tasks";
const RELATED: &str = "io.modelcontextprotocol/related-task";

/// The client end of an in-memory connection; keeps every message it did not consume yet.
pub(crate) struct Peer {
    conn: Connection,
    next_id: i64,
    pub(crate) inbox: Vec<Value>,
}

impl Peer {
    pub(crate) fn start(server: &Server) -> Self {
        let (client, server_end) = memory::pair();
        let server = server.clone();
        tokio::spawn(async move { server.serve(server_end).await });
        Self { conn: client, next_id: 1, inbox: Vec::new() }
    }

    pub(crate) async fn send(&self, v: Value) {
        self.conn.outgoing.send(mcpwire_protocol::frame::Outbound::text(v.to_string())).await.expect("server gone");
    }

    async fn recv(&mut self) -> Value {
        let frame = tokio::time::timeout(WAIT, self.conn.incoming.recv())
            .await
            .expect("timed out waiting for the server")
            .expect("connection closed")
            .expect("bad frame");
        serde_json::from_str(&frame.text).expect("server sent invalid JSON")
    }

    /// Sends a request and waits for its response; everything else is kept in the inbox.
    pub(crate) async fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({"jsonrpc":"2.0","id":id,"method":method,"params":params})).await;
        loop {
            let msg = self.recv().await;
            if msg.get("id") == Some(&json!(id)) && msg.get("method").is_none() {
                return msg;
            }
            self.inbox.push(msg);
        }
    }

    /// Waits for a message (already received or to come) that `pred` accepts, and takes it.
    pub(crate) async fn wait_for(&mut self, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
        if let Some(i) = self.inbox.iter().position(&pred) {
            return self.inbox.remove(i);
        }
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            let msg = tokio::time::timeout(left, self.recv())
                .await
                .unwrap_or_else(|_| panic!("no {what} within {WAIT:?}; inbox: {:?}", self.inbox));
            if pred(&msg) {
                return msg;
            }
            self.inbox.push(msg);
        }
    }

    async fn status_note(&mut self, task_id: &str, status: &str) -> Value {
        let (t, s) = (task_id.to_owned(), status.to_owned());
        self.wait_for(&format!("a {status} status notification"), move |m| {
            m["method"] == "notifications/tasks/status" && m["params"]["taskId"] == t && m["params"]["status"] == s
        })
        .await
    }

    async fn initialize(&mut self, version: &str) -> Value {
        self.initialize_with(version, json!({"elicitation": {}})).await
    }

    /// The legacy handshake, declaring `capabilities`.
    pub(crate) async fn initialize_with(&mut self, version: &str, capabilities: Value) -> Value {
        let params = json!({"protocolVersion": version, "capabilities": capabilities, "clientInfo": {"name": "t", "version": "1"}});
        let r = self.call("initialize", params).await;
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
        r
    }

    /// Polls `tasks/get` until the task is terminal.
    async fn poll_terminal(&mut self, params: impl Fn(&str) -> Value, task_id: &str) -> Value {
        self.poll_until(params, task_id, "finished", |r| {
            let status = r["result"]["status"].as_str().unwrap_or_else(|| panic!("tasks/get failed: {r}"));
            matches!(status, "completed" | "failed" | "cancelled")
        })
        .await
    }

    /// Polls `tasks/get` (for at most `WAIT` of paused time) until `done` accepts the answer,
    /// and returns it.
    async fn poll_until(
        &mut self,
        params: impl Fn(&str) -> Value,
        task_id: &str,
        what: &str,
        done: impl Fn(&Value) -> bool,
    ) -> Value {
        // Each check has the peer for the time of one call.
        let peer = tokio::sync::Mutex::new(self);
        mcpwire_testkit::eventually_within(WAIT, format!("task {task_id} {what}"), || async {
            let r = peer.lock().await.call("tasks/get", params(task_id)).await;
            done(&r).then_some(r)
        })
        .await
    }
}

/// Waits until `cond` holds, for at most `WAIT` of (paused) time.
async fn until(what: &str, cond: impl Fn() -> bool) {
    mcpwire_testkit::eventually_within(WAIT, what, || std::future::ready(cond().then_some(()))).await;
}

/// 2026-07-28 params: `_meta` with the version and capabilities; `ext` declares the tasks
/// extension.
fn modern(mut params: Value, ext: bool) -> Value {
    let mut caps = json!({"elicitation": {}});
    if ext {
        caps["extensions"] = json!({EXT: {}});
    }
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": caps,
    });
    params
}

struct Flag(Arc<AtomicBool>);

impl Flag {
    fn new() -> Self {
        Self(Arc::new(AtomicBool::new(false)))
    }
    fn get(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

/// A server with tasks on: `count` (optional; `steps` × 20 ms with progress; records that it
/// saw a cancellation in `cancelled`), `must` (required, answers at once), `never`
/// (forbidden), `broken` (a protocol error), `oops` (a tool error), `ask` (optional; asks
/// the user's name), `intake` (required; asks the name at once, then waits once more). All
/// but `must`, `never` and `intake` wait once first (a yield: the first poll is pending,
/// however soon it would end), so that 2026-07-28 calls become tasks.
fn server(config: TaskConfig, cancelled: &Flag) -> Server {
    let server = Server::builder("s", "1").page_size(2).tasks(config).task_clock(TaskClock::tokio()).build();
    let seen = cancelled.0.clone();
    server.add_tool(
        Tool::new("count", "counts", json!({"type":"object","properties":{"steps":{"type":"integer"}}}))
            .with_task_support(TaskSupport::Optional),
        move |args, ctx: Context| {
            let seen = seen.clone();
            async move {
                let steps = args.get("steps").and_then(Value::as_u64).unwrap_or(3);
                for step in 1..=steps {
                    tokio::select! {
                        _ = ctx.cancellation().cancelled() => {
                            seen.store(true, Ordering::SeqCst);
                            return Err(HandlerError::tool("cancelled"));
                        }
                        _ = tokio::time::sleep(Duration::from_millis(20)) => {}
                    }
                    let _ = ctx.progress(step as f64, Some(steps as f64), None).await;
                    ctx.set_task_status_message(format!("step {step}")).await;
                }
                Ok(CallToolResult::text(format!("counted to {steps} in task {}", ctx.task_id().unwrap_or("-"))))
            }
        },
    );
    server.add_tool(
        Tool::new("must", "required", json!({"type":"object"})).with_task_support(TaskSupport::Required),
        |_, _| async { Ok(CallToolResult::text("done")) },
    );
    server.add_tool(
        Tool::new("never", "forbidden", json!({"type":"object"})).with_task_support(TaskSupport::Forbidden),
        |_, _| async { Ok(CallToolResult::text("inline")) },
    );
    server.add_tool(
        Tool::new("broken", "fails", json!({"type":"object"})).with_task_support(TaskSupport::Optional),
        |_, _| async {
            tokio::task::yield_now().await;
            Err(HandlerError::Protocol(ErrorObject::internal("backend down")))
        },
    );
    server.add_tool(
        Tool::new("oops", "tool error", json!({"type":"object"})).with_task_support(TaskSupport::Optional),
        |_, _| async {
            tokio::task::yield_now().await;
            Err(HandlerError::tool("bad input"))
        },
    );
    server.add_tool(
        Tool::new("ask", "asks", json!({"type":"object"})).with_task_support(TaskSupport::Optional),
        |_, ctx: Context| async move {
            tokio::task::yield_now().await;
            let form = ElicitParams {
                mode: None,
                message: "name?".into(),
                requested_schema: Some(
                    json!({"type":"object","properties":{"name":{"type":"string"}}}).as_object().unwrap().clone(),
                ),
                url: None,
                elicitation_id: None,
                task: None,
            };
            let answer = ctx.elicit_as("name", form).await?;
            let name = answer.content.and_then(|c| c.get("name").cloned()).unwrap_or_default();
            Ok(CallToolResult::text(format!("hello {}", name.as_str().unwrap_or("?"))))
        },
    );
    server.add_tool(
        Tool::new("intake", "asks, then works", json!({"type":"object"})).with_task_support(TaskSupport::Required),
        |_, ctx: Context| async move {
            let answer = ctx.elicit_as("user_name", name_form()).await?;
            tokio::task::yield_now().await;
            let name = answer.content.and_then(|c| c.get("name").cloned()).unwrap_or_default();
            Ok(CallToolResult::text(format!("processed {}", name.as_str().unwrap_or("?"))))
        },
    );
    server
}

pub(crate) fn name_form() -> ElicitParams {
    ElicitParams {
        mode: None,
        message: "name?".into(),
        requested_schema: Some(
            json!({"type":"object","properties":{"name":{"type":"string"}}}).as_object().unwrap().clone(),
        ),
        url: None,
        elicitation_id: None,
        task: None,
    }
}

fn task_id(created: &Value) -> String {
    created["result"]["task"]["taskId"]
        .as_str()
        .or_else(|| created["result"]["taskId"].as_str())
        .unwrap_or_else(|| panic!("no task in {created}"))
        .to_owned()
}

fn id_params(id: &str) -> Value {
    json!({"taskId": id})
}

#[tokio::test(start_paused = true)]
async fn legacy_task_runs_in_the_background_with_progress_and_notifications() {
    let cancelled = Flag::new();
    let server = server(TaskConfig::default(), &cancelled);
    let mut peer = Peer::start(&server);
    let init = peer.initialize("2025-11-25").await;
    assert_eq!(
        init["result"]["capabilities"]["tasks"],
        json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}})
    );
    assert!(init["result"]["capabilities"].get("extensions").is_none());
    let tools = peer.call("tools/list", json!({})).await;
    let support: Vec<&Value> = tools["result"]["tools"].as_array().unwrap().iter().map(|t| &t["execution"]).collect();
    assert_eq!(support[0], &json!({"taskSupport": "optional"}));

    let created = peer
        .call(
            "tools/call",
            json!({"name":"count","arguments":{"steps":3},"task":{"ttl":60000},"_meta":{"progressToken":"p"}}),
        )
        .await;
    let task = &created["result"]["task"];
    assert_eq!(task["status"], "working", "{created}");
    assert_eq!(task["ttl"], 60000);
    assert!(task["pollInterval"].is_u64() && task.get("ttlMs").is_none(), "2025-11-25 names: {task}");
    assert!(task["createdAt"].as_str().unwrap().ends_with('Z'));
    let id = task_id(&created);
    let got = peer.call("tasks/get", id_params(&id)).await;
    assert!(matches!(got["result"]["status"].as_str(), Some("working" | "completed")), "{got}");
    assert!(got["result"].get("result").is_none(), "no inline outcome in 2025-11-25");

    // tasks/result waits for the end and returns the tool's result, tied to the task.
    let result = peer.call("tasks/result", id_params(&id)).await;
    let text = result["result"]["content"][0]["text"].as_str().unwrap();
    assert_eq!(text, format!("counted to 3 in task {id}"));
    assert_eq!(result["result"]["_meta"][RELATED], json!({"taskId": id}));

    // Progress continued on the original token, tagged with the task; the end was announced.
    let progress = peer.wait_for("progress", |m| m["method"] == "notifications/progress").await;
    assert_eq!(progress["params"]["progressToken"], "p");
    assert_eq!(progress["params"]["_meta"][RELATED]["taskId"], json!(id));
    let done = peer.status_note(&id, "completed").await;
    assert_eq!(done["params"]["ttl"], 60000);
    let got = peer.call("tasks/get", id_params(&id)).await;
    assert_eq!(got["result"]["status"], "completed");
    assert_eq!(got["result"]["statusMessage"], Value::Null, "the finish clears the progress message");
}

#[tokio::test(start_paused = true)]
async fn legacy_task_modes_and_errors() {
    let cancelled = Flag::new();
    let server = server(TaskConfig::default(), &cancelled);
    let mut peer = Peer::start(&server);
    peer.initialize("2025-11-25").await;
    let r = peer.call("tools/call", json!({"name":"must"})).await;
    assert_eq!(r["error"]["code"], -32601, "required without a task: {r}");
    let r = peer.call("tools/call", json!({"name":"never","task":{}})).await;
    assert_eq!(r["error"]["code"], -32601, "forbidden with a task: {r}");
    let r = peer.call("tools/call", json!({"name":"count","arguments":{"steps":1}})).await;
    assert_eq!(r["result"]["content"][0]["text"], "counted to 1 in task -", "optional runs inline: {r}");
    let r = peer.call("tools/call", json!({"name":"must","task":{}})).await;
    assert_eq!(r["result"]["task"]["status"], "working");
    for method in ["tasks/get", "tasks/result", "tasks/cancel"] {
        let r = peer.call(method, id_params("no-such-task")).await;
        assert_eq!(r["error"]["code"], -32602, "{method}: {r}");
    }
    let r = peer.call("tasks/update", json!({"taskId":"x","inputResponses":{}})).await;
    assert_eq!(r["error"]["code"], -32601, "tasks/update is 2026-07-28 only: {r}");

    // A protocol error fails the task and tasks/result returns that very error; a tool error
    // (isError) fails it too in 2025-11-25, and tasks/result returns the result.
    let created = peer.call("tools/call", json!({"name":"broken","task":{}})).await;
    let id = task_id(&created);
    let r = peer.call("tasks/result", id_params(&id)).await;
    assert_eq!(r["error"]["code"], -32603, "{r}");
    assert!(r["error"]["message"].as_str().unwrap().contains("backend down"));
    let got = peer.call("tasks/get", id_params(&id)).await;
    assert_eq!(got["result"]["status"], "failed");
    assert!(got["result"]["statusMessage"].as_str().unwrap().contains("backend down"));
    let created = peer.call("tools/call", json!({"name":"oops","task":{}})).await;
    let id = task_id(&created);
    let r = peer.call("tasks/result", id_params(&id)).await;
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert_eq!(peer.call("tasks/get", id_params(&id)).await["result"]["status"], "failed");
    let r = peer.call("tasks/cancel", id_params(&id)).await;
    assert_eq!(r["error"]["code"], -32602, "cancelling a terminal task: {r}");
    assert!(r["error"]["message"].as_str().unwrap().contains("'failed'"));

    // Tasks are not part of earlier revisions: the methods do not exist, `task` is ignored.
    let mut old = Peer::start(&server);
    let init = old.initialize("2025-06-18").await;
    assert!(init["result"]["capabilities"].get("tasks").is_none());
    let r = old.call("tasks/get", id_params(&id)).await;
    assert_eq!(r["error"]["code"], -32601);
    let r = old.call("tools/call", json!({"name":"must","task":{}})).await;
    assert_eq!(r["result"]["content"][0]["text"], "done", "no tasks in 2025-06-18: runs inline: {r}");
    let tools = old.call("tools/list", json!({})).await;
    assert!(tools["result"]["tools"][0].get("execution").is_none());
}

#[tokio::test(start_paused = true)]
async fn legacy_cancel_reaches_the_handler() {
    let cancelled = Flag::new();
    let server = server(TaskConfig::default(), &cancelled);
    let mut peer = Peer::start(&server);
    peer.initialize("2025-11-25").await;
    let created = peer.call("tools/call", json!({"name":"count","arguments":{"steps":500},"task":{}})).await;
    let id = task_id(&created);
    // The handler is under way: it has done its first step (or more: the polls are not
    // every 20 ms).
    let stepped = |r: &Value| r["result"]["statusMessage"].as_str().is_some_and(|m| m.starts_with("step "));
    peer.poll_until(id_params, &id, "reached its first step", stepped).await;
    let r = peer.call("tasks/cancel", id_params(&id)).await;
    assert_eq!(r["result"]["status"], "cancelled", "the answer shows the task cancelled: {r}");
    assert_eq!(r["result"]["taskId"], json!(id));
    peer.status_note(&id, "cancelled").await;
    until("the handler saw its cancellation token fire", || cancelled.get()).await;
    assert!(cancelled.get(), "the handler saw its cancellation token fire");
    // The handler has returned and its outcome was offered to the store.
    until("the task's runner ended", || server.running_tasks() == 0).await;
    let got = peer.call("tasks/get", id_params(&id)).await;
    assert_eq!(got["result"]["status"], "cancelled", "stays cancelled even though the handler returned");
    let r = peer.call("tasks/result", id_params(&id)).await;
    assert_eq!(r["error"]["code"], -32602, "a cancelled task has no result: {r}");
    assert_eq!(server.running_tasks(), 0);
}

#[tokio::test(start_paused = true)]
async fn legacy_list_pages_and_is_per_session() {
    let cancelled = Flag::new();
    let server = server(TaskConfig::default(), &cancelled);
    let mut peer = Peer::start(&server);
    peer.initialize("2025-11-25").await;
    let mut ids = Vec::new();
    for _ in 0..5 {
        ids.push(task_id(&peer.call("tools/call", json!({"name":"must","task":{}})).await));
    }
    let mut listed = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..10 {
        let params = cursor.as_ref().map_or(json!({}), |c| json!({"cursor": c}));
        let page = peer.call("tasks/list", params).await;
        let tasks = page["result"]["tasks"].as_array().unwrap_or_else(|| panic!("{page}"));
        assert!(tasks.len() <= 2, "page size 2");
        listed.extend(tasks.iter().map(|t| t["taskId"].as_str().unwrap().to_owned()));
        cursor = page["result"]["nextCursor"].as_str().map(str::to_owned);
        if cursor.is_none() {
            break;
        }
    }
    assert_eq!(listed, ids, "every task, in creation order");
    let first = peer.call("tasks/list", json!({})).await;
    let cursor = first["result"]["nextCursor"].as_str().unwrap().to_owned();
    // New tasks do not make a cursor stale.
    peer.call("tools/call", json!({"name":"must","task":{}})).await;
    let next = peer.call("tasks/list", json!({"cursor": cursor})).await;
    assert_eq!(next["result"]["tasks"][0]["taskId"], json!(ids[2]));
    let r = peer.call("tasks/list", json!({"cursor": "not-a-cursor"})).await;
    assert_eq!(r["error"]["code"], -32602);

    // Another session sees none of them, and cannot use this session's cursor.
    let mut other = Peer::start(&server);
    other.initialize("2025-11-25").await;
    let page = other.call("tasks/list", json!({})).await;
    assert_eq!(page["result"]["tasks"], json!([]));
    assert_eq!(other.call("tasks/get", id_params(&ids[0])).await["error"]["code"], -32602);
    assert_eq!(other.call("tasks/cancel", id_params(&ids[0])).await["error"]["code"], -32602);
    assert_eq!(other.call("tasks/list", json!({"cursor": cursor})).await["error"]["code"], -32602);
}

#[tokio::test(start_paused = true)]
async fn legacy_task_asks_the_client_with_real_requests() {
    let cancelled = Flag::new();
    let server = server(TaskConfig::default(), &cancelled);
    let mut peer = Peer::start(&server);
    peer.initialize("2025-11-25").await;
    let created = peer.call("tools/call", json!({"name":"ask","task":{}})).await;
    let id = task_id(&created);
    let ask = peer.wait_for("an elicitation request", |m| m["method"] == "elicitation/create").await;
    assert_eq!(ask["params"]["_meta"][RELATED]["taskId"], json!(id), "tagged with its task: {ask}");
    peer.status_note(&id, "input_required").await;
    assert_eq!(peer.call("tasks/get", id_params(&id)).await["result"]["status"], "input_required");
    peer.send(json!({"jsonrpc":"2.0","id":ask["id"],"result":{"action":"accept","content":{"name":"Ada"}}})).await;
    let result = peer.call("tasks/result", id_params(&id)).await;
    assert_eq!(result["result"]["content"][0]["text"], "hello Ada");
}

#[tokio::test(start_paused = true)]
async fn tasks_expire_with_their_ttl_and_end_with_the_session() {
    const TTL: Duration = Duration::from_millis(150);
    let cancelled = Flag::new();
    let server = server(TaskConfig { max_ttl: TTL, ..TaskConfig::default() }, &cancelled);
    let mut peer = Peer::start(&server);
    peer.initialize("2025-11-25").await;
    let created = peer.call("tools/call", json!({"name":"must","task":{"ttl":3_600_000}})).await;
    assert_eq!(created["result"]["task"]["ttl"], 150, "the ttl is capped: {created}");
    let id = task_id(&created);
    // No earlier than this (paused clock) does the long task's ttl start to run.
    let before_long = tokio::time::Instant::now();
    let long = task_id(&peer.call("tools/call", json!({"name":"count","arguments":{"steps":500},"task":{}})).await);
    // Both tasks were stored (their creation time read from the task clock, which follows
    // tokio's) by now.
    let both_created = tokio::time::Instant::now();
    assert_eq!(peer.call("tasks/get", id_params(&id)).await["result"]["taskId"], json!(id));

    // The running handler's ttl is timed by the runtime (tokio): on the paused clock it fires
    // neither a moment early nor late.
    tokio::time::sleep_until(before_long + TTL - Duration::from_millis(1)).await;
    assert!(!cancelled.get(), "stopped before its ttl elapsed");
    assert_eq!(server.running_tasks(), 1, "the long task still runs just before its ttl");
    until("a running handler stops when its task's ttl elapses", || cancelled.get()).await;
    assert!(before_long.elapsed() >= TTL, "stopped after {:?}", before_long.elapsed());
    assert!(cancelled.get(), "a running handler stops when its task's ttl elapses");
    until("the expired task's runner ended", || server.running_tasks() == 0).await;

    // The store forgets a task by its clock, which follows tokio's paused clock: by the
    // time both tasks' ttl elapsed in virtual time, both are gone.
    tokio::time::sleep_until(both_created + TTL).await;
    let r = peer.call("tasks/get", id_params(&id)).await;
    assert_eq!(r["error"]["code"], -32602, "expired: {r}");
    assert_eq!(peer.call("tasks/get", id_params(&long)).await["error"]["code"], -32602);
    assert_eq!(peer.call("tasks/list", json!({})).await["result"]["tasks"], json!([]));

    // A session's running tasks stop when the connection ends.
    cancelled.0.store(false, Ordering::SeqCst);
    let server = self::server(TaskConfig::default(), &cancelled);
    let mut peer = Peer::start(&server);
    peer.initialize("2025-11-25").await;
    peer.call("tools/call", json!({"name":"count","arguments":{"steps":500},"task":{}})).await;
    assert_eq!(server.running_tasks(), 1);
    drop(peer);
    until("the session's task stopped", || server.running_tasks() == 0).await;
    assert!(cancelled.get() && server.running_tasks() == 0, "the handler was cancelled with its session");
}

#[tokio::test(start_paused = true)]
async fn modern_extension_tasks_poll_to_their_result() {
    let cancelled = Flag::new();
    let server = server(TaskConfig::default(), &cancelled);
    let mut peer = Peer::start(&server);
    let discover = peer.call("server/discover", modern(json!({}), false)).await;
    assert_eq!(discover["result"]["capabilities"]["extensions"], json!({EXT: {}}));
    assert!(discover["result"]["capabilities"].get("tasks").is_none());

    // Without the extension: an optional tool runs inline, a required one says what is missing.
    let r = peer.call("tools/call", modern(json!({"name":"count","arguments":{"steps":1}}), false)).await;
    assert_eq!(r["result"]["resultType"], "complete");
    let r = peer.call("tools/call", modern(json!({"name":"must"}), false)).await;
    assert_eq!(r["error"]["code"], -32021, "{r}");
    assert_eq!(r["error"]["data"]["requiredCapabilities"]["extensions"], json!({EXT: {}}));
    let r = peer.call("tasks/get", modern(id_params("x"), false)).await;
    assert_eq!(r["error"]["code"], -32021, "tasks/get needs the extension declared: {r}");

    // With it: the server answers with a task, `params.task` or not.
    let created = peer.call("tools/call", modern(json!({"name":"count","arguments":{"steps":3}}), true)).await;
    let result = &created["result"];
    assert_eq!(result["resultType"], "task", "{created}");
    assert_eq!(result["status"], "working");
    assert!(result["ttlMs"].is_u64() && result["pollIntervalMs"].is_u64() && result.get("task").is_none());
    assert!(result["_meta"]["io.modelcontextprotocol/serverInfo"].is_object());
    let id = task_id(&created);
    let done = peer.poll_terminal(|id| modern(id_params(id), true), &id).await;
    assert_eq!(done["result"]["resultType"], "complete");
    assert_eq!(done["result"]["status"], "completed");
    assert_eq!(done["result"]["result"]["content"][0]["text"], format!("counted to 3 in task {id}"));
    assert!(peer.inbox.iter().all(|m| m["method"] != "notifications/progress"), "no progress on modern tasks");
    for method in ["tasks/result", "tasks/list"] {
        let r = peer.call(method, modern(id_params(&id), true)).await;
        assert_eq!(r["error"]["code"], -32601, "{method} is not part of the extension: {r}");
    }
    let r = peer.call("tasks/get", modern(id_params("no-such-task"), true)).await;
    assert_eq!(r["error"]["code"], -32602);

    // A JSON-RPC error fails the task with the error inline; a tool error completes it.
    let id = task_id(&peer.call("tools/call", modern(json!({"name":"broken"}), true)).await);
    let done = peer.poll_terminal(|id| modern(id_params(id), true), &id).await;
    assert_eq!(done["result"]["status"], "failed");
    assert_eq!(done["result"]["error"]["code"], -32603);
    let id = task_id(&peer.call("tools/call", modern(json!({"name":"oops"}), true)).await);
    let done = peer.poll_terminal(|id| modern(id_params(id), true), &id).await;
    assert_eq!(done["result"]["status"], "completed");
    assert_eq!(done["result"]["result"]["isError"], true);
    // A forbidden tool never becomes a task; an optional one that answers at once need not
    // (the immediate-result shortcut); a required one that does still answers with a task.
    let r = peer.call("tools/call", modern(json!({"name":"never"}), true)).await;
    assert_eq!(r["result"]["resultType"], "complete");
    let r = peer.call("tools/call", modern(json!({"name":"count","arguments":{"steps":0}}), true)).await;
    assert_eq!(r["result"]["resultType"], "complete", "{r}");
    let r = peer.call("tools/call", modern(json!({"name":"must"}), true)).await;
    assert_eq!((&r["result"]["resultType"], &r["result"]["status"]), (&json!("task"), &json!("completed")), "{r}");
    let got = peer.call("tasks/get", modern(id_params(&task_id(&r)), true)).await;
    assert_eq!(got["result"]["result"]["content"][0]["text"], "done");
}

#[tokio::test(start_paused = true)]
async fn modern_questions_before_the_task_are_multi_round() {
    let cancelled = Flag::new();
    let server = server(TaskConfig::default(), &cancelled);
    let mut peer = Peer::start(&server);
    // Round 1: the handler asks at once, so the answer is an ordinary input_required.
    let first = peer.call("tools/call", modern(json!({"name":"intake"}), true)).await;
    let result = &first["result"];
    assert_eq!(result["resultType"], "input_required", "{first}");
    assert!(result.get("taskId").is_none());
    // Round 2: answered, the handler goes on working, and the call becomes a task.
    let mut retry = modern(json!({"name":"intake"}), true);
    retry["inputResponses"] = json!({"user_name": {"action": "accept", "content": {"name": "Lin"}}});
    retry["requestState"] = result["requestState"].clone();
    let second = peer.call("tools/call", retry).await;
    assert_eq!(second["result"]["resultType"], "task", "{second}");
    assert!(second["result"].get("requestState").is_none() && second["result"].get("inputRequests").is_none());
    let done = peer.poll_terminal(|id| modern(id_params(id), true), &task_id(&second)).await;
    assert_eq!(done["result"]["result"]["content"][0]["text"], "processed Lin");
}

#[tokio::test(start_paused = true)]
async fn modern_cancel_is_an_acknowledgement_and_reaches_the_handler() {
    let cancelled = Flag::new();
    let server = server(TaskConfig::default(), &cancelled);
    let mut peer = Peer::start(&server);
    let created = peer.call("tools/call", modern(json!({"name":"count","arguments":{"steps":500}}), true)).await;
    let id = task_id(&created);
    let r = peer.call("tasks/cancel", modern(id_params(&id), true)).await;
    assert_eq!(r["result"], json!({"resultType": "complete", "_meta": r["result"]["_meta"]}), "{r}");
    let done = peer.poll_terminal(|id| modern(id_params(id), true), &id).await;
    assert_eq!(done["result"]["status"], "cancelled");
    until("the handler saw the cancellation", || cancelled.get()).await;
    assert!(cancelled.get());
    let again = peer.call("tasks/cancel", modern(id_params(&id), true)).await;
    assert!(again.get("result").is_some(), "cancelling a finished task is still acknowledged: {again}");
    let r = peer.call("tasks/cancel", modern(id_params("nope"), true)).await;
    assert_eq!(r["error"]["code"], -32602);
}

#[tokio::test(start_paused = true)]
async fn modern_input_goes_through_get_and_update() {
    let cancelled = Flag::new();
    let server = server(TaskConfig::default(), &cancelled);
    // A stateless request per message, as over HTTP: the task outlives every one of them.
    let stateless = |server: &Server, method: &str, params: Value| {
        let server = server.clone();
        let text = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string();
        let Ok(Decoded::Single(Received::Request(request))) = mcpwire_protocol::codec::read_from_client(&text) else {
            panic!("a request: {text}")
        };
        async move {
            let (tx, mut rx) = tokio::sync::mpsc::channel(16);
            server.serve_stateless(request, tx, Default::default()).await;
            let mut answer = None;
            while let Ok(Outbound::Frame(frame)) = rx.try_recv() {
                if frame.answers(&1.into()) {
                    answer = Some(frame.text);
                }
            }
            serde_json::from_str::<Value>(&answer.expect("an answer")).unwrap()
        }
    };
    let created = stateless(&server, "tools/call", modern(json!({"name":"ask"}), true)).await;
    let id = task_id(&created);
    let asked = mcpwire_testkit::eventually_within(WAIT, "the task asks for input", || async {
        let asked = stateless(&server, "tasks/get", modern(id_params(&id), true)).await;
        (asked["result"]["status"] == "input_required").then_some(asked)
    })
    .await;
    assert_eq!(asked["result"]["status"], "input_required", "{asked}");
    let question = &asked["result"]["inputRequests"]["name"];
    assert_eq!(question["method"], "elicitation/create", "{asked}");
    assert_eq!(question["params"]["message"], "name?");

    let bad = json!({"taskId": id, "inputResponses": {"name": {"no": "action"}}});
    let r = stateless(&server, "tasks/update", modern(bad, true)).await;
    assert_eq!(r["error"]["code"], -32602, "a malformed answer is refused: {r}");
    let answer = json!({"taskId": id, "inputResponses": {
        "name": {"action": "accept", "content": {"name": "Grace"}},
        "unknown-key": {"action": "decline"}
    }});
    let r = stateless(&server, "tasks/update", modern(answer, true)).await;
    assert_eq!(r["result"]["resultType"], "complete", "{r}");
    let done = mcpwire_testkit::eventually_within(WAIT, "the task completes", || async {
        let done = stateless(&server, "tasks/get", modern(id_params(&id), true)).await;
        (done["result"]["status"] == "completed").then_some(done)
    })
    .await;
    assert_eq!(done["result"]["result"]["content"][0]["text"], "hello Grace", "{done}");
    assert!(done["result"].get("inputRequests").is_none());
    let late = json!({"taskId": id, "inputResponses": {"name": {"action": "cancel"}}});
    assert!(stateless(&server, "tasks/update", modern(late, true)).await.get("result").is_some());
}

#[tokio::test(start_paused = true)]
async fn tasks_off_means_no_capability_and_no_methods() {
    let server = Server::builder("s", "1").build();
    server.add_tool(
        Tool::new("must", "required", json!({"type":"object"})).with_task_support(TaskSupport::Required),
        |_, _| async { Ok(CallToolResult::text("done")) },
    );
    let mut peer = Peer::start(&server);
    let init = peer.initialize("2025-11-25").await;
    assert!(init["result"]["capabilities"].get("tasks").is_none());
    let r = peer.call("tools/call", json!({"name":"must","task":{}})).await;
    assert_eq!(r["result"]["content"][0]["text"], "done", "without the capability, `task` is ignored: {r}");
    assert_eq!(peer.call("tasks/list", json!({})).await["error"]["code"], -32601);
    let mut modern_peer = Peer::start(&server);
    let r = modern_peer.call("tasks/get", modern(id_params("x"), true)).await;
    assert_eq!(r["error"]["code"], -32601);
}

#[tokio::test(start_paused = true)]
async fn instances_sharing_a_store_serve_each_others_tasks() {
    let store: Arc<dyn mcpwire_server::TaskStore> = Arc::new(mcpwire_server::InMemoryTaskStore::new(100));
    let config = TaskConfig { poll_interval: Duration::from_millis(20), ..TaskConfig::default() };
    let (seen_a, seen_b) = (Flag::new(), Flag::new());
    // Two instances behind one address: the same tool, one shared store.
    let build = |seen: &Flag| {
        let shared = Server::builder("s", "1").tasks(config.clone()).task_store(store.clone()).build();
        let seen = seen.0.clone();
        let tool = Tool::new("count", "counts", json!({"type":"object"})).with_task_support(TaskSupport::Optional);
        shared.add_tool(tool, move |args, ctx: Context| {
            let seen = seen.clone();
            async move {
                let steps = args.get("steps").and_then(Value::as_u64).unwrap_or(3);
                for _ in 0..steps {
                    tokio::select! {
                        _ = ctx.cancellation().cancelled() => {
                            seen.store(true, Ordering::SeqCst);
                            return Err(HandlerError::tool("cancelled"));
                        }
                        _ = tokio::time::sleep(Duration::from_millis(20)) => {}
                    }
                }
                Ok(CallToolResult::text(format!("counted to {steps}")))
            }
        });
        shared
    };
    let (a, b) = (build(&seen_a), build(&seen_b));
    let mut on_a = Peer::start(&a);
    let mut on_b = Peer::start(&b);
    let id = task_id(&on_a.call("tools/call", modern(json!({"name":"count","arguments":{"steps":2}}), true)).await);
    let done = on_b.poll_terminal(|id| modern(id_params(id), true), &id).await;
    assert_eq!(done["result"]["result"]["content"][0]["text"], "counted to 2", "polled on the other instance");

    let id = task_id(&on_a.call("tools/call", modern(json!({"name":"count","arguments":{"steps":500}}), true)).await);
    let r = on_b.call("tasks/cancel", modern(id_params(&id), true)).await;
    assert!(r.get("result").is_some(), "{r}");
    until("the handler on the creating instance saw the cancellation", || seen_a.get()).await;
    assert!(seen_a.get() && !seen_b.get(), "the handler on the creating instance saw the cancellation");
    assert_eq!(on_a.call("tasks/get", modern(id_params(&id), true)).await["result"]["status"], "cancelled");
}
