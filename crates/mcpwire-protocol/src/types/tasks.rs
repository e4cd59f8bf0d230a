//! Tasks: durable handles for long-running requests.
//!
//! Tasks exist in two shapes on the wire:
//!
//! - **2025-11-25** (core, experimental): the client asks for a task with `params.task`
//!   (`{ttl}`) on `tools/call`; the server answers `CreateTaskResult` (`{task: Task}`) at
//!   once, and the client polls `tasks/get`, fetches the outcome with `tasks/result`, lists
//!   with `tasks/list` and cancels with `tasks/cancel`. A `Task` names its retention `ttl`
//!   and its suggested `pollInterval`.
//! - **2026-07-28** (the `io.modelcontextprotocol/tasks` extension, SEP-2663): the server
//!   decides per request, for a client that declared the extension, to answer
//!   `resultType: "task"` with the task's fields inline; `tasks/get` returns the task with
//!   its outcome inline (`result` or `error`) or the questions it waits on
//!   (`inputRequests`), which the client answers with `tasks/update`. The fields are named
//!   `ttlMs` and `pollIntervalMs`; there is no `tasks/result` and no `tasks/list`.
//!
//! The neutral [`Task`] holds the union and is written with the 2026 names; the codec
//! ([`crate::codec::shape_task`]) renames and drops members for 2025-11-25. Reading accepts
//! both spellings.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::{JsonObject, Meta};
use crate::error::ErrorObject;

/// The extension identifier of tasks in 2026-07-28 (`capabilities.extensions` key).
pub const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// The `_meta` key that ties a message to a task (`{taskId}`).
pub const RELATED_TASK_META: &str = "io.modelcontextprotocol/related-task";

/// The `_meta` key of a `CreateTaskResult` that suggests an immediate answer for the model
/// while the task runs (2025-11-25, provisional).
pub const MODEL_IMMEDIATE_RESPONSE_META: &str = "io.modelcontextprotocol/model-immediate-response";

/// Where a task is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    /// Being processed.
    Working,
    /// Waiting for input from the requestor.
    InputRequired,
    /// Finished with a result (terminal).
    Completed,
    /// Finished with an error (terminal).
    Failed,
    /// Cancelled before it finished (terminal).
    Cancelled,
}

impl TaskStatus {
    /// `completed`, `failed` and `cancelled` are terminal: nothing follows them.
    pub const fn is_terminal(self) -> bool {
        matches!(self, Self::Completed | Self::Failed | Self::Cancelled)
    }

    /// Whether a task in this status may move to `next`: `working` and `input_required`
    /// may move to each other and to any terminal status; a terminal status never changes.
    /// Staying in the same non-terminal status (a new status message) is allowed.
    pub const fn can_become(self, _next: TaskStatus) -> bool {
        !self.is_terminal()
    }

    /// The wire name.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Working => "working",
            Self::InputRequired => "input_required",
            Self::Completed => "completed",
            Self::Failed => "failed",
            Self::Cancelled => "cancelled",
        }
    }
}

impl std::fmt::Display for TaskStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Whether a tool may, or must, run as a task (`Tool.execution.taskSupport`, 2025-11-25;
/// the server also uses it to decide when to answer with a task in 2026-07-28).
///
/// Absent means [`TaskSupport::Forbidden`]; an unknown value is read as forbidden too (the
/// safe reading: the client then never asks for a task).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum TaskSupport {
    /// The tool never runs as a task (the default).
    #[default]
    Forbidden,
    /// The tool runs either way.
    Optional,
    /// The tool only runs as a task.
    Required,
}

impl TaskSupport {
    /// The wire name.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Forbidden => "forbidden",
            Self::Optional => "optional",
            Self::Required => "required",
        }
    }
}

impl Serialize for TaskSupport {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for TaskSupport {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        Ok(match s.as_ref() {
            "optional" => Self::Optional,
            "required" => Self::Required,
            _ => Self::Forbidden,
        })
    }
}

/// `params.task` of a task-augmented request (2025-11-25).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TaskMetadata {
    /// How long to keep the task from its creation, in milliseconds (the server may
    /// choose otherwise and says what it chose in [`Task::ttl_ms`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl: Option<u64>,
}

/// A task: its identity, status and timing; in 2026-07-28 also its outcome or the input it
/// waits for (the `DetailedTask` of `tasks/get`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Task {
    /// The identifier the server chose (unguessable).
    pub task_id: String,
    /// Where the task is.
    pub status: TaskStatus,
    /// A human-readable word on the status (progress, the reason of a failure).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
    /// ISO 8601 time of creation.
    pub created_at: String,
    /// ISO 8601 time of the last change.
    pub last_updated_at: String,
    /// Retention from creation in milliseconds; `None` (null on the wire) for unlimited.
    /// `ttl` in 2025-11-25, `ttlMs` in 2026-07-28.
    #[serde(default, alias = "ttl")]
    pub ttl_ms: Option<u64>,
    /// Suggested time between polls, in milliseconds. `pollInterval` in 2025-11-25,
    /// `pollIntervalMs` in 2026-07-28.
    #[serde(default, alias = "pollInterval", skip_serializing_if = "Option::is_none")]
    pub poll_interval_ms: Option<u64>,
    /// The questions an `input_required` task waits on, by key (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_requests: Option<JsonObject>,
    /// The outcome of a `completed` task: what the request would have returned (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// The JSON-RPC error of a `failed` task (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorObject>,
}

/// The answer to a request that became a task.
///
/// 2025-11-25 writes it as `{task: Task}`; 2026-07-28 as the task's members inline with
/// `resultType: "task"`. Both are read.
#[derive(Debug, Clone, PartialEq)]
pub struct CreateTaskResult {
    /// The task as created.
    pub task: Task,
    /// Metadata.
    pub meta: Option<Meta>,
}

impl Serialize for CreateTaskResult {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Wire<'a> {
            task: &'a Task,
            #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
            meta: Option<&'a Meta>,
        }
        Wire { task: &self.task, meta: self.meta.as_ref() }.serialize(s)
    }
}

impl<'de> Deserialize<'de> for CreateTaskResult {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut value = Value::deserialize(d)?;
        let meta = match value.get_mut("_meta").map(Value::take) {
            Some(Value::Object(m)) => Some(m),
            _ => None,
        };
        let task = match value.get_mut("task") {
            Some(nested @ Value::Object(_)) => nested.take(),
            _ => value,
        };
        let task = serde_json::from_value(task).map_err(serde::de::Error::custom)?;
        Ok(Self { task, meta })
    }
}

/// Params of `tasks/get`, `tasks/result` and `tasks/cancel`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskIdParams {
    /// The task.
    pub task_id: String,
}

/// Params of `tasks/update` (2026-07-28): answers to the questions of an `input_required`
/// task, by the keys of its `inputRequests`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UpdateTaskParams {
    /// The task.
    pub task_id: String,
    /// Answers by key.
    pub input_responses: JsonObject,
}

/// The result of `tasks/list` (2025-11-25).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListTasksResult {
    /// The tasks on this page.
    pub tasks: Vec<Task>,
    /// Cursor of the next page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// The value of the `io.modelcontextprotocol/related-task` `_meta` key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RelatedTaskMetadata {
    /// The task a message belongs to.
    pub task_id: String,
}

/// Writes a Unix time in milliseconds as an ISO 8601 / RFC 3339 UTC timestamp with
/// milliseconds (`2025-11-25T10:30:00.000Z`).
///
/// Written by hand: it is the only calendar computation the protocol needs, and a date
/// crate for one formatter is more weight than the few lines of the civil-from-days
/// algorithm (H. Hinnant, public domain) below.
pub fn iso8601_from_unix_ms(unix_ms: u64) -> String {
    let secs = unix_ms / 1000;
    let millis = unix_ms % 1000;
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let (hour, minute, second) = (rem / 3600, (rem % 3600) / 60, rem % 60);
    // Days since 1970-01-01 to a proleptic Gregorian date.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}.{millis:03}Z")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn timestamps() {
        assert_eq!(iso8601_from_unix_ms(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso8601_from_unix_ms(951_782_400_000), "2000-02-29T00:00:00.000Z");
        assert_eq!(iso8601_from_unix_ms(1_764_066_600_123), "2025-11-25T10:30:00.123Z");
        assert_eq!(iso8601_from_unix_ms(4_102_444_799_999), "2099-12-31T23:59:59.999Z");
    }

    #[test]
    fn statuses_and_support() {
        assert!(TaskStatus::Cancelled.is_terminal());
        assert!(!TaskStatus::InputRequired.is_terminal());
        assert!(TaskStatus::Working.can_become(TaskStatus::InputRequired));
        assert!(!TaskStatus::Completed.can_become(TaskStatus::Working));
        assert_eq!(serde_json::to_value(TaskStatus::InputRequired).unwrap(), "input_required");
        let s: TaskSupport = serde_json::from_value(json!("required")).unwrap();
        assert_eq!(s, TaskSupport::Required);
        let s: TaskSupport = serde_json::from_value(json!("someday")).unwrap();
        assert_eq!(s, TaskSupport::Forbidden);
    }

    #[test]
    fn both_wire_shapes_are_read() {
        let legacy = json!({"task": {"taskId": "t", "status": "working", "createdAt": "a",
            "lastUpdatedAt": "b", "ttl": 5, "pollInterval": 7}, "_meta": {"k": 1}});
        let r: CreateTaskResult = serde_json::from_value(legacy).unwrap();
        assert_eq!((r.task.ttl_ms, r.task.poll_interval_ms), (Some(5), Some(7)));
        assert!(r.meta.is_some());
        let modern = json!({"resultType": "task", "taskId": "t", "status": "working", "createdAt": "a",
            "lastUpdatedAt": "b", "ttlMs": null, "pollIntervalMs": 7});
        let r: CreateTaskResult = serde_json::from_value(modern).unwrap();
        assert_eq!((r.task.ttl_ms, r.task.poll_interval_ms), (None, Some(7)));
        let written = serde_json::to_value(&r.task).unwrap();
        assert_eq!(written["ttlMs"], Value::Null, "an unlimited ttl is written as null");
    }
}
