//! `mcp inspect` as a user runs it: the URL printed (with its token), the API answering with
//! that token, the reference server reached through it; a configured server taken with its
//! transport; a remote --host refused.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use mcpwire_testkit::output_within;

const MCP: &str = env!("CARGO_BIN_EXE_mcp");

/// The inspector process, killed when dropped.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn inspect_refuses_a_remote_host_without_allow_remote() {
    let output = output_within(
        Command::new(MCP).args(["inspect", "--host", "0.0.0.0", "--no-open"]),
        Duration::from_secs(20),
        "mcp inspect --host 0.0.0.0",
    );
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("not a loopback address") && stderr.contains("--allow-remote"), "{stderr}");
    assert!(stderr.contains("start processes"), "the risk is named: {stderr}");
    assert!(output.stdout.is_empty(), "no URL printed");
}

/// Starts `mcp inspect ARGS --no-open`: the process, the base URL and the token it printed.
async fn start(args: &[&str]) -> (Running, String, String) {
    let mut child = Command::new(MCP)
        .arg("inspect")
        .args(args)
        .arg("--no-open")
        .env_remove("MCP_CONFIG")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("mcp inspect starts");
    let stdout = child.stdout.take().expect("stdout");
    let running = Running(child);
    let line = tokio::time::timeout(
        Duration::from_secs(20),
        tokio::task::spawn_blocking(move || {
            let mut line = String::new();
            BufReader::new(stdout).read_line(&mut line).map(|_| line)
        }),
    )
    .await
    .expect("the URL is printed in time")
    .expect("read")
    .expect("a line");
    let url = line.trim().strip_prefix("MCP Inspector: ").unwrap_or_else(|| panic!("{line}")).to_owned();
    let (base, token) = url.split_once("/#token=").unwrap_or_else(|| panic!("{url}"));
    assert!(base.starts_with("http://127.0.0.1:"), "{url}");
    assert!(token.len() >= 32, "{url}");
    (running, base.to_owned(), token.to_owned())
}

#[tokio::test]
async fn inspect_prints_its_url_and_serves_the_api_with_its_token() {
    let target = format!("'{MCP}' serve");
    let (_running, base, token) = start(&[&target]).await;
    let http = reqwest::Client::builder().no_proxy().timeout(Duration::from_secs(30)).build().unwrap();
    let health = http.get(format!("{base}/api/health")).bearer_auth(&token).send().await.unwrap();
    assert_eq!(health.status(), 200);
    let refused = http.get(format!("{base}/api/health")).send().await.unwrap();
    assert_eq!(refused.status(), 401);
    // The initial target: `mcp serve`, started when the page (here: a script) asks.
    let connected =
        http.post(format!("{base}/api/connect")).bearer_auth(&token).json(&serde_json::json!({})).send().await.unwrap();
    assert_eq!(connected.status(), 200);
    let summary: serde_json::Value = connected.json().await.unwrap();
    assert_eq!(summary["transport"], "stdio", "{summary}");
    assert_eq!(summary["protocolVersion"], "2026-07-28", "{summary}");
}

#[tokio::test]
async fn inspect_takes_a_configured_server_with_its_transport() {
    let dir = std::env::temp_dir().join(format!("mcp-inspect-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("mcp.json");
    let entry = serde_json::json!({"mcpServers": {"remote": {"type": "sse", "url": "http://127.0.0.1:1/sse", "headers": {"X-A": "1"}}}});
    std::fs::write(&config, entry.to_string()).unwrap();
    let (_running, base, token) = start(&["remote", "--config", config.to_str().unwrap()]).await;
    let http = reqwest::Client::builder().no_proxy().timeout(Duration::from_secs(30)).build().unwrap();
    let state: serde_json::Value =
        http.get(format!("{base}/api/state")).bearer_auth(&token).send().await.unwrap().json().await.unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    // The configured server, resolved by the client library: its URL, and HTTP+SSE as its
    // entry says.
    assert_eq!(state["initialTarget"], "http://127.0.0.1:1/sse", "{state}");
    assert_eq!(state["initialTransport"], "sse", "{state}");
}
