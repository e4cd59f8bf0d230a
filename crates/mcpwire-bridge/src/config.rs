//! A gateway built from an `mcpServers` config file ([`Gateway::from_config`]): every server
//! the file names, mounted under its name as prefix (`everything_echo`). The file is read by
//! [`mcpwire_client::config`], and each server opened as a [`Target`] of [`mcpwire_client::target`].

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use mcpwire_client::target::{self, Opened, ResolveOptions, Target, TargetError};
use mcpwire_client::{ClientError, ProtocolVersion};
use mcpwire_server::ServerBuilder;
use mcpwire_transport::child::ChildProcess;
use parking_lot::Mutex;

use crate::gateway::{Gateway, MountError};
use crate::router::CallRouter;
use crate::{client_builder, BadPrefix, Namespace};

/// The servers of an `mcpServers` config file, each resolved to a [`Target`] and its name
/// checked as a prefix: what [`Gateway::from_config`] mounts.
#[derive(Debug, Clone)]
pub struct GatewayConfig {
    /// The config file.
    pub path: PathBuf,
    /// Each server's name (its prefix) and target, in the file's order.
    pub servers: Vec<(String, Target)>,
}

/// Why a config file cannot make a gateway.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file cannot be read, is not JSON, or has no `mcpServers` (or `servers`) object.
    #[error("{}: {message}", path.display())]
    File {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// The file names no server.
    #[error("{} names no server", path.display())]
    Empty {
        /// The file.
        path: PathBuf,
    },
    /// A server's name cannot be a prefix.
    #[error("server `{name}`: {reason}")]
    Prefix {
        /// The server's name.
        name: String,
        /// Why it cannot.
        reason: BadPrefix,
    },
    /// A server's entry cannot be made a target.
    #[error(transparent)]
    Target(#[from] TargetError),
}

impl GatewayConfig {
    /// Reads the config file at `path` and resolves each of its servers with `options`
    /// (headers and a bearer token for its remote servers; its `config` is `path`).
    pub fn load(path: &Path, options: &ResolveOptions) -> Result<GatewayConfig, ConfigError> {
        let file = mcpwire_client::config::load(path)
            .map_err(|message| ConfigError::File { path: path.to_path_buf(), message })?;
        if file.servers.is_empty() {
            return Err(ConfigError::Empty { path: path.to_path_buf() });
        }
        let options = ResolveOptions { config: Some(path.to_path_buf()), ..options.clone() };
        let mut servers = Vec::new();
        for name in file.servers.keys() {
            if let Err(reason) = Namespace::prefixed(name.as_str()) {
                return Err(ConfigError::Prefix { name: name.clone(), reason });
            }
            servers.push((name.clone(), target::resolve(name, &options)?));
        }
        Ok(GatewayConfig { path: path.to_path_buf(), servers })
    }
}

/// Opens a [`Target`]: [`Target::open`] by default; another to authorize, or to watch the
/// traffic, say.
pub type Open = Arc<dyn Fn(&Target) -> Result<Opened, TargetError> + Send + Sync>;

/// How a gateway built from a config file reaches its servers.
#[derive(Clone)]
pub struct UpstreamOptions {
    /// The gateway's name: its server's, and its client's towards each mounted server.
    pub name: String,
    /// The gateway's version.
    pub version: String,
    /// How long the handshake with a server may take, and each request to it.
    pub timeout: Duration,
    /// A revision to speak with every server instead of detecting it (another legacy one
    /// the server answers with is accepted).
    pub protocol_version: Option<ProtocolVersion>,
    /// Opens a server's target, each time it is mounted or connected again.
    pub open: Open,
}

impl UpstreamOptions {
    /// Options for a gateway named `name`: a timeout of 60 seconds, the revision detected,
    /// targets opened with [`Target::open`].
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> UpstreamOptions {
        UpstreamOptions {
            name: name.into(),
            version: version.into(),
            timeout: Duration::from_secs(60),
            protocol_version: None,
            open: Arc::new(Target::open),
        }
    }

    /// The client towards an upstream server ([`client_builder`]): its questions go to
    /// `router`; [`Self::timeout`] for each request; a pinned revision accepts another
    /// legacy one the server answers with.
    pub fn client(&self, router: &CallRouter) -> mcpwire_client::Client {
        let mut builder = client_builder(&self.name, &self.version, router).request_timeout(self.timeout);
        if let Some(v) = self.protocol_version {
            builder = builder.protocol_version(v).accept_negotiated(true);
        }
        builder.build()
    }
}

impl std::fmt::Debug for UpstreamOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UpstreamOptions")
            .field("name", &self.name)
            .field("version", &self.version)
            .field("timeout", &self.timeout)
            .field("protocol_version", &self.protocol_version)
            .finish_non_exhaustive()
    }
}

/// How mounting one server of a config file went.
#[derive(Debug)]
pub struct Mounted {
    /// The server's name, its prefix.
    pub name: String,
    /// Its target.
    pub target: Target,
    /// Whether it is mounted (its session is [`Gateway::session`]).
    pub outcome: Result<(), MountError>,
}

impl Gateway {
    /// A gateway named as `options` says, its server built from a builder given to
    /// `customize` first (see [`Gateway::new`]), with every server of `config` mounted under
    /// its name, all at once. Each server's outcome is returned, in the file's order: one
    /// that did not connect is not mounted (nor retried). A mounted one that drops later is
    /// connected again. The server processes started are ended by [`Gateway::close`].
    pub async fn from_config(
        config: &GatewayConfig,
        options: &UpstreamOptions,
        customize: impl FnOnce(ServerBuilder) -> ServerBuilder,
    ) -> (Gateway, Vec<Mounted>) {
        let gateway = Gateway::new(options.name.clone(), options.version.clone(), customize);
        let mounts = config.servers.iter().map(|(name, target)| {
            let connect = connector(target.clone(), options.clone(), gateway.children.clone());
            let gateway = &gateway;
            async move {
                let outcome = gateway.mount(name, connect).await;
                Mounted { name: name.clone(), target: target.clone(), outcome }
            }
        });
        let mounted = futures::future::join_all(mounts).await;
        (gateway, mounted)
    }
}

/// Opens `target` for the gateway (each time it is mounted or connected again); a server
/// process started is kept in `children`, to be ended with the gateway.
fn connector(target: Target, options: UpstreamOptions, children: Arc<Mutex<Vec<ChildProcess>>>) -> impl crate::Connect {
    move |router: CallRouter| {
        let (target, options, children) = (target.clone(), options.clone(), children.clone());
        async move {
            let Opened { connection, child } =
                (options.open)(&target).map_err(|e| ClientError::Io(std::io::Error::other(e.to_string())))?;
            children.lock().extend(child);
            let timeout = options.timeout;
            match tokio::time::timeout(timeout, options.client(&router).connect(connection)).await {
                Ok(outcome) => outcome,
                Err(_) => Err(ClientError::Timeout { method: "the handshake".into(), timeout }),
            }
        }
    }
}
