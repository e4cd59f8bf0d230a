//! Real child-process tests of `mcp serve`: the built binary is spawned with piped
//! stdin/stdout/stderr and spoken to over newline-delimited JSON-RPC, exactly as an MCP
//! client would over stdio. Every wait is bounded, so a misbehaving server fails a test
//! instead of hanging it.

use std::collections::VecDeque;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::mpsc;

/// The longest any single wait may take.
const WAIT: Duration = Duration::from_secs(10);
/// How long the server may take to exit once told to.
const EXIT_WAIT: Duration = Duration::from_secs(5);

const LEGACY: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];
const LATEST_LEGACY: &str = "2025-11-25";
const MODERN: &str = "2026-07-28";

const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;
const METHOD_NOT_FOUND: i64 = -32601;
const INVALID_PARAMS: i64 = -32602;
const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;

const SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
const STATIC_TEXT: &str = "This is the content of the static text resource.";

/// One line read from the server's stdout.
type Line = Result<Value, String>;

/// Every stdout line as raw bytes, with whether it ended in a newline.
type RawLines = Arc<Mutex<Vec<(Vec<u8>, bool)>>>;

/// A running `mcp serve` child process and the client side of its pipes.
struct Mcp {
    child: Child,
    stdin: Option<ChildStdin>,
    /// Lines from stdout, parsed, in order; closed at stdout EOF.
    lines: mpsc::UnboundedReceiver<Line>,
    /// Messages read but not yet consumed, in arrival order.
    backlog: VecDeque<Value>,
    /// Every message read, in arrival order.
    seen: Vec<Value>,
    /// Every raw stdout line (bytes, without the newline) and whether it ended in a newline.
    raw_stdout: RawLines,
    /// Everything written to stderr.
    stderr: Arc<Mutex<Vec<u8>>>,
    next_id: i64,
}

impl Mcp {
    async fn spawn() -> Self {
        Self::spawn_with_log(None).await
    }

    /// Spawns `mcp serve`; `log` is the `MCP_LOG` filter (unset when `None`).
    async fn spawn_with_log(log: Option<&str>) -> Self {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_mcp"));
        cmd.arg("serve")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .env_remove("MCP_LOG");
        if let Some(log) = log {
            cmd.env("MCP_LOG", log);
        }
        let mut child = cmd.spawn().expect("spawn `mcp serve`");
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = child.stdout.take().expect("piped stdout");
        let mut stderr_pipe = child.stderr.take().expect("piped stderr");

        let raw_stdout: RawLines = Arc::default();
        let (tx, lines) = mpsc::unbounded_channel();
        let raw = raw_stdout.clone();
        tokio::spawn(async move {
            let mut reader = BufReader::with_capacity(1 << 16, stdout);
            loop {
                let mut buf = Vec::new();
                match reader.read_until(b'\n', &mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {}
                }
                let complete = buf.last() == Some(&b'\n');
                if complete {
                    buf.pop();
                }
                let parsed = serde_json::from_slice::<Value>(&buf).map_err(|e| {
                    format!("unparsable stdout line ({e}): {:?}", String::from_utf8_lossy(&buf[..buf.len().min(300)]))
                });
                raw.lock().unwrap().push((buf, complete));
                if tx.send(parsed).is_err() {
                    break;
                }
            }
        });

        let stderr: Arc<Mutex<Vec<u8>>> = Arc::default();
        let sink = stderr.clone();
        tokio::spawn(async move {
            let mut chunk = [0u8; 8192];
            loop {
                match stderr_pipe.read(&mut chunk).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => sink.lock().unwrap().extend_from_slice(&chunk[..n]),
                }
            }
        });

        Mcp {
            child,
            stdin: Some(stdin),
            lines,
            backlog: VecDeque::new(),
            seen: Vec::new(),
            raw_stdout,
            stderr,
            next_id: 1000,
        }
    }

    fn fresh_id(&mut self) -> i64 {
        self.next_id += 1;
        self.next_id
    }

    /// Writes bytes followed by a newline.
    async fn write_line(&mut self, bytes: &[u8]) {
        let mut frame = Vec::with_capacity(bytes.len() + 1);
        frame.extend_from_slice(bytes);
        frame.push(b'\n');
        self.write_bytes(&frame).await;
    }

    /// Writes raw bytes (bounded in time: a server that stops reading fails the test).
    async fn write_bytes(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin is still open");
        let write = async {
            stdin.write_all(bytes).await?;
            stdin.flush().await
        };
        tokio::time::timeout(WAIT * 3, write)
            .await
            .expect("timed out writing to the server's stdin")
            .expect("writing to the server's stdin failed");
    }

    async fn send(&mut self, message: &Value) {
        let text = serde_json::to_string(message).unwrap();
        self.write_line(text.as_bytes()).await;
    }

    async fn send_request(&mut self, id: Value, method: &str, params: Option<Value>) {
        let mut m = json!({"jsonrpc": "2.0", "id": id, "method": method});
        if let Some(p) = params {
            m["params"] = p;
        }
        self.send(&m).await;
    }

    async fn notify(&mut self, method: &str, params: Option<Value>) {
        let mut m = json!({"jsonrpc": "2.0", "method": method});
        if let Some(p) = params {
            m["params"] = p;
        }
        self.send(&m).await;
    }

    /// Reads one more message from stdout, waiting at most `wait`; `None` on timeout or EOF.
    async fn read_within(&mut self, wait: Duration) -> Option<Value> {
        match tokio::time::timeout(wait, self.lines.recv()).await {
            Err(_) | Ok(None) => None,
            Ok(Some(Err(e))) => panic!("{e}"),
            Ok(Some(Ok(v))) => {
                self.seen.push(v.clone());
                Some(v)
            }
        }
    }

    /// Reads one more message from stdout (bounded wait; panics on timeout or EOF).
    async fn read(&mut self) -> Value {
        match tokio::time::timeout(WAIT, self.lines.recv()).await {
            Err(_) => {
                panic!("timed out after {WAIT:?} waiting for a line from the server; stderr: {}", self.stderr_text())
            }
            Ok(None) => panic!("the server closed stdout; stderr: {}", self.stderr_text()),
            Ok(Some(Err(e))) => panic!("{e}"),
            Ok(Some(Ok(v))) => {
                self.seen.push(v.clone());
                v
            }
        }
    }

    /// The next unconsumed message, in stream order.
    async fn next_line(&mut self) -> Value {
        match self.backlog.pop_front() {
            Some(v) => v,
            None => self.read().await,
        }
    }

    /// The response (result or error) with this id; other messages stay in the backlog.
    async fn response(&mut self, id: &Value) -> Value {
        if let Some(i) = self.backlog.iter().position(|m| is_response_to(m, id)) {
            return self.backlog.remove(i).unwrap();
        }
        loop {
            let m = self.read().await;
            if is_response_to(&m, id) {
                return m;
            }
            self.backlog.push_back(m);
        }
    }

    /// The next batch (JSON array) response; other messages stay in the backlog.
    async fn batch_response(&mut self) -> Vec<Value> {
        if let Some(i) = self.backlog.iter().position(Value::is_array) {
            return as_vec(self.backlog.remove(i).unwrap());
        }
        loop {
            let m = self.read().await;
            if m.is_array() {
                return as_vec(m);
            }
            self.backlog.push_back(m);
        }
    }

    /// Sends a request and waits for its response message.
    async fn call(&mut self, id: Value, method: &str, params: Option<Value>) -> Value {
        self.send_request(id.clone(), method, params).await;
        self.response(&id).await
    }

    /// Sends a request and returns its `result`, failing on an error response.
    async fn result(&mut self, method: &str, params: Option<Value>) -> Value {
        let id = json!(self.fresh_id());
        let response = self.call(id, method, params).await;
        assert_eq!(response["jsonrpc"], "2.0", "{response}");
        assert!(response.get("error").is_none(), "{method} failed: {response}");
        response.get("result").cloned().unwrap_or_else(|| panic!("{method}: no result in {response}"))
    }

    /// `initialize` + `notifications/initialized`; returns the initialize result.
    async fn initialize(&mut self, version: &str) -> Value {
        let params = json!({
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "stdio-process-test", "version": "0.0.1"}
        });
        let result = self.result("initialize", Some(params)).await;
        self.notify("notifications/initialized", None).await;
        result
    }

    /// Drops the notifications already read (they came before anything sent next) and
    /// asserts that no other message was left unconsumed.
    fn settle_backlog(&mut self) {
        self.backlog.retain(|m| !(m.get("method").is_some() && m.get("id").is_none()));
        assert!(self.backlog.is_empty(), "unconsumed messages: {:?}", self.backlog);
    }

    /// Sends a ping and asserts that the very next line on stdout is its answer.
    async fn ping_is_next(&mut self) {
        self.settle_backlog();
        let id = self.fresh_id();
        self.send_request(json!(id), "ping", None).await;
        let next = self.next_line().await;
        assert_eq!(
            next,
            json!({"jsonrpc": "2.0", "id": id, "result": {}}),
            "the line after the ping is not its answer"
        );
    }

    /// Sends a stateless (2026-07-28) tools/list and asserts that the very next line on
    /// stdout is its answer, listing the reference tools.
    async fn stateless_list_is_next(&mut self) {
        self.settle_backlog();
        let id = self.fresh_id();
        self.send_request(json!(id), "tools/list", Some(modern(json!({})))).await;
        let next = self.next_line().await;
        assert_eq!(next["id"], json!(id), "the next line is not the probe's answer: {next}");
        assert!(next.get("error").is_none(), "{next}");
        assert!(tool_names(&next["result"]).contains(&"echo".to_owned()), "{next}");
    }

    /// Reads whatever arrives for `d` into the backlog.
    async fn collect_for(&mut self, d: Duration) {
        let deadline = tokio::time::Instant::now() + d;
        loop {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            if left.is_zero() {
                return;
            }
            match self.read_within(left).await {
                Some(m) => self.backlog.push_back(m),
                None => return,
            }
        }
    }

    /// Reads every remaining stdout line into the backlog, until EOF (bounded).
    async fn drain_to_eof(&mut self) {
        loop {
            match tokio::time::timeout(WAIT, self.lines.recv()).await {
                Err(_) => panic!("stdout did not reach EOF within {WAIT:?}"),
                Ok(None) => return,
                Ok(Some(Err(e))) => panic!("{e}"),
                Ok(Some(Ok(v))) => {
                    self.seen.push(v.clone());
                    self.backlog.push_back(v);
                }
            }
        }
    }

    fn close_stdin(&mut self) {
        drop(self.stdin.take());
    }

    /// Waits for the process to exit, at most `wait`.
    async fn exit_within(&mut self, wait: Duration) -> Option<ExitStatus> {
        match tokio::time::timeout(wait, self.child.wait()).await {
            Ok(status) => Some(status.expect("waiting for the child")),
            Err(_) => None,
        }
    }

    fn stderr_text(&self) -> String {
        String::from_utf8_lossy(&self.stderr.lock().unwrap()).into_owned()
    }

    /// stdout carried only complete lines, each a JSON-RPC 2.0 message (or a batch of
    /// them); stderr carried no JSON-RPC message.
    fn assert_streams_clean(&self) {
        for (i, (line, complete)) in self.raw_stdout.lock().unwrap().iter().enumerate() {
            let show = || String::from_utf8_lossy(&line[..line.len().min(300)]).into_owned();
            assert!(complete, "stdout line {i} is not newline-terminated: {}", show());
            let v: Value = serde_json::from_slice(line)
                .unwrap_or_else(|e| panic!("stdout line {i} is not JSON ({e}): {}", show()));
            let items = match &v {
                Value::Array(items) => {
                    assert!(!items.is_empty(), "stdout line {i} is an empty array");
                    items.clone()
                }
                _ => vec![v.clone()],
            };
            for item in items {
                assert!(item.is_object(), "stdout line {i} is not a JSON object: {}", show());
                assert_eq!(item["jsonrpc"], "2.0", "stdout line {i}: {}", show());
            }
        }
        let stderr = self.stderr_text();
        for line in stderr.lines() {
            let is_message = serde_json::from_str::<Value>(line.trim())
                .map(|v| v.get("jsonrpc").is_some() || v.is_array())
                .unwrap_or(false);
            assert!(!is_message, "a protocol message went to stderr: {line}");
        }
    }

    /// Every message read so far that is a response with this id.
    fn responses_seen(&self, id: &Value) -> Vec<&Value> {
        self.seen.iter().filter(|m| is_response_to(m, id)).collect()
    }
}

fn is_response_to(m: &Value, id: &Value) -> bool {
    m.is_object()
        && m.get("method").is_none()
        && m.get("id") == Some(id)
        && (m.get("result").is_some() || m.get("error").is_some())
}

fn as_vec(v: Value) -> Vec<Value> {
    match v {
        Value::Array(items) => items,
        other => vec![other],
    }
}

/// Adds the 2026-07-28 per-request `_meta` to `params`.
fn modern(mut params: Value) -> Value {
    let meta = params.as_object_mut().expect("params object").entry("_meta").or_insert_with(|| json!({}));
    meta["io.modelcontextprotocol/protocolVersion"] = json!(MODERN);
    meta["io.modelcontextprotocol/clientCapabilities"] = json!({});
    params
}

fn tool_names(result: &Value) -> Vec<String> {
    result["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("no tools array in {result}"))
        .iter()
        .map(|t| t["name"].as_str().expect("tool name").to_owned())
        .collect()
}

/// Asserts that `response` is an error with `code` for `id`; returns its message.
fn assert_error(response: &Value, id: &Value, code: i64) -> String {
    assert_eq!(response["jsonrpc"], "2.0", "{response}");
    assert_eq!(response.get("id"), Some(id), "wrong id in {response}");
    assert!(response.get("result").is_none(), "{response}");
    assert_eq!(response["error"]["code"], json!(code), "wrong code in {response}");
    response["error"]["message"].as_str().unwrap_or_else(|| panic!("no error message in {response}")).to_owned()
}

/// The tool/resource/prompt calls every revision must answer identically.
async fn exercise_features(mcp: &mut Mcp, wrap: fn(Value) -> Value, modern_era: bool) {
    let check_shape = |method: &str, result: &Value| {
        if modern_era {
            assert_eq!(result["resultType"], "complete", "{method}: {result}");
            assert_eq!(result["_meta"][SERVER_INFO]["name"], "mcp-reference-server", "{method}: {result}");
        } else {
            assert!(result.get("resultType").is_none(), "{method}: legacy result with resultType: {result}");
        }
    };

    let tools = mcp.result("tools/list", Some(wrap(json!({})))).await;
    let names = tool_names(&tools);
    for expected in ["test_simple_text", "echo", "test_tool_with_progress"] {
        assert!(names.contains(&expected.to_owned()), "{expected} missing from {names:?}");
    }
    check_shape("tools/list", &tools);

    let text = "héllo over a real pipe \u{1F680} \"quoted\" \\ back";
    let echo = mcp.result("tools/call", Some(wrap(json!({"name": "echo", "arguments": {"text": text}})))).await;
    assert_eq!(echo["content"], json!([{"type": "text", "text": text}]), "{echo}");
    assert_ne!(echo.get("isError"), Some(&json!(true)), "{echo}");
    check_shape("tools/call", &echo);

    let simple = mcp.result("tools/call", Some(wrap(json!({"name": "test_simple_text"})))).await;
    assert_eq!(simple["content"], json!([{"type": "text", "text": "This is a simple text response for testing."}]));

    let read = mcp.result("resources/read", Some(wrap(json!({"uri": "test://static-text"})))).await;
    let contents = read["contents"].as_array().expect("contents");
    assert_eq!(contents.len(), 1, "{read}");
    assert_eq!(contents[0]["uri"], "test://static-text");
    assert_eq!(contents[0]["mimeType"], "text/plain");
    assert_eq!(contents[0]["text"], STATIC_TEXT);
    check_shape("resources/read", &read);

    let prompt = mcp
        .result(
            "prompts/get",
            Some(wrap(json!({
                "name": "test_prompt_with_arguments",
                "arguments": {"arg1": "first-value", "arg2": "second-value"}
            }))),
        )
        .await;
    let messages = prompt["messages"].as_array().expect("messages");
    assert_eq!(messages.len(), 1, "{prompt}");
    assert_eq!(messages[0]["role"], "user");
    let text = messages[0]["content"]["text"].as_str().expect("prompt text");
    assert!(text.contains("first-value") && text.contains("second-value"), "{text}");
    assert_eq!(text, "Prompt with arguments: arg1='first-value', arg2='second-value'");
    check_shape("prompts/get", &prompt);
}

fn no_wrap(v: Value) -> Value {
    v
}

// ---------------------------------------------------------------------------------------
// 1. Every revision over a real pipe
// ---------------------------------------------------------------------------------------

#[tokio::test]
async fn every_legacy_revision_over_a_real_pipe() {
    for version in LEGACY {
        let mut mcp = Mcp::spawn().await;
        let init = mcp.initialize(version).await;
        assert_eq!(init["protocolVersion"], version, "{init}");
        assert_eq!(init["serverInfo"]["name"], "mcp-reference-server", "{init}");
        assert!(init["capabilities"]["tools"].is_object(), "{init}");
        assert!(init.get("resultType").is_none(), "{init}");
        mcp.ping_is_next().await;
        exercise_features(&mut mcp, no_wrap, false).await;
        mcp.assert_streams_clean();
    }
}

#[tokio::test]
async fn unknown_requested_version_is_answered_with_the_latest_legacy_revision() {
    // Neither is a revision the server knows; 2026-07-28 has no `initialize`, so an
    // `initialize` asking for it also gets the newest legacy revision.
    for requested in ["2024-10-07", "1999-01-01", MODERN] {
        let mut mcp = Mcp::spawn().await;
        let init = mcp.initialize(requested).await;
        assert_eq!(init["protocolVersion"], LATEST_LEGACY, "initialize asking for {requested}: {init}");
        // The session then works in the offered revision.
        mcp.ping_is_next().await;
        exercise_features(&mut mcp, no_wrap, false).await;
        mcp.assert_streams_clean();
    }
}

#[tokio::test]
async fn modern_revision_statelessly_over_a_real_pipe() {
    let mut mcp = Mcp::spawn().await;
    // No initialize at all.
    let discover = mcp.result("server/discover", Some(modern(json!({})))).await;
    let supported: Vec<&str> = discover["supportedVersions"]
        .as_array()
        .expect("supportedVersions")
        .iter()
        .map(|v| v.as_str().expect("version string"))
        .collect();
    assert!(supported.contains(&MODERN), "{discover}");
    for legacy in LEGACY {
        assert!(supported.contains(&legacy), "{legacy} not in {supported:?}");
    }
    assert_eq!(discover["resultType"], "complete", "{discover}");
    assert_eq!(discover["_meta"][SERVER_INFO]["name"], "mcp-reference-server", "{discover}");
    assert!(discover["capabilities"]["tools"].is_object(), "{discover}");

    exercise_features(&mut mcp, modern, true).await;

    // Cacheable results carry their caching hints.
    for (method, params) in [("tools/list", json!({})), ("resources/read", json!({"uri": "test://static-text"}))] {
        let r = mcp.result(method, Some(modern(params))).await;
        assert!(r["ttlMs"].as_u64().is_some(), "{method}: {r}");
        let scope = r["cacheScope"].as_str().unwrap_or_default();
        assert!(scope == "public" || scope == "private", "{method}: {r}");
    }

    // An unsupported modern version is refused with -32022 naming what is supported.
    let id = json!("bad-version");
    let mut params = modern(json!({}));
    params["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("2099-01-01");
    let r = mcp.call(id.clone(), "tools/list", Some(params)).await;
    assert_error(&r, &id, UNSUPPORTED_PROTOCOL_VERSION);
    assert!(r["error"]["data"]["supported"].as_array().is_some_and(|s| s.contains(&json!(MODERN))), "{r}");

    // Still stateless: nothing above made the connection legacy.
    mcp.stateless_list_is_next().await;
    mcp.assert_streams_clean();
}

// ---------------------------------------------------------------------------------------
// 2. Bad input never hurts the server
// ---------------------------------------------------------------------------------------

/// Lines the read loop itself rejects (inline): the error is the very next line.
fn inline_rejections() -> Vec<(&'static str, Vec<u8>, Value, i64)> {
    vec![
        ("invalid JSON", b"{\"jsonrpc\":\"2.0\",\"id\":1,".to_vec(), Value::Null, PARSE_ERROR),
        ("not JSON at all", b"hello there".to_vec(), Value::Null, PARSE_ERROR),
        (
            "invalid UTF-8",
            b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\xff\xfe\"}".to_vec(),
            Value::Null,
            PARSE_ERROR,
        ),
        ("raw invalid UTF-8", vec![0xff, 0xfe, 0xfd, 0x80], Value::Null, PARSE_ERROR),
        ("a number", b"42".to_vec(), Value::Null, INVALID_REQUEST),
        ("a string", b"\"x\"".to_vec(), Value::Null, INVALID_REQUEST),
        ("null", b"null".to_vec(), Value::Null, INVALID_REQUEST),
        ("an empty array", b"[]".to_vec(), Value::Null, INVALID_REQUEST),
        ("a null request id", br#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#.to_vec(), Value::Null, INVALID_REQUEST),
        ("no method, result or error", br#"{"jsonrpc":"2.0","id":9}"#.to_vec(), json!(9), INVALID_REQUEST),
        ("jsonrpc 1.0", br#"{"jsonrpc":"1.0","id":10,"method":"ping"}"#.to_vec(), json!(10), INVALID_REQUEST),
        ("jsonrpc missing", br#"{"id":11,"method":"ping"}"#.to_vec(), json!(11), INVALID_REQUEST),
        (
            "jsonrpc as a number",
            br#"{"jsonrpc":2.0,"id":"s12","method":"ping"}"#.to_vec(),
            json!("s12"),
            INVALID_REQUEST,
        ),
        (
            "params a number",
            br#"{"jsonrpc":"2.0","id":13,"method":"tools/call","params":3}"#.to_vec(),
            json!(13),
            INVALID_REQUEST,
        ),
        ("method a number", br#"{"jsonrpc":"2.0","id":14,"method":5}"#.to_vec(), json!(14), INVALID_REQUEST),
    ]
}

#[tokio::test]
async fn bad_input_on_a_legacy_session_never_hurts_the_server() {
    let mut mcp = Mcp::spawn().await;
    let init = mcp.initialize("2025-11-25").await;
    assert_eq!(init["protocolVersion"], "2025-11-25");
    mcp.ping_is_next().await;

    for (what, line, id, code) in inline_rejections() {
        mcp.write_line(&line).await;
        let answer = mcp.next_line().await;
        assert!(answer.get("error").is_some(), "{what}: expected an error, got {answer}");
        assert_error(&answer, &id, code);
        mcp.ping_is_next().await;
    }

    // A line of only whitespace is ignored: the ping's answer is the next line.
    mcp.write_line(b"   \t  \r").await;
    mcp.write_line(b"").await;
    mcp.ping_is_next().await;

    // An unknown method: -32601 with its id.
    let id = json!("unknown-method");
    let r = mcp.call(id.clone(), "no/such/method", Some(json!({}))).await;
    assert_error(&r, &id, METHOD_NOT_FOUND);
    mcp.ping_is_next().await;

    // A method of another era (2026-07-28 only) is unknown to a legacy session.
    let id = json!(21);
    let r = mcp.call(id.clone(), "server/discover", None).await;
    assert_error(&r, &id, METHOD_NOT_FOUND);
    mcp.ping_is_next().await;

    // Params of the wrong type inside the object: -32602 with the id.
    let id = json!(22);
    let r = mcp.call(id.clone(), "tools/call", Some(json!({"name": 5}))).await;
    assert_error(&r, &id, INVALID_PARAMS);
    mcp.ping_is_next().await;

    // Missing required params: -32602.
    let id = json!(23);
    let r = mcp.call(id.clone(), "resources/read", Some(json!({}))).await;
    assert_error(&r, &id, INVALID_PARAMS);
    mcp.ping_is_next().await;

    // Unknown tool: -32602 (a protocol error, not a tool error).
    let id = json!(24);
    let r = mcp.call(id.clone(), "tools/call", Some(json!({"name": "no_such_tool"}))).await;
    assert_error(&r, &id, INVALID_PARAMS);
    mcp.ping_is_next().await;

    // A response to an id the server never used: no output at all.
    mcp.write_line(br#"{"jsonrpc":"2.0","id":12345,"result":{}}"#).await;
    mcp.ping_is_next().await;
    mcp.write_line(br#"{"jsonrpc":"2.0","id":"nobody","error":{"code":-1,"message":"x"}}"#).await;
    mcp.ping_is_next().await;

    // Notifications never get answers, known or not.
    mcp.write_line(br#"{"jsonrpc":"2.0","method":"notifications/whatever","params":{}}"#).await;
    mcp.write_line(br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":999999}}"#).await;
    mcp.ping_is_next().await;

    // The session is intact: full feature calls still work.
    exercise_features(&mut mcp, no_wrap, false).await;
    mcp.assert_streams_clean();
}

#[tokio::test]
async fn bad_input_before_any_handshake_never_hurts_the_server() {
    let mut mcp = Mcp::spawn().await;

    // A request without `_meta` before initialize: -32602 that says to initialize.
    let id = json!(1);
    let r = mcp.call(id.clone(), "tools/list", None).await;
    let message = assert_error(&r, &id, INVALID_PARAMS);
    assert!(message.contains("initialize"), "{message}");
    mcp.stateless_list_is_next().await;

    let id = json!("call-before-init");
    let r = mcp.call(id.clone(), "tools/call", Some(json!({"name": "echo", "arguments": {"text": "x"}}))).await;
    let message = assert_error(&r, &id, INVALID_PARAMS);
    assert!(message.contains("initialize"), "{message}");
    mcp.stateless_list_is_next().await;

    for (what, line, id, code) in inline_rejections() {
        mcp.write_line(&line).await;
        let answer = mcp.next_line().await;
        assert!(answer.get("error").is_some(), "{what}: expected an error, got {answer}");
        assert_error(&answer, &id, code);
        mcp.stateless_list_is_next().await;
    }

    // A batch before any initialize: one -32600.
    mcp.write_line(br#"[{"jsonrpc":"2.0","id":31,"method":"ping"}]"#).await;
    let answer = mcp.next_line().await;
    assert_error(&answer, &Value::Null, INVALID_REQUEST);
    mcp.stateless_list_is_next().await;

    mcp.write_line(b"  \t ").await;
    mcp.stateless_list_is_next().await;

    // Unknown method, stateless: -32601.
    let id = json!(32);
    let r = mcp.call(id.clone(), "no/such/method", Some(modern(json!({})))).await;
    assert_error(&r, &id, METHOD_NOT_FOUND);
    mcp.stateless_list_is_next().await;

    // `ping` is not part of 2026-07-28.
    let id = json!(33);
    let r = mcp.call(id.clone(), "ping", Some(modern(json!({})))).await;
    assert_error(&r, &id, METHOD_NOT_FOUND);
    mcp.stateless_list_is_next().await;

    // Wrong param type, stateless: -32602.
    let id = json!(34);
    let r = mcp.call(id.clone(), "tools/call", Some(modern(json!({"name": 5})))).await;
    assert_error(&r, &id, INVALID_PARAMS);
    mcp.stateless_list_is_next().await;

    // Response to an unknown id: silence.
    mcp.write_line(br#"{"jsonrpc":"2.0","id":12345,"result":{}}"#).await;
    mcp.stateless_list_is_next().await;

    // Still no legacy session was created by any of that: a later initialize works.
    let init = mcp.initialize("2025-06-18").await;
    assert_eq!(init["protocolVersion"], "2025-06-18");
    mcp.ping_is_next().await;
    mcp.assert_streams_clean();
}

#[tokio::test]
async fn batch_is_a_single_invalid_request_after_initialize_without_batches() {
    for version in ["2025-06-18", "2025-11-25"] {
        let mut mcp = Mcp::spawn().await;
        mcp.initialize(version).await;
        mcp.ping_is_next().await;
        mcp.write_line(br#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"tools/list"}]"#)
            .await;
        let answer = mcp.next_line().await;
        assert!(answer.is_object(), "{version}: expected one error object, got {answer}");
        assert_error(&answer, &Value::Null, INVALID_REQUEST);
        // Nothing of the batch was served: the next line is the ping's answer, and
        // nothing answers ids 1 or 2 afterwards.
        mcp.ping_is_next().await;
        mcp.collect_for(Duration::from_millis(200)).await;
        assert!(mcp.responses_seen(&json!(1)).is_empty());
        assert!(mcp.responses_seen(&json!(2)).is_empty());
        assert!(mcp.backlog.is_empty(), "{:?}", mcp.backlog);
        mcp.assert_streams_clean();
    }
}

#[tokio::test]
async fn batch_is_answered_with_an_array_under_2025_03_26() {
    let mut mcp = Mcp::spawn().await;
    let init = mcp.initialize("2025-03-26").await;
    assert_eq!(init["protocolVersion"], "2025-03-26");
    mcp.ping_is_next().await;

    let batch = json!([
        {"jsonrpc": "2.0", "id": 1, "method": "ping"},
        {"jsonrpc": "2.0", "id": "two", "method": "tools/list"},
        {"jsonrpc": "2.0", "method": "notifications/whatever"},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
         "params": {"name": "echo", "arguments": {"text": "batched"}}},
        {"jsonrpc": "2.0", "id": 4, "method": "no/such/method"}
    ]);
    mcp.send(&batch).await;
    let answers = mcp.batch_response().await;
    assert_eq!(answers.len(), 4, "one response per request: {answers:?}");
    let by_id = |id: Value| {
        answers.iter().find(|a| a["id"] == id).unwrap_or_else(|| panic!("no answer for {id} in {answers:?}")).clone()
    };
    assert_eq!(by_id(json!(1)), json!({"jsonrpc": "2.0", "id": 1, "result": {}}));
    assert!(tool_names(&by_id(json!("two"))["result"]).contains(&"echo".to_owned()));
    assert_eq!(by_id(json!(3))["result"]["content"], json!([{"type": "text", "text": "batched"}]));
    assert_error(&by_id(json!(4)), &json!(4), METHOD_NOT_FOUND);
    // Nothing of the batch was also answered outside of it.
    mcp.collect_for(Duration::from_millis(200)).await;
    assert!(mcp.backlog.is_empty(), "stray output: {:?}", mcp.backlog);

    // An invalid element gets its own error inside the array.
    mcp.write_line(br#"[{"jsonrpc":"2.0","id":5,"method":"ping"},42]"#).await;
    let answers = mcp.batch_response().await;
    assert_eq!(answers.len(), 2, "{answers:?}");
    assert!(answers.contains(&json!({"jsonrpc": "2.0", "id": 5, "result": {}})), "{answers:?}");
    let invalid =
        answers.iter().find(|a| a.get("error").is_some()).unwrap_or_else(|| panic!("no error in {answers:?}"));
    assert_error(invalid, &Value::Null, INVALID_REQUEST);

    // initialize must not be batched.
    mcp.write_line(
        br#"[{"jsonrpc":"2.0","id":6,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}]"#,
    )
    .await;
    let answers = mcp.batch_response().await;
    assert_eq!(answers.len(), 1, "{answers:?}");
    assert_error(&answers[0], &json!(6), INVALID_REQUEST);

    mcp.ping_is_next().await;
    mcp.assert_streams_clean();
}

#[tokio::test]
async fn oversized_line_is_rejected_and_the_next_line_served() {
    let mut mcp = Mcp::spawn().await;
    mcp.initialize("2025-11-25").await;
    mcp.ping_is_next().await;

    // 10 MB in one line, no newline inside: a valid request except for its size.
    let pad = "x".repeat(10 * 1000 * 1000);
    let big = format!(r#"{{"jsonrpc":"2.0","id":77,"method":"ping","params":{{"pad":"{pad}"}}}}"#);
    drop(pad);
    mcp.write_line(big.as_bytes()).await;
    drop(big);
    let answer = mcp.next_line().await;
    assert_error(&answer, &Value::Null, INVALID_REQUEST);
    mcp.ping_is_next().await;

    // A garbage line of 10 MB (not even JSON) is rejected the same way, as a size error.
    let garbage = vec![b'{'; 10 * 1000 * 1000];
    mcp.write_line(&garbage).await;
    drop(garbage);
    let answer = mcp.next_line().await;
    assert_error(&answer, &Value::Null, INVALID_REQUEST);
    mcp.ping_is_next().await;

    // Just under the 4 MiB limit is still served, byte for byte.
    let text = "y".repeat(3 * 1024 * 1024);
    let r = mcp.result("tools/call", Some(json!({"name": "echo", "arguments": {"text": text}}))).await;
    assert_eq!(r["content"][0]["text"].as_str().map(str::len), Some(text.len()));
    assert_eq!(r["content"][0]["text"], json!(text));
    mcp.ping_is_next().await;
    mcp.assert_streams_clean();
}

// ---------------------------------------------------------------------------------------
// 3. Lifecycle
// ---------------------------------------------------------------------------------------

#[tokio::test]
async fn second_initialize_is_an_invalid_request() {
    let mut mcp = Mcp::spawn().await;
    let init = mcp.initialize("2025-03-26").await;
    assert_eq!(init["protocolVersion"], "2025-03-26");

    let id = json!("again");
    let params = json!({
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "again", "version": "1"}
    });
    let r = mcp.call(id.clone(), "initialize", Some(params)).await;
    assert_error(&r, &id, INVALID_REQUEST);
    mcp.ping_is_next().await;

    // The first negotiation still holds: 2025-03-26 still takes batches.
    mcp.write_line(br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#).await;
    let answers = mcp.batch_response().await;
    assert_eq!(answers, vec![json!({"jsonrpc": "2.0", "id": 1, "result": {}})]);
    mcp.assert_streams_clean();
}

#[tokio::test]
async fn eof_exits_zero_after_answering_the_request_in_flight() {
    let mut mcp = Mcp::spawn().await;
    mcp.initialize("2025-11-25").await;
    mcp.ping_is_next().await;

    // The tool takes ~100 ms; stdin closes right behind the request.
    let id = json!("last-words");
    mcp.send_request(
        id.clone(),
        "tools/call",
        Some(json!({"name": "test_tool_with_progress", "_meta": {"progressToken": "eof"}})),
    )
    .await;
    mcp.close_stdin();

    let status = mcp
        .exit_within(EXIT_WAIT)
        .await
        .unwrap_or_else(|| panic!("the server did not exit within {EXIT_WAIT:?} of stdin EOF"));
    assert!(status.success(), "exit status after EOF: {status:?}");

    mcp.drain_to_eof().await;
    let responses = mcp.responses_seen(&id);
    assert_eq!(responses.len(), 1, "the in-flight call was not answered: {:?}", mcp.seen);
    assert_eq!(responses[0]["result"]["content"], json!([{"type": "text", "text": "Progress test completed"}]));
    let progress = mcp.seen.iter().filter(|m| m["method"] == "notifications/progress").count();
    assert_eq!(progress, 3, "{:?}", mcp.seen);
    mcp.assert_streams_clean();
}

#[tokio::test]
async fn eof_with_nothing_in_flight_exits_zero_promptly() {
    for legacy in [true, false] {
        let mut mcp = Mcp::spawn().await;
        if legacy {
            mcp.initialize("2024-11-05").await;
            mcp.ping_is_next().await;
        } else {
            mcp.stateless_list_is_next().await;
        }
        mcp.close_stdin();
        let status = mcp
            .exit_within(EXIT_WAIT)
            .await
            .unwrap_or_else(|| panic!("the server did not exit within {EXIT_WAIT:?} of stdin EOF"));
        assert!(status.success(), "{status:?}");
        mcp.drain_to_eof().await;
        assert!(mcp.backlog.is_empty(), "output after EOF: {:?}", mcp.backlog);
        mcp.assert_streams_clean();
    }
}

#[tokio::test]
async fn sigterm_makes_the_server_exit_promptly() {
    let mut mcp = Mcp::spawn().await;
    mcp.initialize("2025-06-18").await;
    mcp.ping_is_next().await;

    // stdin stays open: only the signal may end the process.
    let pid = mcp.child.id().expect("child pid");
    let kill = std::process::Command::new("kill").args(["-TERM", &pid.to_string()]).status().expect("run kill");
    assert!(kill.success(), "kill -TERM {pid} failed");

    let status = mcp.exit_within(EXIT_WAIT).await;
    let status = status.unwrap_or_else(|| {
        panic!(
            "the server did not exit within {EXIT_WAIT:?} of SIGTERM (stdin still open); stderr: {}",
            mcp.stderr_text()
        )
    });
    assert!(status.success(), "SIGTERM should end the server with status 0 (it handles the signal), got {status:?}");
    mcp.drain_to_eof().await;
    mcp.assert_streams_clean();
}

#[tokio::test]
async fn stdout_carries_only_json_rpc_and_stderr_no_protocol_messages() {
    // With the most verbose logging, diagnostics must still go to stderr only.
    let mut mcp = Mcp::spawn_with_log(Some("trace")).await;
    mcp.initialize("2025-11-25").await;
    mcp.ping_is_next().await;
    exercise_features(&mut mcp, no_wrap, false).await;
    mcp.write_line(b"not json").await;
    assert_error(&mcp.next_line().await, &Value::Null, PARSE_ERROR);
    mcp.write_line(br#"{"jsonrpc":"2.0","id":12345,"result":{}}"#).await;
    mcp.write_line(br#"{"jsonrpc":"2.0","method":"notifications/unknown"}"#).await;
    let r =
        mcp.result("tools/call", Some(json!({"name": "test_tool_with_logging", "_meta": {"progressToken": 1}}))).await;
    assert_eq!(r["content"], json!([{"type": "text", "text": "Tool with logging executed successfully"}]));
    let logs: Vec<&Value> = mcp.seen.iter().filter(|m| m["method"] == "notifications/message").collect();
    assert_eq!(logs.len(), 3, "{logs:?}");
    mcp.ping_is_next().await;
    mcp.close_stdin();
    let status = mcp.exit_within(EXIT_WAIT).await.expect("exit after EOF");
    assert!(status.success(), "{status:?}");
    mcp.drain_to_eof().await;
    mcp.assert_streams_clean();
}

// ---------------------------------------------------------------------------------------
// 4. Cancellation over the pipe
// ---------------------------------------------------------------------------------------

async fn assert_cancelled(mcp: &mut Mcp, id: Value, method: &str, params: Value) {
    mcp.send_request(id.clone(), "tools/call", Some(json!({"name": "test_tool_with_logging"}))).await;
    mcp.notify(method, Some(params)).await;
    // The tool would answer after ~100 ms; wait well past that.
    mcp.collect_for(Duration::from_millis(500)).await;
    mcp.backlog.clear();
    mcp.ping_is_next().await;
    let answered = mcp.responses_seen(&id);
    assert!(answered.is_empty(), "request {id} was cancelled with {method} but answered: {answered:?}");
}

#[tokio::test]
async fn cancellation_with_notifications_cancelled() {
    let mut mcp = Mcp::spawn().await;
    mcp.initialize("2025-11-25").await;
    mcp.ping_is_next().await;
    assert_cancelled(
        &mut mcp,
        json!(77),
        "notifications/cancelled",
        json!({"requestId": 77, "reason": "changed my mind"}),
    )
    .await;
    // An uncancelled call of the same tool is answered (so silence above meant something).
    let r = mcp.result("tools/call", Some(json!({"name": "test_tool_with_logging"}))).await;
    assert_eq!(r["content"][0]["text"], "Tool with logging executed successfully");
    mcp.assert_streams_clean();
}

#[tokio::test]
async fn cancellation_with_the_cancel_request_alias() {
    let mut mcp = Mcp::spawn().await;
    mcp.initialize("2025-06-18").await;
    mcp.ping_is_next().await;
    assert_cancelled(&mut mcp, json!(78), "$/cancelRequest", json!({"id": 78})).await;
    assert_cancelled(&mut mcp, json!("str-79"), "$/cancelRequest", json!({"id": "str-79"})).await;
    let r = mcp.result("tools/call", Some(json!({"name": "test_tool_with_logging"}))).await;
    assert_eq!(r["content"][0]["text"], "Tool with logging executed successfully");
    mcp.assert_streams_clean();
}

#[tokio::test]
async fn cancellation_arriving_in_the_same_write_as_the_request_is_honoured() {
    // The request and its cancellation reach the server in one write, so the server reads
    // them back to back: the cancellation must not be lost even if the request has not
    // started running yet.
    let mut mcp = Mcp::spawn().await;
    mcp.initialize("2025-11-25").await;
    mcp.ping_is_next().await;
    let mut answered = Vec::new();
    for n in 0..20 {
        let id = 500 + n;
        let both = format!(
            "{}\n{}\n",
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                   "params": {"name": "test_tool_with_logging"}}),
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                   "params": {"requestId": id}})
        );
        mcp.write_bytes(both.as_bytes()).await;
    }
    mcp.collect_for(Duration::from_millis(800)).await;
    mcp.backlog.clear();
    mcp.ping_is_next().await;
    for n in 0..20 {
        if !mcp.responses_seen(&json!(500 + n)).is_empty() {
            answered.push(500 + n);
        }
    }
    assert!(answered.is_empty(), "cancelled requests answered anyway: {answered:?} of 20");
    mcp.assert_streams_clean();
}

// ---------------------------------------------------------------------------------------
// 5. Progress
// ---------------------------------------------------------------------------------------

/// Calls test_tool_with_progress with `token` and checks the notifications against it.
async fn assert_progress(mcp: &mut Mcp, wrap: fn(Value) -> Value, token: Value, with_message: bool) {
    let start = mcp.seen.len();
    let id = json!(mcp.fresh_id());
    let params = wrap(json!({
        "name": "test_tool_with_progress",
        "arguments": {},
        "_meta": {"progressToken": token}
    }));
    let response = mcp.call(id.clone(), "tools/call", Some(params)).await;
    assert_eq!(
        response["result"]["content"],
        json!([{"type": "text", "text": "Progress test completed"}]),
        "{response}"
    );
    // Everything up to and including the response, in arrival order.
    let window = &mcp.seen[start..];
    let response_at = window.iter().position(|m| is_response_to(m, &id)).expect("response seen");
    let progress_at: Vec<usize> =
        window.iter().enumerate().filter(|(_, m)| m["method"] == "notifications/progress").map(|(i, _)| i).collect();
    assert_eq!(progress_at.len(), 3, "token {token}: {window:?}");
    assert!(progress_at.iter().all(|&i| i < response_at), "progress after the response for token {token}: {window:?}");
    let mut last = f64::NEG_INFINITY;
    for &i in &progress_at {
        let p = &window[i]["params"];
        // Verbatim: same JSON value, hence same JSON type.
        assert_eq!(p["progressToken"], token, "{p}");
        assert_eq!(p["progressToken"].is_string(), token.is_string(), "token type changed: {p}");
        if token.is_i64() {
            assert!(p["progressToken"].is_i64(), "integer token became {p}");
        }
        let value = p["progress"].as_f64().unwrap_or_else(|| panic!("no progress in {p}"));
        assert!(value > last, "progress not increasing: {last} then {value}");
        last = value;
        assert_eq!(p["total"].as_f64(), Some(100.0), "{p}");
        assert_eq!(p.get("message").is_some(), with_message, "{p}");
    }
    assert_eq!(last, 100.0);
    // The progress notifications are not left behind in the backlog by later reads.
    mcp.backlog.retain(|m| m["method"] != "notifications/progress");
}

#[tokio::test]
async fn progress_tokens_are_echoed_verbatim_before_the_response() {
    for version in LEGACY {
        let mut mcp = Mcp::spawn().await;
        mcp.initialize(version).await;
        // `message` on progress appeared in 2025-03-26.
        let with_message = version != "2024-11-05";
        assert_progress(&mut mcp, no_wrap, json!("tok-abc"), with_message).await;
        assert_progress(&mut mcp, no_wrap, json!(4242), with_message).await;
        // Tokens that look alike but differ in type stay distinct.
        assert_progress(&mut mcp, no_wrap, json!("4242"), with_message).await;
        assert_progress(&mut mcp, no_wrap, json!(0), with_message).await;
        mcp.ping_is_next().await;
        mcp.assert_streams_clean();
    }
    let mut mcp = Mcp::spawn().await;
    assert_progress(&mut mcp, modern, json!("tok-modern"), true).await;
    assert_progress(&mut mcp, modern, json!(-7), true).await;
    mcp.stateless_list_is_next().await;
    mcp.assert_streams_clean();
}

#[tokio::test]
async fn no_progress_without_a_token() {
    let mut mcp = Mcp::spawn().await;
    mcp.initialize("2025-11-25").await;
    let r = mcp.result("tools/call", Some(json!({"name": "test_tool_with_progress"}))).await;
    assert_eq!(r["content"][0]["text"], "Progress test completed");
    mcp.ping_is_next().await;
    assert!(!mcp.seen.iter().any(|m| m["method"] == "notifications/progress"), "{:?}", mcp.seen);
    mcp.assert_streams_clean();
}
