//! The stack of layers around the handlers, built once with the server, and the way a
//! request goes through it.

use std::any::Any;
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
use tracing::Instrument;

use super::trace::{self, TracingLayer};
use super::{BoxError, McpRequest, McpResponse, Stack};
use crate::answer::Answer;
use crate::context::Context;
use crate::dispatch::dispatch;
use crate::panic::{self, Culprit, Subject};
use crate::server::Server;

/// One layer as the builder keeps it: what wraps the stack built so far.
type Wrap = Arc<dyn Fn(Stack) -> Stack + Send + Sync>;

/// The layers added to a server's builder, in order (the last one outermost).
#[derive(Clone, Default)]
pub(crate) struct Layers(Vec<Entry>);

/// One layer added to a server's builder.
#[derive(Clone)]
enum Entry {
    /// A [`TracingLayer`]: the server runs it itself when it is outermost (see [`serve`]).
    Tracing(TracingLayer),
    /// Any other layer, as the way to wrap the stack inside it.
    Wrap(Wrap),
}

impl Entry {
    fn wrap(&self, inner: Stack) -> Stack {
        match self {
            Self::Tracing(layer) => Stack::new(layer.layer(inner)),
            Self::Wrap(wrap) => wrap(inner),
        }
    }
}

/// The middleware of a server, built once with it.
#[derive(Debug, Default)]
pub(crate) struct Middleware {
    /// The layers around the handlers; `None` without layers (or with a [`TracingLayer`]
    /// alone).
    stack: Option<Stack>,
    /// The outermost layer when it is a [`TracingLayer`]: run by the server itself, around
    /// the stack inside it, instead of as one more boxed service and future (the span, the
    /// attributes and the histogram are the same).
    traced: Option<TracingLayer>,
}

impl Layers {
    /// Adds `layer` around the ones before.
    pub(crate) fn push<L>(&mut self, layer: L)
    where
        L: Layer<Stack> + Send + Sync + 'static,
        L::Service: Service<McpRequest, Response = McpResponse> + Clone + Send + Sync + 'static,
        <L::Service as Service<McpRequest>>::Error: Into<BoxError>,
        <L::Service as Service<McpRequest>>::Future: Send + 'static,
    {
        let entry = match (&layer as &dyn Any).downcast_ref::<TracingLayer>() {
            Some(tracing) => Entry::Tracing(tracing.clone()),
            None => Entry::Wrap(Arc::new(move |inner| Stack::new(layer.layer(inner)))),
        };
        self.0.push(entry);
    }

    /// The middleware: the handlers inside every layer, the outermost [`TracingLayer`] kept
    /// out of the stack; no stack if that leaves no layer (requests are then served directly).
    pub(crate) fn build(&self) -> Middleware {
        let (traced, inner) = match self.0.split_last() {
            Some((Entry::Tracing(layer), inner)) => (Some(layer.clone()), inner),
            _ => (None, &self.0[..]),
        };
        let stack = match inner.is_empty() {
            true => None,
            false => Some(inner.iter().fold(Stack::new(Handlers), |stack, entry| entry.wrap(stack))),
        };
        Middleware { stack, traced }
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
            Ok(response(answer, &context))
        })
    }
}

/// The response the layers see for a handler's `answer`: a refusal is its JSON-RPC error.
fn response(answer: Answer, ctx: &Context) -> McpResponse {
    match answer {
        Answer::Result(result) => McpResponse::Result(result),
        Answer::Refused(refusal) => McpResponse::Error(refusal.into_error(ctx.revision())),
        Answer::Error(error) => McpResponse::Error(error),
        Answer::InputRequired => McpResponse::InputRequired,
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

/// Serves one request: through the stack of layers if there is one, in the span of the
/// outermost [`TracingLayer`] if that is what it is.
pub(crate) async fn serve(server: &Server, served: &mut ServedRequest, ctx: &Context) -> Answer {
    let middleware = &server.inner.middleware;
    let Some(layer) = &middleware.traced else {
        return match &middleware.stack {
            None => handle(server, &mut served.request, ctx, ctx.has_round()).await,
            Some(stack) => through(stack, server, served, ctx, false).await.0,
        };
    };
    let traced = layer.begin(&served.request, &served.meta, ctx);
    let work = async {
        match &middleware.stack {
            None => {
                // Seen as the layer over the handlers would see it.
                let response = response(handle(server, &mut served.request, ctx, ctx.has_round()).await, ctx);
                let error = trace::response_error_type(&response);
                (response.into(), error)
            }
            Some(stack) => through(stack, server, served, ctx, true).await,
        }
    };
    // Without a subscriber that wants the span, nothing is entered.
    let (answer, error) = match traced.span.is_disabled() {
        true => work.await,
        false => work.instrument(traced.span.clone()).await,
    };
    layer.finish(traced, error.as_deref());
    answer
}

/// `served` through `stack`. The request is moved into it, except that a multi-round
/// request is copied: its answer is fingerprinted with the request as the client sent it.
/// Gives the answer and, if `traced`, the `error.type` of what the stack answered (as a
/// [`TracingLayer`] around the stack records it; `None` when a layer panicked, whose future
/// is then dropped).
async fn through(
    stack: &Stack,
    server: &Server,
    served: &mut ServedRequest,
    ctx: &Context,
    traced: bool,
) -> (Answer, Option<String>) {
    let subject = Subject::of(&served.request).into_owned();
    let message = match ctx.has_round() {
        true => served.request.clone(),
        false => std::mem::replace(&mut served.request, ClientRequest::Ping),
    };
    let request =
        McpRequest { message, meta: std::mem::take(&mut served.meta), context: ctx.clone(), server: server.clone() };
    // Called inside the unwind guard: a layer may panic in `call` as well as in its future.
    match AssertUnwindSafe(async { stack.oneshot(request).await }).catch_unwind().await {
        Ok(outcome) => {
            let error = if traced { trace::error_type(&outcome) } else { None };
            let answer = match outcome {
                Ok(response) => response.into(),
                Err(error) => failed(&subject, &*error),
            };
            (answer, error)
        }
        Err(payload) => (subject.panicked(Culprit::Middleware, &*payload), None),
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
