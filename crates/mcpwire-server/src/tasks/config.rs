//! How a server runs tasks.

use std::sync::Arc;
use std::time::Duration;

use super::clock::TaskClock;
use super::store::TaskStore;

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

/// Task settings of a server being built: the configuration, optionally a store other than
/// the default in-memory one, and the clock tasks are stamped and expired by.
#[derive(Clone, Default)]
pub struct TaskSettings {
    /// The configuration.
    pub config: TaskConfig,
    /// The store; `None` for an [`InMemoryTaskStore`](crate::InMemoryTaskStore) of [`TaskConfig::max_tasks`].
    pub store: Option<Arc<dyn TaskStore>>,
    /// The clock that stamps a new task's `createdAt`, and the default in-memory store's
    /// clock (a store given in [`Self::store`] keeps its own); the system's by default.
    pub clock: TaskClock,
}

impl std::fmt::Debug for TaskSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskSettings")
            .field("config", &self.config)
            .field("store", &self.store.as_ref().map(|_| "custom"))
            .field("clock", &self.clock)
            .finish()
    }
}
