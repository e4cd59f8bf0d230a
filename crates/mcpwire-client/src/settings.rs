//! A client's settings and handlers, shared by every session of it: what the builder
//! gathers and the driver and sessions read.

use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use mcpwire_protocol::codec::ClientAbilities;
use mcpwire_protocol::message::ServerNotification;
use mcpwire_protocol::types::{
    ClientCapabilities, CreateMessageParams, CreateMessageResult, ElicitParams, ElicitResult, Implementation,
    JsonObject, ListRootsResult, LoggingLevel,
};
use mcpwire_protocol::{ErrorObject, ProtocolVersion};

/// What a handler returns: its result, or the JSON-RPC error to answer with.
pub type HandlerFuture<T> = BoxFuture<'static, Result<T, ErrorObject>>;
/// Answers `sampling/createMessage`.
pub type SamplingHandler = Arc<dyn Fn(CreateMessageParams) -> HandlerFuture<CreateMessageResult> + Send + Sync>;
/// Answers `elicitation/create`.
pub type ElicitationHandler = Arc<dyn Fn(ElicitParams) -> HandlerFuture<ElicitResult> + Send + Sync>;
/// Answers `roots/list`.
pub type RootsHandler = Arc<dyn Fn() -> HandlerFuture<ListRootsResult> + Send + Sync>;
/// Receives every server notification that is not routed elsewhere (see
/// [`ClientSession::notifications`](crate::ClientSession::notifications)). Runs on the
/// connection's task: keep it short.
pub type NotificationCallback = Arc<dyn Fn(&ServerNotification) + Send + Sync>;

/// Settings and handlers shared by every session of a client.
pub(crate) struct Config {
    /// Where the durations of requests go (the global meter provider as it was when the
    /// client was built).
    #[cfg(feature = "opentelemetry")]
    pub(crate) durations: Option<opentelemetry::metrics::Histogram<f64>>,
    pub(crate) info: Implementation,
    pub(crate) pinned: Option<ProtocolVersion>,
    /// With a pinned legacy revision: accept another legacy revision the server answers.
    pub(crate) accept_negotiated: bool,
    /// The sampling handler can answer requests that offer tools (declares `sampling.tools`).
    pub(crate) sampling_tools: bool,
    pub(crate) request_timeout: Duration,
    pub(crate) probe_timeout: Duration,
    pub(crate) close_grace: Duration,
    pub(crate) max_input_rounds: usize,
    pub(crate) max_pages: usize,
    pub(crate) log_level: Option<LoggingLevel>,
    pub(crate) sampling: Option<SamplingHandler>,
    pub(crate) elicitation: Option<ElicitationHandler>,
    pub(crate) elicitation_url: bool,
    pub(crate) roots: Option<RootsHandler>,
    pub(crate) on_notification: Option<NotificationCallback>,
    /// Declare the tasks extension (2026-07-28) and follow tasks to their end.
    pub(crate) tasks: bool,
    /// Answer the server's questions as tasks when it asks (2025-11-25 `tasks.requests`).
    pub(crate) task_requests: bool,
    /// How long waiting for a task may take.
    pub(crate) task_wait: Duration,
    /// Check structured tool results against the tools' output schemas.
    pub(crate) validate_outputs: bool,
    /// The extensions declared besides tasks (`capabilities.extensions`), by id.
    pub(crate) extensions: JsonObject,
}

impl Config {
    /// What this client can answer: a handler for each kind of question, and what it
    /// declares besides.
    fn abilities(&self) -> ClientAbilities {
        ClientAbilities {
            sampling: self.sampling.is_some(),
            sampling_tools: self.sampling_tools,
            elicitation: self.elicitation.is_some(),
            elicitation_url: self.elicitation_url,
            roots: self.roots.is_some(),
            tasks_extension: self.tasks,
            task_requests: self.task_requests,
            extensions: self.extensions.clone(),
        }
    }

    /// The capabilities declared to a server of revision `version`: what has a handler,
    /// in the shape that revision defines (the codec's [`ClientAbilities::capabilities`]).
    pub(crate) fn capabilities(&self, version: ProtocolVersion) -> ClientCapabilities {
        self.abilities().capabilities(version)
    }
}
