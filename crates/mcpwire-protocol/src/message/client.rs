//! What a client sends: requests, notifications, and the results of the server's requests.

use serde::{Deserialize, Serialize};

use super::meta::Split;
use super::{not_a_request, params_from, Body, NoParams};
use crate::jsonrpc::Notification;
use crate::method::Method;
use crate::types::{
    CallToolParams, CancelledParams, CompleteParams, CreateMessageResult, CreateTaskResult, ElicitResult, EmptyResult,
    GetPromptParams, InitializeParams, ListRootsResult, ListTasksResult, ListenParams, PaginatedParams, ProgressParams,
    ResourceParams, SetLevelParams, Task, TaskIdParams, UpdateTaskParams,
};

/// A request from the client to the server, with its params.
#[derive(Debug, Clone, PartialEq)]
pub enum ClientRequest {
    /// `initialize`.
    Initialize(Box<InitializeParams>),
    /// `ping`.
    Ping,
    /// `server/discover`.
    Discover,
    /// `tools/list`.
    ListTools(PaginatedParams),
    /// `tools/call`.
    CallTool(CallToolParams),
    /// `resources/list`.
    ListResources(PaginatedParams),
    /// `resources/templates/list`.
    ListResourceTemplates(PaginatedParams),
    /// `resources/read`.
    ReadResource(ResourceParams),
    /// `resources/subscribe`.
    Subscribe(ResourceParams),
    /// `resources/unsubscribe`.
    Unsubscribe(ResourceParams),
    /// `prompts/list`.
    ListPrompts(PaginatedParams),
    /// `prompts/get`.
    GetPrompt(GetPromptParams),
    /// `completion/complete`.
    Complete(CompleteParams),
    /// `logging/setLevel`.
    SetLevel(SetLevelParams),
    /// `subscriptions/listen`.
    Listen(ListenParams),
    /// `tasks/get`.
    GetTask(TaskIdParams),
    /// `tasks/result`.
    TaskResult(TaskIdParams),
    /// `tasks/list`.
    ListTasks(PaginatedParams),
    /// `tasks/cancel`.
    CancelTask(TaskIdParams),
    /// `tasks/update`.
    UpdateTask(UpdateTaskParams),
}

impl ClientRequest {
    /// The request's method.
    pub fn method(&self) -> Method {
        match self {
            Self::Initialize(_) => Method::Initialize,
            Self::Ping => Method::Ping,
            Self::Discover => Method::Discover,
            Self::ListTools(_) => Method::ListTools,
            Self::CallTool(_) => Method::CallTool,
            Self::ListResources(_) => Method::ListResources,
            Self::ListResourceTemplates(_) => Method::ListResourceTemplates,
            Self::ReadResource(_) => Method::ReadResource,
            Self::Subscribe(_) => Method::Subscribe,
            Self::Unsubscribe(_) => Method::Unsubscribe,
            Self::ListPrompts(_) => Method::ListPrompts,
            Self::GetPrompt(_) => Method::GetPrompt,
            Self::Complete(_) => Method::Complete,
            Self::SetLevel(_) => Method::SetLevel,
            Self::Listen(_) => Method::Listen,
            Self::GetTask(_) => Method::GetTask,
            Self::TaskResult(_) => Method::TaskResult,
            Self::ListTasks(_) => Method::ListTasks,
            Self::CancelTask(_) => Method::CancelTask,
            Self::UpdateTask(_) => Method::UpdateTask,
        }
    }

    /// The name a request is about, as the 2026-07-28 `Mcp-Name` header carries it: the
    /// tool, prompt, resource URI or task it addresses.
    pub fn name(&self) -> Option<&str> {
        match self {
            Self::CallTool(p) => Some(&p.name),
            Self::GetPrompt(p) => Some(&p.name),
            Self::ReadResource(p) | Self::Subscribe(p) | Self::Unsubscribe(p) => Some(&p.uri),
            Self::GetTask(p) | Self::TaskResult(p) | Self::CancelTask(p) => Some(&p.task_id),
            Self::UpdateTask(p) => Some(&p.task_id),
            _ => None,
        }
    }

    /// The params, to be written (`_meta` and the round members are added by the writer).
    pub(crate) fn params(&self) -> ParamsOf<'_> {
        ParamsOf(self)
    }
}

impl Body for ClientRequest {
    fn decode_from<'de, D: serde::Deserializer<'de>>(method: Method, d: D) -> Result<Split<Self>, D::Error> {
        decode_request!(method, d,
            Initialize => Initialize(Box<InitializeParams>),
            Ping => Ping,
            Discover => Discover,
            ListTools => ListTools(PaginatedParams),
            CallTool => CallTool(CallToolParams),
            ListResources => ListResources(PaginatedParams),
            ListResourceTemplates => ListResourceTemplates(PaginatedParams),
            ReadResource => ReadResource(ResourceParams),
            Subscribe => Subscribe(ResourceParams),
            Unsubscribe => Unsubscribe(ResourceParams),
            ListPrompts => ListPrompts(PaginatedParams),
            GetPrompt => GetPrompt(GetPromptParams),
            Complete => Complete(CompleteParams),
            SetLevel => SetLevel(SetLevelParams),
            Listen => Listen(ListenParams),
            GetTask => GetTask(TaskIdParams),
            TaskResult => TaskResult(TaskIdParams),
            ListTasks => ListTasks(PaginatedParams),
            CancelTask => CancelTask(TaskIdParams),
            UpdateTask => UpdateTask(UpdateTaskParams),
        )
    }
}

/// A request's params, serialized as its method defines them.
pub(crate) struct ParamsOf<'a>(&'a ClientRequest);

impl Serialize for ParamsOf<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use ClientRequest as R;
        match self.0 {
            R::Initialize(p) => p.serialize(s),
            R::Ping | R::Discover => NoParams {}.serialize(s),
            R::ListTools(p)
            | R::ListResources(p)
            | R::ListResourceTemplates(p)
            | R::ListPrompts(p)
            | R::ListTasks(p) => p.serialize(s),
            R::CallTool(p) => p.serialize(s),
            R::ReadResource(p) | R::Subscribe(p) | R::Unsubscribe(p) => p.serialize(s),
            R::GetPrompt(p) => p.serialize(s),
            R::Complete(p) => p.serialize(s),
            R::SetLevel(p) => p.serialize(s),
            R::Listen(p) => p.serialize(s),
            R::GetTask(p) | R::TaskResult(p) | R::CancelTask(p) => p.serialize(s),
            R::UpdateTask(p) => p.serialize(s),
        }
    }
}

/// A notification from the client to the server.
#[derive(Debug, Clone, PartialEq)]
pub enum ClientNotification {
    /// `notifications/initialized`: the legacy handshake is complete.
    Initialized,
    /// `notifications/cancelled` (or its alias `$/cancelRequest`): the client no longer wants
    /// the answer to a request.
    Cancelled(CancelledParams),
    /// `notifications/progress` for a request of the server's.
    Progress(ProgressParams),
    /// `notifications/roots/list_changed`.
    RootsListChanged,
    /// Anything else, or a known notification whose params do not read: kept as received.
    Other(Notification),
}

impl ClientNotification {
    /// The notification's method, when it is a known one.
    pub fn method(&self) -> Option<Method> {
        Some(match self {
            Self::Initialized => Method::Initialized,
            Self::Cancelled(_) => Method::Cancelled,
            Self::Progress(_) => Method::Progress,
            Self::RootsListChanged => Method::RootsListChanged,
            Self::Other(n) => return Method::parse(&n.method),
        })
    }

    /// Reads a notification; unknown or unreadable ones are kept as [`Self::Other`].
    pub fn decode(raw: Notification) -> Self {
        let params = raw.params.as_ref();
        let decoded = match Method::parse(&raw.method) {
            Some(Method::Initialized) => Some(Self::Initialized),
            Some(Method::Cancelled) => super::value_params(params).map(Self::Cancelled),
            Some(Method::Progress) => super::value_params(params).map(Self::Progress),
            Some(Method::RootsListChanged) => Some(Self::RootsListChanged),
            _ => None,
        };
        decoded.unwrap_or(Self::Other(raw))
    }
}

/// The result of a request the server sent to the client.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ClientResult {
    /// `sampling/createMessage`.
    CreateMessage(Box<CreateMessageResult>),
    /// `elicitation/create`.
    Elicit(ElicitResult),
    /// `roots/list`.
    ListRoots(ListRootsResult),
    /// A question the client answers as a task (2025-11-25): the task as created.
    CreateTask(Box<CreateTaskResult>),
    /// `tasks/get` and `tasks/cancel` (2025-11-25): the task.
    Task(Box<Task>),
    /// `tasks/list` (2025-11-25).
    ListTasks(ListTasksResult),
    /// `ping`, and anything without a result of its own.
    Empty(EmptyResult),
    /// `tasks/result` (2025-11-25): what the task's question was answered with.
    TaskPayload(serde_json::Value),
}
