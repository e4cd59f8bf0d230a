//! The suite: every measurement against every server of `bench/servers.toml`, each figure
//! the median of several runs, written to `results.json`, `BENCHMARKS.md` and SVG charts.

use crate::client_load::{self, ClientResults, CompareOptions};
use crate::config::{self, ServerSpec};
use crate::http_load::{self, HttpLoad, HttpResult, Mode};
use crate::machine::{self, MachineInfo};
use crate::process::{self, ServerProcess, SpawnOptions};
use crate::sessions::{self, SessionsLoad, SessionsResult};
use crate::spawn::{self, SpawnLoad, SpawnResult};
use crate::stats::{median_of, LatencySummary};
use crate::stdio_load::{self, StdioLoad, StdioResult};
use crate::streams::{self, StreamKind, StreamsOptions, StreamsResults};
use crate::{chart, mcp, report};
use anyhow::{bail, Context as _, Result};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The servers `--smoke` runs (those of them whose commands exist): ours, the baselines, and
/// those the rows of [`crate::costs`] compare.
pub const SMOKE_SERVERS: [&str; 7] = [
    "mcp",
    "baseline-axum",
    "baseline-pipe",
    crate::costs::TYPED_ECHO,
    crate::costs::RAW_ECHO,
    crate::costs::TRACED_ECHO,
    crate::costs::GATEWAY,
];

/// How a suite runs.
#[derive(Debug, Clone)]
pub struct SuiteOptions {
    /// The servers file.
    pub config: PathBuf,
    /// Where `results.json` (and, with `--smoke`, the report and charts) go.
    pub out: PathBuf,
    /// Where `BENCHMARKS.md` and the charts go (`None`: into `out`).
    pub docs: Option<PathBuf>,
    /// The directory server commands are relative to.
    pub root: PathBuf,
    /// Runs per figure.
    pub runs: usize,
    /// Measured window of each load run.
    pub duration: Duration,
    /// Warm-up before each window.
    pub warmup: Duration,
    /// Concurrent HTTP clients to try.
    pub clients: Vec<usize>,
    /// Numbers of idle sessions to open.
    pub session_counts: Vec<usize>,
    /// stdio calls in flight to try.
    pub inflight: Vec<usize>,
    /// Spawn-to-first-call repetitions.
    pub spawn_repeat: usize,
    /// Only these servers (by name).
    pub only: Option<Vec<String>>,
    /// The smoke flavour (CI): missing servers are skipped even when named.
    pub smoke: bool,
    /// The command line that started the suite, for the report.
    pub command_line: String,
    /// Streams per run of the notification streams measurement.
    pub stream_count: usize,
    /// Measured window of each client comparison run.
    pub client_duration: Duration,
}

impl SuiteOptions {
    /// The full suite's settings.
    pub fn full() -> Self {
        Self {
            config: "bench/servers.toml".into(),
            out: "bench/results".into(),
            docs: Some("docs".into()),
            root: ".".into(),
            runs: 3,
            duration: Duration::from_secs(5),
            warmup: Duration::from_secs(1),
            clients: vec![1, 16, 64],
            session_counts: vec![1_000, 10_000],
            inflight: vec![1, 64],
            spawn_repeat: 20,
            only: None,
            smoke: false,
            command_line: String::new(),
            stream_count: 10_000,
            client_duration: Duration::from_secs(3),
        }
    }

    /// The smoke settings: one short run of everything, small counts, report into `out` only.
    pub fn smoke() -> Self {
        Self {
            out: "target/bench-smoke".into(),
            docs: None,
            runs: 1,
            duration: Duration::from_secs(1),
            warmup: Duration::from_millis(200),
            clients: vec![1, 16],
            session_counts: vec![200],
            spawn_repeat: 3,
            smoke: true,
            stream_count: 200,
            client_duration: Duration::from_millis(500),
            ..Self::full()
        }
    }
}

/// The settings recorded with the results.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Settings {
    /// Runs per figure.
    pub runs: usize,
    /// Measured window, seconds.
    pub duration_s: f64,
    /// Warm-up, seconds.
    pub warmup_s: f64,
    /// HTTP client counts.
    pub clients: Vec<usize>,
    /// Idle session counts.
    pub session_counts: Vec<usize>,
    /// stdio calls in flight.
    pub inflight: Vec<usize>,
    /// Spawn repetitions.
    pub spawn_repeat: usize,
    /// Whether this was a smoke run.
    pub smoke: bool,
    /// The command line.
    pub command_line: String,
}

/// Medians over runs of a load measurement.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct LoadMedian {
    /// Median throughput.
    pub req_per_s: Option<f64>,
    /// Median server CPU per call, µs.
    pub cpu_us_per_call: Option<f64>,
    /// Median load generator CPU per call, µs.
    pub client_cpu_us_per_call: Option<f64>,
    /// Median of each latency percentile.
    pub latency: LatencySummary,
    /// Correct calls, all runs added.
    pub calls: u64,
    /// Errors, all runs added.
    pub errors: u64,
}

/// One HTTP case (mode and client count) of one server.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct HttpCase {
    /// Sessions or stateless.
    pub mode: Mode,
    /// Revision requested (sessions) or used (stateless).
    pub protocol: String,
    /// Concurrent clients.
    pub clients: usize,
    /// Every run.
    pub runs: Vec<HttpResult>,
    /// Medians of the runs.
    pub median: LoadMedian,
}

/// One stdio case (calls in flight) of one server.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct StdioCase {
    /// Calls in flight.
    pub inflight: usize,
    /// Every run.
    pub runs: Vec<StdioResult>,
    /// Medians of the runs.
    pub median: LoadMedian,
}

/// One memory case (number of sessions) of one server.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct MemoryCase {
    /// Sessions opened.
    pub count: usize,
    /// Every run (each on a fresh server).
    pub runs: Vec<SessionsResult>,
    /// Median bytes per session.
    pub bytes_per_session: Option<f64>,
    /// Median RSS before, bytes.
    pub rss_before: Option<f64>,
    /// Median RSS after, bytes.
    pub rss_after: Option<f64>,
    /// Failed session opens, all runs added.
    pub failed: usize,
}

/// Everything measured on one server.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ServerResults {
    /// Its name.
    pub name: String,
    /// Its version, as the servers file says.
    pub version: String,
    /// The `serverInfo` it reported.
    pub server_info: Option<Value>,
    /// Why it was skipped, if it was.
    pub skipped: Option<String>,
    /// Its commands, by kind, as shell lines.
    pub commands: BTreeMap<String, String>,
    /// The setup note.
    pub setup: Option<String>,
    /// HTTP throughput cases.
    pub http: Vec<HttpCase>,
    /// Memory per session cases.
    pub memory: Vec<MemoryCase>,
    /// stdio throughput cases.
    pub stdio: Vec<StdioCase>,
    /// Spawn to first call.
    pub spawn: Option<SpawnResult>,
    /// Measurements that failed outright.
    pub errors: Vec<String>,
}

/// Everything a suite produced.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SuiteResults {
    /// The machine.
    pub machine: MachineInfo,
    /// The settings.
    pub settings: Settings,
    /// Per server, in the servers file's order.
    pub servers: Vec<ServerResults>,
    /// Our client against rmcp's on our server ([`client_load`]), when our server ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<ClientResults>,
    /// Many notification streams on our server and the raw SSE baseline ([`streams`]), when
    /// our server ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streams: Option<StreamsResults>,
    /// The same streams as HTTP/2 streams over [`STREAMS_H2_CONNECTIONS`] h2c connections
    /// (`mcp serve --http2`, and the baseline served so too).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streams_http2: Option<StreamsResults>,
}

/// The h2c connections the notification streams share in the suite's HTTP/2 measurement (100
/// streams each at 10,000): what an HTTP/2 proxy or load balancer in front would hold.
pub const STREAMS_H2_CONNECTIONS: usize = 100;

impl SuiteResults {
    /// The results of the server named `name`, if it ran.
    pub fn server(&self, name: &str) -> Option<&ServerResults> {
        self.servers.iter().find(|s| s.name == name && s.skipped.is_none())
    }
}

fn progress(msg: impl AsRef<str>) {
    eprintln!("mcpwire-bench: {}", msg.as_ref());
}

/// How the suite's processes are placed on CPUs.
#[derive(Debug, Clone, Copy)]
pub struct Pinning {
    /// The (server, load generator) CPU pair, when pinned.
    pub cpus: Option<(usize, usize)>,
    /// CPUs usable before the load generator pinned itself.
    pub usable: usize,
}

/// Runs the suite and writes its outputs.
pub async fn run(opts: &SuiteOptions, pinning: Pinning) -> Result<SuiteResults> {
    let cpus = pinning.cpus;
    let config = config::load(&opts.config)?;
    if opts.runs == 0 {
        bail!("--runs must be at least 1");
    }
    let root = opts.root.canonicalize().with_context(|| format!("no directory {}", opts.root.display()))?;
    let names: Vec<String> = match (&opts.only, opts.smoke) {
        (Some(only), _) => only.clone(),
        (None, true) => SMOKE_SERVERS.iter().map(|s| s.to_string()).collect(),
        (None, false) => config.servers.iter().map(|s| s.name.clone()).collect(),
    };
    for n in &names {
        if !config.servers.iter().any(|s| &s.name == n) {
            bail!("no server named {n:?} in {}", opts.config.display());
        }
    }
    let explicit = opts.only.is_some() && !opts.smoke;
    let mut selected = Vec::new();
    for spec in config.servers.iter().filter(|s| names.contains(&s.name)) {
        if let Some(missing) = spec.missing(&root) {
            if explicit {
                bail!("server {:?} cannot run: {missing}{}", spec.name, setup_hint(spec));
            }
            progress(format!("skipping {}: {missing}{}", spec.name, setup_hint(spec)));
            continue;
        }
        selected.push(spec);
    }
    let placement = match cpus {
        Some((s, g)) => format!("servers on CPU {s}, load generator on CPU {g}"),
        None => "not pinned (fewer than 2 CPUs available)".into(),
    };
    let machine = machine::collect(pinning.usable, placement);
    let mut results = SuiteResults {
        machine,
        settings: Settings {
            runs: opts.runs,
            duration_s: opts.duration.as_secs_f64(),
            warmup_s: opts.warmup.as_secs_f64(),
            clients: opts.clients.clone(),
            session_counts: opts.session_counts.clone(),
            inflight: opts.inflight.clone(),
            spawn_repeat: opts.spawn_repeat,
            smoke: opts.smoke,
            command_line: opts.command_line.clone(),
        },
        servers: Vec::new(),
        client: None,
        streams: None,
        streams_http2: None,
    };
    // Server output goes under target/, never into the results directory.
    let logs = root.join("target").join("bench-logs");
    let mut measured = Vec::new();
    for spec in config.servers.iter().filter(|s| names.contains(&s.name)) {
        let mut r = ServerResults {
            name: spec.name.clone(),
            version: spec.version.clone(),
            setup: spec.setup.clone(),
            commands: spec.commands().into_iter().map(|(k, c)| (k.to_owned(), process::shell_words(c))).collect(),
            ..Default::default()
        };
        if selected.iter().any(|s| s.name == spec.name) {
            let bench = ServerBench { spec, opts, root: &root, server_cpu: cpus.map(|c| c.0), logs: &logs };
            measured.push(MeasuredServer { bench, slot: results.servers.len(), failed: BTreeSet::new() });
        } else {
            r.skipped = spec.missing(&root);
        }
        results.servers.push(r);
    }
    measure_interleaved(&mut measured, &mut results.servers, opts.runs).await;
    if let Some(spec) = selected.iter().find(|s| s.name == report::OUR_SERVER) {
        measure_ours_more(spec, opts, &root, &logs, cpus, &mut results).await;
    }
    write_outputs(&results, opts)?;
    Ok(results)
}

/// rmcp's client-side driver, relative to the repository root.
pub const RMCP_CLIENT_DRIVER: &str = "bench/peers/rmcp/target/release/rmcp-client-load";

/// Our client against rmcp's, and many notification streams, on our server (its program is
/// the first word of its stdio or HTTP command). A failure is recorded in its errors.
async fn measure_ours_more(
    spec: &ServerSpec,
    opts: &SuiteOptions,
    root: &Path,
    logs: &Path,
    cpus: Option<(usize, usize)>,
    results: &mut SuiteResults,
) {
    let Some(program) = spec.stdio.as_ref().or(spec.http_stateless.as_ref()).and_then(|c| c.first()) else { return };
    let mcp = root.join(program);
    let this = match std::env::current_exe() {
        Ok(p) => p,
        Err(e) => {
            progress(format!("cannot find this binary: {e}"));
            return;
        }
    };
    progress(format!("our client against rmcp's on {}", spec.name));
    let client = CompareOptions {
        mcp: mcp.clone(),
        ours: this.clone(),
        rmcp: root.join(RMCP_CLIENT_DRIVER),
        transports: vec![client_load::Transport::Stdio, client_load::Transport::Http],
        inflight: vec![1, 64],
        eras: vec![client_load::Era::Legacy, client_load::Era::Modern],
        rounds: opts.runs,
        warmup: if opts.smoke { Duration::from_millis(200) } else { opts.warmup },
        duration: opts.client_duration,
        cpus,
        logs: logs.to_path_buf(),
    };
    match client_load::compare(&client).await {
        Ok(r) => results.client = Some(r),
        Err(e) => push_error(results, &spec.name, format!("client comparison: {e:#}")),
    }
    progress(format!("{} notification streams on {} and the raw SSE baseline", opts.stream_count, spec.name));
    let stream_opts = StreamsOptions {
        mcp,
        bench: this,
        count: opts.stream_count,
        kinds: vec![StreamKind::Listen, StreamKind::Get, StreamKind::Raw],
        rounds: opts.runs,
        concurrency: 64,
        settle: if opts.smoke { Duration::from_millis(300) } else { Duration::from_secs(1) },
        timeout: Duration::from_secs(120),
        cpus,
        logs: logs.to_path_buf(),
        http2: None,
    };
    match streams::run(&stream_opts).await {
        Ok(r) => results.streams = Some(r),
        Err(e) => push_error(results, &spec.name, format!("notification streams: {e:#}")),
    }
    progress(format!("the same over HTTP/2 (h2c), {STREAMS_H2_CONNECTIONS} connections"));
    let stream_opts = StreamsOptions { http2: Some(STREAMS_H2_CONNECTIONS), ..stream_opts };
    match streams::run(&stream_opts).await {
        Ok(r) => results.streams_http2 = Some(r),
        Err(e) => push_error(results, &spec.name, format!("notification streams over HTTP/2: {e:#}")),
    }
}

fn push_error(results: &mut SuiteResults, server: &str, e: String) {
    progress(format!("{server}: {e}"));
    if let Some(r) = results.servers.iter_mut().find(|r| r.name == server) {
        r.errors.push(e);
    }
}

fn setup_hint(spec: &ServerSpec) -> String {
    spec.setup.as_ref().map(|s| format!(" (setup: {s})")).unwrap_or_default()
}

/// A server the suite measures, with where its results go and what failed so far.
struct MeasuredServer<'a> {
    /// How to measure it.
    bench: ServerBench<'a>,
    /// Its index in [`SuiteResults::servers`].
    slot: usize,
    /// Labels ([`Measurement::label`]) of its measurements that failed: later rounds skip them.
    failed: BTreeSet<String>,
}

/// Measures the servers in interleaved rounds, so that the machine's drift during the suite
/// spreads over every server instead of shifting the ratios between them: round k does run k
/// of every load measurement of every server, in the servers file's order on odd rounds and
/// reversed on even ones ([`round_order`]). Spawn to first call (which repeats by itself) comes
/// after, for every server in one more round. The medians are taken once all rounds are done.
async fn measure_interleaved(measured: &mut [MeasuredServer<'_>], servers: &mut [ServerResults], runs: usize) {
    for round in 1..=runs {
        let order = round_order(measured.len(), round);
        progress(format!("round {round}/{runs}: {}", server_names(measured, &order)));
        for i in order {
            let MeasuredServer { bench, slot, failed } = &mut measured[i];
            bench.run_round(round, &mut servers[*slot], failed).await;
        }
    }
    let order: Vec<usize> =
        round_order(measured.len(), runs + 1).into_iter().filter(|&i| measured[i].bench.spec.stdio.is_some()).collect();
    if !order.is_empty() {
        progress(format!("spawn to first call: {}", server_names(measured, &order)));
    }
    for i in order {
        let MeasuredServer { bench, slot, .. } = &measured[i];
        bench.spawn_to_first_call(&mut servers[*slot]).await;
    }
    for server in measured.iter() {
        take_medians(&mut servers[server.slot]);
    }
}

/// The names of `measured[i]` for each `i` of `order`, comma-separated.
fn server_names(measured: &[MeasuredServer<'_>], order: &[usize]) -> String {
    order.iter().map(|&i| measured[i].bench.spec.name.as_str()).collect::<Vec<_>>().join(", ")
}

/// The order (indices) in which `count` servers are measured in round `round` (from 1): as
/// given on odd rounds, reversed on even ones, so that no server is always first.
fn round_order(count: usize, round: usize) -> Vec<usize> {
    if round % 2 == 1 {
        (0..count).collect()
    } else {
        (0..count).rev().collect()
    }
}

/// The case `is_it` picks in `cases`, added with `new` if it has no run yet.
fn case_mut<C>(cases: &mut Vec<C>, is_it: impl Fn(&C) -> bool, new: impl FnOnce() -> C) -> &mut C {
    let index = cases.iter().position(is_it).unwrap_or_else(|| {
        cases.push(new());
        cases.len() - 1
    });
    &mut cases[index]
}

/// Fills in the medians (and totals) of every case of `r` from all its runs.
fn take_medians(r: &mut ServerResults) {
    for case in &mut r.http {
        case.median = LoadMedian::of_runs(&case.runs);
    }
    for case in &mut r.stdio {
        case.median = LoadMedian::of_runs(&case.runs);
    }
    for case in &mut r.memory {
        let runs = &case.runs;
        case.bytes_per_session = median_of(runs.iter().map(|x| x.bytes_per_session));
        case.rss_before = median_of(runs.iter().map(|x| Some(x.rss_before as f64)));
        case.rss_after = median_of(runs.iter().map(|x| Some(x.rss_after as f64)));
        case.failed = runs.iter().map(|x| x.failed).sum();
    }
}

/// The figures of one load run (HTTP or stdio) that its case's medians are taken over.
struct RunFigures {
    req_per_s: f64,
    cpu_us_per_call: Option<f64>,
    client_cpu_us_per_call: Option<f64>,
    latency: LatencySummary,
    calls: u64,
    errors: u64,
}

/// `From<&Result> for RunFigures` for load results that have all of its fields.
macro_rules! run_figures_from {
    ($($result:ty),+) => {$(
        impl From<&$result> for RunFigures {
            fn from(run: &$result) -> Self {
                Self {
                    req_per_s: run.req_per_s,
                    cpu_us_per_call: run.cpu_us_per_call,
                    client_cpu_us_per_call: run.client_cpu_us_per_call,
                    latency: run.latency,
                    calls: run.calls,
                    errors: run.errors,
                }
            }
        }
    )+};
}
run_figures_from!(HttpResult, StdioResult);

impl LoadMedian {
    /// The medians of the figures of `runs` (calls and errors added up).
    fn of_runs<'r, R>(runs: &'r [R]) -> Self
    where
        RunFigures: From<&'r R>,
    {
        let runs: Vec<RunFigures> = runs.iter().map(RunFigures::from).collect();
        Self {
            req_per_s: median_of(runs.iter().map(|x| Some(x.req_per_s))),
            cpu_us_per_call: median_of(runs.iter().map(|x| x.cpu_us_per_call)),
            client_cpu_us_per_call: median_of(runs.iter().map(|x| x.client_cpu_us_per_call)),
            latency: LatencySummary::median(&runs.iter().map(|x| x.latency).collect::<Vec<_>>()),
            calls: runs.iter().map(|x| x.calls).sum(),
            errors: runs.iter().map(|x| x.errors).sum(),
        }
    }
}

/// One load measurement of a server, done once per round.
enum Measurement<'a> {
    /// HTTP throughput in one mode at every client count, against one server process.
    Http { command: &'a [String], mode: Mode, protocol: &'a str },
    /// Memory per idle session, on a fresh server.
    Memory { command: &'a [String], count: usize },
    /// stdio throughput with some calls in flight.
    Stdio { command: &'a [String], inflight: usize },
}

impl Measurement<'_> {
    /// Its name in errors, and in [`MeasuredServer::failed`].
    fn label(&self) -> String {
        match self {
            Measurement::Http { mode, .. } => format!("http {}", mode.as_str()),
            Measurement::Memory { count, .. } => format!("memory, {count} sessions"),
            Measurement::Stdio { inflight, .. } => format!("stdio, {inflight} in flight"),
        }
    }
}

/// How to measure one server: its commands, the suite's settings and where it runs.
struct ServerBench<'a> {
    spec: &'a ServerSpec,
    opts: &'a SuiteOptions,
    root: &'a Path,
    server_cpu: Option<usize>,
    logs: &'a Path,
}

impl<'a> ServerBench<'a> {
    /// How to start it for `kind` of measurement (pinned, logging to `{name}-{kind}.log`).
    fn spawn_options(&self, kind: &str) -> SpawnOptions {
        SpawnOptions {
            cwd: Some(self.root.to_path_buf()),
            cpu: self.server_cpu,
            piped: false,
            log: Some(self.logs.join(format!("{}-{kind}.log", self.spec.name))),
        }
    }

    /// Starts its HTTP server `argv` on a free port; returns the process and the endpoint URL.
    async fn start_http(&self, argv: &[String], kind: &str) -> Result<(ServerProcess, String)> {
        let port = process::free_port()?;
        let argv = config::with_port(argv, port);
        let mut server = process::spawn(&argv, &self.spawn_options(kind))?;
        let addr: SocketAddr = ([127, 0, 0, 1], port).into();
        server.wait_for_port(addr, Duration::from_secs(30)).await?;
        Ok((server, format!("http://127.0.0.1:{port}{}", self.spec.path)))
    }

    /// The load measurements of one round, in the order they run.
    fn measurements(&self) -> Vec<Measurement<'a>> {
        let spec = self.spec;
        let mut plan = Vec::new();
        if let Some(command) = &spec.http_sessions {
            plan.push(Measurement::Http { command, mode: Mode::Sessions, protocol: mcp::LEGACY_VERSION });
            plan.extend(self.opts.session_counts.iter().map(|&count| Measurement::Memory { command, count }));
        }
        if let Some(command) = &spec.http_stateless {
            plan.push(Measurement::Http { command, mode: Mode::Stateless, protocol: spec.stateless_protocol() });
        }
        if let Some(command) = &spec.stdio {
            plan.extend(self.opts.inflight.iter().map(|&inflight| Measurement::Stdio { command, inflight }));
        }
        plan
    }

    /// Does run `round` of each of its load measurements, adding the runs to `r`. A measurement
    /// that fails is recorded in `r.errors` and in `failed`, and skipped from then on.
    async fn run_round(&self, round: usize, r: &mut ServerResults, failed: &mut BTreeSet<String>) {
        for measurement in self.measurements() {
            let label = measurement.label();
            if failed.contains(&label) {
                continue;
            }
            let outcome = match measurement {
                Measurement::Http { command, mode, protocol } => self.http(command, mode, protocol, round, r).await,
                Measurement::Memory { command, count } => self.memory(command, count, round, r).await,
                Measurement::Stdio { command, inflight } => self.stdio(command, inflight, round, r).await,
            };
            if let Err(e) = outcome {
                let runs = self.opts.runs;
                progress(format!("{} {label} run {round}/{runs} failed (not measured again): {e:#}", self.spec.name));
                r.errors.push(format!("{label} (run {round}/{runs}): {e:#}"));
                failed.insert(label);
            }
        }
    }

    /// Measures spawn to first call (`spawn_repeat` tries), if it serves stdio.
    async fn spawn_to_first_call(&self, r: &mut ServerResults) {
        let Some(command) = &self.spec.stdio else { return };
        let name = &self.spec.name;
        progress(format!("{name}: spawn to first call ×{}", self.opts.spawn_repeat));
        let load = SpawnLoad {
            command: command.clone(),
            spawn: self.spawn_options("spawn"),
            repeat: self.opts.spawn_repeat,
            timeout: Duration::from_secs(60),
        };
        match spawn::run(&load).await {
            Ok(s) => {
                progress(format!(
                    "{name}: spawn median {} ms, p90 {} ms, {} failed",
                    fmt_opt(s.median_ms),
                    fmt_opt(s.p90_ms),
                    s.failures
                ));
                r.spawn = Some(s);
            }
            Err(e) => r.errors.push(format!("spawn: {e:#}")),
        }
    }

    /// One run at every client count against one server process started for them.
    async fn http(
        &self,
        cmd: &[String],
        mode: Mode,
        protocol: &str,
        round: usize,
        r: &mut ServerResults,
    ) -> Result<()> {
        let kind = format!("http-{}", mode.as_str());
        let (server, url) = self.start_http(cmd, &kind).await?;
        let outcome = async {
            for &clients in &self.opts.clients {
                let load = HttpLoad {
                    url: url.clone(),
                    mode,
                    protocol: protocol.to_owned(),
                    clients,
                    warmup: self.opts.warmup,
                    duration: self.opts.duration,
                    pid: Some(server.pid),
                    request_timeout: Duration::from_secs(30),
                    tool: self.spec.tool().to_owned(),
                    bearer: None,
                };
                let res = http_load::run(&load).await?;
                progress(format!(
                    "{} http {} ×{clients} run {round}/{}: {:.0} req/s, {} µs CPU/call (load generator {}), p50 {} ms, \
                     p99 {} ms, {} errors{}",
                    self.spec.name,
                    mode.as_str(),
                    self.opts.runs,
                    res.req_per_s,
                    fmt_opt(res.cpu_us_per_call),
                    fmt_opt(res.client_cpu_us_per_call),
                    fmt_opt(res.latency.p50_ms),
                    fmt_opt(res.latency.p99_ms),
                    res.errors,
                    res.first_error.as_ref().map(|e| format!(" (first: {e})")).unwrap_or_default()
                ));
                if r.server_info.is_none() {
                    r.server_info = res.server_info.clone();
                }
                let case = case_mut(
                    &mut r.http,
                    |c| c.mode == mode && c.clients == clients,
                    || HttpCase {
                        mode,
                        protocol: protocol.to_owned(),
                        clients,
                        runs: Vec::new(),
                        median: LoadMedian::default(),
                    },
                );
                case.runs.push(res);
            }
            Ok::<_, anyhow::Error>(())
        }
        .await;
        let hint = server.log_hint();
        server.stop().await;
        outcome.map_err(|e| e.context(format!("against {url}{hint}")))
    }

    /// One run of `count` idle sessions, on a fresh server.
    async fn memory(&self, cmd: &[String], count: usize, round: usize, r: &mut ServerResults) -> Result<()> {
        let (server, url) = self.start_http(cmd, "memory").await?;
        let load = SessionsLoad {
            url: url.clone(),
            count,
            concurrency: 32,
            protocol: mcp::LEGACY_VERSION.into(),
            pid: server.pid,
            settle: if self.opts.smoke { Duration::from_millis(300) } else { Duration::from_secs(1) },
            call: None,
        };
        let res = sessions::run(&load).await;
        let hint = server.log_hint();
        server.stop().await;
        let res = res.with_context(|| format!("against {url}{hint}"))?;
        progress(format!(
            "{} memory {count} sessions run {round}/{}: {} bytes/session (RSS {:.1} → {:.1} MiB), {} failed{}",
            self.spec.name,
            self.opts.runs,
            fmt_opt(res.bytes_per_session),
            res.rss_before as f64 / 1048576.0,
            res.rss_after as f64 / 1048576.0,
            res.failed,
            res.first_error.as_ref().map(|e| format!(" (first: {e})")).unwrap_or_default()
        ));
        case_mut(&mut r.memory, |c| c.count == count, || MemoryCase { count, ..Default::default() }).runs.push(res);
        Ok(())
    }

    /// One run with `inflight` calls in flight.
    async fn stdio(&self, cmd: &[String], inflight: usize, round: usize, r: &mut ServerResults) -> Result<()> {
        let load = StdioLoad {
            command: cmd.to_vec(),
            spawn: self.spawn_options("stdio"),
            inflight,
            warmup: self.opts.warmup,
            duration: self.opts.duration,
        };
        let res = stdio_load::run(&load).await?;
        progress(format!(
            "{} stdio {inflight} in flight run {round}/{}: {:.0} req/s, {} µs CPU/call (load generator {}), p50 {} ms, \
             {} errors{}",
            self.spec.name,
            self.opts.runs,
            res.req_per_s,
            fmt_opt(res.cpu_us_per_call),
            fmt_opt(res.client_cpu_us_per_call),
            fmt_opt(res.latency.p50_ms),
            res.errors,
            res.first_error.as_ref().map(|e| format!(" (first: {e})")).unwrap_or_default()
        ));
        if r.server_info.is_none() {
            r.server_info = res.server_info.clone();
        }
        case_mut(&mut r.stdio, |c| c.inflight == inflight, || StdioCase { inflight, ..Default::default() })
            .runs
            .push(res);
        Ok(())
    }
}

/// A number with few digits, or `—`.
pub fn fmt_opt(v: Option<f64>) -> String {
    match v {
        None => "—".into(),
        Some(v) => fmt_num(v),
    }
}

/// A number with three significant digits (at least), without exponent.
pub fn fmt_num(v: f64) -> String {
    let a = v.abs();
    if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

fn write_outputs(results: &SuiteResults, opts: &SuiteOptions) -> Result<()> {
    std::fs::create_dir_all(&opts.out).with_context(|| format!("cannot create {}", opts.out.display()))?;
    let json_path = opts.out.join("results.json");
    // The run this one replaces is the report's "before" (unreadable or absent: no comparison).
    let previous = read_results(&json_path).ok();
    std::fs::write(&json_path, serde_json::to_string_pretty(results)?)
        .with_context(|| format!("cannot write {}", json_path.display()))?;
    let docs = opts.docs.clone().unwrap_or_else(|| opts.out.clone());
    let md_path = write_report(results, previous.as_ref(), &docs)?;
    progress(format!("wrote {} and {}", json_path.display(), md_path.display()));
    Ok(())
}

/// Reads the `results.json` of a run.
pub fn read_results(path: &Path) -> Result<SuiteResults> {
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("{} is not the results of a suite", path.display()))
}

/// Writes `BENCHMARKS.md` and its charts into `docs` (compared with `previous`, when given);
/// returns the report's path.
pub fn write_report(results: &SuiteResults, previous: Option<&SuiteResults>, docs: &Path) -> Result<PathBuf> {
    std::fs::create_dir_all(docs).with_context(|| format!("cannot create {}", docs.display()))?;
    let charts = chart::write_charts(results, docs)?;
    let md_path = docs.join("BENCHMARKS.md");
    let chart_names: Vec<String> =
        charts.iter().filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned())).collect();
    std::fs::write(&md_path, report::markdown(results, &chart_names, previous))
        .with_context(|| format!("cannot write {}", md_path.display()))?;
    Ok(md_path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn number_formatting() {
        assert_eq!(fmt_num(12345.6), "12346");
        assert_eq!(fmt_num(42.04), "42.0");
        assert_eq!(fmt_num(2.5049), "2.50");
        assert_eq!(fmt_num(0.01234), "0.012");
        assert_eq!(fmt_opt(None), "—");
    }

    #[test]
    fn smoke_is_small() {
        let s = SuiteOptions::smoke();
        assert_eq!(
            (s.runs, s.clients.clone(), s.session_counts.clone(), s.spawn_repeat),
            (1, vec![1, 16], vec![200], 3)
        );
        assert!(s.docs.is_none());
        assert_eq!(SuiteOptions::full().docs.as_deref(), Some(Path::new("docs")));
    }

    #[test]
    fn rounds_alternate_the_server_order() {
        assert_eq!(round_order(3, 1), [0, 1, 2]);
        assert_eq!(round_order(3, 2), [2, 1, 0]);
        assert_eq!(round_order(3, 3), [0, 1, 2]);
        assert!(round_order(0, 2).is_empty());
    }

    fn stdio_run(inflight: usize, req_per_s: f64, cpu_us_per_call: Option<f64>) -> StdioResult {
        StdioResult {
            inflight,
            protocol: mcp::LEGACY_VERSION.into(),
            duration_s: 1.0,
            calls: req_per_s as u64,
            errors: 1,
            req_per_s,
            latency: LatencySummary { p50_ms: Some(req_per_s / 1000.0), ..Default::default() },
            cpu_us_per_call,
            client_cpu_us_per_call: None,
            first_error: None,
            server_info: None,
        }
    }

    #[test]
    fn runs_gather_per_case_across_rounds_and_medians_come_last() {
        let mut r = ServerResults::default();
        let rounds = [[(1, 3000.0, Some(9.0)), (64, 9000.0, None)], [(1, 1000.0, None), (64, 7000.0, Some(4.0))]];
        for round in rounds {
            for (inflight, req_per_s, cpu) in round {
                case_mut(&mut r.stdio, |c| c.inflight == inflight, || StdioCase { inflight, ..Default::default() })
                    .runs
                    .push(stdio_run(inflight, req_per_s, cpu));
            }
        }
        take_medians(&mut r);
        assert_eq!(r.stdio.iter().map(|c| (c.inflight, c.runs.len())).collect::<Vec<_>>(), [(1, 2), (64, 2)]);
        let median = &r.stdio[0].median;
        assert_eq!(
            (median.req_per_s, median.cpu_us_per_call, median.client_cpu_us_per_call),
            (Some(2000.0), Some(9.0), None)
        );
        assert_eq!((median.latency.p50_ms, median.calls, median.errors), (Some(2.0), 4000, 2));
        assert_eq!(r.stdio[1].median.req_per_s, Some(8000.0));
    }
}
