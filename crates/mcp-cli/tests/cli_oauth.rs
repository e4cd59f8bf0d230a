//! `mcp serve --http` and `mcp proxy --http` as OAuth protected resources (`--auth-issuer`,
//! `--auth-audience`, `--scope`), against a real authorization server (oidc-provider, see
//! tests/auth), driven by the real binary's client commands with `--bearer`.
//!
//! The proxy is the protected resource in front of a protected upstream, with credentials of
//! its own for it: the client's token is never passed on (the upstream, a resource of its own,
//! would refuse it).

#[path = "../../../tests/auth/provider.rs"]
mod provider;

use std::process::Stdio;
use std::time::Duration;

use provider::AuthServer;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

const MCP: &str = env!("CARGO_BIN_EXE_mcp");
const WAIT: Duration = Duration::from_secs(30);

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Starts `mcp ARGS` and waits until its stderr says it serves.
async fn serving(args: &[&str]) -> Child {
    let mut child = Command::new(MCP).args(args).stderr(Stdio::piped()).kill_on_drop(true).spawn().unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let served = tokio::time::timeout(WAIT, async {
        while let Ok(Some(line)) = lines.next_line().await {
            if line.contains("serving on ") {
                return true;
            }
        }
        false
    })
    .await
    .expect("serving in time");
    assert!(served, "mcp {args:?} ended before serving");
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    child
}

async fn mcp(args: &[&str]) -> (i32, String, String) {
    let out = tokio::time::timeout(WAIT, Command::new(MCP).args(args).kill_on_drop(true).output())
        .await
        .expect("mcp finished in time")
        .unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code().unwrap_or(-1), text(&out.stdout), text(&out.stderr))
}

#[tokio::test]
async fn a_protected_proxy_in_front_of_a_protected_server() {
    let Some(auth) = AuthServer::start().await else { return };
    let iss = auth.issuer.as_str();
    let (up_port, proxy_port) = (free_port(), free_port());
    let upstream = format!("http://127.0.0.1:{up_port}/mcp");
    let proxy = format!("http://127.0.0.1:{proxy_port}/mcp");
    let up_addr = format!("127.0.0.1:{up_port}");
    let _upstream =
        serving(&["serve", "--http", &up_addr, "--auth-issuer", iss, "--auth-audience", &upstream, "--scope", "mcp"])
            .await;
    let upstream_token = auth.token("jwt-bob", "mcp", &upstream).await;
    let proxy_addr = format!("127.0.0.1:{proxy_port}");
    let _proxy = serving(&[
        "proxy",
        &upstream,
        "--bearer",
        &upstream_token,
        "--http",
        &proxy_addr,
        "--auth-issuer",
        iss,
        "--auth-audience",
        &proxy,
        "--scope",
        "mcp",
    ])
    .await;

    // A client with a token for the proxy: served, through the proxy's own upstream token.
    let token = auth.token("jwt-alice", "mcp", &proxy).await;
    let (code, out, err) = mcp(&["call", &proxy, "--bearer", &token, "echo", "text=through"]).await;
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("through"), "{out}");

    // The same token at the upstream: issued for another resource, refused.
    let (code, out, err) = mcp(&["list", &upstream, "--bearer", &token]).await;
    assert_ne!(code, 0, "{out}");
    assert!(err.contains("401") || err.to_lowercase().contains("unauthorized"), "{err}");

    // No token, and a token without the required scope.
    let (code, _, err) = mcp(&["list", &proxy]).await;
    assert_ne!(code, 0, "{err}");
    let unscoped = auth.token("jwt-alice", "notes:read", &proxy).await;
    let (code, _, err) = mcp(&["list", &proxy, "--bearer", &unscoped]).await;
    assert_ne!(code, 0, "{err}");
    assert!(err.contains("403") || err.contains("insufficient_scope") || err.contains("scope"), "{err}");

    // The protected resource metadata names the issuer and the scope.
    let metadata: serde_json::Value =
        reqwest::get(format!("http://{proxy_addr}/.well-known/oauth-protected-resource/mcp"))
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
    assert_eq!(metadata["resource"], serde_json::json!(proxy));
    assert_eq!(metadata["authorization_servers"], serde_json::json!([iss]));
    assert_eq!(metadata["scopes_supported"], serde_json::json!(["mcp"]));
}

#[tokio::test]
async fn an_unreachable_issuer_stops_the_start_and_half_the_options_are_a_usage_error() {
    let port = free_port().to_string();
    let dead = format!("http://127.0.0.1:{}", free_port());
    let audience = format!("http://127.0.0.1:{port}/mcp");
    let (code, _, err) = mcp(&["serve", "--http", &port, "--auth-issuer", &dead, "--auth-audience", &audience]).await;
    assert_eq!(code, 3, "{err}");
    assert!(err.contains(&dead), "{err}");
    let (code, _, err) = mcp(&["serve", "--http", &port, "--auth-issuer", &dead]).await;
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--auth-audience"), "{err}");
}
