//! A web inspector for MCP servers, served by the program itself.
//!
//! [`Inspector::builder`] starts a local web server (axum) that serves a plain HTML/CSS/JS
//! page (embedded in the binary: no Node, no build step) and an API over the
//! [`mcpwire_client`] library. From the page one connects to a server of either era over stdio,
//! Streamable HTTP or HTTP+SSE, lists and calls its tools (forms built from their input
//! schemas, with their icons and annotations), reads its resources, gets its prompts (the
//! server's completions offered for template variables and prompt arguments), answers what it
//! asks (elicitation, sampling, roots), follows its logs and notifications, and sees every
//! message exchanged (and the HTTP headers of an HTTP server's). Its Apps tab hosts MCP Apps:
//! an app tool's `ui://` interface in a frame sandboxed to scripts alone, under a CSP built
//! from the resource's metadata, given the call's input and result, its own tool calls
//! forwarded to the server. A server that answers 401 is
//! authorized as the `mcp` command line does it (OAuth, the browser sent back to a loopback
//! redirect; the tokens kept where the command line keeps them).
//!
//! Secure by default:
//! - it binds a loopback address (a random free port unless one is given); any other address
//!   is refused unless [`InspectorBuilder::allow_remote`] says otherwise;
//! - a fresh random token (256 bits) is made at each start and put in the page's URL
//!   fragment ([`RunningInspector::url`]); every route under `/api/` wants it as
//!   `Authorization: Bearer …` (compared in constant time), never from a query string or a
//!   cookie;
//! - a request whose `Origin` is not the inspector's own is refused (403), and so is one
//!   whose `Host` is not the inspector's address (421: DNS rebinding);
//! - the page has a strict Content-Security-Policy (scripts only from itself, none inline),
//!   and shows whatever a server sends as text (images only from `data:` URLs of an image
//!   type, and a tool's icons from http(s) too);
//! - an app (MCP Apps) runs in `<iframe sandbox="allow-scripts">`, an opaque origin that can
//!   neither read the page's token nor use the API, under a policy of its own whose origins
//!   are checked one by one.
//!
//! ```no_run
//! # async fn run() -> Result<(), mcpwire_inspector::InspectorError> {
//! use mcpwire_inspector::{Inspector, Target};
//!
//! let target = Target::parse("mcp serve").map_err(mcpwire_inspector::InspectorError::Target)?;
//! let inspector = Inspector::builder().target(Some(target)).build().await?;
//! println!("open {}", inspector.url());
//! inspector.wait().await;
//! # Ok(())
//! # }
//! ```
#![deny(missing_docs)]
#![allow(clippy::result_large_err)]

mod api;
mod apps;
mod assets;
mod events;
mod security;
mod target;

use std::future::IntoFuture;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

pub use mcpwire_auth::TokenStore;
pub use target::{Resolver, Target, TransportChoice};

/// How long open connections are given to end once the inspector is told to stop.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(3);

/// Why the inspector could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum InspectorError {
    /// The host to bind is not a loopback address and remote access was not allowed.
    #[error(
        "refusing to serve the inspector on {0}: it is not a loopback address, so other machines could reach it, \
         and whoever gets the token can start processes on this machine and act on your MCP servers; \
         use --allow-remote to do it anyway"
    )]
    RemoteHost(String),
    /// The host is not an IP address (or `localhost`).
    #[error("--host {0:?} is not an IP address (or localhost)")]
    BadHost(String),
    /// The address could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A target could not be read.
    #[error("{0}")]
    Target(String),
}

/// The entry point: [`Inspector::builder`].
#[derive(Debug)]
pub struct Inspector;

impl Inspector {
    /// Starts configuring an inspector: loopback, a random free port, no target.
    pub fn builder() -> InspectorBuilder {
        InspectorBuilder {
            host: "127.0.0.1".into(),
            port: 0,
            allow_remote: false,
            target: None,
            resolver: None,
            reply_timeout: Duration::from_secs(600),
            tokens: TokenStore::user(),
        }
    }
}

/// Configures and starts an inspector ([`Self::build`]).
pub struct InspectorBuilder {
    host: String,
    port: u16,
    allow_remote: bool,
    target: Option<Target>,
    resolver: Option<Resolver>,
    reply_timeout: Duration,
    tokens: Option<TokenStore>,
}

impl std::fmt::Debug for InspectorBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InspectorBuilder")
            .field("host", &self.host)
            .field("port", &self.port)
            .field("allow_remote", &self.allow_remote)
            .field("target", &self.target)
            .field("tokens", &self.tokens)
            .finish()
    }
}

impl InspectorBuilder {
    /// The address to listen on: an IP address or `localhost` (default `127.0.0.1`). One that
    /// is not loopback needs [`Self::allow_remote`].
    pub fn host(mut self, host: impl Into<String>) -> Self {
        self.host = host.into();
        self
    }

    /// The port to listen on (default 0: a free one).
    pub fn port(mut self, port: u16) -> Self {
        self.port = port;
        self
    }

    /// Allows a host that is not a loopback address (off by default).
    pub fn allow_remote(mut self, allow: bool) -> Self {
        self.allow_remote = allow;
        self
    }

    /// The server the page connects to when it opens (nothing is started before the page
    /// asks for it, with the token).
    pub fn target(mut self, target: Option<Target>) -> Self {
        self.target = target;
        self
    }

    /// How a target typed in the page is read (default: [`Target::parse`]). An embedder can
    /// resolve names of its own (configured servers, say).
    pub fn resolver<F>(mut self, resolver: F) -> Self
    where
        F: Fn(&str, TransportChoice) -> Result<Target, String> + Send + Sync + 'static,
    {
        self.resolver = Some(Arc::new(resolver));
        self
    }

    /// How long a server's question (elicitation, sampling) waits for the page's answer
    /// before it is declined (default 10 minutes).
    pub fn reply_timeout(mut self, timeout: Duration) -> Self {
        self.reply_timeout = timeout;
        self
    }

    /// Where the OAuth tokens of protected servers are kept between runs (default: where the
    /// `mcp` command line keeps them, [`TokenStore::user`]; `None`: not kept).
    pub fn token_store(mut self, store: Option<TokenStore>) -> Self {
        self.tokens = store;
        self
    }

    /// Binds the address and starts serving.
    pub async fn build(self) -> Result<RunningInspector, InspectorError> {
        let ip: IpAddr = match self.host.trim() {
            "localhost" => IpAddr::V4(Ipv4Addr::LOCALHOST),
            other => other
                .trim_start_matches('[')
                .trim_end_matches(']')
                .parse()
                .map_err(|_| InspectorError::BadHost(self.host.clone()))?,
        };
        if !ip.is_loopback() && !self.allow_remote {
            return Err(InspectorError::RemoteHost(self.host.clone()));
        }
        let addr = SocketAddr::new(ip, self.port);
        let listener =
            tokio::net::TcpListener::bind(addr).await.map_err(|source| InspectorError::Bind { addr, source })?;
        let local = listener.local_addr().map_err(|source| InspectorError::Bind { addr, source })?;
        let token = security::new_token();
        let hosts = security::allowed_hosts(local);
        let resolver = self.resolver.unwrap_or_else(|| Arc::new(Target::parse_with));
        let shutdown = CancellationToken::new();
        let state = api::AppState::new(
            token.clone(),
            hosts.clone(),
            self.target,
            resolver,
            self.reply_timeout,
            self.tokens,
            shutdown.clone(),
        );
        let router = api::router(state.clone());
        let stop = shutdown.clone();
        let task = tokio::spawn(async move {
            let closing = state.clone();
            let signal = async move {
                stop.cancelled().await;
                // The session first: calls in flight end, and so do the event streams.
                closing.close().await;
            };
            let serve = axum::serve(listener, router).with_graceful_shutdown(signal).into_future();
            let stop = state.shutdown_token();
            let bounded = async move {
                stop.cancelled().await;
                tokio::time::sleep(SHUTDOWN_GRACE).await;
            };
            tokio::select! {
                served = serve => if let Err(e) = served {
                    tracing::warn!("the inspector's server stopped: {e}");
                },
                () = bounded => tracing::debug!("the inspector's connections did not end in time"),
            }
            state.close().await;
        });
        let url = format!("http://{}/#token={token}", hosts[0]);
        Ok(RunningInspector { addr: local, token, url, shutdown, task: Some(task) })
    }
}

/// A running inspector. Dropping it stops the server (and the MCP session it holds).
#[derive(Debug)]
pub struct RunningInspector {
    addr: SocketAddr,
    token: String,
    url: String,
    shutdown: CancellationToken,
    task: Option<JoinHandle<()>>,
}

impl RunningInspector {
    /// The page's URL, with the token in its fragment (`http://127.0.0.1:PORT/#token=…`).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The API token (`Authorization: Bearer TOKEN`).
    pub fn token(&self) -> &str {
        &self.token
    }

    /// The address the server listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops serving: open requests are let go, the MCP session is closed (and its server
    /// process ended). [`Self::wait`] then returns.
    pub fn shutdown(&self) {
        self.shutdown.cancel();
    }

    /// Serves until [`Self::shutdown`] (from a clone of [`Self::shutdown_token`]) or the end
    /// of the server.
    pub async fn wait(mut self) {
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }

    /// A token that stops the inspector when cancelled (for another task to hold).
    pub fn shutdown_token(&self) -> CancellationToken {
        self.shutdown.clone()
    }
}

impl Drop for RunningInspector {
    fn drop(&mut self) {
        if self.task.is_some() {
            self.shutdown.cancel();
        }
    }
}

/// The README's example, compiled as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeExample;
