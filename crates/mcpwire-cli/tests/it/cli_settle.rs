//! `mcp list` against a server that adds a tool just after the handshake and announces it
//! with `notifications/tools/list_changed` (as server-everything adds its elicitation tools):
//! the list follows the change made within the settle window, and `--settle 0` lists at once.
//!
//! The server is ours, in this process, over real HTTP on 127.0.0.1; a layer adds the tool
//! `late` a moment after the client's first `tools/list`, so that the first list always
//! misses it and only a list that follows the announcement shows it.

use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use mcpwire_http::{HttpConfig, McpHttp};
use mcpwire_protocol::types::{CallToolResult, Tool};
use mcpwire_protocol::Method;
use mcpwire_server::{McpRequest, McpResponse, Server};
use serde_json::{json, Value};
use tower::{Layer, Service};

/// How long after the first `tools/list` the server adds `late`.
const LATE_BY: Duration = Duration::from_millis(300);

/// Adds the tool `late` to the server [`LATE_BY`] after the first `tools/list` it serves.
#[derive(Clone, Default)]
struct AddLater {
    armed: Arc<AtomicBool>,
}

impl<S> Layer<S> for AddLater {
    type Service = AddLaterService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        AddLaterService { armed: self.armed.clone(), inner }
    }
}

#[derive(Clone)]
struct AddLaterService<S> {
    armed: Arc<AtomicBool>,
    inner: S,
}

impl<S: Service<McpRequest, Response = McpResponse>> Service<McpRequest> for AddLaterService<S> {
    type Response = McpResponse;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut TaskContext<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: McpRequest) -> S::Future {
        if request.method() == Method::ListTools && !self.armed.swap(true, Ordering::SeqCst) {
            let server = request.server().clone();
            tokio::spawn(async move {
                tokio::time::sleep(LATE_BY).await;
                let tool = Tool::new("late", "Added after the handshake.", json!({"type": "object"}));
                server.add_tool(tool, |_, _| async { Ok(CallToolResult::text("late")) });
            });
        }
        self.inner.call(request)
    }
}

/// Serves a fresh server (one tool, `early`, and the layer) on 127.0.0.1; returns its URL.
async fn serve() -> String {
    let server = Server::builder("settle", "1")
        .tool(mcpwire_server::ToolDef::new(
            Tool::new("early", "There from the start.", json!({"type": "object"})),
            |_, _| async { Ok(CallToolResult::text("early")) },
        ))
        .layer(AddLater::default())
        .build();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let http = McpHttp::new(server, HttpConfig::default());
    tokio::spawn(async move { http.serve(listener).await });
    url
}

/// The tool names `mcp list URL tools --json` prints, run with `args`.
async fn listed_tools(url: &str, args: &[&str]) -> Vec<String> {
    let mut command = Command::new(env!("CARGO_BIN_EXE_mcp"));
    command.args(["list", url, "tools", "--json", "--protocol-version", "2025-11-25"]).args(args);
    command.stdin(Stdio::null()).env_remove("MCP_CONFIG");
    let output = tokio::task::spawn_blocking(move || command.output().expect("run mcp")).await.unwrap();
    assert!(output.status.success(), "mcp list failed: {}", String::from_utf8_lossy(&output.stderr));
    let listed: Value = serde_json::from_slice(&output.stdout).expect("JSON on stdout");
    let mut names: Vec<String> =
        listed["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_owned()).collect();
    names.sort();
    names
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_follows_a_tool_added_just_after_the_handshake() {
    // A generous window: the wait ends 250 ms after the change is followed, not at its end.
    let url = serve().await;
    assert_eq!(listed_tools(&url, &["--settle", "30000"]).await, ["early", "late"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn settle_zero_lists_at_once() {
    // The first list is taken before the tool exists (it is added after that list), and
    // nothing is taken again.
    let url = serve().await;
    assert_eq!(listed_tools(&url, &["--settle", "0"]).await, ["early"]);
}
