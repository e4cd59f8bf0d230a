//! The mixed load of a soak, against the reference server's tools (`mcp serve`): each
//! workload is a loop that runs until the deadline, counting what it did and what went
//! wrong. A wrong answer is a failure; a refusal the server is allowed to give under load
//! (a stream let go for the event budget) is counted apart.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use parking_lot::Mutex;
use serde_json::{json, Value};
use tokio::time::Instant;

use bytes::Bytes;
use hyper::header::{HeaderName, HeaderValue};

use super::exchange::{Exchange, McpHeaders};
use crate::http_client::{Connection, Target, METHOD, NAME, PROTOCOL_VERSION, SESSION_ID};
use crate::http_load::handshake;
use crate::mcp::find_result;

/// A legacy revision without resumption.
const LEGACY: &str = "2025-06-18";
/// The legacy revision whose clients resume streams.
const RESUMING: &str = "2025-11-25";
/// The stateless revision.
const MODERN: &str = "2026-07-28";

/// The longest one step (a request, or reading an answer) may take.
const STEP: Duration = Duration::from_secs(30);

/// What the workloads did, by kind.
#[derive(Default)]
pub struct Counters {
    /// Calls answered correctly (sessions and stateless).
    pub calls: AtomicU64,
    /// Sessions opened and left without a word.
    pub abandoned: AtomicU64,
    /// SSE streams dropped and resumed to their answer.
    pub resumed: AtomicU64,
    /// Resumptions answered that the stream was let go (the event budget).
    pub let_go: AtomicU64,
    /// Calls cancelled (stateless: by hanging up; legacy: by `notifications/cancelled`).
    pub cancelled: AtomicU64,
    /// Log notifications received.
    pub notifications: AtomicU64,
    /// Wrong answers and failed requests.
    pub failures: AtomicU64,
    /// The first few failures.
    pub failure_examples: Mutex<Vec<String>>,
}

impl Counters {
    fn fail(&self, what: &str, why: String) {
        self.failures.fetch_add(1, Ordering::Relaxed);
        let mut examples = self.failure_examples.lock();
        if examples.len() < 10 {
            examples.push(format!("{what}: {why}"));
        }
    }

    /// Counts `outcome`: one more of `kind` when it is `Ok`.
    fn count(&self, kind: &AtomicU64, what: &str, outcome: Result<u64, String>) {
        match outcome {
            Ok(n) => {
                kind.fetch_add(n, Ordering::Relaxed);
            }
            Err(why) => self.fail(what, why),
        }
    }
}

async fn step<T>(what: &str, fut: impl std::future::Future<Output = Result<T, String>>) -> Result<T, String> {
    tokio::time::timeout(STEP, fut).await.unwrap_or_else(|_| Err(format!("{what}: no answer within {STEP:?}")))
}

fn request(id: u64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

fn call(id: u64, tool: &str, arguments: Value, progress: bool) -> Value {
    let mut params = json!({"name": tool, "arguments": arguments});
    if progress {
        params["_meta"] = json!({"progressToken": id});
    }
    request(id, "tools/call", params)
}

/// The `_meta` a 2026-07-28 request carries.
fn modern(mut body: Value) -> Value {
    body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!(MODERN);
    body["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = json!({});
    body["params"]["_meta"]["io.modelcontextprotocol/clientInfo"] =
        json!({"name": "mcpwire-bench soak", "version": "0"});
    body
}

/// The text of a tool result, or why there is none.
fn tool_text(answer: &Value) -> Result<&str, String> {
    if let Some(error) = answer.get("error") {
        return Err(format!("error {error}"));
    }
    answer["result"]["content"][0]["text"].as_str().ok_or_else(|| format!("no text in {answer}"))
}

/// Opens a legacy session; its id.
async fn open_session(target: &Target, version: &str) -> Result<String, String> {
    let init = request(
        0,
        "initialize",
        json!({"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "mcpwire-bench soak", "version": "0"}}),
    );
    let mut x = step("initialize", Exchange::send(target, &McpHeaders::default(), Some(&init))).await?;
    let session = x.session.clone().ok_or_else(|| format!("initialize: HTTP {} without a session", x.status))?;
    step("initialize", x.answer_to(0)).await?;
    let headers = McpHeaders { version: Some(version), session: Some(&session), ..McpHeaders::default() };
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let x = step("initialized", Exchange::send(target, &headers, Some(&note))).await?;
    if x.status != 202 {
        return Err(format!("notifications/initialized: HTTP {}", x.status));
    }
    Ok(session)
}

/// The session kept in `slot`, opened if there is none; `None` (counted as a failure,
/// after a pause of `every`) if it cannot be opened.
async fn kept_session<'a>(
    slot: &'a mut Option<String>,
    target: &Target,
    version: &str,
    every: Duration,
    counters: &Counters,
) -> Option<&'a String> {
    if slot.is_none() {
        match open_session(target, version).await {
            Ok(s) => *slot = Some(s),
            Err(why) => {
                counters.fail(&format!("open a {version} session"), why);
                tokio::time::sleep(every).await;
                return None;
            }
        }
    }
    slot.as_ref()
}

/// Calls on one legacy session, then stateless calls, in turn, each kind on a keep-alive
/// connection of its own, pausing `every` after each pair.
pub async fn calls(target: Target, until: Instant, every: Duration, counters: &Counters) {
    let mut session: Option<(Connection, Vec<(HeaderName, HeaderValue)>)> = None;
    let mut stateless: Option<Connection> = None;
    let mut id = 0;
    while Instant::now() < until {
        id += 1;
        if session.is_none() {
            session = match open_keep_alive(&target).await {
                Ok(s) => Some(s),
                Err(why) => {
                    counters.fail("open a session", why);
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            };
        }
        if let Some((conn, headers)) = session.as_mut() {
            let body = call(id, "test_simple_text", json!({}), false);
            let outcome = keep_alive_call(conn, headers, &body, id, SIMPLE_TEXT).await;
            if outcome.is_err() {
                session = None;
            }
            counters.count(&counters.calls, "a session call", outcome);
        }
        if stateless.is_none() {
            stateless = match Connection::open(&target).await {
                Ok(c) => Some(c),
                Err(e) => {
                    counters.fail("connect", e.0);
                    continue;
                }
            };
        }
        if let Some(conn) = stateless.as_mut() {
            let body = modern(call(id, "test_simple_text", json!({}), false));
            let headers = [
                (PROTOCOL_VERSION, HeaderValue::from_static(MODERN)),
                (METHOD, HeaderValue::from_static("tools/call")),
                (NAME, HeaderValue::from_static("test_simple_text")),
            ];
            let outcome = keep_alive_call(conn, &headers, &body, id, SIMPLE_TEXT).await;
            if outcome.is_err() {
                stateless = None;
            }
            counters.count(&counters.calls, "a stateless call", outcome);
        }
        if !every.is_zero() {
            tokio::time::sleep(every).await;
        }
    }
}

/// What `test_simple_text` answers.
const SIMPLE_TEXT: &str = "This is a simple text response for testing.";

/// A legacy session on a keep-alive connection: the connection and the headers of its calls.
async fn open_keep_alive(target: &Target) -> Result<(Connection, Vec<(HeaderName, HeaderValue)>), String> {
    let mut conn = Connection::open(target).await.map_err(|e| e.0)?;
    let (session, version, _) = step("a handshake", async { handshake(&mut conn, LEGACY).await }).await?;
    let session = session.ok_or("the server gave no session")?;
    let value = |s: &str| HeaderValue::from_str(s).map_err(|e| e.to_string());
    Ok((conn, vec![(SESSION_ID, value(&session)?), (PROTOCOL_VERSION, value(&version)?)]))
}

/// One call on a keep-alive connection, its text checked.
async fn keep_alive_call(
    conn: &mut Connection,
    headers: &[(HeaderName, HeaderValue)],
    body: &Value,
    id: u64,
    expect: &str,
) -> Result<u64, String> {
    let body = Bytes::from(body.to_string());
    let answer = step("a call", async {
        conn.post(headers, body, true, |m| find_result(m, id).transpose()).await.map_err(|e| e.0)
    })
    .await?;
    let result = answer.outcome?.ok_or("no answer")?;
    match result["content"][0]["text"].as_str() {
        Some(text) if text == expect => Ok(1),
        _ => Err(format!("the call answered {result}")),
    }
}

/// Opens sessions and leaves them (idle expiry ends them), one every `every`.
pub async fn abandon(target: Target, until: Instant, every: Duration, counters: &Counters) {
    while Instant::now() < until {
        let outcome = open_session(&target, LEGACY).await.map(|_| 1);
        counters.count(&counters.abandoned, "abandon a session", outcome);
        tokio::time::sleep(every).await;
    }
}

/// Calls a counting tool with progress, hangs up after two events, and resumes the stream
/// with `Last-Event-ID` to its answer, one every `every`.
pub async fn drop_and_resume(target: Target, until: Instant, every: Duration, counters: &Counters) {
    let mut session = None;
    let mut id = 0;
    while Instant::now() < until {
        id += 1;
        let Some(s) = kept_session(&mut session, &target, RESUMING, every, counters).await else { continue };
        match resume_once(&target, s, id).await {
            Ok(true) => {
                counters.resumed.fetch_add(1, Ordering::Relaxed);
            }
            Ok(false) => {
                counters.let_go.fetch_add(1, Ordering::Relaxed);
            }
            Err(why) => {
                counters.fail("drop and resume", why);
                session = None;
            }
        }
        tokio::time::sleep(every).await;
    }
}

/// One drop and resumption: true if resumed to the answer, false if the stream was let go.
async fn resume_once(target: &Target, session: &str, id: u64) -> Result<bool, String> {
    let headers = McpHeaders { version: Some(RESUMING), session: Some(session), ..McpHeaders::default() };
    let body = call(id, "test_long_running_task", json!({"steps": 10, "delayMs": 10}), true);
    let mut x = step("a counting call", Exchange::send(target, &headers, Some(&body))).await?;
    for _ in 0..2 {
        step("its first events", x.next()).await?.ok_or("the stream ended at once")?;
    }
    let last = x.last_event_id().ok_or("no event id on a 2025-11-25 stream")?.to_owned();
    drop(x);
    let headers = McpHeaders { last_event_id: Some(&last), ..headers };
    let mut x = step("a resumption", Exchange::send(target, &headers, None)).await?;
    if x.status != 200 {
        return Err(format!("resumption: HTTP {}", x.status));
    }
    let answer = step("the resumed answer", x.answer_to(id)).await?;
    if answer.get("error").is_some() {
        return Ok(false);
    }
    match tool_text(&answer)? {
        "Counted to 10." => Ok(true),
        other => Err(format!("resumed answer {other:?}")),
    }
}

/// Cancels calls: a stateless one by hanging up after its first progress event, a legacy
/// one with `notifications/cancelled`, one of each every `every`.
pub async fn cancel(target: Target, until: Instant, every: Duration, counters: &Counters) {
    let mut session = None;
    let mut id = 0;
    while Instant::now() < until {
        id += 1;
        let body = modern(call(id, "test_long_running_task", json!({"steps": 100, "delayMs": 10}), true));
        let headers = McpHeaders {
            version: Some(MODERN),
            method: Some(("tools/call", Some("test_long_running_task"))),
            ..McpHeaders::default()
        };
        let outcome = async {
            let mut x = step("a call to cancel", Exchange::send(&target, &headers, Some(&body))).await?;
            step("its first progress", x.next()).await?.ok_or("the stream ended at once")?;
            Ok(1)
        }
        .await;
        counters.count(&counters.cancelled, "a stateless cancellation", outcome);

        let Some(s) = kept_session(&mut session, &target, LEGACY, every, counters).await else { continue };
        let outcome = cancel_legacy(&target, s, id).await;
        if outcome.is_err() {
            session = None;
        }
        counters.count(&counters.cancelled, "a legacy cancellation", outcome);
        tokio::time::sleep(every).await;
    }
}

async fn cancel_legacy(target: &Target, session: &str, id: u64) -> Result<u64, String> {
    let headers = McpHeaders { version: Some(LEGACY), session: Some(session), ..McpHeaders::default() };
    let body = call(id, "test_long_running_task", json!({"steps": 100, "delayMs": 10}), true);
    let mut x = step("a call to cancel", Exchange::send(target, &headers, Some(&body))).await?;
    step("its first progress", x.next()).await?.ok_or("the stream ended at once")?;
    let note = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": id}});
    let sent = step("notifications/cancelled", Exchange::send(target, &headers, Some(&note))).await?;
    if sent.status != 202 {
        return Err(format!("notifications/cancelled: HTTP {}", sent.status));
    }
    // The call stops: its stream ends well before its hundred steps.
    let mut rest = 0;
    while let Some(message) = step("the cancelled stream", x.next()).await? {
        rest += 1;
        if message.get("result").is_some() && rest > 50 {
            return Err("the cancelled call ran to its end".into());
        }
    }
    Ok(1)
}

/// Calls a tool that logs, on a session whose log level is set, one every `every`.
pub async fn notifications(target: Target, until: Instant, every: Duration, counters: &Counters) {
    let mut session = None;
    let mut id = 0;
    while Instant::now() < until {
        id += 2;
        let s = match &session {
            Some(s) => s,
            None => {
                let opened = async {
                    let s = open_session(&target, LEGACY).await?;
                    let headers = McpHeaders { version: Some(LEGACY), session: Some(&s), ..McpHeaders::default() };
                    let level = request(1, "logging/setLevel", json!({"level": "debug"}));
                    let mut x = step("logging/setLevel", Exchange::send(&target, &headers, Some(&level))).await?;
                    step("logging/setLevel", x.answer_to(1)).await?;
                    Ok::<_, String>(s)
                }
                .await;
                match opened {
                    Ok(s) => session.insert(s),
                    Err(why) => {
                        counters.fail("open a logging session", why);
                        tokio::time::sleep(every).await;
                        continue;
                    }
                }
            }
        };
        let outcome = async {
            let headers = McpHeaders { version: Some(LEGACY), session: Some(s), ..McpHeaders::default() };
            let mut x = step(
                "a logging call",
                Exchange::send(&target, &headers, Some(&call(id, "test_tool_with_logging", json!({}), false))),
            )
            .await?;
            let mut logs = 0;
            while let Some(message) = step("the logging call", x.next()).await? {
                if message["method"] == "notifications/message" {
                    logs += 1;
                } else if message.get("id").and_then(Value::as_u64) == Some(id) {
                    tool_text(&message)?;
                    return if logs > 0 { Ok(logs) } else { Err("no log notification before the answer".into()) };
                }
            }
            Err("the stream ended without the answer".into())
        }
        .await;
        if outcome.is_err() {
            session = None;
        }
        counters.count(&counters.notifications, "a logging call", outcome);
        tokio::time::sleep(every).await;
    }
}
