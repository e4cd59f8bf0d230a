//! The client: who it is, what it can answer, and how it connects.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use mcpwire_protocol::types::{
    ClientCapabilities, CreateMessageParams, CreateMessageResult, ElicitParams, ElicitResult, Implementation,
    JsonObject, ListRootsResult, LoggingLevel, Root,
};
use mcpwire_protocol::{ErrorObject, ProtocolVersion};
use mcpwire_transport::child::ChildCommand;
use mcpwire_transport::Connection;
use serde_json::{json, Value};

use crate::error::ClientError;
use crate::middleware::ClientStack;
use crate::session::ClientSession;
use crate::settings::Config;
pub use crate::settings::{ElicitationHandler, HandlerFuture, NotificationCallback, RootsHandler, SamplingHandler};
use mcpwire_protocol::message::ServerNotification;

/// An MCP client: its identity, settings and handlers. Cheap to clone; connect it to any
/// number of servers.
#[derive(Clone)]
pub struct Client {
    pub(crate) config: Arc<Config>,
    /// The layers around the sending of each typed request, if any.
    stack: Option<ClientStack>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client").field("info", &self.config.info).field("pinned", &self.config.pinned).finish()
    }
}

/// Builds a [`Client`].
pub struct ClientBuilder {
    config: Config,
    layers: crate::middleware::Layers,
}

impl Client {
    /// Starts building a client with a name and a version (its `clientInfo`).
    pub fn builder(name: impl Into<String>, version: impl Into<String>) -> ClientBuilder {
        ClientBuilder {
            config: Config {
                #[cfg(feature = "opentelemetry")]
                durations: None,
                info: Implementation::new(name, version),
                pinned: None,
                accept_negotiated: false,
                sampling_tools: false,
                request_timeout: Duration::from_secs(60),
                probe_timeout: Duration::from_secs(3),
                close_grace: Duration::from_secs(5),
                max_input_rounds: 8,
                max_pages: 1000,
                log_level: None,
                sampling: None,
                elicitation: None,
                elicitation_url: true,
                roots: None,
                on_notification: None,
                tasks: false,
                task_requests: false,
                task_wait: Duration::from_secs(300),
                validate_outputs: true,
                extensions: JsonObject::new(),
            },
            layers: Default::default(),
        }
    }

    /// The client's info.
    pub fn info(&self) -> &Implementation {
        &self.config.info
    }

    /// The capabilities this client declares to a server of revision `version`.
    pub fn capabilities(&self, version: ProtocolVersion) -> ClientCapabilities {
        self.config.capabilities(version)
    }

    /// Connects over any transport: detects the server's era (unless a revision is pinned)
    /// and returns a session ready for calls.
    ///
    /// Detection follows the specification: a `server/discover` probe; a discover result
    /// means modern (2026-07-28); a recognised modern error (`-32022` with
    /// `data.supported`) means modern with another version; any other error, or no answer
    /// within the probe timeout, means legacy (`initialize`, offering 2025-11-25).
    pub async fn connect(&self, connection: Connection) -> Result<ClientSession, ClientError> {
        ClientSession::start(self.config.clone(), self.stack.clone(), connection, None).await
    }

    /// [`Self::connect`], the session owning `child` (the process behind `connection`):
    /// closing the session ends it, as [`Self::spawn`]'s.
    pub(crate) async fn connect_with_child(
        &self,
        connection: Connection,
        child: Option<mcpwire_transport::child::ChildProcess>,
    ) -> Result<ClientSession, ClientError> {
        ClientSession::start(self.config.clone(), self.stack.clone(), connection, child).await
    }

    /// Starts a server process and connects to it over its stdin/stdout. Closing the
    /// session ([`ClientSession::close`]) ends the process: stdin closed, then SIGTERM, then
    /// SIGKILL, each after the close grace period.
    ///
    /// A process that cannot be started fails with [`ClientError::Spawn`]
    /// ([`ClientError::is_spawn`]); the operating system's [`std::io::Error`] is its
    /// [`source`](std::error::Error::source).
    pub async fn spawn(&self, command: &ChildCommand) -> Result<ClientSession, ClientError> {
        let (connection, child) = command.spawn()?;
        ClientSession::start(self.config.clone(), self.stack.clone(), connection, Some(child)).await
    }
}

impl ClientBuilder {
    /// Replaces the client's info (title, description, icons, website).
    pub fn info(mut self, info: Implementation) -> Self {
        self.config.info = info;
        self
    }

    /// Pins the protocol revision: a legacy one skips the discover probe and goes straight
    /// to `initialize`; 2026-07-28 never falls back to `initialize`. Unpinned (the
    /// default), the revision is detected.
    pub fn protocol_version(mut self, version: ProtocolVersion) -> Self {
        self.config.pinned = Some(version);
        self
    }

    /// Declares that the sampling handler can answer requests that offer tools
    /// (`sampling.tools`, 2025-11-25 and later): servers may then send `tools` and
    /// `toolChoice`, and expect `tool_use` content back.
    pub fn sampling_tools(mut self, enabled: bool) -> Self {
        self.config.sampling_tools = enabled;
        self
    }

    /// With a pinned legacy revision, accepts whatever legacy revision the server answers
    /// `initialize` with (the specification's negotiation: the pinned one is only offered).
    pub fn accept_negotiated(mut self, accept: bool) -> Self {
        self.config.accept_negotiated = accept;
        self
    }

    /// Default time a request may take (60 s unless set); every call is bounded by it
    /// unless the call sets its own ([`ClientSession::with_timeout`]).
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.config.request_timeout = timeout;
        self
    }

    /// How long the `server/discover` probe waits before deciding the server is legacy
    /// (3 s unless set).
    pub fn probe_timeout(mut self, timeout: Duration) -> Self {
        self.config.probe_timeout = timeout;
        self
    }

    /// How long closing waits at each step (flushing, the process exiting on end of input,
    /// then after SIGTERM); 5 s unless set.
    pub fn close_grace(mut self, grace: Duration) -> Self {
        self.config.close_grace = grace;
        self
    }

    /// How many `input_required` rounds one call answers before failing (8 unless set).
    pub fn max_input_rounds(mut self, rounds: usize) -> Self {
        self.config.max_input_rounds = rounds;
        self
    }

    /// How many pages the `list_all_*` helpers follow before failing (1000 unless set).
    pub fn max_pages(mut self, pages: usize) -> Self {
        self.config.max_pages = pages.max(1);
        self
    }

    /// The log level to ask for: sent with `logging/setLevel` after a legacy handshake (if
    /// the server offers logging), and in every modern request's `_meta`. Without it a
    /// modern server sends no log messages.
    pub fn log_level(mut self, level: LoggingLevel) -> Self {
        self.config.log_level = Some(level);
        self
    }

    /// Answers the server's elicitation and sampling questions as tasks when it asks
    /// (2025-11-25): declares `tasks.requests` for each question it has a handler for, and
    /// `tasks.list` and `tasks.cancel`. A server may then send such a question with
    /// `params.task`; the client answers with the task at once, runs the handler in the
    /// background, and serves `tasks/get`, `tasks/result`, `tasks/list` and `tasks/cancel`.
    /// Off by default (the server then asks plainly, and waits for the handler's answer).
    pub fn task_requests(mut self, enabled: bool) -> Self {
        self.config.task_requests = enabled;
        self
    }

    /// Answers `sampling/createMessage` (declares `sampling`).
    pub fn sampling<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(CreateMessageParams) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<CreateMessageResult, ErrorObject>> + Send + 'static,
    {
        self.config.sampling = Some(Arc::new(move |p| Box::pin(handler(p))));
        self
    }

    /// Answers `elicitation/create` (declares `elicitation`: from 2025-11-25 with the `form`
    /// mode and, unless [`Self::elicitation_url`] turns it off, the `url` mode).
    pub fn elicitation<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(ElicitParams) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ElicitResult, ErrorObject>> + Send + 'static,
    {
        self.config.elicitation = Some(Arc::new(move |p| Box::pin(handler(p))));
        self
    }

    /// Whether to declare URL-mode elicitation (on by default when an elicitation handler
    /// is set; the handler then gets requests with `mode: "url"`).
    pub fn elicitation_url(mut self, enabled: bool) -> Self {
        self.config.elicitation_url = enabled;
        self
    }

    /// Answers `roots/list` (declares `roots`).
    pub fn roots<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ListRootsResult, ErrorObject>> + Send + 'static,
    {
        self.config.roots = Some(Arc::new(move || Box::pin(handler())));
        self
    }

    /// Answers `roots/list` with a fixed list (declares `roots`).
    pub fn static_roots(self, roots: Vec<Root>) -> Self {
        let result = ListRootsResult { roots };
        self.roots(move || {
            let result = result.clone();
            async move { Ok(result) }
        })
    }

    /// Calls `callback` with every server notification not routed to a progress callback or
    /// a listen stream, from the start of the connection. Runs on the connection's task:
    /// it must return quickly (hand work to a channel if needed).
    pub fn on_notification<F>(mut self, callback: F) -> Self
    where
        F: Fn(&ServerNotification) + Send + Sync + 'static,
    {
        self.config.on_notification = Some(Arc::new(callback));
        self
    }

    /// Enables tasks on 2026-07-28 servers: every request declares the
    /// `io.modelcontextprotocol/tasks` extension, so the server may answer a `tools/call`
    /// with a task; [`ClientSession::call_tool`] then polls the task to its end (within
    /// [`Self::task_wait`]) and returns its result, and
    /// [`ClientSession::call_tool_as_task`] hands the task over. (2025-11-25 tasks need no
    /// switch: the client asks for them call by call.)
    pub fn tasks(mut self, enabled: bool) -> Self {
        self.config.tasks = enabled;
        self
    }

    /// Declares an extension in the client's capabilities (`capabilities.extensions`), with
    /// its settings (an object; anything else is declared as `{}`), in every revision: hosts
    /// of the legacy era negotiate extensions such as MCP Apps in `initialize` all the same.
    /// Declaring one again replaces its settings. The tasks extension is [`Self::tasks`].
    ///
    /// ```
    /// use mcpwire_client::Client;
    /// use mcpwire_protocol::types::{APPS_EXTENSION, APPS_MIME_TYPES, APP_MIME_TYPE};
    ///
    /// // A host that renders MCP Apps says so.
    /// let client = Client::builder("my-host", "1.0.0")
    ///     .extension(APPS_EXTENSION, serde_json::json!({ APPS_MIME_TYPES: [APP_MIME_TYPE] }))
    ///     .build();
    /// # let _ = client;
    /// ```
    pub fn extension(mut self, id: impl Into<String>, settings: Value) -> Self {
        let settings = match settings {
            Value::Object(settings) => Value::Object(settings),
            _ => json!({}),
        };
        self.config.extensions.insert(id.into(), settings);
        self
    }

    /// How long waiting for a task's end may take (5 minutes unless set): the bound of
    /// [`ClientSession::wait_for_task`], of `tasks/result`, and of a `call_tool` that
    /// became a task.
    pub fn task_wait(mut self, wait: Duration) -> Self {
        self.config.task_wait = wait;
        self
    }

    /// Whether structured tool results are checked against the tools' output schemas (on by
    /// default; the specification says clients SHOULD). Checking lists the tools once
    /// (again after the server says the list changed).
    pub fn validate_outputs(mut self, validate: bool) -> Self {
        self.config.validate_outputs = validate;
        self
    }

    /// Wraps the sending of every typed request in `layer`, a [`tower::Layer`] over
    /// [`ClientCall`](crate::middleware::ClientCall) (see [`crate::middleware`]): tower's own
    /// layers or one's own. Each call wraps the layers added before it: the last one added
    /// sees a request first.
    pub fn layer<L>(mut self, layer: L) -> Self
    where
        L: tower::Layer<crate::middleware::ClientStack> + Send + Sync + 'static,
        L::Service: tower::Service<crate::middleware::ClientCall, Response = crate::middleware::ClientReply>
            + Clone
            + Send
            + Sync
            + 'static,
        <L::Service as tower::Service<crate::middleware::ClientCall>>::Error: Into<crate::middleware::BoxError>,
        <L::Service as tower::Service<crate::middleware::ClientCall>>::Future: Send + 'static,
    {
        self.layers.push(layer);
        self
    }

    /// Builds the client.
    pub fn build(self) -> Client {
        #[allow(unused_mut)]
        let mut config = self.config;
        #[cfg(feature = "opentelemetry")]
        {
            config.durations = Some(crate::trace::durations());
        }
        Client { config: Arc::new(config), stack: self.layers.build() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capabilities_follow_handlers_and_revision() {
        let bare = Client::builder("c", "1").build();
        assert_eq!(bare.capabilities(ProtocolVersion::LATEST), ClientCapabilities::default());
        let full = Client::builder("c", "1")
            .sampling(|_| async { Err(ErrorObject::internal("no")) })
            .elicitation(|_| async { Err(ErrorObject::internal("no")) })
            .static_roots(vec![])
            .build();
        let caps = |v| serde_json::to_value(full.capabilities(v)).unwrap();
        assert_eq!(caps(ProtocolVersion::V2024_11_05), json!({"roots":{"listChanged":true},"sampling":{}}));
        assert_eq!(
            caps(ProtocolVersion::V2025_06_18),
            json!({"roots":{"listChanged":true},"sampling":{},"elicitation":{}})
        );
        assert_eq!(
            caps(ProtocolVersion::V2025_11_25),
            json!({"roots":{"listChanged":true},"sampling":{},"elicitation":{"form":{},"url":{}}})
        );
        assert_eq!(
            caps(ProtocolVersion::V2026_07_28),
            json!({"roots":{},"sampling":{},"elicitation":{"form":{},"url":{}}})
        );
    }
}
