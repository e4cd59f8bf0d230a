//! What a handler gets besides its arguments: who asks, in which revision, and ways to
//! report progress, log, notice cancellation and ask the client for things.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_protocol::engine::progress::{ProgressError, ProgressTracker};
use mcp_protocol::types::{ClientCapabilities, Implementation, LoggingLevel, ProgressToken};
use mcp_protocol::{ProtocolVersion, RequestId};
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use crate::outbound::Outbound;

/// Where a request's log threshold comes from.
#[derive(Clone)]
pub(crate) enum LogThreshold {
    /// Fixed for the request (2026-07-28 `_meta` logLevel; `None`: no logs at all).
    Fixed(Option<LoggingLevel>),
    /// The connection's level, changed by `logging/setLevel` (legacy era).
    Shared(Arc<Mutex<Option<LoggingLevel>>>),
}

impl LogThreshold {
    fn allows(&self, level: LoggingLevel) -> bool {
        let threshold = match self {
            Self::Fixed(l) => *l,
            Self::Shared(l) => *l.lock().unwrap_or_else(|e| e.into_inner()),
        };
        threshold.is_some_and(|t| level >= t)
    }
}

pub(crate) struct ContextParts {
    pub(crate) request_id: RequestId,
    pub(crate) revision: ProtocolVersion,
    // Shared with the session: requests do not copy what the client declared.
    pub(crate) client_capabilities: Arc<ClientCapabilities>,
    pub(crate) client_info: Option<Arc<Implementation>>,
    pub(crate) progress_token: Option<ProgressToken>,
    pub(crate) log: LogThreshold,
    pub(crate) logging_enabled: bool,
    pub(crate) cancel: CancellationToken,
    pub(crate) outbound: Outbound,
    pub(crate) request_timeout: Duration,
    /// The answers and questions of a 2026-07-28 multi-round request; `None` in the legacy
    /// era, where questions are real requests to the client.
    pub(crate) round: Option<Mutex<crate::input::InputRound>>,
    /// The task this handler runs as, if it runs as one (set when a 2026-07-28 call is
    /// handed to a task): its messages carry the task's id, and its questions go through the
    /// task.
    pub(crate) task: std::sync::OnceLock<Arc<crate::tasks::TaskLink>>,
}

/// The context of one request, given to its handler. Cheap to clone.
#[derive(Clone)]
pub struct Context {
    pub(crate) parts: Arc<ContextParts>,
    progress: Arc<Mutex<ProgressTracker>>,
}

impl Context {
    pub(crate) fn new(parts: ContextParts) -> Self {
        let progress = ProgressTracker::new(parts.progress_token.clone());
        Self { parts: Arc::new(parts), progress: Arc::new(Mutex::new(progress)) }
    }

    /// The id of the request being handled.
    pub fn request_id(&self) -> &RequestId {
        &self.parts.request_id
    }

    /// The protocol revision of this request.
    pub fn revision(&self) -> ProtocolVersion {
        self.parts.revision
    }

    /// The client's capabilities (negotiated, or declared on this request in 2026-07-28).
    pub fn client_capabilities(&self) -> &ClientCapabilities {
        &self.parts.client_capabilities
    }

    /// Who the client says it is.
    pub fn client_info(&self) -> Option<&Implementation> {
        self.parts.client_info.as_deref()
    }

    /// The token cancelled when the client cancels this request (or the connection closes).
    /// The handler's future is also dropped then; this lets work spawned elsewhere stop too.
    /// A handler running as a task sees it fire on `tasks/cancel`, when the task's `ttl`
    /// elapses, or (2025-11-25) when its session ends; it then has a short grace period
    /// ([`crate::TaskConfig::cancel_grace`]) before its future is dropped.
    pub fn cancellation(&self) -> &CancellationToken {
        &self.parts.cancel
    }

    /// Whether the request was cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.parts.cancel.is_cancelled()
    }

    /// Suggests that the transport close this request's response stream now, the client
    /// resuming it later (HTTP with SSE polling, SEP-1699: long calls need not hold a
    /// connection). Later messages of the request are kept for the client to fetch. A hint:
    /// on stdio, and where the client cannot resume, nothing happens.
    pub async fn close_response_stream(&self) {
        self.parts.outbound.hint_close_stream().await;
    }

    /// Whether the client asked for progress on this request.
    pub fn wants_progress(&self) -> bool {
        self.parts.progress_token.is_some()
    }

    /// Ties a message of a task's handler to the task (`_meta` related-task).
    fn tag_with_task(&self, params: &mut Value) {
        if let Some(task) = self.parts.task.get() {
            params["_meta"] = crate::tasks::related_task_meta(&task.id);
        }
    }

    /// A 2026-07-28 task sends no progress or log notifications (the extension has none).
    fn in_modern_task(&self) -> bool {
        self.parts.task.get().is_some_and(|t| t.modern)
    }

    pub(crate) fn finish(&self) {
        self.progress.lock().unwrap_or_else(|e| e.into_inner()).finish();
    }

    /// Reports progress. Values must increase; nothing is sent if the client did not ask for
    /// progress ([`ProgressError::NotRequested`]) or after the response.
    pub async fn progress(
        &self,
        progress: f64,
        total: Option<f64>,
        message: Option<&str>,
    ) -> Result<(), ProgressError> {
        if self.in_modern_task() {
            return Err(ProgressError::Finished);
        }
        let token = self.progress.lock().unwrap_or_else(|e| e.into_inner()).advance(progress)?.clone();
        let mut params = json!({"progressToken": token, "progress": progress});
        if let Some(total) = total {
            params["total"] = json!(total);
        }
        if let Some(message) = message {
            params["message"] = json!(message);
        }
        self.tag_with_task(&mut params);
        self.parts.outbound.notify("notifications/progress", params, self.parts.revision).await;
        Ok(())
    }

    /// Sends a log message to the client if its level passes the client's threshold.
    /// Returns whether it was sent.
    pub async fn log(&self, level: LoggingLevel, data: impl Into<Value>) -> bool {
        self.log_as(level, None, data).await
    }

    /// Like [`Self::log`], naming the logger.
    pub async fn log_as(&self, level: LoggingLevel, logger: Option<&str>, data: impl Into<Value>) -> bool {
        if !self.parts.logging_enabled || !self.parts.log.allows(level) || self.in_modern_task() {
            return false;
        }
        let mut params = json!({"level": level, "data": data.into()});
        if let Some(logger) = logger {
            params["logger"] = json!(logger);
        }
        self.tag_with_task(&mut params);
        self.parts.outbound.notify("notifications/message", params, self.parts.revision).await
    }
}
