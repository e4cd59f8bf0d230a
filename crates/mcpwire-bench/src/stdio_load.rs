//! stdio load: the server as a child process speaking newline-delimited JSON; after the
//! legacy handshake, `tools/call` of `echo` with a fixed number of calls in flight (1 is a
//! sequential round trip; more is pipelining) for a fixed time after a warm-up.

use crate::mcp;
use crate::proc_stats;
use crate::process::{self, ServerProcess, SpawnOptions};
use crate::stats::{Latencies, LatencySummary};
use anyhow::{anyhow, bail, Context as _, Result};
use parking_lot::Mutex;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, BufWriter};
use tokio::process::{ChildStdin, ChildStdout};
use tokio::sync::Semaphore;

/// A stdio server after its handshake.
pub struct StdioServer {
    /// The process.
    pub process: ServerProcess,
    /// Its stdin.
    pub stdin: BufWriter<ChildStdin>,
    /// Its stdout, by lines.
    pub stdout: BufReader<ChildStdout>,
    /// The negotiated revision.
    pub protocol: String,
    /// The `serverInfo` of its `initialize` answer.
    pub server_info: Option<Value>,
}

impl StdioServer {
    /// Starts `argv` (stdin/stdout piped) without talking to it yet.
    pub fn spawn(
        argv: &[String],
        opts: &SpawnOptions,
    ) -> Result<(ServerProcess, BufWriter<ChildStdin>, BufReader<ChildStdout>)> {
        let mut opts = opts.clone();
        opts.piped = true;
        let mut process = process::spawn(argv, &opts)?;
        let stdin = process.child.stdin.take().context("no stdin pipe")?;
        let stdout = process.child.stdout.take().context("no stdout pipe")?;
        Ok((process, BufWriter::new(stdin), BufReader::new(stdout)))
    }

    /// Starts `argv` and performs `initialize` + `notifications/initialized`.
    pub async fn start(argv: &[String], opts: &SpawnOptions, timeout: Duration) -> Result<StdioServer> {
        let (process, mut stdin, mut stdout) = Self::spawn(argv, opts)?;
        let hint = process.log_hint();
        let (protocol, server_info) = tokio::time::timeout(timeout, handshake(&mut stdin, &mut stdout))
            .await
            .map_err(|_| anyhow!("no answer to initialize within {timeout:?}{hint}"))?
            .with_context(|| format!("stdio handshake with {}{hint}", process::shell_words(argv)))?;
        Ok(StdioServer { process, stdin, stdout, protocol, server_info })
    }
}

/// Writes one message line and flushes.
pub async fn send(stdin: &mut BufWriter<ChildStdin>, message: &str) -> Result<()> {
    stdin.write_all(message.as_bytes()).await?;
    stdin.write_all(b"\n").await?;
    stdin.flush().await?;
    Ok(())
}

/// Reads lines until `matcher` returns `Some`; server requests and notifications are skipped.
pub async fn read_until<T>(
    stdout: &mut BufReader<ChildStdout>,
    mut matcher: impl FnMut(&str) -> Option<Result<T, String>>,
) -> Result<T> {
    let mut line = String::new();
    loop {
        line.clear();
        if stdout.read_line(&mut line).await? == 0 {
            bail!("the server closed its stdout");
        }
        if line.trim().is_empty() {
            continue;
        }
        if let Some(r) = matcher(line.trim_end()) {
            return r.map_err(|e| anyhow!(e));
        }
    }
}

/// `initialize` (legacy 2025-06-18 asked) and `notifications/initialized`.
pub async fn handshake(
    stdin: &mut BufWriter<ChildStdin>,
    stdout: &mut BufReader<ChildStdout>,
) -> Result<(String, Option<Value>)> {
    send(stdin, &mcp::initialize(0, mcp::LEGACY_VERSION)).await?;
    let result = read_until(stdout, |m| match mcp::find_result(m, 0) {
        Ok(Some(r)) => Some(Ok(r)),
        Ok(None) => None,
        // A line that is not JSON (a chatty server) is skipped; an error answer is fatal.
        Err(e) if e.starts_with("not JSON") => None,
        Err(e) => Some(Err(format!("initialize: {e}"))),
    })
    .await?;
    let version = result.get("protocolVersion").and_then(Value::as_str).unwrap_or(mcp::LEGACY_VERSION).to_owned();
    send(stdin, mcp::initialized()).await?;
    Ok((version, result.get("serverInfo").cloned()))
}

/// One stdio measurement.
#[derive(Debug, Clone)]
pub struct StdioLoad {
    /// The server command.
    pub command: Vec<String>,
    /// How it is started.
    pub spawn: SpawnOptions,
    /// Calls in flight.
    pub inflight: usize,
    /// Warm-up before the measured window.
    pub warmup: Duration,
    /// The measured window.
    pub duration: Duration,
}

/// What one stdio measurement found.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct StdioResult {
    /// Calls in flight.
    pub inflight: usize,
    /// Negotiated revision.
    pub protocol: String,
    /// Length of the measured window, in seconds.
    pub duration_s: f64,
    /// Correct answers inside the window.
    pub calls: u64,
    /// Wrong answers inside the window.
    pub errors: u64,
    /// `calls / duration_s`.
    pub req_per_s: f64,
    /// Latency percentiles (send to answer).
    pub latency: LatencySummary,
    /// Server CPU time per correct answer, in microseconds.
    pub cpu_us_per_call: Option<f64>,
    /// The load generator's own CPU time per correct answer, in microseconds.
    pub client_cpu_us_per_call: Option<f64>,
    /// The first error seen, if any.
    pub first_error: Option<String>,
    /// The server's `serverInfo`.
    pub server_info: Option<Value>,
}

/// Starts the server, runs one measurement, and stops it.
pub async fn run(load: &StdioLoad) -> Result<StdioResult> {
    if load.inflight == 0 {
        bail!("--inflight must be at least 1");
    }
    let server = StdioServer::start(&load.command, &load.spawn, Duration::from_secs(30)).await?;
    let StdioServer { process, mut stdin, stdout, protocol, server_info } = server;
    let pid = process.pid;
    let start = Instant::now();
    let (warm_end, end) = (start + load.warmup, start + load.warmup + load.duration);
    let sent: Arc<Mutex<HashMap<u64, Instant>>> = Arc::default();
    let permits = Arc::new(Semaphore::new(load.inflight));

    let writer = {
        let (sent, permits, protocol) = (sent.clone(), permits.clone(), protocol.clone());
        tokio::spawn(async move {
            let mut id = 0u64;
            loop {
                let permit = match permits.try_acquire() {
                    Ok(p) => p,
                    Err(_) => {
                        // Everything queued so far goes out before waiting for answers.
                        stdin.flush().await?;
                        permits.acquire().await?
                    }
                };
                permit.forget();
                let line = mcp::echo_call(id + 1, &stdio_text(id + 1), &protocol);
                {
                    // Checked under the lock the reader's end test takes, so no call slips
                    // out after the reader decided everything was answered.
                    let mut sent = sent.lock();
                    let now = Instant::now();
                    if now >= end {
                        drop(sent);
                        stdin.flush().await?;
                        return Ok::<_, anyhow::Error>((id, stdin));
                    }
                    id += 1;
                    sent.insert(id, now);
                }
                stdin.write_all(line.as_bytes()).await?;
                stdin.write_all(b"\n").await?;
            }
        })
    };
    let cpu = tokio::spawn(async move {
        tokio::time::sleep_until(warm_end.into()).await;
        let before = (proc_stats::cpu_time(pid), proc_stats::own_cpu_time());
        tokio::time::sleep_until(end.into()).await;
        (before, (proc_stats::cpu_time(pid), proc_stats::own_cpu_time()))
    });

    let mut latencies = Latencies::new();
    let (mut calls, mut errors, mut first_error) = (0u64, 0u64, None);
    let mut lines = stdout.lines();
    let grace = end + Duration::from_secs(30);
    loop {
        let idle = {
            let sent = sent.lock();
            if sent.is_empty() && Instant::now() >= end {
                break;
            }
            sent.is_empty()
        };
        // With nothing outstanding, the writer may already have stopped at the end (it checks
        // the time after this test): wait no later than the end, then test again. `next_line`
        // can be given up on without losing a line.
        let deadline = if idle { end } else { grace };
        let line = match tokio::time::timeout_at(deadline.into(), lines.next_line()).await {
            Err(_) if idle => continue,
            Err(_) => {
                first_error.get_or_insert_with(|| format!("{} calls unanswered 30 s after the end", sent.lock().len()));
                break;
            }
            Ok(Ok(Some(line))) => line,
            Ok(Ok(None)) => {
                first_error.get_or_insert_with(|| format!("the server closed its stdout{}", process.log_hint()));
                break;
            }
            Ok(Err(e)) => return Err(e.into()),
        };
        let msg = line.trim_end();
        let Some(id) = reply_id(msg) else { continue };
        let Some(t0) = sent.lock().remove(&id) else { continue };
        let t1 = Instant::now();
        permits.add_permits(1);
        let counted = t1 >= warm_end && t1 < end;
        match mcp::check_echo(msg, id, &stdio_text(id)) {
            Ok(true) if counted => {
                latencies.record(t1 - t0);
                calls += 1;
            }
            Ok(_) => {}
            Err(e) => {
                errors += u64::from(counted);
                first_error.get_or_insert(e);
            }
        }
    }
    permits.close();
    let ((before, own_before), (after, own_after)) = cpu.await.map_err(|e| anyhow!("CPU reader: {e}"))?;
    let _stdin = writer.await.ok().and_then(|r| r.ok());
    process.stop().await;
    let duration_s = load.duration.as_secs_f64().max(1e-9);
    Ok(StdioResult {
        inflight: load.inflight,
        protocol,
        duration_s,
        calls,
        errors,
        req_per_s: calls as f64 / duration_s,
        latency: latencies.summary(),
        cpu_us_per_call: match (before, after) {
            (Ok(b), Ok(a)) => proc_stats::cpu_us_per_call(b, a, calls),
            _ => None,
        },
        client_cpu_us_per_call: proc_stats::cpu_us_per_call(own_before, own_after, calls),
        first_error,
        server_info,
    })
}

fn stdio_text(id: u64) -> String {
    mcp::echo_text(0, id)
}

/// The numeric id of a response (a message with an id and no method).
fn reply_id(msg: &str) -> Option<u64> {
    #[derive(Deserialize)]
    struct Head {
        id: Option<Value>,
        method: Option<serde::de::IgnoredAny>,
    }
    let head: Head = serde_json::from_str(msg).ok()?;
    if head.method.is_some() {
        return None;
    }
    head.id?.as_u64()
}
