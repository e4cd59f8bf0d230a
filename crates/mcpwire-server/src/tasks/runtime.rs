//! The server's task machinery: the store, and the handlers running. (How a handler
//! running as a task asks the client is its [`super::link::TaskLink`]'s.)

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use mcpwire_protocol::engine::task::{TaskChange, TaskRecord, TaskStoreError};
use mcpwire_protocol::message::ServerNotification;
use mcpwire_protocol::types::{JsonObject, TASKS_EXTENSION};
use parking_lot::Mutex;
use serde_json::json;
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

use super::clock::TaskClock;
use super::config::{TaskConfig, TaskSettings};
use super::store::{InMemoryTaskStore, TaskStore};
use crate::link::Link;
use crate::refusal::Refusal;

/// A task handler running on this server.
struct Running {
    cancel: CancellationToken,
    /// Where its status notifications go (2025-11-25: the connection that owns it).
    notify: Option<Arc<Link>>,
}

/// The server's task machinery: the store, the running handlers, and a channel that says
/// which task changed (for waiters).
pub(crate) struct TaskRuntime {
    pub(crate) store: Arc<dyn TaskStore>,
    pub(crate) config: TaskConfig,
    /// What stamps new tasks' creation time.
    pub(crate) clock: TaskClock,
    running: Mutex<HashMap<String, Running>>,
    pub(crate) changed: broadcast::Sender<String>,
    /// How this instance shares task news with the others ([`crate::Server::share_tasks`]);
    /// unset for a server of one instance.
    pub(super) shared: std::sync::OnceLock<super::shared::SharedTasks>,
}

impl TaskRuntime {
    pub(crate) fn new(settings: TaskSettings) -> Self {
        let TaskSettings { config, store, clock } = settings;
        let store =
            store.unwrap_or_else(|| Arc::new(InMemoryTaskStore::new(config.max_tasks).with_clock(clock.clone())));
        let (changed, _) = broadcast::channel(256);
        Self { store, config, clock, running: Mutex::default(), changed, shared: std::sync::OnceLock::new() }
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

    pub(crate) fn ttl(&self, requested_ms: Option<u64>) -> Duration {
        requested_ms.map(Duration::from_millis).unwrap_or(self.config.default_ttl).min(self.config.max_ttl)
    }

    /// Applies a change, then tells waiters and (2025-11-25) the owning client when the
    /// status changed.
    pub(crate) async fn apply(&self, task_id: &str, change: TaskChange) -> Result<TaskRecord, TaskStoreError> {
        // Only status changes are announced (a new message or answer is not one).
        let announced = !matches!(change, TaskChange::Message { .. } | TaskChange::Answer { .. });
        let record = self.store.update(task_id, change).await?;
        let _ = self.changed.send(record.task_id.clone());
        if let Some(shared) = self.shared.get() {
            // The other instances' waiters too, and the instance whose connection owns it.
            shared.changed(&record.task_id, announced);
        }
        if announced {
            self.announce(&record).await;
        }
        Ok(record)
    }

    /// Sends `notifications/tasks/status` to the connection that owns a running task.
    pub(super) async fn announce(&self, record: &TaskRecord) {
        let notify = self.running.lock().get(&record.task_id).and_then(|r| r.notify.clone());
        if let Some(link) = notify {
            let status = ServerNotification::TaskStatus(Box::new(record.to_task(false)));
            let (_, out) = link.run(|peer| peer.notify(&status, None));
            link.send(out.transmits, None).await;
        }
    }

    /// Registers a handler now running as task `task_id`: `cancel` stops it, and (2025-11-25)
    /// its status changes are told on `notify`.
    pub(crate) fn started(&self, task_id: &str, cancel: CancellationToken, notify: Option<Arc<Link>>) {
        self.running.lock().insert(task_id.to_owned(), Running { cancel, notify });
    }

    /// The handler of task `task_id` ended.
    pub(crate) fn ended(&self, task_id: &str) {
        self.running.lock().remove(task_id);
    }

    /// How many task handlers run now.
    pub(crate) fn running(&self) -> usize {
        self.running.lock().len()
    }

    /// The task of `owner`, or the `-32602` of an unknown one.
    pub(crate) async fn find(&self, task_id: &str, owner: Option<&str>) -> Result<TaskRecord, Refusal> {
        match self.store.get(task_id).await? {
            Some(r) if r.owner.as_deref() == owner => Ok(r),
            _ => Err(TaskStoreError::NotFound.into()),
        }
    }

    /// Cancels a task: its status first (it is `cancelled` before the answer goes out), then
    /// its handler.
    pub(crate) async fn cancel(&self, task_id: &str, message: &str) -> Result<TaskRecord, TaskStoreError> {
        let record = self.apply(task_id, TaskChange::Cancel { message: Some(message.to_owned()) }).await?;
        if !self.cancel_here(task_id) {
            if let Some(shared) = self.shared.get() {
                // Its handler runs on another instance (or nowhere): whichever runs it stops it.
                shared.cancel(task_id);
            }
        }
        Ok(record)
    }

    /// Cancels the handler of task `task_id` if it runs on this instance; returns whether it
    /// does.
    pub(super) fn cancel_here(&self, task_id: &str) -> bool {
        let token = self.running.lock().get(task_id).map(|r| r.cancel.clone());
        token.map(|t| t.cancel()).is_some()
    }

    /// Whether a connection of this instance is told about task `task_id`'s status changes.
    pub(super) fn announced_here(&self, task_id: &str) -> bool {
        self.running.lock().get(task_id).is_some_and(|r| r.notify.is_some())
    }

    /// The instance this one is among the others, once it shares its tasks: what a new task
    /// records as its runner.
    pub(crate) fn instance(&self) -> Option<String> {
        self.shared.get().map(|s| s.instance().to_owned())
    }

    /// Waits until the task is terminal (or gone).
    pub(crate) async fn wait_terminal(&self, task_id: &str, owner: Option<&str>) -> Result<TaskRecord, Refusal> {
        let mut changes = self.changed.subscribe();
        loop {
            let record = self.find(task_id, owner).await?;
            if record.status.is_terminal() {
                return Ok(record);
            }
            // The broadcast says when a task changed (here, or on another instance that
            // shares its tasks); the timer catches news lost (the bus is at most once) and
            // lagged receivers. Another task's change is no reason to read the store again.
            let poll = tokio::time::sleep(self.config.poll_interval);
            tokio::pin!(poll);
            loop {
                tokio::select! {
                    changed = changes.recv() => match changed {
                        Ok(id) if id != task_id => continue,
                        _ => break,
                    },
                    _ = &mut poll => break,
                }
            }
        }
    }
}
