//! What a handler can fail with.

use mcp_protocol::ErrorObject;

/// The error a tool, resource, prompt or completion handler returns.
///
/// A [`HandlerError::Protocol`] becomes a JSON-RPC error response. A [`HandlerError::Tool`]
/// is a failure of the tool itself: for `tools/call` it becomes a result with
/// `isError: true` (so that the model sees it), elsewhere an internal error.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum HandlerError {
    /// A protocol-level error, sent as is.
    #[error("{0}")]
    Protocol(ErrorObject),
    /// The operation failed; the message is shown to the client.
    #[error("{0}")]
    Tool(String),
    /// The resource does not exist (`-32002` before 2026-07-28, `-32602` after).
    #[error("resource not found: {0}")]
    ResourceNotFound(String),
    /// The handler asked the client a question that a 2026-07-28 client answers by
    /// retrying the request: propagate it with `?` and the runtime answers
    /// `input_required`. Never produced in the legacy era.
    #[error("input required from the client")]
    InputRequired,
}

impl HandlerError {
    /// A tool failure with a message.
    pub fn tool(message: impl Into<String>) -> Self {
        Self::Tool(message.into())
    }

    /// An invalid-params protocol error.
    pub fn invalid_params(message: impl std::fmt::Display) -> Self {
        Self::Protocol(ErrorObject::invalid_params(message))
    }
}

impl From<ErrorObject> for HandlerError {
    fn from(e: ErrorObject) -> Self {
        Self::Protocol(e)
    }
}

/// What handlers return.
pub type HandlerResult<T> = Result<T, HandlerError>;
