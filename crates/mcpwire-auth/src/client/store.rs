//! What a native application (the `mcp` command line, its inspector) does around an
//! [`OAuthClient`]: the authorization kept per server between runs, under the user's config
//! directory, readable by the user alone ([`TokenStore`]), and the client of a server made
//! with its loopback redirect and what was kept for it ([`native_client`]).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::{ClientCredentials, Grant, LoopbackAuthorizer, OAuthClient, OAuthConfig, SavedAuthorization};
use crate::AuthError;

/// How a native application authorizes with a protected server.
#[derive(Debug, Clone, Default)]
pub struct NativeSettings {
    /// A pre-registered client; else a client ID metadata document or dynamic
    /// registration, as the authorization server offers.
    pub client_id: Option<String>,
    /// Its secret.
    pub client_secret: Option<String>,
    /// The client credentials grant instead of a user's authorization.
    pub client_credentials: bool,
    /// A client ID metadata document URL.
    pub client_metadata_url: Option<String>,
}

/// One kept authorization, as its file holds it.
#[derive(Clone, Serialize, Deserialize)]
pub struct StoredAuthorization {
    /// The server's URL.
    pub server: String,
    /// The authorization.
    pub authorization: SavedAuthorization,
}

impl std::fmt::Debug for StoredAuthorization {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoredAuthorization").field("server", &self.server).finish_non_exhaustive()
    }
}

/// The authorizations kept, one file per server (named by a digest of its URL) in a
/// directory readable by the user alone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenStore {
    dir: PathBuf,
}

impl TokenStore {
    /// The store in `dir`.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into() }
    }

    /// The user's store: `$MCP_AUTH_DIR`, else `mcp/auth` under the user's config directory
    /// (`None` without one).
    pub fn user() -> Option<Self> {
        if let Some(dir) = std::env::var_os("MCP_AUTH_DIR") {
            return Some(Self::new(dir));
        }
        dirs::config_dir().map(|d| Self::new(d.join("mcp").join("auth")))
    }

    /// Its directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn file_for(&self, url: &str) -> PathBuf {
        let digest = Sha256::digest(url.as_bytes());
        let name: String = digest.iter().take(16).map(|b| format!("{b:02x}")).collect();
        self.dir.join(format!("{name}.json"))
    }

    /// The authorization kept for the server at `url`.
    pub fn load(&self, url: &str) -> Option<SavedAuthorization> {
        let text = std::fs::read_to_string(self.file_for(url)).ok()?;
        let stored: StoredAuthorization = serde_json::from_str(&text).ok()?;
        (stored.server == url).then_some(stored.authorization)
    }

    /// Keeps the authorization for the server at `url`: the directory and the file readable
    /// by the user alone, the file replaced whole.
    pub fn save(&self, url: &str, authorization: &SavedAuthorization) -> std::io::Result<()> {
        let path = self.file_for(url);
        std::fs::create_dir_all(&self.dir)?;
        let stored = StoredAuthorization { server: url.to_owned(), authorization: authorization.clone() };
        let text = serde_json::to_string_pretty(&stored).map_err(std::io::Error::other)?;
        let temp = path.with_extension("tmp");
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create(true).truncate(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
            options.mode(0o600);
            std::fs::set_permissions(&self.dir, std::fs::Permissions::from_mode(0o700))?;
        }
        std::io::Write::write_all(&mut options.open(&temp)?, text.as_bytes())?;
        std::fs::rename(&temp, &path)
    }

    /// Forgets the authorization kept for the server at `url`; whether there was one.
    pub fn remove(&self, url: &str) -> bool {
        std::fs::remove_file(self.file_for(url)).is_ok()
    }

    /// Every kept authorization, by server URL.
    pub fn list(&self) -> Vec<StoredAuthorization> {
        let Ok(entries) = std::fs::read_dir(&self.dir) else { return Vec::new() };
        let mut all: Vec<StoredAuthorization> = entries
            .flatten()
            .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
            .filter_map(|e| serde_json::from_str(&std::fs::read_to_string(e.path()).ok()?).ok())
            .collect();
        all.sort_by(|a, b| a.server.cmp(&b.server));
        all
    }

    /// Keeps what `client` holds now for the server at `url` (a new or refreshed token);
    /// whether anything was written.
    pub async fn persist(&self, url: &str, client: &OAuthClient) -> std::io::Result<bool> {
        let Some(saved) = client.saved().await else { return Ok(false) };
        let unchanged = self.load(url).is_some_and(|old| old.access_token == saved.access_token);
        if unchanged {
            return Ok(false);
        }
        self.save(url, &saved).map(|()| true)
    }
}

/// The OAuth client of a native application (`client_name`) for the server at `url`: the
/// authorization code grant through `authorizer`'s loopback redirect (or the client
/// credentials grant, as `settings` say), no DPoP (the tokens outlive the process, a DPoP
/// key would not), and the authorization `store` kept for the server restored. Must be
/// called within a tokio runtime.
pub fn native_client(
    client_name: &str,
    url: &str,
    settings: &NativeSettings,
    authorizer: LoopbackAuthorizer,
    store: Option<&TokenStore>,
) -> Result<Arc<OAuthClient>, AuthError> {
    let mut config = OAuthConfig::new(client_name, authorizer.redirect_uri());
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
    let client = OAuthClient::new(url, config)?;
    let client = Arc::new(client.with_authorizer(Arc::new(authorizer)));
    if let Some(saved) = store.and_then(|s| s.load(url)) {
        let client = client.clone();
        // The restore takes the client's lock, which nothing holds yet: this does not wait.
        futures::executor::block_on(client.restore(saved));
    }
    Ok(client)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_store_holds_nothing() {
        let store = TokenStore::new("/nonexistent/mcpwire-auth-store");
        assert!(store.load("http://127.0.0.1:1/mcp").is_none());
        assert!(store.list().is_empty());
        assert!(!store.remove("http://127.0.0.1:1/mcp"));
    }
}
