//! `mcp serve --http --store` and `mcp proxy --http --store`: instances of one deployment on a
//! real Redis the test starts.
//! A store that cannot be reached stops the start (exit 3, one line naming it); an instance
//! killed outright leaves its sessions to the others, and its call in flight, resumed on
//! another instance, is answered with an error (never a hang), and its task is failed.

use std::time::Duration;

use mcpwire_testkit::redis::RedisServer;
use serde_json::{json, Value};
use tokio::process::Child;

const MCP: &str = env!("CARGO_BIN_EXE_mcp");
const LIMIT: Duration = Duration::from_secs(30);
const V1125: &str = "2025-11-25";

#[test]
fn an_unreachable_store_stops_the_start_with_one_line_naming_it() {
    // Nothing listens on port 1; the password must not be shown.
    for (how, url) in [("--store", "redis://:secret@127.0.0.1:1"), ("MCP_STORE", "redis://127.0.0.1:1/2")] {
        let mut command = std::process::Command::new(MCP);
        command.args(["serve", "--http", "127.0.0.1:0"]);
        match how {
            "--store" => command.args(["--store", url]),
            _ => command.env("MCP_STORE", url),
        };
        let out = mcpwire_testkit::output_within(&mut command, LIMIT, how);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{how}: {stderr}");
        let lines: Vec<&str> = stderr.lines().collect();
        assert_eq!(lines.len(), 1, "{how}: one line: {stderr}");
        assert!(lines[0].contains("127.0.0.1:1") && lines[0].contains("shared store"), "{how}: {stderr}");
        assert!(!stderr.contains("secret"), "the password is shown: {stderr}");
    }
}

/// `mcp serve --http` on a free port, one instance of the deployment `prefix` on `redis`.
async fn instance(redis: &RedisServer, prefix: &str) -> (Child, String) {
    let store = ["--store", &redis.url(), "--store-prefix", prefix, "--instance-lease", "1"].map(str::to_owned);
    serve(&store).await
}

/// `mcp serve --http ARGS` on a free port, once it serves; its endpoint's URL.
async fn serve(args: &[String]) -> (Child, String) {
    let mut all = vec!["serve"];
    all.extend(args.iter().map(String::as_str));
    let (child, port) = crate::cli_shutdown::start(&all).await;
    (child, format!("http://127.0.0.1:{port}/mcp"))
}

fn post(http: &reqwest::Client, url: &str, session: Option<&str>, body: &Value) -> reqwest::RequestBuilder {
    let mut r = http
        .post(url)
        .header("Accept", "application/json, text/event-stream")
        .header("Content-Type", "application/json")
        .header("MCP-Protocol-Version", V1125)
        .body(body.to_string());
    if let Some(session) = session {
        r = r.header("Mcp-Session-Id", session);
    }
    r
}

/// The SSE events of `text` as (id, data) pairs.
fn events(text: &str) -> Vec<(Option<String>, String)> {
    text.split("\n\n")
        .filter_map(|block| {
            let mut id = None;
            let mut data = None;
            for line in block.lines() {
                if let Some(v) = line.strip_prefix("id: ") {
                    id = Some(v.to_owned());
                } else if let Some(v) = line.strip_prefix("data: ") {
                    data = Some(v.to_owned());
                }
            }
            data.filter(|d| !d.is_empty()).map(|d| (id, d))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_instance_leaves_its_sessions_to_the_other_and_its_call_in_flight_an_error() {
    let redis = RedisServer::start();
    let prefix = format!("kill-{}", std::process::id());
    let (mut a, url_a) = instance(&redis, &prefix).await;
    let (_b, url_b) = instance(&redis, &prefix).await;
    let http = reqwest::Client::new();

    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": V1125, "capabilities": {"tasks": {}}, "clientInfo": {"name": "kill-test", "version": "1"}}});
    let resp = tokio::time::timeout(LIMIT, post(&http, &url_a, None, &init).send()).await.unwrap().unwrap();
    let session = resp.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    resp.text().await.unwrap();
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    post(&http, &url_a, Some(&session), &note).send().await.unwrap();

    // A task running on a.
    let as_task = json!({"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {
        "name": "test_long_running_task", "arguments": {"steps": 600, "delayMs": 100}, "task": {"ttl": 60000}}});
    let resp =
        tokio::time::timeout(LIMIT, post(&http, &url_a, Some(&session), &as_task).send()).await.unwrap().unwrap();
    let text = resp.text().await.unwrap();
    let created: Value = events(&text)
        .into_iter()
        .find_map(|(_, d)| serde_json::from_str::<Value>(&d).ok())
        .or_else(|| serde_json::from_str(&text).ok())
        .unwrap_or_else(|| panic!("the task's creation: {text}"));
    let task_id = created["result"]["task"]["taskId"].as_str().unwrap_or_else(|| panic!("{created}")).to_owned();

    // A long call on a: read up to its first progress, then a dies.
    let call = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {
        "name": "test_long_running_task", "arguments": {"steps": 600, "delayMs": 100},
        "_meta": {"progressToken": "p"}}});
    let mut resp =
        tokio::time::timeout(LIMIT, post(&http, &url_a, Some(&session), &call).send()).await.unwrap().unwrap();
    let mut seen = String::new();
    let last_id = tokio::time::timeout(LIMIT, async {
        loop {
            let chunk = resp.chunk().await.unwrap().expect("the stream goes on until the first progress");
            seen.push_str(&String::from_utf8_lossy(&chunk));
            if let Some((Some(id), _)) = events(&seen).into_iter().find(|(_, d)| d.contains("notifications/progress")) {
                return id;
            }
        }
    })
    .await
    .expect("a first progress in time");
    a.start_kill().unwrap();
    a.wait().await.unwrap();
    drop(resp);

    // The session goes on on b.
    let echo = json!({"jsonrpc": "2.0", "id": 10, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "still here"}}});
    let resp = tokio::time::timeout(LIMIT, post(&http, &url_b, Some(&session), &echo).send()).await.unwrap().unwrap();
    assert_eq!(resp.status(), 200);
    assert!(resp.text().await.unwrap().contains("still here"));

    // a's task is failed by b once a's lease ran out, saying why.
    let get = json!({"jsonrpc": "2.0", "id": 11, "method": "tasks/get", "params": {"taskId": task_id}});
    let failed = mcpwire_testkit::eventually("the killed instance's task failed", || async {
        let resp = post(&http, &url_b, Some(&session), &get).send().await.ok()?;
        let task: Value = serde_json::from_str(&resp.text().await.ok()?).ok()?;
        (task["result"]["status"] == json!("failed")).then_some(task)
    })
    .await;
    let message = failed["result"]["statusMessage"].as_str().unwrap_or_default();
    assert!(message.contains("stopped"), "{failed}");

    // The call resumed on b ends with an error once a's lease ran out, never a hang.
    let get = http
        .get(&url_b)
        .header("Accept", "text/event-stream")
        .header("Mcp-Session-Id", &session)
        .header("MCP-Protocol-Version", V1125)
        .header("Last-Event-ID", &last_id);
    let resp = tokio::time::timeout(LIMIT, get.send()).await.unwrap().unwrap();
    assert_eq!(resp.status(), 200, "resuming {last_id} on b");
    let text = tokio::time::timeout(LIMIT, resp.text()).await.expect("the resumed stream ends").unwrap();
    let answer: Value = events(&text)
        .iter()
        .filter_map(|(_, d)| serde_json::from_str::<Value>(d).ok())
        .find(|m| m["id"] == json!(9))
        .unwrap_or_else(|| panic!("an answer to the call: {text}"));
    assert_eq!(answer["error"]["code"], json!(-32603), "{answer}");
    assert!(answer["error"]["message"].as_str().unwrap().contains("stopped"), "{answer}");
}

/// A 2026-07-28 call that asks the client (`input_required`), answered by its retry with the
/// sealed `requestState`; the retry goes to `retry_on`. Returns the retry's answer.
async fn two_rounds(http: &reqwest::Client, first_on: &str, retry_on: &str) -> Value {
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
    });
    let params = json!({"name": "test_elicitation", "arguments": {"message": "who?"}, "_meta": meta});
    let call = |url: &str, id: u64, params: &Value| {
        http.post(url)
            .header("Accept", "application/json, text/event-stream")
            .header("Content-Type", "application/json")
            .header("MCP-Protocol-Version", "2026-07-28")
            .header("Mcp-Method", "tools/call")
            .header("Mcp-Name", "test_elicitation")
            .body(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}).to_string())
            .send()
    };
    let body = |resp: reqwest::Response| async move {
        let text = resp.text().await.unwrap();
        let data = events(&text).pop().map(|(_, d)| d).unwrap_or(text);
        serde_json::from_str::<Value>(&data).unwrap_or_else(|e| panic!("{e}: {data}"))
    };
    let asked = body(tokio::time::timeout(LIMIT, call(first_on, 1, &params)).await.unwrap().unwrap()).await;
    assert_eq!(asked["result"]["resultType"], json!("input_required"), "{asked}");
    let key = asked["result"]["inputRequests"].as_object().and_then(|q| q.keys().next().cloned()).expect("a question");
    let mut retry = params;
    retry["inputResponses"] =
        json!({ key: {"action": "accept", "content": {"username": "ada", "email": "a@example.com"}} });
    retry["requestState"] = asked["result"]["requestState"].clone();
    body(tokio::time::timeout(LIMIT, call(retry_on, 2, &retry)).await.unwrap().unwrap()).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_multi_round_request_begun_on_one_instance_is_finished_on_the_other() {
    let http = reqwest::Client::new();
    // Keys from the store, made by the first instance.
    let redis = RedisServer::start();
    let prefix = format!("rounds-{}", std::process::id());
    let (_a, url_a) = instance(&redis, &prefix).await;
    let (_b, url_b) = instance(&redis, &prefix).await;
    let answered = two_rounds(&http, &url_a, &url_b).await;
    assert_eq!(answered["result"]["resultType"], json!("complete"), "with --store: {answered}");
    // Keys from one file, no store.
    let dir = std::env::temp_dir().join(format!("mcp-state-key-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("key");
    std::fs::write(&file, [7u8; 48]).unwrap();
    let args = ["--state-key-file".to_owned(), file.display().to_string()];
    let (_c, url_c) = serve(&args).await;
    let (_d, url_d) = serve(&args).await;
    let answered = two_rounds(&http, &url_c, &url_d).await;
    assert_eq!(answered["result"]["resultType"], json!("complete"), "with --state-key-file: {answered}");
    // Rotating the file: an instance given the new file first and the old one second opens
    // what one with the old file alone sealed; what it seals (with the new) is not the old
    // one's to open.
    let new_file = dir.join("new-key");
    std::fs::write(&new_file, [9u8; 40]).unwrap();
    let both = ["--state-key-file", &new_file.display().to_string(), "--state-key-file", &file.display().to_string()]
        .map(str::to_owned);
    let (_f, url_f) = serve(&both).await;
    let answered = two_rounds(&http, &url_c, &url_f).await;
    assert_eq!(answered["result"]["resultType"], json!("complete"), "sealed with the old file: {answered}");
    let refused = two_rounds(&http, &url_f, &url_c).await;
    assert_eq!(refused["error"]["code"], json!(-32602), "sealed with the new file: {refused}");
    // Without either, each process has its own keys: the retry elsewhere is refused.
    let (_e, url_e) = serve(&[]).await;
    let refused = two_rounds(&http, &url_c, &url_e).await;
    assert_eq!(refused["error"]["code"], json!(-32602), "another key: {refused}");
    // A key file too short to be a secret is a usage error.
    std::fs::write(&file, b"short").unwrap();
    let mut command = std::process::Command::new(MCP);
    command.args(["serve", "--http", "127.0.0.1:0", "--state-key-file", &file.display().to_string()]);
    let out = mcpwire_testkit::output_within(&mut command, LIMIT, "a short key file");
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `mcp proxy ARGS --http --store` on a free port, one instance of the deployment `prefix` on
/// `redis`, once it serves; its endpoint's URL.
async fn proxy_instance(redis: &RedisServer, prefix: &str, args: &[&str]) -> (Child, String) {
    let mut all = vec!["proxy"];
    all.extend(args);
    let url = redis.url();
    all.extend(["--store", &url, "--store-prefix", prefix, "--instance-lease", "1"]);
    // Upstream as 2025-11-25, whose tool list tells which tools may run as tasks (a
    // 2026-07-28 one tells only a client declaring the tasks extension, which the proxy's
    // upstream client does not).
    all.extend(["--protocol-version", V1125]);
    let (child, port) = crate::cli_shutdown::start(&all).await;
    (child, format!("http://127.0.0.1:{port}/mcp"))
}

/// The JSON-RPC message of an answer, plain or the last of an SSE stream.
async fn answer(resp: reqwest::Response) -> Value {
    let text = tokio::time::timeout(LIMIT, resp.text()).await.expect("answered in time").unwrap();
    let data = events(&text).pop().map(|(_, d)| d).unwrap_or(text);
    serde_json::from_str::<Value>(&data).unwrap_or_else(|e| panic!("{e}: {data}"))
}

/// A task-augmented call of `tool` (`test_long_running_task`, under whatever prefix) made
/// on `url_a`, then polled and its result read on `url_b`, in one 2025-11-25 session.
async fn a_task_made_on_one_is_followed_on_the_other(url_a: &str, url_b: &str, tool: &str) {
    let http = reqwest::Client::new();
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": V1125, "capabilities": {"tasks": {}}, "clientInfo": {"name": "proxy-tasks", "version": "1"}}});
    let resp = tokio::time::timeout(LIMIT, post(&http, url_a, None, &init).send()).await.unwrap().unwrap();
    let session = resp.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    resp.text().await.unwrap();
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    post(&http, url_a, Some(&session), &note).send().await.unwrap();

    let as_task = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": tool, "arguments": {"steps": 3, "delayMs": 100}, "task": {"ttl": 60000}}});
    let resp = tokio::time::timeout(LIMIT, post(&http, url_a, Some(&session), &as_task).send()).await.unwrap().unwrap();
    let created = answer(resp).await;
    let task_id = created["result"]["task"]["taskId"].as_str().unwrap_or_else(|| panic!("{created}")).to_owned();

    // On b: the task is known, and ends.
    let get = json!({"jsonrpc": "2.0", "id": 3, "method": "tasks/get", "params": {"taskId": task_id}});
    let done = mcpwire_testkit::eventually("the task, seen on b, completed", || async {
        let task = answer(post(&http, url_b, Some(&session), &get).send().await.ok()?).await;
        assert!(task.get("error").is_none(), "tasks/get on b: {task}");
        (task["result"]["status"] == json!("completed")).then_some(task)
    })
    .await;
    assert_eq!(done["result"]["taskId"], json!(task_id), "{done}");
    let result = json!({"jsonrpc": "2.0", "id": 4, "method": "tasks/result", "params": {"taskId": task_id}});
    let resp = tokio::time::timeout(LIMIT, post(&http, url_b, Some(&session), &result).send()).await.unwrap().unwrap();
    let result = answer(resp).await;
    assert!(result["result"]["content"].is_array(), "the call's result, read on b: {result}");
    assert_ne!(result["result"]["isError"], json!(true), "{result}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn proxies_sharing_a_store_share_their_tasks() {
    let redis = RedisServer::start();
    // One target: each proxy runs `mcp serve` over stdio.
    let prefix = format!("proxy-tasks-{}", std::process::id());
    let upstream = format!("'{MCP}' serve");
    let (_a, url_a) = proxy_instance(&redis, &prefix, &[&upstream]).await;
    let (_b, url_b) = proxy_instance(&redis, &prefix, &[&upstream]).await;
    a_task_made_on_one_is_followed_on_the_other(&url_a, &url_b, "test_long_running_task").await;

    // The gateway (--config): the same, under the server's prefix.
    let dir = std::env::temp_dir().join(format!("mcp-proxy-tasks-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("gateway.json");
    std::fs::write(&file, json!({"mcpServers": {"local": {"command": MCP, "args": ["serve"]}}}).to_string()).unwrap();
    let prefix = format!("gateway-tasks-{}", std::process::id());
    let config = file.display().to_string();
    let (_c, url_c) = proxy_instance(&redis, &prefix, &["--config", &config]).await;
    let (_d, url_d) = proxy_instance(&redis, &prefix, &["--config", &config]).await;
    a_task_made_on_one_is_followed_on_the_other(&url_c, &url_d, "local_test_long_running_task").await;
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_proxy_whose_store_is_unreachable_stops_with_one_line_before_starting_its_target() {
    // Had the target been started first, it would have said what it speaks.
    let upstream = format!("'{MCP}' serve");
    let mut command = std::process::Command::new(MCP);
    command.args(["proxy", &upstream, "--http", "127.0.0.1:0", "--store", "redis://:secret@127.0.0.1:1"]);
    let out = mcpwire_testkit::output_within(&mut command, LIMIT, "proxy --store");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "one line: {stderr}");
    assert!(lines[0].contains("127.0.0.1:1") && lines[0].contains("shared store"), "{stderr}");
    assert!(!stderr.contains("secret"), "the password is shown: {stderr}");
}
