//! The link from a handler's [`Context`] to the task it runs as: the task's id, the runtime
//! that keeps it, and how the handler's questions go through the task. The context holds
//! it; the runtime below does not know contexts.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use mcpwire_protocol::engine::task::{TaskChange, TaskStoreError};
use mcpwire_protocol::message::ServerRequest;
use mcpwire_protocol::types::{RelatedTaskMetadata, TaskStatus, RELATED_TASK_META};
use parking_lot::Mutex;
use serde_json::{json, Map, Value};

use super::runtime::TaskRuntime;
use crate::context::Context;
use crate::error::{AskError, HandlerError};
use crate::refusal::Refusal;

/// The link from a handler's [`Context`] to the task it runs as.
pub(crate) struct TaskLink {
    pub(crate) id: String,
    pub(crate) runtime: Arc<TaskRuntime>,
    pub(crate) modern: bool,
    /// Keys of questions asked so far: a 2026-07-28 key is never used twice in a task.
    keys: Mutex<HashSet<String>>,
}

impl TaskLink {
    pub(crate) fn new(id: String, runtime: Arc<TaskRuntime>, modern: bool) -> Self {
        Self { id, runtime, modern, keys: Mutex::default() }
    }

    fn unique_key(&self, key: &str) -> String {
        let mut keys = self.keys.lock();
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

impl TaskLink {
    /// Asks the client questions from a task's handler. 2025-11-25: real requests on the
    /// connection, tagged with the task, while the task is `input_required`. 2026-07-28: the
    /// questions become the task's `inputRequests`, and the handler waits for `tasks/update`.
    pub(crate) async fn ask(
        &self,
        ctx: &Context,
        questions: Vec<(String, ServerRequest)>,
    ) -> Result<HashMap<String, Value>, HandlerError> {
        let runtime = &self.runtime;
        let store_failure = |e| HandlerError::Protocol(Refusal::Store(e).into_error(ctx.revision()));
        if !self.modern {
            let waiting = TaskChange::Status {
                status: TaskStatus::InputRequired,
                message: Some("Waiting for the client's answer.".into()),
            };
            let _ = runtime.apply(&self.id, waiting).await;
            let meta = match related_task_meta(&self.id) {
                Value::Object(m) => m,
                _ => Map::new(),
            };
            let asks = questions.iter().map(|(key, q)| {
                let meta = &meta;
                async move {
                    // The task's messages go to the connection: its request is answered.
                    let answer = ctx.ask_client(q, Some(meta), None).await?;
                    Ok::<_, HandlerError>((key.clone(), answer))
                }
            });
            let answers = futures::future::try_join_all(asks).await;
            let _ = runtime.apply(&self.id, TaskChange::Status { status: TaskStatus::Working, message: None }).await;
            return answers.map(HashMap::from_iter);
        }
        let mut wire: Vec<(String, String)> = Vec::new();
        let mut requests = Map::new();
        for (key, q) in &questions {
            let wire_key = self.unique_key(key);
            requests.insert(wire_key.clone(), serde_json::to_value(q).unwrap_or_default());
            wire.push((key.clone(), wire_key));
        }
        let mut changes = runtime.changed.subscribe();
        runtime.apply(&self.id, TaskChange::Ask { requests }).await.map_err(store_failure)?;
        loop {
            let record = runtime
                .store
                .get(&self.id)
                .await
                .map_err(store_failure)?
                .ok_or_else(|| store_failure(TaskStoreError::NotFound))?;
            if record.status.is_terminal() {
                return Err(AskError::TaskEnded(record.status).into());
            }
            if wire.iter().all(|(_, w)| record.input_responses.contains_key(w)) {
                let answers =
                    wire.iter().map(|(k, w)| (k.clone(), record.input_responses.get(w).cloned().unwrap_or_default()));
                let answers: HashMap<String, Value> = answers.collect();
                let keys = wire.into_iter().map(|(_, w)| w).collect();
                runtime.apply(&self.id, TaskChange::Take { keys }).await.map_err(store_failure)?;
                return Ok(answers);
            }
            tokio::select! {
                _ = ctx.cancellation().cancelled() => {
                    return Err(AskError::TaskEnded(TaskStatus::Cancelled).into());
                }
                _ = changes.recv() => {}
                _ = tokio::time::sleep(runtime.config.poll_interval) => {}
            }
        }
    }
}

impl Context {
    /// The id of the task this handler runs as, if it runs as one.
    pub fn task_id(&self) -> Option<&str> {
        self.task().map(|t| t.id.as_str())
    }

    /// Sets the status message of the task this handler runs as (a word on its progress,
    /// shown by `tasks/get`). Returns whether there was a running task to update.
    pub async fn set_task_status_message(&self, message: impl Into<String>) -> bool {
        let Some(task) = self.task() else { return false };
        task.runtime.apply(&task.id, TaskChange::Message { message: Some(message.into()) }).await.is_ok()
    }
}
