//! Tracing: a span per request, following the OpenTelemetry semantic conventions for MCP,
//! which `tracing-opentelemetry` turns into an OpenTelemetry server span as is.

use std::task::{Context as TaskContext, Poll};

use futures::future::BoxFuture;
use mcpwire_protocol::message::ClientRequest;
use mcpwire_protocol::telemetry::{self, SpanName, ERROR_TYPE, EXECUTE_TOOL, OPERATION_NAME, TOOL_ERROR};
use mcpwire_protocol::Method;
use tower::{Layer, Service};
use tracing::field::Empty;
use tracing::Instrument;

use super::{BoxError, McpRequest, McpResponse};

/// Runs each request in a `tracing` span named `mcp.server.request` at `info` level, target
/// `mcpwire::server`, with the attributes of the OpenTelemetry semantic conventions for MCP
/// (server side):
///
/// | field | value |
/// |---|---|
/// | `otel.name` | `{mcp.method.name} {target}`: the tool or prompt name as target, else the method alone |
/// | `otel.kind` | `server` |
/// | `mcp.method.name` | the method |
/// | `mcp.protocol.version` | the request's revision |
/// | `mcp.session.id` | the legacy session's id, if any |
/// | `mcp.resource.uri` | the resource of `resources/read` |
/// | `jsonrpc.request.id` | the request's id |
/// | `gen_ai.tool.name`, `gen_ai.operation.name` | the tool and `execute_tool`, for `tools/call` |
/// | `gen_ai.prompt.name` | the prompt, for `prompts/get` |
/// | `error.type` | the JSON-RPC error code, `tool_error` for a tool result with `isError`, or the layer's error |
/// | `otel.status_code` | `ERROR` when `error.type` is set |
///
/// The handler runs inside the span: its own spans and events are its children. Put the
/// layer outermost (added last) to time everything the other layers do too.
///
/// With the `opentelemetry` feature, and `tracing-opentelemetry` in the subscriber, the span
/// continues the caller's trace: a valid W3C `traceparent` in the request's `_meta` (with
/// its `tracestate`) becomes its remote parent. A missing or malformed one starts a trace.
///
/// With the `opentelemetry` feature it also records the `mcp.server.operation.duration`
/// histogram of the conventions (seconds; `mcp.method.name`, `mcp.protocol.version`,
/// `gen_ai.tool.name` or `gen_ai.prompt.name`, `error.type`) on the global meter provider,
/// as set when the layer is made.
#[derive(Debug, Clone)]
pub struct TracingLayer {
    #[cfg(feature = "opentelemetry")]
    durations: super::metrics::Durations,
}

impl TracingLayer {
    /// The layer.
    pub fn new() -> Self {
        Self {
            #[cfg(feature = "opentelemetry")]
            durations: super::metrics::Durations::server(),
        }
    }
}

impl Default for TracingLayer {
    fn default() -> Self {
        Self::new()
    }
}

impl<S> Layer<S> for TracingLayer {
    type Service = Tracing<S>;

    fn layer(&self, inner: S) -> Tracing<S> {
        Tracing {
            inner,
            #[cfg(feature = "opentelemetry")]
            durations: self.durations.clone(),
        }
    }
}

/// The service of a [`TracingLayer`].
#[derive(Debug, Clone)]
pub struct Tracing<S> {
    inner: S,
    #[cfg(feature = "opentelemetry")]
    durations: super::metrics::Durations,
}

impl<S> Service<McpRequest> for Tracing<S>
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
        let span = span_of(&request);
        #[cfg(feature = "opentelemetry")]
        let measurement = self.durations.start(request.message(), request.revision());
        let answer = {
            let _entered = span.enter();
            self.inner.call(request)
        };
        Box::pin(
            async move {
                let answer = answer.await.map_err(Into::into);
                let span = tracing::Span::current();
                let error = match &answer {
                    Ok(McpResponse::Error(e)) => Some(e.code.to_string()),
                    Ok(response) if response.is_error() => Some(TOOL_ERROR.to_owned()),
                    Ok(_) => None,
                    Err(e) => Some(mcpwire_protocol::error::chain(&**e)),
                };
                if let Some(error) = &error {
                    span.record(ERROR_TYPE, error.as_str());
                    span.record("otel.status_code", "ERROR");
                }
                #[cfg(feature = "opentelemetry")]
                measurement.finish(error.as_deref());
                answer
            }
            .instrument(span),
        )
    }
}

/// Makes the caller's span (`traceparent` and `tracestate` in `_meta`) the parent of `span`,
/// if the request names a valid one and the subscriber has the OpenTelemetry layer.
#[cfg(feature = "opentelemetry")]
fn continue_trace(span: &tracing::Span, meta: &mcpwire_protocol::message::RequestMeta) {
    use mcpwire_protocol::trace_context::{TraceParent, TRACEPARENT, TRACESTATE};
    use opentelemetry::trace::{SpanContext, SpanId, TraceContextExt, TraceFlags, TraceId, TraceState};
    use tracing_opentelemetry::OpenTelemetrySpanExt;

    let Some(members) = meta.other.as_deref() else { return };
    let Some(parent) = members.get(TRACEPARENT).and_then(|v| v.as_str()).and_then(TraceParent::parse) else {
        return;
    };
    let state = members.get(TRACESTATE).and_then(|v| v.as_str()).and_then(|s| s.parse::<TraceState>().ok());
    let caller = SpanContext::new(
        TraceId::from_bytes(parent.trace_id),
        SpanId::from_bytes(parent.parent_id),
        TraceFlags::new(parent.flags),
        true,
        state.unwrap_or_default(),
    );
    // Refused only when nothing records the span as OpenTelemetry: nothing to continue then.
    let _ = span.set_parent(opentelemetry::Context::new().with_remote_span_context(caller));
}

/// The span of `request`, its attributes set but the outcome's.
fn span_of(request: &McpRequest) -> tracing::Span {
    let method = request.method();
    // Written only if the span is recorded.
    let name = SpanName::of(request.message());
    let ctx = request.context();
    let span = tracing::info_span!(
        target: "mcpwire::server",
        "mcp.server.request",
        otel.name = %name,
        otel.kind = "server",
        otel.status_code = Empty,
        mcp.method.name = %method,
        mcp.protocol.version = %ctx.revision(),
        mcp.session.id = Empty,
        mcp.resource.uri = Empty,
        jsonrpc.request.id = %ctx.request_id(),
        gen_ai.tool.name = Empty,
        gen_ai.operation.name = Empty,
        gen_ai.prompt.name = Empty,
        error.type = Empty,
    );
    if let Some(session) = ctx.session_id() {
        span.record("mcp.session.id", session);
    }
    #[cfg(feature = "opentelemetry")]
    continue_trace(&span, request.meta());
    if let Some((attribute, name)) = telemetry::target(request.message()) {
        span.record(attribute, name);
    }
    match request.message() {
        ClientRequest::CallTool(_) => {
            span.record(OPERATION_NAME, EXECUTE_TOOL);
        }
        ClientRequest::ReadResource(read) if method == Method::ReadResource => {
            span.record("mcp.resource.uri", read.uri.as_str());
        }
        _ => {}
    }
    span
}
