//! `tools/call` as a task: when a call becomes one, and running its handler to its end.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;

use futures::FutureExt;
use mcpwire_protocol::engine::task::{TaskChange, TaskOutcome, TaskRecord, TaskStoreError};
use mcpwire_protocol::engine::Scope;
use mcpwire_protocol::message::{ClientRequest, ServerResult};
use mcpwire_protocol::types::{CallToolResult, CreateTaskResult, JsonObject, TaskStatus, TaskSupport, Tool};
use mcpwire_protocol::{ErrorObject, Method, ProtocolVersion};
use tokio_util::sync::{CancellationToken, DropGuard};

use super::link::TaskLink;
use super::runtime::TaskRuntime;
use crate::answer::Answer;
use crate::context::Context;
use crate::error::HandlerResult;
use crate::refusal::{protocol_error, Refusal};
use crate::server::registry::ToolEntry;
use crate::server::Server;

/// How a `tools/call` runs.
pub(crate) enum ToolPlan {
    /// As an ordinary request.
    Inline,
    /// 2025-11-25: as the task the client asked for, with the `ttl` it asked for.
    LegacyTask(Option<u64>),
    /// 2026-07-28, for a client that declared the extension: inline at first (multi-round
    /// questions and quick answers stay ordinary), then as a task once it has to wait.
    Modern(TaskSupport),
}

/// How this `tools/call` runs, or the error for the wrong mode.
pub(crate) fn plan_tool_call(
    runtime: Option<&Arc<TaskRuntime>>,
    scope: &Scope,
    tool: &Tool,
    task: Option<&mcpwire_protocol::types::TaskMetadata>,
) -> Result<ToolPlan, Refusal> {
    let Some(runtime) = runtime else { return Ok(ToolPlan::Inline) };
    let support = tool.task_support();
    if scope.revision == ProtocolVersion::V2025_11_25 {
        return match (task, support) {
            (Some(_), TaskSupport::Forbidden) => Err(Refusal::TaskMode { tool: tool.name.clone(), required: false }),
            (Some(m), _) => Ok(ToolPlan::LegacyTask(m.ttl)),
            (None, TaskSupport::Required) => Err(Refusal::TaskMode { tool: tool.name.clone(), required: true }),
            (None, _) => Ok(ToolPlan::Inline),
        };
    }
    if scope.revision.is_modern() && runtime.config.extension {
        // A `params.task` of the 2025-11-25 shape means nothing here: the server decides.
        return match (support, scope.declares_tasks_extension()) {
            (TaskSupport::Forbidden, _) => Ok(ToolPlan::Inline),
            (support, true) => Ok(ToolPlan::Modern(support)),
            (TaskSupport::Required, false) => Err(Refusal::TasksExtensionMissing),
            (TaskSupport::Optional, false) => Ok(ToolPlan::Inline),
        };
    }
    // Revisions without tasks (and servers that turned the extension off) run every tool inline.
    Ok(ToolPlan::Inline)
}

/// The cancellation token a request's handler gets. A 2026-07-28 `tools/call` that may
/// become a task gets its own token (the request's would end with the request, and the
/// handler may outlive it): [`run_modern_tool`] cancels it if the request is cancelled before
/// the hand-over, and `tasks/cancel` after.
pub(crate) fn handler_token(
    server: &Server,
    request: &ClientRequest,
    scope: &Scope,
    request_token: &CancellationToken,
) -> CancellationToken {
    let ClientRequest::CallTool(call) = request else { return request_token.clone() };
    let may_become_task = scope.revision.is_modern()
        && server.inner.tasks.as_ref().is_some_and(|t| t.config.extension)
        && scope.declares_tasks_extension()
        && server
            .inner
            .tools
            .with_all(|tools| tools.get(&call.name).is_some_and(|e| e.tool.task_support() != TaskSupport::Forbidden));
    if may_become_task {
        CancellationToken::new()
    } else {
        request_token.clone()
    }
}

/// Who owns the tasks a request makes and sees: its principal when its transport authorized
/// it (in both eras: a task is visible to its principal only); else the connection in the
/// legacy era, nobody in the modern one.
pub(crate) fn owner(ctx: &Context) -> Option<String> {
    if let Some(principal) = ctx.principal() {
        return Some(principal.key());
    }
    // A session the transport names (HTTP's `Mcp-Session-Id`) may move between instances:
    // its tasks belong to the name, which every instance knows, not to one instance's link.
    (!ctx.revision().is_modern())
        .then(|| ctx.link().session_id().map_or_else(|| ctx.link().task_owner().to_owned(), str::to_owned))
}

/// A handler's work as a task runs it: its result, or the panic it died of.
type TaskWork = futures::future::BoxFuture<'static, std::thread::Result<HandlerResult<CallToolResult>>>;

fn tool_work(entry: Arc<ToolEntry>, arguments: JsonObject, ctx: Context) -> TaskWork {
    Box::pin(AssertUnwindSafe(entry.call(arguments, ctx)).catch_unwind())
}

/// Stores a new `working` task for a request, or the error to answer.
async fn create_task(runtime: &TaskRuntime, ctx: &Context, requested_ttl: Option<u64>) -> Result<TaskRecord, Refusal> {
    if runtime.running() >= runtime.config.max_running {
        return Err(Refusal::TooManyTasks);
    }
    let mut record = TaskRecord::new(
        mcpwire_protocol::id::random_id(),
        owner(ctx),
        ctx.revision(),
        Method::CallTool.as_str(),
        Some(runtime.ttl(requested_ttl)),
        Some(runtime.config.poll_interval),
        runtime.clock.now_ms(),
    );
    // Its handler runs here: should this instance stop, the others fail the task.
    record.runner = runtime.instance();
    Ok(runtime.store.create(record).await?)
}

fn created(record: &TaskRecord) -> ServerResult {
    ServerResult::CreateTask(Box::new(CreateTaskResult { task: record.to_task(false), meta: None }))
}

/// 2025-11-25: creates the task the client asked for, starts the handler in the background
/// and returns the `CreateTaskResult` (shaped for the revision by the codec).
pub(crate) async fn start_tool_task(
    runtime: &Arc<TaskRuntime>,
    ctx: &Context,
    entry: Arc<ToolEntry>,
    arguments: JsonObject,
    requested_ttl: Option<u64>,
) -> Result<ServerResult, Refusal> {
    let record = create_task(runtime, ctx, requested_ttl).await?;
    let task_id = record.task_id.clone();
    // The handler outlives the request and ends with its session; its messages go to the
    // connection (the request's own stream, if any, ends with the answer).
    let link = ctx.link().clone();
    let cancel = link.tasks_end().child_token();
    let task = Arc::new(TaskLink::new(task_id.clone(), runtime.clone(), false));
    let job = ctx.for_task(task, cancel.clone());
    runtime.started(&task_id, cancel, Some(link));
    let tool = entry.tool.name.clone();
    let work = tool_work(entry, arguments, job.clone());
    tokio::spawn(run_task(runtime.clone(), task_id, tool, work, job, record.ttl_ms));
    Ok(created(&record))
}

/// 2026-07-28, the client having declared the extension: runs the handler inline for the
/// configured immediate window ([`crate::TaskConfig::immediate_window`]). A handler that
/// finishes or asks questions (multi-round `input_required`) within it answers as an ordinary
/// request; one still running is handed to a new task and the answer is the
/// `CreateTaskResult` (`resultType: "task"`). A `required` tool that finished at once still
/// answers with a task, already terminal. After the hand-over, the handler's questions become
/// the task's `inputRequests`.
pub(crate) async fn run_modern_tool(
    runtime: &Arc<TaskRuntime>,
    ctx: &Context,
    entry: Arc<ToolEntry>,
    arguments: JsonObject,
    support: TaskSupport,
) -> Answer {
    // A request cancelled before its handler is handed to a task cancels the handler.
    let guard = ctx.cancellation().clone().drop_guard();
    let mut work = tool_work(entry.clone(), arguments, ctx.clone());
    let window = runtime.config.immediate_window;
    let early = if window.is_zero() {
        // Exactly one poll: the hand-over happens at the handler's first wait, however soon
        // that wait would end (the task's runner polls the future again at once).
        let once = std::future::poll_fn(|cx| std::task::Poll::Ready(std::future::Future::poll(work.as_mut(), cx)));
        match once.await {
            std::task::Poll::Ready(finished) => Some(finished),
            std::task::Poll::Pending => None,
        }
    } else {
        tokio::time::timeout(window, &mut work).await.ok()
    };
    let finished = match early {
        Some(finished) => finished,
        None => {
            let record = match create_task(runtime, ctx, None).await {
                Ok(record) => record,
                Err(e) => return Answer::Refused(e),
            };
            let task_id = record.task_id.clone();
            ctx.attach_task(Arc::new(TaskLink::new(task_id.clone(), runtime.clone(), true)));
            runtime.started(&task_id, ctx.cancellation().clone(), None);
            disarm(guard);
            let tool = entry.tool.name.clone();
            tokio::spawn(run_task(runtime.clone(), task_id, tool, work, ctx.clone(), record.ttl_ms));
            return Answer::Result(created(&record));
        }
    };
    disarm(guard);
    // A panic before the hand-over is the call's own: a tool execution error, as inline.
    let result = finished.unwrap_or_else(|payload| {
        let message = crate::panic::message(&*payload);
        tracing::error!(method = %Method::CallTool, name = %entry.tool.name, "the handler panicked: {message}");
        Ok(crate::panic::tool_error(&entry.tool.name))
    });
    let asks = matches!(result, Err(crate::error::HandlerError::InputRequired));
    if support != TaskSupport::Required || asks {
        return Answer::of(result.map(ServerResult::CallTool));
    }
    // A task-only tool that finished at once: a task, born terminal.
    let record = match create_task(runtime, ctx, None).await {
        Ok(record) => record,
        Err(e) => return Answer::Refused(e),
    };
    match runtime.store.update(&record.task_id, finish_change(Ok(result), ctx.revision())).await {
        Ok(record) => Answer::Result(created(&record)),
        Err(e) => Answer::Refused(e.into()),
    }
}

/// Lets a guard go without cancelling its token.
fn disarm(guard: DropGuard) {
    let _token = guard.disarm();
}

/// The first text block of a tool result (the reason of a failure).
fn first_text(result: &CallToolResult) -> Option<String> {
    result.content.iter().find_map(|c| c.as_text()).map(str::to_owned)
}

/// The change that records how a handler ended.
fn finish_change(finished: std::thread::Result<HandlerResult<CallToolResult>>, rev: ProtocolVersion) -> TaskChange {
    let failure = |error: ErrorObject| {
        let message = Some(error.message.clone());
        TaskChange::Finish { status: TaskStatus::Failed, outcome: TaskOutcome::Error(error), message }
    };
    match finished {
        Ok(Ok(result)) => {
            // 2025-11-25: a tool result with isError fails the task; 2026-07-28: only a
            // JSON-RPC error does (the result is then the task's `result`).
            let failed = !rev.is_modern() && result.is_error == Some(true);
            let message =
                if failed { first_text(&result).map(|t| format!("Tool execution failed: {t}")) } else { None };
            let value = serde_json::to_value(&result).unwrap_or_default();
            let status = if failed { TaskStatus::Failed } else { TaskStatus::Completed };
            TaskChange::Finish { status, outcome: TaskOutcome::Result(value), message }
        }
        Ok(Err(e)) => failure(protocol_error(e, rev)),
        Err(_panic) => failure(ErrorObject::internal("the tool failed unexpectedly")),
    }
}

/// Resolves when the stored task ended while its handler still runs (cancelled through
/// another instance sharing the store) or is gone (purged); checked every poll interval.
async fn ended_in_store(runtime: &TaskRuntime, task_id: &str) {
    loop {
        tokio::time::sleep(runtime.config.poll_interval).await;
        match runtime.store.get(task_id).await {
            Ok(Some(record)) if !record.status.is_terminal() => {}
            Ok(_) => return,
            Err(e) => tracing::debug!(task = %task_id, "reading a running task failed: {e}"),
        }
    }
}

/// Runs a task's handler to its end (or its cancellation, or its ttl) and stores the outcome.
async fn run_task(
    runtime: Arc<TaskRuntime>,
    task_id: String,
    tool: String,
    mut work: TaskWork,
    ctx: Context,
    ttl_ms: Option<u64>,
) {
    let cancel = ctx.cancellation().clone();
    let rev = ctx.revision();
    let ttl = async {
        match ttl_ms {
            Some(ms) => tokio::time::sleep(Duration::from_millis(ms)).await,
            None => std::future::pending().await,
        }
    };
    let mut expired = false;
    let finished = tokio::select! {
        r = &mut work => Some(r),
        _ = cancel.cancelled() => None,
        _ = ttl => {
            expired = true;
            cancel.cancel();
            None
        }
        _ = ended_in_store(&runtime, &task_id) => {
            cancel.cancel();
            None
        }
    };
    if finished.is_none() {
        // Let the handler see its cancellation; whatever it returns is discarded.
        let _ = tokio::time::timeout(runtime.config.cancel_grace, &mut work).await;
    }
    ctx.finish();
    let change = match finished {
        Some(finished) => {
            if let Err(payload) = &finished {
                let message = crate::panic::message(&**payload);
                tracing::error!(method = %Method::CallTool, name = %tool, task = %task_id, "the task's handler panicked: {message}");
            }
            finish_change(finished, rev)
        }
        // Cancelled by request (already recorded: this is then refused), elsewhere, or
        // because the session ended.
        None if !expired => TaskChange::Cancel { message: Some("The session that owned the task ended.".into()) },
        None => {
            let error = ErrorObject::internal("the task's ttl elapsed before it finished");
            let message = Some(error.message.clone());
            TaskChange::Finish { status: TaskStatus::Failed, outcome: TaskOutcome::Error(error), message }
        }
    };
    match runtime.apply(&task_id, change).await {
        Ok(_) | Err(TaskStoreError::Terminal(_)) | Err(TaskStoreError::NotFound) => {}
        Err(e) => tracing::warn!(task = %task_id, "storing the outcome of a task failed: {e}"),
    }
    runtime.ended(&task_id);
}
