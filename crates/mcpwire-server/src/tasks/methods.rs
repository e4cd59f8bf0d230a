//! The `tasks/*` methods. (Which revision has which, and whether the client declared the
//! extension in 2026-07-28, the engine decided before.)

use mcpwire_protocol::engine::cursor::fingerprint;
use mcpwire_protocol::engine::task::{TaskOutcome, TaskStoreError};
use mcpwire_protocol::message::{ClientRequest, ServerResult};
use mcpwire_protocol::types::{EmptyResult, ListTasksResult, PaginatedParams};
use mcpwire_protocol::Method;
use serde_json::{json, Map, Value};

use super::link::related_task_meta;
use super::run::owner;
use crate::context::Context;
use crate::refusal::Refusal;
use crate::server::Server;

fn empty() -> ServerResult {
    ServerResult::Empty(EmptyResult::default())
}

/// Answers `tasks/get`, `tasks/result`, `tasks/list`, `tasks/cancel` and `tasks/update`.
pub(crate) async fn dispatch(server: &Server, request: &ClientRequest, ctx: &Context) -> Result<ServerResult, Refusal> {
    let not_offered = || Refusal::NotOffered(request.method());
    let runtime = server.inner.tasks.clone().ok_or_else(not_offered)?;
    let modern = ctx.revision().is_modern();
    let owner = owner(ctx);
    let owner = owner.as_deref();
    match request {
        ClientRequest::GetTask(p) => {
            let record = runtime.find(&p.task_id, owner).await?;
            Ok(ServerResult::Task(Box::new(record.to_task(modern))))
        }
        ClientRequest::TaskResult(p) => {
            let record = runtime.wait_terminal(&p.task_id, owner).await?;
            match record.outcome {
                Some(TaskOutcome::Result(mut value)) => {
                    if let Value::Object(obj) = &mut value {
                        let meta = obj.entry("_meta").or_insert_with(|| json!({}));
                        if let (Value::Object(meta), Value::Object(related)) =
                            (meta, related_task_meta(&record.task_id))
                        {
                            meta.extend(related);
                        }
                    }
                    Ok(ServerResult::TaskPayload(value))
                }
                Some(TaskOutcome::Error(e)) => Err(Refusal::TaskFailed(e)),
                None => Err(Refusal::NoTaskResult(record.task_id)),
            }
        }
        ClientRequest::ListTasks(PaginatedParams { cursor }) => {
            let cursors = &server.inner.cursors;
            // A cursor names the last task listed (its creation order), sealed and bound to
            // the listing session: new tasks never make it stale, and it means nothing to
            // another session.
            let scope_fp = fingerprint([Method::ListTasks.as_str(), owner.unwrap_or("")]);
            let after = match cursor.as_deref() {
                None => None,
                Some(c) => Some(cursors.decode(c, scope_fp)? as u64),
            };
            let page_size = server.inner.config.page_size;
            let page = runtime.store.list(owner, after, page_size).await?;
            let next_cursor = page.next_after.map(|seq| cursors.encode(seq as usize, scope_fp));
            let tasks = page.tasks.iter().map(|r| r.to_task(false)).collect();
            Ok(ServerResult::ListTasks(ListTasksResult { tasks, next_cursor }))
        }
        ClientRequest::CancelTask(p) => {
            let record = runtime.find(&p.task_id, owner).await?;
            if modern {
                // An acknowledgement: cancellation is cooperative, and a finished task stays
                // as it is.
                if !record.status.is_terminal() {
                    match runtime.cancel(&record.task_id, "The task was cancelled by request.").await {
                        Ok(_) | Err(TaskStoreError::Terminal(_)) => {}
                        Err(e) => return Err(e.into()),
                    }
                }
                return Ok(empty());
            }
            if record.status.is_terminal() {
                return Err(TaskStoreError::Terminal(record.status).into());
            }
            let record = runtime.cancel(&record.task_id, "The task was cancelled by request.").await?;
            Ok(ServerResult::Task(Box::new(record.to_task(false))))
        }
        ClientRequest::UpdateTask(p) => {
            let record = runtime.find(&p.task_id, owner).await?;
            let mut accepted = Map::new();
            for (key, answer) in &p.input_responses {
                // Answers to unknown or already answered questions are ignored; an answer of
                // the wrong shape to an outstanding one is refused.
                let Some(question) = record.input_requests.get(key) else { continue };
                let question: Option<mcpwire_protocol::message::ServerRequest> =
                    serde_json::from_value(question.clone()).ok();
                let Some(question) = question else { continue };
                if !question.accepts(answer) {
                    return Err(Refusal::InvalidTaskAnswer { key: key.clone(), method: question.method() });
                }
                accepted.insert(key.clone(), answer.clone());
            }
            if !accepted.is_empty() {
                let change = mcpwire_protocol::engine::task::TaskChange::Answer { responses: accepted };
                match runtime.apply(&record.task_id, change).await {
                    Ok(_) | Err(TaskStoreError::Terminal(_)) => {}
                    Err(e) => return Err(e.into()),
                }
            }
            Ok(empty())
        }
        _ => Err(not_offered()),
    }
}
