//! A session with one server: era detection, the request path, closing.

use std::process::ExitStatus;
use std::sync::Arc;
use std::time::Duration;

use mcpwire_protocol::codec::answer::{self, AnswerError, ResultType};
use mcpwire_protocol::engine::{Reply, RequestOptions};
use mcpwire_protocol::error::UNSUPPORTED_PROTOCOL_VERSION;
use mcpwire_protocol::message::ClientRequest;
use mcpwire_protocol::types::{
    EmptyResult, Implementation, LoggingLevel, ProgressParams, ServerCapabilities, SetLevelParams,
};
use mcpwire_protocol::{Era, ProtocolVersion};
use mcpwire_transport::child::ChildProcess;
use mcpwire_transport::Connection;
use parking_lot::Mutex;
use tokio::task::JoinHandle;

use crate::driver::{drive, Outgoing, ProgressCallback, Retry, Shared};
use crate::error::ClientError;
use crate::middleware::ClientStack;
use crate::reply::{Answered, CallResult, Step};
use crate::settings::Config;

/// Per-call settings carried by a [`ClientSession`] handle.
#[derive(Clone, Default)]
pub(crate) struct CallOptions {
    pub(crate) timeout: Option<Duration>,
    pub(crate) progress: Option<ProgressCallback>,
    /// Declare the tasks extension on these calls (2026-07-28), whatever the client's settings.
    pub(crate) tasks: bool,
}

pub(crate) struct SessionInner {
    pub(crate) shared: Arc<Shared>,
    /// The layers around the sending of each typed request, if any.
    stack: Option<ClientStack>,
    driver: Mutex<Option<JoinHandle<()>>>,
    writer: Mutex<Option<JoinHandle<()>>>,
    child: tokio::sync::Mutex<Option<ChildProcess>>,
}

impl Drop for SessionInner {
    fn drop(&mut self) {
        // The last handle is gone without `close`: stop reading and sending. A child process
        // is killed when its handle drops.
        self.shared.close_outgoing();
        self.shared.shutdown.cancel();
    }
}

/// A connection to one server, in the era and revision agreed with it.
///
/// Cheap to clone: clones share the connection. [`Self::with_timeout`] and
/// [`Self::with_progress`] return handles whose calls use those settings. Every call is
/// bounded by a timeout; dropping a call's future cancels the request on the server
/// (`notifications/cancelled`) and any late answer is ignored.
#[derive(Clone)]
pub struct ClientSession {
    pub(crate) inner: Arc<SessionInner>,
    pub(crate) options: CallOptions,
}

impl std::fmt::Debug for ClientSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.shared().negotiated();
        f.debug_struct("ClientSession")
            .field("era", &n.era)
            .field("protocol_version", &n.version)
            .field("server_info", &n.server_info)
            .field("timeout", &self.options.timeout)
            .finish()
    }
}

/// Why a result of `method` does not read, as the client's error.
pub(crate) fn unreadable(method: &str, error: AnswerError) -> ClientError {
    match error {
        AnswerError::Mismatch(m) => ClientError::decode_json(method, None, m.into_json_error()),
        AnswerError::UnknownResultType(kind) => ClientError::decode(method, format!("unknown resultType {kind:?}")),
        AnswerError::NotComplete(ResultType::InputRequired) => {
            ClientError::decode(method, answer::INPUT_REQUIRED_NOT_ALLOWED)
        }
        AnswerError::NotComplete(_) => ClientError::decode(method, answer::TASK_NOT_ALLOWED),
    }
}

impl ClientSession {
    pub(crate) async fn start(
        config: Arc<Config>,
        stack: Option<ClientStack>,
        connection: Connection,
        child: Option<ChildProcess>,
    ) -> Result<Self, ClientError> {
        let Connection { incoming, outgoing, writer, sends_headers } = connection;
        let shared = Arc::new(Shared::new(config, outgoing, sends_headers));
        let driver = tokio::spawn(drive(shared.clone(), incoming));
        let session = Self {
            inner: Arc::new(SessionInner {
                shared,
                stack,
                driver: Mutex::new(Some(driver)),
                writer: Mutex::new(writer),
                child: tokio::sync::Mutex::new(child),
            }),
            options: CallOptions::default(),
        };
        match session.shared().connect().await {
            Ok(()) => Ok(session),
            Err(e) => {
                if let Err(close) = session.close().await {
                    tracing::debug!("closing after a failed connect: {close}");
                }
                Err(e)
            }
        }
    }

    pub(crate) fn shared(&self) -> &Arc<Shared> {
        &self.inner.shared
    }

    fn config(&self) -> &Config {
        &self.inner.shared.config
    }

    /// The timeout of this handle's calls.
    pub(crate) fn timeout(&self) -> Duration {
        self.options.timeout.unwrap_or(self.config().request_timeout)
    }

    /// A handle whose calls time out after `timeout` instead of the client's default.
    pub fn with_timeout(&self, timeout: Duration) -> Self {
        let mut s = self.clone();
        s.options.timeout = Some(timeout);
        s
    }

    /// A handle whose calls declare the tasks extension to a 2026-07-28 server (as
    /// [`crate::ClientBuilder::tasks`] does for every call), so that a tool that runs only as
    /// a task can be called: [`Self::call_tool`] follows the task to its end. Progress
    /// notifications end when a call becomes a task. Other revisions are not affected.
    pub fn with_tasks(&self) -> Self {
        let mut s = self.clone();
        s.options.tasks = true;
        s
    }

    /// A handle whose calls ask for progress (`_meta.progressToken`, a fresh token per call)
    /// and hand each `notifications/progress` for them to `callback` (on the connection's
    /// task: keep it short). Such notifications do not reach [`Self::notifications`].
    pub fn with_progress<F>(&self, callback: F) -> Self
    where
        F: Fn(ProgressParams) + Send + Sync + 'static,
    {
        let mut s = self.clone();
        s.options.progress = Some(Arc::new(callback));
        s
    }

    // ---- what was negotiated ----

    /// The era of the server.
    pub fn era(&self) -> Era {
        self.shared().era()
    }

    /// The protocol revision in use.
    pub fn protocol_version(&self) -> ProtocolVersion {
        self.shared().version()
    }

    /// Who the server says it is (`serverInfo` of `initialize`, or the `_meta` of
    /// `server/discover`). The same info in the `_meta` of a 2026-07-28 server's every result
    /// is not kept in the typed results.
    pub fn server_info(&self) -> Option<Implementation> {
        self.shared().negotiated().server_info
    }

    /// The server's capabilities.
    pub fn server_capabilities(&self) -> ServerCapabilities {
        self.shared().negotiated().capabilities
    }

    /// The server's instructions, if it gave any.
    pub fn instructions(&self) -> Option<String> {
        self.shared().negotiated().instructions
    }

    /// Whether the connection has closed (nothing more will be received).
    pub fn is_closed(&self) -> bool {
        self.shared().ended.is_cancelled()
    }

    /// Resolves when the connection has closed (the server went away, or [`Self::close`]).
    pub async fn closed(&self) {
        self.shared().ended.cancelled().await
    }

    // ---- the request path ----

    /// The modern revision to use from a server's list, respecting a pinned one.
    fn pick_modern<'a>(&self, supported: impl IntoIterator<Item = &'a str>) -> Option<ProtocolVersion> {
        let pinned = self.config().pinned;
        supported
            .into_iter()
            .filter_map(ProtocolVersion::parse)
            .filter(|v| v.is_modern() && pinned.is_none_or(|p| p == *v))
            .max()
    }

    /// One request in the session's revision (the engine adds the modern era's `_meta`); a
    /// `-32022` answer is retried once with a mutually supported version.
    pub(crate) async fn send(&self, request: Outgoing<'_>, retry: Option<Retry>) -> Result<Answered, ClientError> {
        if let (Some(stack), Outgoing::Typed(typed)) = (&self.inner.stack, &request) {
            return crate::middleware::through(stack, self, typed, retry).await.map(Answered::Layers);
        }
        self.send_direct(request, retry.as_ref(), Default::default()).await.map(Answered::Engine)
    }

    /// [`Self::send`] without the layers, with these `_meta` members besides the session's.
    pub(crate) async fn send_direct(
        &self,
        request: Outgoing<'_>,
        retry: Option<&Retry>,
        #[allow(unused_mut)] mut meta: mcpwire_protocol::types::Meta,
    ) -> Result<Reply, ClientError> {
        #[cfg(feature = "opentelemetry")]
        if let Some(typed) = match &request {
            Outgoing::Typed(typed) => Some(*typed),
            Outgoing::Custom(..) => None,
        } {
            use tracing::Instrument;
            let revision = self.shared().version();
            let (span, trace) = crate::trace::client_span(typed, revision);
            meta.extend(trace);
            let started = std::time::Instant::now();
            let result = self.send_with_meta(request, retry, meta).instrument(span).await;
            let error = result.as_ref().err().map(|e| e.code().unwrap_or(mcpwire_protocol::error::INTERNAL_ERROR));
            if let Some(durations) = &self.config().durations {
                crate::trace::record(durations, typed, revision, started, error);
            }
            return result;
        }
        self.send_with_meta(request, retry, meta).await
    }

    /// [`Self::send`], with these `_meta` members (the trace context).
    async fn send_with_meta(
        &self,
        request: Outgoing<'_>,
        retry: Option<&Retry>,
        meta: mcpwire_protocol::types::Meta,
    ) -> Result<Reply, ClientError> {
        let shared = self.shared();
        let progress = self.options.progress.clone();
        let mut retried = false;
        let custom = match &request {
            Outgoing::Custom(method, params) => Some((*method, params.clone())),
            Outgoing::Typed(_) => None,
        };
        loop {
            let version = shared.version();
            let headers = match &request {
                Outgoing::Typed(ClientRequest::CallTool(call)) if version.is_modern() => shared.param_headers(call),
                _ => Vec::new(),
            };
            let options = RequestOptions {
                timeout: Some(self.timeout()),
                progress: progress.is_some(),
                meta: meta.clone(),
                headers,
                declare_tasks: self.options.tasks,
                ..RequestOptions::default()
            };
            let outgoing = match (&request, &custom) {
                (Outgoing::Typed(r), _) => Outgoing::Typed(r),
                (_, Some((method, params))) => Outgoing::Custom(method, params.clone()),
                (Outgoing::Custom(..), None) => unreachable!("a custom request keeps its parts"),
            };
            let result = shared.round_trip(outgoing, retry, options, progress.clone()).await;
            if let Err(e) = &result {
                if version.is_modern() && !retried && e.code() == Some(UNSUPPORTED_PROTOCOL_VERSION) {
                    if let Some(v) = e.error_object().and_then(|e| self.pick_modern(e.supported_versions())) {
                        tracing::debug!(from = %version, to = %v, "server does not support the version; retrying");
                        retried = true;
                        shared.set_version(v);
                        continue;
                    }
                }
            }
            return result;
        }
    }

    /// A typed call: the request, its result complete and read.
    pub(crate) async fn call<T: CallResult>(&self, request: &ClientRequest) -> Result<T, ClientError> {
        let method = request.method().as_str();
        match self.send(Outgoing::Typed(request), None).await?.read(request.method())? {
            Step::Result(result) => Ok(result),
            // The engine lets neither through for these requests; a layer might.
            Step::Task(_) => Err(unreadable(method, AnswerError::NotComplete(ResultType::Task))),
            Step::Input(_) => Err(unreadable(method, AnswerError::NotComplete(ResultType::InputRequired))),
        }
    }

    pub(crate) fn adopt_modern(&self, discovered: mcpwire_protocol::types::DiscoverResult) {
        self.shared().adopt_discovered(discovered);
    }

    /// Sets the least severe log level wanted. Legacy: sends `logging/setLevel`. Modern:
    /// every later request carries it in `_meta` (`io.modelcontextprotocol/logLevel`).
    pub async fn set_logging_level(&self, level: LoggingLevel) -> Result<(), ClientError> {
        self.shared().set_log_level(level);
        if self.era() == Era::Legacy {
            let _: EmptyResult = self.call(&ClientRequest::SetLevel(SetLevelParams { level })).await?;
        }
        Ok(())
    }

    // ---- closing ----

    /// Ends the connection: stops sending (the transport flushes and closes its side),
    /// ends a child process (stdin closed, then SIGTERM, then SIGKILL, each after the close
    /// grace period) and stops reading. Outstanding calls fail with
    /// [`ClientError::Closed`]. Returns the child's exit status when there is a child.
    pub async fn close(&self) -> Result<Option<ExitStatus>, ClientError> {
        let inner = &self.inner;
        let shared = &inner.shared;
        let grace = shared.config.close_grace;
        shared.close_outgoing();
        let writer = inner.writer.lock().take();
        if let Some(writer) = writer {
            if tokio::time::timeout(grace, writer).await.is_err() {
                tracing::debug!("the transport did not finish writing in time");
            }
        }
        let child = inner.child.lock().await.take();
        let status = match child {
            Some(child) => Some(child.close(grace).await),
            None => None,
        };
        shared.shutdown.cancel();
        let driver = inner.driver.lock().take();
        if let Some(driver) = driver {
            let _ = tokio::time::timeout(Duration::from_secs(1), driver).await;
        }
        Ok(status.transpose()?)
    }
}
