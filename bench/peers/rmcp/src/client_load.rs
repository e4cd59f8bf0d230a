//! `rmcp-client-load`: rmcp's client (3.11.0) driving a server, for `mcpwire-bench client`.
//!
//! Usage:
//!   rmcp-client-load [--inflight N] [--duration S] [--warmup S] [--protocol legacy|modern]
//!                    [--server-pid PID] [--cpu CPU] (--url URL | -- CMD ARGS...)
//!
//! Connects (Streamable HTTP to URL, or CMD as a child over stdio), does the handshake
//! (`initialize` for legacy, `server/discover` at 2026-07-28 for modern), then calls `echo`
//! with N calls in flight for the warm-up and the measured window, each with a unique `text`
//! that its answer's `content[0].text` must equal. Prints one JSON object on stdout: calls,
//! calls/s, this process's CPU µs per call (getrusage) and the server's (from /proc: PID, or
//! this process's children when serving a child). The same driver written with our client is
//! `mcpwire-bench client-load`; both print the same JSON.

use std::borrow::Cow;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::model::{CallToolRequestParams, ContentBlock, ProtocolVersion};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt};
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};

struct Args {
    inflight: usize,
    duration: f64,
    warmup: f64,
    modern: bool,
    server_pid: Option<u32>,
    cpu: Option<usize>,
    url: Option<String>,
    command: Vec<String>,
}

fn usage() -> ! {
    eprintln!(
        "usage: rmcp-client-load [--inflight N] [--duration S] [--warmup S] [--protocol legacy|modern] \
         [--server-pid PID] [--cpu CPU] (--url URL | -- CMD ARGS...)"
    );
    std::process::exit(2);
}

fn parse_args() -> Args {
    let mut a = Args {
        inflight: 1,
        duration: 5.0,
        warmup: 1.0,
        modern: false,
        server_pid: None,
        cpu: None,
        url: None,
        command: Vec::new(),
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = || it.next().unwrap_or_else(|| usage());
        match arg.as_str() {
            "--inflight" => a.inflight = value().parse().unwrap_or_else(|_| usage()),
            "--duration" => a.duration = value().parse().unwrap_or_else(|_| usage()),
            "--warmup" => a.warmup = value().parse().unwrap_or_else(|_| usage()),
            "--protocol" => {
                a.modern = match value().as_str() {
                    "legacy" => false,
                    "modern" => true,
                    _ => usage(),
                }
            }
            "--server-pid" => a.server_pid = Some(value().parse().unwrap_or_else(|_| usage())),
            "--cpu" => a.cpu = Some(value().parse().unwrap_or_else(|_| usage())),
            "--url" => a.url = Some(value()),
            "--" => {
                a.command = it.by_ref().collect();
                break;
            }
            _ => usage(),
        }
    }
    if a.url.is_some() != a.command.is_empty() || a.inflight == 0 {
        usage();
    }
    a
}

fn own_cpu() -> Duration {
    // SAFETY: a zeroed rusage is valid for getrusage to fill.
    let u = unsafe {
        let mut u: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut u);
        u
    };
    let tv = |t: libc::timeval| Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64);
    tv(u.ru_utime) + tv(u.ru_stime)
}

/// utime + stime of `pid`, in microseconds.
fn proc_cpu_us(pid: u32) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let f: Vec<&str> = text[text.rfind(')')? + 1..].split_whitespace().collect();
    let ticks = f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?;
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    Some(ticks * 1_000_000 / hz)
}

/// The processes whose parent is this one.
fn children() -> Vec<u32> {
    let me = std::process::id();
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
        let Ok(text) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { continue };
        let Some(rest) = text.rfind(')').map(|i| &text[i + 1..]) else { continue };
        if rest.split_whitespace().nth(1).and_then(|p| p.parse::<u32>().ok()) == Some(me) {
            out.push(pid);
        }
    }
    out
}

fn server_cpu_us(pids: &[u32]) -> Option<u64> {
    if pids.is_empty() {
        return None;
    }
    pids.iter().map(|&p| proc_cpu_us(p)).sum()
}

fn pin(cpu: usize) {
    // SAFETY: a zeroed cpu_set_t with one bit set; pid 0 is the calling thread.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            eprintln!("rmcp-client-load: cannot pin to CPU {cpu}");
        }
    }
}

fn main() {
    let args = parse_args();
    if let Some(cpu) = args.cpu {
        pin(cpu);
    }
    // One thread, like `mcpwire-bench client-load`: the client uses one core.
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("tokio runtime");
    match rt.block_on(run(&args)) {
        Ok(json) => println!("{json}"),
        Err(e) => {
            eprintln!("rmcp-client-load: {e}");
            std::process::exit(1);
        }
    }
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

async fn run(args: &Args) -> Result<serde_json::Value, BoxError> {
    let lifecycle = if args.modern {
        ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] }
    } else {
        ClientLifecycleMode::Initialize
    };
    let (client, transport) = match &args.url {
        Some(url) => {
            let t = StreamableHttpClientTransport::from_uri(url.as_str());
            (().serve_with_lifecycle(t, lifecycle).await?, "http")
        }
        None => {
            let mut cmd = tokio::process::Command::new(&args.command[0]);
            cmd.args(&args.command[1..]);
            let (t, _stderr) = TokioChildProcess::builder(cmd).stderr(std::process::Stdio::inherit()).spawn()?;
            (().serve_with_lifecycle(t, lifecycle).await?, "stdio")
        }
    };
    let server_pids = match args.server_pid {
        Some(p) => vec![p],
        None => children(),
    };
    let protocol = client.peer().peer_info().map(|i| i.protocol_version.to_string()).unwrap_or_default();
    let ok = Arc::new(AtomicU64::new(0));
    let errors = Arc::new(AtomicU64::new(0));
    let first_error: Arc<Mutex<Option<String>>> = Arc::default();
    let stop = Arc::new(AtomicBool::new(false));
    let mut workers = Vec::new();
    for w in 0..args.inflight {
        let peer = client.peer().clone();
        let (ok, errors, first_error, stop) = (ok.clone(), errors.clone(), first_error.clone(), stop.clone());
        workers.push(tokio::spawn(async move {
            let mut seq = 0u64;
            while !stop.load(Ordering::Relaxed) {
                seq += 1;
                let text = format!("w{w}-{seq}");
                let mut arguments = serde_json::Map::new();
                arguments.insert("text".into(), serde_json::Value::String(text.clone()));
                let params = CallToolRequestParams::new(Cow::Borrowed("echo")).with_arguments(arguments);
                let outcome = match peer.call_tool(params).await {
                    Ok(r) => match r.content.first() {
                        Some(ContentBlock::Text(t)) if t.text == text && r.is_error != Some(true) => Ok(()),
                        _ => Err(format!("wrong answer to {text:?}: {:?}", r.content)),
                    },
                    Err(e) => Err(e.to_string()),
                };
                match outcome {
                    Ok(()) => ok.fetch_add(1, Ordering::Relaxed),
                    Err(e) => {
                        first_error.lock().unwrap().get_or_insert(e);
                        errors.fetch_add(1, Ordering::Relaxed)
                    }
                };
            }
        }));
    }
    tokio::time::sleep(Duration::from_secs_f64(args.warmup)).await;
    let (calls0, errors0, cpu0, server0, t0) = (
        ok.load(Ordering::Relaxed),
        errors.load(Ordering::Relaxed),
        own_cpu(),
        server_cpu_us(&server_pids),
        Instant::now(),
    );
    tokio::time::sleep(Duration::from_secs_f64(args.duration)).await;
    let (calls1, errors1, cpu1, server1, elapsed) = (
        ok.load(Ordering::Relaxed),
        errors.load(Ordering::Relaxed),
        own_cpu(),
        server_cpu_us(&server_pids),
        t0.elapsed().as_secs_f64(),
    );
    stop.store(true, Ordering::Relaxed);
    for w in workers {
        let _ = tokio::time::timeout(Duration::from_secs(10), w).await;
    }
    let _ = client.cancel().await;
    let calls = calls1 - calls0;
    let per_call = |us: f64| if calls > 0 { serde_json::json!(us / calls as f64) } else { serde_json::Value::Null };
    let server_cpu = match (server0, server1) {
        (Some(a), Some(b)) => per_call(b.saturating_sub(a) as f64),
        _ => serde_json::Value::Null,
    };
    let first_error = first_error.lock().unwrap().clone();
    Ok(serde_json::json!({
        "client": "rmcp 3.11.0",
        "transport": transport,
        "protocol": protocol,
        "inflight": args.inflight,
        "duration_s": elapsed,
        "calls": calls,
        "errors": errors1 - errors0,
        "calls_per_s": calls as f64 / elapsed,
        "client_cpu_us_per_call": per_call(cpu1.saturating_sub(cpu0).as_secs_f64() * 1e6),
        "server_cpu_us_per_call": server_cpu,
        "first_error": first_error,
    }))
}
