//! What a handler gets besides its arguments: who asks, in which revision, and ways to
//! report progress, log, notice cancellation and ask the client for things.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_protocol::engine::progress::{ProgressError, ProgressTracker};
use mcp_protocol::error::MISSING_REQUIRED_CLIENT_CAPABILITY;
use mcp_protocol::types::{
    ClientCapabilities, CreateMessageParams, CreateMessageResult, ElicitParams, ElicitResult, Implementation,
    ListRootsResult, LoggingLevel, ProgressToken,
};
use mcp_protocol::{ErrorObject, ProtocolVersion, RequestId};
use serde::de::DeserializeOwned;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use crate::error::HandlerError;
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
    pub(crate) client_capabilities: ClientCapabilities,
    pub(crate) client_info: Option<Implementation>,
    pub(crate) progress_token: Option<ProgressToken>,
    pub(crate) log: LogThreshold,
    pub(crate) logging_enabled: bool,
    pub(crate) cancel: CancellationToken,
    pub(crate) outbound: Outbound,
    pub(crate) request_timeout: Duration,
}

/// The context of one request, given to its handler. Cheap to clone.
#[derive(Clone)]
pub struct Context {
    parts: Arc<ContextParts>,
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
        self.parts.client_info.as_ref()
    }

    /// The token cancelled when the client cancels this request (or the connection closes).
    /// The handler's future is also dropped then; this lets work spawned elsewhere stop too.
    pub fn cancellation(&self) -> &CancellationToken {
        &self.parts.cancel
    }

    /// Whether the request was cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.parts.cancel.is_cancelled()
    }

    /// Whether the client asked for progress on this request.
    pub fn wants_progress(&self) -> bool {
        self.parts.progress_token.is_some()
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
        let token = self.progress.lock().unwrap_or_else(|e| e.into_inner()).advance(progress)?.clone();
        let mut params = json!({"progressToken": token, "progress": progress});
        if let Some(total) = total {
            params["total"] = json!(total);
        }
        if let Some(message) = message {
            params["message"] = json!(message);
        }
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
        if !self.parts.logging_enabled || !self.parts.log.allows(level) {
            return false;
        }
        let mut params = json!({"level": level, "data": data.into()});
        if let Some(logger) = logger {
            params["logger"] = json!(logger);
        }
        self.parts.outbound.notify("notifications/message", params, self.parts.revision).await
    }

    fn require_capability(&self, name: &str, present: bool) -> Result<(), HandlerError> {
        if present {
            return Ok(());
        }
        if self.revision().is_modern() {
            let mut required = serde_json::Map::new();
            required.insert(name.to_owned(), json!({}));
            return Err(HandlerError::Protocol(
                ErrorObject::new(
                    MISSING_REQUIRED_CLIENT_CAPABILITY,
                    format!("this request needs the client capability `{name}`"),
                )
                .with_data(json!({"requiredCapabilities": required})),
            ));
        }
        Err(HandlerError::tool(format!("the client does not support {name}")))
    }

    async fn ask<T: DeserializeOwned>(&self, method: &str, params: Value) -> Result<T, HandlerError> {
        if self.revision().is_modern() {
            // The 2026-07-28 answer to this is an `input_required` result (the client-runtime
            // issue); until it lands, say so instead of sending a request the revision forbids.
            return Err(HandlerError::tool(format!(
                "{method} is not yet available to 2026-07-28 clients in this server (input_required round trips pending)"
            )));
        }
        let value = self
            .parts
            .outbound
            .request(method, params, self.revision(), self.parts.request_timeout)
            .await
            .map_err(HandlerError::Protocol)?;
        serde_json::from_value(value).map_err(|e| {
            HandlerError::Protocol(ErrorObject::internal(format!("malformed {method} result from the client: {e}")))
        })
    }

    /// Asks the client's model for a completion (`sampling/createMessage`).
    pub async fn sample(&self, params: CreateMessageParams) -> Result<CreateMessageResult, HandlerError> {
        self.require_capability("sampling", self.client_capabilities().sampling.is_some())?;
        let params = serde_json::to_value(params).map_err(|e| HandlerError::Protocol(ErrorObject::internal(e)))?;
        self.ask("sampling/createMessage", params).await
    }

    /// Asks the user for information (`elicitation/create`).
    pub async fn elicit(&self, params: ElicitParams) -> Result<ElicitResult, HandlerError> {
        let supported =
            self.client_capabilities().elicitation.is_some() && self.revision() >= ProtocolVersion::V2025_06_18;
        self.require_capability("elicitation", supported)?;
        let params = serde_json::to_value(params).map_err(|e| HandlerError::Protocol(ErrorObject::internal(e)))?;
        self.ask("elicitation/create", params).await
    }

    /// Asks the client for its roots (`roots/list`).
    pub async fn list_roots(&self) -> Result<ListRootsResult, HandlerError> {
        self.require_capability("roots", self.client_capabilities().roots.is_some())?;
        self.ask("roots/list", json!({})).await
    }
}
