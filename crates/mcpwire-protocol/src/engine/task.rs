//! Tasks as the protocol defines them: what is recorded of one, and the life cycle every
//! change must follow (`working` <-> `input_required`, then one terminal status that never
//! changes again). Stores apply changes with [`TaskRecord::apply`], so that every store, in
//! memory or shared, enforces the same rules.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::ErrorObject;
use crate::revision::ProtocolVersion;
use crate::types::{JsonObject, Task, TaskStatus};

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
    /// The server instance whose handler runs the task, when several instances share the
    /// store (scale-out): another instance that finds it gone fails the task. Absent for a
    /// single instance, and in records written before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runner: Option<String>,
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

impl TaskRecord {
    /// A new `working` task created at `now` (milliseconds since the Unix epoch; the store
    /// assigns [`TaskRecord::seq`]).
    pub fn new(
        task_id: String,
        owner: Option<String>,
        revision: ProtocolVersion,
        method: &str,
        ttl: Option<Duration>,
        poll_interval: Option<Duration>,
        now: u64,
    ) -> Self {
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
            runner: None,
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
            created_at: crate::types::iso8601_from_unix_ms(self.created_at_ms),
            last_updated_at: crate::types::iso8601_from_unix_ms(self.updated_at_ms),
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Map};

    fn record(id: &str, owner: Option<&str>, ttl_ms: Option<u64>) -> TaskRecord {
        let mut r = TaskRecord::new(
            id.into(),
            owner.map(str::to_owned),
            ProtocolVersion::V2025_11_25,
            "tools/call",
            None,
            None,
            0,
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

    #[test]
    fn records_serialize() {
        let mut r = record("a", Some("o"), Some(5));
        r.outcome = Some(TaskOutcome::Error(ErrorObject::internal("x")));
        let text = serde_json::to_string(&r).unwrap();
        assert_eq!(serde_json::from_str::<TaskRecord>(&text).unwrap(), r);
        let mut text = serde_json::to_value(&r).unwrap();
        assert!(text.get("runner").is_none(), "a record without a runner reads as before");
        r.runner = Some("instance".into());
        text = serde_json::to_value(&r).unwrap();
        assert_eq!(serde_json::from_value::<TaskRecord>(text).unwrap(), r);
        let change = TaskChange::Take { keys: vec!["k".into()] };
        let text = serde_json::to_string(&change).unwrap();
        assert_eq!(serde_json::from_str::<TaskChange>(&text).unwrap(), change);
    }
}
