//! The client commands against a server we did not write: `@modelcontextprotocol/server-everything`,
//! run with `npx`, over stdio (TARGET is the command line) and over Streamable HTTP (the package's
//! `streamableHttp` mode on a loopback port; TARGET is the URL). These tests need Node.js and the
//! npm registry, so they run only when `MCP_E2E_NPM` is set (to anything); otherwise each one
//! prints why it is skipped and passes. `MCP_E2E_EVERYTHING` overrides the package spec (default:
//! the pinned version below).
//!
//! To run them: `MCP_E2E_NPM=1 cargo nextest run --release -p mcpwire-cli --test cli_everything`.

use crate::npm_e2e;

use std::io::Read;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcpwire_testkit::{describe, eventually_blocking, eventually_blocking_within};
use npm_e2e::{assert_fails, npm_spec, run, run_any, DEADLINE};
use serde_json::Value;

/// The server-everything release these tests were written against.
const PINNED: &str = "@modelcontextprotocol/server-everything@2026.8.31";

/// The package spec to run, or `None` (with the reason printed) when skipped.
fn spec() -> Option<String> {
    npm_spec("MCP_E2E_EVERYTHING", PINNED)
}

/// TARGET for server-everything over stdio, or `None` when skipped.
fn target() -> Option<String> {
    spec().map(|spec| format!("npx -y {spec}"))
}

// ---- the checks, the same for every transport ----

/// `info` (text and `--json`) and `list` (one kind, and everything as `--json`).
fn info_and_lists(t: &str, transport: &str) {
    let r = run(&["info", t, "--json"]);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["serverInfo"]["name"], "mcp-servers/everything");
    assert_eq!(v["era"], "legacy", "server-everything speaks only the handshake era: {v}");
    assert_eq!(v["protocolVersion"], "2025-11-25");
    assert_eq!(v["transport"], transport);
    assert!(v["capabilities"]["tools"].is_object() && v["capabilities"]["prompts"].is_object(), "{v}");
    assert!(v["instructions"].as_str().is_some_and(|i| i.contains("Everything Server")), "{v}");

    let r = run(&["info", t]);
    assert!(r.stdout.starts_with("Server        mcp-servers/everything "), "{}", r.stdout);
    assert!(r.stdout.contains("\nEra           legacy (initialize handshake)\n"), "{}", r.stdout);
    assert!(r.stdout.contains("\nProtocol      2025-11-25\n"), "{}", r.stdout);
    assert!(r.stdout.contains(&format!("\nTransport     {transport} ")), "{}", r.stdout);

    let r = run(&["list", t, "tools"]);
    assert!(r.stdout.starts_with("NAME "), "{}", r.stdout);
    let sum = r.stdout.lines().find(|l| l.starts_with("get-sum ")).expect("get-sum listed");
    assert!(sum.contains("a: number, b: number"), "{sum}");
    let echo = r.stdout.lines().find(|l| l.starts_with("echo ")).expect("echo listed");
    assert!(echo.contains("message: string"), "{echo}");

    // server-everything adds its elicitation tools just after the handshake and announces
    // them: over stdio `list` follows that within its settle window, here longer than a loaded
    // machine needs (the wait ends a moment after the change, not at the window's end). Over
    // HTTP the announcement is sent before the client has a GET stream and never arrives, so
    // the whole window is waited: it is kept to 5 s.
    let r = run(&["list", t, "--json", "--settle", "5000"]);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    let tools = v["tools"].as_array().unwrap();
    for name in ["echo", "get-sum", "trigger-long-running-operation", "trigger-elicitation-request"] {
        assert!(tools.iter().any(|t| t["name"] == name), "{name} not in {v}");
    }
    assert!(tools.iter().all(|t| t["inputSchema"]["type"] == "object"), "{v}");
    let resources = v["resources"].as_array().unwrap();
    assert!(resources.iter().any(|r| r["uri"] == "demo://resource/static/document/features.md"), "{v}");
    assert!(!v["resourceTemplates"].as_array().unwrap().is_empty());
    assert!(v["prompts"].as_array().unwrap().iter().any(|p| p["name"] == "args-prompt"));
}

/// `call`: text, `--json`, progress, elicitation (`--elicit`, `--decline`), and two refusals.
fn calls(t: &str) {
    assert_eq!(run(&["call", t, "echo", "message=hi there"]).stdout, "Echo: hi there\n");
    assert!(run(&["call", t, "get-sum", "a=2", "b=3.5"]).stdout.contains("5.5"));

    let r = run(&["call", t, "echo", "message=as json", "--json"]);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["content"], serde_json::json!([{"type": "text", "text": "Echo: as json"}]), "{v}");
    assert!(v.get("isError").is_none_or(|e| e == false), "{v}");

    // A progress-reporting tool: plain progress lines on a non-terminal stderr.
    let r = run(&["call", t, "trigger-long-running-operation", "duration=1", "steps=2"]);
    assert!(r.stderr.contains("progress 1/2 (50%)") && r.stderr.contains("progress 2/2 (100%)"), "{}", r.stderr);
    assert!(r.stdout.contains("Long running operation completed"));

    // Elicitation answered with --elicit (defaults fill the rest), or declined.
    let r = run(&["call", t, "trigger-elicitation-request", "--elicit", r#"{"name": "Ada Lovelace"}"#]);
    assert!(r.stdout.contains("- Name: Ada Lovelace") && r.stdout.contains("\"action\": \"accept\""), "{}", r.stdout);
    assert!(r.stdout.contains("- Favorite Integer: 42"), "the form's defaults fill the rest: {}", r.stdout);
    let r = run(&["call", t, "trigger-elicitation-request", "--decline"]);
    assert!(r.stdout.contains("User declined") && r.stdout.contains("\"action\": \"decline\""), "{}", r.stdout);

    // Refused before anything is sent: an unknown tool, an argument that does not fit the schema.
    assert_fails(&run_any(&["call", t, "ech", "message=x"]), 2, "the server has no tool `ech`; did you mean `echo`?");
    assert_fails(&run_any(&["call", t, "get-sum", "a=two", "b=1"]), 2, "argument `a` expects a number");
}

/// `read` and `prompt`, as text and as `--json`.
fn read_and_prompt(t: &str) {
    let uri = "demo://resource/static/document/features.md";
    let r = run(&["read", t, uri]);
    assert!(r.stdout.starts_with("# Everything Server - Features\n"), "{}", r.stdout);
    let r = run(&["read", t, uri, "--json"]);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    let contents = v["contents"].as_array().unwrap();
    assert_eq!(contents.len(), 1, "{v}");
    assert_eq!(contents[0]["uri"], uri);
    assert_eq!(contents[0]["mimeType"], "text/markdown");
    assert!(contents[0]["text"].as_str().unwrap().starts_with("# Everything Server"), "{v}");

    let r = run(&["prompt", t, "args-prompt", "city=Paris", "state=Texas"]);
    assert_eq!(r.stdout, "[user]\nWhat's weather in Paris, Texas?\n");
    let r = run(&["prompt", t, "args-prompt", "city=Paris", "--json"]);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["messages"][0]["role"], "user", "{v}");
    assert_eq!(v["messages"][0]["content"]["type"], "text", "{v}");
    assert!(v["messages"][0]["content"]["text"].as_str().unwrap().contains("Paris"), "{v}");
    assert_fails(&run_any(&["prompt", t, "args-prompt"]), 2, "needs argument `city`");
}

// ---- over stdio ----

#[test]
fn everything_info_and_lists() {
    let Some(t) = target() else { return };
    info_and_lists(&t, "stdio");
}

#[test]
fn everything_calls() {
    let Some(t) = target() else { return };
    calls(&t);

    let r = run(&["call", &t, "get-structured-content", "location=Chicago", "--json"]);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert!(v["structuredContent"]["temperature"].is_number(), "{v}");

    let dir = std::env::temp_dir().join(format!("mcp-cli-everything-{}", std::process::id()));
    let r = run(&["call", &t, "get-tiny-image", "--out", &dir.to_string_lossy()]);
    assert!(std::fs::read(dir.join("get-tiny-image.png")).unwrap().starts_with(b"\x89PNG"), "{}", r.stdout);
    let _ = std::fs::remove_dir_all(dir);

    // Sampling answered with --sample-reply.
    let r = run(&["call", &t, "trigger-sampling-request", "prompt=hello", "--sample-reply", "a canned reply"]);
    assert!(r.stdout.contains("a canned reply"), "{}", r.stdout);
}

#[test]
fn everything_read_prompt_complete() {
    let Some(t) = target() else { return };
    read_and_prompt(&t);
    let r = run(&["complete", &t, "--prompt", "completable-prompt", "department", "En"]);
    assert_eq!(r.stdout, "Engineering\n");
    let r = run(&["complete", &t, "--prompt", "completable-prompt", "name", "", "--context", "department=Engineering"]);
    assert!(r.stdout.lines().count() >= 2, "{}", r.stdout);
}

// ---- over Streamable HTTP ----

/// server-everything in its `streamableHttp` mode on a loopback port. Its whole process group
/// (npx, the shell npx starts, node) is killed when this is dropped.
#[cfg(unix)]
struct HttpEverything {
    child: Child,
    url: String,
    stderr: Arc<Mutex<String>>,
}

#[cfg(unix)]
impl HttpEverything {
    /// Starts the server and waits (bounded) until its port accepts connections.
    fn start(spec: &str) -> Self {
        use std::os::unix::process::CommandExt;
        // It listens on `PORT` (on every interface, so a preloaded shim makes it loopback only).
        let shim = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/e2e/loopback.cjs");
        let node_options = match std::env::var("NODE_OPTIONS") {
            Ok(o) if !o.trim().is_empty() => format!("{o} --require \"{shim}\""),
            _ => format!("--require \"{shim}\""),
        };
        let mut last_error = String::new();
        // A port picked free may be taken before the server binds it: then try another.
        for _ in 0..3 {
            let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
            let mut child = Command::new("npx")
                .args(["-y", spec, "streamableHttp"])
                .env("PORT", port.to_string())
                .env("NODE_OPTIONS", &node_options)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .process_group(0)
                .spawn()
                .expect("start npx (is Node.js installed?)");
            let stderr = Arc::new(Mutex::new(String::new()));
            let mut pipe = child.stderr.take().unwrap();
            let sink = stderr.clone();
            std::thread::spawn(move || {
                let mut buf = [0u8; 4096];
                while let Ok(n @ 1..) = pipe.read(&mut buf) {
                    sink.lock().unwrap().push_str(&String::from_utf8_lossy(&buf[..n]));
                }
            });
            let mut server = Self { child, url: format!("http://127.0.0.1:{port}/mcp"), stderr };
            let what =
                describe(|f| write!(f, "server-everything listening on {port}\n{}", server.stderr.lock().unwrap()));
            // Listening (true), or ended (false: the port may have been taken).
            let listening = eventually_blocking_within(DEADLINE, what, || {
                if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                    return Some(true);
                }
                server.child.try_wait().unwrap().map(|_| false)
            });
            if listening {
                return server;
            }
            last_error = server.stderr.lock().unwrap().clone();
        }
        panic!("server-everything did not start over HTTP:\n{last_error}");
    }
}

#[cfg(unix)]
impl Drop for HttpEverything {
    fn drop(&mut self) {
        let group = format!("-{}", self.child.id());
        let kill = |sig: &str| {
            Command::new("kill").args([sig, "--", &group]).stderr(Stdio::null()).status().is_ok_and(|s| s.success())
        };
        kill("-TERM");
        let started = Instant::now();
        // Until no process of the group is left (the leader reaped, so that it is no zombie);
        // killed after 5 s.
        eventually_blocking("the processes of server-everything ended", || {
            if !kill("-0") {
                return Some(());
            }
            let _ = self.child.try_wait();
            (started.elapsed() > Duration::from_secs(5)).then(|| {
                kill("-KILL");
            })
        });
        let _ = self.child.wait();
    }
}

#[cfg(unix)]
#[test]
fn everything_http_info_and_lists() {
    let Some(spec) = spec() else { return };
    let server = HttpEverything::start(&spec);
    info_and_lists(&server.url, "http");
    let r = run(&["info", &server.url]);
    assert!(r.stdout.contains(&format!("\nTransport     http {}\n", server.url)), "{}", r.stdout);
}

#[cfg(unix)]
#[test]
fn everything_http_calls() {
    let Some(spec) = spec() else { return };
    let server = HttpEverything::start(&spec);
    // Nothing on stderr: era detection takes the server's 400 to `server/discover` (a JSON-RPC
    // error with `"id": null`) as the probe's answer, without a warning or a wait.
    let r = run(&["call", &server.url, "echo", "message=quiet"]);
    assert_eq!(r.stderr, "");
    assert_eq!(r.stdout, "Echo: quiet\n");
    let r = run(&["info", &server.url, "--json"]);
    assert_eq!(r.stderr, "");
    calls(&server.url);
    // The server's sampling request, sent on the call's SSE stream, answered with --sample-reply.
    let r = run(&["call", &server.url, "trigger-sampling-request", "prompt=hello", "--sample-reply", "over http"]);
    assert!(r.stdout.contains("over http"), "{}", r.stdout);
}

#[cfg(unix)]
#[test]
fn everything_http_read_prompt_complete() {
    let Some(spec) = spec() else { return };
    let server = HttpEverything::start(&spec);
    read_and_prompt(&server.url);
    let r = run(&["complete", &server.url, "--prompt", "completable-prompt", "department", "En"]);
    assert_eq!(r.stdout, "Engineering\n");
}
