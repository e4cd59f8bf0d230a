//! Client-side load: our client library (`mcpwire::Client`) against rmcp's client on the same
//! server (issue 30, item 2).
//!
//! A *driver* is a process that connects to one server with one client library, does the
//! handshake, then calls `echo` with N calls in flight (each with a unique `text` that the
//! answer's `content[0].text` must equal) for a warm-up and a measured window, on a
//! single-threaded tokio runtime, and prints one [`DriverResult`] as JSON: calls, calls/s, its
//! own CPU per call (`getrusage`) and the server's (from `/proc`: the given pid, or the
//! driver's own children for a server it started over stdio). Our driver is
//! `mcpwire-bench client-load` ([`drive`]); rmcp's is `rmcp-client-load`
//! (`bench/peers/rmcp/src/client_load.rs`), which prints the same JSON.
//!
//! [`compare`] (`mcpwire-bench client`) starts the server for each run (`mcp serve`, pinned to
//! the server CPU: for HTTP the harness starts it, for stdio the driver starts it through
//! `taskset`), runs both drivers (pinned to the other CPU) in alternating order, several
//! rounds, and takes medians.

use crate::proc_stats;
use crate::process::{self, SpawnOptions};
use crate::stats::median_of;
use anyhow::{bail, Context as _, Result};
use mcpwire::client::target::Target;
use mcpwire::client::{ChildCommand, Client};
use mcpwire::types::ContentBlock;
use mcpwire::ProtocolVersion;
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Which era the drivers speak.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Era {
    /// `initialize` at 2025-11-25 (rmcp's default lifecycle).
    Legacy,
    /// `server/discover`, then self-contained 2026-07-28 requests.
    Modern,
}

impl Era {
    /// Its name on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Era::Legacy => "legacy",
            Era::Modern => "modern",
        }
    }
}

/// Where a driver's server is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Transport {
    /// A child process over stdin/stdout.
    Stdio,
    /// Streamable HTTP.
    Http,
}

impl Transport {
    /// Its name.
    pub fn as_str(self) -> &'static str {
        match self {
            Transport::Stdio => "stdio",
            Transport::Http => "http",
        }
    }
}

/// What a driver runs.
#[derive(Debug, Clone)]
pub struct DriverOptions {
    /// The endpoint (HTTP), or `None` with `command` (stdio).
    pub url: Option<String>,
    /// The server command (stdio).
    pub command: Vec<String>,
    /// Calls in flight.
    pub inflight: usize,
    /// Warm-up before the window.
    pub warmup: Duration,
    /// The measured window.
    pub duration: Duration,
    /// The era.
    pub era: Era,
    /// The server's pid (HTTP); without it, the driver's children are read.
    pub server_pid: Option<u32>,
}

/// What a driver prints (both drivers print this JSON).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct DriverResult {
    /// The client library.
    pub client: String,
    /// `stdio` or `http`.
    pub transport: String,
    /// The revision the session negotiated.
    pub protocol: String,
    /// Calls in flight.
    pub inflight: usize,
    /// Length of the measured window, seconds.
    pub duration_s: f64,
    /// Correct answers in the window.
    pub calls: u64,
    /// Failed or wrong answers in the window.
    pub errors: u64,
    /// Correct answers per second.
    pub calls_per_s: f64,
    /// The driver's own CPU (user + system, all threads) per correct answer, µs.
    pub client_cpu_us_per_call: Option<f64>,
    /// The server's CPU per correct answer, µs (10 ms tick resolution).
    pub server_cpu_us_per_call: Option<f64>,
    /// The first error, if any.
    pub first_error: Option<String>,
}

/// The pids whose parent is this process.
fn own_children() -> Vec<u32> {
    let me = std::process::id();
    let tree = proc_stats::process_tree(me);
    // `process_tree` lists descendants breadth-first after `me`; keep the direct children.
    tree.into_iter()
        .skip(1)
        .filter(|&p| {
            std::fs::read_to_string(format!("/proc/{p}/stat"))
                .ok()
                .and_then(|t| proc_stats::parse_stat(&t))
                .is_some_and(|s| s.ppid == me)
        })
        .collect()
}

fn server_cpu(pids: &[u32]) -> Option<Duration> {
    if pids.is_empty() {
        return None;
    }
    pids.iter().map(|&p| proc_stats::cpu_time(p).ok()).sum()
}

/// Runs our driver: our client library against one server (see the module docs).
pub async fn drive(opts: &DriverOptions) -> Result<DriverResult> {
    if opts.inflight == 0 {
        bail!("--inflight must be at least 1");
    }
    let version = match opts.era {
        Era::Legacy => ProtocolVersion::V2025_11_25,
        Era::Modern => ProtocolVersion::V2026_07_28,
    };
    let client = Client::builder("mcpwire-bench-client", env!("CARGO_PKG_VERSION"))
        .protocol_version(version)
        .request_timeout(Duration::from_secs(30))
        .build();
    let (target, transport) = match &opts.url {
        Some(url) => (
            Target::Http { url: url.clone(), headers: Vec::new(), bearer: None, sse: false, named: None },
            Transport::Http,
        ),
        None => {
            let (program, args) = opts.command.split_first().context("no server command")?;
            (
                Target::Stdio { command: ChildCommand::new(program).args(args), named: None, searched: None },
                Transport::Stdio,
            )
        }
    };
    let session = target.connect(&client).await.context("connect")?;
    let server_pids = match opts.server_pid {
        Some(p) => vec![p],
        None => own_children(),
    };
    let protocol = session.protocol_version().to_string();
    let ok = Arc::new(AtomicU64::new(0));
    let errors = Arc::new(AtomicU64::new(0));
    let first_error: Arc<Mutex<Option<String>>> = Arc::default();
    let stop = Arc::new(AtomicBool::new(false));
    let mut workers = Vec::new();
    for w in 0..opts.inflight {
        let session = session.clone();
        let (ok, errors, first_error, stop) = (ok.clone(), errors.clone(), first_error.clone(), stop.clone());
        workers.push(tokio::spawn(async move {
            let mut seq = 0u64;
            while !stop.load(Ordering::Relaxed) {
                seq += 1;
                let text = format!("w{w}-{seq}");
                let outcome = match session.call_tool("echo", json!({ "text": text })).await {
                    Ok(r) => match r.content.first() {
                        Some(ContentBlock::Text(t)) if t.text == text && r.is_error != Some(true) => Ok(()),
                        _ => Err(format!("wrong answer to {text:?}: {:?}", r.content)),
                    },
                    Err(e) => Err(e.to_string()),
                };
                match outcome {
                    Ok(()) => ok.fetch_add(1, Ordering::Relaxed),
                    Err(e) => {
                        first_error.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(e);
                        errors.fetch_add(1, Ordering::Relaxed)
                    }
                };
            }
        }));
    }
    tokio::time::sleep(opts.warmup).await;
    let (calls0, errors0, cpu0, server0, t0) = (
        ok.load(Ordering::Relaxed),
        errors.load(Ordering::Relaxed),
        proc_stats::own_cpu_time(),
        server_cpu(&server_pids),
        Instant::now(),
    );
    tokio::time::sleep(opts.duration).await;
    let (calls1, errors1, cpu1, server1, elapsed) = (
        ok.load(Ordering::Relaxed),
        errors.load(Ordering::Relaxed),
        proc_stats::own_cpu_time(),
        server_cpu(&server_pids),
        t0.elapsed().as_secs_f64(),
    );
    stop.store(true, Ordering::Relaxed);
    for w in workers {
        let _ = tokio::time::timeout(Duration::from_secs(10), w).await;
    }
    let _ = tokio::time::timeout(Duration::from_secs(5), session.close()).await;
    let calls = calls1 - calls0;
    let first_error = first_error.lock().unwrap_or_else(|p| p.into_inner()).clone();
    Ok(DriverResult {
        client: format!("mcpwire {}", env!("CARGO_PKG_VERSION")),
        transport: transport.as_str().into(),
        protocol,
        inflight: opts.inflight,
        duration_s: elapsed,
        calls,
        errors: errors1 - errors0,
        calls_per_s: calls as f64 / elapsed,
        client_cpu_us_per_call: proc_stats::cpu_us_per_call(cpu0, cpu1, calls),
        server_cpu_us_per_call: match (server0, server1) {
            (Some(a), Some(b)) => proc_stats::cpu_us_per_call(a, b, calls),
            _ => None,
        },
        first_error,
    })
}

/// How [`compare`] runs.
#[derive(Debug, Clone)]
pub struct CompareOptions {
    /// Our server (`mcp`), started as `MCP serve` (stdio) or `MCP serve --http ADDR`.
    pub mcp: PathBuf,
    /// Our driver: this binary (`mcpwire-bench`), run as `client-load`.
    pub ours: PathBuf,
    /// rmcp's driver (`rmcp-client-load`); missing: only ours runs, with a note.
    pub rmcp: PathBuf,
    /// Transports to measure.
    pub transports: Vec<Transport>,
    /// Calls in flight to measure.
    pub inflight: Vec<usize>,
    /// Eras to measure.
    pub eras: Vec<Era>,
    /// Rounds (each client once per round, alternating which goes first).
    pub rounds: usize,
    /// Warm-up of each run.
    pub warmup: Duration,
    /// Measured window of each run.
    pub duration: Duration,
    /// (server CPU, client CPU), when pinned.
    pub cpus: Option<(usize, usize)>,
    /// Where server logs go.
    pub logs: PathBuf,
}

/// Medians of one client in one case.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ClientMedian {
    /// The client library.
    pub client: String,
    /// The revision negotiated.
    pub protocol: String,
    /// Median calls/s.
    pub calls_per_s: Option<f64>,
    /// Median client CPU per call, µs.
    pub client_cpu_us_per_call: Option<f64>,
    /// Median server CPU per call, µs.
    pub server_cpu_us_per_call: Option<f64>,
    /// Correct calls, all runs.
    pub calls: u64,
    /// Errors, all runs.
    pub errors: u64,
    /// Every run.
    pub runs: Vec<DriverResult>,
    /// The first error of any run (or why it did not run).
    pub first_error: Option<String>,
}

/// One case: a transport, an era and a number of calls in flight, both clients.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ClientCase {
    /// `stdio` or `http`.
    pub transport: String,
    /// `legacy` or `modern`.
    pub era: String,
    /// Calls in flight.
    pub inflight: usize,
    /// Our client.
    pub ours: ClientMedian,
    /// rmcp's client (`None`: its driver is missing).
    pub rmcp: Option<ClientMedian>,
}

impl ClientCase {
    /// Our calls/s divided by rmcp's.
    pub fn ratio(&self) -> Option<f64> {
        let r = self.rmcp.as_ref()?.calls_per_s?;
        Some(self.ours.calls_per_s? / r).filter(|x| x.is_finite())
    }
}

/// Everything [`compare`] measured.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ClientResults {
    /// The cases.
    pub cases: Vec<ClientCase>,
    /// Notes (a missing driver, pinning).
    pub notes: Vec<String>,
    /// Rounds per case.
    pub rounds: usize,
    /// Measured seconds per run.
    pub duration_s: f64,
}

fn progress(msg: impl AsRef<str>) {
    eprintln!("mcpwire-bench: {}", msg.as_ref());
}

/// Runs one driver (`ours` or rmcp's) for one case against a fresh server.
async fn run_driver(
    opts: &CompareOptions,
    rmcp: bool,
    transport: Transport,
    era: Era,
    inflight: usize,
) -> Result<DriverResult> {
    let mut args: Vec<String> = Vec::new();
    let program = if rmcp { opts.rmcp.clone() } else { opts.ours.clone() };
    if !rmcp {
        args.push("client-load".into());
    }
    args.extend([
        "--inflight".into(),
        inflight.to_string(),
        "--warmup".into(),
        opts.warmup.as_secs_f64().to_string(),
        "--duration".into(),
        opts.duration.as_secs_f64().to_string(),
        "--protocol".into(),
        era.as_str().into(),
    ]);
    if let Some((_, client_cpu)) = opts.cpus {
        args.extend(["--cpu".into(), client_cpu.to_string()]);
    }
    let mcp = opts.mcp.to_string_lossy().into_owned();
    let mut server = None;
    match transport {
        Transport::Http => {
            let port = process::free_port()?;
            let argv = vec![mcp, "serve".into(), "--http".into(), format!("127.0.0.1:{port}")];
            let spawn = SpawnOptions {
                cpu: opts.cpus.map(|c| c.0),
                log: Some(opts.logs.join("client-http.log")),
                ..Default::default()
            };
            let mut s = process::spawn(&argv, &spawn)?;
            s.wait_for_port(SocketAddr::from(([127, 0, 0, 1], port)), Duration::from_secs(30)).await?;
            args.extend([
                "--server-pid".into(),
                s.pid.to_string(),
                "--url".into(),
                format!("http://127.0.0.1:{port}/mcp"),
            ]);
            server = Some(s);
        }
        Transport::Stdio => {
            args.push("--".into());
            if let Some((server_cpu, _)) = opts.cpus {
                // taskset execs the server: the driver's child is the server itself.
                args.extend(["taskset".into(), "-c".into(), server_cpu.to_string()]);
            }
            args.extend([mcp, "serve".into()]);
        }
    }
    let out = tokio::process::Command::new(&program)
        .args(&args)
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true)
        .output()
        .await
        .with_context(|| format!("cannot run {}", program.display()));
    if let Some(s) = server {
        s.stop().await;
    }
    let out = out?;
    if !out.status.success() {
        bail!(
            "{} {} failed ({}): {}",
            program.display(),
            args.join(" "),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    serde_json::from_slice(&out.stdout)
        .with_context(|| format!("{} printed no result: {}", program.display(), String::from_utf8_lossy(&out.stdout)))
}

fn median_for(client: &str, runs: Vec<DriverResult>, failure: Option<String>) -> ClientMedian {
    ClientMedian {
        client: client.into(),
        protocol: runs.first().map(|r| r.protocol.clone()).unwrap_or_default(),
        calls_per_s: median_of(runs.iter().map(|r| Some(r.calls_per_s))),
        client_cpu_us_per_call: median_of(runs.iter().map(|r| r.client_cpu_us_per_call)),
        server_cpu_us_per_call: median_of(runs.iter().map(|r| r.server_cpu_us_per_call)),
        calls: runs.iter().map(|r| r.calls).sum(),
        errors: runs.iter().map(|r| r.errors).sum(),
        first_error: failure.or_else(|| runs.iter().find_map(|r| r.first_error.clone())),
        runs,
    }
}

/// Measures our client against rmcp's on `mcp serve` (see the module docs).
pub async fn compare(opts: &CompareOptions) -> Result<ClientResults> {
    if opts.rounds == 0 {
        bail!("--rounds must be at least 1");
    }
    let mut results =
        ClientResults { rounds: opts.rounds, duration_s: opts.duration.as_secs_f64(), ..Default::default() };
    let have_rmcp = opts.rmcp.is_file();
    if !have_rmcp {
        let note = format!(
            "rmcp's driver {} is missing (bash bench/peers/setup.sh builds it): only our client was measured",
            opts.rmcp.display()
        );
        progress(&note);
        results.notes.push(note);
    }
    if opts.cpus.is_none() {
        results.notes.push("fewer than 2 CPUs: nothing was pinned".into());
    }
    for &transport in &opts.transports {
        for &era in &opts.eras {
            for &inflight in &opts.inflight {
                let (mut ours, mut theirs) = (Vec::new(), Vec::new());
                let (mut ours_err, mut theirs_err) = (None, None);
                for round in 1..=opts.rounds {
                    // Alternate which client goes first, so that drift does not favour one.
                    let order: &[bool] = if round % 2 == 1 { &[false, true] } else { &[true, false] };
                    for &rmcp in order {
                        if rmcp && (!have_rmcp || theirs_err.is_some()) || !rmcp && ours_err.is_some() {
                            continue;
                        }
                        let who = if rmcp { "rmcp" } else { "mcpwire" };
                        match run_driver(opts, rmcp, transport, era, inflight).await {
                            Ok(r) => {
                                progress(format!(
                                    "client {who} {} {} ×{inflight} round {round}/{}: {:.0} calls/s, client {} µs/call, \
                                     server {} µs/call, {} errors{}",
                                    transport.as_str(),
                                    era.as_str(),
                                    opts.rounds,
                                    r.calls_per_s,
                                    crate::suite::fmt_opt(r.client_cpu_us_per_call),
                                    crate::suite::fmt_opt(r.server_cpu_us_per_call),
                                    r.errors,
                                    r.first_error.as_ref().map(|e| format!(" (first: {e})")).unwrap_or_default()
                                ));
                                if rmcp { &mut theirs } else { &mut ours }.push(r);
                            }
                            Err(e) => {
                                progress(format!("client {who} {} ×{inflight} failed: {e:#}", transport.as_str()));
                                *(if rmcp { &mut theirs_err } else { &mut ours_err }) = Some(format!("{e:#}"));
                            }
                        }
                    }
                }
                results.cases.push(ClientCase {
                    transport: transport.as_str().into(),
                    era: era.as_str().into(),
                    inflight,
                    ours: median_for("mcpwire", ours, ours_err),
                    rmcp: have_rmcp.then(|| median_for("rmcp 3.11.0", theirs, theirs_err)),
                });
            }
        }
    }
    Ok(results)
}

/// The results as a Markdown table (also what `mcpwire-bench client` prints).
pub fn table(r: &ClientResults) -> String {
    use crate::suite::fmt_opt;
    let mut s = String::from(
        "| transport | era | in flight | client | calls/s | client CPU µs/call | server CPU µs/call | client ÷ server CPU | ours ÷ rmcp calls/s | errors |\n\
         |---|---|---|---|---|---|---|---|---|---|\n",
    );
    for c in &r.cases {
        let rows = std::iter::once((&c.ours, c.ratio())).chain(c.rmcp.iter().map(|m| (m, None)));
        for (m, ratio) in rows {
            let cpu_ratio = match (m.client_cpu_us_per_call, m.server_cpu_us_per_call) {
                (Some(a), Some(b)) if b > 0.0 => Some(a / b),
                _ => None,
            };
            s.push_str(&format!(
                "| {} | {} ({}) | {} | {} | {} | {} | {} | {} | {} | {}{} |\n",
                c.transport,
                c.era,
                if m.protocol.is_empty() { "—" } else { &m.protocol },
                c.inflight,
                m.client,
                fmt_opt(m.calls_per_s),
                fmt_opt(m.client_cpu_us_per_call),
                fmt_opt(m.server_cpu_us_per_call),
                cpu_ratio.map(|x| format!("{x:.2}×")).unwrap_or_else(|| "—".into()),
                ratio.map(|x| format!("**{x:.2}×**")).unwrap_or_default(),
                m.errors,
                m.first_error.as_ref().map(|e| format!(" ({})", crate::mcp::clip(e))).unwrap_or_default(),
            ));
        }
    }
    for n in &r.notes {
        s.push_str(&format!("\nNote: {n}\n"));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratio_and_table() {
        let median = |client: &str, calls_per_s| ClientMedian {
            client: client.into(),
            protocol: "2025-11-25".into(),
            calls_per_s: Some(calls_per_s),
            client_cpu_us_per_call: Some(10.0),
            server_cpu_us_per_call: Some(20.0),
            ..Default::default()
        };
        let case = ClientCase {
            transport: "stdio".into(),
            era: "legacy".into(),
            inflight: 64,
            ours: median("mcpwire", 3000.0),
            rmcp: Some(median("rmcp", 2000.0)),
        };
        assert_eq!(case.ratio(), Some(1.5));
        let r = ClientResults { cases: vec![case], notes: vec!["a note".into()], rounds: 1, duration_s: 1.0 };
        let t = table(&r);
        assert!(t.contains("**1.50×**") && t.contains("0.50×") && t.contains("Note: a note"), "{t}");
    }
}
