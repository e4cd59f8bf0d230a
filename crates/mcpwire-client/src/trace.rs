//! Tracing of outgoing requests (the `opentelemetry` feature): a client span per request,
//! named and attributed as the OpenTelemetry semantic conventions for MCP say, whose trace
//! context goes to the server in `_meta` (`traceparent`, `tracestate`), so that the
//! server's span continues the client's trace; and the `mcp.client.operation.duration`
//! histogram, on the global meter provider.

use mcpwire_protocol::message::ClientRequest;
use mcpwire_protocol::telemetry::{
    self, SpanName, CLIENT_DURATION, DURATION_BOUNDARIES, ERROR_TYPE, EXECUTE_TOOL, METHOD_NAME, OPERATION_NAME,
    PROTOCOL_VERSION,
};
use mcpwire_protocol::trace_context::{TraceParent, TRACEPARENT, TRACESTATE};
use mcpwire_protocol::types::Meta;
use mcpwire_protocol::ProtocolVersion;
use std::time::Instant;

use opentelemetry::metrics::Histogram;
use opentelemetry::trace::TraceContextExt;
use opentelemetry::KeyValue;
use tracing::field::Empty;
use tracing_opentelemetry::OpenTelemetrySpanExt;

/// The span of a request of the protocol, and the `_meta` members that carry its context
/// (none when nothing records the span as OpenTelemetry).
pub(crate) fn client_span(request: &ClientRequest, revision: ProtocolVersion) -> (tracing::Span, Meta) {
    let method = request.method();
    let name = SpanName::of(request);
    let span = tracing::info_span!(
        target: "mcpwire::client",
        "mcp.client.request",
        otel.name = %name,
        otel.kind = "client",
        mcp.method.name = %method,
        mcp.protocol.version = %revision,
        gen_ai.tool.name = Empty,
        gen_ai.operation.name = Empty,
        gen_ai.prompt.name = Empty,
    );
    if let Some((attribute, name)) = telemetry::target(request) {
        span.record(attribute, name);
    }
    if let ClientRequest::CallTool(_) = request {
        span.record(OPERATION_NAME, EXECUTE_TOOL);
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

/// The client's histogram, on the global meter provider as it is now.
pub(crate) fn durations() -> Histogram<f64> {
    opentelemetry::global::meter("mcp")
        .f64_histogram(CLIENT_DURATION)
        .with_unit("s")
        .with_description("The duration of an MCP request as the client sees it")
        .with_boundaries(DURATION_BOUNDARIES.to_vec())
        .build()
}

/// Records in `durations` how long `request`, started at `started`, took; `error` its
/// JSON-RPC error code.
pub(crate) fn record(
    durations: &Histogram<f64>,
    request: &ClientRequest,
    revision: ProtocolVersion,
    started: Instant,
    error: Option<i64>,
) {
    // On the stack, the method's name not copied: with no meter provider set (the usual
    // case) the histogram drops them unread, once per request.
    let mut attributes: smallvec::SmallVec<[KeyValue; 4]> = smallvec::SmallVec::new();
    attributes.push(KeyValue::new(METHOD_NAME, request.method().as_str()));
    attributes.push(KeyValue::new(PROTOCOL_VERSION, revision.as_str()));
    if let Some((attribute, name)) = telemetry::target(request) {
        attributes.push(KeyValue::new(attribute, name.to_owned()));
    }
    if let Some(code) = error {
        attributes.push(KeyValue::new(ERROR_TYPE, code.to_string()));
    }
    durations.record(started.elapsed().as_secs_f64(), &attributes);
}
