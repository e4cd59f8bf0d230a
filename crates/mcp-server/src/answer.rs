//! What serving a request comes to, before the engine writes it.

use mcp_protocol::message::ServerResult;
use mcp_protocol::{ErrorObject, ProtocolVersion};
use serde_json::json;

use crate::error::{HandlerError, HandlerResult};

/// How a request was served.
pub(crate) enum Answer {
    /// Its result.
    Result(ServerResult),
    /// The error to answer with.
    Error(ErrorObject),
    /// 2026-07-28: the handler asked the client something; the round ends `input_required`.
    InputRequired,
}

impl Answer {
    /// The answer a handler's outcome comes to, in revision `rev`.
    pub(crate) fn of(outcome: HandlerResult<ServerResult>, rev: ProtocolVersion) -> Self {
        match outcome {
            Ok(result) => Self::Result(result),
            Err(HandlerError::InputRequired) => Self::InputRequired,
            Err(e) => Self::Error(protocol_error(e, rev)),
        }
    }
}

impl From<Result<ServerResult, ErrorObject>> for Answer {
    fn from(r: Result<ServerResult, ErrorObject>) -> Self {
        match r {
            Ok(result) => Self::Result(result),
            Err(e) => Self::Error(e),
        }
    }
}

/// Maps a handler's error to the protocol error of the request's revision.
pub(crate) fn protocol_error(e: HandlerError, rev: ProtocolVersion) -> ErrorObject {
    match e {
        HandlerError::Protocol(e) => e,
        HandlerError::InputRequired => ErrorObject::internal("input required outside a multi-round request"),
        HandlerError::Tool(message) => ErrorObject::internal(message),
        HandlerError::ResourceNotFound(uri) => {
            ErrorObject::new(rev.resource_not_found_code(), format!("Resource not found: {uri}"))
                .with_data(json!({"uri": uri}))
        }
    }
}
