//! The stack of layers around the handlers, built once with the server, and the way a
//! request goes through it.

use std::fmt;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll};

use futures::future::BoxFuture;
use futures::FutureExt;
use mcpwire_protocol::engine::ServedRequest;
use mcpwire_protocol::message::{ClientRequest, ServerResult};
use mcpwire_protocol::types::CallToolResult;
use mcpwire_protocol::ErrorObject;
use tower::{Layer, Service};

use super::{BoxError, McpRequest, McpResponse, Stack};
use crate::answer::Answer;
use crate::context::Context;
use crate::dispatch::dispatch;
use crate::panic::{self, Culprit, Subject};
use crate::server::Server;

/// One layer as the builder keeps it: what wraps the stack built so far.
type Wrap = Arc<dyn Fn(Stack) -> Stack + Send + Sync>;

/// The layers given to the builder, innermost first.
#[derive(Clone, Default)]
pub(crate) struct Layers(Vec<Wrap>);

impl Layers {
    /// Adds `layer` around the ones before.
    pub(crate) fn push<L>(&mut self, layer: L)
    where
        L: Layer<Stack> + Send + Sync + 'static,
        L::Service: Service<McpRequest, Response = McpResponse> + Clone + Send + Sync + 'static,
        <L::Service as Service<McpRequest>>::Error: Into<BoxError>,
        <L::Service as Service<McpRequest>>::Future: Send + 'static,
    {
        self.0.push(Arc::new(move |inner| Stack::new(layer.layer(inner))));
    }

    /// The stack: the handlers inside every layer; `None` without layers (requests are then
    /// served directly).
    pub(crate) fn build(&self) -> Option<Stack> {
        if self.0.is_empty() {
            return None;
        }
        Some(self.0.iter().fold(Stack::new(Handlers), |stack, wrap| wrap(stack)))
    }
}

impl fmt::Debug for Layers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Layers({})", self.0.len())
    }
}

/// The innermost service: the request served from the registries. A handler that panics
/// fails its request here, where the request is still at hand to name it.
#[derive(Debug, Clone, Copy)]
struct Handlers;

impl Service<McpRequest> for Handlers {
    type Response = McpResponse;
    type Error = BoxError;
    type Future = BoxFuture<'static, Result<McpResponse, BoxError>>;

    fn poll_ready(&mut self, _: &mut TaskContext<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: McpRequest) -> Self::Future {
        Box::pin(async move {
            let McpRequest { mut message, context, server, .. } = request;
            // The message is the stack's own: a multi-round request was copied before it.
            let answer = handle(&server, &mut message, &context, false).await;
            Ok(match answer {
                Answer::Result(result) => McpResponse::Result(result),
                Answer::Refused(refusal) => McpResponse::Error(refusal.into_error(context.revision())),
                Answer::Error(error) => McpResponse::Error(error),
                Answer::InputRequired => McpResponse::InputRequired,
            })
        })
    }
}

/// Serves `request` from the registries (`keep`: leaving it whole); a panic of its handler
/// fails it alone.
async fn handle(server: &Server, request: &mut ClientRequest, ctx: &Context, keep: bool) -> Answer {
    match AssertUnwindSafe(dispatch(server, request, ctx, keep)).catch_unwind().await {
        Ok(answer) => answer,
        Err(payload) => panic::answer(request, &*payload),
    }
}

/// Serves one request: through the server's layers if it has any, else directly.
pub(crate) async fn serve(server: &Server, served: &mut ServedRequest, ctx: &Context) -> Answer {
    match &server.inner.stack {
        None => handle(server, &mut served.request, ctx, ctx.has_round()).await,
        Some(stack) => through(stack, server, served, ctx).await,
    }
}

/// Serves one request through `stack`. The request is moved into it, except that a
/// multi-round request is copied: its answer is fingerprinted with the request as the
/// client sent it.
async fn through(stack: &Stack, server: &Server, served: &mut ServedRequest, ctx: &Context) -> Answer {
    let subject = Subject::of(&served.request).into_owned();
    let message = match ctx.has_round() {
        true => served.request.clone(),
        false => std::mem::replace(&mut served.request, ClientRequest::Ping),
    };
    let request =
        McpRequest { message, meta: std::mem::take(&mut served.meta), context: ctx.clone(), server: server.clone() };
    // Called inside the unwind guard: a layer may panic in `call` as well as in its future.
    match AssertUnwindSafe(async { stack.oneshot(request).await }).catch_unwind().await {
        Ok(Ok(response)) => response.into(),
        Ok(Err(error)) => failed(&subject, &*error),
        Err(payload) => subject.panicked(Culprit::Middleware, &*payload),
    }
}

/// The answer to a request a layer failed with `error`, logged: a tool execution error for
/// a tool (the model sees why), `-32603` otherwise.
fn failed(subject: &Subject<'_>, error: &(dyn std::error::Error + Send + Sync)) -> Answer {
    let Subject { method, what, tool } = subject;
    let text = mcpwire_protocol::error::chain(error);
    tracing::warn!(%method, name = %what, "a middleware layer failed the request: {text}");
    if *tool {
        Answer::Result(ServerResult::CallTool(CallToolResult::error(format!("the tool {what} failed: {text}"))))
    } else {
        Answer::Error(ErrorObject::internal(text))
    }
}
