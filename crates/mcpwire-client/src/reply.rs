//! The server's answer to one request of ours, as the session and its layers read it.
//!
//! The engine reads what kind of answer came ([`Reply`]: complete, a task, or questions). A
//! complete result is then read once: straight from its text into the type the call returns
//! when no layer stands between, or into the [`ServerResult`] of its method for the layers
//! ([`ClientReply`]), out of which the call takes its type ([`CallResult`]).

use mcpwire_protocol::codec::answer;
use mcpwire_protocol::engine::{InputRequest, Reply};
use mcpwire_protocol::message::ServerResult;
use mcpwire_protocol::types::{
    CallToolResult, CompleteResult, CreateTaskResult, DiscoverResult, EmptyResult, GetPromptResult, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListTasksResult, ListToolsResult, ReadResourceResult, Task,
};
use mcpwire_protocol::{Method, ProtocolVersion};
use serde::de::{DeserializeOwned, IgnoredAny};

use crate::error::ClientError;

/// The server's answer to one round trip of a typed request, as the client's layers see it.
#[derive(Debug)]
#[non_exhaustive]
pub enum ClientReply {
    /// The request's result, read into the type of its method.
    Result(ServerResult),
    /// The request became this task (a `tools/call`).
    Task(Box<CreateTaskResult>),
    /// 2026-07-28: the server needs answers first. The session answers the questions with
    /// its handlers and sends the request through the layers again
    /// ([`crate::middleware::ClientCall::is_round`]).
    InputRequired(Box<InputRequest>),
}

impl ClientReply {
    /// The engine's reply to a request of `method` sent in `version`, its result read.
    pub(crate) fn read(reply: Reply, method: Method, version: ProtocolVersion) -> Result<Self, ClientError> {
        Ok(match reply {
            Reply::Complete(raw) => Self::Result(
                answer::read_server_result(method, version, &raw)
                    .map_err(|m| ClientError::decode_json(method.as_str(), None, m.into_json_error()))?,
            ),
            Reply::Task(task) => Self::Task(task),
            Reply::InputRequired(asked) => Self::InputRequired(asked),
        })
    }

    /// The result, if the request has one.
    pub fn result(&self) -> Option<&ServerResult> {
        match self {
            Self::Result(result) => Some(result),
            _ => None,
        }
    }
}

impl From<ServerResult> for ClientReply {
    fn from(result: ServerResult) -> Self {
        Self::Result(result)
    }
}

/// One round trip's answer: the engine's, or the layers'.
pub(crate) enum Answered {
    /// Sent without layers: read once, straight into the call's type.
    Engine(Reply),
    /// Through the layers.
    Layers(ClientReply),
}

/// What a round trip came to, for a call whose result is a `T`.
pub(crate) enum Step<T> {
    /// The result.
    Result(T),
    /// A task.
    Task(Box<CreateTaskResult>),
    /// Questions to answer before a retry.
    Input(Box<InputRequest>),
}

impl Answered {
    /// Reads the answer to a request of `method` for a call whose result is a `T`.
    pub(crate) fn read<T: CallResult>(self, method: Method) -> Result<Step<T>, ClientError> {
        let name = method.as_str();
        Ok(match self {
            Self::Engine(Reply::Complete(raw)) => Step::Result(
                answer::read_result(method, raw.get())
                    .map_err(|m| ClientError::decode_json(name, None, m.into_json_error()))?,
            ),
            Self::Engine(Reply::Task(task)) | Self::Layers(ClientReply::Task(task)) => Step::Task(task),
            Self::Engine(Reply::InputRequired(asked)) | Self::Layers(ClientReply::InputRequired(asked)) => {
                Step::Input(asked)
            }
            Self::Layers(ClientReply::Result(result)) => Step::Result(
                T::from_server_result(result)
                    .map_err(|_| ClientError::decode(name, "a layer answered with the result of another method"))?,
            ),
        })
    }
}

/// A result type a typed call returns: read from the text, or taken out of the
/// [`ServerResult`] the layers answered with.
pub(crate) trait CallResult: DeserializeOwned {
    /// The result of this type in `result`, or `result` given back.
    fn from_server_result(result: ServerResult) -> Result<Self, ServerResult>;
}

macro_rules! call_result {
    ($($ty:ty => $variant:ident $(($unbox:tt))?),* $(,)?) => {$(
        impl CallResult for $ty {
            fn from_server_result(result: ServerResult) -> Result<Self, ServerResult> {
                match result {
                    ServerResult::$variant(r) => Ok(call_result!(@unbox r $($unbox)?)),
                    other => Err(other),
                }
            }
        }
    )*};
    (@unbox $r:ident *) => { *$r };
    (@unbox $r:ident) => { $r };
}

call_result! {
    DiscoverResult => Discover(*),
    EmptyResult => Empty,
    ListToolsResult => ListTools,
    ListResourcesResult => ListResources,
    ListResourceTemplatesResult => ListResourceTemplates,
    ReadResourceResult => ReadResource,
    ListPromptsResult => ListPrompts,
    GetPromptResult => GetPrompt,
    CompleteResult => Complete,
    Task => Task(*),
    ListTasksResult => ListTasks,
}

/// A result the call does not look at: any result will do.
impl CallResult for IgnoredAny {
    fn from_server_result(_: ServerResult) -> Result<Self, ServerResult> {
        Ok(IgnoredAny)
    }
}

impl CallResult for CallToolResult {
    fn from_server_result(result: ServerResult) -> Result<Self, ServerResult> {
        match result {
            ServerResult::CallTool(r) => Ok(r),
            // `tasks/result` answers with the payload of the task's call.
            ServerResult::TaskPayload(payload) => {
                serde_json::from_value(payload.clone()).map_err(|_| ServerResult::TaskPayload(payload))
            }
            other => Err(other),
        }
    }
}
