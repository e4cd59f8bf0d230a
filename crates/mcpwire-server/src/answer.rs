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
}

impl From<Result<ServerResult, Refusal>> for Answer {
    fn from(r: Result<ServerResult, Refusal>) -> Self {
        match r {
            Ok(result) => Self::Result(result),
            Err(e) => Self::Refused(e),
        }
    }
}
