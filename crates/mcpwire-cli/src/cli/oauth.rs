//! The client commands as OAuth clients: on a `401` from an http(s) target they discover its
//! authorization server and run the authorization code flow with PKCE through a loopback
//! redirect (the browser opened at the authorization URL, or the URL printed), or the client
//! credentials grant (`--client-credentials`). The tokens are kept per server under the
//! user's config directory, readable by the user alone, and refreshed when they expire.

use std::path::PathBuf;
use std::sync::Arc;

use mcpwire_auth::{ClientCredentials, Grant, LoopbackAuthorizer, OAuthClient, OAuthConfig, SavedAuthorization};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::error::CliError;

/// How the client commands authorize with a protected server.
#[derive(Debug, Clone, Default)]
pub struct OAuthSettings {
    /// A pre-registered client (`--client-id`); else a client ID metadata document or
    /// dynamic registration, as the authorization server offers.
    pub client_id: Option<String>,
    /// Its secret (`--client-secret`).
    pub client_secret: Option<String>,
    /// The client credentials grant instead of a user's authorization (`--client-credentials`).
    pub client_credentials: bool,
    /// A client ID metadata document URL (`--client-metadata-url`).
    pub client_metadata_url: Option<String>,
}

/// Where the tokens are kept: `$MCP_AUTH_DIR`, else `mcp/auth` under the user's config
/// directory.
pub fn store_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("MCP_AUTH_DIR") {
        return Some(PathBuf::from(dir));
    }
    dirs::config_dir().map(|d| d.join("mcp").join("auth"))
}

/// One kept authorization, as its file holds it.
#[derive(Serialize, Deserialize)]
pub struct Stored {
    /// The server's URL.
    pub server: String,
    /// The authorization.
    pub authorization: SavedAuthorization,
}

fn file_for(url: &str) -> Option<PathBuf> {
    let digest = Sha256::digest(url.as_bytes());
    let name: String = digest.iter().take(16).map(|b| format!("{b:02x}")).collect();
    store_dir().map(|d| d.join(format!("{name}.json")))
}

/// The authorization kept for the server at `url`.
pub fn load(url: &str) -> Option<SavedAuthorization> {
    let text = std::fs::read_to_string(file_for(url)?).ok()?;
    let stored: Stored = serde_json::from_str(&text).ok()?;
    (stored.server == url).then_some(stored.authorization)
}

/// Keeps the authorization for the server at `url`: the directory and the file readable by
/// the user alone, the file replaced whole.
pub fn save(url: &str, authorization: &SavedAuthorization) -> std::io::Result<()> {
    let path = file_for(url).ok_or_else(|| std::io::Error::other("no config directory"))?;
    let dir = path.parent().expect("a file in a directory");
    std::fs::create_dir_all(dir)?;
    let stored = Stored { server: url.to_owned(), authorization: authorization.clone() };
    let text = serde_json::to_string_pretty(&stored).map_err(std::io::Error::other)?;
    let temp = path.with_extension("tmp");
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        options.mode(0o600);
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    }
    std::io::Write::write_all(&mut options.open(&temp)?, text.as_bytes())?;
    std::fs::rename(&temp, &path)
}

/// Forgets the authorization kept for the server at `url`; whether there was one.
pub fn remove(url: &str) -> bool {
    file_for(url).is_some_and(|p| std::fs::remove_file(p).is_ok())
}

/// Every kept authorization.
pub fn list() -> Vec<Stored> {
    let Some(dir) = store_dir() else { return Vec::new() };
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut all: Vec<Stored> = entries
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
        .filter_map(|e| serde_json::from_str(&std::fs::read_to_string(e.path()).ok()?).ok())
        .collect();
    all.sort_by(|a, b| a.server.cmp(&b.server));
    all
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
    let mut config = OAuthConfig::new("mcp (command line)", authorizer.redirect_uri());
    // Tokens outlive the process here, and a DPoP key would not.
    config.use_dpop = false;
    config.client_metadata_url = settings.client_metadata_url.clone();
    if let Some(id) = &settings.client_id {
        let mut credentials = ClientCredentials::new(id.clone());
        credentials.client_secret = settings.client_secret.clone();
        config.credentials.push(credentials);
    }
    if settings.client_credentials {
        config.grant = Grant::ClientCredentials;
        config.request_offline_access = false;
    }
    let client = OAuthClient::new(url, config).map_err(|e| CliError::usage(format!("{url}: {e}")))?;
    let client = Arc::new(client.with_authorizer(Arc::new(authorizer)));
    if let Some(saved) = load(url) {
        let client = client.clone();
        // The restore takes the client's lock, which nothing holds yet: this does not wait.
        futures::executor::block_on(client.restore(saved));
    }
    Ok(client)
}

/// Keeps what `client` holds now for the server at `url` (a new or refreshed token).
pub async fn persist(url: &str, client: &OAuthClient) {
    let Some(saved) = client.saved().await else { return };
    let unchanged = load(url).is_some_and(|old| old.access_token == saved.access_token);
    if unchanged {
        return;
    }
    if let Err(e) = save(url, &saved) {
        eprintln!("mcp: the token could not be kept ({e}); the next command will authorize again");
    }
}
