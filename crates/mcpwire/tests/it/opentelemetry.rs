//! The tracing layer and the client's spans as OpenTelemetry sees them (tracing-opentelemetry
//! into the SDK's in-memory exporter): a server span per request, named and attributed as the
//! semantic conventions for MCP say, continuing the caller's trace from `_meta`; a client span
//! per request, whose context the client sends there.
#![cfg(feature = "opentelemetry")]

use mcpwire::server::middleware::TracingLayer;
use mcpwire::{tool, Server, TestClient};
use opentelemetry::trace::{SpanId, SpanKind, Status, TraceId, TracerProvider as _};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use serde_json::json;
use tracing::Instrument;
use tracing_subscriber::layer::SubscriberExt;

/// Echoes its text.
#[tool]
fn echo(text: String) -> String {
    text
}

/// This thread's spans go to OpenTelemetry, exported in memory, until the guard drops.
fn spans_in_memory() -> (InMemorySpanExporter, SdkTracerProvider, tracing::subscriber::DefaultGuard) {
    let exporter = InMemorySpanExporter::default();
    let provider = SdkTracerProvider::builder().with_simple_exporter(exporter.clone()).build();
    let layer = tracing_opentelemetry::layer().with_tracer(provider.tracer("test"));
    let guard = tracing::subscriber::set_default(tracing_subscriber::registry().with(layer));
    (exporter, provider, guard)
}

fn attribute(span: &SpanData, key: &str) -> Option<String> {
    span.attributes.iter().find(|kv| kv.key.as_str() == key).map(|kv| kv.value.to_string())
}

#[tokio::test(start_paused = true)]
async fn the_server_span_continues_the_trace_named_in_meta() {
    let (exporter, provider, _guard) = spans_in_memory();

    let server = Server::builder("traced", "1.0").tool(echo_tool()).layer(TracingLayer::new()).build();
    let client = server.test_client().await.unwrap();
    let traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    let params = json!({
        "name": "echo",
        "arguments": {"text": "hi"},
        "_meta": {"traceparent": traceparent, "tracestate": "vendor=opaque"}
    });
    client.request("tools/call", Some(params)).await.unwrap();
    // Without trace context: a trace of its own.
    client.request("tools/call", Some(json!({"name": "echo", "arguments": {"text": "alone"}}))).await.unwrap();
    // A malformed one is ignored the same way.
    let bad = json!({"name": "echo", "arguments": {"text": "x"}, "_meta": {"traceparent": "00-zz-00-01"}});
    client.request("tools/call", Some(bad)).await.unwrap();
    provider.force_flush().unwrap();

    let spans = exporter.get_finished_spans().unwrap();
    let calls: Vec<&SpanData> = spans.iter().filter(|s| s.name == "tools/call echo").collect();
    assert_eq!(calls.len(), 3, "{spans:#?}");
    let continued = calls[0];
    assert_eq!(continued.span_context.trace_id(), TraceId::from_hex("4bf92f3577b34da6a3ce929d0e0e4736").unwrap());
    assert_eq!(continued.parent_span_id, SpanId::from_hex("00f067aa0ba902b7").unwrap());
    assert_eq!(continued.span_kind, SpanKind::Server);
    assert_eq!(continued.span_context.trace_state().header(), "vendor=opaque");
    assert_eq!(attribute(continued, "mcp.method.name").as_deref(), Some("tools/call"));
    assert_eq!(attribute(continued, "gen_ai.tool.name").as_deref(), Some("echo"));
    assert_eq!(attribute(continued, "gen_ai.operation.name").as_deref(), Some("execute_tool"));
    assert_eq!(continued.status, Status::Unset);
    for alone in &calls[1..] {
        assert_ne!(alone.span_context.trace_id(), continued.span_context.trace_id());
        assert_eq!(alone.parent_span_id, SpanId::INVALID, "a root span");
    }
}

#[tokio::test(start_paused = true)]
async fn a_failed_call_is_an_error_span() {
    let (exporter, provider, _guard) = spans_in_memory();

    let server = Server::builder("traced", "1.0").tool(echo_tool()).layer(TracingLayer::new()).build();
    let client = server.test_client().await.unwrap();
    client.call_tool("nope", json!({})).await.unwrap_err();
    provider.force_flush().unwrap();
    let spans = exporter.get_finished_spans().unwrap();
    let failed = spans.iter().find(|s| s.name == "tools/call nope").expect("the call's span");
    assert_eq!(attribute(failed, "error.type").as_deref(), Some("-32602"));
    assert!(matches!(failed.status, Status::Error { .. }), "{:?}", failed.status);
}

#[tokio::test(start_paused = true)]
async fn a_call_is_one_trace_from_the_clients_application_to_the_server() {
    let (exporter, provider, _guard) = spans_in_memory();

    let server = Server::builder("traced", "1.0").tool(echo_tool()).layer(TracingLayer::new()).build();
    let client = server.test_client().await.unwrap();
    let app = tracing::info_span!("the application's work");
    client.call_tool("echo", json!({"text": "hi"})).instrument(app.clone()).await.unwrap();
    drop(app);
    provider.force_flush().unwrap();

    let spans = exporter.get_finished_spans().unwrap();
    let find = |name: &str, kind: SpanKind| {
        spans.iter().find(|s| s.name == name && s.span_kind == kind).unwrap_or_else(|| panic!("{name}: {spans:#?}"))
    };
    let app = find("the application's work", SpanKind::Internal);
    let client_span = find("tools/call echo", SpanKind::Client);
    let server_span = find("tools/call echo", SpanKind::Server);
    let trace = app.span_context.trace_id();
    assert_eq!(client_span.span_context.trace_id(), trace);
    assert_eq!(server_span.span_context.trace_id(), trace);
    assert_eq!(client_span.parent_span_id, app.span_context.span_id());
    assert_eq!(server_span.parent_span_id, client_span.span_context.span_id());
    assert_eq!(attribute(client_span, "gen_ai.tool.name").as_deref(), Some("echo"));
    assert_eq!(attribute(client_span, "mcp.method.name").as_deref(), Some("tools/call"));
}

#[tokio::test(start_paused = true)]
async fn operation_durations_are_recorded_by_method_tool_and_error() {
    use opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData};
    use opentelemetry_sdk::metrics::{InMemoryMetricExporter, PeriodicReader, SdkMeterProvider};

    let exporter = InMemoryMetricExporter::default();
    let provider = SdkMeterProvider::builder().with_reader(PeriodicReader::builder(exporter.clone()).build()).build();
    // The layer and the client take their histograms from the global provider as it is when
    // they are made.
    // (The other tests of this binary may record there too: this one's tools are its own.)
    opentelemetry::global::set_meter_provider(provider.clone());
    /// Shouts its text.
    #[tool]
    fn shout(text: String) -> String {
        text.to_uppercase()
    }
    let server = Server::builder("measured", "1.0").tool(shout_tool()).layer(TracingLayer::new()).build();
    let client = server.test_client().await.unwrap();
    client.call_tool("shout", json!({"text": "hi"})).await.unwrap();
    client.call_tool("shout", json!({"text": "again"})).await.unwrap();
    client.call_tool("not_measured_yet", json!({})).await.unwrap_err();
    provider.force_flush().unwrap();

    let exported = exporter.get_finished_metrics().unwrap();
    // The server's and the client's histograms: the same calls, seen from both ends.
    for name in ["mcp.server.operation.duration", "mcp.client.operation.duration"] {
        let metric = exported
            .iter()
            .flat_map(|r| r.scope_metrics())
            .flat_map(|s| s.metrics())
            .find(|m| m.name() == name)
            .unwrap_or_else(|| panic!("the histogram {name}"));
        assert_eq!(metric.unit(), "s");
        let AggregatedMetrics::F64(MetricData::Histogram(histogram)) = metric.data() else {
            panic!("{name}: a histogram of seconds: {:?}", metric.data())
        };
        let point = |tool: &str| {
            histogram
                .data_points()
                .find(|p| p.attributes().any(|kv| kv.key.as_str() == "gen_ai.tool.name" && kv.value.as_str() == tool))
                .unwrap_or_else(|| panic!("{name}: a point for {tool}"))
        };
        let attribute = |p: &opentelemetry_sdk::metrics::data::HistogramDataPoint<f64>, key: &str| {
            p.attributes().find(|kv| kv.key.as_str() == key).map(|kv| kv.value.to_string())
        };
        let shouted = point("shout");
        assert_eq!(shouted.count(), 2, "{name}");
        assert_eq!(attribute(shouted, "mcp.method.name").as_deref(), Some("tools/call"), "{name}");
        assert_eq!(attribute(shouted, "error.type"), None, "{name}");
        let nope = point("not_measured_yet");
        assert_eq!(nope.count(), 1, "{name}");
        assert_eq!(attribute(nope, "error.type").as_deref(), Some("-32602"), "{name}");
    }
}
