//! The server: what it offers, how it is configured, and how it is changed at runtime.

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use mcp_protocol::engine::cursor::CursorCodec;
use mcp_protocol::engine::request_state::StateSealer;
use mcp_protocol::types::{
    CacheHint, CallToolResult, CompleteParams, CompleteResult, GetPromptResult, Implementation, JsonObject,
    ListChangedCapability, Prompt, ReadResourceResult, Resource, ResourceTemplate, ResourcesCapability,
    ServerCapabilities, Tool,
};
use mcp_protocol::uri_template::{UriTemplate, UriTemplateError};
use tokio::sync::broadcast;

use crate::context::Context;
use crate::error::HandlerResult;
use crate::registry::{
    boxed1, Change, CompletionHandler, PromptEntry, Registry, ResourceEntry, TemplateEntry, ToolEntry,
};
use crate::tasks::{TaskConfig, TaskRuntime, TaskSettings, TaskStore};

pub(crate) struct ServerInner {
    pub(crate) info: Implementation,
    pub(crate) instructions: Option<String>,
    pub(crate) tools: Registry<Arc<ToolEntry>>,
    pub(crate) resources: Registry<ResourceEntry>,
    pub(crate) templates: Registry<TemplateEntry>,
    pub(crate) prompts: Registry<PromptEntry>,
    pub(crate) completion: std::sync::RwLock<Option<CompletionHandler>>,
    pub(crate) changes: broadcast::Sender<Change>,
    pub(crate) cursors: CursorCodec,
    pub(crate) sealer: StateSealer,
    pub(crate) config: ServerConfig,
    /// Task machinery, when tasks are enabled.
    pub(crate) tasks: Option<Arc<TaskRuntime>>,
}

/// Settings of a server.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Items per page of a list result.
    pub page_size: usize,
    /// How long a request to the client (sampling, elicitation, roots) may take.
    pub request_timeout: Duration,
    /// How long in-flight requests may run on after the client closed its side.
    pub shutdown_grace: Duration,
    /// Caching hints for cacheable results (2026-07-28).
    pub cache: CacheHint,
    /// How long a sealed `requestState` stays valid (2026-07-28 multi-round requests).
    pub request_state_ttl: Duration,
    /// Declare `tools` even when no tool is registered (tools come later).
    pub tools: bool,
    /// Declare `resources` even when none is registered.
    pub resources: bool,
    /// Declare `prompts` even when none is registered.
    pub prompts: bool,
    /// Declare `logging` and send log messages.
    pub logging: bool,
    /// Declare `completions`.
    pub completions: bool,
    /// Serve only the modern era (2026-07-28): `initialize` is refused with the supported
    /// versions, and `server/discover` lists only modern ones.
    pub modern_only: bool,
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            page_size: 100,
            request_timeout: Duration::from_secs(60),
            shutdown_grace: Duration::from_secs(10),
            cache: CacheHint::default(),
            request_state_ttl: Duration::from_secs(600),
            tools: false,
            resources: false,
            prompts: false,
            logging: true,
            completions: false,
            modern_only: false,
        }
    }
}

/// An MCP server: a set of tools, resources and prompts, served on any number of
/// connections at once. Cheap to clone; every clone is the same server.
#[derive(Clone)]
pub struct Server {
    pub(crate) inner: Arc<ServerInner>,
}

/// Builds a [`Server`].
#[derive(Debug, Clone)]
pub struct ServerBuilder {
    info: Implementation,
    instructions: Option<String>,
    config: ServerConfig,
    cursor_key: Option<[u8; 32]>,
    state_key: Option<[u8; 32]>,
    tasks: Option<TaskSettings>,
}

impl ServerBuilder {
    /// Sets the instructions given to clients.
    pub fn instructions(mut self, text: impl Into<String>) -> Self {
        self.instructions = Some(text.into());
        self
    }

    /// Replaces the server's info (title, description, icons, website).
    pub fn info(mut self, info: Implementation) -> Self {
        self.info = info;
        self
    }

    /// Replaces the whole configuration.
    pub fn config(mut self, config: ServerConfig) -> Self {
        self.config = config;
        self
    }

    /// Serves only the modern era (2026-07-28), refusing `initialize`.
    pub fn modern_only(mut self, yes: bool) -> Self {
        self.config.modern_only = yes;
        self
    }

    /// Items per page of list results.
    pub fn page_size(mut self, n: usize) -> Self {
        self.config.page_size = n.max(1);
        self
    }

    /// Timeout of requests to the client.
    pub fn request_timeout(mut self, d: Duration) -> Self {
        self.config.request_timeout = d;
        self
    }

    /// The key that seals pagination cursors (share it between instances behind one address).
    pub fn cursor_key(mut self, key: [u8; 32]) -> Self {
        self.cursor_key = Some(key);
        self
    }

    /// The key that seals `requestState` of multi-round requests (share it between
    /// instances behind one address, so that a retry may reach any of them).
    pub fn state_key(mut self, key: [u8; 32]) -> Self {
        self.state_key = Some(key);
        self
    }

    /// Enables tasks (2025-11-25 task-augmented `tools/call` and the 2026-07-28
    /// `io.modelcontextprotocol/tasks` extension) with this configuration, kept in an
    /// in-memory store unless [`Self::task_store`] gives another. Which tools may run as
    /// tasks is each tool's `execution.taskSupport` ([`Tool::with_task_support`]).
    pub fn tasks(mut self, config: TaskConfig) -> Self {
        self.tasks.get_or_insert_with(TaskSettings::default).config = config;
        self
    }

    /// Enables tasks kept in `store` (a store shared by several instances, say).
    pub fn task_store(mut self, store: Arc<dyn TaskStore>) -> Self {
        self.tasks.get_or_insert_with(TaskSettings::default).store = Some(store);
        self
    }

    /// Builds the server.
    pub fn build(self) -> Server {
        let (changes, _) = broadcast::channel(256);
        Server {
            inner: Arc::new(ServerInner {
                info: self.info,
                instructions: self.instructions,
                tools: Registry::default(),
                resources: Registry::default(),
                templates: Registry::default(),
                prompts: Registry::default(),
                completion: Default::default(),
                changes,
                cursors: self.cursor_key.map(CursorCodec::with_key).unwrap_or_else(CursorCodec::random),
                sealer: self.state_key.map(StateSealer::with_key).unwrap_or_else(StateSealer::random),
                config: self.config,
                tasks: self.tasks.map(|t| Arc::new(TaskRuntime::new(t))),
            }),
        }
    }
}

impl Server {
    /// Starts building a server with a name and a version.
    pub fn builder(name: impl Into<String>, version: impl Into<String>) -> ServerBuilder {
        ServerBuilder {
            info: Implementation::new(name, version),
            instructions: None,
            config: ServerConfig::default(),
            cursor_key: None,
            state_key: None,
            tasks: None,
        }
    }

    /// The server's info.
    pub fn info(&self) -> &Implementation {
        &self.inner.info
    }

    /// The server's configuration.
    pub fn config(&self) -> &ServerConfig {
        &self.inner.config
    }

    fn announce(&self, change: Change) {
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
            // The codec keeps `tasks` for 2025-11-25 only and `extensions` for 2026-07-28 only.
            tasks: i.tasks.as_ref().map(|t| t.capability()),
            extensions: i.tasks.as_ref().and_then(|t| t.extensions()),
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

    /// Whether the server offers logging.
    pub(crate) fn offers_logging(&self) -> bool {
        self.inner.config.logging
    }

    /// Whether the server offers completion (configured, a handler, or completers on
    /// prompts or templates).
    pub(crate) fn offers_completions(&self) -> bool {
        let i = &self.inner;
        i.config.completions
            || i.completion.read().map(|h| h.is_some()).unwrap_or(false)
            || i.prompts.with_all(|m| m.values().any(|p| !p.completions.is_empty()))
            || i.templates.with_all(|m| m.values().any(|t| !t.completions.is_empty()))
    }

    /// Adds (or replaces) a tool; connected clients are told the list changed.
    pub fn add_tool<F, Fut>(&self, tool: Tool, handler: F)
    where
        F: Fn(JsonObject, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = HandlerResult<CallToolResult>> + Send + 'static,
    {
        let name = tool.name.clone();
        self.inner.tools.insert(name, Arc::new(ToolEntry { tool, handler: boxed1(handler) }));
        self.announce(Change::Tools);
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
        }
        removed
    }

    /// Adds (or replaces) a resource with a fixed URI.
    pub fn add_resource<F, Fut>(&self, resource: Resource, handler: F)
    where
        F: Fn(String, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = HandlerResult<ReadResourceResult>> + Send + 'static,
    {
        let uri = resource.uri.clone();
        self.inner.resources.insert(uri, ResourceEntry { resource, handler: boxed1(handler) });
        self.announce(Change::Resources);
    }

    /// Removes a resource; returns whether it existed.
    pub fn remove_resource(&self, uri: &str) -> bool {
        let removed = self.inner.resources.remove(uri);
        if removed {
            self.announce(Change::Resources);
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
        let parsed = UriTemplate::parse(&template.uri_template)?;
        let handler = Arc::new(handler);
        let handler: crate::registry::TemplateHandler =
            Arc::new(move |uri, vars, ctx| Box::pin((handler)(uri, vars, ctx)));
        let key = template.uri_template.clone();
        self.inner.templates.insert(key, TemplateEntry { template, parsed, handler, completions });
        self.announce(Change::Resources);
        Ok(())
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
        let name = prompt.name.clone();
        self.inner.prompts.insert(name, PromptEntry { prompt, handler: boxed1(handler), completions });
        self.announce(Change::Prompts);
    }

    /// Removes a prompt; returns whether it existed.
    pub fn remove_prompt(&self, name: &str) -> bool {
        let removed = self.inner.prompts.remove(name);
        if removed {
            self.announce(Change::Prompts);
        }
        removed
    }

    /// Replaces the built-in completion (from registered values) with a handler.
    pub fn set_completion_handler<F, Fut>(&self, handler: F)
    where
        F: Fn(CompleteParams, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = HandlerResult<CompleteResult>> + Send + 'static,
    {
        *self.inner.completion.write().unwrap_or_else(|e| e.into_inner()) = Some(boxed1(handler));
    }

    /// Tells subscribed clients that a resource's contents changed.
    pub fn notify_resource_updated(&self, uri: impl Into<String>) {
        self.announce(Change::ResourceUpdated(uri.into()));
    }
}
