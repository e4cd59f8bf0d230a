//! A bridge: an MCP [`Server`] that mirrors another server reached through a
//! [`ClientSession`], so that any server (a stdio command, a URL, of either era) can be
//! served on any transport to clients of either era.
//!
//! Tools, resources, templates and prompts are listed from the upstream server and
//! registered with forwarding handlers; their lists are kept in step when the upstream
//! server says they changed, and downstream clients are told. Calls carry progress (both
//! ways), cancellation (a cancelled downstream call cancels the upstream one), log messages
//! sent during a call, and resource updates. Requests the upstream server makes of the
//! client (sampling, elicitation, roots, whether legacy requests or `input_required`
//! rounds) are put to the downstream client of the call in flight through its handler
//! context.
//!
//! A 2026-07-28 downstream client is asked with `input_required` rounds: the upstream call
//! stays open across the client's retries (see the `relay` module).
//!
//! A [`Gateway`] is the same for several servers at once, local or remote, each under a
//! prefix ([`Namespace`]); a dropped upstream connection is opened again. A gateway can be
//! built from an `mcpServers` config file, every server of it mounted under its name
//! ([`Gateway::from_config`]).
#![deny(missing_docs)]
#![allow(clippy::result_large_err)]

mod config;
mod gateway;
mod relay;
mod router;
mod upstream;

use mcpwire_client::{Client, ClientBuilder, ClientError, ClientSession, ErrorObject};
use mcpwire_server::{HandlerError, InputRequest, Server, ServerBuilder, ServerConfig};

pub use config::{ConfigError, GatewayConfig, Mounted, Open, UpstreamOptions};
pub use gateway::{Connect, Connecting, Gateway, MountError};
pub use mcpwire_protocol::namespace::{BadPrefix, Namespace, NAME_SEPARATOR};
pub use relay::PARK_TTL;
pub use router::CallRouter;
use upstream::Upstream;

/// A client builder whose sampling, elicitation and roots handlers put the upstream
/// server's questions to the downstream client of the call in flight.
pub fn client_builder(name: &str, version: &str, router: &CallRouter) -> ClientBuilder {
    let (r1, r2, r3) = (router.clone(), router.clone(), router.clone());
    Client::builder(name, version)
        // The bridge's server checks each result against the tool's output schema (mirrored
        // from upstream) before it sends it on: checked here too, it would be checked twice
        // (and the tools listed once more).
        .validate_outputs(false)
        .sampling(move |params| {
            let router = r1.clone();
            async move { relay::ask_downstream(&router, InputRequest::Sample(params)).await }
        })
        .elicitation(move |params| {
            let router = r2.clone();
            async move { relay::ask_downstream(&router, InputRequest::Elicit(params)).await }
        })
        .roots(move || {
            let router = r3.clone();
            async move { relay::ask_downstream(&router, InputRequest::ListRoots).await }
        })
}

/// A server mirroring an upstream one, names unchanged.
pub struct Bridge {
    server: Server,
    session: ClientSession,
}

/// A client error as the downstream client should see it.
pub(crate) fn to_handler(e: ClientError) -> HandlerError {
    match e.error_object() {
        Some(obj) => HandlerError::Protocol(obj.clone()),
        None => {
            HandlerError::Protocol(ErrorObject::internal(format!("upstream: {}", mcpwire_protocol::error::chain(&e))))
        }
    }
}

impl Bridge {
    /// Mirrors the server behind `session` (built with [`client_builder`] and `router`, so
    /// that its questions reach downstream clients).
    pub async fn mirror(session: ClientSession, router: CallRouter) -> Result<Bridge, ClientError> {
        Self::mirror_with(session, router, |builder| builder).await
    }

    /// The same, with the mirroring server's builder given to `customize` before it is
    /// built (middleware layers, say).
    pub async fn mirror_with(
        session: ClientSession,
        router: CallRouter,
        customize: impl FnOnce(ServerBuilder) -> ServerBuilder,
    ) -> Result<Bridge, ClientError> {
        let caps = session.server_capabilities();
        let info = session
            .server_info()
            .unwrap_or_else(|| mcpwire_protocol::types::Implementation::new("mcpwire-bridge", "0"));
        let config = ServerConfig {
            tools: caps.tools.is_some(),
            resources: caps.resources.is_some(),
            prompts: caps.prompts.is_some(),
            logging: true,
            completions: caps.completions.is_some(),
            ..ServerConfig::default()
        };
        let mut builder = Server::builder(info.name.clone(), info.version.clone()).info(info).config(config);
        if let Some(text) = session.instructions() {
            builder = builder.instructions(text);
        }
        // Task-augmented downstream calls run as the bridge's own tasks, each forwarding one
        // call (and following an upstream task to its end).
        let server = customize(builder.tasks(mcpwire_server::TaskConfig::default())).build();
        let notes = session.notifications();
        let upstream = Upstream::new(Namespace::root(), router, "the upstream server".into(), session.clone());
        upstream.sync_all(&server).await?;
        if caps.completions.is_some() {
            let session = session.clone();
            server.set_completion_handler(move |params, _ctx| {
                let session = session.clone();
                async move { session.complete(params).await.map_err(to_handler) }
            });
        }
        // Keep the lists in step and pass updates and log messages on.
        upstream.follow(server.clone(), notes);
        Ok(Bridge { server, session })
    }

    /// The mirroring server, to serve on any transport.
    pub fn server(&self) -> &Server {
        &self.server
    }

    /// The upstream session.
    pub fn session(&self) -> &ClientSession {
        &self.session
    }
}
