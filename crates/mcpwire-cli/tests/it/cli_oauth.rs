//! `mcp serve --http` and `mcp proxy --http` as OAuth protected resources (`--auth-issuer`,
//! `--auth-audience`, `--scope`), against a real authorization server (oidc-provider, see
//! tests/auth), driven by the real binary's client commands with `--bearer`.
//!
//! The proxy is the protected resource in front of a protected upstream, with credentials of
//! its own for it: the client's token is never passed on (the upstream, a resource of its own,
//! would refuse it).

use crate::provider;

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

    // No token (and no OAuth flow), and a token without the required scope.
    let (code, _, err) = mcp(&["list", &proxy, "--no-oauth"]).await;
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

/// What can be told wrong at start is a usage error (exit 2), before anything starts: half
/// the options, an issuer or an audience that is not an http(s) URL. (An issuer that does not
/// answer is not: see `a_protected_server_starts_before_its_authorization_server`.)
#[tokio::test]
async fn half_the_options_and_bad_urls_are_usage_errors() {
    let port = free_port().to_string();
    let dead = format!("http://127.0.0.1:{}", free_port());
    let audience = format!("http://127.0.0.1:{port}/mcp");
    let (code, _, err) = mcp(&["serve", "--http", &port, "--auth-issuer", &dead]).await;
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--auth-audience"), "{err}");
    for (issuer, audience) in [("not a url", audience.as_str()), ("ftp://127.0.0.1", &audience), (&dead, "mcp")] {
        let (code, _, err) =
            mcp(&["serve", "--http", &port, "--auth-issuer", issuer, "--auth-audience", audience]).await;
        assert_eq!(code, 2, "{issuer} {audience}: {err}");
        assert!(err.contains("--auth-"), "{err}");
    }
    // The proxy tells it before it reaches its upstream (a command that does not exist).
    let (code, _, err) = mcp(&[
        "proxy",
        "mcp-no-such-command-here",
        "--http",
        &port,
        "--auth-issuer",
        "not a url",
        "--auth-audience",
        &audience,
    ])
    .await;
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--auth-issuer"), "{err}");
}

/// A JWT access token in form (ES256, `at+jwt`) that no issuer signed: checking it needs the
/// issuer's keys.
const UNSIGNED_JWT: &str = "eyJhbGciOiJFUzI1NiIsInR5cCI6ImF0K2p3dCIsImtpZCI6ImsifQ.eyJzdWIiOiJ4In0.c2ln";

/// Starts `mcp ARGS`, waits until its stderr says it serves, and keeps every line it writes to
/// stderr.
async fn serving_logged(args: &[&str]) -> (Child, std::sync::Arc<parking_lot::Mutex<Vec<String>>>) {
    let mut child = Command::new(MCP).args(args).stderr(Stdio::piped()).kill_on_drop(true).spawn().unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let log = std::sync::Arc::new(parking_lot::Mutex::new(Vec::new()));
    let kept = log.clone();
    tokio::spawn(async move {
        while let Ok(Some(line)) = lines.next_line().await {
            kept.lock().push(line);
        }
    });
    let what = mcpwire_testkit::describe(|f| write!(f, "mcp {args:?} says it serves; its stderr: {:?}", log.lock()));
    mcpwire_testkit::eventually(what, || {
        let served = log.lock().iter().any(|l| l.contains("serving on "));
        std::future::ready(served.then_some(()))
    })
    .await;
    (child, log)
}

/// An `initialize` POSTed with `token`: the status and the `Retry-After` header.
async fn post_with(url: &str, token: &str) -> (u16, Option<String>) {
    let http = reqwest::Client::builder().no_proxy().build().unwrap();
    let initialize = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "late", "version": "0"}}});
    let request = http
        .post(url)
        .bearer_auth(token)
        .header("Accept", "application/json, text/event-stream")
        .json(&initialize)
        .send();
    let response = tokio::time::timeout(WAIT, request).await.expect("answered in time").unwrap();
    let retry_after = response.headers().get("retry-after").map(|v| v.to_str().unwrap().to_owned());
    (response.status().as_u16(), retry_after)
}

/// Pods that start in the wrong order: `mcp serve --http --auth-issuer` started before its
/// authorization server serves; requests that need the authorization server are answered 503
/// with `Retry-After` (a request without a token is a 401 as ever: that needs nothing of it),
/// and why is logged once, not once per request. Once the authorization server answers (on
/// the port its issuer URL named all along), tokens are taken, with no restart. Both JWTs (the
/// keys) and opaque tokens (introspection), `mcp serve` and `mcp proxy` alike.
#[tokio::test]
async fn a_protected_server_starts_before_its_authorization_server() {
    if provider::AuthServer::available().is_none() {
        return;
    }
    let as_port = free_port();
    let issuer = format!("http://127.0.0.1:{as_port}");
    let upstream = format!("'{MCP}' serve");
    let start = |introspect: bool, proxy: bool| {
        let port = free_port();
        let url = format!("http://127.0.0.1:{port}/mcp");
        let (issuer, upstream) = (issuer.clone(), upstream.clone());
        async move {
            let addr = format!("127.0.0.1:{port}");
            let mut args = match proxy {
                true => vec!["proxy", &upstream],
                false => vec!["serve"],
            };
            args.extend(["--http", &addr, "--auth-issuer", &issuer, "--auth-audience", &url, "--scope", "mcp"]);
            if introspect {
                args.extend(["--auth-client-id", "resource-server", "--auth-client-secret", "resource-server-secret"]);
            }
            let (child, log) = serving_logged(&args).await;
            (child, log, url)
        }
    };
    let (_jwt_server, jwt_log, jwt_url) = start(false, false).await;
    let (_opaque_server, opaque_log, opaque_url) = start(true, false).await;
    let (_proxy, proxy_log, proxy_url) = start(false, true).await;

    for url in [&jwt_url, &opaque_url, &proxy_url] {
        for _ in 0..3 {
            let (status, retry_after) = post_with(url, UNSIGNED_JWT).await;
            assert_eq!(status, 503, "{url}");
            let seconds: u64 = retry_after.expect("Retry-After on a 503").parse().expect("seconds");
            assert!((1..=10).contains(&seconds), "Retry-After {seconds}");
        }
        let (status, _) = post_with(url, "").await;
        assert_eq!(status, 400, "an empty bearer token is refused without the authorization server");
    }
    let unreachable = |log: &parking_lot::Mutex<Vec<String>>| {
        log.lock().iter().filter(|l| l.contains("cannot be reached") && l.contains(&issuer)).count()
    };
    for log in [&jwt_log, &opaque_log, &proxy_log] {
        let said = mcpwire_testkit::describe(|f| write!(f, "the reason logged; stderr: {:?}", log.lock()));
        mcpwire_testkit::eventually(said, || std::future::ready((unreachable(log) > 0).then_some(()))).await;
        assert_eq!(unreachable(log), 1, "once per streak, not per request: {:?}", log.lock());
    }

    let auth = provider::AuthServer::start_on(as_port).await.expect("the provider starts");
    assert_eq!(auth.issuer, issuer);
    for (client, url) in [("jwt-alice", &jwt_url), ("opaque-alice", &opaque_url), ("jwt-bob", &proxy_url)] {
        let token = auth.token(client, "mcp", url).await;
        let what = format!("{client}'s token no longer answered 503 at {url}");
        let status = mcpwire_testkit::eventually(what, || async {
            let (status, _) = post_with(url, &token).await;
            (status != 503).then_some(status)
        })
        .await;
        assert_eq!(status, 200, "{client} at {url}");
        let (code, out, err) = mcp(&["call", url, "--bearer", &token, "echo", "text=late"]).await;
        assert_eq!(code, 0, "{out}{err}");
        assert!(out.contains("late"), "{out}");
    }
    for log in [&jwt_log, &opaque_log, &proxy_log] {
        assert_eq!(unreachable(log), 1, "{:?}", log.lock());
        let said = mcpwire_testkit::describe(|f| write!(f, "the recovery logged; stderr: {:?}", log.lock()));
        let answers = || log.lock().iter().any(|l| l.contains("answers again"));
        mcpwire_testkit::eventually(said, || std::future::ready(answers().then_some(()))).await;
    }
}

/// `mcp serve --http` protected by `auth`, needing the scope `mcp`; and its URL.
async fn protected_serve(auth: &AuthServer) -> (Child, String) {
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let addr = format!("127.0.0.1:{port}");
    let args = ["serve", "--http", &addr, "--auth-issuer", &auth.issuer, "--auth-audience", &url, "--scope", "mcp"];
    (serving(&args).await, url)
}

/// A fresh directory for kept tokens.
fn token_dir(name: &str) -> std::path::PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("oauth-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// `mcp ARGS` with tokens kept in `dir` and no browser.
fn mcp_with(dir: &std::path::Path, args: &[&str]) -> Command {
    let mut command = Command::new(MCP);
    command.args(args).env("MCP_AUTH_DIR", dir).env("MCP_BROWSER", "none").kill_on_drop(true);
    command
}

/// The test as the user in the browser: opens `url`, fills in each form the authorization
/// server shows (any login and password, then the consent), following every redirect, until
/// it is sent back to the loopback redirect URI; returns that page.
async fn play_the_user(url: &str) -> String {
    let browser = reqwest::Client::builder().cookie_store(true).no_proxy().build().unwrap();
    let mut page = browser.get(url).send().await.expect("the authorization URL opens");
    for _ in 0..6 {
        let at = page.url().clone();
        let body = page.text().await.unwrap();
        if at.path() == "/callback" {
            return body;
        }
        let action = body
            .split("action=\"")
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .unwrap_or_else(|| panic!("no form at {at}: {body}"))
            .replace("&amp;", "&");
        let prompt = if body.contains("name=\"login\"") { "login" } else { "consent" };
        let form: Vec<(&str, &str)> = match prompt {
            "login" => vec![("prompt", "login"), ("login", "alice"), ("password", "anything")],
            _ => vec![("prompt", "consent")],
        };
        page = browser.post(at.join(&action).unwrap()).form(&form).send().await.expect("the form posts");
    }
    panic!("the authorization did not come back to the redirect URI");
}

/// `mcp list URL tools EXTRA…` with tokens kept in `dir`, the test as the user in the browser:
/// checks the authorization URL, authorizes, and checks the list; returns the URL.
async fn list_as_the_user(auth: &AuthServer, dir: &std::path::Path, url: &str, extra: &[&str]) -> String {
    let mut args = vec!["list", url, "tools"];
    args.extend_from_slice(extra);
    let mut list = mcp_with(dir, &args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let mut stderr = BufReader::new(list.stderr.take().unwrap()).lines();
    let authorize_url = tokio::time::timeout(WAIT, async {
        while let Ok(Some(line)) = stderr.next_line().await {
            if line.trim_start().starts_with("http://") {
                return line.trim().to_owned();
            }
        }
        panic!("mcp ended without an authorization URL");
    })
    .await
    .expect("the authorization URL in time");
    assert!(authorize_url.starts_with(&format!("{}/auth?", auth.issuer)), "{authorize_url}");
    for parameter in ["code_challenge_method=S256", "resource=", "state=", "redirect_uri=http%3A%2F%2F127.0.0.1"] {
        assert!(authorize_url.contains(parameter), "{parameter} in {authorize_url}");
    }
    let callback_page = tokio::time::timeout(WAIT, play_the_user(&authorize_url)).await.expect("the user in time");
    assert!(callback_page.contains("Authorized"), "{callback_page}");
    let out = tokio::time::timeout(WAIT, list.wait_with_output()).await.expect("mcp list in time").unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(stdout.contains("echo"), "{stdout}");
    authorize_url
}

/// With a client ID metadata document, its URL is the client id: no registration.
#[tokio::test]
async fn the_cli_with_a_client_id_metadata_document() {
    let Some(auth) = AuthServer::start().await else { return };
    let (_server, url) = protected_serve(&auth).await;
    let dir = token_dir("cimd");
    let document = auth.client_metadata_url.as_str();
    let authorize_url = list_as_the_user(&auth, &dir, &url, &["--client-metadata-url", document]).await;
    let client_id: String = url::form_urlencoded::byte_serialize(document.as_bytes()).collect();
    assert!(authorize_url.contains(&format!("client_id={client_id}&")), "{authorize_url}");
    let kept = std::fs::read_dir(&dir).unwrap().flatten().next().expect("a kept token").path();
    let kept: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(kept).unwrap()).unwrap();
    assert_eq!(kept["authorization"]["client_id"], serde_json::json!(document));
    assert_eq!(kept["authorization"]["client_auth_method"], serde_json::json!("none"));
}

#[tokio::test]
async fn the_cli_authorizes_in_the_browser_keeps_the_token_and_refreshes_it() {
    let Some(auth) = AuthServer::start().await else { return };
    let (_server, url) = protected_serve(&auth).await;
    let dir = token_dir("browser");

    // The first command meets a 401: it registers itself, prints the authorization URL, and
    // waits on its loopback redirect URI while the user authorizes.
    let authorize_url = list_as_the_user(&auth, &dir, &url, &[]).await;
    assert!(authorize_url.contains("client_id="), "{authorize_url}");

    // The token is kept, readable by the user alone.
    let files: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().map(|e| e.path()).collect();
    assert_eq!(files.len(), 1, "{files:?}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&files[0]).unwrap().permissions().mode() & 0o777, 0o600);
        assert_eq!(std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777, 0o700);
    }
    let kept: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&files[0]).unwrap()).unwrap();
    assert_eq!(kept["server"], serde_json::json!(url));
    assert_eq!(kept["authorization"]["server"]["issuer"], serde_json::json!(auth.issuer));
    assert!(kept["authorization"]["refresh_token"].is_string(), "offline_access gave a refresh token: {kept}");

    // The next command uses it: no authorization asked.
    let out = mcp_with(&dir, &["call", &url, "echo", "text=again"]).output().await.unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{stdout}{stderr}");
    assert!(stdout.contains("again") && !stderr.contains("authoriz"), "{stdout}{stderr}");

    // Expired: refreshed with the refresh token (no browser), and the new token kept.
    let mut expired = kept.clone();
    expired["authorization"]["expires_at"] = serde_json::json!(1);
    std::fs::write(&files[0], expired.to_string()).unwrap();
    let out = mcp_with(&dir, &["call", &url, "echo", "text=refreshed"]).output().await.unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success() && stdout.contains("refreshed") && !stderr.contains("authoriz"), "{stdout}{stderr}");
    let renewed: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&files[0]).unwrap()).unwrap();
    assert_ne!(renewed["authorization"]["access_token"], kept["authorization"]["access_token"]);
    assert!(renewed["authorization"]["expires_at"].as_u64().unwrap() > 1);

    // status names it; logout forgets it.
    let out = mcp_with(&dir, &["auth", "status"]).output().await.unwrap();
    let status = String::from_utf8_lossy(&out.stdout);
    assert!(status.contains(&url) && status.contains(&auth.issuer) && status.contains("mcp"), "{status}");
    let out = mcp_with(&dir, &["auth", "logout", &url]).output().await.unwrap();
    assert!(out.status.success());
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
}

#[tokio::test]
async fn the_cli_as_a_machine_with_client_credentials() {
    let Some(auth) = AuthServer::start().await else { return };
    let (_server, url) = protected_serve(&auth).await;
    let dir = token_dir("machine");
    let login = [
        "auth",
        "login",
        &url,
        "--client-id",
        "jwt-alice",
        "--client-secret",
        "jwt-alice-secret",
        "--client-credentials",
    ];
    let out = mcp_with(&dir, &login).output().await.unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{stdout}{stderr}");
    assert!(stdout.contains("jwt-alice") && stdout.contains(&auth.issuer), "{stdout}");
    let out = mcp_with(&dir, &["call", &url, "echo", "text=machine"]).output().await.unwrap();
    assert!(out.status.success() && String::from_utf8_lossy(&out.stdout).contains("machine"));
    // Without a way to authorize (--no-oauth), the 401 is an error.
    let out = mcp_with(&token_dir("none"), &["list", &url, "--no-oauth"]).output().await.unwrap();
    assert!(!out.status.success());
}

/// A token beginning with `-` (a base64url token does, one in 32) is the value of `--bearer`,
/// not an option: refused by the server, not by the command line.
#[tokio::test]
async fn a_bearer_token_may_begin_with_a_dash() {
    let (code, _, err) = mcp(&["call", "http://127.0.0.1:1/mcp", "--bearer", "-gXz0", "echo", "text=x"]).await;
    assert!(!err.contains("unexpected argument"), "{err}");
    assert_ne!(code, 2, "not a usage error: {err}");
}
