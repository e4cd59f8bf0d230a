//! What the handling of a request comes to, as the middleware layers see it.

use mcpwire_protocol::message::ServerResult;
use mcpwire_protocol::ErrorObject;

use crate::answer::Answer;

/// The answer to one request, on its way out through the middleware layers.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum McpResponse {
    /// The request's result. A tool that failed is a result too (`isError: true`): see
    /// [`McpResponse::is_error`].
    Result(ServerResult),
    /// A JSON-RPC error, written as is.
    Error(ErrorObject),
    /// 2026-07-28: the handler asked the client something; the request is answered
    /// `input_required`, and the client retries it with the answers.
    InputRequired,
}

impl McpResponse {
    /// Whether the request failed: a JSON-RPC error, or a tool execution error.
    pub fn is_error(&self) -> bool {
        match self {
            Self::Result(ServerResult::CallTool(result)) => result.is_error == Some(true),
            Self::Result(_) | Self::InputRequired => false,
            Self::Error(_) => true,
        }
    }

    /// The result, if the request has one.
    pub fn result(&self) -> Option<&ServerResult> {
        match self {
            Self::Result(result) => Some(result),
            _ => None,
        }
    }

    /// The result, to change.
    pub fn result_mut(&mut self) -> Option<&mut ServerResult> {
        match self {
            Self::Result(result) => Some(result),
            _ => None,
        }
    }

    /// The JSON-RPC error, if the request failed with one.
    pub fn error(&self) -> Option<&ErrorObject> {
        match self {
            Self::Error(e) => Some(e),
            _ => None,
        }
    }
}

impl From<ServerResult> for McpResponse {
    fn from(result: ServerResult) -> Self {
        Self::Result(result)
    }
}

impl From<ErrorObject> for McpResponse {
    fn from(error: ErrorObject) -> Self {
        Self::Error(error)
    }
}

impl From<McpResponse> for Answer {
    fn from(response: McpResponse) -> Self {
        match response {
            McpResponse::Result(result) => Self::Result(result),
            McpResponse::Error(error) => Self::Error(error),
            McpResponse::InputRequired => Self::InputRequired,
        }
    }
}
