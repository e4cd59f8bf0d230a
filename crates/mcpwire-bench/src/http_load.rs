//! Streamable HTTP load: `tools/call` of `echo` from N concurrent clients, each on its own
//! keep-alive connection, for a fixed time after a warm-up.
//!
//! - [`Mode::Sessions`]: each client `initialize`s a legacy session, sends
//!   `notifications/initialized`, then calls with `Mcp-Session-Id` and `MCP-Protocol-Version`.
//! - [`Mode::Stateless`]: one POST per call, no session. With a modern protocol
//!   (2026-07-28) the call carries `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name`
//!   headers and the `_meta` fields; with a legacy one it is a bare `tools/call` with
//!   `MCP-Protocol-Version` (a stateless legacy server). If such a server refuses calls
//!   before `initialize`, the client initializes once (using a session id only if the server
//!   hands one out) and says so in the result's notes.
//!
//! A call counts when it completes inside the measured window; latency runs from the start
//! of the POST to the moment the answer (JSON body or matching SSE event) is parsed.

use crate::http_client::{Connection, ConnectionError, Target, METHOD, NAME, PROTOCOL_VERSION, SESSION_ID};
use crate::mcp;
use crate::proc_stats;
use crate::stats::{Latencies, LatencySummary};
use anyhow::{bail, Result};
use bytes::Bytes;
use hyper::header::{HeaderName, HeaderValue};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};
use tokio::sync::Barrier;

/// Legacy sessions or stateless POSTs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// `initialize` once per client, then calls in the session.
    Sessions,
    /// Every call a self-contained POST.
    Stateless,
}

impl Mode {
    /// `sessions` or `stateless`.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Sessions => "sessions",
            Mode::Stateless => "stateless",
        }
    }
}

/// One HTTP load measurement.
#[derive(Debug, Clone)]
pub struct HttpLoad {
    /// The MCP endpoint URL.
    pub url: String,
    /// Sessions or stateless.
    pub mode: Mode,
    /// Sessions: the revision asked for in `initialize`. Stateless: the revision the calls use.
    pub protocol: String,
    /// Concurrent clients (one connection each, one call in flight each).
    pub clients: usize,
    /// Warm-up before the measured window.
    pub warmup: Duration,
    /// The measured window.
    pub duration: Duration,
    /// The server's process id, for CPU time.
    pub pid: Option<u32>,
    /// A call slower than this is an error (and its connection is replaced).
    pub request_timeout: Duration,
    /// The echo tool's name (`echo`; a gateway's is prefixed).
    pub tool: String,
    /// An access token sent as `Authorization: Bearer …` with every call (stateless
    /// 2026-07-28 calls only: a protected server's cost per call).
    pub bearer: Option<String>,
}

/// What one HTTP load measurement found.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct HttpResult {
    /// `sessions` or `stateless`.
    pub mode: Mode,
    /// The revision used for the calls (negotiated, for sessions).
    pub protocol: String,
    /// Concurrent clients.
    pub clients: usize,
    /// Length of the measured window, in seconds.
    pub duration_s: f64,
    /// Correct answers inside the window.
    pub calls: u64,
    /// Failed calls inside the window, plus clients that could not start.
    pub errors: u64,
    /// `calls / duration_s`.
    pub req_per_s: f64,
    /// Latency percentiles of the correct answers.
    pub latency: LatencySummary,
    /// Server CPU time per correct answer, in microseconds (`None` without a pid).
    pub cpu_us_per_call: Option<f64>,
    /// The load generator's own CPU time per correct answer, in microseconds.
    pub client_cpu_us_per_call: Option<f64>,
    /// The first error seen, if any.
    pub first_error: Option<String>,
    /// How the server behaved, where it matters (no session id, initialize needed, ...).
    pub notes: Vec<String>,
    /// The `serverInfo` the server gave in `initialize`, when one was made.
    pub server_info: Option<Value>,
}

struct ClientOutcome {
    latencies: Latencies,
    calls: u64,
    errors: u64,
    setup_failed: bool,
    first_error: Option<String>,
    notes: Vec<String>,
    protocol: Option<String>,
    server_info: Option<Value>,
}

/// The headers and call shape a client uses once set up.
struct CallShape {
    headers: Vec<(HeaderName, HeaderValue)>,
    protocol: String,
    tool: String,
}

/// Runs one measurement.
pub async fn run(load: &HttpLoad) -> Result<HttpResult> {
    if load.clients == 0 {
        bail!("--clients must be at least 1");
    }
    let target = Target::parse(&load.url).await?;
    let ready = Arc::new(Barrier::new(load.clients + 1));
    let go = Arc::new(Barrier::new(load.clients + 1));
    let window: Arc<OnceLock<(Instant, Instant)>> = Arc::new(OnceLock::new());
    let mut tasks = Vec::with_capacity(load.clients);
    for index in 0..load.clients {
        let (target, load, ready, go, window) =
            (target.clone(), load.clone(), ready.clone(), go.clone(), window.clone());
        tasks.push(tokio::spawn(async move { client(index, target, load, ready, go, window).await }));
    }
    ready.wait().await;
    let start = Instant::now();
    let (warm_end, end) = (start + load.warmup, start + load.warmup + load.duration);
    let _ = window.set((warm_end, end));
    go.wait().await;
    tokio::time::sleep_until(warm_end.into()).await;
    let cpu_before = load.pid.map(proc_stats::cpu_time).transpose()?;
    let own_before = proc_stats::own_cpu_time();
    tokio::time::sleep_until(end.into()).await;
    let cpu_after = load.pid.map(proc_stats::cpu_time).transpose()?;
    let own_after = proc_stats::own_cpu_time();
    let measured = Instant::now().saturating_duration_since(warm_end).min(load.duration);

    let mut latencies = Latencies::new();
    let (mut calls, mut errors) = (0, 0);
    let (mut first_error, mut notes, mut protocol, mut server_info) = (None, Vec::new(), None, None);
    for task in tasks {
        let out = match task.await {
            Ok(out) => out,
            Err(e) => bail!("a client task failed: {e}"),
        };
        latencies.merge(&out.latencies);
        calls += out.calls;
        errors += out.errors + u64::from(out.setup_failed);
        if first_error.is_none() {
            first_error = out.first_error;
        }
        for n in out.notes {
            if !notes.contains(&n) {
                notes.push(n);
            }
        }
        protocol = protocol.or(out.protocol);
        server_info = server_info.or(out.server_info);
    }
    let duration_s = measured.as_secs_f64().max(1e-9);
    Ok(HttpResult {
        mode: load.mode,
        protocol: protocol.unwrap_or_else(|| load.protocol.clone()),
        clients: load.clients,
        duration_s,
        calls,
        errors,
        req_per_s: calls as f64 / duration_s,
        latency: latencies.summary(),
        cpu_us_per_call: match (cpu_before, cpu_after) {
            (Some(b), Some(a)) => proc_stats::cpu_us_per_call(b, a, calls),
            _ => None,
        },
        client_cpu_us_per_call: proc_stats::cpu_us_per_call(own_before, own_after, calls),
        first_error,
        notes,
        server_info,
    })
}

async fn client(
    index: usize,
    target: Target,
    load: HttpLoad,
    ready: Arc<Barrier>,
    go: Arc<Barrier>,
    window: Arc<OnceLock<(Instant, Instant)>>,
) -> ClientOutcome {
    let mut out = ClientOutcome {
        latencies: Latencies::new(),
        calls: 0,
        errors: 0,
        setup_failed: false,
        first_error: None,
        notes: Vec::new(),
        protocol: None,
        server_info: None,
    };
    let setup = async {
        let mut conn = Connection::open(&target).await.map_err(|e| e.0)?;
        let shape = set_up(index, &mut conn, &load, &mut out).await?;
        Ok::<_, String>((conn, shape))
    };
    let setup = tokio::time::timeout(load.request_timeout, setup)
        .await
        .unwrap_or_else(|_| Err(format!("no answer within {:?}", load.request_timeout)));
    ready.wait().await;
    go.wait().await;
    let (conn, shape) = match setup {
        Ok(s) => s,
        Err(e) => {
            out.setup_failed = true;
            out.first_error = Some(format!("client setup: {e}"));
            return out;
        }
    };
    out.protocol = Some(shape.protocol.clone());
    let Some(&(warm_end, end)) = window.get() else { return out };
    let mut conn = Some(conn);
    let mut seq = 0u64;
    loop {
        let t0 = Instant::now();
        if t0 >= end {
            break;
        }
        seq += 1;
        let text = mcp::echo_text(index, seq);
        let result = match conn.as_mut() {
            Some(c) => call(c, &shape, seq, &text, load.request_timeout).await,
            None => match Connection::open(&target).await {
                Ok(c) => {
                    let c = conn.insert(c);
                    call(c, &shape, seq, &text, load.request_timeout).await
                }
                Err(e) => Err(CallError::Connection(e.0)),
            },
        };
        let t1 = Instant::now();
        let counted = t1 >= warm_end && t1 < end;
        match result {
            Ok(()) => {
                if counted {
                    out.latencies.record(t1 - t0);
                    out.calls += 1;
                }
            }
            Err(e) => {
                if counted {
                    out.errors += 1;
                }
                let (msg, reconnect) = match e {
                    CallError::Connection(m) => (m, true),
                    CallError::Answer(m) => (m, false),
                };
                out.first_error.get_or_insert(msg);
                if reconnect {
                    conn = None;
                    // Do not spin on a server that refuses connections.
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
            }
        }
    }
    out
}

enum CallError {
    Connection(String),
    Answer(String),
}

async fn call(
    conn: &mut Connection,
    shape: &CallShape,
    id: u64,
    text: &str,
    timeout: Duration,
) -> Result<(), CallError> {
    let body = Bytes::from(mcp::echo_call_of(id, text, &shape.protocol, &shape.tool));
    let post = conn.post(&shape.headers, body, true, |m| match mcp::check_echo(m, id, text) {
        Ok(true) => Some(Ok(())),
        Ok(false) => None,
        Err(e) => Some(Err(e)),
    });
    match tokio::time::timeout(timeout, post).await {
        Err(_) => Err(CallError::Connection(format!("no answer within {timeout:?}"))),
        Ok(Err(ConnectionError(e))) => Err(CallError::Connection(e)),
        Ok(Ok(answer)) => answer.outcome.map(|_| ()).map_err(CallError::Answer),
    }
}

/// One `tools/call` of `tool` (an echo) on the legacy session `session` (if any), spoken in
/// `protocol`: the answer checked.
pub async fn echo_once(
    conn: &mut Connection,
    session: Option<&str>,
    protocol: &str,
    tool: &str,
    timeout: Duration,
) -> Result<(), String> {
    let mut headers = vec![(PROTOCOL_VERSION, header(protocol)?)];
    if let Some(id) = session {
        headers.push((SESSION_ID, header(id)?));
    }
    let shape = CallShape { headers, protocol: protocol.to_owned(), tool: tool.to_owned() };
    call(conn, &shape, 1, "one call", timeout).await.map_err(|e| match e {
        CallError::Connection(e) | CallError::Answer(e) => format!("tools/call: {e}"),
    })
}

fn header(value: &str) -> Result<HeaderValue, String> {
    HeaderValue::from_str(value).map_err(|_| format!("{value:?} cannot be an HTTP header value"))
}

/// `initialize` (+ `notifications/initialized`) on `conn`; returns the session id (if the
/// server gave one), the negotiated revision and the `serverInfo`.
pub async fn handshake(
    conn: &mut Connection,
    requested: &str,
) -> Result<(Option<String>, String, Option<Value>), String> {
    let answer = conn
        .post(&[], Bytes::from(mcp::initialize(0, requested)), true, |m| mcp::find_result(m, 0).transpose())
        .await
        .map_err(|e| e.0)?;
    let result = answer.outcome.map_err(|e| format!("initialize: {e}"))?.unwrap_or_default();
    let version = result.get("protocolVersion").and_then(Value::as_str).unwrap_or(requested).to_owned();
    let server_info = result.get("serverInfo").cloned();
    let mut headers = vec![(PROTOCOL_VERSION, header(&version)?)];
    if let Some(id) = &answer.session_id {
        headers.push((SESSION_ID, header(id)?));
    }
    let note = conn
        .post::<()>(&headers, Bytes::from_static(mcp::initialized().as_bytes()), false, |_| None)
        .await
        .map_err(|e| e.0)?;
    note.outcome.map_err(|e| format!("notifications/initialized: {e}"))?;
    Ok((answer.session_id, version, server_info))
}

async fn set_up(
    index: usize,
    conn: &mut Connection,
    load: &HttpLoad,
    out: &mut ClientOutcome,
) -> Result<CallShape, String> {
    match load.mode {
        Mode::Sessions => {
            let (session, version, info) = handshake(conn, &load.protocol).await?;
            out.server_info = info;
            let mut headers = vec![(PROTOCOL_VERSION, header(&version)?)];
            match session {
                Some(id) => headers.push((SESSION_ID, header(&id)?)),
                None => out.notes.push("the server gave no Mcp-Session-Id (stateless server)".into()),
            }
            Ok(CallShape { headers, protocol: version, tool: load.tool.clone() })
        }
        Mode::Stateless if mcp::is_modern(&load.protocol) => {
            let mut headers = vec![
                (PROTOCOL_VERSION, header(&load.protocol)?),
                (METHOD, HeaderValue::from_static("tools/call")),
                (NAME, header(&load.tool)?),
            ];
            if let Some(token) = &load.bearer {
                headers.push((hyper::header::AUTHORIZATION, header(&format!("Bearer {token}"))?));
            }
            Ok(CallShape { headers, protocol: load.protocol.clone(), tool: load.tool.clone() })
        }
        _ if load.bearer.is_some() => Err("--bearer goes with --mode stateless at 2026-07-28 only".into()),
        Mode::Stateless => {
            let shape = CallShape {
                headers: vec![(PROTOCOL_VERSION, header(&load.protocol)?)],
                protocol: load.protocol.clone(),
                tool: load.tool.clone(),
            };
            // Probe: a stateless legacy server answers a bare call.
            let text = mcp::echo_text(index, 0);
            match call(conn, &shape, 0, &text, load.request_timeout).await {
                Ok(()) => Ok(shape),
                Err(CallError::Connection(e)) => Err(e),
                Err(CallError::Answer(first)) => {
                    let (session, version, info) = handshake(conn, &load.protocol)
                        .await
                        .map_err(|e| format!("a bare tools/call failed ({first}), and so did initialize: {e}"))?;
                    out.server_info = info;
                    let mut headers = vec![(PROTOCOL_VERSION, header(&version)?)];
                    match session {
                        Some(id) => {
                            headers.push((SESSION_ID, header(&id)?));
                            out.notes.push(
                                "stateless mode: the server refused calls before initialize and then minted a \
                                 session, so calls ran in one session per client"
                                    .into(),
                            );
                        }
                        None => out.notes.push(
                            "stateless mode: the server refused calls before initialize; each client \
                             initialized once (no session id)"
                                .into(),
                        ),
                    }
                    Ok(CallShape { headers, protocol: version, tool: load.tool.clone() })
                }
            }
        }
    }
}
