//! A protected server (the reference server behind an OAuth resource server, tokens from
//! oidc-provider: tests/auth/provider.mjs) authorized through the inspector as the `mcp`
//! command line does it: the page is sent the authorization URL (an `authorize` event), the
//! user authorizes in the browser (played here over HTTP, as the CLI's tests do), the browser
//! comes back to the loopback redirect URI, and the connection completes; the token is kept
//! where the command line keeps its own, and used the next time.
//!
//! Needs Node.js and `tests/auth/node_modules` (`npm ci` in tests/auth; scripts/test does
//! it). Without them the tests fail, unless `MCP_SKIP_AUTH_PROVIDER` is set.

use std::time::Duration;

use mcpwire_auth::resource::{JwtVerifier, ResourceServer};
use mcpwire_inspector::{Inspector, TokenStore};
use serde_json::{json, Value};

use crate::common::{Api, STEP};
use crate::provider::AuthServer;

/// The reference server at `/mcp`, protected by `issuer`'s tokens (scope `mcp`); its URL.
async fn protected(auth: &AuthServer) -> (tokio::task::JoinHandle<std::io::Result<()>>, String) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let resource = format!("http://{}/mcp", listener.local_addr().expect("addr"));
    let verifier = tokio::time::timeout(STEP, JwtVerifier::discover(auth.issuer.clone(), resource.clone()))
        .await
        .expect("discovery in time")
        .expect("the issuer's metadata");
    let rs = ResourceServer::new(resource.clone(), verifier)
        .authorization_server(auth.issuer.clone())
        .scopes_supported(["mcp"])
        .required_scopes(["mcp"]);
    let config = mcpwire_http::HttpConfig { auth: Some(rs), ..mcpwire_http::HttpConfig::default() };
    let http = mcpwire_http::McpHttp::new(mcpwire_reference::server(), config);
    (tokio::spawn(http.serve(listener)), resource)
}

/// A fresh directory for kept tokens.
fn token_dir(name: &str) -> std::path::PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("inspector-oauth-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
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
        let form: Vec<(&str, &str)> = if body.contains("name=\"login\"") {
            vec![("prompt", "login"), ("login", "alice"), ("password", "anything")]
        } else {
            vec![("prompt", "consent")]
        };
        page = browser.post(at.join(&action).unwrap()).form(&form).send().await.expect("the form posts");
    }
    panic!("the authorization did not come back to the redirect URI");
}

#[tokio::test]
async fn a_server_that_answers_401_is_authorized_in_the_browser_and_the_token_kept() {
    let Some(auth) = AuthServer::start().await else { return };
    let (_server, url) = protected(&auth).await;
    let dir = token_dir("browser");
    let i = Inspector::builder().token_store(Some(TokenStore::new(&dir))).build().await.expect("starts");
    let api = Api::new(&i);
    let mut events = api.events().await;

    // Without OAuth, the 401 is the answer.
    let (status, refused) = api.post("/api/connect", json!({"target": url, "oauth": false})).await;
    assert_eq!(status, 502, "{refused}");
    assert!(refused["error"].as_str().unwrap().contains("401"), "{refused}");

    // With it (the default), connecting waits while the user authorizes; Disconnect gives up.
    let connect = || {
        let (base, token, http) = (api.base.clone(), api.token.clone(), api.http.clone());
        let body = json!({"target": url});
        tokio::spawn(async move {
            let response = http.post(format!("{base}/api/connect")).bearer_auth(token).json(&body).send().await;
            let response = response.expect("sent");
            (response.status().as_u16(), response.json::<Value>().await.unwrap_or(Value::Null))
        })
    };
    let abandoned = connect();
    events.until("authorize", |_| true).await;
    let (status, _) = api.post("/api/disconnect", json!({})).await;
    assert_eq!(status, 200);
    let (status, c) = tokio::time::timeout(STEP, abandoned).await.expect("given up in time").unwrap();
    assert_eq!(status, 502, "{c}");
    assert!(c["error"].as_str().unwrap().contains("given up"), "{c}");

    let connecting = connect();
    let asked = events.until("authorize", |_| true).await;
    assert_eq!(asked["target"], url.as_str());
    let authorize_url = asked["url"].as_str().expect("the authorization URL").to_owned();
    assert!(authorize_url.starts_with(&format!("{}/auth?", auth.issuer)), "{authorize_url}");
    for parameter in ["code_challenge_method=S256", "resource=", "state=", "redirect_uri=http%3A%2F%2F127.0.0.1"] {
        assert!(authorize_url.contains(parameter), "{parameter} in {authorize_url}");
    }
    // A user takes longer than the era's probe waits (3 s): the era is still the server's.
    tokio::time::sleep(Duration::from_secs(4)).await;
    let page = tokio::time::timeout(STEP, play_the_user(&authorize_url)).await.expect("the user in time");
    assert!(page.contains("Authorized"), "{page}");
    let (status, c) = tokio::time::timeout(STEP, connecting).await.expect("connected in time").unwrap();
    assert_eq!(status, 200, "{c}");
    assert_eq!(c["protocolVersion"], "2026-07-28", "{c}");
    let (_, tools) = api.post("/api/request", json!({"method": "tools/list"})).await;
    assert_eq!(tools["ok"], true, "{tools}");
    // The API's answers never carry the token: the HTTP exchange shows its scheme only.
    let authorization = tools["http"][0]["requestHeaders"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h[0] == "authorization")
        .map(|h| h[1].clone());
    assert_eq!(authorization, Some(json!("Bearer (hidden)")), "{tools}");

    // Kept as the command line keeps it: one file, the user's alone.
    let files: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().map(|e| e.path()).collect();
    assert_eq!(files.len(), 1, "{files:?}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&files[0]).unwrap().permissions().mode() & 0o777, 0o600);
    }
    let kept = TokenStore::new(&dir).load(&url).expect("the authorization kept for the server");
    assert!(kept.scopes.iter().any(|s| s == "mcp"), "{:?}", kept.scopes);

    // The next connection (and the next inspector) uses it: no authorization asked.
    drop(events);
    drop(i);
    let i = Inspector::builder().token_store(Some(TokenStore::new(&dir))).build().await.expect("starts");
    let api = Api::new(&i);
    let (status, c) = tokio::time::timeout(Duration::from_secs(10), api.post("/api/connect", json!({"target": url})))
        .await
        .expect("connected without asking the user");
    assert_eq!(status, 200, "{c}");
    let (_, echo) = api
        .post(
            "/api/request",
            json!({"method": "tools/call", "params": {"name": "echo", "arguments": {"text": "again"}}}),
        )
        .await;
    assert_eq!(echo["ok"], true, "{echo}");
}
