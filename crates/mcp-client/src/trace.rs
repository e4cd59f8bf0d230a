//! Tracing of outgoing requests (the `opentelemetry` feature): a client span per request,
//! named and attributed as the OpenTelemetry semantic conventions for MCP say, whose trace
//! context goes to the server in `_meta` (`traceparent`, `tracestate`), so that the
//! server's span continues the client's trace.

use mcp_protocol::message::ClientRequest;
use mcp_protocol::trace_context::{TraceParent, TRACEPARENT, TRACESTATE};
use mcp_protocol::types::Meta;
use mcp_protocol::ProtocolVersion;
use opentelemetry::trace::TraceContextExt;
use tracing::field::Empty;
use tracing_opentelemetry::OpenTelemetrySpanExt;

/// The span of a request of the protocol, and the `_meta` members that carry its context
/// (none when nothing records the span as OpenTelemetry).
pub(crate) fn client_span(request: &ClientRequest, revision: ProtocolVersion) -> (tracing::Span, Meta) {
    let method = request.method();
    let target = match request {
        ClientRequest::CallTool(call) => Some(call.name.as_str()),
        ClientRequest::GetPrompt(get) => Some(get.name.as_str()),
        _ => None,
    };
    let name = match target {
        Some(target) => format!("{method} {target}"),
        None => method.as_str().to_owned(),
    };
    let span = tracing::info_span!(
        target: "mcp::client",
        "mcp.client.request",
        otel.name = %name,
        otel.kind = "client",
        mcp.method.name = %method,
        mcp.protocol.version = %revision,
        gen_ai.tool.name = Empty,
        gen_ai.operation.name = Empty,
        gen_ai.prompt.name = Empty,
    );
    match request {
        ClientRequest::CallTool(call) => {
            span.record("gen_ai.tool.name", call.name.as_str());
            span.record("gen_ai.operation.name", "execute_tool");
        }
        ClientRequest::GetPrompt(get) => {
            span.record("gen_ai.prompt.name", get.name.as_str());
        }
        _ => {}
    }
    let meta = meta_of(&span);
    (span, meta)
}

/// The `_meta` members that name `span` as the caller.
fn meta_of(span: &tracing::Span) -> Meta {
    let context = span.context();
    let otel_span = context.span();
    let caller = otel_span.span_context();
    let mut meta = Meta::new();
    if !caller.is_valid() {
        return meta;
    }
    let parent = TraceParent {
        trace_id: caller.trace_id().to_bytes(),
        parent_id: caller.span_id().to_bytes(),
        flags: caller.trace_flags().to_u8(),
    };
    meta.insert(TRACEPARENT.to_owned(), parent.to_string().into());
    let state = caller.trace_state().header();
    if !state.is_empty() {
        meta.insert(TRACESTATE.to_owned(), state.into());
    }
    meta
}
