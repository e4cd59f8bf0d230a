//! A gateway: one [`Server`] in front of several, each mounted under a prefix (see
//! [`Namespace`] for how names and URIs are prefixed).
//!
//! A mounted server is reached through one client session, opened when it is mounted and
//! reused by every downstream call. When it drops (the process exits, the HTTP server goes
//! away), it is opened again, with a backoff from 250 ms to 30 s; meanwhile its tools stay
//! listed and calls to them fail with the connection's error. Once back, its lists are
//! read again and the downstream clients told of any change.
//!
//! Everything a mounted server does passes through: tools keep their schemas, annotations
//! and output schemas; progress, cancellation, log messages, list changes, resource
//! updates and completions are routed by prefix; a mounted server's questions (sampling,
//! elicitation, roots, legacy requests or `input_required` rounds) go to the downstream
//! client of the call that caused them. Tasks are the gateway's own: a task-augmented
//! call runs the forwarded call as a task of the gateway's server. A mounted tool that runs
//! only as a task is called as one (see `upstream::forward_call`) and listed as optional.
//!
//! A local [`Server`] is mounted the same way, over an in-memory connection
//! ([`Gateway::mount_server`]): its registrations stay its own, and changes to them reach the
//! gateway's clients as list changes.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use mcpwire_client::{ClientError, ClientSession, ErrorObject};
use mcpwire_protocol::error::INVALID_PARAMS;
use mcpwire_protocol::types::{CompleteParams, CompletionReference};
use mcpwire_server::{Context, HandlerError, HandlerResult, Server, ServerBuilder, ServerConfig};
use parking_lot::{Mutex, RwLock};
use tokio_util::task::AbortOnDropHandle;

use crate::router::CallRouter;
use crate::upstream::Upstream;
use crate::{client_builder, to_handler};
use mcpwire_protocol::namespace::{BadPrefix, Namespace};

/// The first wait before opening a dropped upstream again; doubled at each failure.
const FIRST_BACKOFF: Duration = Duration::from_millis(250);
/// The longest wait between two attempts.
const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// The future of a [`Connect`].
pub type Connecting = Pin<Box<dyn Future<Output = Result<ClientSession, ClientError>> + Send>>;

/// Opens a session to an upstream server, built with [`client_builder`] and the router
/// given, so that the upstream server's questions reach the downstream clients. Called
/// once when the server is mounted and again each time its session drops.
pub trait Connect: Send + Sync + 'static {
    /// Opens a session.
    fn connect(&self, router: &CallRouter) -> Connecting;
}

impl<F, Fut> Connect for F
where
    F: Fn(CallRouter) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<ClientSession, ClientError>> + Send + 'static,
{
    fn connect(&self, router: &CallRouter) -> Connecting {
        Box::pin(self(router.clone()))
    }
}

/// Why a server could not be mounted.
#[derive(Debug, thiserror::Error)]
pub enum MountError {
    /// The prefix cannot name a namespace.
    #[error(transparent)]
    Prefix(#[from] BadPrefix),
    /// The prefix is already mounted.
    #[error("the prefix {0:?} is already mounted")]
    Taken(String),
    /// The first connection failed (nothing is mounted, and it is not retried).
    #[error("cannot connect: {0}")]
    Connect(#[source] ClientError),
    /// The server connected but could not be listed.
    #[error("cannot list what it offers: {0}")]
    List(#[source] ClientError),
}

/// A server aggregating mounted servers. Dropping it stops following them (their sessions
/// end when the last handler using them is gone); [`Gateway::close`] ends them at once.
pub struct Gateway {
    server: Server,
    upstreams: Arc<RwLock<Vec<Arc<Upstream>>>>,
    tasks: Mutex<Vec<AbortOnDropHandle<()>>>,
    /// The server processes started for mounted servers ([`Gateway::from_config`]), ended
    /// by [`Gateway::close`].
    pub(crate) children: Arc<Mutex<Vec<mcpwire_transport::child::ChildProcess>>>,
}

impl Gateway {
    /// A gateway named `name`, its server built from a builder that declares tools,
    /// resources, prompts and completions (mounted servers come and go), given to
    /// `customize` first (middleware layers, say).
    pub fn new(
        name: impl Into<String>,
        version: impl Into<String>,
        customize: impl FnOnce(ServerBuilder) -> ServerBuilder,
    ) -> Gateway {
        let config =
            ServerConfig { tools: true, resources: true, prompts: true, completions: true, ..ServerConfig::default() };
        // Task-augmented calls run as the gateway's own tasks, each forwarding one call.
        let builder = Server::builder(name, version).config(config).tasks(mcpwire_server::TaskConfig::default());
        let server = customize(builder).build();
        let upstreams: Arc<RwLock<Vec<Arc<Upstream>>>> = Arc::default();
        let routes = upstreams.clone();
        server.set_completion_handler(move |params, _ctx: Context| {
            let found = route_completion(&routes.read(), params);
            async move {
                let (session, params) = found?;
                session.complete(params).await.map_err(to_handler)
            }
        });
        Gateway { server, upstreams, tasks: Mutex::default(), children: Arc::default() }
    }

    /// The gateway's server, to serve on any transport.
    pub fn server(&self) -> &Server {
        &self.server
    }

    /// The prefixes mounted, in order.
    pub fn prefixes(&self) -> Vec<String> {
        self.upstreams.read().iter().filter_map(|u| u.namespace.prefix().map(str::to_owned)).collect()
    }

    /// The session in use now of the server mounted under `prefix`.
    pub fn session(&self, prefix: &str) -> Option<ClientSession> {
        self.upstreams.read().iter().find(|u| u.namespace.prefix() == Some(prefix)).map(|u| u.session())
    }

    /// Mounts the server `connect` opens under `prefix`. Fails, mounting nothing, if the
    /// first connection fails; later drops are re-established (see the module's docs).
    pub async fn mount(&self, prefix: &str, connect: impl Connect) -> Result<(), MountError> {
        let namespace = Namespace::prefixed(prefix)?;
        if self.prefixes().iter().any(|p| p == prefix) {
            return Err(MountError::Taken(prefix.to_owned()));
        }
        let router = CallRouter::default();
        let session = connect.connect(&router).await.map_err(MountError::Connect)?;
        let notes = session.notifications();
        let upstream = Upstream::new(namespace, router, format!("mounted server `{prefix}`"), session);
        if let Err(e) = upstream.sync_all(&self.server).await {
            upstream.unregister(&self.server);
            return Err(MountError::List(e));
        }
        self.upstreams.write().push(upstream.clone());
        let follower = upstream.follow(self.server.clone(), notes);
        let supervisor = tokio::spawn(supervise(upstream, Arc::new(connect), self.server.clone(), follower));
        self.tasks.lock().push(AbortOnDropHandle::new(supervisor));
        Ok(())
    }

    /// Mounts a local server under `prefix`, served to the gateway over an in-memory
    /// connection (it costs a serialization each way; its own layers, state and tasks
    /// stay its own).
    pub async fn mount_server(&self, prefix: &str, server: Server) -> Result<(), MountError> {
        let name = prefix.to_owned();
        self.mount(prefix, move |router: CallRouter| {
            let (server, name) = (server.clone(), name.clone());
            async move {
                let (ours, theirs) = mcpwire_transport::memory::pair();
                tokio::spawn(async move { server.serve(theirs).await });
                client_builder(&format!("mcp-gateway/{name}"), env!("CARGO_PKG_VERSION"), &router)
                    .build()
                    .connect(ours)
                    .await
            }
        })
        .await
    }

    /// Ends every mounted server's session (a process started for one exits), then the
    /// server processes [`Gateway::from_config`] started (each given two seconds after its
    /// stdin is closed).
    pub async fn close(&self) {
        self.tasks.lock().clear();
        let sessions: Vec<ClientSession> = self.upstreams.read().iter().map(|u| u.session()).collect();
        for session in sessions {
            let _ = session.close().await;
        }
        let children = std::mem::take(&mut *self.children.lock());
        futures::future::join_all(children.into_iter().map(|c| async move {
            let _ = c.close(Duration::from_secs(2)).await;
        }))
        .await;
    }
}

/// The mounted server a completion request belongs to, and the request as it should see it.
fn route_completion(
    upstreams: &[Arc<Upstream>],
    mut params: CompleteParams,
) -> HandlerResult<(ClientSession, CompleteParams)> {
    for upstream in upstreams {
        let found = match &mut params.reference {
            CompletionReference::Prompt { name } => upstream.owns_prompt(name).map(|n| *name = n),
            CompletionReference::Resource { uri } => upstream.owns_uri(uri).map(|u| *uri = u),
        };
        if found.is_some() {
            let session = upstream.session();
            if session.server_capabilities().completions.is_none() {
                break;
            }
            return Ok((session, params));
        }
    }
    Err(HandlerError::Protocol(ErrorObject::new(INVALID_PARAMS, "no completions for this reference")))
}

/// Waits for the upstream's session to drop, then opens it again (with a backoff), reads
/// its lists again and follows the new session; for as long as the gateway lives.
async fn supervise(
    upstream: Arc<Upstream>,
    connect: Arc<dyn Connect>,
    server: Server,
    mut follower: tokio::task::JoinHandle<()>,
) {
    loop {
        upstream.session().closed().await;
        follower.abort();
        tracing::warn!("{}: the connection dropped; opening it again", upstream.label);
        let mut backoff = FIRST_BACKOFF;
        let notes = loop {
            tokio::time::sleep(backoff).await;
            match connect.connect(&upstream.router).await {
                Ok(session) => {
                    upstream.replace_session(session.clone());
                    let notes = session.notifications();
                    match upstream.sync_all(&server).await {
                        Ok(()) => break notes,
                        Err(e) => {
                            tracing::warn!("{}: reconnected but could not list: {e}", upstream.label);
                            let _ = session.close().await;
                        }
                    }
                }
                Err(e) => {
                    tracing::warn!("{}: cannot reconnect: {}", upstream.label, mcpwire_protocol::error::chain(&e))
                }
            }
            backoff = (backoff * 2).min(MAX_BACKOFF);
        };
        tracing::info!("{}: reconnected", upstream.label);
        follower = upstream.follow(server.clone(), notes);
    }
}
