//! Why the runtime refuses a request: its own error type, with causes kept as values. It
//! becomes a JSON-RPC error (code, message, data) once, when the answer is written, in the
//! request's revision.

use mcpwire_protocol::engine::cursor::CursorError;
use mcpwire_protocol::engine::task::TaskStoreError;
use mcpwire_protocol::engine::tasks_extension_missing;
use mcpwire_protocol::{ErrorObject, Method, ProtocolVersion};
use serde_json::json;

use crate::error::HandlerError;

/// A request the runtime (not the engine) refuses, or a handler's failure on its way out.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Refusal {
    /// `tools/call` names no registered tool.
    #[error("Unknown tool: {0}")]
    UnknownTool(String),
    /// `prompts/get` or a completion names no registered prompt.
    #[error("Unknown prompt: {0}")]
    UnknownPrompt(String),
    /// A completion names no registered resource template.
    #[error("Unknown resource template: {0}")]
    UnknownTemplate(String),
    /// `prompts/get` without every required argument.
    #[error("prompt {prompt} is missing required argument(s): {}", .missing.join(", "))]
    MissingArguments {
        /// The prompt.
        prompt: String,
        /// The required arguments not given.
        missing: Vec<String>,
    },
    /// A list cursor that is not one of ours, or not for this list.
    #[error(transparent)]
    Cursor(#[from] CursorError),
    /// 2025-11-25: a tool called in the wrong mode (as a task when it forbids it, or
    /// plainly when it requires one).
    #[error("{}: tool {tool} {}", Method::CallTool, if *.required { "requires task-augmented execution (params.task)" } else { "does not support task-augmented execution" })]
    TaskMode {
        /// The tool.
        tool: String,
        /// Whether the tool requires a task (else: forbids one).
        required: bool,
    },
    /// 2026-07-28: a tool that only runs as a task, from a client without the extension.
    #[error("the client did not declare the tasks extension")]
    TasksExtensionMissing,
    /// A method this server does not offer.
    #[error("{0} is not offered")]
    NotOffered(Method),
    /// A method the engine answers reached the application (a bug of ours).
    #[error("{0} is answered by the engine")]
    EngineMethod(Method),
    /// A task path without the task runtime (a bug of ours: the plan said tasks).
    #[error("tasks are not enabled")]
    TasksDisabled,
    /// The limit of running tasks is reached.
    #[error("too many running tasks; try again later")]
    TooManyTasks,
    /// The task store refused.
    #[error(transparent)]
    Store(#[from] TaskStoreError),
    /// `tasks/result` of a task cancelled before it had one.
    #[error("Task {0} was cancelled: it has no result")]
    NoTaskResult(String),
    /// `tasks/update` with an answer of the wrong shape.
    #[error("{}: the answer to {key:?} is not a valid {method} result", Method::UpdateTask)]
    InvalidTaskAnswer {
        /// The question's key.
        key: String,
        /// The method of the question.
        method: Method,
    },
    /// A task that failed with a JSON-RPC error (as stored with it).
    #[error("the task failed: {0}")]
    TaskFailed(ErrorObject),
    /// The handler failed.
    #[error(transparent)]
    Handler(#[from] HandlerError),
    /// As many requests are in flight as the server takes (of the session, or of all).
    #[error("too many requests in flight ({limit}{}); try again later", if *.per_session { " in this session" } else { "" })]
    Busy {
        /// The limit reached.
        limit: usize,
        /// Whether it is the session's (else the server's).
        per_session: bool,
    },
    /// The request's principal lacks a scope what it names needs.
    #[error("{target} needs the scope(s) {}, which the access token does not grant", .scopes.join(" "))]
    InsufficientScope {
        /// What the request names (`tool notes_add`, `resource notes://1`, `prompt p`).
        target: String,
        /// Every scope it needs.
        scopes: Vec<String>,
    },
    /// The handler of this method panicked (what it said is in the server's log).
    #[error("the {0} handler failed unexpectedly")]
    Panicked(Method),
}

impl Refusal {
    /// The JSON-RPC error this refusal is answered with, in revision `rev`.
    pub(crate) fn into_error(self, rev: ProtocolVersion) -> ErrorObject {
        match self {
            Self::UnknownTool(_)
            | Self::UnknownPrompt(_)
            | Self::UnknownTemplate(_)
            | Self::MissingArguments { .. }
            | Self::NoTaskResult(_)
            | Self::InvalidTaskAnswer { .. }
            | Self::Cursor(_) => ErrorObject::invalid_params(self),
            Self::TaskMode { .. } => ErrorObject::method_not_found(&self.to_string()),
            Self::InsufficientScope { ref scopes, .. } => {
                let data = json!({ "requiredScopes": scopes });
                ErrorObject::invalid_request(self).with_data(data)
            }
            Self::NotOffered(method) => ErrorObject::method_not_found(method.as_str()),
            Self::TasksExtensionMissing => tasks_extension_missing(),
            Self::Store(TaskStoreError::NotFound) => {
                ErrorObject::invalid_params("Failed to retrieve task: Task not found")
            }
            Self::Store(TaskStoreError::Terminal(status)) => {
                ErrorObject::invalid_params(format!("Cannot cancel task: already in terminal status '{status}'"))
            }
            Self::EngineMethod(_)
            | Self::TasksDisabled
            | Self::TooManyTasks
            | Self::Store(_)
            | Self::Panicked(_)
            | Self::Busy { .. } => ErrorObject::internal(self),
            Self::TaskFailed(e) => e,
            Self::Handler(e) => protocol_error(e, rev),
        }
    }
}

/// Maps a handler's error to the protocol error of the request's revision.
pub(crate) fn protocol_error(e: HandlerError, rev: ProtocolVersion) -> ErrorObject {
    match e {
        HandlerError::Protocol(e) => e,
        HandlerError::InputRequired => ErrorObject::internal("input required outside a multi-round request"),
        HandlerError::Tool(message) => ErrorObject::internal(message),
        HandlerError::InvalidArguments(message) => ErrorObject::invalid_params(message),
        HandlerError::Ask(e) => ErrorObject::internal(mcpwire_protocol::error::chain(&e)),
        HandlerError::ResourceNotFound(uri) => {
            ErrorObject::new(rev.resource_not_found_code(), format!("Resource not found: {uri}"))
                .with_data(json!({"uri": uri}))
        }
    }
}

#[cfg(test)]
mod tests {
    use mcpwire_protocol::error::{INTERNAL_ERROR, INVALID_PARAMS, METHOD_NOT_FOUND};
    use mcpwire_protocol::types::TaskStatus;

    use super::*;
    use crate::error::AskError;

    fn wire(r: Refusal) -> ErrorObject {
        r.into_error(ProtocolVersion::V2025_11_25)
    }

    #[test]
    fn each_refusal_is_written_with_its_code_and_message() {
        let e = wire(Refusal::UnknownTool("t".into()));
        assert_eq!((e.code, e.message.as_str()), (INVALID_PARAMS, "Invalid params: Unknown tool: t"));
        let e = wire(Refusal::MissingArguments { prompt: "p".into(), missing: vec!["a".into(), "b".into()] });
        assert_eq!(e.message, "Invalid params: prompt p is missing required argument(s): a, b");
        let e = wire(Refusal::TaskMode { tool: "t".into(), required: true });
        assert_eq!(e.code, METHOD_NOT_FOUND);
        assert_eq!(e.message, "Method not found: tools/call: tool t requires task-augmented execution (params.task)");
        let e = wire(Refusal::NotOffered(Method::GetTask));
        assert_eq!(e.message, "Method not found: tasks/get");
        let e = wire(TaskStoreError::NotFound.into());
        assert_eq!(e.message, "Invalid params: Failed to retrieve task: Task not found");
        let e = wire(TaskStoreError::Terminal(TaskStatus::Completed).into());
        assert_eq!(e.message, "Invalid params: Cannot cancel task: already in terminal status 'completed'");
        let e = wire(Refusal::TooManyTasks);
        assert_eq!(e.code, INTERNAL_ERROR);
        let stored = ErrorObject::new(-1, "as stored");
        assert_eq!(wire(Refusal::TaskFailed(stored.clone())), stored);
    }

    #[test]
    fn a_question_that_failed_is_written_with_its_causes() {
        let bad = serde_json::from_str::<u8>("x").unwrap_err();
        let cause = bad.to_string();
        let e = wire(Refusal::Handler(AskError::malformed(Method::CreateMessage, bad).into()));
        assert_eq!(e.code, INTERNAL_ERROR);
        assert_eq!(
            e.message,
            format!("Internal error: malformed sampling/createMessage result from the client: {cause}")
        );
        let e = wire(Refusal::Handler(AskError::TimedOut(Method::Elicit).into()));
        assert_eq!(e.message, "Internal error: the client did not answer elicitation/create in time");
    }
}
