//! The authorization server of the OAuth tests, for Rust tests to start (included with
//! `#[path]`): oidc-provider configured by provider.mjs, run by Node.js as a child process.

use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;
use tokio::io::AsyncBufReadExt;

const WAIT: Duration = Duration::from_secs(30);

/// Where provider.mjs and its packages are.
const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/auth");

/// oidc-provider on 127.0.0.1, running until dropped.
pub struct AuthServer {
    /// Its issuer URL.
    pub issuer: String,
    /// The https URL of a client ID metadata document it takes (a native client, any
    /// loopback redirect port).
    #[allow(dead_code)] // not every test that includes this file uses it
    pub client_metadata_url: String,
    _child: tokio::process::Child,
}

impl AuthServer {
    /// Starts it. `None` (the test is skipped, saying so) only when its packages are not
    /// installed and `MCP_SKIP_AUTH_PROVIDER` is set; otherwise a missing Node.js or package
    /// fails the test.
    pub async fn start() -> Option<Self> {
        Self::start_on(0).await
    }

    /// Starts it listening on `port` (0: a port of its own choosing), so that its issuer URL
    /// can be known before it runs (a resource server started before its authorization
    /// server).
    #[allow(dead_code)] // not every test that includes this file picks the port
    pub async fn start_on(port: u16) -> Option<Self> {
        Self::available()?;
        let mut child = tokio::process::Command::new("node")
            .arg(format!("{DIR}/provider.mjs"))
            .arg(port.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("node runs tests/auth/provider.mjs (npm ci in tests/auth first)");
        let mut lines = tokio::io::BufReader::new(child.stdout.take().expect("stdout")).lines();
        let line = tokio::time::timeout(WAIT, lines.next_line()).await.expect("it starts in time");
        let line = line.expect("its stdout").expect("a line with its issuer");
        let said: Value = serde_json::from_str(&line).expect("JSON");
        let text = |key: &str| said[key].as_str().unwrap_or_else(|| panic!("no {key} in {said}")).to_owned();
        let (issuer, client_metadata_url) = (text("issuer"), text("client_metadata_url"));
        // Whatever else it prints is read (and dropped) until it ends.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        Some(Self { issuer, client_metadata_url, _child: child })
    }

    /// `Some` unless the tests that need it are to be skipped (then `None`, saying so): its
    /// packages are not installed and `MCP_SKIP_AUTH_PROVIDER` is set. A test that starts the
    /// provider late checks this before anything else.
    #[allow(dead_code)] // not every test that includes this file starts it late
    pub fn available() -> Option<()> {
        if !std::path::Path::new(&format!("{DIR}/node_modules/oidc-provider")).exists()
            && std::env::var_os("MCP_SKIP_AUTH_PROVIDER").is_some()
        {
            eprintln!("skipped: tests/auth/node_modules is missing and MCP_SKIP_AUTH_PROVIDER is set");
            return None;
        }
        Some(())
    }

    /// An access token for `client_id` (its secret is `{client_id}-secret`) with `scope`, for
    /// `resource`, by the client credentials grant.
    #[allow(dead_code)] // not every test that includes this file asks for tokens itself
    pub async fn token(&self, client_id: &str, scope: &str, resource: &str) -> String {
        let http = reqwest::Client::builder().no_proxy().build().expect("client");
        let request = http
            .post(format!("{}/token", self.issuer))
            .basic_auth(client_id, Some(format!("{client_id}-secret")))
            .form(&[("grant_type", "client_credentials"), ("scope", scope), ("resource", resource)])
            .send();
        let response = tokio::time::timeout(WAIT, request).await.expect("in time").expect("token request");
        let answer: Value = response.json().await.expect("token JSON");
        answer["access_token"].as_str().unwrap_or_else(|| panic!("no token: {answer}")).to_owned()
    }

    /// Replaces the issuer's signing keys by new ones (the old are no longer published).
    #[allow(dead_code)] // not every test that includes this file rotates keys
    pub async fn rotate_keys(&self) {
        let http = reqwest::Client::builder().no_proxy().build().expect("client");
        let response = http.post(format!("{}/rotate", self.issuer)).send().await.expect("rotate");
        assert_eq!(response.status(), 204);
    }
}
