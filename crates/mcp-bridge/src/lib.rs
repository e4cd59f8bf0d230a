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
//! stays open across the client's retries (see [`relay`]).
#![deny(missing_docs)]
#![allow(clippy::result_large_err)]

mod relay;
mod router;

use std::collections::{BTreeMap, HashMap, HashSet};

use mcp_client::{Client, ClientBuilder, ClientError, ClientSession, ErrorObject, ServerNotification};
use mcp_protocol::error::{INVALID_PARAMS, RESOURCE_NOT_FOUND};
use mcp_protocol::types::{CallToolResult, JsonObject};
use mcp_server::{Context, HandlerError, HandlerResult, InputRequest, Server, ServerBuilder, ServerConfig};
use serde_json::Value;

pub use relay::PARK_TTL;
pub use router::CallRouter;

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

/// A server mirroring an upstream one.
pub struct Bridge {
    server: Server,
    session: ClientSession,
}

/// A client error as the downstream client should see it.
pub(crate) fn to_handler(e: ClientError) -> HandlerError {
    match e.error_object() {
        Some(obj) => HandlerError::Protocol(obj.clone()),
        None => HandlerError::Protocol(ErrorObject::internal(format!("upstream: {}", mcp_protocol::error::chain(&e)))),
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
        let info = session.server_info().unwrap_or_else(|| mcp_protocol::types::Implementation::new("mcp-bridge", "0"));
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
        let server = customize(builder).build();
        let bridge = Bridge { server, session };
        let mut notes = bridge.session.notifications();
        bridge.sync_tools(&router).await?;
        bridge.sync_resources(&router).await?;
        bridge.sync_prompts(&router).await?;
        if caps.completions.is_some() {
            let session = bridge.session.clone();
            bridge.server.set_completion_handler(move |params, _ctx| {
                let session = session.clone();
                async move { session.complete(params).await.map_err(to_handler) }
            });
        }
        // Keep the lists in step and pass updates and log messages on.
        let (server, session, router2) = (bridge.server.clone(), bridge.session.clone(), router.clone());
        tokio::spawn(async move {
            let mirror = Bridge { server, session };
            loop {
                let note = match notes.recv().await {
                    Ok(n) => n,
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
                    Err(_) => break,
                };
                let outcome = match note {
                    ServerNotification::ToolsListChanged => mirror.sync_tools(&router2).await,
                    ServerNotification::PromptsListChanged => mirror.sync_prompts(&router2).await,
                    ServerNotification::ResourcesListChanged => mirror.sync_resources(&router2).await,
                    ServerNotification::ResourceUpdated(p) => {
                        mirror.server.notify_resource_updated(p.uri);
                        Ok(())
                    }
                    ServerNotification::Log(log) => {
                        if let Some(ctx) = router2.current_handler() {
                            ctx.log_as(log.level, log.logger.as_deref(), log.data).await;
                        }
                        Ok(())
                    }
                    _ => Ok(()),
                };
                if let Err(e) = outcome {
                    tracing::warn!("bridge: could not follow an upstream change: {}", mcp_protocol::error::chain(&e));
                }
            }
        });
        Ok(bridge)
    }

    /// The mirroring server, to serve on any transport.
    pub fn server(&self) -> &Server {
        &self.server
    }

    /// The upstream session.
    pub fn session(&self) -> &ClientSession {
        &self.session
    }

    async fn sync_tools(&self, router: &CallRouter) -> Result<(), ClientError> {
        if self.session.server_capabilities().tools.is_none() {
            return Ok(());
        }
        let tools = self.session.list_all_tools().await?;
        let names: HashSet<String> = tools.iter().map(|t| t.name.clone()).collect();
        for tool in tools {
            let (session, router, name) = (self.session.clone(), router.clone(), tool.name.clone());
            self.server.add_tool(tool, move |args: JsonObject, ctx: Context| {
                let (session, router, name) = (session.clone(), router.clone(), name.clone());
                async move { forward_call(&session, &router, &name, args, ctx).await }
            });
        }
        for old in self.server.tool_names() {
            if !names.contains(&old) {
                self.server.remove_tool(&old);
            }
        }
        Ok(())
    }

    async fn sync_resources(&self, router: &CallRouter) -> Result<(), ClientError> {
        if self.session.server_capabilities().resources.is_none() {
            return Ok(());
        }
        let resources = self.session.list_all_resources().await?;
        let uris: HashSet<String> = resources.iter().map(|r| r.uri.clone()).collect();
        for resource in resources {
            let (session, router) = (self.session.clone(), router.clone());
            self.server.add_resource(resource, move |uri, ctx| {
                let (session, router) = (session.clone(), router.clone());
                async move { forward_read(&session, &router, uri, ctx).await }
            });
        }
        for old in self.server.resource_uris() {
            if !uris.contains(&old) {
                self.server.remove_resource(&old);
            }
        }
        for template in self.session.list_all_resource_templates().await? {
            let (session, router) = (self.session.clone(), router.clone());
            let added = self.server.add_resource_template(template, move |uri, _vars: HashMap<String, String>, ctx| {
                let (session, router) = (session.clone(), router.clone());
                async move { forward_read(&session, &router, uri, ctx).await }
            });
            if let Err(e) = added {
                tracing::warn!("bridge: upstream resource template skipped: {e}");
            }
        }
        Ok(())
    }

    async fn sync_prompts(&self, router: &CallRouter) -> Result<(), ClientError> {
        if self.session.server_capabilities().prompts.is_none() {
            return Ok(());
        }
        let prompts = self.session.list_all_prompts().await?;
        let names: HashSet<String> = prompts.iter().map(|p| p.name.clone()).collect();
        for prompt in prompts {
            let (session, router, name) = (self.session.clone(), router.clone(), prompt.name.clone());
            self.server.add_prompt(prompt, move |args: BTreeMap<String, String>, ctx: Context| {
                let (session, router, name) = (session.clone(), router.clone(), name.clone());
                async move { relay::relay(&router, &ctx, |_| async move { session.get_prompt(name, args).await }).await }
            });
        }
        for old in self.server.prompt_names() {
            if !names.contains(&old) {
                self.server.remove_prompt(&old);
            }
        }
        Ok(())
    }
}

async fn forward_read(
    session: &ClientSession,
    router: &CallRouter,
    uri: String,
    ctx: Context,
) -> HandlerResult<mcp_protocol::types::ReadResourceResult> {
    let (session, wanted) = (session.clone(), uri.clone());
    relay::relay(router, &ctx, |_| async move { session.read_resource(wanted).await }).await.map_err(|e| {
        let not_found = match &e {
            HandlerError::Protocol(o) if o.code == RESOURCE_NOT_FOUND => true,
            HandlerError::Protocol(o) if o.code == INVALID_PARAMS => {
                o.data.as_ref().and_then(|d| d.get("uri")).is_some()
            }
            _ => false,
        };
        if not_found {
            HandlerError::ResourceNotFound(uri)
        } else {
            e
        }
    })
}

/// Calls the upstream tool, passing progress on in order and before the result.
async fn forward_call(
    session: &ClientSession,
    router: &CallRouter,
    name: &str,
    args: JsonObject,
    ctx: Context,
) -> HandlerResult<CallToolResult> {
    let (session, name, args) = (session.clone(), name.to_owned(), Value::Object(args));
    let wants_progress = ctx.wants_progress();
    relay::relay(router, &ctx, move |progress| async move {
        if wants_progress {
            session.call_tool_with_progress(name, args, move |p| progress.send(p)).await
        } else {
            session.call_tool(name, args).await
        }
    })
    .await
}
