//! Questions the client answers as tasks (2025-11-25): a server that sees
//! `tasks.requests.elicitation.create` (or `sampling.createMessage`) in the client's
//! capabilities may send the question with `params.task`. The client then answers
//! `CreateTaskResult` at once, runs its handler in the background, and serves `tasks/get`,
//! `tasks/result`, `tasks/list` and `tasks/cancel` about it.
//!
//! Every task is kept until its time to live passes (the one the server asked for, at most
//! [`MAX_TTL`]), then forgotten; `tasks/result` waits for the end of a task that is still
//! working.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use mcpwire_protocol::id::random_id;
use mcpwire_protocol::types::{iso8601_from_unix_ms, CreateTaskResult, ListTasksResult, Task, TaskStatus};
use mcpwire_protocol::ErrorObject;
use parking_lot::Mutex;
use serde_json::Value;
use tokio::sync::watch;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// The longest a task is kept, whatever the server asks.
pub(crate) const MAX_TTL: Duration = Duration::from_secs(24 * 60 * 60);
/// The time to live of a task when the server names none.
pub(crate) const DEFAULT_TTL: Duration = Duration::from_secs(60 * 60);
/// The poll interval suggested to the server.
pub(crate) const POLL_INTERVAL: Duration = Duration::from_millis(100);

/// What a task's handler ended with: the question's result, or its error.
type Outcome = Result<Value, ErrorObject>;

/// One task: its public record, its outcome once it ends, and how to stop it.
struct Entry {
    task: Task,
    outcome: Option<Outcome>,
    /// Tells `tasks/result` waiters the task ended.
    ended: watch::Sender<bool>,
    /// Stops the handler.
    cancel: CancellationToken,
    expires: Instant,
}

/// The tasks this client runs for the server of one connection.
#[derive(Default, Clone)]
pub(crate) struct TaskRequests {
    tasks: Arc<Mutex<HashMap<String, Entry>>>,
}

fn unix_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or_default()
}

fn millis(d: Duration) -> u64 {
    d.as_millis().try_into().unwrap_or(u64::MAX)
}

fn unknown(task_id: &str) -> ErrorObject {
    ErrorObject::invalid_params(format!("no task {task_id:?} (unknown, or past its time to live)"))
}

impl TaskRequests {
    /// Makes a task for a question, with the time to live the server asked for (bounded);
    /// returns what to answer the question with, and the token that stops its handler.
    pub(crate) fn create(&self, ttl_ms: Option<u64>) -> (CreateTaskResult, String, CancellationToken) {
        let ttl = ttl_ms.map_or(DEFAULT_TTL, Duration::from_millis).min(MAX_TTL);
        let now = iso8601_from_unix_ms(unix_ms());
        let task = Task {
            task_id: random_id(),
            status: TaskStatus::Working,
            status_message: None,
            created_at: now.clone(),
            last_updated_at: now,
            ttl_ms: Some(millis(ttl)),
            poll_interval_ms: Some(millis(POLL_INTERVAL)),
            input_requests: None,
            result: None,
            error: None,
        };
        let cancel = CancellationToken::new();
        let entry = Entry {
            task: task.clone(),
            outcome: None,
            ended: watch::channel(false).0,
            cancel: cancel.clone(),
            expires: Instant::now() + ttl,
        };
        let mut tasks = self.tasks.lock();
        Self::purge(&mut tasks);
        let id = task.task_id.clone();
        tasks.insert(id.clone(), entry);
        (CreateTaskResult { task, meta: None }, id, cancel)
    }

    /// Records the end of a task's handler: `completed` with its result, or `failed` with
    /// its error. Nothing changes for a task already ended (cancelled meanwhile).
    pub(crate) fn finish(&self, task_id: &str, outcome: Outcome) {
        let mut tasks = self.tasks.lock();
        let Some(entry) = tasks.get_mut(task_id) else { return };
        if entry.task.status.is_terminal() {
            return;
        }
        let (status, message) = match &outcome {
            Ok(_) => (TaskStatus::Completed, None),
            Err(e) => (TaskStatus::Failed, Some(e.message.clone())),
        };
        Self::set_status(entry, status, message);
        entry.outcome = Some(outcome);
    }

    fn set_status(entry: &mut Entry, status: TaskStatus, message: Option<String>) {
        entry.task.status = status;
        entry.task.status_message = message;
        entry.task.last_updated_at = iso8601_from_unix_ms(unix_ms());
        if status.is_terminal() {
            entry.ended.send_replace(true);
        }
    }

    /// Forgets the tasks whose time to live has passed.
    fn purge(tasks: &mut HashMap<String, Entry>) {
        let now = Instant::now();
        tasks.retain(|_, entry| {
            let keep = entry.expires > now;
            if !keep {
                entry.cancel.cancel();
            }
            keep
        });
    }

    /// `tasks/get`.
    pub(crate) fn get(&self, task_id: &str) -> Result<Task, ErrorObject> {
        let mut tasks = self.tasks.lock();
        Self::purge(&mut tasks);
        tasks.get(task_id).map(|e| e.task.clone()).ok_or_else(|| unknown(task_id))
    }

    /// `tasks/list`: every task kept, oldest first.
    pub(crate) fn list(&self) -> ListTasksResult {
        let mut tasks = self.tasks.lock();
        Self::purge(&mut tasks);
        let mut listed: Vec<Task> = tasks.values().map(|e| e.task.clone()).collect();
        listed.sort_by(|a, b| a.created_at.cmp(&b.created_at).then_with(|| a.task_id.cmp(&b.task_id)));
        ListTasksResult { tasks: listed, next_cursor: None }
    }

    /// `tasks/cancel`: stops a task that has not ended; a task that has is an error (the
    /// specification's `-32602`).
    pub(crate) fn cancel(&self, task_id: &str) -> Result<Task, ErrorObject> {
        let mut tasks = self.tasks.lock();
        Self::purge(&mut tasks);
        let entry = tasks.get_mut(task_id).ok_or_else(|| unknown(task_id))?;
        if entry.task.status.is_terminal() {
            let status = entry.task.status;
            return Err(ErrorObject::invalid_params(format!("task {task_id:?} already ended ({status})")));
        }
        entry.cancel.cancel();
        Self::set_status(entry, TaskStatus::Cancelled, Some("cancelled by the server".to_owned()));
        Ok(entry.task.clone())
    }

    /// `tasks/result`: waits for the task to end, then gives what its question was answered
    /// with (or the error it failed with).
    pub(crate) async fn result(&self, task_id: &str) -> Result<Value, ErrorObject> {
        let mut ended = {
            let mut tasks = self.tasks.lock();
            Self::purge(&mut tasks);
            tasks.get(task_id).ok_or_else(|| unknown(task_id))?.ended.subscribe()
        };
        // The sender lives as long as the entry: an error here means the task was forgotten.
        let _ = ended.wait_for(|ended| *ended).await;
        let tasks = self.tasks.lock();
        let entry = tasks.get(task_id).ok_or_else(|| unknown(task_id))?;
        match (&entry.outcome, entry.task.status) {
            (Some(outcome), _) => outcome.clone(),
            (None, status) => {
                Err(ErrorObject::invalid_request(format!("task {task_id:?} has no result: it is {status}")))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[tokio::test(start_paused = true)]
    async fn a_task_is_working_until_its_handler_ends_then_completed_with_the_answer() {
        let tasks = TaskRequests::default();
        let (created, id, _) = tasks.create(Some(5_000));
        assert_eq!(created.task.status, TaskStatus::Working);
        assert_eq!(created.task.ttl_ms, Some(5_000));
        assert_eq!(tasks.get(&id).unwrap().status, TaskStatus::Working);
        let waiting = {
            let tasks = tasks.clone();
            let id = id.clone();
            tokio::spawn(async move { tasks.result(&id).await })
        };
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished(), "tasks/result waits for the end");
        tasks.finish(&id, Ok(json!({"action": "accept"})));
        assert_eq!(waiting.await.unwrap().unwrap(), json!({"action": "accept"}));
        assert_eq!(tasks.get(&id).unwrap().status, TaskStatus::Completed);
        assert_eq!(tasks.list().tasks.len(), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn a_failed_handler_fails_the_task_and_its_result_is_the_error() {
        let tasks = TaskRequests::default();
        let (_, id, _) = tasks.create(None);
        tasks.finish(&id, Err(ErrorObject::internal("no user")));
        let task = tasks.get(&id).unwrap();
        assert_eq!(task.status, TaskStatus::Failed);
        assert!(task.status_message.as_deref().is_some_and(|m| m.contains("no user")), "{task:?}");
        assert!(tasks.result(&id).await.unwrap_err().message.contains("no user"));
    }

    #[tokio::test(start_paused = true)]
    async fn cancelling_stops_the_handler_and_a_second_cancel_is_invalid_params() {
        let tasks = TaskRequests::default();
        let (_, id, token) = tasks.create(None);
        assert_eq!(tasks.cancel(&id).unwrap().status, TaskStatus::Cancelled);
        assert!(token.is_cancelled());
        assert_eq!(tasks.cancel(&id).unwrap_err().code, mcpwire_protocol::error::INVALID_PARAMS);
        // A late end changes nothing.
        tasks.finish(&id, Ok(json!({})));
        assert_eq!(tasks.get(&id).unwrap().status, TaskStatus::Cancelled);
        assert!(tasks.result(&id).await.is_err());
    }

    #[tokio::test(start_paused = true)]
    async fn a_task_is_forgotten_after_its_time_to_live_and_the_ttl_is_bounded() {
        let tasks = TaskRequests::default();
        let (_, id, token) = tasks.create(Some(1_000));
        tokio::time::advance(Duration::from_millis(1_001)).await;
        assert_eq!(tasks.get(&id).unwrap_err().code, mcpwire_protocol::error::INVALID_PARAMS);
        assert!(token.is_cancelled(), "the handler of a forgotten task stops");
        let (created, _, _) = tasks.create(Some(u64::MAX));
        assert_eq!(created.task.ttl_ms, Some(millis(MAX_TTL)));
        assert_eq!(tasks.get("nope").unwrap_err().code, mcpwire_protocol::error::INVALID_PARAMS);
    }
}
