//! What a client call can fail with.

use std::time::Duration;

use mcp_protocol::{ErrorObject, ProtocolVersion};

/// Every way a client operation can fail. Ask with the `is_*` predicates rather than by
/// matching, where that is enough: variants may be added.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The connection is closed (by us, by the server, or the transport broke).
    #[error("the connection to the server is closed")]
    Closed,
    /// No answer in time; the server was sent `notifications/cancelled`.
    #[error("{method} timed out after {timeout:?}")]
    Timeout {
        /// The method called.
        method: String,
        /// How long the client waited.
        timeout: Duration,
    },
    /// The server answered with a JSON-RPC error.
    #[error("{method} failed: {error}")]
    Protocol {
        /// The method called.
        method: String,
        /// The error the server sent.
        error: ErrorObject,
    },
    /// The server's answer is not what the method returns.
    #[error("cannot decode the answer to {method}: {detail}")]
    Decode {
        /// The method called.
        method: String,
        /// What is wrong with it.
        detail: String,
    },
    /// No protocol revision could be agreed with the server.
    #[error("protocol negotiation failed: {0}")]
    Negotiation(String),
    /// The method does not exist in the negotiated revision (`subscriptions/listen` with a
    /// legacy server, `resources/subscribe` with a modern one, ...).
    #[error("{method} is not part of protocol revision {version}")]
    Unsupported {
        /// The method.
        method: String,
        /// The negotiated revision.
        version: ProtocolVersion,
    },
    /// The server still asked for input (`input_required`) after the allowed rounds.
    #[error("{method}: the server still asked for input after {rounds} rounds")]
    InputRequired {
        /// The method called.
        method: String,
        /// How many input rounds were answered.
        rounds: usize,
    },
    /// The server asked for input the client cannot give (no handler registered for it, or
    /// the handler failed).
    #[error("cannot answer the server's {method}: {error}")]
    Handler {
        /// The input request's method (`sampling/createMessage`, ...).
        method: String,
        /// Why.
        error: ErrorObject,
    },
    /// A pagination helper followed more pages than allowed, or a cursor repeated.
    #[error("{method}: {detail}")]
    Pagination {
        /// The list method.
        method: String,
        /// What went wrong.
        detail: String,
    },
    /// A task ended without a result: it was cancelled (or it failed without a JSON-RPC
    /// error to report).
    #[error("task {task_id} ended {status}{}", message.as_deref().map(|m| format!(": {m}")).unwrap_or_default())]
    Task {
        /// The task.
        task_id: String,
        /// Its terminal status.
        status: mcp_protocol::types::TaskStatus,
        /// The server's word on it.
        message: Option<String>,
    },
    /// The call's arguments cannot be sent (tool arguments that are not an object, say).
    #[error("invalid arguments: {0}")]
    InvalidArguments(String),
    /// Starting the server process failed.
    #[error(transparent)]
    Spawn(#[from] mcp_transport::child::ChildError),
    /// An I/O error (ending the server process).
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

impl ClientError {
    /// The connection is closed.
    pub fn is_closed(&self) -> bool {
        matches!(self, Self::Closed)
    }

    /// The call timed out.
    pub fn is_timeout(&self) -> bool {
        matches!(self, Self::Timeout { .. })
    }

    /// The server answered with a JSON-RPC error.
    pub fn is_protocol(&self) -> bool {
        matches!(self, Self::Protocol { .. })
    }

    /// The server's answer could not be decoded.
    pub fn is_decode(&self) -> bool {
        matches!(self, Self::Decode { .. })
    }

    /// The method is not part of the negotiated revision.
    pub fn is_unsupported(&self) -> bool {
        matches!(self, Self::Unsupported { .. })
    }

    /// The JSON-RPC error the server sent, if that is what this is.
    pub fn error_object(&self) -> Option<&ErrorObject> {
        match self {
            Self::Protocol { error, .. } => Some(error),
            _ => None,
        }
    }

    /// The JSON-RPC error code the server sent, if that is what this is.
    pub fn code(&self) -> Option<i64> {
        self.error_object().map(|e| e.code)
    }

    pub(crate) fn decode(method: &str, detail: impl std::fmt::Display) -> Self {
        Self::Decode { method: method.to_owned(), detail: detail.to_string() }
    }
}
