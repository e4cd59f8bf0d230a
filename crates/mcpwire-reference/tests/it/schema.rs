//! Proof that every message the reference server emits validates against the official JSON
//! schema of the protocol revision it speaks (`spec/schema/<revision>/schema.json`), with
//! members the revision does not define forbidden.
//!
//! The schemas, their strict copies and the classification of each message (which definition
//! it is validated against) are shared with the codec's shape tests, in
//! mcpwire-protocol's tests/it/schema/shapes.rs. This file holds the rest:
//!
//! 1. **The scripted client**: drives `mcpwire_reference::server()` over `memory::pair()`,
//!    answers the server's own requests (sampling, elicitation, roots) and records every
//!    message the server sends. Every wait is bounded.
//! 2. **Scenarios**: the legacy session (2024-11-05 .. 2025-11-25; 2025-11-25 adds the
//!    task scenario) and the stateless 2026-07-28 session, each touching every method, tool,
//!    resource and prompt, with a few semantic checks on the way.
//! 3. **Tests**: one per revision.

use std::collections::HashMap;
use std::time::Duration;

use mcpwire_protocol::types::{
    meta_keys, CallToolResult, GetPromptResult, Prompt, PromptMessage, ReadResourceResult, Resource, ResourceContents,
    Tool,
};
use mcpwire_server::Server;
use mcpwire_transport::{memory, Connection};
use serde_json::{json, Map, Value};

// The schemas and the checks, shared with the codec's shape tests.
#[path = "../../../mcpwire-protocol/tests/it/schema/shapes.rs"]
mod shapes;
use shapes::{validate, Revision, Transcript, MODERN};

/// The longest wait for any one message from the server.
const WAIT: Duration = Duration::from_secs(10);

/// How long the connection must stay quiet before a drain ends.
const QUIET: Duration = Duration::from_millis(300);

/// Bound on a whole scenario.
const SCENARIO_LIMIT: Duration = Duration::from_secs(120);

// ---------------------------------------------------------------------------------------------
// 1. The scripted client
// ---------------------------------------------------------------------------------------------

/// The client end of an in-memory connection to the reference server.
struct Client {
    rev: &'static str,
    conn: Connection,
    server: Server,
    task: tokio::task::JoinHandle<()>,
    next_id: i64,
    sent: HashMap<String, String>,
    received: Vec<Value>,
    problems: Vec<String>,
}

impl Client {
    fn start(rev: &'static str) -> Self {
        let server = mcpwire_reference::server();
        let (client_end, server_end) = memory::pair();
        let served = server.clone();
        let task = tokio::spawn(async move { served.serve(server_end).await });
        Self {
            rev,
            conn: client_end,
            server,
            task,
            next_id: 1,
            sent: HashMap::new(),
            received: Vec::new(),
            problems: Vec::new(),
        }
    }

    fn modern(&self) -> bool {
        self.rev == MODERN
    }

    /// Records a semantic expectation.
    fn expect(&mut self, ok: bool, what: impl FnOnce() -> String) {
        if !ok {
            let what = what();
            self.problems.push(format!("[{}] {what}", self.rev));
        }
    }

    /// Request params for this revision: in 2026-07-28 every request carries its version and
    /// capabilities in `_meta`; `extra` goes into `_meta` in both eras.
    fn params(&self, params: Value, extra: &[(&str, Value)]) -> Value {
        let mut params = match params {
            Value::Object(o) => o,
            _ => Map::new(),
        };
        let mut meta = Map::new();
        if self.modern() {
            meta.insert(meta_keys::PROTOCOL_VERSION.into(), json!(MODERN));
            meta.insert(meta_keys::CLIENT_CAPABILITIES.into(), json!({}));
            meta.insert(meta_keys::CLIENT_INFO.into(), json!({"name": "schema-test", "version": "1.0.0"}));
        }
        for (k, v) in extra {
            meta.insert((*k).to_owned(), v.clone());
        }
        if !meta.is_empty() {
            params.insert("_meta".into(), Value::Object(meta));
        }
        Value::Object(params)
    }

    async fn send(&mut self, msg: Value) {
        self.conn
            .outgoing
            .send(mcpwire_transport::Outbound::text(msg.to_string()))
            .await
            .unwrap_or_else(|_| panic!("[{}] the server closed the connection", self.rev));
    }

    /// Sends a request without waiting; returns its id.
    async fn send_request(&mut self, method: &str, params: Value) -> Value {
        let id = json!(self.next_id);
        self.next_id += 1;
        self.sent.insert(id.to_string(), method.to_owned());
        let mut msg = json!({"jsonrpc": "2.0", "id": id, "method": method});
        if !params.is_null() {
            msg["params"] = params;
        }
        self.send(msg).await;
        id
    }

    async fn notify(&mut self, method: &str, params: Value) {
        let mut msg = json!({"jsonrpc": "2.0", "method": method});
        if !params.is_null() {
            msg["params"] = params;
        }
        self.send(msg).await;
    }

    /// Records one message from the server (answering it if it is a request); `None` when
    /// nothing came within `wait` or the connection closed.
    async fn next(&mut self, wait: Duration) -> Option<Value> {
        let frame = match tokio::time::timeout(wait, self.conn.incoming.recv()).await {
            Ok(Some(frame)) => frame,
            Ok(None) | Err(_) => return None,
        };
        let text = frame.unwrap_or_else(|e| panic!("[{}] bad frame from the server: {e}", self.rev)).text;
        let msg: Value = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("[{}] the server sent invalid JSON ({e}): {text}", self.rev));
        self.received.push(msg.clone());
        if msg.get("method").is_some() && msg.get("id").is_some() {
            self.answer(&msg).await;
        }
        Some(msg)
    }

    /// Like [`Self::next`], but a silence longer than [`WAIT`] is fatal.
    async fn must_next(&mut self, waiting_for: &str) -> Value {
        match self.next(WAIT).await {
            Some(msg) => msg,
            None => panic!(
                "[{}] no message from the server within {WAIT:?} while waiting for {waiting_for}; \
                 last messages: {:?}",
                self.rev,
                self.received.iter().rev().take(3).collect::<Vec<_>>()
            ),
        }
    }

    /// Answers a request of the server (legacy era), as a client of this revision would.
    async fn answer(&mut self, req: &Value) {
        let mut msg = match client_result(req) {
            Ok(result) => json!({"result": result}),
            Err(error) => json!({"error": error}),
        };
        msg["jsonrpc"] = json!("2.0");
        msg["id"] = req["id"].clone();
        self.send(msg).await;
    }

    /// Sends a request and waits for its response (answering the server on the way).
    async fn request_once(&mut self, method: &str, params: Value) -> Value {
        let id = self.send_request(method, params).await;
        loop {
            let msg = self.must_next(&format!("the response to {method} (id {id})")).await;
            if msg.get("method").is_none() && msg.get("id") == Some(&id) {
                return msg;
            }
        }
    }

    /// Sends a request and waits for its final response. In 2026-07-28 an `input_required`
    /// result is answered: the request is sent again, with a new id, its original params, the
    /// `inputResponses` and the `requestState`, until the result is final.
    async fn request(&mut self, method: &str, params: Value) -> Value {
        let mut round_params = params.clone();
        for _ in 0..MAX_ROUNDS {
            let response = self.request_once(method, round_params).await;
            let result = match response.get("result") {
                Some(r) if self.modern() && r.get("resultType") == Some(&json!("input_required")) => r.clone(),
                _ => return response,
            };
            let mut answers = Map::new();
            for (key, request) in result["inputRequests"].as_object().into_iter().flatten() {
                let answer = client_result(request).unwrap_or_else(|e| e);
                answers.insert(key.clone(), answer);
            }
            round_params = params.clone();
            if !answers.is_empty() {
                round_params["inputResponses"] = Value::Object(answers);
            }
            if let Some(state) = result.get("requestState") {
                round_params["requestState"] = state.clone();
            }
        }
        panic!("[{}] {method} still wanted input after {MAX_ROUNDS} rounds", self.rev)
    }

    /// A request that must succeed; returns its result.
    async fn ok(&mut self, method: &str, params: Value) -> Value {
        let response = self.request(method, params).await;
        self.expect(response.get("result").is_some(), || format!("{method} failed: {response}"));
        response.get("result").cloned().unwrap_or(Value::Null)
    }

    /// A request that must fail with `code`.
    async fn fails(&mut self, method: &str, params: Value, code: i64, what: &str) {
        let response = self.request(method, params).await;
        let got = response.pointer("/error/code").and_then(Value::as_i64);
        self.expect(got == Some(code), || format!("{what}: expected error {code}, got {response}"));
    }

    /// Waits until every method in `methods` arrived after message index `since`.
    async fn wait_for_all(&mut self, since: usize, methods: &[&str]) -> Vec<Value> {
        loop {
            let got: Vec<Value> = self.received[since..]
                .iter()
                .filter(|m| m.get("method").and_then(Value::as_str).is_some_and(|x| methods.contains(&x)))
                .cloned()
                .collect();
            let seen = |m: &&str| got.iter().any(|g| g["method"] == **m);
            if methods.iter().all(seen) {
                return got;
            }
            self.must_next(&format!("the notifications {methods:?}")).await;
        }
    }

    /// Reads until the server stays quiet for [`QUIET`].
    async fn drain(&mut self) {
        while self.next(QUIET).await.is_some() {}
    }

    /// Closes the client side, collects whatever the server still sends, and waits for the
    /// server to finish.
    async fn finish(mut self) -> Transcript {
        self.drain().await;
        let (closed_tx, _) = tokio::sync::mpsc::channel(1);
        // Dropping our sender closes the server's inbound stream.
        drop(std::mem::replace(&mut self.conn.outgoing, closed_tx));
        let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
        loop {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            match tokio::time::timeout(left, self.conn.incoming.recv()).await {
                Ok(Some(Ok(frame))) => match serde_json::from_str::<Value>(&frame.text) {
                    Ok(msg) => self.received.push(msg),
                    Err(e) => panic!("[{}] the server sent invalid JSON ({e}): {}", self.rev, frame.text),
                },
                Ok(Some(Err(e))) => panic!("[{}] bad frame from the server: {e}", self.rev),
                Ok(None) => break,
                Err(_) => {
                    let rev = self.rev;
                    self.problems.push(format!("[{rev}] the server did not close its side within 15 s"));
                    break;
                }
            }
        }
        if tokio::time::timeout(Duration::from_secs(15), &mut self.task).await.is_err() {
            self.task.abort();
            let rev = self.rev;
            self.problems.push(format!("[{rev}] Server::serve did not return after the client closed"));
        }
        Transcript { received: self.received, sent: self.sent, problems: self.problems }
    }
}

/// Most rounds of one multi-round request.
const MAX_ROUNDS: usize = 6;

/// What this client answers to a request of the server (a legacy request, or an entry of a
/// 2026-07-28 `inputRequests`): a result, or an error object.
fn client_result(req: &Value) -> Result<Value, Value> {
    match req["method"].as_str().unwrap_or_default() {
        "sampling/createMessage" => Ok(json!({
            "role": "assistant",
            "content": {"type": "text", "text": "hi"},
            "model": "m",
            "stopReason": "endTurn"
        })),
        "elicitation/create" => Ok(json!({
            "action": "accept",
            "content": fill_form(&req["params"]["requestedSchema"])
        })),
        "roots/list" => Ok(json!({"roots": [{"uri": "file:///tmp/project", "name": "project"}]})),
        "ping" => Ok(json!({})),
        other => Err(json!({"code": -32601, "message": format!("Method not found: {other}")})),
    }
}

/// A value for every property of a form schema (an elicitation's `requestedSchema`): its
/// default, else its first allowed value, else a value of its type.
fn fill_form(schema: &Value) -> Value {
    let mut out = Map::new();
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return Value::Object(out);
    };
    for (name, prop) in props {
        let first_const = |alts: Option<&Value>| {
            alts.and_then(Value::as_array).and_then(|a| a.first()).and_then(|c| c.get("const")).cloned()
        };
        let value = if let Some(d) = prop.get("default") {
            d.clone()
        } else if let Some(e) = prop.get("enum").and_then(|e| e.get(0)) {
            e.clone()
        } else if let Some(c) = first_const(prop.get("oneOf")).or(first_const(prop.get("anyOf"))) {
            c
        } else {
            match prop.get("type").and_then(Value::as_str) {
                Some("integer") => json!(7),
                Some("number") => json!(1.5),
                Some("boolean") => json!(true),
                Some("array") => {
                    let items = &prop["items"];
                    let item = items
                        .get("enum")
                        .and_then(|e| e.get(0))
                        .cloned()
                        .or(first_const(items.get("anyOf")))
                        .or(first_const(items.get("oneOf")))
                        .unwrap_or(json!("x"));
                    json!([item])
                }
                _ if name.contains("email") => json!("user@example.com"),
                _ => json!("user"),
            }
        };
        out.insert(name.clone(), value);
    }
    Value::Object(out)
}

/// Arguments for a reference tool.
fn tool_args(name: &str, input_schema: &Value) -> Value {
    match name {
        "echo" => json!({"text": "hello"}),
        "add" => json!({"a": 2, "b": 3}),
        "test_sampling" => json!({"prompt": "Say hi"}),
        "test_elicitation" => json!({"message": "Who are you?"}),
        "slow_compute" => json!({"seconds": 0.05, "label": "schema"}),
        "json_schema_2020_12_tool" => {
            json!({"name": "n", "email": "n@example.com", "address": {"street": "1 Main St", "city": "Springfield"}})
        }
        _ => fill_form(input_schema),
    }
}

/// The reference prompts that ask nothing of the client.
const PLAIN_PROMPTS: [&str; 4] = [
    "test_simple_prompt",
    "test_prompt_with_arguments",
    "test_prompt_with_embedded_resource",
    "test_prompt_with_image",
];

/// The reference tools that only run as tasks.
const TASK_REQUIRED: [&str; 3] = ["test_task_required", "failing_job", "test_tool_with_task"];

/// The reference tools that fail with a JSON-RPC error by design (a task-failure fixture).
const PROTOCOL_ERROR_TOOLS: [&str; 1] = ["protocol_error_job"];

/// Tools that cannot run without the client's sampling capability.
const NEEDS_SAMPLING: [&str; 2] = ["test_sampling", "test_missing_capability"];

/// The capabilities a 2026-07-28 request declares when it is to answer input requests.
fn modern_capabilities() -> Value {
    json!({"sampling": {}, "elicitation": {}, "roots": {}})
}

/// The text of the first content item of a result (`content` or `contents`).
fn first_text(result: &Value) -> Option<&str> {
    result.pointer("/content/0/text").or_else(|| result.pointer("/contents/0/text")).and_then(Value::as_str)
}

// ---------------------------------------------------------------------------------------------
// 2. Scenarios
// ---------------------------------------------------------------------------------------------

const SIMPLE_TEXT: &str = "This is a simple text response for testing.";
const STATIC_TEXT: &str = "This is the content of the static text resource.";
const WATCHED: &str = "test://watched-resource";
const TEMPLATE: &str = "test://template/{id}/data";

impl Client {
    /// What both eras share: every tool, resource, prompt, completion and a few errors.
    async fn exercise(&mut self) {
        // Tools: every one of them.
        let list = self.ok("tools/list", self.params(json!({}), &[])).await;
        let tools: Vec<(String, Value)> = list["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|t| (t["name"].as_str().unwrap_or_default().to_owned(), t["inputSchema"].clone()))
            .collect();
        self.expect(tools.len() >= 15, || format!("tools/list lists only {} tools", tools.len()));
        for (name, schema) in &tools {
            let logging = name.contains("logging");
            let call = json!({"name": name, "arguments": tool_args(name, schema)});
            let mut extra: Vec<(&str, Value)> = Vec::new();
            if self.modern() {
                if logging {
                    extra.push((meta_keys::LOG_LEVEL, json!("debug")));
                }
                // First with no capabilities (as the brief of 2026-07-28 requests go): a tool
                // that needs one must say which (-32021); any answer is validated.
                let response = self.request("tools/call", self.params(call.clone(), &extra)).await;
                if NEEDS_SAMPLING.contains(&name.as_str()) {
                    let code = response.pointer("/error/code").and_then(Value::as_i64);
                    self.expect(code == Some(-32021), || {
                        format!("{name} without the sampling capability answered {response}, not error -32021")
                    });
                }
                // Then declaring what this client can answer, through every input round.
                extra.push((meta_keys::CLIENT_CAPABILITIES, modern_capabilities()));
            }
            if TASK_REQUIRED.contains(&name.as_str()) && self.rev >= "2025-11-25" {
                // Only as a task: 2025-11-25 refuses a plain call (-32601); 2026-07-28 names the
                // extension this client did not declare (-32021). Earlier revisions have no
                // tasks, and the tool simply runs.
                let code = if self.modern() { -32021 } else { -32601 };
                self.fails("tools/call", self.params(call, &extra), code, "calling a task-only tool plainly").await;
                continue;
            }
            if PROTOCOL_ERROR_TOOLS.contains(&name.as_str()) {
                self.fails("tools/call", self.params(call, &extra), -32603, "a tool failing with a protocol error")
                    .await;
                continue;
            }
            let since = self.received.len();
            let result = self.ok("tools/call", self.params(call, &extra)).await;
            if self.modern() {
                self.expect(result["resultType"] == "complete", || format!("{name} ended with {result}"));
            }
            if name == "test_simple_text" {
                let text = first_text(&result).map(str::to_owned);
                self.expect(text.as_deref() == Some(SIMPLE_TEXT), || format!("test_simple_text returned {text:?}"));
            }
            if logging {
                let logs = self.received[since..].iter().filter(|m| m["method"] == "notifications/message").count();
                self.expect(logs == 3, || format!("{name} sent {logs} log messages, not 3"));
            }
        }
        // Progress, with a string token and with an integer token.
        for token in [json!("progress-token"), json!(42)] {
            let since = self.received.len();
            let params = self.params(
                json!({"name": "test_tool_with_progress", "arguments": {}}),
                &[(meta_keys::PROGRESS_TOKEN, token.clone())],
            );
            self.ok("tools/call", params).await;
            let progress = self.received[since..]
                .iter()
                .filter(|m| m["method"] == "notifications/progress")
                .filter(|m| m["params"]["progressToken"] == token)
                .count();
            self.expect(progress == 3, || {
                format!("test_tool_with_progress sent {progress} notifications for token {token}, not 3")
            });
        }

        // Resources: list, read every one, the template, an unknown URI.
        let list = self.ok("resources/list", self.params(json!({}), &[])).await;
        let uris: Vec<String> = list["resources"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|r| r["uri"].as_str().map(str::to_owned))
            .collect();
        self.expect(uris.len() >= 3, || format!("resources/list lists {uris:?}"));
        for uri in &uris {
            let result = self.ok("resources/read", self.params(json!({"uri": uri}), &[])).await;
            if uri == "test://static-text" {
                let text = first_text(&result).map(str::to_owned);
                self.expect(text.as_deref() == Some(STATIC_TEXT), || format!("test://static-text read as {text:?}"));
            }
        }
        self.ok("resources/templates/list", self.params(json!({}), &[])).await;
        let data = self.ok("resources/read", self.params(json!({"uri": "test://template/7/data"}), &[])).await;
        self.expect(first_text(&data).is_some_and(|t| t.contains("Data for ID: 7")), || {
            format!("test://template/7/data read as {data}")
        });
        let not_found = if self.modern() { -32602 } else { -32002 };
        self.fails(
            "resources/read",
            self.params(json!({"uri": "test://no-such-resource"}), &[]),
            not_found,
            "reading an unknown resource",
        )
        .await;

        // Prompts: list and get every one, with its required arguments.
        let list = self.ok("prompts/list", self.params(json!({}), &[])).await;
        let prompts: Vec<Value> = list["prompts"].as_array().cloned().unwrap_or_default();
        self.expect(prompts.len() >= 4, || format!("prompts/list lists {prompts:?}"));
        for prompt in &prompts {
            let mut args = Map::new();
            for arg in prompt["arguments"].as_array().into_iter().flatten() {
                let name = arg["name"].as_str().unwrap_or_default();
                let value = match name {
                    "resourceUri" => "test://static-text",
                    _ => "value",
                };
                args.insert(name.to_owned(), json!(value));
            }
            // A prompt may ask the user first (2026-07-28: input rounds), so declare what we answer.
            let caps: Vec<(&str, Value)> =
                if self.modern() { vec![(meta_keys::CLIENT_CAPABILITIES, modern_capabilities())] } else { vec![] };
            let params = self.params(json!({"name": prompt["name"], "arguments": args}), &caps);
            let response = self.request("prompts/get", params).await;
            // A prompt that asks the user can fail where the revision has no elicitation; the
            // plain ones must work everywhere. Either way the answer is validated.
            let name = prompt["name"].as_str().unwrap_or_default();
            let must_work = PLAIN_PROMPTS.contains(&name) || self.rev >= "2025-06-18";
            self.expect(!must_work || response.get("result").is_some(), || format!("prompts/get {name}: {response}"));
        }

        // Completion of a prompt argument and of a template variable.
        let prompt_ref = json!({
            "ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"},
            "argument": {"name": "arg1", "value": "te"}
        });
        let r = self.ok("completion/complete", self.params(prompt_ref, &[])).await;
        self.expect(r["completion"]["values"] == json!(["test1", "test2"]), || format!("completion of arg1 gave {r}"));
        let template_ref = json!({
            "ref": {"type": "ref/resource", "uri": TEMPLATE},
            "argument": {"name": "id", "value": "1"}
        });
        let r = self.ok("completion/complete", self.params(template_ref, &[])).await;
        self.expect(r["completion"]["values"] == json!(["1", "123"]), || format!("completion of id gave {r}"));

        // Errors.
        self.fails(
            "tools/call",
            self.params(json!({"name": "no_such_tool", "arguments": {}}), &[]),
            -32602,
            "calling an unknown tool",
        )
        .await;
        self.fails(
            "tools/list",
            self.params(json!({"cursor": "not-a-valid-cursor"}), &[]),
            -32602,
            "listing tools from a bad cursor",
        )
        .await;
    }

    /// The 2025-11-25 task scenario: a task-augmented call with progress, polling, the
    /// outcome, status notifications, a task that asks the user, listing, cancellation and
    /// the errors of each.
    async fn tasks(&mut self) {
        let since = self.received.len();
        let call = json!({
            "name": "test_long_running_task",
            "arguments": {"steps": 3, "delayMs": 30},
            "task": {"ttl": 60000},
            "_meta": {(meta_keys::PROGRESS_TOKEN): "task-progress"}
        });
        let created = self.ok("tools/call", call).await;
        let task = created["task"].clone();
        self.expect(task["status"] == "working" && task["ttl"] == 60000, || format!("created {created}"));
        let id = task["taskId"].clone();
        self.ok("tasks/get", json!({"taskId": id})).await;
        let result = self.ok("tasks/result", json!({"taskId": id})).await;
        self.expect(first_text(&result) == Some("Counted to 3."), || format!("tasks/result gave {result}"));
        self.expect(result["_meta"]["io.modelcontextprotocol/related-task"]["taskId"] == id, || {
            format!("tasks/result without its related-task: {result}")
        });
        let seen = self.wait_for_all(since, &["notifications/tasks/status", "notifications/progress"]).await;
        self.expect(seen.iter().any(|n| n["params"]["status"] == "completed"), || format!("status notes: {seen:?}"));
        let done = self.ok("tasks/get", json!({"taskId": id})).await;
        self.expect(done["status"] == "completed", || format!("after the result: {done}"));

        // The task-only tool, as a task; a tool that asks the user while it runs as one.
        for name in ["test_task_required", "test_task_elicitation"] {
            let created = self.ok("tools/call", json!({"name": name, "task": {}})).await;
            let id = created["task"]["taskId"].clone();
            let result = self.ok("tasks/result", json!({"taskId": id})).await;
            self.expect(result.get("content").is_some(), || format!("{name} as a task gave {result}"));
        }
        let list = self.ok("tasks/list", json!({})).await;
        let listed = list["tasks"].as_array().map_or(0, Vec::len);
        self.expect(listed == 3, || format!("tasks/list lists {listed} tasks, not 3: {list}"));

        // Cancellation, and what cannot be done with a cancelled task.
        let call = json!({"name": "test_long_running_task", "arguments": {"steps": 100, "delayMs": 50}, "task": {}});
        let created = self.ok("tools/call", call).await;
        let id = created["task"]["taskId"].clone();
        let cancelled = self.ok("tasks/cancel", json!({"taskId": id})).await;
        self.expect(cancelled["status"] == "cancelled", || format!("tasks/cancel gave {cancelled}"));
        self.fails("tasks/cancel", json!({"taskId": id}), -32602, "cancelling a cancelled task").await;
        self.fails("tasks/result", json!({"taskId": id}), -32602, "the result of a cancelled task").await;
        self.fails("tasks/get", json!({"taskId": "no-such-task"}), -32602, "an unknown task").await;
        self.fails("tasks/list", json!({"cursor": "not-a-cursor"}), -32602, "listing tasks from a bad cursor").await;
        let echo = json!({"name": "echo", "arguments": {"text": "x"}, "task": {}});
        self.fails("tools/call", echo, -32601, "a task-augmented call of a tool without task support").await;
    }

    /// Changes the server's lists, so that list_changed notifications go out.
    fn change_lists(&self) {
        self.server
            .add_tool(Tool::new("late_tool", "Added during the session.", json!({"type": "object"})), |_, _| async {
                Ok(CallToolResult::text("late"))
            });
        self.server.add_prompt(Prompt::new("late_prompt", "Added during the session.", vec![]), |_, _| async {
            Ok(GetPromptResult { description: None, messages: vec![PromptMessage::user_text("late")], meta: None })
        });
        self.server.add_resource(Resource::new("test://late", "late"), |uri, _| async move {
            Ok(ReadResourceResult {
                contents: vec![ResourceContents::text(uri, Some("text/plain"), "late")],
                meta: None,
            })
        });
    }
}

const LIST_CHANGED: [&str; 3] =
    ["notifications/tools/list_changed", "notifications/prompts/list_changed", "notifications/resources/list_changed"];

/// A legacy session: `initialize`, then everything the revision has.
async fn legacy_session(rev: &'static str) -> Transcript {
    let mut c = Client::start(rev);
    let mut capabilities = json!({"sampling": {}, "roots": {}});
    if rev >= "2025-06-18" {
        capabilities["elicitation"] = json!({});
    }
    let init = c
        .ok(
            "initialize",
            json!({
                "protocolVersion": rev,
                "capabilities": capabilities,
                "clientInfo": {"name": "schema-test", "version": "1.0.0"}
            }),
        )
        .await;
    c.expect(init["protocolVersion"] == rev, || format!("initialize negotiated {}", init["protocolVersion"]));
    c.notify("notifications/initialized", Value::Null).await;
    c.ok("ping", Value::Null).await;
    c.ok("logging/setLevel", json!({"level": "debug"})).await;

    c.exercise().await;

    // Subscriptions, and an update while subscribed.
    c.ok("resources/subscribe", json!({"uri": WATCHED})).await;
    let since = c.received.len();
    c.server.notify_resource_updated(WATCHED);
    let updated = c.wait_for_all(since, &["notifications/resources/updated"]).await;
    c.expect(updated[0]["params"]["uri"] == WATCHED, || format!("resources/updated for the wrong URI: {}", updated[0]));
    c.ok("resources/unsubscribe", json!({"uri": WATCHED})).await;

    if rev == "2025-11-25" {
        c.tasks().await;
    } else {
        c.fails("tasks/list", json!({}), -32601, "tasks/list before 2025-11-25").await;
        c.fails("tasks/get", json!({"taskId": "t"}), -32601, "tasks/get before 2025-11-25").await;
    }

    let since = c.received.len();
    c.change_lists();
    c.wait_for_all(since, &LIST_CHANGED).await;
    c.finish().await
}

/// A 2026-07-28 session: no handshake, `_meta` on every request, discovery and a listen
/// stream; none of the methods the revision removed.
async fn modern_session() -> Transcript {
    let mut c = Client::start(MODERN);
    let discover = c.ok("server/discover", c.params(json!({}), &[])).await;
    let supported = discover["supportedVersions"].clone();
    c.expect(supported.as_array().is_some_and(|v| v.contains(&json!(MODERN))), || {
        format!("server/discover lists {supported}")
    });

    c.exercise().await;

    // Tasks are an extension in 2026-07-28: this client does not declare it (so nothing of
    // it is emitted), and the methods 2025-11-25 had and the extension dropped do not exist.
    c.fails("tasks/get", c.params(json!({"taskId": "t"}), &[]), -32021, "tasks/get without the extension").await;
    c.fails("tasks/result", c.params(json!({"taskId": "t"}), &[]), -32601, "tasks/result in 2026-07-28").await;
    c.fails("tasks/list", c.params(json!({}), &[]), -32601, "tasks/list in 2026-07-28").await;

    // A listen stream with every filter, changes while it is open, then its cancellation.
    let filter = json!({
        "toolsListChanged": true,
        "promptsListChanged": true,
        "resourcesListChanged": true,
        "resourceSubscriptions": [WATCHED]
    });
    let since = c.received.len();
    let listen = c.send_request("subscriptions/listen", c.params(json!({"notifications": filter}), &[])).await;
    let ack = c.wait_for_all(since, &["notifications/subscriptions/acknowledged"]).await;
    c.expect(ack[0]["params"]["_meta"][meta_keys::SUBSCRIPTION_ID] == listen, || {
        format!("the acknowledgement names another subscription: {}", ack[0])
    });
    let since = c.received.len();
    c.server.notify_resource_updated(WATCHED);
    c.change_lists();
    let mut expected = LIST_CHANGED.to_vec();
    expected.push("notifications/resources/updated");
    let delivered = c.wait_for_all(since, &expected).await;
    for n in &delivered {
        c.expect(n["params"]["_meta"][meta_keys::SUBSCRIPTION_ID] == listen, || {
            format!("a listen notification without its subscription id: {n}")
        });
    }
    c.notify("notifications/cancelled", json!({"requestId": listen, "reason": "test over"})).await;
    c.drain().await;
    // A cancelled request gets no response.
    let answered = c.received.iter().any(|m| m.get("method").is_none() && m.get("id") == Some(&listen));
    c.expect(!answered, || "the cancelled subscriptions/listen request was answered".into());
    c.finish().await
}

// ---------------------------------------------------------------------------------------------
// 3. Tests
// ---------------------------------------------------------------------------------------------

/// Runs the scenario of `rev` and validates everything the server sent.
async fn run_revision(name: &'static str) {
    let rev = Revision::load(name);
    let scenario = async {
        if name == MODERN {
            modern_session().await
        } else {
            legacy_session(name).await
        }
    };
    let transcript = tokio::time::timeout(SCENARIO_LIMIT, scenario)
        .await
        .unwrap_or_else(|_| panic!("[{name}] the scenario did not finish within {SCENARIO_LIMIT:?}"));
    let report = validate(&rev, &transcript);
    let mut kinds: Vec<String> = Vec::new();
    for msg in &transcript.received {
        let answered = msg.get("id").and_then(|i| transcript.sent.get(&i.to_string())).map_or("?", String::as_str);
        let kind = match (msg.get("method"), msg.get("error")) {
            (Some(m), _) if msg.get("id").is_some() => format!("request {}", m.as_str().unwrap_or("?")),
            (Some(m), _) => format!("notification {}", m.as_str().unwrap_or("?")),
            (None, Some(e)) => format!("error {} to {answered}", e["code"]),
            (None, None) => match msg["result"].get("resultType").and_then(Value::as_str) {
                Some(t) if t != "complete" => format!("result ({t}) of {answered}"),
                _ => format!("result of {answered}"),
            },
        };
        kinds.push(kind);
    }
    let mut counts: Vec<(String, usize)> = Vec::new();
    for k in kinds {
        match counts.iter_mut().find(|(n, _)| *n == k) {
            Some((_, c)) => *c += 1,
            None => counts.push((k, 1)),
        }
    }
    eprintln!(
        "[{name}] validated {} messages with {} checks; strict rewrite closed {} object schemas, \
         opened {} allOf members and left {} definitions as published: {:?}",
        report.messages,
        report.checks,
        rev.rewrite.closed,
        rev.rewrite.inlined,
        rev.rewrite.untouched.len(),
        rev.rewrite.untouched
    );
    for (kind, n) in &counts {
        eprintln!("[{name}]   {n:>3} × {kind}");
    }
    let mut failures = report.failures;
    failures.extend(transcript.problems);
    assert!(report.messages > 0, "[{name}] the server sent nothing at all");
    assert!(
        failures.is_empty(),
        "[{name}] {} failure(s) out of {} messages:\n\n{}",
        failures.len(),
        report.messages,
        failures.join("\n\n")
    );
}

#[tokio::test]
async fn reference_server_messages_validate_2024_11_05() {
    run_revision("2024-11-05").await;
}

#[tokio::test]
async fn reference_server_messages_validate_2025_03_26() {
    run_revision("2025-03-26").await;
}

#[tokio::test]
async fn reference_server_messages_validate_2025_06_18() {
    run_revision("2025-06-18").await;
}

#[tokio::test]
async fn reference_server_messages_validate_2025_11_25() {
    run_revision("2025-11-25").await;
}

#[tokio::test]
async fn reference_server_messages_validate_2026_07_28() {
    run_revision("2026-07-28").await;
}
