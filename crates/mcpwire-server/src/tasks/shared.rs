//! Tasks shared between the instances of a deployment (scale-out): news of a task's changes
//! and cancellations on the bus, and the leases that tell when the instance running a task
//! stopped.
//!
//! The store keeps what must not be lost (the tasks themselves); the bus only wakes: a
//! `tasks/result` waiting on one instance for a task another runs, a handler cancelled
//! through another instance, a connection told of a status changed elsewhere. A message lost
//! costs a poll interval (waiters and handlers re-read the store that often), never a task.

use std::collections::HashMap;
use std::sync::{Arc, Weak};
use std::time::Duration;

use futures::StreamExt;
use mcpwire_protocol::engine::task::{TaskChange, TaskOutcome, TaskStoreError};
use mcpwire_protocol::types::TaskStatus;
use mcpwire_protocol::ErrorObject;
use serde_json::{json, Value};
use tokio::sync::mpsc;

use super::runtime::TaskRuntime;
use crate::shared::{Bus, LeaseGuard, Presence, StoreError};

/// The bus topic of task news.
pub const TASKS_TOPIC: &str = "tasks";

/// The status message of a task failed because the instance running it stopped.
pub const TASK_RUNNER_STOPPED: &str = "the server instance running this task stopped; call the tool again";

/// The shortest pause between two sweeps, whatever the lease (a lease of zero would spin).
const MIN_SWEEP: Duration = Duration::from_millis(10);

/// News of one task, as it travels between instances.
#[derive(Debug, Clone, PartialEq)]
enum News {
    /// The task changed; `announced` when its status did (the connection that owns it is
    /// told).
    Changed { task: String, announced: bool },
    /// Whichever instance runs the task's handler stops it.
    Cancel { task: String },
}

fn encode(origin: &str, news: &News) -> Vec<u8> {
    let value = match news {
        News::Changed { task, announced } => json!({ "origin": origin, "changed": task, "announced": announced }),
        News::Cancel { task } => json!({ "origin": origin, "cancel": task }),
    };
    serde_json::to_vec(&value).unwrap_or_default()
}

/// The news in a message and the instance that published it; `None` for a message this
/// version does not understand (a newer instance's, during a rolling upgrade): it is skipped.
fn decode(message: &[u8]) -> Option<(String, News)> {
    let value: Value = serde_json::from_slice(message).ok()?;
    let origin = value.get("origin")?.as_str()?.to_owned();
    if let Some(task) = value.get("changed").and_then(Value::as_str) {
        let announced = value.get("announced").and_then(Value::as_bool).unwrap_or(false);
        return Some((origin, News::Changed { task: task.to_owned(), announced }));
    }
    let task = value.get("cancel")?.as_str()?.to_owned();
    Some((origin, News::Cancel { task }))
}

/// How an instance shares its tasks: its name, and where its news goes.
pub(crate) struct SharedTasks {
    instance: Arc<str>,
    publish: mpsc::UnboundedSender<News>,
}

impl SharedTasks {
    /// This instance's name.
    pub(crate) fn instance(&self) -> &str {
        &self.instance
    }

    /// Tells the others that task `task` changed.
    pub(crate) fn changed(&self, task: &str, announced: bool) {
        // The publisher ends only with the runtime.
        let _ = self.publish.send(News::Changed { task: task.to_owned(), announced });
    }

    /// Asks the others to stop task `task`'s handler.
    pub(crate) fn cancel(&self, task: &str) {
        let _ = self.publish.send(News::Cancel { task: task.to_owned() });
    }
}

/// Shares the tasks of `runtime` with the other instances of the deployment: what
/// [`crate::Server::share_tasks`] does for a server with tasks.
pub(crate) async fn share_tasks(
    runtime: Arc<TaskRuntime>,
    bus: Arc<dyn Bus>,
    lease: &LeaseGuard,
) -> Result<(), StoreError> {
    if runtime.shared.get().is_some() {
        return Err(StoreError::corrupt("share_tasks", "this server already shares its tasks"));
    }
    // Subscribed before anything is published: no news of a task made from now on is missed.
    let heard = bus.subscribe(TASKS_TOPIC).await?;
    let (tx, rx) = mpsc::unbounded_channel();
    let shared = SharedTasks { instance: lease.instance().into(), publish: tx };
    let (presence, every) = (lease.presence().clone(), (lease.lease() / 2).max(MIN_SWEEP));
    if runtime.shared.set(shared).is_err() {
        return Err(StoreError::corrupt("share_tasks", "this server already shares its tasks"));
    }
    let origin = lease.instance().to_owned();
    tokio::spawn(publish(bus, origin.clone(), rx));
    let weak = Arc::downgrade(&runtime);
    tokio::spawn(listen(heard, origin.clone(), weak.clone()));
    tokio::spawn(sweep_every(weak, origin, presence, every));
    Ok(())
}

/// Publishes this instance's news, in order, until the runtime is gone.
async fn publish(bus: Arc<dyn Bus>, origin: String, mut news: mpsc::UnboundedReceiver<News>) {
    while let Some(news) = news.recv().await {
        if let Err(e) = bus.publish(TASKS_TOPIC, encode(&origin, &news)).await {
            // The others poll the store: they learn it later.
            tracing::warn!(error = %e, "task news could not be shared with the other instances");
        }
    }
}

/// Acts on the other instances' news until the runtime is gone.
async fn listen(mut heard: crate::shared::BusMessages, origin: String, runtime: Weak<TaskRuntime>) {
    while let Some(message) = heard.next().await {
        let Some(runtime) = runtime.upgrade() else { break };
        match decode(&message) {
            // Ours: already acted on here.
            Some((from, _)) if from == origin => {}
            Some((_, News::Changed { task, announced })) => {
                let _ = runtime.changed.send(task.clone());
                if announced && runtime.announced_here(&task) {
                    // Changed elsewhere (cancelled, say), owned by a connection of this one.
                    match runtime.store.get(&task).await {
                        Ok(Some(record)) => runtime.announce(&record).await,
                        Ok(None) => {}
                        Err(e) => tracing::debug!(task = %task, "reading a task changed elsewhere failed: {e}"),
                    }
                }
            }
            Some((_, News::Cancel { task })) => {
                runtime.cancel_here(&task);
            }
            None => tracing::debug!("a message on the tasks topic was not understood; skipped"),
        }
    }
}

/// Every half lease, fails the running tasks of the instances that stopped, until the
/// runtime is gone.
async fn sweep_every(runtime: Weak<TaskRuntime>, me: String, presence: Arc<dyn Presence>, every: Duration) {
    loop {
        tokio::time::sleep(every).await;
        let Some(runtime) = runtime.upgrade() else { break };
        if let Err(e) = sweep(&runtime, &me, &*presence).await {
            // Nothing is failed on a doubt: the next sweep tries again.
            tracing::debug!("looking for the tasks of stopped instances failed: {e}");
        }
    }
}

/// Fails the running tasks whose instance's lease ran out; returns how many.
async fn sweep(runtime: &TaskRuntime, me: &str, presence: &dyn Presence) -> Result<usize, String> {
    let running = runtime.store.running_on_instances().await.map_err(|e| e.to_string())?;
    let mut alive: HashMap<String, bool> = HashMap::new();
    let mut failed = 0;
    for record in running {
        let Some(runner) = record.runner.as_deref() else { continue };
        // This instance knows its own handlers; its lease is not its evidence.
        if runner == me || record.status.is_terminal() {
            continue;
        }
        let lives = match alive.get(runner) {
            Some(lives) => *lives,
            None => {
                let lives = presence.alive(runner).await.map_err(|e| e.to_string())?;
                alive.insert(runner.to_owned(), lives);
                lives
            }
        };
        if lives {
            continue;
        }
        let change = TaskChange::Finish {
            status: TaskStatus::Failed,
            outcome: TaskOutcome::Error(ErrorObject::internal(TASK_RUNNER_STOPPED)),
            message: Some(TASK_RUNNER_STOPPED.to_owned()),
        };
        match runtime.apply(&record.task_id, change).await {
            Ok(_) => {
                if let Some(shared) = runtime.shared.get() {
                    // An instance cut off from the store rather than stopped stops the handler
                    // (it would otherwise learn of it at its next poll).
                    shared.cancel(&record.task_id);
                }
                tracing::info!(task = %record.task_id, instance = %runner, "failed a task whose instance stopped");
                failed += 1;
            }
            // It ended meanwhile (or expired): nothing to do.
            Err(TaskStoreError::Terminal(_) | TaskStoreError::NotFound) => {}
            Err(e) => return Err(e.to_string()),
        }
    }
    Ok(failed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn news_survives_the_bus_and_unknown_news_is_skipped() {
        for news in [News::Changed { task: "t".into(), announced: true }, News::Cancel { task: "t".into() }] {
            assert_eq!(decode(&encode("a", &news)), Some(("a".to_owned(), news)));
        }
        assert!(decode(br#"{"origin":"a","paused":"t"}"#).is_none());
        assert!(decode(br#"{"changed":"t"}"#).is_none(), "no origin");
        assert!(decode(b"not json").is_none());
    }
}
