//! What a client call can fail with.
//!
//! A [`ClientError`] says what failed at this layer; the error it failed *because of* (the
//! JSON decoder's, the operating system's) is kept whole as its
//! [`source`](std::error::Error::source), never flattened into its text. Its `Display`
//! leaves the source's text out, but for a [`ClientError::Decode`], whose text ends with the
//! decoder's (in words: `missing field `title``, `expected a string, got 5`), so that what
//! did not fit is in the message. To show the whole story, print each error of the
//! [`source`](std::error::Error::source) chain in turn, skipping one whose text the message
//! ends with already ([`mcpwire_protocol::error::chain`] does).

use std::time::Duration;

use mcpwire_protocol::{ErrorObject, ProtocolVersion};

/// The error type of the client's layers (see [`crate::middleware`]).
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Every way a client operation can fail. Ask with the `is_*` predicates rather than by
/// matching, where that is enough: variants may be added.
///
/// [`source`](std::error::Error::source) is the underlying error where there is one: the
/// [`serde_json::Error`] of a [`Self::Decode`] that the JSON decoder raised, the
/// [`std::io::Error`] of a [`Self::Spawn`] or [`Self::Io`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The connection is closed (by us, by the server, or the transport broke).
    #[error("the connection to the server is closed")]
    Closed,
    /// A middleware layer of the client failed the request (its error is the source:
    /// `tower::timeout::error::Elapsed`, say).
    #[error("a client middleware layer failed the request")]
    Middleware(#[source] BoxError),
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
    /// The server's answer is not what the method returns (or, rarely, the client's answer
    /// to a question of the server's cannot be encoded).
    ///
    /// Displayed as `cannot decode the answer to {method}`, then `: {detail}` when there is
    /// a detail, then `: {source}` when the decoder refused it: the source's message, which
    /// says where and what in words (`` `tools[0].name`: expected a string, got 5 ``).
    #[error(
        "cannot decode the answer to {method}{}{}",
        detail.as_deref().map(|d| format!(": {d}")).unwrap_or_default(),
        source.as_ref().map(|s| format!(": {s}")).unwrap_or_default()
    )]
    Decode {
        /// The method called.
        method: String,
        /// What is wrong with it, in the client's words: the whole story when there is no
        /// `source` (`unknown resultType "x"`, a response that is not valid JSON-RPC), what
        /// was being decoded when there is one (`input request "k"`), or `None`.
        detail: Option<String>,
        /// The JSON decoder's error, when it is the decoder that refused the answer.
        #[source]
        source: Option<serde_json::Error>,
    },
    /// No protocol revision could be agreed with the server. The detail is the client's own
    /// account of the mismatch (what was offered or pinned, what the server answered): there
    /// is no underlying error.
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
        status: mcpwire_protocol::types::TaskStatus,
        /// The server's word on it.
        message: Option<String>,
    },
    /// The call's arguments cannot be sent (tool arguments that are not an object, say). The
    /// detail is the client's own: the arguments are well-formed JSON of the wrong shape, so
    /// there is no underlying error.
    #[error("invalid arguments: {0}")]
    InvalidArguments(String),
    /// A tool's structured result does not fit the output schema the server declared for it
    /// (or is missing). The detail names each offending member and rule.
    #[error("the result of tool {tool} does not fit its output schema: {detail}")]
    InvalidOutput {
        /// The tool.
        tool: String,
        /// What is wrong.
        detail: String,
    },
    /// The tool failed (`isError: true`), where a typed result was asked for
    /// ([`crate::ClientSession::call_tool_as`]). The message is the tool's text.
    #[error("tool {tool} failed: {message}")]
    ToolFailed {
        /// The tool.
        tool: String,
        /// What it said.
        message: String,
    },
    /// Starting the server process failed. Displayed and sourced as the
    /// [`ChildError`](mcpwire_transport::child::ChildError) is: the source of a program that
    /// could not be started is the operating system's [`std::io::Error`].
    #[error(transparent)]
    Spawn(#[from] mcpwire_transport::child::ChildError),
    /// An I/O error (ending the server process). Displayed and sourced as the
    /// [`std::io::Error`] is.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

impl ClientError {
    /// A tool's structured result broke its output schema.
    pub fn is_invalid_output(&self) -> bool {
        matches!(self, Self::InvalidOutput { .. })
    }

    /// The tool failed (`isError: true`).
    pub fn is_tool_failure(&self) -> bool {
        matches!(self, Self::ToolFailed { .. })
    }

    /// A middleware layer of the client failed the request.
    pub fn is_middleware(&self) -> bool {
        matches!(self, Self::Middleware(_))
    }

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

    /// No protocol revision could be agreed with the server while connecting.
    pub fn is_negotiation(&self) -> bool {
        matches!(self, Self::Negotiation(_))
    }

    /// The call's arguments cannot be sent: a mistake of the caller's, not the server's.
    pub fn is_invalid_arguments(&self) -> bool {
        matches!(self, Self::InvalidArguments(_))
    }

    /// The server process could not be started (its command line is unusable, or the
    /// operating system refused to run it: see [`source`](std::error::Error::source)).
    pub fn is_spawn(&self) -> bool {
        matches!(self, Self::Spawn(_))
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

    /// A [`Self::Decode`] the client found by itself: `detail` is the whole story.
    pub(crate) fn decode(method: &str, detail: impl Into<String>) -> Self {
        Self::Decode { method: method.to_owned(), detail: Some(detail.into()), source: None }
    }

    /// A [`Self::Decode`] the JSON decoder raised, while decoding `what` (the whole answer
    /// when `None`). A value of the wrong type is told in words (the source is then a
    /// `serde_json::Error` of the same category that says so): see
    /// [`mcpwire_protocol::mismatch`], whose [`Mismatch::into_json_error`] gives the error with
    /// where in the value.
    ///
    /// [`Mismatch::into_json_error`]: mcpwire_protocol::mismatch::Mismatch::into_json_error
    pub(crate) fn decode_json(method: &str, what: Option<String>, source: serde_json::Error) -> Self {
        let source = match source.is_data() {
            true => mcpwire_protocol::mismatch::Mismatch::new(None, source).into_json_error(),
            false => source,
        };
        Self::Decode { method: method.to_owned(), detail: what, source: Some(source) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error as _;

    fn json_error() -> serde_json::Error {
        serde_json::from_str::<u32>(r#""x""#).unwrap_err()
    }

    #[test]
    fn a_decode_failure_keeps_the_decoders_error_as_its_source() {
        // The decoder's message ends the text, in words; the source says the same.
        let words = r#"expected an integer from 0 to 4294967295, got "x" at line 1 column 3"#;
        let e = ClientError::decode_json("tools/list", None, json_error());
        assert!(e.is_decode());
        assert_eq!(e.to_string(), format!("cannot decode the answer to tools/list: {words}"));
        let source = e.source().and_then(|s| s.downcast_ref::<serde_json::Error>()).expect("a serde_json::Error");
        assert_eq!(source.to_string(), words);
        assert!(source.is_data() && (source.line(), source.column()) == (1, 3), "{source:?}");
        assert_eq!(mcpwire_protocol::error::chain(&e), e.to_string(), "the source is not told twice");

        let e = ClientError::decode_json("tasks/get", Some(r#"input request "k""#.into()), json_error());
        assert_eq!(e.to_string(), format!(r#"cannot decode the answer to tasks/get: input request "k": {words}"#));
        assert!(e.source().is_some_and(|s| s.is::<serde_json::Error>()));

        // Not JSON at all: serde's account of where, as it is.
        let syntax = serde_json::from_str::<u32>("x").unwrap_err();
        let e = ClientError::decode_json("tools/list", None, syntax);
        assert_eq!(e.to_string(), "cannot decode the answer to tools/list: expected value at line 1 column 1");

        // Found by the client itself: the detail is the whole story.
        let e = ClientError::decode("tools/call", "unknown resultType 5");
        assert_eq!(e.to_string(), "cannot decode the answer to tools/call: unknown resultType 5");
        assert!(e.source().is_none());
    }

    #[test]
    fn spawn_and_io_errors_are_sourced_as_what_they_wrap() {
        let io = std::io::Error::from(std::io::ErrorKind::NotFound);
        let child = mcpwire_transport::child::ChildError::Spawn { program: "x".into(), source: io };
        let e = ClientError::from(child);
        assert!(e.is_spawn() && !e.is_decode());
        assert_eq!(e.to_string(), "cannot start x");
        let source = e.source().and_then(|s| s.downcast_ref::<std::io::Error>()).expect("the io::Error");
        assert_eq!(source.kind(), std::io::ErrorKind::NotFound);

        let e = ClientError::from(std::io::Error::other("gone"));
        assert!(!e.is_spawn());
        assert_eq!(e.to_string(), "gone");
    }

    #[test]
    fn predicates_answer_for_their_variant_only() {
        let negotiation = ClientError::Negotiation("no common revision".into());
        assert!(negotiation.is_negotiation() && !negotiation.is_protocol() && negotiation.source().is_none());
        let invalid = ClientError::InvalidArguments("not an object".into());
        assert!(invalid.is_invalid_arguments() && !invalid.is_negotiation() && invalid.source().is_none());
        assert!(!ClientError::Closed.is_spawn() && !ClientError::Closed.is_invalid_arguments());
    }
}
