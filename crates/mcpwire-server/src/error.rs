//! What a handler can fail with.

use std::sync::Arc;

use mcpwire_protocol::{ErrorObject, Method};

/// The error a tool, resource, prompt or completion handler returns.
///
/// A [`HandlerError::Protocol`] becomes a JSON-RPC error response. A [`HandlerError::Tool`]
/// is a failure of the tool itself: for `tools/call` it becomes a result with
/// `isError: true` (so that the model sees it), elsewhere an internal error.
#[derive(Debug, Clone, thiserror::Error)]
pub enum HandlerError {
    /// A protocol-level error, sent as is.
    #[error("{0}")]
    Protocol(ErrorObject),
    /// The operation failed; the message is shown to the client.
    #[error("{0}")]
    Tool(String),
    /// The arguments do not fit what the handler takes (a tool's input schema, a prompt's
    /// or a template's parameter types); the message names each offending argument. For a
    /// tool this is a tool execution error from 2025-11-25 on (the model sees it and may
    /// retry) and `-32602` before; elsewhere always `-32602`.
    #[error("{0}")]
    InvalidArguments(String),
    /// The resource does not exist (`-32002` before 2026-07-28, `-32602` after).
    #[error("resource not found: {0}")]
    ResourceNotFound(String),
    /// The handler asked the client a question that a 2026-07-28 client answers by
    /// retrying the request: propagate it with `?` and the runtime answers
    /// `input_required`. Never produced in the legacy era.
    #[error("input required from the client")]
    InputRequired,
    /// A question to the client (sampling, elicitation, roots) got no usable answer. (A
    /// client that answers with a JSON-RPC error gives [`HandlerError::Protocol`]: its error.)
    #[error(transparent)]
    Ask(#[from] AskError),
}

impl HandlerError {
    /// A tool failure with a message.
    pub fn tool(message: impl Into<String>) -> Self {
        Self::Tool(message.into())
    }

    /// An invalid-params protocol error: JSON-RPC `-32602`, "Invalid params: {message}",
    /// whatever the handler (for a tool too: an error response, not a result the model sees).
    pub fn invalid_params(message: impl std::fmt::Display) -> Self {
        Self::Protocol(ErrorObject::invalid_params(message))
    }

    /// The resource `uri` does not exist: `-32002` before 2026-07-28, `-32602` from then on,
    /// with `data: {"uri": uri}`, as for a resource handler that returns `None`.
    pub fn resource_not_found(uri: impl Into<String>) -> Self {
        Self::ResourceNotFound(uri.into())
    }
}

/// Why a question to the client got no usable answer. Ask with the `is_*` predicates.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum AskError {
    /// The client did not declare the capability the question needs.
    #[error("the client does not support {0}")]
    Unsupported(&'static str),
    /// The request is not part of a legacy session (2026-07-28 asks in rounds instead).
    #[error("no session to ask the client on")]
    NoSession,
    /// The connection closed before the answer.
    #[error("connection closed")]
    Closed,
    /// The client did not answer in time (it was told to stop).
    #[error("the client did not answer {0} in time")]
    TimedOut(Method),
    /// The client's answer is not a valid result of the question's method.
    #[error("malformed {method} result from the client")]
    Malformed {
        /// The question's method.
        method: Method,
        /// What is wrong with the answer.
        #[source]
        source: Arc<dyn std::error::Error + Send + Sync>,
    },
    /// The task the handler runs as ended (cancelled, or failed) while it waited.
    #[error("the task is {0}")]
    TaskEnded(mcpwire_protocol::types::TaskStatus),
    /// The client answered the question as a task (2025-11-25), and the task did not end
    /// within its time to live (the client was told to cancel it).
    #[error("the client's task for {method} did not end within its time to live ({ttl:?})")]
    ClientTaskExpired {
        /// The question's method.
        method: Method,
        /// The task's time to live.
        ttl: std::time::Duration,
    },
    /// The client answered the question as a task (2025-11-25), and the task was cancelled.
    #[error("the client cancelled its task for {0}")]
    ClientTaskCancelled(Method),
}

impl AskError {
    /// The client does not support the question.
    pub fn is_unsupported(&self) -> bool {
        matches!(self, Self::Unsupported(_))
    }

    /// The connection closed first.
    pub fn is_closed(&self) -> bool {
        matches!(self, Self::Closed)
    }

    /// The client did not answer in time.
    pub fn is_timeout(&self) -> bool {
        matches!(self, Self::TimedOut(_))
    }

    /// The answer came but is not a valid result.
    pub fn is_malformed(&self) -> bool {
        matches!(self, Self::Malformed { .. })
    }

    /// The client answered as a task that did not end within its time to live.
    pub fn is_client_task_expired(&self) -> bool {
        matches!(self, Self::ClientTaskExpired { .. })
    }

    /// The client answered as a task that was cancelled.
    pub fn is_client_task_cancelled(&self) -> bool {
        matches!(self, Self::ClientTaskCancelled(_))
    }

    pub(crate) fn malformed(method: Method, source: impl std::error::Error + Send + Sync + 'static) -> Self {
        Self::Malformed { method, source: Arc::new(source) }
    }
}

impl From<ErrorObject> for HandlerError {
    fn from(e: ErrorObject) -> Self {
        Self::Protocol(e)
    }
}

/// What handlers return.
pub type HandlerResult<T> = Result<T, HandlerError>;
