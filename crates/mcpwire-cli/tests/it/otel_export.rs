//! OpenTelemetry export end to end: `mcp proxy --otel-endpoint` in front of `mcp serve`
//! (which exports because of the `OTEL_EXPORTER_OTLP_ENDPOINT` it inherits), both posting
//! OTLP/HTTP to a receiver started here, which decodes the collector protocol's protobuf.
//! A call made with a `traceparent` in `_meta` must come out as one trace: the caller ->
//! the proxy's server span -> the proxy's client span -> the upstream server's span.

#![cfg(feature = "otel")]

use std::collections::HashMap;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value as AnyValue;
use opentelemetry_proto::tonic::common::v1::KeyValue;
use opentelemetry_proto::tonic::trace::v1::span::SpanKind;
use prost::Message;
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;

const MCP: &str = env!("CARGO_BIN_EXE_mcp");
const WAIT: Duration = Duration::from_secs(30);
const TRACE_ID: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER_SPAN: &str = "00f067aa0ba902b7";

/// What the receiver got: (path, body) per POST.
type Received = Arc<Mutex<Vec<(String, Bytes)>>>;

/// An OTLP/HTTP receiver on loopback: every POST is kept and answered 200 with an empty
/// body (an empty `Export*ServiceResponse`).
async fn receiver() -> (String, Received, tokio::task::JoinHandle<()>) {
    let received = Received::default();
    let keep = received.clone();
    let app = axum::Router::new().fallback(move |uri: axum::http::Uri, body: Bytes| {
        let keep = keep.clone();
        async move {
            keep.lock().unwrap().push((uri.path().to_owned(), body));
            ([("content-type", "application/x-protobuf")], Bytes::new())
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (url, received, task)
}

/// A span as exported, with what the assertions look at.
#[derive(Debug, Clone)]
struct Exported {
    service: String,
    name: String,
    kind: i32,
    trace_id: String,
    span_id: String,
    parent: String,
    attributes: HashMap<String, String>,
}

fn text(kv: &KeyValue) -> String {
    match kv.value.as_ref().and_then(|v| v.value.as_ref()) {
        Some(AnyValue::StringValue(s)) => s.clone(),
        Some(AnyValue::IntValue(i)) => i.to_string(),
        Some(other) => format!("{other:?}"),
        None => String::new(),
    }
}

fn spans(received: &Received, path: &str) -> Vec<Exported> {
    let mut out = Vec::new();
    for (_, body) in received.lock().unwrap().iter().filter(|(p, _)| p == path) {
        let request = ExportTraceServiceRequest::decode(body.clone()).expect("OTLP protobuf");
        for resource_spans in request.resource_spans {
            let service = resource_spans
                .resource
                .iter()
                .flat_map(|r| r.attributes.iter())
                .find(|kv| kv.key == "service.name")
                .map(text)
                .unwrap_or_default();
            for span in resource_spans.scope_spans.into_iter().flat_map(|s| s.spans) {
                out.push(Exported {
                    service: service.clone(),
                    name: span.name.clone(),
                    kind: span.kind,
                    trace_id: hex(&span.trace_id),
                    span_id: hex(&span.span_id),
                    parent: hex(&span.parent_span_id),
                    attributes: span.attributes.iter().map(|kv| (kv.key.clone(), text(kv))).collect(),
                });
            }
        }
    }
    out
}

fn metric_names(received: &Received, path: &str) -> Vec<String> {
    let mut names = Vec::new();
    for (_, body) in received.lock().unwrap().iter().filter(|(p, _)| p == path) {
        let request = ExportMetricsServiceRequest::decode(body.clone()).expect("OTLP protobuf");
        for metric in request.resource_metrics.into_iter().flat_map(|r| r.scope_metrics).flat_map(|s| s.metrics) {
            names.push(metric.name);
        }
    }
    names
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The one span of `service` named `name` in our trace, of this kind.
fn one<'a>(spans: &'a [Exported], service: &str, name: &str, kind: SpanKind) -> &'a Exported {
    let found: Vec<_> = spans
        .iter()
        .filter(|s| s.service == service && s.name == name && s.kind == kind as i32 && s.trace_id == TRACE_ID)
        .collect();
    assert_eq!(found.len(), 1, "one {kind:?} span {name:?} of {service} in the trace: {spans:#?}");
    found[0]
}

#[tokio::test]
async fn a_call_through_the_proxy_is_one_exported_trace() {
    let (collector, received, _receiver) = receiver().await;
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut proxy = Command::new(MCP)
        .args(["proxy", &format!("'{MCP}' serve"), "--http", &format!("127.0.0.1:{port}")])
        .args(["--otel-endpoint", &format!("{collector}/proxy")])
        // The upstream `mcp serve` inherits this; the proxy's own flag wins over it.
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", format!("{collector}/upstream"))
        .env_remove("OTEL_SERVICE_NAME")
        .env_remove("OTEL_SDK_DISABLED")
        .env_remove("OTEL_TRACES_EXPORTER")
        .env_remove("OTEL_EXPORTER_OTLP_PROTOCOL")
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(proxy.stderr.take().unwrap()).lines();
    let ready = tokio::time::timeout(WAIT, async {
        while let Ok(Some(line)) = lines.next_line().await {
            if line.contains("serving on") {
                return true;
            }
        }
        false
    })
    .await;
    assert_eq!(ready, Ok(true), "the proxy started");
    let stderr = tokio::spawn(async move {
        let mut rest = String::new();
        while let Ok(Some(line)) = lines.next_line().await {
            rest.push_str(&line);
            rest.push('\n');
        }
        rest
    });

    // A 2026-07-28 call whose caller is the span CALLER_SPAN of trace TRACE_ID.
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
    "name": "echo", "arguments": {"text": "traced"},
    "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "otel-test", "version": "1"},
        "traceparent": format!("00-{TRACE_ID}-{CALLER_SPAN}-01"),
    }}});
    let answer: Value = tokio::time::timeout(WAIT, async {
        reqwest::Client::new()
            .post(format!("http://127.0.0.1:{port}/mcp"))
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", "tools/call")
            .header("mcp-name", "echo")
            .body(body.to_string())
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    })
    .await
    .expect("answered in time");
    assert_eq!(answer["result"]["content"][0]["text"], json!("traced"), "{answer}");

    // SIGTERM: the proxy ends its upstream (which flushes on its way out), then flushes.
    let pid = proxy.id().unwrap().to_string();
    assert!(Command::new("kill").args(["-TERM", &pid]).status().await.unwrap().success());
    let status = tokio::time::timeout(WAIT, proxy.wait()).await.expect("exited in time").unwrap();
    let stderr = stderr.await.unwrap();
    assert!(status.success(), "{status}: {stderr}");
    assert!(!stderr.contains("could not export"), "{stderr}");

    // Everything was posted before the processes exited; the upstream's too, whose exit
    // the proxy waits for (bounded: the wait below only covers a slow receiver task).
    let what =
        mcpwire_testkit::describe(|f| write!(f, "three spans of the trace exported: {:?}", received.lock().unwrap()));
    let all = mcpwire_testkit::eventually(what, || async {
        let all = [spans(&received, "/proxy/v1/traces"), spans(&received, "/upstream/v1/traces")].concat();
        (all.iter().filter(|s| s.trace_id == TRACE_ID).count() >= 3).then_some(all)
    })
    .await;

    let server = one(&all, "mcp-proxy", "tools/call echo", SpanKind::Server);
    assert_eq!(server.parent, CALLER_SPAN, "the proxy continues the caller's trace");
    assert_eq!(server.attributes["mcp.method.name"], "tools/call");
    assert_eq!(server.attributes["gen_ai.tool.name"], "echo");
    assert_eq!(server.attributes["gen_ai.operation.name"], "execute_tool");
    assert_eq!(server.attributes["mcp.protocol.version"], "2026-07-28");
    assert_eq!(server.attributes["jsonrpc.request.id"], "1");
    let client = one(&all, "mcp-proxy", "tools/call echo", SpanKind::Client);
    assert_eq!(client.parent, server.span_id, "the upstream call is a child of the downstream one");
    let upstream = one(&all, "mcp-serve", "tools/call echo", SpanKind::Server);
    assert_eq!(upstream.parent, client.span_id, "the upstream server continues the proxy's client span");
    assert_eq!(upstream.attributes["gen_ai.tool.name"], "echo");
    assert_ne!(upstream.attributes["mcp.protocol.version"], "", "{upstream:?}");

    let proxy_metrics = metric_names(&received, "/proxy/v1/metrics");
    for name in ["mcp.server.operation.duration", "mcp.client.operation.duration"] {
        assert!(proxy_metrics.iter().any(|m| m == name), "{name} exported by the proxy: {proxy_metrics:?}");
    }
    let upstream_metrics = metric_names(&received, "/upstream/v1/metrics");
    assert!(upstream_metrics.iter().any(|m| m == "mcp.server.operation.duration"), "{upstream_metrics:?}");
}

#[test]
fn a_bad_endpoint_is_a_usage_error() {
    let out = std::process::Command::new(MCP).args(["serve", "--otel-endpoint", "localhost:4318"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("is not an http(s) URL"), "{stderr}");
    let out = std::process::Command::new(MCP)
        .args(["proxy", "x", "--stdio", "--otel-endpoint", "http://127.0.0.1:1"])
        .env("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("OTLP/HTTP only"));
}
