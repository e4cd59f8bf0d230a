//! Middleware: the handling of one request as a [`tower::Service`], wrapped by layers.
//!
//! Every request the engine hands to the application (`tools/call`, `resources/read`,
//! `prompts/get`, the lists, `completion/complete`, `tasks/*`) goes through the layers
//! given to [`crate::ServerBuilder::layer`] as an [`McpRequest`]: its typed message, its
//! `_meta`, and its [`crate::Context`]. The innermost service serves it from the registries
//! and answers an [`McpResponse`]. A layer may answer by itself (short-circuit), change the
//! request on its way in or the response on its way out, time it, or fail it: tower's own
//! layers (timeout, concurrency limit, load shedding, ...) work unchanged.
//!
//! A layer's error (`Err` from the service) is answered as a tool execution error for
//! `tools/call` (the model sees what went wrong, "the tool NAME failed: request timed out")
//! and as JSON-RPC `-32603` otherwise, and logged at `warn` level. A layer that panics fails
//! its request only, as a handler would. A layer that wants a particular JSON-RPC error
//! answers `Ok(McpResponse::Error(..))` instead.
//!
//! What the engine answers itself (`initialize`, `ping`, `server/discover`,
//! `logging/setLevel`, subscriptions and listen streams) does not reach the layers. A tool
//! call that runs as a task is answered when its task is created: the layers see that
//! answer, not the task's end.
//!
//! Without layers a request is served directly: no allocation, no indirection.
//!
//! Layers that ship here: [`TimeoutLayer`] (a limit per request and per tool),
//! [`RateLimitLayer`] (a token bucket per session, or per any key), [`ResultSizeLayer`] (a
//! bound on result size), [`VisibilityLayer`] (what each request may see and use),
//! [`TracingLayer`] (a span per request, as the OpenTelemetry conventions for MCP say).
//!
//! Concurrency is bounded per session and overall by
//! [`crate::ServerConfig::max_in_flight_per_session`] and
//! [`crate::ServerConfig::max_in_flight`] (refused at once), or by tower's
//! `ConcurrencyLimitLayer` (queued) with `LoadShedLayer` (refused). Such a limit counts every
//! request that reaches the layers, lists included: a client that lists the tools after a
//! call (to check its result against their output schemas) queues that list behind the
//! calls holding the slots. A limit in a layer is shared by all sessions of the server.

mod boxed;
#[cfg(feature = "opentelemetry")]
mod metrics;
mod rate_limit;
mod request;
mod response;
mod result_size;
mod stack;
mod timeout;
mod trace;
mod visibility;

pub use boxed::Stack;
pub use rate_limit::{RateLimit, RateLimitLayer, RATE_LIMITED};
pub use request::McpRequest;
pub use response::McpResponse;
pub use result_size::{ResultSize, ResultSizeLayer};
pub(crate) use stack::{serve, Layers, Middleware};
pub use timeout::{Timeout, TimeoutLayer};
pub use trace::{Tracing, TracingLayer};
pub use visibility::{Item, Visibility, VisibilityLayer};

/// The error type of the middleware stack: any error, boxed (tower's convention).
pub type BoxError = tower::BoxError;
