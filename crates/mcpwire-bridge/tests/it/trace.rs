//! A call through the bridge is one trace: downstream client -> the bridge's server -> the
//! bridge's client -> the upstream server, each span the parent of the next (in memory,
//! tracing-opentelemetry into the SDK's in-memory exporter).
#![cfg(feature = "opentelemetry")]

use mcpwire_bridge::{client_builder, Bridge, CallRouter};
use mcpwire_client::Client;
use mcpwire_server::middleware::TracingLayer;
use mcpwire_transport::memory;
use opentelemetry::trace::{SpanKind, TracerProvider as _};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider};
use serde_json::json;
use tracing::Instrument;
use tracing_subscriber::layer::SubscriberExt;

#[tokio::test(start_paused = true)]
async fn a_call_through_the_bridge_is_one_trace() {
    let exporter = InMemorySpanExporter::default();
    let provider = SdkTracerProvider::builder().with_simple_exporter(exporter.clone()).build();
    let layer = tracing_opentelemetry::layer().with_tracer(provider.tracer("test"));
    let _guard = tracing::subscriber::set_default(tracing_subscriber::registry().with(layer));

    // The upstream server, traced.
    let (up_client, up_server) = memory::pair();
    let upstream = mcpwire_reference::server_from(mcpwire_reference::builder().layer(TracingLayer::new()), false);
    tokio::spawn(async move { upstream.serve(up_server).await });
    // The bridge, its own server traced too.
    let router = CallRouter::default();
    let session = client_builder("bridge", "1", &router).build().connect(up_client).await.expect("upstream");
    let bridge = Bridge::mirror_with(session, router, |b| b.layer(TracingLayer::new())).await.expect("mirror");
    let (down_client, down_server) = memory::pair();
    let server = bridge.server().clone();
    tokio::spawn(async move { server.serve(down_server).await });
    let downstream = Client::builder("downstream", "1").build().connect(down_client).await.expect("downstream");

    let app = tracing::info_span!("the application's work");
    let result = downstream.call_tool("echo", json!({"text": "hi"})).instrument(app.clone()).await.unwrap();
    assert_eq!(result.content[0].as_text(), Some("hi"));
    drop(app);
    provider.force_flush().unwrap();

    let spans = exporter.get_finished_spans().unwrap();
    let rows: Vec<String> = spans
        .iter()
        .map(|s| {
            let c = &s.span_context;
            format!("{} {:?} {} {} <- {}", s.name, s.span_kind, c.trace_id(), c.span_id(), s.parent_span_id)
        })
        .collect();
    let spans_text = rows.join("\n");
    let app = spans.iter().find(|s| s.name == "the application's work").expect("the application's span");
    let trace = app.span_context.trace_id();
    let mut calls: Vec<_> =
        spans.iter().filter(|s| s.name == "tools/call echo" && s.span_context.trace_id() == trace).collect();
    assert_eq!(calls.len(), 4, "client, bridge server, bridge client, upstream server:\n{spans_text}");
    // Each span's parent is the one before it: ordered from the application down.
    let mut parent = app.span_context.span_id();
    let mut chain = Vec::new();
    while let Some(i) = calls.iter().position(|s| s.parent_span_id == parent) {
        let next = calls.remove(i);
        chain.push(next.span_kind.clone());
        parent = next.span_context.span_id();
    }
    assert_eq!(chain, [SpanKind::Client, SpanKind::Server, SpanKind::Client, SpanKind::Server], "{spans_text}");
}
