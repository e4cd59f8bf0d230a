//! Timeouts: a request that takes too long is cancelled and answered with an error that
//! says so, with a limit for every request and one of its own per tool.

use std::collections::HashMap;
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use futures::future::BoxFuture;
use mcpwire_protocol::message::ServerResult;
use mcpwire_protocol::types::CallToolResult;
use mcpwire_protocol::{ErrorObject, Method};
use tower::{Layer, Service};

use super::{BoxError, McpRequest, McpResponse};

/// Limits how long a request may take: past its limit its handler is dropped, its
/// context's cancellation token cancelled (work it handed elsewhere stops too), and it is
/// answered: a tool execution error for a tool ("the tool NAME did not finish within 2s"),
/// `-32603` otherwise.
///
/// ```
/// use std::time::Duration;
/// use mcpwire_server::middleware::TimeoutLayer;
///
/// let limits = TimeoutLayer::new(Duration::from_secs(30)).tool("index_everything", Duration::from_secs(600));
/// let server = mcpwire_server::Server::builder("demo", "1.0").layer(limits).build();
/// ```
///
/// (A tool call that runs as a task is answered when its task is created; the task's own
/// time is bounded by its TTL.)
#[derive(Debug, Clone)]
pub struct TimeoutLayer {
    default: Option<Duration>,
    tools: Arc<HashMap<String, Duration>>,
}

impl TimeoutLayer {
    /// Every request within `limit`.
    pub fn new(limit: Duration) -> Self {
        Self { default: Some(limit), tools: Arc::default() }
    }

    /// No limit but the ones given per tool ([`Self::tool`]).
    pub fn tools_only() -> Self {
        Self { default: None, tools: Arc::default() }
    }

    /// The tool `name` within `limit` (instead of the limit of every request).
    pub fn tool(mut self, name: impl Into<String>, limit: Duration) -> Self {
        Arc::make_mut(&mut self.tools).insert(name.into(), limit);
        self
    }

    /// The limit of `request`, if it has one.
    fn limit_of(&self, request: &McpRequest) -> Option<Duration> {
        let tool = match request.method() {
            Method::CallTool => request.name().and_then(|name| self.tools.get(name)),
            _ => None,
        };
        tool.copied().or(self.default)
    }
}

impl<S> Layer<S> for TimeoutLayer {
    type Service = Timeout<S>;

    fn layer(&self, inner: S) -> Timeout<S> {
        Timeout { inner, limits: self.clone() }
    }
}

/// The service of a [`TimeoutLayer`].
#[derive(Debug, Clone)]
pub struct Timeout<S> {
    inner: S,
    limits: TimeoutLayer,
}

impl<S> Service<McpRequest> for Timeout<S>
where
    S: Service<McpRequest, Response = McpResponse>,
    S::Error: Into<BoxError>,
    S::Future: Send + 'static,
{
    type Response = McpResponse;
    type Error = BoxError;
    type Future = BoxFuture<'static, Result<McpResponse, BoxError>>;

    fn poll_ready(&mut self, cx: &mut TaskContext<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, request: McpRequest) -> Self::Future {
        let Some(limit) = self.limits.limit_of(&request) else {
            let answer = self.inner.call(request);
            return Box::pin(async move { answer.await.map_err(Into::into) });
        };
        let tool = match request.method() {
            Method::CallTool => request.name().map(str::to_owned),
            _ => None,
        };
        let cancel = request.context().cancellation().clone();
        let answer = self.inner.call(request);
        Box::pin(async move {
            match tokio::time::timeout(limit, answer).await {
                Ok(answer) => answer.map_err(Into::into),
                Err(_) => {
                    cancel.cancel();
                    Ok(timed_out(tool.as_deref(), limit))
                }
            }
        })
    }
}

/// The answer to a request cancelled after `limit`.
fn timed_out(tool: Option<&str>, limit: Duration) -> McpResponse {
    match tool {
        Some(tool) => McpResponse::Result(ServerResult::CallTool(CallToolResult::error(format!(
            "the tool {tool} did not finish within {limit:?}; it was cancelled"
        )))),
        None => McpResponse::Error(ErrorObject::internal(format!(
            "the request did not finish within {limit:?}; it was cancelled"
        ))),
    }
}
