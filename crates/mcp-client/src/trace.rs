//! Tracing of outgoing requests (the `opentelemetry` feature): a client span per request,
//! named and attributed as the OpenTelemetry semantic conventions for MCP say, whose trace
//! context goes to the server in `_meta` (`traceparent`, `tracestate`), so that the
//! server's span continues the client's trace; and the `mcp.client.operation.duration`
//! histogram, on the global meter provider.

use mcp_protocol::message::ClientRequest;
use mcp_protocol::trace_context::{TraceParent, TRACEPARENT, TRACESTATE};
use mcp_protocol::types::Meta;
use mcp_protocol::ProtocolVersion;
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

/// The histogram's name.
const CLIENT_DURATION: &str = "mcp.client.operation.duration";
/// The bucket boundaries the conventions advise, in seconds.
const BOUNDARIES: [f64; 14] = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0];

/// The client's histogram, on the global meter provider as it is now.
pub(crate) fn durations() -> Histogram<f64> {
    opentelemetry::global::meter("mcp")
        .f64_histogram(CLIENT_DURATION)
        .with_unit("s")
        .with_description("The duration of an MCP request as the client sees it")
        .with_boundaries(BOUNDARIES.to_vec())
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
    let mut attributes = vec![
        KeyValue::new("mcp.method.name", request.method().as_str().to_owned()),
        KeyValue::new("mcp.protocol.version", revision.as_str()),
    ];
    match request {
        ClientRequest::CallTool(call) => attributes.push(KeyValue::new("gen_ai.tool.name", call.name.clone())),
        ClientRequest::GetPrompt(get) => attributes.push(KeyValue::new("gen_ai.prompt.name", get.name.clone())),
        _ => {}
    }
    if let Some(code) = error {
        attributes.push(KeyValue::new("error.type", code.to_string()));
    }
    durations.record(started.elapsed().as_secs_f64(), &attributes);
}
