//! The client commands as OAuth clients: on a `401` from an http(s) target they discover its
//! authorization server and run the authorization code flow with PKCE through a loopback
//! redirect (the browser opened at the authorization URL, or the URL printed), or the client
//! credentials grant (`--client-credentials`). The tokens are kept per server under the
//! user's config directory, readable by the user alone, and refreshed when they expire.

use std::sync::Arc;

use mcpwire_auth::{LoopbackAuthorizer, OAuthClient, SavedAuthorization, TokenStore};

use super::error::CliError;

/// How the client commands authorize with a protected server (`--client-id`,
/// `--client-secret`, `--client-credentials`, `--client-metadata-url`).
pub use mcpwire_auth::NativeSettings as OAuthSettings;
/// One kept authorization, as its file holds it.
pub use mcpwire_auth::StoredAuthorization as Stored;

/// The authorization kept for the server at `url`.
pub fn load(url: &str) -> Option<SavedAuthorization> {
    TokenStore::user()?.load(url)
}

/// Forgets the authorization kept for the server at `url`; whether there was one.
pub fn remove(url: &str) -> bool {
    TokenStore::user().is_some_and(|s| s.remove(url))
}

/// Every kept authorization.
pub fn list() -> Vec<Stored> {
    TokenStore::user().map(|s| s.list()).unwrap_or_default()
}

/// Shows the user the authorization URL: on stderr, and in a browser unless `MCP_BROWSER`
/// is `none` (`MCP_BROWSER` may name the program to open it with; else the system's).
fn present(url: &url::Url) {
    eprintln!("mcp: authorization needed; open this URL in a browser to authorize:\n  {url}");
    let program = match std::env::var("MCP_BROWSER") {
        Ok(p) if p == "none" || p.is_empty() => return,
        Ok(p) => p,
        Err(_) if cfg!(target_os = "macos") => "open".into(),
        Err(_) if cfg!(windows) => "explorer".into(),
        Err(_) if std::env::var_os("DISPLAY").is_some() || std::env::var_os("WAYLAND_DISPLAY").is_some() => {
            "xdg-open".into()
        }
        Err(_) => return,
    };
    let spawned = std::process::Command::new(&program)
        .arg(url.as_str())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    if let Err(e) = spawned {
        tracing::debug!("could not open a browser with {program}: {e}");
    }
}

/// The OAuth client of the server at `url`, with the authorization kept for it if any.
/// Must be called within a tokio runtime.
pub fn client(url: &str, settings: &OAuthSettings) -> Result<Arc<OAuthClient>, CliError> {
    let authorizer = LoopbackAuthorizer::bind(Arc::new(present)).map_err(|e| CliError::connection(e.to_string()))?;
    let store = TokenStore::user();
    mcpwire_auth::native_client("mcp (command line)", url, settings, authorizer, store.as_ref())
        .map_err(|e| CliError::usage(format!("{url}: {e}")))
}

/// Keeps what `client` holds now for the server at `url` (a new or refreshed token).
pub async fn persist(url: &str, client: &OAuthClient) {
    let Some(store) = TokenStore::user() else {
        eprintln!("mcp: the token could not be kept (no config directory); the next command will authorize again");
        return;
    };
    if let Err(e) = store.persist(url, client).await {
        eprintln!("mcp: the token could not be kept ({e}); the next command will authorize again");
    }
}
