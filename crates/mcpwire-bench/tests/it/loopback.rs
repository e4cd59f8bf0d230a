//! `mcpwire-bench http` and `mcpwire-bench stdio` against the raw baselines on loopback. Checks that
//! calls complete without errors; nothing here depends on how fast they are.

use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_mcpwire-bench");

struct Baseline {
    child: Child,
    url: String,
}

impl Drop for Baseline {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `mcpwire-bench baseline-http --port 0` and reads the address it prints.
fn baseline_http() -> Baseline {
    let mut child = Command::new(BIN)
        .args(["baseline-http", "--port", "0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start baseline-http");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).expect("read the address");
    let url = line.trim().strip_prefix("listening on ").expect("an address line").to_owned();
    Baseline { child, url }
}

fn bench_json(args: &[&str]) -> Value {
    // From the workspace root: server logs go to its target/bench-logs, not into this crate.
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let out = Command::new(BIN).args(args).current_dir(root).output().expect("run mcpwire-bench");
    assert!(out.status.success(), "mcpwire-bench {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("JSON output")
}

#[test]
fn http_sessions_and_stateless_against_baseline() {
    let server = baseline_http();
    let pid = server.child.id().to_string();
    for mode in ["sessions", "stateless"] {
        let r = bench_json(&[
            "http",
            "--url",
            &server.url,
            "--mode",
            mode,
            "--clients",
            "2",
            "--duration",
            "0.5",
            "--warmup",
            "0.1",
            "--pid",
            &pid,
            "--json",
        ]);
        assert_eq!(r["mode"], mode);
        assert!(r["calls"].as_u64().unwrap() > 0, "{mode}: no call completed: {r}");
        assert_eq!(r["errors"], 0, "{mode}: {r}");
        assert!(r["first_error"].is_null(), "{mode}: {r}");
        assert!(r["latency"]["p50_ms"].as_f64().unwrap() > 0.0);
        assert!(r["cpu_us_per_call"].is_number(), "{mode}: no CPU figure: {r}");
    }
    // A legacy stateless call (no initialize, no session) is answered too.
    let r = bench_json(&[
        "http",
        "--url",
        &server.url,
        "--mode",
        "stateless",
        "--protocol",
        "2025-06-18",
        "--duration",
        "0.3",
        "--warmup",
        "0",
        "--json",
    ]);
    assert!(r["calls"].as_u64().unwrap() > 0 && r["errors"] == 0, "{r}");
    assert_eq!(r["protocol"], "2025-06-18");
}

#[test]
fn sessions_memory_against_baseline() {
    let server = baseline_http();
    let pid = server.child.id().to_string();
    let r = bench_json(&["sessions", "--url", &server.url, "--count", "50", "--pid", &pid, "--settle", "0", "--json"]);
    assert_eq!(r["opened"], 50, "{r}");
    assert_eq!(r["failed"], 0, "{r}");
    assert!(r["rss_after"].as_u64().unwrap() > 0);
    // With one answered call on each session.
    let r = bench_json(&[
        "sessions",
        "--url",
        &server.url,
        "--count",
        "20",
        "--pid",
        &pid,
        "--settle",
        "0",
        "--call",
        "--json",
    ]);
    assert_eq!((r["opened"].as_u64(), r["failed"].as_u64()), (Some(20), Some(0)), "{r}");
}

#[test]
fn stdio_and_spawn_against_baseline_pipe() {
    let r = bench_json(&[
        "stdio",
        "--inflight",
        "8",
        "--duration",
        "0.3",
        "--warmup",
        "0.1",
        "--json",
        "--",
        BIN,
        "baseline-pipe",
    ]);
    assert!(r["calls"].as_u64().unwrap() > 0, "{r}");
    assert_eq!(r["errors"], 0, "{r}");
    let r = bench_json(&["spawn", "--repeat", "2", "--json", "--", BIN, "baseline-pipe"]);
    assert_eq!(r["samples_ms"].as_array().unwrap().len(), 2, "{r}");
    assert_eq!(r["failures"], 0, "{r}");
}

#[test]
fn bad_input_is_an_error_not_a_panic() {
    let out = Command::new(BIN).args(["http", "--url", "ftp://x/mcp", "--mode", "sessions"]).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("only http://"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    let out = Command::new(BIN).args(["suite", "--config", "/nonexistent/servers.toml"]).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot read"));
}

/// A free port on 127.0.0.1 (free a moment ago).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// `mcp` beside this binary (built with the workspace), if it is there.
fn mcp_bin() -> Option<String> {
    let mcp = std::path::Path::new(BIN).parent()?.join("mcp");
    if mcp.is_file() {
        Some(mcp.to_string_lossy().into_owned())
    } else {
        eprintln!("skipped: no {} (build the workspace's binaries)", mcp.display());
        None
    }
}

#[test]
fn client_load_drives_a_server_over_stdio_and_http_in_both_eras() {
    for era in ["legacy", "modern"] {
        let args = ["client-load", "--inflight", "4", "--duration", "0.3", "--warmup", "0.1", "--protocol", era];
        let mut stdio: Vec<&str> = args.to_vec();
        stdio.extend(["--", BIN, "echo-server", "--style", "typed"]);
        let r = bench_json(&stdio);
        assert!(r["calls"].as_u64().unwrap() > 0, "{r}");
        assert_eq!(r["errors"], 0, "{r}");
        assert_eq!(r["transport"], "stdio", "{r}");
        assert!(r["server_cpu_us_per_call"].is_number(), "the child's CPU is read: {r}");
        let expected = if era == "legacy" { "2025-11-25" } else { "2026-07-28" };
        assert_eq!(r["protocol"], expected, "{r}");

        let port = free_port();
        let mut child = Command::new(BIN)
            .args(["echo-server", "--style", "typed", "--port", &port.to_string()])
            .stdout(Stdio::null())
            .spawn()
            .expect("start echo-server");
        let start = std::time::Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(start.elapsed() < std::time::Duration::from_secs(20), "echo-server did not listen");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let url = format!("http://127.0.0.1:{port}/mcp");
        let pid = child.id().to_string();
        let mut http: Vec<&str> = args.to_vec();
        http.extend(["--url", &url, "--server-pid", &pid]);
        let r = bench_json(&http);
        let _ = child.kill();
        let _ = child.wait();
        assert!(r["calls"].as_u64().unwrap() > 0, "{r}");
        assert_eq!(r["errors"], 0, "{r}");
        assert_eq!(r["protocol"], expected, "{r}");
    }
}

#[test]
fn client_comparison_without_rmcp_measures_ours_and_says_so() {
    let Some(mcp) = mcp_bin() else { return };
    let r = bench_json(&[
        "client",
        "--mcp",
        &mcp,
        "--rmcp",
        "/nonexistent/rmcp-client-load",
        "--transports",
        "stdio,http",
        "--inflight",
        "2",
        "--eras",
        "modern",
        "--rounds",
        "1",
        "--duration",
        "0.2",
        "--warmup",
        "0.1",
        "--json",
    ]);
    let cases = r["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 2, "{r}");
    for c in cases {
        assert!(c["ours"]["calls"].as_u64().unwrap() > 0, "{r}");
        assert_eq!(c["ours"]["errors"], 0, "{r}");
        assert!(c["rmcp"].is_null(), "{r}");
    }
    assert!(r["notes"][0].as_str().unwrap().contains("missing"), "{r}");
}

#[test]
fn streams_of_every_kind_all_get_the_update() {
    let mcp = mcp_bin();
    let kinds = if mcp.is_some() { "listen,get,raw" } else { "raw" };
    let mut args = vec!["streams", "--count", "50", "--rounds", "1", "--settle", "0.1", "--kinds", kinds, "--json"];
    if let Some(mcp) = &mcp {
        args.extend(["--mcp", mcp]);
    }
    let r = bench_json(&args);
    let cases = r["cases"].as_array().unwrap();
    assert_eq!(cases.len(), kinds.split(',').count(), "{r}");
    for c in cases {
        assert!(c["error"].is_null(), "{r}");
        let run = &c["runs"][0];
        assert_eq!(run["opened"], 50, "{r}");
        assert_eq!(run["delivered"], 50, "{r}");
        assert!(run["first_error"].is_null(), "{r}");
    }
}
