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
    let out = Command::new(BIN).args(args).output().expect("run mcpwire-bench");
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
