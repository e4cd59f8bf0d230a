//! How a server is built: the builder, at the top of the server's layers (it makes the
//! [`Server`], its registries and its middleware stack).

use std::sync::Arc;
use std::time::Duration;

use mcpwire_protocol::engine::cursor::CursorCodec;
use mcpwire_protocol::engine::key_ring::KeyRing;
use mcpwire_protocol::engine::request_state::StateSealer;
use mcpwire_protocol::engine::{ServerSettings, TaskMethods};
use mcpwire_protocol::types::Implementation;
use tokio::sync::broadcast;
use tower::{Layer, Service};

use super::registry::Registry;
use super::{Server, ServerConfig, ServerInner};
use crate::authoring::{IntoPromptDef, IntoResourceDef, IntoToolDef, IntoToolSet, PromptDef, ResourceDef, ToolDef};
use crate::middleware::{BoxError, Layers, McpRequest, McpResponse, Stack};
use crate::state::StateMap;
use crate::tasks::{TaskClock, TaskConfig, TaskRuntime, TaskSettings, TaskStore};
use mcpwire_protocol::namespace::Namespace;

/// Why a server cannot be built ([`ServerBuilder::try_build`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// An app tool or an app resource is wrong.
    #[error(transparent)]
    App(#[from] crate::apps::AppError),
}

/// Builds a [`Server`].
#[derive(Debug, Clone)]
pub struct ServerBuilder {
    info: Implementation,
    instructions: Option<String>,
    config: ServerConfig,
    cursor_keys: Option<KeyRing>,
    state_keys: Option<KeyRing>,
    tasks: Option<TaskSettings>,
    state: StateMap,
    tools: Vec<ToolDef>,
    resources: Vec<ResourceDef>,
    prompts: Vec<PromptDef>,
    layers: Layers,
    mounts: Vec<(Namespace, Server)>,
}

impl ServerBuilder {
    /// Gives handlers a value of type `T` (the [`crate::State`] extractor, or
    /// [`crate::Context::state`]); give an `Arc<T>` to share one value. One value of each
    /// type: a second of the same type replaces the first.
    pub fn state<T: Send + Sync + 'static>(mut self, value: T) -> Self {
        self.state.insert(value);
        self
    }

    /// Adds a tool: `add_tool()` for a function `add` marked `#[tool]` (the macro adds that
    /// function), or any [`ToolDef`].
    pub fn tool(mut self, tool: impl IntoToolDef) -> Self {
        self.tools.push(tool.into_tool_def());
        self
    }

    /// Adds every tool of a `#[tools]` impl block, on this value (`T` or `Arc<T>`).
    pub fn tools<M>(mut self, tools: impl IntoToolSet<M>) -> Self {
        self.tools.extend(tools.into_tool_defs());
        self
    }

    /// Adds a resource or a resource template: `note_resource()` for a function `note` marked
    /// `#[resource]` (the macro adds that function), or any [`ResourceDef`]. (A template that does not parse is logged and left out; register it
    /// with [`Server::register_resource`] to get the error.)
    pub fn resource(mut self, resource: impl IntoResourceDef) -> Self {
        self.resources.push(resource.into_resource_def());
        self
    }

    /// Adds a prompt: `review_prompt()` for a function `review` marked `#[prompt]` (the macro
    /// adds that function), or any [`PromptDef`].
    pub fn prompt(mut self, prompt: impl IntoPromptDef) -> Self {
        self.prompts.push(prompt.into_prompt_def());
        self
    }

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
    /// Without it (or [`Self::cursor_key_ring`]), a random key of this process's own.
    pub fn cursor_key(mut self, key: [u8; 32]) -> Self {
        self.cursor_keys = Some(KeyRing::of_key(key));
        self
    }

    /// The keys that seal pagination cursors: the ring's current key seals, every key it
    /// holds opens, and the server follows the ring as it is rotated (share a ring's keys
    /// between instances behind one address, so that a next page may reach any of them; see
    /// [`KeyRing`]). Replaces [`Self::cursor_key`].
    pub fn cursor_key_ring(mut self, ring: KeyRing) -> Self {
        self.cursor_keys = Some(ring);
        self
    }

    /// The key that seals `requestState` of multi-round requests (share it between
    /// instances behind one address, so that a retry may reach any of them). Without it (or
    /// [`Self::state_key_ring`]), a random key of this process's own.
    pub fn state_key(mut self, key: [u8; 32]) -> Self {
        self.state_keys = Some(KeyRing::of_key(key));
        self
    }

    /// The keys that seal `requestState` of multi-round requests: the ring's current key
    /// seals, every key it holds opens, and the server follows the ring as it is rotated
    /// (see [`KeyRing`]). Use a ring other than the cursors', so that a cursor is never taken
    /// for a state. Replaces [`Self::state_key`].
    ///
    /// ```
    /// use mcpwire_protocol::engine::key_ring::KeyRing;
    ///
    /// let ring = KeyRing::new(1, [1; 32]);
    /// let server = mcpwire_server::Server::builder("demo", "1.0").state_key_ring(ring.clone()).build();
    /// // Later: rotate with overlap. What key 1 sealed opens until key 1 is dropped.
    /// ring.insert(2, [2; 32]);
    /// ring.set_current(2);
    /// ring.remove(1);
    /// # drop(server);
    /// ```
    pub fn state_key_ring(mut self, ring: KeyRing) -> Self {
        self.state_keys = Some(ring);
        self
    }

    /// Enables tasks (2025-11-25 task-augmented `tools/call` and the 2026-07-28
    /// `io.modelcontextprotocol/tasks` extension) with this configuration, kept in an
    /// in-memory store unless [`Self::task_store`] gives another. Which tools may run as
    /// tasks is each tool's `execution.taskSupport` ([`Tool::with_task_support`](mcpwire_protocol::types::Tool::with_task_support)).
    pub fn tasks(mut self, config: TaskConfig) -> Self {
        self.tasks.get_or_insert_with(TaskSettings::default).config = config;
        self
    }

    /// Enables tasks kept in `store` (a store shared by several instances, say).
    pub fn task_store(mut self, store: Arc<dyn TaskStore>) -> Self {
        self.tasks.get_or_insert_with(TaskSettings::default).store = Some(store);
        self
    }

    /// Enables tasks stamped and expired by `clock` instead of the system's: it stamps each
    /// new task's `createdAt` and drives the default in-memory store (a store given to
    /// [`Self::task_store`] keeps its own, see
    /// [`InMemoryTaskStore::with_clock`](crate::InMemoryTaskStore::with_clock)). A test on
    /// tokio's paused clock gives [`TaskClock::tokio`], so that tasks expire in virtual time.
    pub fn task_clock(mut self, clock: TaskClock) -> Self {
        self.tasks.get_or_insert_with(TaskSettings::default).clock = clock;
        self
    }

    /// Wraps the handling of every request in `layer`, a [`tower::Layer`] over
    /// [`McpRequest`] and [`McpResponse`] (see [`crate::middleware`]): tower's own layers
    /// (timeout, concurrency limit, load shedding, ...) or one's own. Like axum's, each call
    /// wraps the layers added before it: the last one added sees a request first. (Give a
    /// `tower::ServiceBuilder` to write several in the order they run.)
    pub fn layer<L>(mut self, layer: L) -> Self
    where
        L: Layer<Stack> + Send + Sync + 'static,
        L::Service: Service<McpRequest, Response = McpResponse> + Clone + Send + Sync + 'static,
        <L::Service as Service<McpRequest>>::Error: Into<BoxError>,
        <L::Service as Service<McpRequest>>::Future: Send + 'static,
    {
        self.layers.push(layer);
        self
    }

    /// Mounts `server` under `prefix`: its tools and prompts are served as
    /// `{prefix}_{name}`, its resources and templates with the prefix as the first segment
    /// after the scheme (`file:///a` under `fs` is `file://fs//a`; see
    /// [`mcpwire_protocol::namespace`]), each with its own handler, which reaches `server`'s
    /// state. What `server` registers or removes later, and its resource updates, follow.
    /// Requests go through this server's layers (not `server`'s), and tasks are this server's.
    /// Its completion handler, if it set one, is not mounted (its prompts' and templates'
    /// completions are). A prefix that cannot be one (see
    /// [`Namespace::prefixed`](mcpwire_protocol::namespace::Namespace::prefixed)) is logged as
    /// an error and the server left out. For a server reached over a connection (a command,
    /// a URL), see `mcpwire_bridge::Gateway`.
    pub fn mount(mut self, prefix: impl Into<String>, server: Server) -> Self {
        match Namespace::prefixed(prefix) {
            Ok(namespace) => self.mounts.push((namespace, server)),
            Err(e) => tracing::error!("the mounted server is left out: {e}"),
        }
        self
    }

    /// Builds the server, refusing mistakes found now rather than at run time: those of app
    /// tools and app resources (see [`crate::apps`]).
    pub fn try_build(self) -> Result<Server, BuildError> {
        crate::apps::check(&self.tools, &self.resources)?;
        Ok(self.build_checked())
    }

    /// Builds the server.
    ///
    /// # Panics
    ///
    /// On a mistake [`Self::try_build`] returns as an error (an app tool naming a resource
    /// the server does not have, say).
    pub fn build(self) -> Server {
        match self.try_build() {
            Ok(server) => server,
            Err(e) => panic!("the server cannot be built: {e}"),
        }
    }

    fn build_checked(self) -> Server {
        let (changes, _) = broadcast::channel(256);
        let tasks = self.tasks.map(|t| Arc::new(TaskRuntime::new(t)));
        let config = self.config;
        let settings = ServerSettings {
            info: self.info,
            instructions: self.instructions,
            cache: config.cache,
            modern_only: config.modern_only,
            logging: config.logging,
            sealer: self.state_keys.map(StateSealer::with_ring).unwrap_or_else(StateSealer::random),
            request_state_ttl: config.request_state_ttl,
            tasks: tasks.as_ref().map(|t| TaskMethods { list: t.config.list, extension: t.config.extension }),
            declared: Default::default(),
        };
        let server = Server {
            inner: Arc::new(ServerInner {
                settings: Arc::new(settings),
                tools: Registry::default(),
                resources: Registry::default(),
                templates: Registry::default(),
                prompts: Registry::default(),
                completion: Default::default(),
                changes,
                cursors: self.cursor_keys.map(CursorCodec::with_ring).unwrap_or_else(CursorCodec::random),
                config,
                tasks,
                state: Arc::new(self.state),
                in_flight: Default::default(),
                middleware: self.layers.build(),
                parents: Default::default(),
                shared_changes: Default::default(),
            }),
        };
        for tool in self.tools {
            server.register_tool(tool);
        }
        for resource in self.resources {
            let uri = resource.uri().to_owned();
            if let Err(e) = server.register_resource(resource) {
                tracing::error!(template = %uri, "the resource template is left out: {e}");
            }
        }
        for prompt in self.prompts {
            server.register_prompt(prompt);
        }
        for (namespace, mounted) in self.mounts {
            mounted.mount_into(&server, namespace);
        }
        server
    }
}

impl ServerBuilder {
    /// A builder for a server with a name and a version.
    pub(crate) fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Self {
            info: Implementation::new(name, version),
            instructions: None,
            config: ServerConfig::default(),
            cursor_keys: None,
            state_keys: None,
            tasks: None,
            state: StateMap::default(),
            tools: Vec::new(),
            resources: Vec::new(),
            prompts: Vec::new(),
            layers: Layers::default(),
            mounts: Vec::new(),
        }
    }
}

impl Server {
    /// Starts building a server with a name and a version.
    pub fn builder(name: impl Into<String>, version: impl Into<String>) -> ServerBuilder {
        ServerBuilder::new(name, version)
    }
}
