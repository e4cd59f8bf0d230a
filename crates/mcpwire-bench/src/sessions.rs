//! Memory per idle legacy session: open N sessions (`initialize` + `notifications/initialized`,
//! then nothing, or one `tools/call` each: [`Call::Json`] calls `echo`, answered at once as
//! `application/json`, so no event is kept; [`Call::Sse`] calls the reference server's
//! `test_tool_with_logging`, whose log messages come before its result, so the answer is an
//! SSE stream whose events (with ids) the server keeps for resumption), and compare the
//! server's resident memory before and after.
//!
//! First one warm-up session per connection is opened (so connection buffers, thread pools
//! and allocator arenas exist before the "before" reading), then the N measured sessions
//! with bounded concurrency; connections are closed afterwards and the server is given a
//! moment to settle before the "after" reading.

use crate::http_client::{Connection, Target, PROTOCOL_VERSION, SESSION_ID};
use crate::http_load::{echo_once, handshake};
use crate::mcp;
use crate::proc_stats;
use anyhow::{bail, Result};
use bytes::Bytes;
use hyper::header::HeaderValue;
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// One memory measurement.
#[derive(Debug, Clone)]
pub struct SessionsLoad {
    /// The MCP endpoint URL.
    pub url: String,
    /// Sessions to open.
    pub count: usize,
    /// Sessions opened at a time (one connection each).
    pub concurrency: usize,
    /// Revision asked for in `initialize`.
    pub protocol: String,
    /// The server's process id.
    pub pid: u32,
    /// Pause before reading memory, before and after.
    pub settle: Duration,
    /// The call made on each session after opening it, if any.
    pub call: Option<Call>,
}

/// The call made on each session after opening it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Call {
    /// `tools/call` of `echo`: answered at once as `application/json` (no event kept).
    Json,
    /// `tools/call` of the reference server's `test_tool_with_logging`: three log messages,
    /// then the result, on an SSE stream whose events the server keeps for resumption.
    Sse,
}

/// The tool [`Call::Sse`] calls.
pub const SSE_TOOL: &str = "test_tool_with_logging";

/// What one memory measurement found.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SessionsResult {
    /// Sessions asked for.
    pub count: usize,
    /// Sessions opened with a session id.
    pub opened: usize,
    /// Sessions that failed to open (or got no session id).
    pub failed: usize,
    /// Server RSS before, in bytes.
    pub rss_before: u64,
    /// Server RSS after, in bytes.
    pub rss_after: u64,
    /// `(rss_after - rss_before) / opened` (negative growth counts as 0).
    pub bytes_per_session: Option<f64>,
    /// Time spent opening the sessions, in seconds.
    pub open_s: f64,
    /// The first error seen, if any.
    pub first_error: Option<String>,
}

/// Runs one memory measurement.
pub async fn run(load: &SessionsLoad) -> Result<SessionsResult> {
    if load.count == 0 || load.concurrency == 0 {
        bail!("--count and --concurrency must be at least 1");
    }
    let target = Target::parse(&load.url).await?;
    let workers = load.concurrency.min(load.count);
    // Warm-up: one session per connection.
    let warm = open_many(&target, workers, workers, &load.protocol, load.call).await;
    if warm.opened == 0 {
        bail!("could not open a single session: {}", warm.first_error.unwrap_or_default());
    }
    tokio::time::sleep(load.settle).await;
    let rss_before = proc_stats::rss_bytes(load.pid)?;
    let started = Instant::now();
    let opened = open_many(&target, load.count, workers, &load.protocol, load.call).await;
    let open_s = started.elapsed().as_secs_f64();
    tokio::time::sleep(load.settle).await;
    let rss_after = proc_stats::rss_bytes(load.pid)?;
    Ok(SessionsResult {
        count: load.count,
        opened: opened.opened,
        failed: load.count - opened.opened,
        rss_before,
        rss_after,
        bytes_per_session: (opened.opened > 0)
            .then(|| rss_after.saturating_sub(rss_before) as f64 / opened.opened as f64),
        open_s,
        first_error: opened.first_error,
    })
}

struct Opened {
    opened: usize,
    first_error: Option<String>,
}

async fn open_many(target: &Target, count: usize, workers: usize, protocol: &str, call: Option<Call>) -> Opened {
    let next = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for _ in 0..workers {
        let (target, next, protocol) = (target.clone(), next.clone(), protocol.to_owned());
        tasks.push(tokio::spawn(async move {
            let (mut opened, mut first_error) = (0usize, None);
            let mut conn = None;
            while next.fetch_add(1, Ordering::Relaxed) < count {
                let c = match conn.as_mut() {
                    Some(c) => c,
                    None => match Connection::open(&target).await {
                        Ok(c) => conn.insert(c),
                        Err(e) => {
                            first_error.get_or_insert(e.0);
                            tokio::time::sleep(Duration::from_millis(10)).await;
                            continue;
                        }
                    },
                };
                match tokio::time::timeout(Duration::from_secs(30), handshake(c, &protocol)).await {
                    Ok(Ok((Some(id), version, _))) if call.is_some() => {
                        let called = match call {
                            Some(Call::Sse) => sse_call(c, &id, &version).await,
                            _ => echo_once(c, Some(&id), &version, "echo", Duration::from_secs(30)).await,
                        };
                        match called {
                            Ok(()) => opened += 1,
                            Err(e) => {
                                first_error.get_or_insert(e);
                                conn = None;
                            }
                        }
                    }
                    Ok(Ok((Some(_), _, _))) => opened += 1,
                    Ok(Ok((None, _, _))) => {
                        first_error.get_or_insert_with(|| "the server gave no Mcp-Session-Id".into());
                    }
                    Ok(Err(e)) => {
                        first_error.get_or_insert(e);
                        conn = None;
                    }
                    Err(_) => {
                        first_error.get_or_insert_with(|| "initialize took over 30 s".into());
                        conn = None;
                    }
                }
            }
            (opened, first_error)
        }));
    }
    let mut all = Opened { opened: 0, first_error: None };
    for t in tasks {
        if let Ok((opened, err)) = t.await {
            all.opened += opened;
            if all.first_error.is_none() {
                all.first_error = err;
            }
        }
    }
    all
}

/// One `tools/call` of [`SSE_TOOL`] on a legacy session: its answer must be an SSE stream
/// carrying at least one message before the result.
async fn sse_call(conn: &mut Connection, session: &str, version: &str) -> Result<(), String> {
    let header = |v: &str| HeaderValue::from_str(v).map_err(|_| format!("{v:?} cannot be an HTTP header value"));
    let headers = [(PROTOCOL_VERSION, header(version)?), (SESSION_ID, header(session)?)];
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"{SSE_TOOL}","arguments":{{}}}}}}"#
    );
    let mut before = 0usize;
    let post = conn.post(&headers, Bytes::from(body), true, |m| match mcp::find_result(m, 1) {
        Ok(Some(_)) => Some(Ok(before)),
        Ok(None) => {
            before += 1;
            None
        }
        Err(e) => Some(Err(e)),
    });
    let answer = tokio::time::timeout(Duration::from_secs(30), post)
        .await
        .map_err(|_| format!("{SSE_TOOL}: no answer within 30 s"))?
        .map_err(|e| e.0)?;
    match answer.outcome.map_err(|e| format!("{SSE_TOOL}: {e}"))? {
        Some(0) | None => Err(format!("{SSE_TOOL}: no message came before the result (not an SSE stream?)")),
        Some(_) => Ok(()),
    }
}
