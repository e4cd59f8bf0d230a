//! Tasks: tool calls that answer at once with a durable handle and run in the background.
//!
//! Two protocol shapes share one runtime:
//!
//! - **2025-11-25** (core, experimental). A client that sees `tasks.requests.tools.call` in
//!   the server's capabilities may add `params.task` (`{ttl}`) to a `tools/call` of a tool
//!   whose `execution.taskSupport` is `optional` or `required`. The server answers
//!   `CreateTaskResult` at once and runs the handler in the background; the client polls
//!   `tasks/get`, waits for the outcome with `tasks/result`, pages through its tasks with
//!   `tasks/list` and cancels with `tasks/cancel`. Every status change is announced with
//!   `notifications/tasks/status`. A `required` tool called without `task`, or a
//!   `forbidden` one called with it, is `-32601`.
//! - **2026-07-28** (the `io.modelcontextprotocol/tasks` extension). The server declares the
//!   extension in `capabilities.extensions`; when a request's client capabilities declare it
//!   too, a call of an `optional` or `required` tool answers `resultType: "task"`. The
//!   client polls `tasks/get`, which carries the outcome inline; questions the handler asks
//!   (`ctx.elicit`, ...) appear as the task's `inputRequests` and are answered with
//!   `tasks/update`; `tasks/cancel` is an acknowledgement. A `required` tool called by a
//!   client without the extension is `-32021` naming it.
//!
//! State lives in a [`TaskStore`]: [`InMemoryTaskStore`] by default (bounded), or any
//! other (a shared store lets several instances serve one task's polls; the records and
//! changes are serializable for that). The handler of a task runs on the instance that
//! created it, with a [`Context`] whose cancellation token fires on `tasks/cancel`, when the
//! task's `ttl` elapses, or (2025-11-25, where tasks belong to the session) when the
//! connection ends.
//!
//! Several instances of one server behind one address (scale-out) keep their tasks in one
//! shared store and call [`crate::Server::share_tasks`]: any instance then answers every
//! `tasks/*` method for any task, a cancellation reaches the instance running the handler,
//! and the tasks of an instance that stopped fail once its lease runs out.
//!
//! Task ids are 128 random bits. A 2025-11-25 task belongs to the connection (the legacy
//! session) that created it: other connections cannot see, list or cancel it. A
//! 2026-07-28 task has no owner (the era has no sessions): its id is its bearer token.

mod clock;
mod config;
mod link;
mod methods;
mod run;
mod runtime;
mod shared;
mod store;

pub use clock::TaskClock;
pub use config::{TaskConfig, TaskSettings};
pub use mcpwire_protocol::engine::task::{TaskChange, TaskOutcome, TaskRecord, TaskStoreError};
pub use shared::{TASKS_TOPIC, TASK_RUNNER_STOPPED};
pub use store::{now_ms, InMemoryTaskStore, TaskPage, TaskStore};

pub(crate) use link::{related_task_meta, TaskLink};
pub(crate) use methods::dispatch;
pub(crate) use run::{handler_token, plan_tool_call, run_modern_tool, start_tool_task, ToolPlan};
pub(crate) use runtime::TaskRuntime;
pub(crate) use shared::share_tasks;
