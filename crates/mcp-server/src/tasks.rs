//! Tasks: tool calls that answer at once with a durable handle and run in the background.
//!
//! Two protocol shapes share one runtime:
//!
//! - **2025-11-25** (core, experimental). A client that sees `tasks.requests.tools.call` in
//!   the server's capabilities may add `params.task` (`{ttl}`) to a `tools/call` of a tool
//!   whose `execution.taskSupport` is `optional` or `required`. The server answers
//!   `CreateTaskResult` at once and runs the handler in the background; the client polls
//!   `tasks/get`, waits for the outcome with `tasks/result`, pages through its tasks with
//!   `tasks/list` and cancels with `tasks/cancel`. Every status change is announced with
//!   `notifications/tasks/status`. A `required` tool called without `task`, or a
//!   `forbidden` one called with it, is `-32601`.
//! - **2026-07-28** (the `io.modelcontextprotocol/tasks` extension). The server declares the
//!   extension in `capabilities.extensions`; when a request's client capabilities declare it
//!   too, a call of an `optional` or `required` tool answers `resultType: "task"`. The
//!   client polls `tasks/get`, which carries the outcome inline; questions the handler asks
//!   (`ctx.elicit`, ...) appear as the task's `inputRequests` and are answered with
//!   `tasks/update`; `tasks/cancel` is an acknowledgement. A `required` tool called by a
//!   client without the extension is `-32021` naming it.
//!
//! State lives in a [`TaskStore`]: [`InMemoryTaskStore`] by default (bounded), or any
//! other (a shared store lets several instances serve one task's polls; the records and
//! changes are serializable for that). The handler of a task runs on the instance that
//! created it, with a [`Context`] whose cancellation token fires on `tasks/cancel`, when the
//! task's `ttl` elapses, or (2025-11-25, where tasks belong to the session) when the
//! connection ends.
//!
//! Task ids are 128 random bits. A 2025-11-25 task belongs to the connection (the legacy
//! session) that created it: other connections cannot see, list or cancel it. A
//! 2026-07-28 task has no owner (the era has no sessions): its id is its bearer token.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use futures::future::BoxFuture;
use futures::FutureExt;
use mcp_protocol::engine::cursor::fingerprint;
use mcp_protocol::error::MISSING_REQUIRED_CLIENT_CAPABILITY;
use mcp_protocol::json;
use mcp_protocol::types::{
    CallToolResult, CreateTaskResult, JsonObject, ListTasksResult, RelatedTaskMetadata, Task, TaskIdParams, TaskStatus,
    TaskSupport, Tool, UpdateTaskParams, RELATED_TASK_META, TASKS_EXTENSION,
};
use mcp_protocol::{ErrorObject, ProtocolVersion, Request};
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

use crate::connection::{ConnectionState, RequestScope};
use crate::context::{Context, ContextParts};
use crate::error::{HandlerError, HandlerResult};
use crate::input::InputRequest;
use crate::outbound::Outbound;
use crate::registry::ToolEntry;

// ---------------------------------------------------------------------------------------------
// Settings
// ---------------------------------------------------------------------------------------------

/// How a server runs tasks.
#[derive(Debug, Clone)]
pub struct TaskConfig {
    /// Retention of a task whose request names no `ttl` (and of every 2026-07-28 task).
    pub default_ttl: Duration,
    /// The longest retention granted; a longer requested `ttl` is cut to it. Every task has
    /// a finite `ttl`, so that memory stays bounded.
    pub max_ttl: Duration,
    /// The polling interval suggested to clients (`pollInterval`/`pollIntervalMs`); also how
    /// often a waiting `tasks/result` re-reads a shared store.
    pub poll_interval: Duration,
    /// How many tasks the default in-memory store keeps; when it is full, the oldest
    /// finished tasks make room, and a task is refused only when every kept task still runs.
    pub max_tasks: usize,
    /// How many task handlers may run at once on this server (further task requests get an
    /// error).
    pub max_running: usize,
    /// How long a cancelled handler may go on running to notice its cancellation (its
    /// outcome is discarded) before it is dropped.
    pub cancel_grace: Duration,
    /// 2026-07-28: how long a task-capable tool runs inline before it becomes a task. A call
    /// that finishes (or asks the client a multi-round question) within it is answered as an
    /// ordinary request; zero (the default) hands over at the handler's first wait.
    pub immediate_window: Duration,
    /// Declare and answer `tasks/list` (2025-11-25). Tasks are bound to the connection that
    /// made them, so a listing never shows another session's tasks.
    pub list: bool,
    /// Offer the `io.modelcontextprotocol/tasks` extension to 2026-07-28 clients.
    pub extension: bool,
}

impl Default for TaskConfig {
    fn default() -> Self {
        Self {
            default_ttl: Duration::from_secs(30 * 60),
            max_ttl: Duration::from_secs(24 * 60 * 60),
            poll_interval: Duration::from_millis(500),
            max_tasks: 1000,
            max_running: 100,
            cancel_grace: Duration::from_secs(1),
            immediate_window: Duration::ZERO,
            list: true,
            extension: true,
        }
    }
}

/// Task settings of a server being built: the configuration and, optionally, a store other
/// than the default in-memory one.
#[derive(Clone, Default)]
pub struct TaskSettings {
    /// The configuration.
    pub config: TaskConfig,
    /// The store; `None` for an [`InMemoryTaskStore`] of [`TaskConfig::max_tasks`].
    pub store: Option<Arc<dyn TaskStore>>,
}

impl std::fmt::Debug for TaskSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskSettings")
            .field("config", &self.config)
            .field("store", &self.store.as_ref().map(|_| "custom"))
            .finish()
    }
}

// ---------------------------------------------------------------------------------------------
// Records and the store
// ---------------------------------------------------------------------------------------------

/// How a task ended: what its request returned, or the JSON-RPC error it failed with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", tag = "kind", content = "value")]
pub enum TaskOutcome {
    /// The request's result (a `CallToolResult` for `tools/call`).
    Result(Value),
    /// The request's JSON-RPC error.
    Error(ErrorObject),
}

/// Everything stored about one task. Serializable, so that a shared store (Redis, say) can
/// keep it as one value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskRecord {
    /// The task's id (128 random bits, hex).
    pub task_id: String,
    /// Creation order, assigned by the store; lists are in this order.
    pub seq: u64,
    /// The session the task belongs to (2025-11-25); `None` for 2026-07-28 tasks.
    pub owner: Option<String>,
    /// The revision of the request that created the task.
    pub revision: ProtocolVersion,
    /// The method of that request.
    pub method: String,
    /// Where the task is.
    pub status: TaskStatus,
    /// A word on the status.
    pub status_message: Option<String>,
    /// Creation time, milliseconds since the Unix epoch.
    pub created_at_ms: u64,
    /// Time of the last change, milliseconds since the Unix epoch.
    pub updated_at_ms: u64,
    /// Retention from creation; `None` for unlimited.
    pub ttl_ms: Option<u64>,
    /// Suggested polling interval.
    pub poll_interval_ms: Option<u64>,
    /// The outcome, once terminal (none for a cancelled task).
    pub outcome: Option<TaskOutcome>,
    /// Questions waiting for the client, by key (2026-07-28 `inputRequests`).
    pub input_requests: JsonObject,
    /// Answers received and not yet taken by the handler, by key.
    pub input_responses: JsonObject,
}

/// A change to a stored task. Stores apply it with [`TaskRecord::apply`], so that every
/// store enforces the same life cycle.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", tag = "change")]
pub enum TaskChange {
    /// A new non-terminal status (`working` or `input_required`) and message.
    Status {
        /// The status.
        status: TaskStatus,
        /// The message (`None` clears it).
        message: Option<String>,
    },
    /// A new status message, the status unchanged.
    Message {
        /// The message (`None` clears it).
        message: Option<String>,
    },
    /// The request finished: a terminal status (`completed` or `failed`) with its outcome.
    Finish {
        /// The terminal status.
        status: TaskStatus,
        /// What the request returned.
        outcome: TaskOutcome,
        /// The message.
        message: Option<String>,
    },
    /// The task is cancelled.
    Cancel {
        /// Why.
        message: Option<String>,
    },
    /// The handler asks the client: these questions join the outstanding ones and the task
    /// is `input_required`.
    Ask {
        /// The questions by key (`{method, params}` each).
        requests: JsonObject,
    },
    /// The client answers: answers to outstanding questions are kept, others ignored.
    Answer {
        /// The answers by key.
        responses: JsonObject,
    },
    /// The handler took these answers: their questions and answers are removed, and the task
    /// is `working` again once no question is left.
    Take {
        /// The keys taken.
        keys: Vec<String>,
    },
}

/// Why a store operation failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TaskStoreError {
    /// No such task (or it expired).
    #[error("Task not found")]
    NotFound,
    /// The task is terminal and the change needs a running task.
    #[error("already in terminal status '{0}'")]
    Terminal(TaskStatus),
    /// The store has no room: every task it keeps is still running.
    #[error("too many tasks; try again later")]
    Full,
    /// The store's backend failed.
    #[error("task store: {0}")]
    Backend(String),
}

/// The current time in milliseconds since the Unix epoch.
pub fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or_default()
}

impl TaskRecord {
    /// A new `working` task created now (the store assigns [`TaskRecord::seq`]).
    pub fn new(
        task_id: String,
        owner: Option<String>,
        revision: ProtocolVersion,
        method: &str,
        ttl: Option<Duration>,
        poll_interval: Option<Duration>,
    ) -> Self {
        let now = now_ms();
        Self {
            task_id,
            seq: 0,
            owner,
            revision,
            method: method.to_owned(),
            status: TaskStatus::Working,
            status_message: None,
            created_at_ms: now,
            updated_at_ms: now,
            ttl_ms: ttl.map(|d| d.as_millis() as u64),
            poll_interval_ms: poll_interval.map(|d| d.as_millis() as u64),
            outcome: None,
            input_requests: JsonObject::new(),
            input_responses: JsonObject::new(),
        }
    }

    /// When the task may be forgotten (creation plus `ttl`), if ever.
    pub fn expires_at_ms(&self) -> Option<u64> {
        self.ttl_ms.map(|ttl| self.created_at_ms.saturating_add(ttl))
    }

    /// Whether the task's retention has elapsed at `now`.
    pub fn is_expired(&self, now: u64) -> bool {
        self.expires_at_ms().is_some_and(|e| e <= now)
    }

    /// The task as the protocol shows it. `detailed` adds what 2026-07-28 inlines: the
    /// outstanding questions of an `input_required` task, the result of a `completed` one,
    /// the error of a `failed` one.
    pub fn to_task(&self, detailed: bool) -> Task {
        let mut task = Task {
            task_id: self.task_id.clone(),
            status: self.status,
            status_message: self.status_message.clone(),
            created_at: mcp_protocol::types::iso8601_from_unix_ms(self.created_at_ms),
            last_updated_at: mcp_protocol::types::iso8601_from_unix_ms(self.updated_at_ms),
            ttl_ms: self.ttl_ms,
            poll_interval_ms: self.poll_interval_ms,
            input_requests: None,
            result: None,
            error: None,
        };
        if detailed {
            match (self.status, &self.outcome) {
                (TaskStatus::InputRequired, _) => {
                    // Only the questions still waiting: an answered one leaves the list even
                    // while the handler waits for the others.
                    let waiting = self.input_requests.iter().filter(|(k, _)| !self.input_responses.contains_key(*k));
                    task.input_requests = Some(waiting.map(|(k, v)| (k.clone(), v.clone())).collect())
                }
                (TaskStatus::Completed, Some(TaskOutcome::Result(r))) => task.result = Some(r.clone()),
                (TaskStatus::Failed, Some(TaskOutcome::Error(e))) => task.error = Some(e.clone()),
                (TaskStatus::Failed, Some(TaskOutcome::Result(r))) => {
                    // A legacy failure (a tool result with isError) seen through a modern
                    // lens: the request did return a result.
                    task.result = Some(r.clone())
                }
                _ => {}
            }
        }
        task
    }

    /// Applies a change at time `now`, enforcing the life cycle: a terminal task never
    /// changes again ([`TaskStoreError::Terminal`]), except that answers to a finished task
    /// are ignored rather than refused.
    pub fn apply(&mut self, change: TaskChange, now: u64) -> Result<(), TaskStoreError> {
        if self.status.is_terminal() {
            return match change {
                TaskChange::Answer { .. } | TaskChange::Take { .. } => Ok(()),
                _ => Err(TaskStoreError::Terminal(self.status)),
            };
        }
        match change {
            TaskChange::Status { status, message } => {
                if status.is_terminal() {
                    return Err(TaskStoreError::Backend(format!("status {status} needs an outcome")));
                }
                self.status = status;
                self.status_message = message;
            }
            TaskChange::Message { message } => self.status_message = message,
            TaskChange::Finish { status, outcome, message } => {
                if !matches!(status, TaskStatus::Completed | TaskStatus::Failed) {
                    return Err(TaskStoreError::Backend(format!("a task cannot finish as {status}")));
                }
                self.status = status;
                self.outcome = Some(outcome);
                self.status_message = message;
                self.input_requests.clear();
                self.input_responses.clear();
            }
            TaskChange::Cancel { message } => {
                self.status = TaskStatus::Cancelled;
                self.status_message = message;
                self.input_requests.clear();
                self.input_responses.clear();
            }
            TaskChange::Ask { requests } => {
                self.input_requests.extend(requests);
                self.status = TaskStatus::InputRequired;
            }
            TaskChange::Answer { responses } => {
                for (key, answer) in responses {
                    if self.input_requests.contains_key(&key) {
                        self.input_responses.insert(key, answer);
                    }
                }
            }
            TaskChange::Take { keys } => {
                for key in &keys {
                    self.input_requests.remove(key);
                    self.input_responses.remove(key);
                }
                if self.input_requests.is_empty() && self.status == TaskStatus::InputRequired {
                    self.status = TaskStatus::Working;
                    self.status_message = None;
                }
            }
        }
        self.updated_at_ms = now.max(self.updated_at_ms);
        Ok(())
    }
}

/// One page of a listing: the tasks after a position, and where the next page starts.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TaskPage {
    /// The tasks, in creation order.
    pub tasks: Vec<TaskRecord>,
    /// The [`TaskRecord::seq`] to list after for the next page, if there is more.
    pub next_after: Option<u64>,
}

/// Where tasks are kept.
///
/// Methods return boxed futures so that the trait can be used as `Arc<dyn TaskStore>` and
/// implemented over a network store. A task whose `ttl` elapsed is gone: `get` does not
/// find it and `list` does not show it. Implementations apply changes with
/// [`TaskRecord::apply`], atomically per task.
pub trait TaskStore: Send + Sync + 'static {
    /// Stores a new task and returns it with its creation order ([`TaskRecord::seq`]) set.
    /// When this returns, `get` finds the task.
    fn create(&self, record: TaskRecord) -> BoxFuture<'_, Result<TaskRecord, TaskStoreError>>;

    /// The task, unless it is unknown or expired.
    fn get<'a>(&'a self, task_id: &'a str) -> BoxFuture<'a, Result<Option<TaskRecord>, TaskStoreError>>;

    /// Applies a change and returns the task as it is afterwards.
    fn update<'a>(&'a self, task_id: &'a str, change: TaskChange) -> BoxFuture<'a, Result<TaskRecord, TaskStoreError>>;

    /// Up to `limit` tasks of `owner` (exactly: `None` lists the tasks without an owner)
    /// created after position `after` (a [`TaskRecord::seq`]), oldest first.
    fn list<'a>(
        &'a self,
        owner: Option<&'a str>,
        after: Option<u64>,
        limit: usize,
    ) -> BoxFuture<'a, Result<TaskPage, TaskStoreError>>;

    /// Forgets every task whose `ttl` elapsed; returns how many.
    fn purge_expired(&self) -> BoxFuture<'_, Result<usize, TaskStoreError>>;

    /// Sets a running task's status (`working` or `input_required`) and message.
    fn update_status<'a>(
        &'a self,
        task_id: &'a str,
        status: TaskStatus,
        message: Option<String>,
    ) -> BoxFuture<'a, Result<TaskRecord, TaskStoreError>> {
        self.update(task_id, TaskChange::Status { status, message })
    }

    /// Stores the outcome of a finished task (`completed` or `failed`). A task cancelled
    /// meanwhile stays cancelled ([`TaskStoreError::Terminal`]).
    fn store_outcome<'a>(
        &'a self,
        task_id: &'a str,
        status: TaskStatus,
        outcome: TaskOutcome,
        message: Option<String>,
    ) -> BoxFuture<'a, Result<TaskRecord, TaskStoreError>> {
        self.update(task_id, TaskChange::Finish { status, outcome, message })
    }

    /// Cancels a task; [`TaskStoreError::Terminal`] if it already finished.
    fn cancel<'a>(
        &'a self,
        task_id: &'a str,
        message: Option<String>,
    ) -> BoxFuture<'a, Result<TaskRecord, TaskStoreError>> {
        self.update(task_id, TaskChange::Cancel { message })
    }
}

/// A [`TaskStore`] in this process's memory, bounded: at most `max_tasks` tasks. When it is
/// full, expired tasks go first, then the oldest finished ones; a new task is refused
/// ([`TaskStoreError::Full`]) only when every kept task is still running. Expired tasks
/// are dropped as soon as any operation notices them (cheaply: expiries are kept ordered).
pub struct InMemoryTaskStore {
    max_tasks: usize,
    state: Mutex<MemoryState>,
}

#[derive(Default)]
struct MemoryState {
    tasks: HashMap<String, TaskRecord>,
    order: BTreeMap<u64, String>,
    expiries: BTreeSet<(u64, String)>,
    next_seq: u64,
}

impl MemoryState {
    fn remove(&mut self, task_id: &str) -> Option<TaskRecord> {
        let record = self.tasks.remove(task_id)?;
        self.order.remove(&record.seq);
        if let Some(e) = record.expires_at_ms() {
            self.expiries.remove(&(e, record.task_id.clone()));
        }
        Some(record)
    }

    fn purge(&mut self, now: u64) -> usize {
        let mut n = 0;
        while let Some((at, id)) = self.expiries.first().cloned() {
            if at > now {
                break;
            }
            self.expiries.pop_first();
            if let Some(record) = self.tasks.remove(&id) {
                self.order.remove(&record.seq);
                n += 1;
            }
        }
        n
    }
}

impl InMemoryTaskStore {
    /// A store keeping at most `max_tasks` tasks.
    pub fn new(max_tasks: usize) -> Self {
        Self { max_tasks: max_tasks.max(1), state: Mutex::default() }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, MemoryState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// How many tasks are kept now (expired ones included until noticed).
    pub fn len(&self) -> usize {
        self.state().tasks.len()
    }

    /// Whether no task is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn create_now(&self, mut record: TaskRecord) -> Result<TaskRecord, TaskStoreError> {
        let mut s = self.state();
        s.purge(now_ms());
        if s.tasks.contains_key(&record.task_id) {
            return Err(TaskStoreError::Backend("duplicate task id".into()));
        }
        if s.tasks.len() >= self.max_tasks {
            let oldest_finished =
                s.order.values().find(|id| s.tasks.get(*id).is_some_and(|r| r.status.is_terminal())).cloned();
            match oldest_finished {
                Some(id) => {
                    s.remove(&id);
                }
                None => return Err(TaskStoreError::Full),
            }
        }
        s.next_seq += 1;
        record.seq = s.next_seq;
        s.order.insert(record.seq, record.task_id.clone());
        if let Some(e) = record.expires_at_ms() {
            s.expiries.insert((e, record.task_id.clone()));
        }
        s.tasks.insert(record.task_id.clone(), record.clone());
        Ok(record)
    }

    fn update_now(&self, task_id: &str, change: TaskChange) -> Result<TaskRecord, TaskStoreError> {
        let now = now_ms();
        let mut s = self.state();
        s.purge(now);
        let record = s.tasks.get_mut(task_id).ok_or(TaskStoreError::NotFound)?;
        record.apply(change, now)?;
        Ok(record.clone())
    }

    fn list_now(&self, owner: Option<&str>, after: Option<u64>, limit: usize) -> TaskPage {
        let mut s = self.state();
        s.purge(now_ms());
        let limit = limit.max(1);
        let start = after.map_or(0, |a| a.saturating_add(1));
        let mut tasks = Vec::new();
        let mut more = false;
        for id in s.order.range(start..).map(|(_, id)| id) {
            let Some(record) = s.tasks.get(id) else { continue };
            if record.owner.as_deref() != owner {
                continue;
            }
            if tasks.len() == limit {
                more = true;
                break;
            }
            tasks.push(record.clone());
        }
        let next_after = if more { tasks.last().map(|r| r.seq) } else { None };
        TaskPage { tasks, next_after }
    }
}

impl std::fmt::Debug for InMemoryTaskStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InMemoryTaskStore").field("max_tasks", &self.max_tasks).field("len", &self.len()).finish()
    }
}

impl TaskStore for InMemoryTaskStore {
    fn create(&self, record: TaskRecord) -> BoxFuture<'_, Result<TaskRecord, TaskStoreError>> {
        let created = self.create_now(record);
        Box::pin(async move { created })
    }

    fn get<'a>(&'a self, task_id: &'a str) -> BoxFuture<'a, Result<Option<TaskRecord>, TaskStoreError>> {
        let found = {
            let mut s = self.state();
            s.purge(now_ms());
            s.tasks.get(task_id).cloned()
        };
        Box::pin(async move { Ok(found) })
    }

    fn update<'a>(&'a self, task_id: &'a str, change: TaskChange) -> BoxFuture<'a, Result<TaskRecord, TaskStoreError>> {
        let updated = self.update_now(task_id, change);
        Box::pin(async move { updated })
    }

    fn list<'a>(
        &'a self,
        owner: Option<&'a str>,
        after: Option<u64>,
        limit: usize,
    ) -> BoxFuture<'a, Result<TaskPage, TaskStoreError>> {
        let page = self.list_now(owner, after, limit);
        Box::pin(async move { Ok(page) })
    }

    fn purge_expired(&self) -> BoxFuture<'_, Result<usize, TaskStoreError>> {
        let n = self.state().purge(now_ms());
        Box::pin(async move { Ok(n) })
    }
}

// ---------------------------------------------------------------------------------------------
// The runtime
// ---------------------------------------------------------------------------------------------

/// A task handler running on this server.
struct Running {
    cancel: CancellationToken,
    /// Where its status notifications go (2025-11-25: the connection that owns it).
    notify: Option<(Outbound, ProtocolVersion)>,
}

/// The server's task machinery: the store, the running handlers, and a channel that says
/// which task changed (for waiters).
pub(crate) struct TaskRuntime {
    pub(crate) store: Arc<dyn TaskStore>,
    pub(crate) config: TaskConfig,
    running: Mutex<HashMap<String, Running>>,
    changed: broadcast::Sender<String>,
}

/// 128 random bits as hex: task ids and session owner keys.
pub(crate) fn random_id() -> String {
    format!("{:032x}", rand::random::<u128>())
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn store_error(e: TaskStoreError) -> ErrorObject {
    match e {
        TaskStoreError::NotFound => ErrorObject::invalid_params("Failed to retrieve task: Task not found"),
        TaskStoreError::Terminal(status) => {
            ErrorObject::invalid_params(format!("Cannot cancel task: already in terminal status '{status}'"))
        }
        other => ErrorObject::internal(other),
    }
}

fn missing_extension() -> ErrorObject {
    ErrorObject::new(
        MISSING_REQUIRED_CLIENT_CAPABILITY,
        format!("Missing required client capability: the extension {TASKS_EXTENSION}"),
    )
    .with_data(json!({"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}}))
}

impl TaskRuntime {
    pub(crate) fn new(settings: TaskSettings) -> Self {
        let store = settings.store.unwrap_or_else(|| Arc::new(InMemoryTaskStore::new(settings.config.max_tasks)));
        let (changed, _) = broadcast::channel(256);
        Self { store, config: settings.config, running: Mutex::default(), changed }
    }

    /// The `tasks` capability of 2025-11-25.
    pub(crate) fn capability(&self) -> JsonObject {
        let mut caps = JsonObject::new();
        if self.config.list {
            caps.insert("list".into(), json!({}));
        }
        caps.insert("cancel".into(), json!({}));
        caps.insert("requests".into(), json!({"tools": {"call": {}}}));
        caps
    }

    /// The `extensions` capability entries of 2026-07-28.
    pub(crate) fn extensions(&self) -> Option<JsonObject> {
        self.config.extension.then(|| JsonObject::from_iter([(TASKS_EXTENSION.to_owned(), json!({}))]))
    }

    fn ttl(&self, requested_ms: Option<u64>) -> Duration {
        requested_ms.map(Duration::from_millis).unwrap_or(self.config.default_ttl).min(self.config.max_ttl)
    }

    /// Applies a change, then tells waiters and (2025-11-25) the owning client when the
    /// status changed.
    async fn apply(&self, task_id: &str, change: TaskChange) -> Result<TaskRecord, TaskStoreError> {
        // Only status changes are announced (a new message or answer is not one).
        let announced = !matches!(change, TaskChange::Message { .. } | TaskChange::Answer { .. });
        let record = self.store.update(task_id, change).await?;
        let _ = self.changed.send(record.task_id.clone());
        if announced {
            self.announce(&record).await;
        }
        Ok(record)
    }

    /// Sends `notifications/tasks/status` to the connection that owns a running task.
    async fn announce(&self, record: &TaskRecord) {
        let notify = lock(&self.running).get(&record.task_id).and_then(|r| r.notify.clone());
        if let Some((outbound, rev)) = notify {
            let params = serde_json::to_value(record.to_task(false)).unwrap_or_default();
            outbound.notify("notifications/tasks/status", params, rev).await;
        }
    }

    /// The task of `owner`, or the `-32602` of an unknown one.
    async fn find(&self, task_id: &str, owner: Option<&str>) -> Result<TaskRecord, ErrorObject> {
        match self.store.get(task_id).await.map_err(store_error)? {
            Some(r) if r.owner.as_deref() == owner => Ok(r),
            _ => Err(store_error(TaskStoreError::NotFound)),
        }
    }

    /// Cancels a task: its status first (it is `cancelled` before the answer goes out), then
    /// its handler.
    async fn cancel(&self, task_id: &str, message: &str) -> Result<TaskRecord, TaskStoreError> {
        let record = self.apply(task_id, TaskChange::Cancel { message: Some(message.to_owned()) }).await?;
        let token = lock(&self.running).get(task_id).map(|r| r.cancel.clone());
        if let Some(token) = token {
            token.cancel();
        }
        Ok(record)
    }

    /// Waits until the task is terminal (or gone).
    async fn wait_terminal(&self, task_id: &str, owner: Option<&str>) -> Result<TaskRecord, ErrorObject> {
        let mut changes = self.changed.subscribe();
        loop {
            let record = self.find(task_id, owner).await?;
            if record.status.is_terminal() {
                return Ok(record);
            }
            // The broadcast says when a task of this instance changed; the timer catches
            // changes made elsewhere (a shared store) and lagged receivers.
            tokio::select! {
                _ = changes.recv() => {}
                _ = tokio::time::sleep(self.config.poll_interval) => {}
            }
        }
    }
}

/// The link from a handler's [`Context`] to the task it runs as.
pub(crate) struct TaskLink {
    pub(crate) id: String,
    runtime: Arc<TaskRuntime>,
    pub(crate) modern: bool,
    /// Keys of questions asked so far: a 2026-07-28 key is never used twice in a task.
    keys: Mutex<HashSet<String>>,
}

impl TaskLink {
    fn unique_key(&self, key: &str) -> String {
        let mut keys = lock(&self.keys);
        let mut candidate = key.to_owned();
        let mut n = 1;
        while !keys.insert(candidate.clone()) {
            n += 1;
            candidate = format!("{key}-{n}");
        }
        candidate
    }
}

/// The `_meta` that ties a message to a task.
pub(crate) fn related_task_meta(task_id: &str) -> Value {
    json!({ RELATED_TASK_META: RelatedTaskMetadata { task_id: task_id.to_owned() } })
}

// ---------------------------------------------------------------------------------------------
// tools/call as a task
// ---------------------------------------------------------------------------------------------

/// How a `tools/call` runs.
pub(crate) enum ToolPlan {
    /// As an ordinary request.
    Inline,
    /// 2025-11-25: as the task the client asked for, with the `ttl` it asked for.
    LegacyTask(Option<u64>),
    /// 2026-07-28, for a client that declared the extension: inline at first (multi-round
    /// questions and quick answers stay ordinary), then as a task once it has to wait.
    Modern(TaskSupport),
}

/// How this `tools/call` runs, or the error for the wrong mode.
pub(crate) fn plan_tool_call(
    runtime: Option<&Arc<TaskRuntime>>,
    scope: &RequestScope,
    tool: &Tool,
    task: Option<&mcp_protocol::types::TaskMetadata>,
) -> Result<ToolPlan, ErrorObject> {
    let Some(runtime) = runtime else { return Ok(ToolPlan::Inline) };
    let support = tool.task_support();
    if scope.revision == ProtocolVersion::V2025_11_25 {
        return match (task, support) {
            (Some(_), TaskSupport::Forbidden) => Err(ErrorObject::method_not_found(&format!(
                "tools/call: tool {} does not support task-augmented execution",
                tool.name
            ))),
            (Some(m), _) => Ok(ToolPlan::LegacyTask(m.ttl)),
            (None, TaskSupport::Required) => Err(ErrorObject::method_not_found(&format!(
                "tools/call: tool {} requires task-augmented execution (params.task)",
                tool.name
            ))),
            (None, _) => Ok(ToolPlan::Inline),
        };
    }
    if scope.revision.is_modern() && runtime.config.extension {
        // A `params.task` of the 2025-11-25 shape means nothing here: the server decides.
        return match (support, client_declares_extension(scope)) {
            (TaskSupport::Forbidden, _) => Ok(ToolPlan::Inline),
            (support, true) => Ok(ToolPlan::Modern(support)),
            (TaskSupport::Required, false) => Err(missing_extension()),
            (TaskSupport::Optional, false) => Ok(ToolPlan::Inline),
        };
    }
    // Revisions without tasks (and servers that turned the extension off) run every tool inline.
    Ok(ToolPlan::Inline)
}

fn client_declares_extension(scope: &RequestScope) -> bool {
    scope.capabilities.extensions.as_ref().is_some_and(|e| e.contains_key(TASKS_EXTENSION))
}

/// The cancellation token a request's handler gets. A 2026-07-28 `tools/call` that may
/// become a task gets its own token (the request's would end with the request, and the
/// handler may outlive it): [`run_modern_tool`] cancels it if the request is cancelled before
/// the hand-over, and `tasks/cancel` after.
pub(crate) fn handler_token(
    server: &crate::Server,
    req: &Request,
    scope: &RequestScope,
    request_token: &CancellationToken,
) -> CancellationToken {
    let may_become_task = req.method == "tools/call"
        && scope.revision.is_modern()
        && server.inner.tasks.as_ref().is_some_and(|t| t.config.extension)
        && client_declares_extension(scope)
        && json::param(req.params.as_ref(), "name").and_then(Value::as_str).is_some_and(|name| {
            server
                .inner
                .tools
                .with_all(|tools| tools.get(name).is_some_and(|e| e.tool.task_support() != TaskSupport::Forbidden))
        });
    if may_become_task {
        CancellationToken::new()
    } else {
        request_token.clone()
    }
}

/// Who owns the tasks a request makes and sees: the connection in the legacy era, nobody
/// in the modern one.
fn owner(state: &ConnectionState, scope: &RequestScope) -> Option<String> {
    (!scope.revision.is_modern()).then(|| state.task_owner().to_owned())
}

/// A handler's work as a task runs it: its result, or the panic it died of.
type TaskWork = futures::future::BoxFuture<'static, std::thread::Result<HandlerResult<CallToolResult>>>;

fn tool_work(entry: std::sync::Arc<ToolEntry>, arguments: JsonObject, ctx: Context) -> TaskWork {
    Box::pin(AssertUnwindSafe(crate::methods::call_tool_handler(entry, arguments, ctx)).catch_unwind())
}

/// Stores a new `working` task for a request, or the error to answer.
async fn create_task(
    runtime: &TaskRuntime,
    state: &ConnectionState,
    req: &Request,
    scope: &RequestScope,
    requested_ttl: Option<u64>,
) -> Result<TaskRecord, ErrorObject> {
    if lock(&runtime.running).len() >= runtime.config.max_running {
        return Err(ErrorObject::internal("too many running tasks; try again later"));
    }
    let record = TaskRecord::new(
        random_id(),
        owner(state, scope),
        scope.revision,
        &req.method,
        Some(runtime.ttl(requested_ttl)),
        Some(runtime.config.poll_interval),
    );
    runtime.store.create(record).await.map_err(store_error)
}

fn created(record: &TaskRecord) -> Result<Value, ErrorObject> {
    serde_json::to_value(CreateTaskResult { task: record.to_task(false), meta: None }).map_err(ErrorObject::internal)
}

/// 2025-11-25: creates the task the client asked for, starts the handler in the background
/// and returns the `CreateTaskResult` (shaped for the revision by the codec).
pub(crate) async fn start_tool_task(
    state: &Arc<ConnectionState>,
    req: &Request,
    scope: &RequestScope,
    ctx: &Context,
    entry: std::sync::Arc<ToolEntry>,
    arguments: JsonObject,
    requested_ttl: Option<u64>,
) -> Result<Value, ErrorObject> {
    let server = &state.server.inner;
    let runtime = server.tasks.clone().ok_or_else(|| ErrorObject::internal("tasks are not enabled"))?;
    let record = create_task(&runtime, state, req, scope, requested_ttl).await?;
    let task_id = record.task_id.clone();
    // The handler outlives the request and ends with its session; its messages go to the
    // connection (the request's own stream, if any, ends with the answer).
    let cancel = state.tasks_end.child_token();
    let outbound = state.outbound.clone();
    let link =
        Arc::new(TaskLink { id: task_id.clone(), runtime: runtime.clone(), modern: false, keys: Mutex::default() });
    let job_ctx = Context::new(ContextParts {
        request_id: req.id.clone(),
        revision: scope.revision,
        client_capabilities: scope.capabilities.clone(),
        client_info: scope.client_info.clone(),
        // The request's progress token stays valid for the task's life.
        progress_token: ctx.parts.progress_token.clone(),
        log: scope.log.clone(),
        logging_enabled: server.config.logging,
        cancel: cancel.clone(),
        outbound: outbound.clone(),
        request_timeout: server.config.request_timeout,
        round: None,
        task: OnceLock::from(link),
    });
    lock(&runtime.running).insert(task_id.clone(), Running { cancel, notify: Some((outbound, scope.revision)) });
    let work = tool_work(entry, arguments, job_ctx.clone());
    tokio::spawn(run_task(runtime, task_id, work, job_ctx, record.ttl_ms));
    created(&record)
}

/// Cancels a token when dropped, unless disarmed: a request cancelled before its handler was
/// handed to a task cancels the handler's own token.
struct CancelOnDrop(Option<CancellationToken>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if let Some(token) = self.0.take() {
            token.cancel();
        }
    }
}

/// 2026-07-28, the client having declared the extension: runs the handler inline for the
/// configured immediate window ([`TaskConfig::immediate_window`]). A handler that finishes
/// or asks questions (multi-round `input_required`) within it answers as an ordinary
/// request; one still running is handed to a new task and the answer is the
/// `CreateTaskResult` (`resultType: "task"`). A `required` tool that finished at once still
/// answers with a task, already terminal. After the hand-over, the handler's questions become
/// the task's `inputRequests`.
pub(crate) async fn run_modern_tool(
    state: &Arc<ConnectionState>,
    req: &Request,
    scope: &RequestScope,
    ctx: &Context,
    entry: std::sync::Arc<ToolEntry>,
    arguments: JsonObject,
    support: TaskSupport,
) -> Result<Value, ErrorObject> {
    let runtime = state.server.inner.tasks.clone().ok_or_else(|| ErrorObject::internal("tasks are not enabled"))?;
    let mut guard = CancelOnDrop(Some(ctx.cancellation().clone()));
    let mut work = tool_work(entry, arguments, ctx.clone());
    let window = runtime.config.immediate_window;
    let early = if window.is_zero() {
        // Exactly one poll: the hand-over happens at the handler's first wait, however soon
        // that wait would end (the task's runner polls the future again at once).
        match futures::poll!(&mut work) {
            std::task::Poll::Ready(finished) => Some(finished),
            std::task::Poll::Pending => None,
        }
    } else {
        tokio::time::timeout(window, &mut work).await.ok()
    };
    let finished = match early {
        Some(finished) => finished,
        None => {
            let record = create_task(&runtime, state, req, scope, None).await?;
            let task_id = record.task_id.clone();
            let link = Arc::new(TaskLink {
                id: task_id.clone(),
                runtime: runtime.clone(),
                modern: true,
                keys: Mutex::default(),
            });
            let _ = ctx.parts.task.set(link);
            let cancel = ctx.cancellation().clone();
            lock(&runtime.running).insert(task_id.clone(), Running { cancel, notify: None });
            guard.0 = None;
            tokio::spawn(run_task(runtime, task_id, work, ctx.clone(), record.ttl_ms));
            return created(&record);
        }
    };
    guard.0 = None;
    let result = finished.unwrap_or_else(|_panic| {
        tracing::error!(tool = %req.method, "a tool handler panicked");
        Err(HandlerError::Protocol(ErrorObject::internal("the tool failed unexpectedly")))
    });
    let asks = matches!(result, Err(HandlerError::InputRequired));
    if support != TaskSupport::Required || asks {
        return crate::methods::outcome(state, req, ctx, result, scope.revision);
    }
    // A task-only tool that finished at once: a task, born terminal.
    let record = create_task(&runtime, state, req, scope, None).await?;
    let record =
        runtime.store.update(&record.task_id, finish_change(Ok(result), scope.revision)).await.map_err(store_error)?;
    created(&record)
}

/// The first text block of a tool result (the reason of a failure).
fn first_text(result: &CallToolResult) -> Option<String> {
    result.content.iter().find_map(|c| c.as_text()).map(str::to_owned)
}

/// The change that records how a handler ended.
fn finish_change(finished: std::thread::Result<HandlerResult<CallToolResult>>, rev: ProtocolVersion) -> TaskChange {
    let failure = |error: ErrorObject| {
        let message = Some(error.message.clone());
        TaskChange::Finish { status: TaskStatus::Failed, outcome: TaskOutcome::Error(error), message }
    };
    match finished {
        Ok(Ok(result)) => {
            // 2025-11-25: a tool result with isError fails the task; 2026-07-28: only a
            // JSON-RPC error does (the result is then the task's `result`).
            let failed = !rev.is_modern() && result.is_error == Some(true);
            let message =
                if failed { first_text(&result).map(|t| format!("Tool execution failed: {t}")) } else { None };
            let value = serde_json::to_value(&result).unwrap_or_default();
            let status = if failed { TaskStatus::Failed } else { TaskStatus::Completed };
            TaskChange::Finish { status, outcome: TaskOutcome::Result(value), message }
        }
        Ok(Err(e)) => failure(crate::methods::protocol_error(e, rev)),
        Err(_panic) => failure(ErrorObject::internal("the tool failed unexpectedly")),
    }
}

/// Resolves when the stored task ended while its handler still runs (cancelled through
/// another instance sharing the store) or is gone (purged); checked every poll interval.
async fn ended_in_store(runtime: &TaskRuntime, task_id: &str) {
    loop {
        tokio::time::sleep(runtime.config.poll_interval).await;
        match runtime.store.get(task_id).await {
            Ok(Some(record)) if !record.status.is_terminal() => {}
            Ok(_) => return,
            Err(e) => tracing::debug!(task = %task_id, "reading a running task failed: {e}"),
        }
    }
}

/// Runs a task's handler to its end (or its cancellation, or its ttl) and stores the outcome.
async fn run_task(runtime: Arc<TaskRuntime>, task_id: String, mut work: TaskWork, ctx: Context, ttl_ms: Option<u64>) {
    let cancel = ctx.cancellation().clone();
    let rev = ctx.revision();
    let ttl = async {
        match ttl_ms {
            Some(ms) => tokio::time::sleep(Duration::from_millis(ms)).await,
            None => std::future::pending().await,
        }
    };
    let mut expired = false;
    let finished = tokio::select! {
        r = &mut work => Some(r),
        _ = cancel.cancelled() => None,
        _ = ttl => {
            expired = true;
            cancel.cancel();
            None
        }
        _ = ended_in_store(&runtime, &task_id) => {
            cancel.cancel();
            None
        }
    };
    if finished.is_none() {
        // Let the handler see its cancellation; whatever it returns is discarded.
        let _ = tokio::time::timeout(runtime.config.cancel_grace, &mut work).await;
    }
    ctx.finish();
    let change = match finished {
        Some(finished) => {
            if finished.is_err() {
                tracing::error!(task = %task_id, "a task handler panicked");
            }
            finish_change(finished, rev)
        }
        // Cancelled by request (already recorded: this is then refused), elsewhere, or
        // because the session ended.
        None if !expired => TaskChange::Cancel { message: Some("The session that owned the task ended.".into()) },
        None => {
            let error = ErrorObject::internal("the task's ttl elapsed before it finished");
            let message = Some(error.message.clone());
            TaskChange::Finish { status: TaskStatus::Failed, outcome: TaskOutcome::Error(error), message }
        }
    };
    match runtime.apply(&task_id, change).await {
        Ok(_) | Err(TaskStoreError::Terminal(_)) | Err(TaskStoreError::NotFound) => {}
        Err(e) => tracing::warn!(task = %task_id, "storing the outcome of a task failed: {e}"),
    }
    lock(&runtime.running).remove(&task_id);
}

// ---------------------------------------------------------------------------------------------
// tasks/* methods
// ---------------------------------------------------------------------------------------------

fn task_params<T: serde::de::DeserializeOwned>(req: &Request) -> Result<T, ErrorObject> {
    serde_json::from_value(req.params.clone().unwrap_or_else(|| json!({})))
        .map_err(|e| ErrorObject::invalid_params(format!("{}: {e}", req.method)))
}

fn to_value<T: Serialize>(v: T) -> Result<Value, ErrorObject> {
    serde_json::to_value(v).map_err(ErrorObject::internal)
}

/// Answers `tasks/get`, `tasks/result`, `tasks/list`, `tasks/cancel` and `tasks/update`.
/// (Which revision has which is decided before, by the connection.)
pub(crate) async fn dispatch(
    state: &Arc<ConnectionState>,
    req: &Request,
    scope: &RequestScope,
) -> Result<Value, ErrorObject> {
    let not_offered = || ErrorObject::method_not_found(&req.method);
    let runtime = state.server.inner.tasks.clone().ok_or_else(not_offered)?;
    let modern = scope.revision.is_modern();
    if modern {
        if !runtime.config.extension {
            return Err(not_offered());
        }
        if !client_declares_extension(scope) {
            return Err(missing_extension());
        }
    }
    let owner = owner(state, scope);
    let owner = owner.as_deref();
    match req.method.as_str() {
        "tasks/get" => {
            let p: TaskIdParams = task_params(req)?;
            let record = runtime.find(&p.task_id, owner).await?;
            to_value(record.to_task(modern))
        }
        "tasks/result" => {
            let p: TaskIdParams = task_params(req)?;
            let record = runtime.wait_terminal(&p.task_id, owner).await?;
            match record.outcome {
                Some(TaskOutcome::Result(mut value)) => {
                    if let Value::Object(obj) = &mut value {
                        let meta = obj.entry("_meta").or_insert_with(|| json!({}));
                        if let Value::Object(meta) = meta {
                            if let Value::Object(related) = related_task_meta(&record.task_id) {
                                meta.extend(related);
                            }
                        }
                    }
                    Ok(value)
                }
                Some(TaskOutcome::Error(e)) => Err(e),
                None => {
                    Err(ErrorObject::invalid_params(format!("Task {} was cancelled: it has no result", record.task_id)))
                }
            }
        }
        "tasks/list" => {
            if !runtime.config.list {
                return Err(not_offered());
            }
            let p: mcp_protocol::types::PaginatedParams = task_params(req)?;
            let cursors = &state.server.inner.cursors;
            // A cursor names the last task listed (its creation order), sealed and bound to
            // the listing session: new tasks never make it stale, and it means nothing to
            // another session.
            let scope_fp = fingerprint(["tasks/list", owner.unwrap_or("")]);
            let after = match p.cursor.as_deref() {
                None => None,
                Some(c) => Some(cursors.decode(c, scope_fp).map_err(ErrorObject::invalid_params)? as u64),
            };
            let page_size = state.server.inner.config.page_size;
            let page = runtime.store.list(owner, after, page_size).await.map_err(store_error)?;
            let next_cursor = page.next_after.map(|seq| cursors.encode(seq as usize, scope_fp));
            to_value(ListTasksResult { tasks: page.tasks.iter().map(|r| r.to_task(false)).collect(), next_cursor })
        }
        "tasks/cancel" => {
            let p: TaskIdParams = task_params(req)?;
            let record = runtime.find(&p.task_id, owner).await?;
            if modern {
                // An acknowledgement: cancellation is cooperative, and a finished task stays
                // as it is.
                if !record.status.is_terminal() {
                    match runtime.cancel(&record.task_id, "The task was cancelled by request.").await {
                        Ok(_) | Err(TaskStoreError::Terminal(_)) => {}
                        Err(e) => return Err(store_error(e)),
                    }
                }
                return Ok(json!({}));
            }
            if record.status.is_terminal() {
                return Err(store_error(TaskStoreError::Terminal(record.status)));
            }
            let record =
                runtime.cancel(&record.task_id, "The task was cancelled by request.").await.map_err(store_error)?;
            to_value(record.to_task(false))
        }
        "tasks/update" => {
            let p: UpdateTaskParams = task_params(req)?;
            let record = runtime.find(&p.task_id, owner).await?;
            let mut accepted = Map::new();
            for (key, answer) in p.input_responses {
                // Answers to unknown or already answered questions are ignored; an answer of
                // the wrong shape to an outstanding one is refused.
                let Some(method) =
                    record.input_requests.get(&key).and_then(|r| r.get("method")).and_then(Value::as_str)
                else {
                    continue;
                };
                if !crate::input::answer_fits(method, &answer) {
                    return Err(ErrorObject::invalid_params(format!(
                        "tasks/update: the answer to {key:?} is not a valid {method} result"
                    )));
                }
                accepted.insert(key, answer);
            }
            if !accepted.is_empty() {
                match runtime.apply(&record.task_id, TaskChange::Answer { responses: accepted }).await {
                    Ok(_) | Err(TaskStoreError::Terminal(_)) => {}
                    Err(e) => return Err(store_error(e)),
                }
            }
            Ok(json!({}))
        }
        _ => Err(not_offered()),
    }
}

// ---------------------------------------------------------------------------------------------
// What a handler running as a task can do
// ---------------------------------------------------------------------------------------------

/// Asks the client questions from a task's handler. 2025-11-25: real requests on the
/// connection, tagged with the task, while the task is `input_required`. 2026-07-28: the
/// questions become the task's `inputRequests`, and the handler waits for `tasks/update`.
pub(crate) async fn ask(
    ctx: &Context,
    link: &TaskLink,
    questions: Vec<(String, InputRequest)>,
) -> Result<HashMap<String, Value>, HandlerError> {
    let runtime = &link.runtime;
    if !link.modern {
        let waiting = TaskChange::Status {
            status: TaskStatus::InputRequired,
            message: Some("Waiting for the client's answer.".into()),
        };
        let _ = runtime.apply(&link.id, waiting).await;
        let asks = questions.iter().map(|(key, q)| async move {
            let mut params = q.params();
            if let Value::Object(p) = &mut params {
                p.insert("_meta".into(), related_task_meta(&link.id));
            }
            let answer = ctx
                .parts
                .outbound
                .request(q.method(), params, ctx.revision(), ctx.parts.request_timeout)
                .await
                .map_err(HandlerError::Protocol)?;
            Ok::<_, HandlerError>((key.clone(), answer))
        });
        let answers = futures::future::try_join_all(asks).await;
        let _ = runtime.apply(&link.id, TaskChange::Status { status: TaskStatus::Working, message: None }).await;
        return answers.map(HashMap::from_iter);
    }
    let mut wire: Vec<(String, String)> = Vec::new();
    let mut requests = Map::new();
    for (key, q) in &questions {
        let wire_key = link.unique_key(key);
        requests.insert(wire_key.clone(), json!({"method": q.method(), "params": q.params()}));
        wire.push((key.clone(), wire_key));
    }
    let mut changes = runtime.changed.subscribe();
    runtime.apply(&link.id, TaskChange::Ask { requests }).await.map_err(|e| HandlerError::Protocol(store_error(e)))?;
    loop {
        let record = runtime
            .store
            .get(&link.id)
            .await
            .map_err(|e| HandlerError::Protocol(store_error(e)))?
            .ok_or_else(|| HandlerError::Protocol(store_error(TaskStoreError::NotFound)))?;
        if record.status.is_terminal() {
            return Err(HandlerError::Protocol(ErrorObject::internal(format!("the task is {}", record.status))));
        }
        if wire.iter().all(|(_, w)| record.input_responses.contains_key(w)) {
            let answers =
                wire.iter().map(|(k, w)| (k.clone(), record.input_responses.get(w).cloned().unwrap_or_default()));
            let answers: HashMap<String, Value> = answers.collect();
            let keys = wire.into_iter().map(|(_, w)| w).collect();
            runtime
                .apply(&link.id, TaskChange::Take { keys })
                .await
                .map_err(|e| HandlerError::Protocol(store_error(e)))?;
            return Ok(answers);
        }
        tokio::select! {
            _ = ctx.cancellation().cancelled() => {
                return Err(HandlerError::Protocol(ErrorObject::internal("the task was cancelled")));
            }
            _ = changes.recv() => {}
            _ = tokio::time::sleep(runtime.config.poll_interval) => {}
        }
    }
}

impl Context {
    /// The id of the task this handler runs as, if it runs as one.
    pub fn task_id(&self) -> Option<&str> {
        self.parts.task.get().map(|t| t.id.as_str())
    }

    /// Sets the status message of the task this handler runs as (a word on its progress,
    /// shown by `tasks/get`). Returns whether there was a running task to update.
    pub async fn set_task_status_message(&self, message: impl Into<String>) -> bool {
        let Some(task) = self.parts.task.get() else { return false };
        task.runtime.apply(&task.id, TaskChange::Message { message: Some(message.into()) }).await.is_ok()
    }
}

// ---------------------------------------------------------------------------------------------
// Server API
// ---------------------------------------------------------------------------------------------

impl crate::Server {
    /// The task store, when tasks are enabled ([`crate::ServerBuilder::tasks`]).
    pub fn task_store(&self) -> Option<Arc<dyn TaskStore>> {
        self.inner.tasks.as_ref().map(|t| t.store.clone())
    }

    /// Whether tasks are enabled.
    pub fn tasks_enabled(&self) -> bool {
        self.inner.tasks.is_some()
    }

    /// How many task handlers run on this server now.
    pub fn running_tasks(&self) -> usize {
        self.inner.tasks.as_ref().map_or(0, |t| lock(&t.running).len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(id: &str, owner: Option<&str>, ttl_ms: Option<u64>) -> TaskRecord {
        let mut r = TaskRecord::new(
            id.into(),
            owner.map(str::to_owned),
            ProtocolVersion::V2025_11_25,
            "tools/call",
            None,
            None,
        );
        r.ttl_ms = ttl_ms;
        r
    }

    #[test]
    fn life_cycle_is_enforced() {
        let mut r = record("a", None, None);
        r.apply(TaskChange::Status { status: TaskStatus::InputRequired, message: None }, 1).unwrap();
        r.apply(TaskChange::Status { status: TaskStatus::Working, message: Some("m".into()) }, 2).unwrap();
        let done = TaskChange::Finish {
            status: TaskStatus::Completed,
            outcome: TaskOutcome::Result(json!({"content": []})),
            message: None,
        };
        r.apply(done.clone(), 3).unwrap();
        assert_eq!(
            r.apply(TaskChange::Cancel { message: None }, 4),
            Err(TaskStoreError::Terminal(TaskStatus::Completed))
        );
        assert_eq!(r.apply(done, 5), Err(TaskStoreError::Terminal(TaskStatus::Completed)));
        assert!(r.apply(TaskChange::Answer { responses: Map::new() }, 6).is_ok(), "late answers are ignored");
        let mut r = record("b", None, None);
        assert!(
            r.apply(TaskChange::Status { status: TaskStatus::Completed, message: None }, 1).is_err(),
            "a terminal status needs an outcome"
        );
    }

    #[test]
    fn questions_and_answers() {
        let mut r = record("a", None, None);
        let ask = json!({"q1": {"method": "roots/list", "params": {}}});
        r.apply(TaskChange::Ask { requests: ask.as_object().unwrap().clone() }, 1).unwrap();
        assert_eq!(r.status, TaskStatus::InputRequired);
        assert!(r.to_task(true).input_requests.unwrap().contains_key("q1"));
        let answers = json!({"q1": {"roots": []}, "unknown": {}});
        r.apply(TaskChange::Answer { responses: answers.as_object().unwrap().clone() }, 2).unwrap();
        assert_eq!(r.input_responses.keys().collect::<Vec<_>>(), ["q1"]);
        assert!(r.to_task(true).input_requests.unwrap().is_empty(), "an answered question is no longer shown");
        assert_eq!(r.status, TaskStatus::InputRequired, "until the handler takes the answer");
        r.apply(TaskChange::Take { keys: vec!["q1".into()] }, 3).unwrap();
        assert_eq!(r.status, TaskStatus::Working);
        assert!(r.input_requests.is_empty() && r.input_responses.is_empty());
    }

    #[tokio::test]
    async fn memory_store_is_bounded_ordered_and_expires() {
        let store = InMemoryTaskStore::new(2);
        store.create(record("a", Some("o"), None)).await.unwrap();
        store.create(record("b", Some("o"), None)).await.unwrap();
        assert_eq!(store.create(record("c", Some("o"), None)).await, Err(TaskStoreError::Full));
        let done = TaskOutcome::Result(json!({}));
        store.store_outcome("a", TaskStatus::Completed, done, None).await.unwrap();
        let c = store.create(record("c", Some("o"), None)).await.unwrap();
        assert!(store.get("a").await.unwrap().is_none(), "the oldest finished task made room");
        assert!(c.seq > 2);
        let page = store.list(Some("o"), None, 1).await.unwrap();
        assert_eq!(page.tasks[0].task_id, "b");
        let page = store.list(Some("o"), page.next_after, 1).await.unwrap();
        assert_eq!((page.tasks[0].task_id.as_str(), page.next_after), ("c", None));
        assert!(store.list(Some("other"), None, 10).await.unwrap().tasks.is_empty());
        assert!(store.list(None, None, 10).await.unwrap().tasks.is_empty());

        let store = InMemoryTaskStore::new(10);
        let mut old = record("old", None, Some(1));
        old.created_at_ms = now_ms().saturating_sub(10);
        store.create(old).await.unwrap();
        store.create(record("new", None, Some(60_000))).await.unwrap();
        assert!(store.get("old").await.unwrap().is_none(), "expired");
        assert!(store.get("new").await.unwrap().is_some());
        assert_eq!(store.len(), 1);
        assert_eq!(store.update("old", TaskChange::Cancel { message: None }).await, Err(TaskStoreError::NotFound));
    }

    #[test]
    fn records_serialize() {
        let mut r = record("a", Some("o"), Some(5));
        r.outcome = Some(TaskOutcome::Error(ErrorObject::internal("x")));
        let text = serde_json::to_string(&r).unwrap();
        assert_eq!(serde_json::from_str::<TaskRecord>(&text).unwrap(), r);
        let change = TaskChange::Take { keys: vec!["k".into()] };
        let text = serde_json::to_string(&change).unwrap();
        assert_eq!(serde_json::from_str::<TaskChange>(&text).unwrap(), change);
    }
}
