//! Many open notification streams on one instance (issue 30, item 4): memory per stream and
//! the time to deliver one `notifications/resources/updated` to all of them, next to a raw
//! axum server broadcasting one SSE event to as many connections ([`crate::baseline::serve_sse`]).
//!
//! Three kinds of stream, each on its own HTTP/1.1 connection from this process:
//!
//! - **listen**: a 2026-07-28 `subscriptions/listen` POST to `mcp serve --http` subscribing to
//!   `test://watched-resource`; ready when its `notifications/subscriptions/acknowledged`
//!   arrives.
//! - **get**: a legacy session (`initialize` at 2025-06-18, `notifications/initialized`,
//!   `resources/subscribe` to the same URI, all on that connection), then `GET /mcp` with its
//!   `Mcp-Session-Id`; ready when the GET's 200 arrives. Its memory includes the session's.
//! - **raw**: `GET /sse` of the baseline; ready when its 200 arrives.
//!
//! Once every stream is ready (and a settle time has passed), the server's RSS is read
//! (KiB per stream: growth over the RSS before the streams were opened, divided by their
//! number), then one update is triggered (our server: a 2026-07-28 `tools/call` of the
//! reference server's `test_touch_resource`; the baseline: `POST /broadcast`) and the time
//! from sending the trigger to the last stream receiving its event is the delivery time
//! (deliveries/s: streams ÷ that time). Every event is checked: it must be that notification,
//! for that URI. The load generator is one tokio thread, as for the other measurements; it
//! reads every event, so the delivery time includes its own share of the work, the same for
//! both servers.
//!
//! With `--http2 --connections N` ([`StreamsOptions::http2`]), the streams are HTTP/2 streams
//! instead, spread evenly over N HTTP/2 connections (h2c, prior knowledge) made when the run
//! starts (after the RSS before is read: their cost is in the per-stream figure): our server
//! runs with `--http2` (and `--http2-max-streams` room enough), the baseline with HTTP/2 too
//! (hyper-util's `server::conn::auto`, the same room). The trigger is an HTTP/1.1 request in
//! both modes, for both servers. A get stream's session requests go on its stream's connection.

use crate::mcp::{self, SseParser};
use crate::proc_stats;
use crate::process::{self, ServerProcess, SpawnOptions};
use crate::stats::median_of;
use anyhow::{anyhow, bail, Context as _, Result};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::{http1, http2};
use hyper::header::{HeaderName, HeaderValue, ACCEPT, CONTENT_TYPE, HOST};
use hyper::{Method, Request};
use hyper_util::rt::{TokioExecutor, TokioIo};
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::net::TcpStream;
use tokio::sync::{Notify, Semaphore};

/// The resource every stream subscribes to (the reference server's).
pub const WATCHED: &str = "test://watched-resource";
/// The reference server's tool that announces an update of a resource.
pub const TOUCH_TOOL: &str = "test_touch_resource";

/// A kind of stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum StreamKind {
    /// 2026-07-28 `subscriptions/listen` on `mcp serve --http`.
    Listen,
    /// Legacy session + `GET /mcp` on `mcp serve --http`.
    Get,
    /// The raw axum SSE baseline (`GET /sse`).
    Raw,
}

impl StreamKind {
    /// Its name.
    pub fn as_str(self) -> &'static str {
        match self {
            StreamKind::Listen => "listen",
            StreamKind::Get => "get",
            StreamKind::Raw => "raw",
        }
    }
}

/// How [`run`] runs.
#[derive(Debug, Clone)]
pub struct StreamsOptions {
    /// Our server (`mcp`).
    pub mcp: PathBuf,
    /// This binary (`mcpwire-bench`), for `baseline-sse`.
    pub bench: PathBuf,
    /// Streams per run.
    pub count: usize,
    /// The kinds, measured in this order on odd rounds and reversed on even ones.
    pub kinds: Vec<StreamKind>,
    /// Rounds.
    pub rounds: usize,
    /// Streams being opened at once.
    pub concurrency: usize,
    /// Wait after the last stream is ready, before reading memory.
    pub settle: Duration,
    /// Longest wait for the streams to open, and for the deliveries.
    pub timeout: Duration,
    /// (server CPU, load generator CPU), when pinned (the caller pins itself).
    pub cpus: Option<(usize, usize)>,
    /// Where server logs go.
    pub logs: PathBuf,
    /// `Some(n)`: HTTP/2 streams over `n` connections (h2c); `None`: one HTTP/1.1 connection
    /// per stream.
    pub http2: Option<usize>,
}

/// One run of one kind.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct StreamsRun {
    /// Streams asked for.
    pub count: usize,
    /// Streams ready.
    pub opened: usize,
    /// Streams that failed to open.
    pub failed: usize,
    /// Seconds to open them all.
    pub open_s: f64,
    /// Server RSS before, bytes.
    pub rss_before: u64,
    /// Server RSS with every stream open, bytes.
    pub rss_after: u64,
    /// (after − before) ÷ opened, KiB.
    pub kib_per_stream: Option<f64>,
    /// Streams that got the event.
    pub delivered: usize,
    /// From the trigger to the last delivery, ms (`None` if not all arrived).
    pub deliver_ms: Option<f64>,
    /// opened ÷ delivery time.
    pub deliveries_per_s: Option<f64>,
    /// The first error.
    pub first_error: Option<String>,
}

/// Every run of one kind, and medians.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct StreamsCase {
    /// `listen`, `get` or `raw`.
    pub kind: String,
    /// Streams per run.
    pub count: usize,
    /// Median KiB per stream.
    pub kib_per_stream: Option<f64>,
    /// Median delivery time, ms.
    pub deliver_ms: Option<f64>,
    /// Median deliveries per second.
    pub deliveries_per_s: Option<f64>,
    /// Every run.
    pub runs: Vec<StreamsRun>,
    /// Why a run failed outright, if one did.
    pub error: Option<String>,
}

/// Everything [`run`] measured.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct StreamsResults {
    /// Streams per run.
    pub count: usize,
    /// Rounds.
    pub rounds: usize,
    /// HTTP/2 connections the streams were spread over (`None`: HTTP/1.1, one each).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http2_connections: Option<usize>,
    /// One case per kind.
    pub cases: Vec<StreamsCase>,
}

impl StreamsResults {
    /// The case of `kind`.
    pub fn case(&self, kind: StreamKind) -> Option<&StreamsCase> {
        self.cases.iter().find(|c| c.kind == kind.as_str())
    }
}

fn progress(msg: impl AsRef<str>) {
    eprintln!("mcpwire-bench: {}", msg.as_ref());
}

/// Raises this process's soft limit of open files to its hard limit (children inherit it);
/// returns the new soft limit.
pub fn raise_fd_limit() -> u64 {
    // SAFETY: getrlimit/setrlimit on a zeroed, then filled, rlimit.
    unsafe {
        let mut r: libc::rlimit = std::mem::zeroed();
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) != 0 {
            return 0;
        }
        if r.rlim_cur < r.rlim_max {
            let raised = libc::rlimit { rlim_cur: r.rlim_max, rlim_max: r.rlim_max };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                return raised.rlim_cur as u64;
            }
        }
        r.rlim_cur as u64
    }
}

/// Measures every kind, in interleaved rounds (see the module docs).
pub async fn run(opts: &StreamsOptions) -> Result<StreamsResults> {
    if opts.rounds == 0 || opts.count == 0 {
        bail!("--rounds and --count must be at least 1");
    }
    if opts.http2 == Some(0) {
        bail!("--connections must be at least 1");
    }
    let limit = raise_fd_limit();
    if (limit as usize) < opts.count + 100 {
        progress(format!("warning: {limit} open files allowed, {} streams asked for", opts.count));
    }
    let mut results =
        StreamsResults { count: opts.count, rounds: opts.rounds, http2_connections: opts.http2, ..Default::default() };
    for &kind in &opts.kinds {
        results.cases.push(StreamsCase { kind: kind.as_str().into(), count: opts.count, ..Default::default() });
    }
    for round in 1..=opts.rounds {
        let mut order: Vec<usize> = (0..opts.kinds.len()).collect();
        if round % 2 == 0 {
            order.reverse();
        }
        for i in order {
            let kind = opts.kinds[i];
            if results.cases[i].error.is_some() {
                continue;
            }
            match run_once(opts, kind).await {
                Ok(r) => {
                    progress(format!(
                        "streams {}{} ×{} round {round}/{}: {} opened in {:.2} s ({} failed), {} KiB/stream, {}/{} \
                         delivered in {} ms ({} /s){}",
                        kind.as_str(),
                        opts.http2.map(|n| format!(" (h2c, {n} connections)")).unwrap_or_default(),
                        opts.count,
                        opts.rounds,
                        r.opened,
                        r.open_s,
                        r.failed,
                        crate::suite::fmt_opt(r.kib_per_stream),
                        r.delivered,
                        r.opened,
                        crate::suite::fmt_opt(r.deliver_ms),
                        crate::suite::fmt_opt(r.deliveries_per_s),
                        r.first_error.as_ref().map(|e| format!(" (first error: {e})")).unwrap_or_default()
                    ));
                    results.cases[i].runs.push(r);
                }
                Err(e) => {
                    progress(format!("streams {} failed (not measured again): {e:#}", kind.as_str()));
                    results.cases[i].error = Some(format!("{e:#}"));
                }
            }
        }
    }
    for case in &mut results.cases {
        case.kib_per_stream = median_of(case.runs.iter().map(|r| r.kib_per_stream));
        case.deliver_ms = median_of(case.runs.iter().map(|r| r.deliver_ms));
        case.deliveries_per_s = median_of(case.runs.iter().map(|r| r.deliveries_per_s));
    }
    Ok(results)
}

/// Where a stream's server is.
#[derive(Clone)]
struct Endpoint {
    addr: SocketAddr,
    host: HeaderValue,
}

/// The streams one HTTP/2 connection carries at most, for `count` streams over `connections`,
/// with room for the requests that open them (`concurrency` at once).
fn streams_per_connection(count: usize, connections: usize, concurrency: usize) -> u32 {
    let per = count.div_ceil(connections.max(1)) + concurrency.max(1);
    u32::try_from(per).unwrap_or(u32::MAX)
}

/// What the stream tasks share.
struct Shared {
    ready: AtomicUsize,
    failed: AtomicUsize,
    delivered: AtomicUsize,
    /// How many deliveries complete the run (set once every stream is ready).
    expected: AtomicUsize,
    last_delivery: Mutex<Option<Instant>>,
    first_error: Mutex<Option<String>>,
    changed: Notify,
}

impl Shared {
    fn fail(&self, e: String) {
        self.first_error.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(e);
        self.failed.fetch_add(1, Ordering::SeqCst);
        self.changed.notify_one();
    }
}

async fn start_server(opts: &StreamsOptions, kind: StreamKind) -> Result<(ServerProcess, Endpoint)> {
    let port = process::free_port()?;
    let addr = format!("127.0.0.1:{port}");
    let room = (opts.count + 1000).to_string();
    let mut argv: Vec<String> = match kind {
        StreamKind::Raw => {
            vec![opts.bench.to_string_lossy().into_owned(), "baseline-sse".into(), "--port".into(), port.to_string()]
        }
        StreamKind::Listen | StreamKind::Get => vec![
            opts.mcp.to_string_lossy().into_owned(),
            "serve".into(),
            "--max-connections".into(),
            room.clone(),
            "--max-sessions".into(),
            room,
        ],
    };
    if let Some(connections) = opts.http2 {
        let per = streams_per_connection(opts.count, connections, opts.concurrency).to_string();
        match kind {
            StreamKind::Raw => argv.extend(["--http2".into(), per]),
            StreamKind::Listen | StreamKind::Get => argv.extend(["--http2".into(), "--http2-max-streams".into(), per]),
        }
    }
    if kind != StreamKind::Raw {
        argv.extend(["--http".into(), addr.clone()]);
    }
    let suffix = if opts.http2.is_some() { "-h2" } else { "" };
    let spawn = SpawnOptions {
        cpu: opts.cpus.map(|c| c.0),
        log: Some(opts.logs.join(format!("streams-{}{suffix}.log", kind.as_str()))),
        ..Default::default()
    };
    let mut server = process::spawn(&argv, &spawn)?;
    let sock: SocketAddr = ([127, 0, 0, 1], port).into();
    server.wait_for_port(sock, Duration::from_secs(30)).await?;
    Ok((server, Endpoint { addr: sock, host: HeaderValue::from_str(&addr)? }))
}

async fn run_once(opts: &StreamsOptions, kind: StreamKind) -> Result<StreamsRun> {
    let (server, endpoint) = start_server(opts, kind).await?;
    let outcome = measure(opts, kind, &endpoint, server.pid).await;
    let hint = server.log_hint();
    server.stop().await;
    outcome.map_err(|e| e.context(format!("{} streams{hint}", kind.as_str())))
}

async fn measure(opts: &StreamsOptions, kind: StreamKind, endpoint: &Endpoint, pid: u32) -> Result<StreamsRun> {
    // Warm-up: one trigger, so that what the first one allocates is in the RSS before.
    trigger(kind, endpoint).await.context("the warm-up trigger")?;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let rss_before = proc_stats::rss_bytes(pid)?;
    let shared = Arc::new(Shared {
        ready: AtomicUsize::new(0),
        failed: AtomicUsize::new(0),
        delivered: AtomicUsize::new(0),
        expected: AtomicUsize::new(usize::MAX),
        last_delivery: Mutex::new(None),
        first_error: Mutex::new(None),
        changed: Notify::new(),
    });
    let gate = Arc::new(Semaphore::new(opts.concurrency.max(1)));
    let started = Instant::now();
    // HTTP/2: the connections every stream goes on, made now (their memory is the streams').
    let mut pool = Vec::new();
    for _ in 0..opts.http2.unwrap_or(0) {
        pool.push(connect_h2(endpoint).await.map_err(|e| anyhow!(e)).context("an HTTP/2 connection")?);
    }
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..opts.count {
        let (shared, gate, endpoint) = (shared.clone(), gate.clone(), endpoint.clone());
        let on = (!pool.is_empty()).then(|| pool[i % pool.len()].clone());
        tasks.spawn(async move {
            let permit = gate.acquire_owned().await;
            match open_stream(kind, &endpoint, i, on).await {
                Ok((sender, body, parser)) => {
                    drop(permit);
                    shared.ready.fetch_add(1, Ordering::SeqCst);
                    shared.changed.notify_one();
                    // The sender keeps the connection's request side alive.
                    let _sender = sender;
                    await_event(body, parser, &shared).await;
                }
                Err(e) => shared.fail(e),
            }
        });
    }
    let deadline = started + opts.timeout;
    loop {
        let done = shared.ready.load(Ordering::SeqCst) + shared.failed.load(Ordering::SeqCst);
        if done >= opts.count {
            break;
        }
        if Instant::now() >= deadline {
            bail!("only {done} of {} streams opened in {:?}", opts.count, opts.timeout);
        }
        let _ = tokio::time::timeout(Duration::from_millis(100), shared.changed.notified()).await;
    }
    let open_s = started.elapsed().as_secs_f64();
    let opened = shared.ready.load(Ordering::SeqCst);
    tokio::time::sleep(opts.settle).await;
    let rss_after = proc_stats::rss_bytes(pid)?;
    shared.expected.store(opened, Ordering::SeqCst);
    let t0 = Instant::now();
    let trigger_outcome = trigger(kind, endpoint).await;
    let deadline = t0 + opts.timeout;
    while shared.delivered.load(Ordering::SeqCst) < opened && Instant::now() < deadline {
        let _ = tokio::time::timeout(Duration::from_millis(50), shared.changed.notified()).await;
    }
    let delivered = shared.delivered.load(Ordering::SeqCst);
    let last = *shared.last_delivery.lock().unwrap_or_else(|p| p.into_inner());
    tasks.abort_all();
    while tasks.join_next().await.is_some() {}
    trigger_outcome.context("the trigger")?;
    let deliver = (delivered == opened && opened > 0).then(|| last.map(|l| l.saturating_duration_since(t0))).flatten();
    let mut first_error = shared.first_error.lock().unwrap_or_else(|p| p.into_inner()).clone();
    if delivered < opened && first_error.is_none() {
        first_error = Some(format!("{} of {opened} streams got no event in {:?}", opened - delivered, opts.timeout));
    }
    Ok(StreamsRun {
        count: opts.count,
        opened,
        failed: shared.failed.load(Ordering::SeqCst),
        open_s,
        rss_before,
        rss_after,
        kib_per_stream: (opened > 0).then(|| rss_after.saturating_sub(rss_before) as f64 / 1024.0 / opened as f64),
        delivered,
        deliver_ms: deliver.map(|d| d.as_secs_f64() * 1e3),
        deliveries_per_s: deliver.map(|d| opened as f64 / d.as_secs_f64().max(1e-9)),
        first_error,
    })
}

type H2Sender = http2::SendRequest<Full<Bytes>>;

/// A connection to send requests on: HTTP/1.1 of its own, or an HTTP/2 one shared.
enum Sender {
    Http1(http1::SendRequest<Full<Bytes>>),
    Http2(H2Sender),
}

impl Sender {
    fn is_http2(&self) -> bool {
        matches!(self, Sender::Http2(_))
    }

    async fn send(&mut self, req: Request<Full<Bytes>>) -> Result<hyper::Response<hyper::body::Incoming>, String> {
        match self {
            Sender::Http1(s) => {
                s.ready().await.map_err(|e| format!("connection closed: {e}"))?;
                s.send_request(req).await.map_err(|e| format!("request failed: {e}"))
            }
            Sender::Http2(s) => {
                s.ready().await.map_err(|e| format!("connection closed: {e}"))?;
                s.send_request(req).await.map_err(|e| format!("request failed: {e}"))
            }
        }
    }
}

async fn connect(endpoint: &Endpoint) -> Result<Sender, String> {
    let stream = TcpStream::connect(endpoint.addr).await.map_err(|e| format!("connect: {e}"))?;
    let _ = stream.set_nodelay(true);
    let (sender, conn) = http1::handshake(TokioIo::new(stream)).await.map_err(|e| format!("handshake: {e}"))?;
    tokio::spawn(async move {
        let _ = conn.await;
    });
    Ok(Sender::Http1(sender))
}

/// An HTTP/2 connection (h2c, prior knowledge), its streams taken by clones of the sender.
async fn connect_h2(endpoint: &Endpoint) -> Result<H2Sender, String> {
    let stream = TcpStream::connect(endpoint.addr).await.map_err(|e| format!("connect: {e}"))?;
    let _ = stream.set_nodelay(true);
    let (sender, conn) = http2::handshake(TokioExecutor::new(), TokioIo::new(stream))
        .await
        .map_err(|e| format!("HTTP/2 handshake: {e}"))?;
    tokio::spawn(async move {
        let _ = conn.await;
    });
    Ok(sender)
}

/// A request for `path`; on HTTP/2 (`http2`), its URI absolute (`:authority`, no `Host`).
fn request(
    endpoint: &Endpoint,
    http2: bool,
    method: Method,
    path: &str,
    headers: &[(&str, &str)],
    body: String,
) -> Result<Request<Full<Bytes>>, String> {
    let mut req = Request::new(Full::new(Bytes::from(body)));
    *req.method_mut() = method.clone();
    if http2 {
        let host = endpoint.host.to_str().map_err(|e| e.to_string())?;
        *req.uri_mut() = format!("http://{host}{path}").parse().map_err(|e| format!("{e}"))?;
    } else {
        *req.uri_mut() = path.parse().map_err(|e| format!("{e}"))?;
        req.headers_mut().insert(HOST, endpoint.host.clone());
    }
    let h = req.headers_mut();
    if method == Method::GET {
        h.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
    } else {
        h.insert(ACCEPT, HeaderValue::from_static("application/json, text/event-stream"));
        h.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    }
    for (name, value) in headers {
        h.insert(
            HeaderName::from_bytes(name.as_bytes()).map_err(|e| e.to_string())?,
            HeaderValue::from_str(value).map_err(|e| e.to_string())?,
        );
    }
    Ok(req)
}

/// Sends a request and reads its whole answer: (status, session id, body).
async fn exchange(sender: &mut Sender, req: Request<Full<Bytes>>) -> Result<(u16, Option<String>, String), String> {
    let resp = sender.send(req).await?;
    let status = resp.status().as_u16();
    let session = resp.headers().get("mcp-session-id").and_then(|v| v.to_str().ok()).map(str::to_owned);
    let body = resp.into_body().collect().await.map_err(|e| format!("reading an answer: {e}"))?.to_bytes();
    Ok((status, session, String::from_utf8_lossy(&body).into_owned()))
}

fn modern_meta() -> serde_json::Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": mcp::MODERN_VERSION,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": mcp::CLIENT_NAME, "version": env!("CARGO_PKG_VERSION")},
    })
}

/// Opens one stream of `kind` (on a connection of its own, or on `on`, an HTTP/2 connection)
/// and waits until it is ready; returns the connection, the stream's body and its parser
/// (holding any events read after the ready point).
async fn open_stream(
    kind: StreamKind,
    endpoint: &Endpoint,
    i: usize,
    on: Option<H2Sender>,
) -> Result<(Sender, hyper::body::Incoming, SseParser), String> {
    let mut sender = match on {
        Some(shared) => Sender::Http2(shared),
        None => connect(endpoint).await?,
    };
    let h2 = sender.is_http2();
    let req = match kind {
        StreamKind::Raw => request(endpoint, h2, Method::GET, "/sse", &[], String::new())?,
        StreamKind::Listen => {
            let body = json!({"jsonrpc": "2.0", "id": i, "method": "subscriptions/listen", "params": {
                "notifications": {"resourceSubscriptions": [WATCHED]}, "_meta": modern_meta()}});
            let headers = [("mcp-protocol-version", mcp::MODERN_VERSION), ("mcp-method", "subscriptions/listen")];
            request(endpoint, h2, Method::POST, "/mcp", &headers, body.to_string())?
        }
        StreamKind::Get => {
            let (status, session, body) = exchange(
                &mut sender,
                request(endpoint, h2, Method::POST, "/mcp", &[], mcp::initialize(1, mcp::LEGACY_VERSION))?,
            )
            .await?;
            let session = match (status, session) {
                (200, Some(s)) => s,
                _ => return Err(format!("initialize: HTTP {status}: {}", mcp::clip(&body))),
            };
            let headers = [("mcp-session-id", session.as_str()), ("mcp-protocol-version", mcp::LEGACY_VERSION)];
            let (status, _, body) = exchange(
                &mut sender,
                request(endpoint, h2, Method::POST, "/mcp", &headers, mcp::initialized().to_owned())?,
            )
            .await?;
            if !(200..300).contains(&status) {
                return Err(format!("notifications/initialized: HTTP {status}: {}", mcp::clip(&body)));
            }
            let subscribe =
                json!({"jsonrpc": "2.0", "id": 2, "method": "resources/subscribe", "params": {"uri": WATCHED}});
            let (status, _, body) =
                exchange(&mut sender, request(endpoint, h2, Method::POST, "/mcp", &headers, subscribe.to_string())?)
                    .await?;
            if status != 200 || mcp::find_result(&first_data(&body), 2).ok().flatten().is_none() {
                return Err(format!("resources/subscribe: HTTP {status}: {}", mcp::clip(&body)));
            }
            request(endpoint, h2, Method::GET, "/mcp", &headers, String::new())?
        }
    };
    let resp = sender.send(req).await.map_err(|e| format!("opening the stream: {e}"))?;
    let status = resp.status().as_u16();
    let mut body = resp.into_body();
    if status != 200 {
        let text =
            body.collect().await.map(|b| String::from_utf8_lossy(&b.to_bytes()).into_owned()).unwrap_or_default();
        return Err(format!("opening a {} stream: HTTP {status}: {}", kind.as_str(), mcp::clip(&text)));
    }
    let mut parser = SseParser::new();
    if kind == StreamKind::Listen {
        // Ready once the acknowledgement arrives.
        loop {
            let Some(frame) = body.frame().await else {
                return Err("the listen stream ended before its acknowledgement".into());
            };
            let frame = frame.map_err(|e| format!("reading the listen stream: {e}"))?;
            let Ok(data) = frame.into_data() else { continue };
            let events = parser.push(&data);
            if events.iter().any(|e| e.contains("notifications/subscriptions/acknowledged")) {
                break;
            }
            if let Some(other) = events.iter().find(|e| e.contains("\"error\"")) {
                return Err(format!("listen refused: {}", mcp::clip(other)));
            }
        }
    }
    Ok((sender, body, parser))
}

/// The data of the first SSE event of `body`, or `body` itself if it is not SSE.
fn first_data(body: &str) -> String {
    let mut p = SseParser::new();
    let mut events = p.push(body.as_bytes());
    events.extend(p.finish());
    events.into_iter().next().unwrap_or_else(|| body.to_owned())
}

/// Whether `data` is the update of [`WATCHED`].
fn is_update(data: &str) -> Result<bool, String> {
    if data.trim().is_empty() {
        // A priming event (an id and no data) or a keep-alive.
        return Ok(false);
    }
    let v: serde_json::Value =
        serde_json::from_str(data).map_err(|e| format!("an event is not JSON ({e}): {}", mcp::clip(data)))?;
    match v.get("method").and_then(|m| m.as_str()) {
        Some("notifications/resources/updated") => {
            if v.pointer("/params/uri").and_then(|u| u.as_str()) == Some(WATCHED) {
                Ok(true)
            } else {
                Err(format!("an update of another resource: {}", mcp::clip(data)))
            }
        }
        _ => Ok(false),
    }
}

async fn await_event(mut body: hyper::body::Incoming, mut parser: SseParser, shared: &Shared) {
    loop {
        let Some(frame) = body.frame().await else {
            shared.fail("a stream ended before its event".into());
            return;
        };
        let data = match frame {
            Ok(f) => match f.into_data() {
                Ok(d) => d,
                Err(_) => continue,
            },
            Err(e) => {
                shared.fail(format!("reading a stream: {e}"));
                return;
            }
        };
        for event in parser.push(&data) {
            match is_update(&event) {
                Ok(true) => {
                    let now = Instant::now();
                    let n = shared.delivered.fetch_add(1, Ordering::SeqCst) + 1;
                    {
                        let mut last = shared.last_delivery.lock().unwrap_or_else(|p| p.into_inner());
                        if last.is_none_or(|l| now > l) {
                            *last = Some(now);
                        }
                    }
                    if n >= shared.expected.load(Ordering::SeqCst) {
                        shared.changed.notify_one();
                    }
                    // Hold the stream open until the run ends (the task is aborted then).
                    std::future::pending::<()>().await;
                }
                Ok(false) => {}
                Err(e) => {
                    shared.fail(e);
                    return;
                }
            }
        }
    }
}

/// Announces one update: our server, a 2026-07-28 `tools/call` of [`TOUCH_TOOL`] (its answer
/// is checked); the baseline, `POST /broadcast`.
async fn trigger(kind: StreamKind, endpoint: &Endpoint) -> Result<()> {
    let mut sender = connect(endpoint).await.map_err(|e| anyhow!(e))?;
    let req = match kind {
        StreamKind::Raw => request(endpoint, false, Method::POST, "/broadcast", &[], String::new()),
        StreamKind::Listen | StreamKind::Get => {
            let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
                "name": TOUCH_TOOL, "arguments": {"uri": WATCHED}, "_meta": modern_meta()}});
            let headers =
                [("mcp-protocol-version", mcp::MODERN_VERSION), ("mcp-method", "tools/call"), ("mcp-name", TOUCH_TOOL)];
            request(endpoint, false, Method::POST, "/mcp", &headers, body.to_string())
        }
    }
    .map_err(|e| anyhow!(e))?;
    let (status, _, body) = exchange(&mut sender, req).await.map_err(|e| anyhow!(e))?;
    if status != 200 {
        bail!("HTTP {status}: {}", mcp::clip(&body));
    }
    if kind != StreamKind::Raw && mcp::find_result(&first_data(&body), 1).ok().flatten().is_none() {
        bail!("no result: {}", mcp::clip(&body));
    }
    Ok(())
}

/// The results as a Markdown table, each of our kinds against the raw baseline.
pub fn table(r: &StreamsResults) -> String {
    use crate::suite::fmt_opt;
    let raw = r.case(StreamKind::Raw).and_then(|c| c.deliveries_per_s);
    let over = match r.http2_connections {
        Some(n) => format!(", h2c streams over {n} connections"),
        None => String::new(),
    };
    let mut s = String::from(
        "| stream | streams | KiB/stream | delivery to all, ms | deliveries/s | ÷ raw axum SSE | failed / not delivered |\n\
         |---|---|---|---|---|---|---|\n",
    );
    for c in &r.cases {
        let ratio = match (c.deliveries_per_s, raw) {
            (Some(a), Some(b)) if c.kind != "raw" && b > 0.0 => format!("**{:.2}×**", a / b),
            _ => String::new(),
        };
        let failed: usize = c.runs.iter().map(|x| x.failed).sum();
        let missed: usize = c.runs.iter().map(|x| x.opened - x.delivered.min(x.opened)).sum();
        let label = match c.kind.as_str() {
            "listen" => "mcp serve: 2026-07-28 subscriptions/listen",
            "get" => "mcp serve: legacy session + GET (incl. the session)",
            _ => "raw axum SSE broadcast",
        };
        s.push_str(&format!(
            "| {label}{over} | {} | {} | {} | {} | {ratio} | {failed} / {missed}{} |\n",
            c.count,
            fmt_opt(c.kib_per_stream),
            fmt_opt(c.deliver_ms),
            fmt_opt(c.deliveries_per_s),
            c.error
                .as_ref()
                .or_else(|| c.runs.iter().find_map(|x| x.first_error.as_ref()))
                .map(|e| format!(" ({})", mcp::clip(e)))
                .unwrap_or_default()
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_update_of_the_watched_resource_counts() {
        assert_eq!(is_update(crate::baseline::SSE_EVENT), Ok(true));
        assert_eq!(is_update(""), Ok(false));
        assert_eq!(is_update(r#"{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged"}"#), Ok(false));
        let other = r#"{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"x://y"}}"#;
        assert!(is_update(other).is_err());
        assert!(is_update("not json").is_err());
        assert_eq!(first_data("event: message\ndata: {\"a\":1}\n\n"), "{\"a\":1}");
        assert_eq!(first_data("{\"a\":1}"), "{\"a\":1}");
    }
}
