//! The server: what it offers, and how it is changed at runtime.
//!
//! - [`config`]: its settings; [`builder`]: the builder.
//! - [`registry`]: the tools, resources, templates and prompts, with their handlers.
//! - [`changes`], [`tasks`]: its changes and its tasks shared with the other instances of a
//!   deployment, and what the application reads of its tasks.

mod access;
mod builder;
mod changes;
mod config;
mod mount;
pub(crate) mod registry;
mod tasks;
mod validation;

pub use builder::{BuildError, ServerBuilder};
pub use config::ServerConfig;

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::sync::Arc;

use mcpwire_protocol::engine::cursor::CursorCodec;
use mcpwire_protocol::engine::{Change, Feature, Offer, ServerSettings};
use mcpwire_protocol::types::{
    CallToolResult, CompleteParams, CompleteResult, GetPromptResult, Implementation, JsonObject, ListChangedCapability,
    Prompt, ReadResourceResult, Resource, ResourceTemplate, ResourcesCapability, ServerCapabilities, Tool,
    APP_MIME_TYPE,
};
use mcpwire_protocol::uri_template::{UriTemplate, UriTemplateError};
use tokio::sync::broadcast;

use crate::authoring::definition::ResourceKind;
use crate::authoring::{IntoPromptDef, IntoResourceDef, IntoToolDef, IntoToolSet, PromptDef, ResourceDef, ToolDef};
use crate::context::Context;
use crate::error::HandlerResult;
use crate::tasks::TaskRuntime;
use registry::{boxed1, CompletionHandler, PromptEntry, Registry, ResourceEntry, TemplateEntry, ToolEntry};

pub(crate) struct ServerInner {
    /// What the engine of each connection needs to know of the server.
    pub(crate) settings: Arc<ServerSettings>,
    pub(crate) tools: Registry<Arc<ToolEntry>>,
    pub(crate) resources: Registry<ResourceEntry>,
    pub(crate) templates: Registry<TemplateEntry>,
    pub(crate) prompts: Registry<PromptEntry>,
    pub(crate) completion: parking_lot::RwLock<Option<CompletionHandler>>,
    pub(crate) changes: broadcast::Sender<Change>,
    pub(crate) cursors: CursorCodec,
    pub(crate) config: ServerConfig,
    /// Task machinery, when tasks are enabled.
    pub(crate) tasks: Option<Arc<TaskRuntime>>,
    /// The application's state, reached by handlers.
    pub(crate) state: Arc<crate::state::StateMap>,
    /// Requests in flight, of all connections (see `admission`).
    pub(crate) in_flight: std::sync::atomic::AtomicUsize,
    /// The middleware layers around the handlers.
    pub(crate) middleware: crate::middleware::Middleware,
    /// The servers this one is mounted in (see [`mount`]).
    pub(crate) parents: parking_lot::Mutex<Vec<mount::Parent>>,
    /// Where this instance publishes its changes for the others ([`Server::share_changes`]).
    pub(crate) shared_changes: crate::shared::SharedChangesSlot,
}

/// An MCP server: a set of tools, resources and prompts, served on any number of
/// connections at once. Cheap to clone; every clone is the same server.
#[derive(Clone)]
pub struct Server {
    pub(crate) inner: Arc<ServerInner>,
}

/// A [`Server`] that does not keep it alive: for a handler that needs its own server (to
/// announce a change, say) without making a cycle that would never be freed.
#[derive(Clone)]
pub struct WeakServer {
    inner: std::sync::Weak<ServerInner>,
}

impl WeakServer {
    /// The server, unless it is gone.
    pub fn upgrade(&self) -> Option<Server> {
        self.inner.upgrade().map(|inner| Server { inner })
    }
}

impl std::fmt::Debug for WeakServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("WeakServer")
    }
}

impl Server {
    /// This server, without keeping it alive (see [`WeakServer`]).
    pub fn downgrade(&self) -> WeakServer {
        WeakServer { inner: Arc::downgrade(&self.inner) }
    }

    /// The server's info.
    pub fn info(&self) -> &Implementation {
        &self.inner.settings.info
    }

    /// The server's configuration.
    pub fn config(&self) -> &ServerConfig {
        &self.inner.config
    }

    /// What each connection's engine needs to know of the server.
    pub(crate) fn settings(&self) -> &Arc<ServerSettings> {
        &self.inner.settings
    }

    fn announce(&self, change: Change) {
        if let Some(shared) = self.inner.shared_changes.get() {
            shared.publish(&change);
        }
        // No receiver just means no connection is open.
        let _ = self.inner.changes.send(change);
    }

    /// The capabilities the server declares now.
    pub fn capabilities(&self) -> ServerCapabilities {
        let i = &self.inner;
        let listed = Some(ListChangedCapability { list_changed: Some(true) });
        ServerCapabilities {
            tools: self.offers_tools().then(|| listed.clone()).flatten(),
            prompts: self.offers_prompts().then(|| listed.clone()).flatten(),
            resources: self
                .offers_resources()
                .then_some(ResourcesCapability { subscribe: Some(true), list_changed: Some(true) }),
            logging: self.offers_logging().then(JsonObject::new),
            completions: self.offers_completions().then(JsonObject::new),
            // The codec keeps `tasks` for 2025-11-25 only, and the tasks extension for 2026-07-28
            // only; the apps extension goes to every revision (in the legacy era, to clients
            // that sent `extensions` in `initialize`).
            tasks: i.tasks.as_ref().map(|t| t.capability()),
            extensions: crate::apps::declare(self.offers_apps(), i.tasks.as_ref().and_then(|t| t.extensions())),
            ..ServerCapabilities::default()
        }
    }

    /// Whether the server offers tools (configured so, or some registered).
    pub(crate) fn offers_tools(&self) -> bool {
        self.inner.config.tools || !self.inner.tools.is_empty()
    }

    /// Whether the server offers prompts.
    pub(crate) fn offers_prompts(&self) -> bool {
        self.inner.config.prompts || !self.inner.prompts.is_empty()
    }

    /// Whether the server offers resources (plain or templated).
    pub(crate) fn offers_resources(&self) -> bool {
        let i = &self.inner;
        i.config.resources || !i.resources.is_empty() || !i.templates.is_empty()
    }

    /// Whether the server offers apps (an app tool or an app resource is registered).
    pub(crate) fn offers_apps(&self) -> bool {
        let i = &self.inner;
        i.tools.with_all(|m| m.values().any(|t| crate::apps::is_app_tool(&t.tool)))
            || i.resources.with_all(|m| m.values().any(|r| r.resource.mime_type.as_deref() == Some(APP_MIME_TYPE)))
    }

    /// Whether the server offers logging.
    pub(crate) fn offers_logging(&self) -> bool {
        self.inner.config.logging
    }

    /// Whether the server offers completion (configured, a handler, or completers on
    /// prompts or templates).
    pub(crate) fn offers_completions(&self) -> bool {
        let i = &self.inner;
        i.config.completions
            || i.completion.read().is_some()
            || i.prompts.with_all(|m| m.values().any(|p| !p.completions.is_empty()))
            || i.templates.with_all(|m| m.values().any(|t| !t.completions.is_empty()))
    }

    /// Adds (or replaces) a tool; connected clients are told the list changed.
    pub fn add_tool<F, Fut>(&self, tool: Tool, handler: F)
    where
        F: Fn(JsonObject, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = HandlerResult<CallToolResult>> + Send + 'static,
    {
        self.register_tool(ToolDef::new(tool, handler));
    }

    /// The names of the registered tools, in list order.
    pub fn tool_names(&self) -> Vec<String> {
        self.inner.tools.with_all(|m| m.keys().cloned().collect())
    }

    /// The URIs of the registered resources, in list order.
    pub fn resource_uris(&self) -> Vec<String> {
        self.inner.resources.with_all(|m| m.keys().cloned().collect())
    }

    /// The names of the registered prompts, in list order.
    pub fn prompt_names(&self) -> Vec<String> {
        self.inner.prompts.with_all(|m| m.keys().cloned().collect())
    }

    /// The definition of a registered tool.
    pub fn tool_definition(&self, name: &str) -> Option<Tool> {
        self.inner.tools.get(name).map(|e| e.tool.clone())
    }

    /// Runs `f` on the definition of a registered tool, without copying it.
    pub fn with_tool<R>(&self, name: &str, f: impl FnOnce(&Tool) -> R) -> Option<R> {
        self.inner.tools.get(name).map(|e| f(&e.tool))
    }

    /// Removes a tool; returns whether it existed.
    pub fn remove_tool(&self, name: &str) -> bool {
        let removed = self.inner.tools.remove(name);
        if removed {
            self.announce(Change::Tools);
            self.change_up(&Change::Tools, name);
        }
        removed
    }

    /// Adds (or replaces) a resource with a fixed URI.
    pub fn add_resource<F, Fut>(&self, resource: Resource, handler: F)
    where
        F: Fn(String, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = HandlerResult<ReadResourceResult>> + Send + 'static,
    {
        // A fixed resource has no template to refuse.
        let _ = self.register_resource(ResourceDef::fixed(resource, handler));
    }

    /// Removes a resource; returns whether it existed.
    pub fn remove_resource(&self, uri: &str) -> bool {
        let removed = self.inner.resources.remove(uri);
        if removed {
            self.announce(Change::Resources);
            self.change_up(&Change::Resources, uri);
        }
        removed
    }

    /// Adds a resource template: reads of matching URIs go to `handler` with the variables.
    pub fn add_resource_template<F, Fut>(&self, template: ResourceTemplate, handler: F) -> Result<(), UriTemplateError>
    where
        F: Fn(String, HashMap<String, String>, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = HandlerResult<ReadResourceResult>> + Send + 'static,
    {
        self.add_resource_template_with_completions(template, HashMap::new(), handler)
    }

    /// Like [`Self::add_resource_template`], with completion values for its variables.
    pub fn add_resource_template_with_completions<F, Fut>(
        &self,
        template: ResourceTemplate,
        completions: HashMap<String, Vec<String>>,
        handler: F,
    ) -> Result<(), UriTemplateError>
    where
        F: Fn(String, HashMap<String, String>, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = HandlerResult<ReadResourceResult>> + Send + 'static,
    {
        let def = completions
            .into_iter()
            .fold(ResourceDef::template(template, handler), |def, (name, values)| def.with_completions(&name, values));
        self.register_resource(def)
    }

    /// Adds (or replaces) a prompt.
    pub fn add_prompt<F, Fut>(&self, prompt: Prompt, handler: F)
    where
        F: Fn(BTreeMap<String, String>, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = HandlerResult<GetPromptResult>> + Send + 'static,
    {
        self.add_prompt_with_completions(prompt, HashMap::new(), handler)
    }

    /// Like [`Self::add_prompt`], with completion values for its arguments.
    pub fn add_prompt_with_completions<F, Fut>(
        &self,
        prompt: Prompt,
        completions: HashMap<String, Vec<String>>,
        handler: F,
    ) where
        F: Fn(BTreeMap<String, String>, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = HandlerResult<GetPromptResult>> + Send + 'static,
    {
        let def = completions
            .into_iter()
            .fold(PromptDef::new(prompt, handler), |def, (name, values)| def.with_completions(&name, values));
        self.register_prompt(def);
    }

    /// Removes a prompt; returns whether it existed.
    pub fn remove_prompt(&self, name: &str) -> bool {
        let removed = self.inner.prompts.remove(name);
        if removed {
            self.announce(Change::Prompts);
            self.change_up(&Change::Prompts, name);
        }
        removed
    }

    /// Replaces the built-in completion (from registered values) with a handler.
    pub fn set_completion_handler<F, Fut>(&self, handler: F)
    where
        F: Fn(CompleteParams, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = HandlerResult<CompleteResult>> + Send + 'static,
    {
        *self.inner.completion.write() = Some(boxed1(handler));
    }

    /// Adds (or replaces) a tool: made with `#[tool]` (`add_tool()` for `fn add`), or a
    /// [`ToolDef`]. An app tool ([`ToolDef::app`]) gets its `_meta.ui` here; one that is
    /// refused (see [`crate::apps::AppError`]) is logged as an error and left out. (Whether
    /// the server has its resource is checked only by [`ServerBuilder::try_build`].)
    pub fn register_tool(&self, tool: impl IntoToolDef) {
        let ToolDef { mut tool, handler, scopes, app } = tool.into_tool_def();
        if let Some(app) = app {
            if let Err(e) = app.apply(&mut tool) {
                tracing::error!("the app tool is left out: {e}");
                return;
            }
        }
        let name = tool.name.clone();
        let entry = Arc::new(ToolEntry::new(tool, handler, scopes));
        self.inner.tools.insert(name, entry.clone());
        self.announce(Change::Tools);
        self.mount_tool_up(&entry);
    }

    /// Adds (or replaces) every tool of a `#[tools]` impl block, on the value given (`T` or
    /// `Arc<T>`).
    pub fn register_tools<M>(&self, tools: impl IntoToolSet<M>) {
        for tool in tools.into_tool_defs() {
            self.register_tool(tool);
        }
    }

    /// Adds (or replaces) a resource or resource template: made with `#[resource]`
    /// (`note_resource()` for `fn note`), or a [`ResourceDef`]. A template that is not a valid
    /// URI template is refused; an app resource that fails its checks (see
    /// [`crate::apps::AppError`]) is logged as an error and left out.
    pub fn register_resource(&self, resource: impl IntoResourceDef) -> Result<(), UriTemplateError> {
        let def = resource.into_resource_def();
        if let Some(Err(e)) = &def.app_check {
            tracing::error!("the app resource is left out: {e}");
            return Ok(());
        }
        let scopes = def.scopes.clone();
        match &def.kind {
            ResourceKind::Fixed(resource, handler) => {
                let entry = ResourceEntry { resource: resource.clone(), handler: handler.clone(), scopes };
                self.inner.resources.insert(resource.uri.clone(), entry);
            }
            ResourceKind::Template(template, handler, completions) => {
                let parsed = UriTemplate::parse(&template.uri_template)?;
                let key = template.uri_template.clone();
                let (template, handler, completions) = (template.clone(), handler.clone(), completions.clone());
                self.inner.templates.insert(key, TemplateEntry { template, parsed, handler, completions, scopes });
            }
        }
        self.announce(Change::Resources);
        self.mount_resource_up(&def);
        Ok(())
    }

    /// Adds (or replaces) a prompt: made with `#[prompt]` (`review_prompt()` for `fn review`),
    /// or a [`PromptDef`].
    pub fn register_prompt(&self, prompt: impl IntoPromptDef) {
        let def = prompt.into_prompt_def();
        let entry = PromptEntry {
            prompt: def.prompt.clone(),
            handler: def.handler.clone(),
            completions: def.completions.clone(),
            scopes: def.scopes.clone(),
        };
        self.inner.prompts.insert(def.prompt.name.clone(), entry);
        self.announce(Change::Prompts);
        self.mount_prompt_up(&def);
    }

    /// Tells subscribed clients that a resource's contents changed.
    pub fn notify_resource_updated(&self, uri: impl Into<String>) {
        let uri = uri.into();
        self.change_up(&Change::ResourceUpdated(String::new()), &uri);
        self.announce(Change::ResourceUpdated(uri));
    }
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let i = &self.inner;
        f.debug_struct("Server")
            .field("name", &i.settings.info.name)
            .field("tools", &i.tools.len())
            .field("resources", &i.resources.len())
            .field("templates", &i.templates.len())
            .field("prompts", &i.prompts.len())
            .finish()
    }
}

impl Offer for Server {
    fn offers(&self, feature: Feature) -> bool {
        match feature {
            Feature::Tools => self.offers_tools(),
            Feature::Resources => self.offers_resources(),
            Feature::Prompts => self.offers_prompts(),
            Feature::Logging => self.offers_logging(),
            Feature::Completions => self.offers_completions(),
        }
    }

    fn capabilities(&self) -> ServerCapabilities {
        Server::capabilities(self)
    }
}
