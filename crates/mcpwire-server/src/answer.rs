//! What serving a request comes to, before the engine writes it.

use mcpwire_protocol::message::ServerResult;
use mcpwire_protocol::ErrorObject;

use crate::error::{HandlerError, HandlerResult};
use crate::refusal::Refusal;

/// How a request was served.
pub(crate) enum Answer {
    /// Its result.
    Result(ServerResult),
    /// The request is refused (written as the revision's JSON-RPC error).
    Refused(Refusal),
    /// A JSON-RPC error, written as is (a middleware layer's).
    Error(ErrorObject),
    /// 2026-07-28: the handler asked the client something; the round ends `input_required`.
    InputRequired,
}

impl Answer {
    /// The answer a handler's outcome comes to.
    pub(crate) fn of(outcome: HandlerResult<ServerResult>) -> Self {
        match outcome {
            Ok(result) => Self::Result(result),
            Err(HandlerError::InputRequired) => Self::InputRequired,
            Err(e) => Self::Refused(Refusal::Handler(e)),
        }
    }

    /// The JSON-RPC error, if the answer is one.
    pub(crate) fn error(&self) -> Option<&ErrorObject> {
        match self {
            Self::Error(e) => Some(e),
            _ => None,
        }
    }

    /// Whether the request failed: a refusal, a JSON-RPC error, or a tool execution error
    /// (as [`McpResponse::is_error`](crate::McpResponse::is_error)).
    pub(crate) fn is_error(&self) -> bool {
        match self {
            Self::Result(ServerResult::CallTool(result)) => result.is_error == Some(true),
            Self::Result(_) | Self::InputRequired => false,
            Self::Refused(_) | Self::Error(_) => true,
        }
    }
}

impl From<Result<ServerResult, Refusal>> for Answer {
    fn from(r: Result<ServerResult, Refusal>) -> Self {
        match r {
            Ok(result) => Self::Result(result),
            Err(e) => Self::Refused(e),
        }
    }
}
