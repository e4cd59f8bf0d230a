//! What the application reads of the server's tasks, and the sharing of its tasks with the
//! other instances of a deployment. The task machinery is [`crate::tasks`]'s; these methods
//! need the server, so they live here, above it.

use std::sync::Arc;

use super::Server;
use crate::shared::{Bus, LeaseGuard, StoreError};
use crate::tasks::TaskStore;

impl Server {
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
        self.inner.tasks.as_ref().map_or(0, |t| t.running())
    }

    /// Shares this server's tasks with the other instances of the deployment, for a task
    /// store they share ([`crate::ServerBuilder::task_store`]): a task made on any instance
    /// is polled, awaited (`tasks/result`) and cancelled on any other.
    ///
    /// - Task news travels on `bus` (topic [`crate::TASKS_TOPIC`]): a change made here wakes
    ///   the `tasks/result` waiting on the others, and tells a status change to the
    ///   connection that owns the task, wherever it is; a `tasks/cancel` stops the handler on
    ///   whichever instance runs it.
    /// - The instance holding `lease` ([`crate::shared::Instance::keep_alive`]) records itself
    ///   as the runner of each task it starts, and keeps its lease while the guard lives:
    ///   drop it only when the instance stops (its tasks are then failed by the others).
    ///   Every half lease, each instance fails the running tasks of instances whose lease ran
    ///   out, with the status message [`crate::TASK_RUNNER_STOPPED`]: a task of an instance
    ///   that stopped does not stay `working` for ever.
    ///
    /// Does nothing for a server without tasks. Call it once, within a tokio runtime, before
    /// the server serves (tasks made before are not shared); a second call is refused.
    pub async fn share_tasks(&self, bus: Arc<dyn Bus>, lease: &LeaseGuard) -> Result<(), StoreError> {
        let Some(runtime) = self.inner.tasks.clone() else { return Ok(()) };
        crate::tasks::share_tasks(runtime, bus, lease).await
    }
}
