//! One upstream server mirrored into a [`Server`] under a [`Namespace`]: its tools,
//! resources, templates and prompts registered with forwarding handlers, kept in step with
//! its list changes, its resource updates and log messages passed on.
//!
//! The handlers take the upstream session from here at each call, so that a session
//! re-established after a drop ([`crate::Gateway`]) serves the same registrations.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use mcpwire_client::{CallToolOutcome, ClientError, ClientSession, ErrorObject, ListenStream, ServerNotification};
use mcpwire_protocol::error::{INVALID_PARAMS, MISSING_REQUIRED_CLIENT_CAPABILITY, RESOURCE_NOT_FOUND};
use mcpwire_protocol::types::{CallToolResult, JsonObject, ReadResourceResult, SubscriptionFilter, TaskSupport};
use mcpwire_protocol::Era;
use mcpwire_server::{Context, HandlerError, HandlerResult, Server};
use parking_lot::{Mutex, RwLock};
use serde_json::Value;

use crate::relay;
use crate::router::CallRouter;
use mcpwire_protocol::namespace::Namespace;

/// An upstream server and what it registered downstream.
pub(crate) struct Upstream {
    pub(crate) namespace: Namespace,
    pub(crate) router: CallRouter,
    /// How to name it in messages.
    pub(crate) label: String,
    session: RwLock<ClientSession>,
    owned: Mutex<Owned>,
    /// The 2026-07-28 tools known to run only as tasks upstream, and those known not to.
    task_needs: Mutex<TaskNeeds>,
}

/// What is known of the upstream tools' need for a task (2026-07-28, where a tools list
/// does not say): learnt from the first call of each.
#[derive(Default)]
struct TaskNeeds {
    plain: HashSet<String>,
    tasked: HashSet<String>,
}

/// The downstream names and URIs this upstream registered.
#[derive(Default)]
struct Owned {
    tools: HashSet<String>,
    prompts: HashSet<String>,
    resources: HashSet<String>,
    templates: HashSet<String>,
    /// The downstream URIs subscribed to on the current session.
    subscribed: HashSet<String>,
}

impl Upstream {
    pub(crate) fn new(namespace: Namespace, router: CallRouter, label: String, session: ClientSession) -> Arc<Self> {
        Arc::new(Self {
            namespace,
            router,
            label,
            session: RwLock::new(session),
            owned: Mutex::default(),
            task_needs: Mutex::default(),
        })
    }

    /// The session in use now.
    pub(crate) fn session(&self) -> ClientSession {
        self.session.read().clone()
    }

    /// Uses `session` from now on (after a reconnection).
    pub(crate) fn replace_session(&self, session: ClientSession) {
        *self.session.write() = session;
        self.owned.lock().subscribed.clear();
    }

    /// Whether `name` is a downstream tool or prompt of this upstream (then its upstream
    /// name), and the same for a resource or template URI.
    pub(crate) fn owns_prompt(&self, name: &str) -> Option<String> {
        let owned = self.owned.lock().prompts.contains(name);
        owned.then(|| self.namespace.upstream_name(name).map(str::to_owned)).flatten()
    }

    /// The upstream form of a downstream template or resource URI of this upstream.
    pub(crate) fn owns_uri(&self, uri: &str) -> Option<String> {
        let owned = self.owned.lock();
        (owned.templates.contains(uri) || owned.resources.contains(uri))
            .then(|| self.namespace.upstream_uri(uri))
            .flatten()
    }

    /// Registers everything the upstream offers now, and removes what it no longer does.
    pub(crate) async fn sync_all(self: &Arc<Self>, server: &Server) -> Result<(), ClientError> {
        self.sync_tools(server).await?;
        self.sync_resources(server).await?;
        self.sync_prompts(server).await
    }

    /// Removes everything this upstream registered.
    pub(crate) fn unregister(&self, server: &Server) {
        let owned = std::mem::take(&mut *self.owned.lock());
        for name in owned.tools {
            server.remove_tool(&name);
        }
        for name in owned.prompts {
            server.remove_prompt(&name);
        }
        for uri in owned.resources {
            server.remove_resource(&uri);
        }
    }

    /// Whether another mount already has this downstream name (the first keeps it).
    fn clash(&self, kind: &str, name: &str, taken: bool, mine: bool) -> bool {
        if taken && !mine {
            tracing::warn!("{}: its {kind} {name:?} clashes with another server's; the first keeps it", self.label);
        }
        taken && !mine
    }

    pub(crate) async fn sync_tools(self: &Arc<Self>, server: &Server) -> Result<(), ClientError> {
        let session = self.session();
        let tools =
            if session.server_capabilities().tools.is_some() { session.list_all_tools().await? } else { vec![] };
        let mut names = HashSet::new();
        let mine = self.owned.lock().tools.clone();
        for mut tool in tools {
            let upstream_name = std::mem::take(&mut tool.name);
            // The bridge makes the upstream call a task itself (see `forward_call`): downstream
            // clients may call it plainly.
            let requires_task = tool.task_support() == TaskSupport::Required;
            if requires_task {
                tool = tool.with_task_support(TaskSupport::Optional);
            }
            tool.name = self.namespace.name(&upstream_name);
            if self.clash("tool", &tool.name, server.tool_definition(&tool.name).is_some(), mine.contains(&tool.name)) {
                continue;
            }
            names.insert(tool.name.clone());
            let upstream = self.clone();
            server.add_tool(tool, move |args: JsonObject, ctx: Context| {
                let (upstream, name) = (upstream.clone(), upstream_name.clone());
                async move { forward_call(&upstream, name, args, ctx, requires_task).await }
            });
        }
        for old in mine.difference(&names) {
            server.remove_tool(old);
        }
        self.owned.lock().tools = names;
        Ok(())
    }

    pub(crate) async fn sync_resources(self: &Arc<Self>, server: &Server) -> Result<(), ClientError> {
        let session = self.session();
        if session.server_capabilities().resources.is_none() {
            let old = std::mem::take(&mut self.owned.lock().resources);
            for uri in old {
                server.remove_resource(&uri);
            }
            return Ok(());
        }
        let mine = self.owned.lock().resources.clone();
        let taken: HashSet<String> = server.resource_uris().into_iter().collect();
        let mut uris = HashSet::new();
        for mut resource in session.list_all_resources().await? {
            let Some(uri) = self.namespace.uri(&resource.uri) else {
                tracing::warn!(
                    "{}: resource {:?} skipped: a URI without a scheme has no prefixed form",
                    self.label,
                    resource.uri
                );
                continue;
            };
            if self.clash("resource", &uri, taken.contains(&uri), mine.contains(&uri)) {
                continue;
            }
            let upstream_uri = std::mem::replace(&mut resource.uri, uri.clone());
            uris.insert(uri);
            let upstream = self.clone();
            server.add_resource(resource, move |uri, ctx| {
                let (upstream, wanted) = (upstream.clone(), upstream_uri.clone());
                async move { forward_read(&upstream, wanted, uri, ctx).await }
            });
        }
        for old in mine.difference(&uris) {
            server.remove_resource(old);
        }
        // Downstream subscriptions are the bridge's server's own (its engine answers them):
        // to have updates to pass on, the bridge subscribes upstream to what it lists.
        let subscribable = session.era() == Era::Legacy
            && session.server_capabilities().resources.as_ref().and_then(|r| r.subscribe) == Some(true);
        let subscribed = std::mem::take(&mut self.owned.lock().subscribed);
        let mut now = HashSet::new();
        for uri in &uris {
            if subscribed.contains(uri) {
                now.insert(uri.clone());
            } else if let Some(wanted) = self.namespace.upstream_uri(uri).filter(|_| subscribable) {
                match session.subscribe(wanted).await {
                    Ok(()) => {
                        now.insert(uri.clone());
                    }
                    Err(e) => tracing::debug!("{}: no updates for {uri}: {e}", self.label),
                }
            }
        }
        {
            let mut owned = self.owned.lock();
            owned.resources = uris;
            owned.subscribed = now;
        }
        let known = self.owned.lock().templates.clone();
        for mut template in session.list_all_resource_templates().await? {
            let Some(downstream) = self.namespace.uri(&template.uri_template) else {
                tracing::warn!(
                    "{}: resource template {:?} skipped: its scheme is not literal, so it has no prefixed form",
                    self.label,
                    template.uri_template
                );
                continue;
            };
            if known.contains(&downstream) {
                continue;
            }
            template.uri_template = downstream.clone();
            let upstream = self.clone();
            let added =
                server.add_resource_template(template, move |uri: String, _vars: HashMap<String, String>, ctx| {
                    let upstream = upstream.clone();
                    let wanted = upstream.namespace.upstream_uri(&uri).unwrap_or_else(|| uri.clone());
                    async move { forward_read(&upstream, wanted, uri, ctx).await }
                });
            match added {
                Ok(()) => {
                    self.owned.lock().templates.insert(downstream);
                }
                Err(e) => tracing::warn!("{}: resource template skipped: {e}", self.label),
            }
        }
        Ok(())
    }

    pub(crate) async fn sync_prompts(self: &Arc<Self>, server: &Server) -> Result<(), ClientError> {
        let session = self.session();
        let prompts =
            if session.server_capabilities().prompts.is_some() { session.list_all_prompts().await? } else { vec![] };
        let mine = self.owned.lock().prompts.clone();
        let taken: HashSet<String> = server.prompt_names().into_iter().collect();
        let mut names = HashSet::new();
        for mut prompt in prompts {
            let upstream_name = std::mem::take(&mut prompt.name);
            prompt.name = self.namespace.name(&upstream_name);
            if self.clash("prompt", &prompt.name, taken.contains(&prompt.name), mine.contains(&prompt.name)) {
                continue;
            }
            names.insert(prompt.name.clone());
            let upstream = self.clone();
            server.add_prompt(prompt, move |args: BTreeMap<String, String>, ctx: Context| {
                let (upstream, name) = (upstream.clone(), upstream_name.clone());
                async move {
                    let session = upstream.session();
                    relay::relay(&upstream.router, &ctx, |_| async move { session.get_prompt(name, args).await }).await
                }
            });
        }
        for old in mine.difference(&names) {
            server.remove_prompt(old);
        }
        self.owned.lock().prompts = names;
        Ok(())
    }

    /// Follows the current session's notifications until it ends: list changes re-synced,
    /// resource updates and log messages passed on. A 2026-07-28 server sends its changes
    /// on a `subscriptions/listen` stream, opened here (again after its resources change,
    /// so that it names them all).
    ///
    /// `notes` must be taken from the session before its lists are read, so that no change
    /// made in between is missed.
    pub(crate) fn follow(
        self: &Arc<Self>,
        server: Server,
        mut notes: tokio::sync::broadcast::Receiver<ServerNotification>,
    ) -> tokio::task::JoinHandle<()> {
        let session = self.session();
        let upstream = self.clone();
        tokio::spawn(async move {
            let mut listen = upstream.listen(&session).await;
            loop {
                let note = tokio::select! {
                    note = notes.recv() => match note {
                        Ok(n) => n,
                        Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
                        Err(_) => break,
                    },
                    note = next_on(&mut listen) => match note {
                        Some(n) => n,
                        None => {
                            listen = None;
                            continue;
                        }
                    },
                };
                let resources_changed = matches!(note, ServerNotification::ResourcesListChanged);
                upstream.handle(&server, note).await;
                if resources_changed && listen.is_some() {
                    listen = upstream.listen(&session).await;
                }
            }
        })
    }

    /// A listen stream for every change `session` can tell of (modern era only).
    async fn listen(&self, session: &ClientSession) -> Option<ListenStream> {
        if session.era() != Era::Modern {
            return None;
        }
        let caps = session.server_capabilities();
        let changes = |listed: bool| listed.then_some(true);
        let subscribable = caps.resources.as_ref().and_then(|r| r.subscribe) == Some(true);
        let uris: Vec<String> = if subscribable {
            let owned = self.owned.lock();
            owned.resources.iter().filter_map(|uri| self.namespace.upstream_uri(uri)).collect()
        } else {
            vec![]
        };
        let filter = SubscriptionFilter {
            tools_list_changed: changes(caps.tools.as_ref().and_then(|t| t.list_changed) == Some(true)),
            prompts_list_changed: changes(caps.prompts.as_ref().and_then(|p| p.list_changed) == Some(true)),
            resources_list_changed: changes(caps.resources.as_ref().and_then(|r| r.list_changed) == Some(true)),
            resource_subscriptions: (!uris.is_empty()).then_some(uris),
        };
        if filter == SubscriptionFilter::default() {
            return None;
        }
        match session.listen(filter).await {
            Ok(stream) => Some(stream),
            Err(e) => {
                tracing::warn!("{}: cannot listen for its changes: {}", self.label, mcpwire_protocol::error::chain(&e));
                None
            }
        }
    }

    /// Acts on one notification of the upstream server.
    async fn handle(self: &Arc<Self>, server: &Server, note: ServerNotification) {
        let outcome = match note {
            ServerNotification::ToolsListChanged => self.sync_tools(server).await,
            ServerNotification::PromptsListChanged => self.sync_prompts(server).await,
            ServerNotification::ResourcesListChanged => self.sync_resources(server).await,
            ServerNotification::ResourceUpdated(p) => {
                if let Some(uri) = self.namespace.uri(&p.uri) {
                    server.notify_resource_updated(uri);
                }
                Ok(())
            }
            ServerNotification::Log(log) => {
                if let Some(ctx) = self.router.current_handler() {
                    ctx.log_as(log.level, log.logger.as_deref(), log.data).await;
                }
                Ok(())
            }
            _ => Ok(()),
        };
        if let Err(e) = outcome {
            tracing::warn!(
                "{}: could not follow an upstream change: {}",
                self.label,
                mcpwire_protocol::error::chain(&e)
            );
        }
    }
}

/// The next notification of a listen stream, if there is one (never, otherwise).
async fn next_on(listen: &mut Option<ListenStream>) -> Option<ServerNotification> {
    match listen {
        Some(stream) => stream.next().await,
        None => std::future::pending().await,
    }
}

/// Reads `wanted` upstream for the downstream URI `uri`.
async fn forward_read(
    upstream: &Upstream,
    wanted: String,
    uri: String,
    ctx: Context,
) -> HandlerResult<ReadResourceResult> {
    let session = upstream.session();
    let read = relay::relay(&upstream.router, &ctx, |_| async move { session.read_resource(wanted).await }).await;
    read.map(|r| upstream.namespace.contents(r)).map_err(|e| {
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
///
/// A tool that runs only as a task is called as one: a 2025-11-25 upstream says so in its
/// tools list (`requires_task`), and the call asks for a task and waits for its result; a
/// 2026-07-28 upstream says so by refusing the first plain call with `-32021` naming the
/// tasks extension, and the call is made again declaring it (then every later call of that
/// tool). Progress ends when a call becomes a task.
async fn forward_call(
    upstream: &Upstream,
    name: String,
    args: JsonObject,
    ctx: Context,
    requires_task: bool,
) -> HandlerResult<CallToolResult> {
    let session = upstream.session();
    if session.era() == Era::Legacy {
        return match requires_task {
            true => forward_as_task(upstream, session, name, Value::Object(args), ctx).await,
            false => forward_plain(upstream, session, name, Value::Object(args), ctx).await,
        };
    }
    let (plain, tasked) = {
        let needs = upstream.task_needs.lock();
        (needs.plain.contains(&name), needs.tasked.contains(&name))
    };
    if tasked {
        return forward_plain(upstream, session.with_tasks(), name, Value::Object(args), ctx).await;
    }
    if plain {
        return forward_plain(upstream, session, name, Value::Object(args), ctx).await;
    }
    // Not known yet: the arguments are kept for a second attempt.
    let retry = Value::Object(args.clone());
    match forward_plain(upstream, session.clone(), name.clone(), Value::Object(args), ctx.clone()).await {
        Err(HandlerError::Protocol(e)) if names_tasks_extension(&e) => {
            upstream.task_needs.lock().tasked.insert(name.clone());
            forward_plain(upstream, session.with_tasks(), name, retry, ctx).await
        }
        outcome => {
            upstream.task_needs.lock().plain.insert(name);
            outcome
        }
    }
}

/// Whether `e` is the refusal of a call made without the tasks extension.
fn names_tasks_extension(e: &ErrorObject) -> bool {
    let required = e.data.as_ref().and_then(|d| d.get(mcpwire_protocol::error::REQUIRED_CAPABILITIES));
    e.code == MISSING_REQUIRED_CLIENT_CAPABILITY
        && required
            .and_then(|r| r.get("extensions"))
            .is_some_and(|x| x.get(mcpwire_protocol::types::TASKS_EXTENSION).is_some())
}

async fn forward_plain(
    upstream: &Upstream,
    session: ClientSession,
    name: String,
    args: Value,
    ctx: Context,
) -> HandlerResult<CallToolResult> {
    let wants_progress = ctx.wants_progress();
    relay::relay(&upstream.router, &ctx, move |progress| async move {
        if wants_progress {
            session.call_tool_with_progress(name, args, move |p| progress.send(p)).await
        } else {
            session.call_tool(name, args).await
        }
    })
    .await
}

/// A 2025-11-25 call asking for a task, and the task's result.
async fn forward_as_task(
    upstream: &Upstream,
    session: ClientSession,
    name: String,
    args: Value,
    ctx: Context,
) -> HandlerResult<CallToolResult> {
    relay::relay(&upstream.router, &ctx, move |_| async move {
        match session.call_tool_as_task(name, args, None).await? {
            CallToolOutcome::Task(task) => session.task_result(&task.task_id).await,
            CallToolOutcome::Result(result) => Ok(result),
        }
    })
    .await
}
