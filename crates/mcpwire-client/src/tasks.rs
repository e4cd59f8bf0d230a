//! Tasks, from the requesting side.
//!
//! - **2025-11-25**: [`ClientSession::call_tool_as_task`] adds `params.task` to a
//!   `tools/call` (when the server declares `tasks.requests.tools.call`); the server
//!   answers with a task at once. [`ClientSession::get_task`] polls it,
//!   [`ClientSession::task_result`] waits for its outcome (`tasks/result`),
//!   [`ClientSession::list_tasks`] pages through the session's tasks and
//!   [`ClientSession::cancel_task`] cancels one. Status changes also arrive as
//!   [`crate::ServerNotification::TaskStatus`].
//! - **2026-07-28** (the `io.modelcontextprotocol/tasks` extension, switched on with
//!   [`crate::ClientBuilder::tasks`]): the server decides whether a call becomes a task.
//!   [`ClientSession::call_tool`] follows one to its end transparently;
//!   [`ClientSession::call_tool_as_task`] hands it over instead. [`ClientSession::wait_for_task`]
//!   polls `tasks/get` at the server's suggested interval, answers the questions of an
//!   `input_required` task with the client's handlers (`tasks/update`), and gives up after
//!   the client's task wait. There is no `tasks/result` or `tasks/list` in this era.

use std::collections::HashSet;
use std::time::Duration;

use mcpwire_protocol::message::{ClientRequest, ServerRequest};
use mcpwire_protocol::types::{
    CallToolResult, JsonObject, ListTasksResult, PaginatedParams, Task, TaskIdParams, TaskMetadata, TaskStatus,
    UpdateTaskParams,
};
use mcpwire_protocol::{Era, Method, ProtocolVersion};
use serde::de::IgnoredAny;
use serde::Deserialize;
use serde_json::Value;

use crate::driver::answer_input;
use crate::error::ClientError;
use crate::mrtr::Ended;
use crate::session::ClientSession;

/// The shortest and longest pause between two polls of a task, whatever the server says.
const POLL_BOUNDS: (Duration, Duration) = (Duration::from_millis(10), Duration::from_secs(5));
/// The pause between polls when the server suggests none.
const DEFAULT_POLL: Duration = Duration::from_millis(500);

/// How a tool call answered: with a task to follow, or (the server chose to run it at
/// once, or has no tasks) with its result.
#[derive(Debug, Clone, PartialEq)]
// The task is the expected case; boxing it would only add an allocation.
#[allow(clippy::large_enum_variant)]
pub enum CallToolOutcome {
    /// The call runs as this task.
    Task(Task),
    /// The call's result.
    Result(CallToolResult),
}

fn task(task_id: &str) -> TaskIdParams {
    TaskIdParams { task_id: task_id.to_owned() }
}

impl ClientSession {
    /// Whether the server offers task-augmented `tools/call` (2025-11-25
    /// `tasks.requests.tools.call`, or the 2026-07-28 extension).
    pub fn server_offers_tool_tasks(&self) -> bool {
        let caps = self.server_capabilities();
        match self.era() {
            Era::Modern => {
                caps.extensions.as_ref().is_some_and(|e| e.contains_key(mcpwire_protocol::types::TASKS_EXTENSION))
            }
            Era::Legacy => {
                self.protocol_version() == ProtocolVersion::V2025_11_25 && caps.offers_task_requests(Method::CallTool)
            }
        }
    }

    /// Calls a tool, asking for a task: in 2025-11-25 with `params.task` (and `ttl`, the
    /// retention asked for; the server may choose another); in 2026-07-28 by declaring the
    /// tasks extension (enable it with [`crate::ClientBuilder::tasks`]), the server deciding.
    /// Where the server offers no tasks (or another revision is spoken) the call is made
    /// plainly and its result returned as [`CallToolOutcome::Result`].
    ///
    /// The call's `_meta.progressToken` (see [`Self::with_progress`]) stays valid for the
    /// task's life in 2025-11-25, but its callback ends with this call: later progress
    /// reaches [`Self::notifications`].
    pub async fn call_tool_as_task(
        &self,
        name: impl Into<String>,
        arguments: Value,
        ttl: Option<Duration>,
    ) -> Result<CallToolOutcome, ClientError> {
        let mut params = crate::calls::call_params(name.into(), arguments)?;
        let legacy_task = self.era() == Era::Legacy && self.server_offers_tool_tasks();
        if legacy_task {
            params.task = Some(TaskMetadata { ttl: ttl.map(|d| d.as_millis() as u64) });
        }
        Ok(match self.call_with_input_answer(&ClientRequest::CallTool(params)).await? {
            Ended::Task(created) => CallToolOutcome::Task(created.task),
            Ended::Result(result) => CallToolOutcome::Result(result),
        })
    }

    /// A task's state (`tasks/get`). In 2026-07-28 it carries the outcome of a finished task
    /// ([`Task::result`], [`Task::error`]) and the questions of an `input_required` one
    /// ([`Task::input_requests`]).
    pub async fn get_task(&self, task_id: &str) -> Result<Task, ClientError> {
        self.call(&ClientRequest::GetTask(task(task_id))).await
    }

    /// Polls a task until it is terminal, at the interval the server suggests (bounded to
    /// 10 ms .. 5 s), for at most the client's task wait ([`crate::ClientBuilder::task_wait`]);
    /// then [`ClientError::Timeout`]. In 2026-07-28 the questions of an `input_required`
    /// task are answered with the client's handlers (each once) through `tasks/update`; in
    /// 2025-11-25 the server asks them as ordinary requests, which the handlers answer.
    pub async fn wait_for_task(&self, task_id: &str) -> Result<Task, ClientError> {
        let wait = self.shared().config.task_wait;
        match tokio::time::timeout(wait, self.poll_task(task_id)).await {
            Ok(outcome) => outcome,
            Err(_) => Err(ClientError::Timeout { method: Method::GetTask.as_str().into(), timeout: wait }),
        }
    }

    async fn poll_task(&self, task_id: &str) -> Result<Task, ClientError> {
        let mut answered: HashSet<String> = HashSet::new();
        loop {
            let task = self.get_task(task_id).await?;
            if task.status.is_terminal() {
                return Ok(task);
            }
            if self.era() == Era::Modern && task.status == TaskStatus::InputRequired {
                self.answer_task_questions(&task, &mut answered).await?;
            }
            let pause = task.poll_interval_ms.map(Duration::from_millis).unwrap_or(DEFAULT_POLL);
            tokio::time::sleep(pause.clamp(POLL_BOUNDS.0, POLL_BOUNDS.1)).await;
        }
    }

    /// Answers the questions of an `input_required` task not answered yet.
    async fn answer_task_questions(&self, task: &Task, answered: &mut HashSet<String>) -> Result<(), ClientError> {
        let config = &self.shared().config;
        let mut responses = JsonObject::new();
        for (key, request) in task.input_requests.iter().flatten() {
            if answered.contains(key) {
                continue;
            }
            let question = ServerRequest::deserialize(request).map_err(|e| {
                ClientError::decode_json(Method::GetTask.as_str(), Some(format!("input request {key:?}")), e)
            })?;
            let method = question.method().as_str();
            let answer = answer_input(config, &question)
                .await
                .map_err(|error| ClientError::Handler { method: method.to_owned(), error })?;
            let answer = serde_json::to_value(answer).map_err(|e| ClientError::decode_json(method, None, e))?;
            responses.insert(key.clone(), answer);
        }
        if responses.is_empty() {
            return Ok(());
        }
        let keys: Vec<String> = responses.keys().cloned().collect();
        self.update_task(&task.task_id, responses).await?;
        answered.extend(keys);
        Ok(())
    }

    /// Answers questions of an `input_required` task (`tasks/update`, 2026-07-28), by the
    /// keys of its [`Task::input_requests`].
    pub async fn update_task(&self, task_id: &str, input_responses: JsonObject) -> Result<(), ClientError> {
        let params = UpdateTaskParams { task_id: task_id.to_owned(), input_responses };
        let _: IgnoredAny = self.call(&ClientRequest::UpdateTask(params)).await?;
        Ok(())
    }

    /// The outcome of a tool call that runs as a task: in 2025-11-25 `tasks/result` (the
    /// server answers when the task ends; bounded by the client's task wait unless this
    /// handle has its own timeout); in 2026-07-28 [`Self::wait_for_task`]. A task that
    /// failed with a JSON-RPC error is [`ClientError::Protocol`] with that error; a cancelled
    /// one is [`ClientError::Task`].
    pub async fn task_result(&self, task_id: &str) -> Result<CallToolResult, ClientError> {
        if self.era() == Era::Legacy {
            let wait = self.options.timeout.unwrap_or(self.shared().config.task_wait);
            return self.with_timeout(wait).call(&ClientRequest::TaskResult(task(task_id))).await;
        }
        let task = self.wait_for_task(task_id).await?;
        let method = Method::CallTool.as_str();
        match (task.status, task.result, task.error) {
            (TaskStatus::Completed, Some(result), _) => mcpwire_protocol::mismatch::from_value(result)
                .map_err(|e| ClientError::decode_json(method, None, e.into_json_error())),
            (TaskStatus::Failed, _, Some(error)) => Err(ClientError::Protocol { method: method.into(), error }),
            (status, _, _) => Err(ClientError::Task { task_id: task.task_id, status, message: task.status_message }),
        }
    }

    /// One page of this session's tasks (`tasks/list`, 2025-11-25; `None` for the first).
    pub async fn list_tasks(&self, cursor: Option<String>) -> Result<ListTasksResult, ClientError> {
        self.call(&ClientRequest::ListTasks(PaginatedParams { cursor })).await
    }

    /// Cancels a task (`tasks/cancel`). 2025-11-25 answers with the cancelled task (and
    /// refuses, `-32602`, a task that already ended); 2026-07-28 only acknowledges
    /// (cancellation is cooperative there): `None`.
    pub async fn cancel_task(&self, task_id: &str) -> Result<Option<Task>, ClientError> {
        let request = ClientRequest::CancelTask(task(task_id));
        match self.era() {
            Era::Legacy => self.call(&request).await.map(Some),
            Era::Modern => self.call::<IgnoredAny>(&request).await.map(|_| None),
        }
    }
}
