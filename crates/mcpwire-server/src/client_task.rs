//! A question the client answers as a task (2025-11-25): the server asks with
//! `params.task`, the client answers `CreateTaskResult` at once and works in the background;
//! the server polls `tasks/get` at the client's suggested interval, reads the answer with
//! `tasks/result`, and gives it to the handler as if it had come at once.
//!
//! Bounded: the wait ends at the task's time to live (the client's, or the one asked for),
//! with the client told to cancel; a handler that stops waiting (cancelled, dropped) also
//! tells the client to cancel.

use std::time::Duration;

use mcpwire_protocol::engine::SendOptions;
use mcpwire_protocol::message::ServerRequest;
use mcpwire_protocol::types::{CreateTaskResult, Task, TaskIdParams, TaskMetadata, TaskStatus};
use mcpwire_protocol::{Method, RequestId};
use serde::Deserialize;
use serde_json::Value;

use crate::error::{AskError, HandlerResult};
use crate::link::{now, Link, Sink};
use crate::question::ask;

/// The shortest poll interval honoured (a client suggesting less is polled at this pace).
const MIN_POLL: Duration = Duration::from_millis(10);
/// The poll interval when the client suggests none.
const DEFAULT_POLL: Duration = Duration::from_millis(500);

/// Where the questions go and how long each may take.
pub(crate) struct Asking<'a> {
    pub(crate) link: &'a Link,
    /// The request being served (the questions are related to it).
    pub(crate) related: RequestId,
    pub(crate) reply: Option<&'a Sink>,
    /// The time one request to the client may take.
    pub(crate) timeout: Duration,
}

impl Asking<'_> {
    async fn ask(&self, question: &ServerRequest) -> HandlerResult<Value> {
        ask(self.link, question, None, Some(self.related.clone()), self.reply, self.timeout).await
    }
}

/// `question` with a task asked for: the author's `task` if set, else a time to live of
/// `ttl`.
pub(crate) fn with_task(question: &ServerRequest, ttl: Duration) -> ServerRequest {
    let mut question = question.clone();
    if let Some(task @ None) = question.task_mut() {
        *task = Some(TaskMetadata { ttl: Some(ttl.as_millis().try_into().unwrap_or(u64::MAX)) });
    }
    question
}

/// Asks `question` (which carries `params.task`) and follows the task the client makes of
/// it to its answer. A client that answers at once instead (it may ignore the task) is
/// taken at its word.
pub(crate) async fn ask_as_task(asking: &Asking<'_>, question: &ServerRequest) -> HandlerResult<Value> {
    let method = question.method();
    let asked_ttl = question.task().and_then(|t| t.ttl).map(Duration::from_millis);
    let answer = asking.ask(question).await?;
    if answer.get("task").is_none() {
        return Ok(answer);
    }
    let created = CreateTaskResult::deserialize(&answer).map_err(|e| AskError::malformed(method, e))?;
    follow(asking, method, created.task, asked_ttl).await
}

/// Polls the task until it ends (or needs the server's attention), then fetches its answer.
async fn follow(asking: &Asking<'_>, method: Method, task: Task, asked_ttl: Option<Duration>) -> HandlerResult<Value> {
    let ttl = task.ttl_ms.map(Duration::from_millis).or(asked_ttl).unwrap_or(asking.timeout);
    let deadline = tokio::time::Instant::now() + ttl;
    let poll = task.poll_interval_ms.map_or(DEFAULT_POLL, Duration::from_millis).max(MIN_POLL);
    let mut cancel = CancelOnDrop { asking, task_id: Some(task.task_id.clone()) };
    let id = TaskIdParams { task_id: task.task_id };
    let mut status = task.status;
    // `input_required`: the client waits on the server, and `tasks/result` is how the
    // server hears what it needs (the specification's advice).
    while !status.is_terminal() && status != TaskStatus::InputRequired {
        let now = tokio::time::Instant::now();
        if now >= deadline {
            return Err(AskError::ClientTaskExpired { method, ttl }.into());
        }
        tokio::time::sleep_until((now + poll).min(deadline)).await;
        if tokio::time::Instant::now() >= deadline {
            return Err(AskError::ClientTaskExpired { method, ttl }.into());
        }
        let answer = asking.ask(&ServerRequest::GetTask(id.clone())).await?;
        let polled = Task::deserialize(&answer).map_err(|e| AskError::malformed(Method::GetTask, e))?;
        if polled.task_id != id.task_id {
            let wrong = format!("tasks/get for {} answered with task {}", id.task_id, polled.task_id);
            return Err(AskError::malformed(Method::GetTask, WrongTask(wrong)).into());
        }
        status = polled.status;
    }
    if status == TaskStatus::Cancelled {
        cancel.task_id = None;
        return Err(AskError::ClientTaskCancelled(method).into());
    }
    let remaining = deadline.saturating_duration_since(tokio::time::Instant::now());
    let result = tokio::time::timeout(remaining, asking.ask(&ServerRequest::TaskResult(id))).await;
    let answer = match result {
        Ok(answer) => answer,
        Err(_) => return Err(AskError::ClientTaskExpired { method, ttl }.into()),
    };
    // The task ended: nothing to cancel. A failed task's `tasks/result` is the error its
    // question would have had, and comes out as that error.
    cancel.task_id = None;
    answer
}

/// A poll answer about another task than the one asked about.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct WrongTask(String);

/// Tells the client to cancel its task when the server stops waiting for it (the handler
/// dropped, the time to live passed).
struct CancelOnDrop<'a, 'b> {
    asking: &'a Asking<'b>,
    task_id: Option<String>,
}

impl Drop for CancelOnDrop<'_, '_> {
    fn drop(&mut self) {
        let Some(task_id) = self.task_id.take() else { return };
        let asking = self.asking;
        let question = ServerRequest::CancelTask(TaskIdParams { task_id });
        // Nobody waits for the answer: the waiter's receiver is dropped at once.
        let (tx, _) = tokio::sync::oneshot::channel();
        let options = SendOptions {
            timeout: Some(asking.timeout),
            cancel_on_timeout: false,
            progress: false,
            related: Some(asking.related.clone()),
        };
        let (sent, out) = asking.link.run(|peer| peer.request(&question, None, options, tx, now()));
        if sent.is_ok() {
            asking.link.send_now(out.transmits, asking.reply);
        }
    }
}
