//! The `mcpwire-bench` command: see the crate documentation of `mcpwire_bench`.

use anyhow::{bail, Context as _, Result};
use clap::{Parser, Subcommand};
use mcpwire_bench::http_load::{self, HttpLoad, Mode};
use mcpwire_bench::process::{self, SpawnOptions};
use mcpwire_bench::sessions::{self, SessionsLoad};
use mcpwire_bench::soak::{self, Soak};
use mcpwire_bench::spawn::{self, SpawnLoad};
use mcpwire_bench::stdio_load::{self, StdioLoad};
use mcpwire_bench::suite::{self, fmt_opt, SuiteOptions};
use mcpwire_bench::{baseline, client_load, echo_server, mcp, report, streams};
use serde::Serialize;

/// The same allocator as `mcp` (mimalloc), so that the raw baselines served from this binary
/// are the ceiling for our server's setup rather than a handicap.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Parser)]
#[command(
    name = "mcpwire-bench",
    version,
    about = "Benchmarks MCP servers: HTTP and stdio throughput, latency, CPU per call, memory per session, spawn time"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Every measurement against every server of a servers file; writes results.json,
    /// BENCHMARKS.md and SVG charts.
    Suite {
        /// The servers file.
        #[arg(long, default_value = "bench/servers.toml")]
        config: PathBuf,
        /// Where results.json goes (default bench/results; target/bench-smoke with --smoke).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Where BENCHMARKS.md and the charts go (default docs; the --out directory with --smoke).
        #[arg(long)]
        docs: Option<PathBuf>,
        /// The directory server commands are relative to.
        #[arg(long, default_value = ".")]
        root: PathBuf,
        /// Runs per figure (the median is reported).
        #[arg(long)]
        runs: Option<usize>,
        /// Measured seconds per load run.
        #[arg(long)]
        duration: Option<f64>,
        /// Warm-up seconds before each measured window.
        #[arg(long)]
        warmup: Option<f64>,
        /// Quick check (CI): 1 run of 1 s, clients 1 and 16, 200 sessions, 3 spawns, our servers
        /// (those of the same-run costs too) and the baselines only.
        #[arg(long)]
        smoke: bool,
        /// Only these servers (comma-separated names).
        #[arg(long, value_delimiter = ',')]
        only: Option<Vec<String>>,
    },
    /// Writes BENCHMARKS.md and the charts again from a suite's results.json, compared with
    /// a previous run's.
    Report {
        /// The results to report.
        #[arg(long, default_value = "bench/results/results.json")]
        results: PathBuf,
        /// The results.json of an earlier run, for the before-and-after section.
        #[arg(long)]
        previous: Option<PathBuf>,
        /// Where BENCHMARKS.md and the charts go.
        #[arg(long, default_value = "docs")]
        docs: PathBuf,
    },
    /// Streamable HTTP load against one endpoint.
    Http {
        /// The MCP endpoint, e.g. http://127.0.0.1:3000/mcp.
        #[arg(long)]
        url: String,
        /// Legacy sessions, or one stateless POST per call.
        #[arg(long, value_enum)]
        mode: Mode,
        /// Revision: asked in initialize (sessions, default 2025-06-18) or used by the calls
        /// (stateless, default 2026-07-28).
        #[arg(long)]
        protocol: Option<String>,
        /// Concurrent clients (one connection and one call in flight each).
        #[arg(long, default_value_t = 1)]
        clients: usize,
        /// Measured seconds.
        #[arg(long, default_value_t = 5.0)]
        duration: f64,
        /// Warm-up seconds.
        #[arg(long, default_value_t = 1.0)]
        warmup: f64,
        /// The server's process id, for CPU per call.
        #[arg(long)]
        pid: Option<u32>,
        /// Pin the load generator to this CPU.
        #[arg(long)]
        cpu: Option<usize>,
        /// The echo tool's name (a gateway's is prefixed: `mcp proxy --config` serves a
        /// server named `s` as `s_echo`).
        #[arg(long, default_value = mcp::TOOL)]
        tool: String,
        /// An access token for a protected server, sent with every call (stateless only).
        #[arg(long)]
        bearer: Option<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// A mixed load for a given time against an HTTP server with the reference server's
    /// tools (`mcp serve --http`), sampling its memory and open descriptors; fails unless
    /// they stay flat after warm-up and every answer is right.
    Soak {
        /// The MCP endpoint.
        #[arg(long)]
        url: String,
        /// The server's process id.
        #[arg(long)]
        pid: u32,
        /// Seconds of load.
        #[arg(long, default_value_t = 120.0)]
        duration: f64,
        /// Seconds between samples.
        #[arg(long, default_value_t = 5.0)]
        sample_every: f64,
        /// Print JSON (every sample and the verdict).
        #[arg(long)]
        json: bool,
    },
    /// Memory per idle legacy session of one HTTP server.
    Sessions {
        /// The MCP endpoint.
        #[arg(long)]
        url: String,
        /// Sessions to open.
        #[arg(long)]
        count: usize,
        /// The server's process id (its RSS is read).
        #[arg(long)]
        pid: u32,
        /// Sessions opened at a time.
        #[arg(long, default_value_t = 32)]
        concurrency: usize,
        /// Revision asked for in initialize.
        #[arg(long, default_value = mcp::LEGACY_VERSION)]
        protocol: String,
        /// Seconds to wait before reading memory.
        #[arg(long, default_value_t = 1.0)]
        settle: f64,
        /// Make one `tools/call` of `echo` on each session after opening it (memory per
        /// session after one call; answered as plain JSON, so no event is kept).
        #[arg(long, conflicts_with = "call_sse")]
        call: bool,
        /// Make one `tools/call` of the reference server's `test_tool_with_logging` on each
        /// session after opening it: three log messages, then the result, answered as an SSE
        /// stream whose events the server keeps for resumption (memory per session after one
        /// call with its events kept; takes about 150 ms per session).
        #[arg(long)]
        call_sse: bool,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// stdio load: starts CMD and calls echo with N calls in flight.
    Stdio {
        /// Calls in flight (1: sequential round trips).
        #[arg(long, default_value_t = 1)]
        inflight: usize,
        /// Measured seconds.
        #[arg(long, default_value_t = 5.0)]
        duration: f64,
        /// Warm-up seconds.
        #[arg(long, default_value_t = 1.0)]
        warmup: f64,
        /// Pin the server to this CPU.
        #[arg(long)]
        server_cpu: Option<usize>,
        /// Pin the load generator to this CPU.
        #[arg(long)]
        cpu: Option<usize>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// The server command.
        #[arg(last = true, required = true)]
        command: Vec<String>,
    },
    /// Time from starting CMD to its first correct tools/call answer over stdio.
    Spawn {
        /// Tries.
        #[arg(long, default_value_t = 20)]
        repeat: usize,
        /// Pin the server to this CPU.
        #[arg(long)]
        server_cpu: Option<usize>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// The server command.
        #[arg(last = true, required = true)]
        command: Vec<String>,
    },
    /// The raw HTTP baseline: axum + serde_json on 127.0.0.1:PORT (any path).
    BaselineHttp {
        /// The port (0: any free port; the address is printed).
        #[arg(long, default_value_t = 0)]
        port: u16,
    },
    /// The raw stdio baseline: newline-delimited JSON on stdin/stdout with serde_json.
    BaselinePipe,
    /// The raw SSE broadcast baseline: axum on 127.0.0.1:PORT, `GET /sse` holds a stream,
    /// `POST /broadcast` sends one event to every stream.
    BaselineSse {
        /// The port (0: any free port; the address is printed).
        #[arg(long, default_value_t = 0)]
        port: u16,
        /// Serve HTTP/2 over cleartext (prior knowledge) too, with at most this many streams
        /// per connection (hyper-util's `server::conn::auto`).
        #[arg(long, value_name = "STREAMS")]
        http2: Option<u32>,
    },
    /// Our client against rmcp's on `mcp serve` (stdio and HTTP): calls/s, client and server
    /// CPU per call, in alternating rounds; prints a table (or JSON).
    Client {
        /// Our server.
        #[arg(long, default_value = "target/release/mcp")]
        mcp: PathBuf,
        /// rmcp's driver (skipped with a note when missing).
        #[arg(long, default_value = "bench/peers/rmcp/target/release/rmcp-client-load")]
        rmcp: PathBuf,
        /// Transports.
        #[arg(long, value_enum, value_delimiter = ',', default_value = "stdio,http")]
        transports: Vec<client_load::Transport>,
        /// Calls in flight.
        #[arg(long, value_delimiter = ',', default_value = "1,64")]
        inflight: Vec<usize>,
        /// Eras.
        #[arg(long, value_enum, value_delimiter = ',', default_value = "legacy,modern")]
        eras: Vec<client_load::Era>,
        /// Rounds (each client once per round).
        #[arg(long, default_value_t = 3)]
        rounds: usize,
        /// Measured seconds per run.
        #[arg(long, default_value_t = 3.0)]
        duration: f64,
        /// Warm-up seconds per run.
        #[arg(long, default_value_t = 1.0)]
        warmup: f64,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// The client-side driver of `client`: our client library against one server (HTTP URL
    /// or stdio command), N calls in flight; prints JSON.
    ClientLoad {
        /// The MCP endpoint (HTTP); otherwise give the server command after `--`.
        #[arg(long)]
        url: Option<String>,
        /// Calls in flight.
        #[arg(long, default_value_t = 1)]
        inflight: usize,
        /// Measured seconds.
        #[arg(long, default_value_t = 5.0)]
        duration: f64,
        /// Warm-up seconds.
        #[arg(long, default_value_t = 1.0)]
        warmup: f64,
        /// The era.
        #[arg(long, value_enum, default_value = "legacy")]
        protocol: client_load::Era,
        /// The server's pid (HTTP), for its CPU per call.
        #[arg(long)]
        server_pid: Option<u32>,
        /// Pin the driver to this CPU.
        #[arg(long)]
        cpu: Option<usize>,
        /// The server command (stdio).
        #[arg(last = true)]
        command: Vec<String>,
    },
    /// Many notification streams on one instance: memory per stream and the time to deliver
    /// one update to all, for `subscriptions/listen` and legacy GET streams of `mcp serve
    /// --http`, next to the raw axum SSE baseline; prints a table (or JSON).
    Streams {
        /// Our server.
        #[arg(long, default_value = "target/release/mcp")]
        mcp: PathBuf,
        /// Streams per run.
        #[arg(long, default_value_t = 10_000)]
        count: usize,
        /// Kinds of stream.
        #[arg(long, value_enum, value_delimiter = ',', default_value = "listen,get,raw")]
        kinds: Vec<streams::StreamKind>,
        /// Rounds (each kind once per round).
        #[arg(long, default_value_t = 3)]
        rounds: usize,
        /// Streams being opened at once.
        #[arg(long, default_value_t = 64)]
        concurrency: usize,
        /// Seconds to wait after the last stream opened, before reading memory.
        #[arg(long, default_value_t = 1.0)]
        settle: f64,
        /// HTTP/2 streams (h2c, prior knowledge) spread over --connections connections,
        /// instead of one HTTP/1.1 connection per stream: `mcp serve --http2` and the baseline
        /// served with HTTP/2 too.
        #[arg(long)]
        http2: bool,
        /// With --http2: the HTTP/2 connections the streams are spread over.
        #[arg(long, default_value_t = 100, requires = "http2")]
        connections: usize,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// An MCP server of one `echo` tool, typed (`#[tool]`) or raw (a closure over JSON), on
    /// stdio or, with --port, Streamable HTTP: what typed authoring costs.
    EchoServer {
        /// How the tool is written.
        #[arg(long, value_enum)]
        style: echo_server::Style,
        /// Serve Streamable HTTP on 127.0.0.1:PORT instead of stdio.
        #[arg(long)]
        port: Option<u16>,
        /// Middleware layers around the handlers.
        #[arg(long, value_enum, default_value = "none")]
        layers: echo_server::Layers,
    },
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mcpwire-bench: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn secs(s: f64, what: &str) -> Result<Duration> {
    Duration::try_from_secs_f64(s).with_context(|| format!("--{what} {s}: not a number of seconds"))
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    // One thread: the load generator is meant to use one core.
    Ok(tokio::runtime::Builder::new_current_thread().enable_all().build()?)
}

fn pin(cpu: Option<usize>) -> Result<()> {
    match cpu {
        Some(c) => process::pin_current_thread(c),
        None => Ok(()),
    }
}

fn print<T: Serialize>(json: bool, value: &T, human: impl FnOnce(&T) -> String) -> Result<()> {
    if json {
        println!("{}", serde_json::to_string_pretty(value)?);
    } else {
        println!("{}", human(value));
    }
    Ok(())
}

fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::BaselineHttp { port } => baseline::serve_http(port),
        Command::BaselinePipe => baseline::serve_pipe(),
        Command::BaselineSse { port, http2 } => baseline::serve_sse(port, http2),
        Command::Client { mcp, rmcp, transports, inflight, eras, rounds, duration, warmup, json } => {
            let opts = client_load::CompareOptions {
                mcp,
                ours: std::env::current_exe().context("cannot find this binary")?,
                rmcp,
                transports,
                inflight,
                eras,
                rounds,
                warmup: secs(warmup, "warmup")?,
                duration: secs(duration, "duration")?,
                cpus: process::pinning_plan(),
                logs: PathBuf::from("target/bench-logs"),
            };
            let r = runtime()?.block_on(client_load::compare(&opts))?;
            print(json, &r, client_load::table)
        }
        Command::ClientLoad { url, inflight, duration, warmup, protocol, server_pid, cpu, command } => {
            pin(cpu)?;
            if url.is_some() != command.is_empty() {
                bail!("give either --url or a server command after --");
            }
            let opts = client_load::DriverOptions {
                url,
                command,
                inflight,
                warmup: secs(warmup, "warmup")?,
                duration: secs(duration, "duration")?,
                era: protocol,
                server_pid,
            };
            let r = runtime()?.block_on(client_load::drive(&opts))?;
            println!("{}", serde_json::to_string(&r)?);
            Ok(())
        }
        Command::Streams { mcp, count, kinds, rounds, concurrency, settle, http2, connections, json } => {
            let cpus = process::pinning_plan();
            if let Some((_, generator)) = cpus {
                process::pin_current_thread(generator)?;
            }
            let opts = streams::StreamsOptions {
                mcp,
                bench: std::env::current_exe().context("cannot find this binary")?,
                count,
                kinds,
                rounds,
                concurrency,
                settle: secs(settle, "settle")?,
                timeout: Duration::from_secs(120),
                cpus,
                logs: PathBuf::from("target/bench-logs"),
                http2: http2.then_some(connections),
            };
            let r = runtime()?.block_on(streams::run(&opts))?;
            print(json, &r, streams::table)
        }
        Command::EchoServer { style, port, layers } => echo_server::serve(style, port, layers),
        Command::Suite { config, out, docs, root, runs, duration, warmup, smoke, only } => {
            let mut opts = if smoke { SuiteOptions::smoke() } else { SuiteOptions::full() };
            opts.config = config;
            opts.root = root;
            if let Some(out) = out {
                if smoke && docs.is_none() {
                    opts.docs = None;
                }
                opts.out = out;
            }
            if let Some(docs) = docs {
                opts.docs = Some(docs);
            }
            if let Some(r) = runs {
                opts.runs = r;
            }
            if let Some(d) = duration {
                opts.duration = secs(d, "duration")?;
            }
            if let Some(w) = warmup {
                opts.warmup = secs(w, "warmup")?;
            }
            opts.only = only;
            opts.command_line = std::iter::once("target/release/mcpwire-bench".to_owned())
                .chain(std::env::args().skip(1))
                .collect::<Vec<_>>()
                .join(" ");
            let usable = process::allowed_cpus().len();
            let cpus = process::pinning_plan();
            match cpus {
                Some((_, generator)) => process::pin_current_thread(generator)?,
                None => eprintln!("mcpwire-bench: fewer than 2 CPUs available: nothing is pinned"),
            }
            let results = runtime()?.block_on(suite::run(&opts, suite::Pinning { cpus, usable }))?;
            println!("{}", report::tables(&results, &[]));
            Ok(())
        }
        Command::Report { results, previous, docs } => {
            let results = suite::read_results(&results)?;
            let previous = previous.map(|p| suite::read_results(&p)).transpose()?;
            let path = suite::write_report(&results, previous.as_ref(), &docs)?;
            eprintln!("mcpwire-bench: wrote {}", path.display());
            Ok(())
        }
        Command::Http { url, mode, protocol, clients, duration, warmup, pid, cpu, tool, bearer, json } => {
            pin(cpu)?;
            let protocol = protocol.unwrap_or_else(|| match mode {
                Mode::Sessions => mcp::LEGACY_VERSION.into(),
                Mode::Stateless => mcp::MODERN_VERSION.into(),
            });
            let load = HttpLoad {
                url,
                mode,
                protocol,
                clients,
                warmup: secs(warmup, "warmup")?,
                duration: secs(duration, "duration")?,
                pid,
                request_timeout: Duration::from_secs(30),
                tool,
                bearer,
            };
            let r = runtime()?.block_on(http_load::run(&load))?;
            let failed = r.calls == 0;
            print(json, &r, |r| {
                let mut s = format!(
                    "http {} ({}), {} client(s), {:.1} s: {} calls, {} errors\n  {:.0} req/s   p50 {} ms   p99 {} ms   \
                     p99.9 {} ms   max {} ms\n  server CPU {} µs/call, load generator CPU {} µs/call",
                    r.mode.as_str(),
                    r.protocol,
                    r.clients,
                    r.duration_s,
                    r.calls,
                    r.errors,
                    r.req_per_s,
                    fmt_opt(r.latency.p50_ms),
                    fmt_opt(r.latency.p99_ms),
                    fmt_opt(r.latency.p999_ms),
                    fmt_opt(r.latency.max_ms),
                    fmt_opt(r.cpu_us_per_call),
                    fmt_opt(r.client_cpu_us_per_call),
                );
                for n in &r.notes {
                    s.push_str(&format!("\n  note: {n}"));
                }
                if let Some(e) = &r.first_error {
                    s.push_str(&format!("\n  first error: {e}"));
                }
                s
            })?;
            if failed {
                bail!("no call succeeded");
            }
            Ok(())
        }
        Command::Soak { url, pid, duration, sample_every, json } => {
            let soak = Soak {
                url,
                pid,
                duration: secs(duration, "duration")?,
                sample_every: secs(sample_every, "sample-every")?,
            };
            let r = runtime()?.block_on(soak::run(&soak))?;
            print(json, &r, |r| {
                let v = &r.verdict;
                let mut s = format!(
                    "RSS {:.1} MiB (middle third) → {:.1} MiB (last third); open descriptors at most {} → {}; {}",
                    v.rss_middle_mib,
                    v.rss_last_mib,
                    v.fds_middle,
                    v.fds_last,
                    if v.steady { "steady" } else { "NOT steady" }
                );
                for p in &v.problems {
                    s.push_str(&format!("\n  {p}"));
                }
                for e in &r.failure_examples {
                    s.push_str(&format!("\n  failure: {e}"));
                }
                s
            })?;
            if !r.verdict.steady {
                bail!("the server did not hold steady: {}", r.verdict.problems.join("; "));
            }
            Ok(())
        }
        Command::Sessions { url, count, pid, concurrency, protocol, settle, call, call_sse, json } => {
            let call = match (call, call_sse) {
                (_, true) => Some(sessions::Call::Sse),
                (true, false) => Some(sessions::Call::Json),
                (false, false) => None,
            };
            let load = SessionsLoad { url, count, concurrency, protocol, pid, settle: secs(settle, "settle")?, call };
            let r = runtime()?.block_on(sessions::run(&load))?;
            print(json, &r, |r| {
                let mut s = format!(
                    "{} sessions opened ({} failed) in {:.2} s: RSS {:.1} → {:.1} MiB, {} bytes/session",
                    r.opened,
                    r.failed,
                    r.open_s,
                    r.rss_before as f64 / 1048576.0,
                    r.rss_after as f64 / 1048576.0,
                    fmt_opt(r.bytes_per_session)
                );
                if let Some(e) = &r.first_error {
                    s.push_str(&format!("\n  first error: {e}"));
                }
                s
            })
        }
        Command::Stdio { inflight, duration, warmup, server_cpu, cpu, json, command } => {
            pin(cpu)?;
            let load = StdioLoad {
                command,
                spawn: SpawnOptions { cpu: server_cpu, ..Default::default() },
                inflight,
                warmup: secs(warmup, "warmup")?,
                duration: secs(duration, "duration")?,
            };
            let r = runtime()?.block_on(stdio_load::run(&load))?;
            let failed = r.calls == 0;
            print(json, &r, |r| {
                let mut s = format!(
                    "stdio ({}), {} in flight, {:.1} s: {} calls, {} errors\n  {:.0} req/s   p50 {} ms   p99 {} ms   \
                     p99.9 {} ms\n  server CPU {} µs/call, load generator CPU {} µs/call",
                    r.protocol,
                    r.inflight,
                    r.duration_s,
                    r.calls,
                    r.errors,
                    r.req_per_s,
                    fmt_opt(r.latency.p50_ms),
                    fmt_opt(r.latency.p99_ms),
                    fmt_opt(r.latency.p999_ms),
                    fmt_opt(r.cpu_us_per_call),
                    fmt_opt(r.client_cpu_us_per_call),
                );
                if let Some(e) = &r.first_error {
                    s.push_str(&format!("\n  first error: {e}"));
                }
                s
            })?;
            if failed {
                bail!("no call succeeded");
            }
            Ok(())
        }
        Command::Spawn { repeat, server_cpu, json, command } => {
            let load = SpawnLoad {
                command,
                spawn: SpawnOptions { cpu: server_cpu, ..Default::default() },
                repeat,
                timeout: Duration::from_secs(60),
            };
            let r = runtime()?.block_on(spawn::run(&load))?;
            if r.samples_ms.is_empty() {
                bail!("no try succeeded: {}", r.first_error.unwrap_or_default());
            }
            print(json, &r, |r| {
                let mut s = format!(
                    "spawn to first call: median {} ms, p90 {} ms ({} tries, {} failed)",
                    fmt_opt(r.median_ms),
                    fmt_opt(r.p90_ms),
                    r.samples_ms.len() + r.failures,
                    r.failures
                );
                if let Some(e) = &r.first_error {
                    s.push_str(&format!("\n  first error: {e}"));
                }
                s
            })
        }
    }
}
