//! What a server sends: requests to the client, notifications, and results.

use serde::de::{Deserializer, Error as _};
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::meta::Split;
use super::{not_a_request, params_from, value_params, Body, NoParams};
use crate::jsonrpc::Notification;
use crate::method::Method;
use crate::types::{
    CallToolResult, CancelledParams, CompleteResult, CreateMessageParams, CreateTaskResult, DiscoverResult,
    ElicitParams, EmptyResult, GetPromptResult, InitializeResult, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, ListTasksResult, ListToolsResult, LoggingMessageParams, Meta, PaginatedParams, ProgressParams,
    ReadResourceResult, ResourceUpdatedParams, SubscriptionFilter, Task, TaskIdParams, TaskMetadata,
};

/// A request from the server to the client (in the legacy era on the connection; in
/// 2026-07-28 as one of the `inputRequests` of an `input_required` result).
#[derive(Debug, Clone, PartialEq)]
pub enum ServerRequest {
    /// `ping`.
    Ping,
    /// `sampling/createMessage`: ask the client's model.
    CreateMessage(CreateMessageParams),
    /// `elicitation/create`: ask the user.
    Elicit(ElicitParams),
    /// `roots/list`: ask for the client's roots.
    ListRoots,
    /// `tasks/get` (2025-11-25): the state of a task the client runs for the server.
    GetTask(TaskIdParams),
    /// `tasks/result` (2025-11-25): what such a task's request returned, once it ends.
    TaskResult(TaskIdParams),
    /// `tasks/list` (2025-11-25): the tasks the client runs for the server.
    ListTasks(PaginatedParams),
    /// `tasks/cancel` (2025-11-25): stop such a task.
    CancelTask(TaskIdParams),
}

impl ServerRequest {
    /// The request's method.
    pub fn method(&self) -> Method {
        match self {
            Self::Ping => Method::Ping,
            Self::CreateMessage(_) => Method::CreateMessage,
            Self::Elicit(_) => Method::Elicit,
            Self::ListRoots => Method::ListRoots,
            Self::GetTask(_) => Method::GetTask,
            Self::TaskResult(_) => Method::TaskResult,
            Self::ListTasks(_) => Method::ListTasks,
            Self::CancelTask(_) => Method::CancelTask,
        }
    }

    /// Whether this is a question for the client's user, model or roots (what a handler
    /// answers), rather than a ping or a request about a task the client runs.
    pub fn is_question(&self) -> bool {
        matches!(self, Self::CreateMessage(_) | Self::Elicit(_) | Self::ListRoots)
    }

    /// The request without the task it asks for (for a receiver that takes none).
    pub fn without_task(&self) -> Self {
        let mut question = self.clone();
        if let Some(task) = question.task_mut() {
            *task = None;
        }
        question
    }

    /// The `task` member of a question that can carry one (elicitation, sampling), to set.
    pub fn task_mut(&mut self) -> Option<&mut Option<TaskMetadata>> {
        match self {
            Self::CreateMessage(p) => Some(&mut p.task),
            Self::Elicit(p) => Some(&mut p.task),
            _ => None,
        }
    }

    /// The task the request asks for (2025-11-25 `params.task`), if any.
    pub fn task(&self) -> Option<&TaskMetadata> {
        match self {
            Self::CreateMessage(p) => p.task.as_ref(),
            Self::Elicit(p) => p.task.as_ref(),
            _ => None,
        }
    }

    /// The params, to be written.
    pub(crate) fn params(&self) -> ServerParamsOf<'_> {
        ServerParamsOf(self)
    }

    /// The client capability a request needs (`sampling`, `elicitation`, `roots`, `tasks`).
    pub fn capability(&self) -> Option<&'static str> {
        match self {
            Self::Ping => None,
            Self::CreateMessage(_) => Some("sampling"),
            Self::Elicit(_) => Some("elicitation"),
            Self::ListRoots => Some("roots"),
            Self::GetTask(_) | Self::TaskResult(_) | Self::ListTasks(_) | Self::CancelTask(_) => Some("tasks"),
        }
    }

    /// Whether `answer` has the shape of this request's result (a task-augmented question
    /// is answered by a `CreateTaskResult`).
    pub fn accepts(&self, answer: &Value) -> bool {
        use crate::types::{CreateMessageResult, ElicitResult, ListRootsResult};
        if self.task().is_some() && answer.get("task").is_some() {
            return CreateTaskResult::deserialize(answer).is_ok();
        }
        match self {
            Self::Ping | Self::TaskResult(_) => answer.is_object(),
            Self::CreateMessage(_) => CreateMessageResult::deserialize(answer).is_ok(),
            Self::Elicit(_) => ElicitResult::deserialize(answer).is_ok(),
            Self::ListRoots => ListRootsResult::deserialize(answer).is_ok(),
            Self::GetTask(_) | Self::CancelTask(_) => Task::deserialize(answer).is_ok(),
            Self::ListTasks(_) => ListTasksResult::deserialize(answer).is_ok(),
        }
    }
}

impl Body for ServerRequest {
    fn decode_from<'de, D: Deserializer<'de>>(method: Method, d: D) -> Result<Split<Self>, D::Error> {
        decode_request!(method, d,
            Ping => Ping,
            ListRoots => ListRoots,
            CreateMessage => CreateMessage(CreateMessageParams),
            Elicit => Elicit(ElicitParams),
            GetTask => GetTask(TaskIdParams),
            TaskResult => TaskResult(TaskIdParams),
            ListTasks => ListTasks(PaginatedParams),
            CancelTask => CancelTask(TaskIdParams),
        )
    }
}

/// A server request's params, serialized as its method defines them.
pub(crate) struct ServerParamsOf<'a>(&'a ServerRequest);

impl Serialize for ServerParamsOf<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            ServerRequest::Ping | ServerRequest::ListRoots => NoParams {}.serialize(s),
            ServerRequest::CreateMessage(p) => p.serialize(s),
            ServerRequest::Elicit(p) => p.serialize(s),
            ServerRequest::GetTask(p) | ServerRequest::TaskResult(p) | ServerRequest::CancelTask(p) => p.serialize(s),
            ServerRequest::ListTasks(p) => p.serialize(s),
        }
    }
}

/// A request as an `inputRequests` entry writes it: `{method, params}`. Entries are
/// 2026-07-28's, which asks for no task: a `task` the params carry is left out.
impl Serialize for ServerRequest {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(2))?;
        map.serialize_entry("method", self.method().as_str())?;
        if self.task().is_some() {
            map.serialize_entry("params", &self.without_task().params())?;
        } else {
            map.serialize_entry("params", &self.params())?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for ServerRequest {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct Wire {
            method: String,
            #[serde(default)]
            params: Option<Box<RawValue>>,
        }
        let wire = Wire::deserialize(d)?;
        let method = Method::parse(&wire.method)
            .ok_or_else(|| D::Error::custom(format!("unknown input request method {:?}", wire.method)))?;
        Self::decode(method, wire.params.as_deref()).map(|s| s.params).map_err(D::Error::custom)
    }
}

/// A notification from the server to the client. Known methods are decoded; anything else
/// (or a known method whose params do not read) is kept as [`ServerNotification::Other`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ServerNotification {
    /// `notifications/progress`.
    Progress(ProgressParams),
    /// `notifications/message`: a log message.
    Log(LoggingMessageParams),
    /// `notifications/tools/list_changed`.
    ToolsListChanged,
    /// `notifications/prompts/list_changed`.
    PromptsListChanged,
    /// `notifications/resources/list_changed`.
    ResourcesListChanged,
    /// `notifications/resources/updated`.
    ResourceUpdated(ResourceUpdatedParams),
    /// `notifications/elicitation/complete` (2025-11-25): a URL-mode elicitation finished.
    ElicitationComplete {
        /// The elicitation's id.
        elicitation_id: String,
    },
    /// `notifications/subscriptions/acknowledged` (2026-07-28): what a listen stream carries.
    SubscriptionsAcknowledged(SubscriptionFilter),
    /// `notifications/cancelled`.
    Cancelled(CancelledParams),
    /// `notifications/tasks/status` (2025-11-25): a task's new state.
    TaskStatus(Box<Task>),
    /// Any other notification, as received.
    Other(Notification),
}

impl ServerNotification {
    /// Reads a notification; unknown or unreadable ones are kept as [`Self::Other`].
    pub fn decode(raw: Notification) -> Self {
        let params = raw.params.as_ref();
        let decoded = match Method::parse(&raw.method) {
            Some(Method::Progress) => value_params(params).map(Self::Progress),
            Some(Method::LogMessage) => value_params(params).map(Self::Log),
            Some(Method::ToolsListChanged) => Some(Self::ToolsListChanged),
            Some(Method::PromptsListChanged) => Some(Self::PromptsListChanged),
            Some(Method::ResourcesListChanged) => Some(Self::ResourcesListChanged),
            Some(Method::ResourceUpdated) => value_params(params).map(Self::ResourceUpdated),
            Some(Method::ElicitationComplete) => params
                .and_then(|p| p.get("elicitationId"))
                .and_then(Value::as_str)
                .map(|id| Self::ElicitationComplete { elicitation_id: id.to_owned() }),
            Some(Method::SubscriptionsAcknowledged) => params
                .and_then(|p| p.get("notifications"))
                .and_then(|f| SubscriptionFilter::deserialize(f).ok())
                .map(Self::SubscriptionsAcknowledged),
            Some(Method::Cancelled) => value_params(params).map(Self::Cancelled),
            Some(Method::TaskStatus) => value_params::<Task>(params).map(|t| Self::TaskStatus(Box::new(t))),
            _ => None,
        };
        decoded.unwrap_or(Self::Other(raw))
    }

    /// The notification's method name.
    pub fn method(&self) -> &str {
        match self.known_method() {
            Some(m) => m.as_str(),
            None => match self {
                Self::Other(n) => &n.method,
                _ => unreachable!("every variant but Other has a method"),
            },
        }
    }

    /// The notification's method, when it is one of the protocol's.
    pub fn known_method(&self) -> Option<Method> {
        Some(match self {
            Self::Progress(_) => Method::Progress,
            Self::Log(_) => Method::LogMessage,
            Self::ToolsListChanged => Method::ToolsListChanged,
            Self::PromptsListChanged => Method::PromptsListChanged,
            Self::ResourcesListChanged => Method::ResourcesListChanged,
            Self::ResourceUpdated(_) => Method::ResourceUpdated,
            Self::ElicitationComplete { .. } => Method::ElicitationComplete,
            Self::SubscriptionsAcknowledged(_) => Method::SubscriptionsAcknowledged,
            Self::Cancelled(_) => Method::Cancelled,
            Self::TaskStatus(_) => Method::TaskStatus,
            Self::Other(n) => return Method::parse(&n.method),
        })
    }

    /// The params as a JSON object (without `_meta`), for the writer.
    pub(crate) fn params_value(&self) -> Value {
        fn to<T: Serialize>(v: &T) -> Value {
            serde_json::to_value(v).unwrap_or(Value::Null)
        }
        match self {
            Self::Progress(p) => to(p),
            Self::Log(p) => to(p),
            Self::ToolsListChanged | Self::PromptsListChanged | Self::ResourcesListChanged => Value::Object(Map::new()),
            Self::ResourceUpdated(p) => to(p),
            Self::ElicitationComplete { elicitation_id } => {
                Value::Object(Map::from_iter([("elicitationId".to_owned(), Value::from(elicitation_id.as_str()))]))
            }
            Self::SubscriptionsAcknowledged(filter) => {
                Value::Object(Map::from_iter([("notifications".to_owned(), to(filter))]))
            }
            Self::Cancelled(p) => to(p),
            Self::TaskStatus(task) => to(task.as_ref()),
            Self::Other(n) => n.params.clone().unwrap_or_else(|| Value::Object(Map::new())),
        }
    }
}

/// A 2026-07-28 `input_required` result: questions for the client, and state to hand back.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct InputRequiredResult {
    /// The questions, by key (the client answers each under its key).
    pub input_requests: Vec<(String, ServerRequest)>,
    /// Opaque state the client must send back with its answers.
    pub request_state: Option<String>,
    /// Metadata.
    pub meta: Option<Meta>,
}

impl Serialize for InputRequiredResult {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        struct Requests<'a>(&'a [(String, ServerRequest)]);
        impl Serialize for Requests<'_> {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let mut map = s.serialize_map(Some(self.0.len()))?;
                for (k, v) in self.0 {
                    map.serialize_entry(k, v)?;
                }
                map.end()
            }
        }
        let mut map = s.serialize_map(None)?;
        map.serialize_entry(crate::types::result_type::MEMBER, crate::types::result_type::INPUT_REQUIRED)?;
        if !self.input_requests.is_empty() {
            map.serialize_entry("inputRequests", &Requests(&self.input_requests))?;
        }
        if let Some(state) = &self.request_state {
            map.serialize_entry("requestState", state)?;
        }
        if let Some(meta) = &self.meta {
            map.serialize_entry("_meta", meta)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for InputRequiredResult {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Wire {
            #[serde(default)]
            input_requests: Option<Map<String, Value>>,
            #[serde(default)]
            request_state: Option<String>,
            #[serde(rename = "_meta", default)]
            meta: Option<Meta>,
        }
        let wire = Wire::deserialize(d)?;
        let input_requests = wire
            .input_requests
            .unwrap_or_default()
            .into_iter()
            .map(|(key, request)| ServerRequest::deserialize(request).map(|r| (key, r)).map_err(D::Error::custom))
            .collect::<Result<_, _>>()?;
        Ok(Self { input_requests, request_state: wire.request_state, meta: wire.meta })
    }
}

/// The result of a request the client sent, as the server answers it.
#[derive(Debug, Clone, PartialEq)]
pub enum ServerResult {
    /// `initialize`.
    Initialize(Box<InitializeResult>),
    /// `server/discover`.
    Discover(Box<DiscoverResult>),
    /// A result with nothing in it (`ping`, `resources/subscribe`, `logging/setLevel`,
    /// `tasks/update`, the end of a listen stream ...).
    Empty(EmptyResult),
    /// `tools/list`.
    ListTools(ListToolsResult),
    /// `tools/call`.
    CallTool(CallToolResult),
    /// A request that became a task (`tools/call`).
    CreateTask(Box<CreateTaskResult>),
    /// A 2026-07-28 request that needs input from the client first.
    InputRequired(InputRequiredResult),
    /// `resources/list`.
    ListResources(ListResourcesResult),
    /// `resources/templates/list`.
    ListResourceTemplates(ListResourceTemplatesResult),
    /// `resources/read`.
    ReadResource(ReadResourceResult),
    /// `prompts/list`.
    ListPrompts(ListPromptsResult),
    /// `prompts/get`.
    GetPrompt(GetPromptResult),
    /// `completion/complete`.
    Complete(CompleteResult),
    /// `tasks/get`, and `tasks/cancel` in 2025-11-25: the task.
    Task(Box<Task>),
    /// `tasks/list`.
    ListTasks(ListTasksResult),
    /// `tasks/result`: what the task's request returned (a `tools/call` result).
    TaskPayload(Value),
}

impl ServerResult {
    /// Whether the result is cacheable (it carries `ttlMs`/`cacheScope` from 2026-07-28).
    pub fn is_cacheable(&self) -> bool {
        matches!(
            self,
            Self::Discover(_)
                | Self::ListTools(_)
                | Self::ListResources(_)
                | Self::ListResourceTemplates(_)
                | Self::ReadResource(_)
                | Self::ListPrompts(_)
        )
    }

    /// Writes the result as neutral JSON (what [`Self::to_value`] gives) to `writer`: its
    /// size, say, without building it.
    pub fn write_json<W: std::io::Write>(&self, writer: W) -> serde_json::Result<()> {
        match self {
            Self::Initialize(r) => serde_json::to_writer(writer, r),
            Self::Discover(r) => serde_json::to_writer(writer, r),
            Self::Empty(r) => serde_json::to_writer(writer, r),
            Self::ListTools(r) => serde_json::to_writer(writer, r),
            Self::CallTool(r) => serde_json::to_writer(writer, r),
            Self::CreateTask(r) => serde_json::to_writer(writer, r),
            Self::InputRequired(r) => serde_json::to_writer(writer, r),
            Self::ListResources(r) => serde_json::to_writer(writer, r),
            Self::ListResourceTemplates(r) => serde_json::to_writer(writer, r),
            Self::ReadResource(r) => serde_json::to_writer(writer, r),
            Self::ListPrompts(r) => serde_json::to_writer(writer, r),
            Self::GetPrompt(r) => serde_json::to_writer(writer, r),
            Self::Complete(r) => serde_json::to_writer(writer, r),
            Self::Task(r) => serde_json::to_writer(writer, r),
            Self::ListTasks(r) => serde_json::to_writer(writer, r),
            Self::TaskPayload(v) => serde_json::to_writer(writer, v),
        }
    }

    /// The result as neutral JSON, before the codec shapes it for a revision.
    pub fn to_value(&self) -> serde_json::Result<Value> {
        match self {
            Self::Initialize(r) => serde_json::to_value(r),
            Self::Discover(r) => serde_json::to_value(r),
            Self::Empty(r) => serde_json::to_value(r),
            Self::ListTools(r) => serde_json::to_value(r),
            Self::CallTool(r) => serde_json::to_value(r),
            Self::CreateTask(r) => serde_json::to_value(r),
            Self::InputRequired(r) => serde_json::to_value(r),
            Self::ListResources(r) => serde_json::to_value(r),
            Self::ListResourceTemplates(r) => serde_json::to_value(r),
            Self::ReadResource(r) => serde_json::to_value(r),
            Self::ListPrompts(r) => serde_json::to_value(r),
            Self::GetPrompt(r) => serde_json::to_value(r),
            Self::Complete(r) => serde_json::to_value(r),
            Self::Task(r) => serde_json::to_value(r),
            Self::ListTasks(r) => serde_json::to_value(r),
            Self::TaskPayload(v) => Ok(v.clone()),
        }
    }
}

impl From<CallToolResult> for ServerResult {
    fn from(r: CallToolResult) -> Self {
        Self::CallTool(r)
    }
}
