//! Middleware over the client's outgoing requests, against the real server in memory, on
//! tokio's paused clock.

use crate::common;

use std::sync::{Arc, Mutex};
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use common::*;
use futures::future::BoxFuture;
use mcpwire_client::middleware::{BoxError, ClientCall, ClientReply, ClientStack};
use mcpwire_client::{Client, ClientError, ProtocolVersion};
use mcpwire_protocol::message::ServerResult;
use mcpwire_protocol::types::{CallToolResult, ContentBlock, ElicitResult, ListToolsResult, Tool};
use mcpwire_server::middleware::McpRequest;
use serde_json::json;
use tower::util::{MapRequestLayer, MapResponseLayer};
use tower::Service;

fn text(result: &mcpwire_protocol::types::CallToolResult) -> &str {
    result.content.first().and_then(ContentBlock::as_text).unwrap_or_default()
}

/// Records each request a layer sees: (method, target, is a round).
type Seen = Arc<Mutex<Vec<(String, Option<String>, bool)>>>;

fn recorder(seen: &Seen) -> MapRequestLayer<impl Fn(ClientCall) -> ClientCall + Clone> {
    let seen = seen.clone();
    MapRequestLayer::new(move |call: ClientCall| {
        seen.lock().unwrap().push((
            call.method().as_str().to_owned(),
            call.target().map(str::to_owned),
            call.is_round(),
        ));
        call
    })
}

#[tokio::test(start_paused = true)]
async fn a_layer_sees_every_typed_request_of_both_eras() {
    for version in [ProtocolVersion::V2025_06_18, ProtocolVersion::V2026_07_28] {
        let (server, _) = test_server();
        let seen = Seen::default();
        let client = Client::builder("c", "1").protocol_version(version).layer(recorder(&seen)).build();
        let session = connect(&client, &server).await;
        seen.lock().unwrap().clear();
        let r = session.call_tool("echo", json!({"text": "hi"})).await.unwrap();
        assert_eq!(text(&r), "hi");
        let seen = seen.lock().unwrap().clone();
        // The call, and the pages of tools/list the client reads to check its output.
        let calls: Vec<_> = seen.iter().filter(|(m, _, _)| m == "tools/call").collect();
        assert_eq!(calls, [&("tools/call".to_owned(), Some("echo".to_owned()), false)], "{version:?}: {seen:?}");
        assert!(seen.iter().all(|(m, _, _)| m == "tools/list" || m == "tools/call"), "{version:?}: {seen:?}");
    }
}

#[tokio::test(start_paused = true)]
async fn meta_added_by_a_layer_reaches_the_server() {
    let server_probe = Arc::new(Mutex::new(Vec::new()));
    let probe = server_probe.clone();
    let server = mcpwire_server::Server::builder("s", "1")
        .layer(MapRequestLayer::new(move |request: McpRequest| {
            let tenant = request.meta().other.as_ref().and_then(|m| m.get("example.com/tenant").cloned());
            probe.lock().unwrap().push(tenant);
            request
        }))
        .build();
    server.add_tool(mcpwire_protocol::types::Tool::new("echo", "echoes", json!({"type": "object"})), |_, _| async {
        Ok(mcpwire_protocol::types::CallToolResult::text("ok"))
    });
    let client = Client::builder("c", "1")
        .validate_outputs(false)
        .layer(MapRequestLayer::new(|mut call: ClientCall| {
            call.meta.insert("example.com/tenant".into(), json!("t1"));
            call
        }))
        .build();
    let session = connect(&client, &server).await;
    session.call_tool("echo", json!({})).await.unwrap();
    assert_eq!(server_probe.lock().unwrap().last().cloned(), Some(Some(json!("t1"))));
}

/// A layer that answers `tools/list` itself, from a canned list, and sends the rest on.
#[derive(Clone)]
struct Canned {
    inner: ClientStack,
}

impl Service<ClientCall> for Canned {
    type Response = ClientReply;
    type Error = BoxError;
    type Future = BoxFuture<'static, Result<ClientReply, BoxError>>;

    fn poll_ready(&mut self, cx: &mut TaskContext<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, call: ClientCall) -> Self::Future {
        if call.method() == mcpwire_protocol::Method::ListTools {
            let tools = vec![Tool::new("cached", "from the cache", json!({"type": "object"}))];
            return Box::pin(async {
                Ok(ServerResult::ListTools(ListToolsResult { tools, next_cursor: None }).into())
            });
        }
        Box::pin(self.inner.call(call))
    }
}

#[tokio::test(start_paused = true)]
async fn a_layer_can_answer_without_sending() {
    let (server, _) = test_server();
    let client = Client::builder("c", "1")
        .validate_outputs(false)
        .layer(tower::layer::layer_fn(|inner| Canned { inner }))
        .build();
    let session = connect(&client, &server).await;
    let tools: Vec<String> = session.list_all_tools().await.unwrap().into_iter().map(|t| t.name).collect();
    assert_eq!(tools, ["cached"], "answered by the layer, taken as the typed result");
    let r = session.call_tool("echo", json!({"text": "sent"})).await.unwrap();
    assert_eq!(text(&r), "sent", "the rest goes to the server");
}

#[tokio::test(start_paused = true)]
async fn towers_timeout_cancels_the_request_and_says_it_was_the_layer() {
    let (server, probes) = test_server();
    let client = Client::builder("c", "1")
        .validate_outputs(false)
        .layer(tower::timeout::TimeoutLayer::new(Duration::from_secs(2)))
        .build();
    let session = connect(&client, &server).await;
    let started = tokio::time::Instant::now();
    let e = session.call_tool("slow", json!({})).await.unwrap_err();
    assert!(e.is_middleware(), "{e}");
    let source = std::error::Error::source(&e).expect("the layer's error");
    assert!(source.is::<tower::timeout::error::Elapsed>(), "{source}");
    assert_eq!(started.elapsed(), Duration::from_secs(2), "in virtual time");
    // Dropping the request sent notifications/cancelled: the server's handler was dropped.
    probes.slow_dropped.wait("the server stopped the slow tool").await;
    assert!(!probes.slow_finished.load(std::sync::atomic::Ordering::SeqCst));
    // A server error is still the server's error, not the layer's.
    let e = session.call_tool("no-such-tool", json!({})).await.unwrap_err();
    assert!(e.is_protocol() && !e.is_middleware(), "{e}");
}

#[tokio::test(start_paused = true)]
async fn each_input_required_round_goes_through_the_layers() {
    let (server, _) = test_server();
    let seen = Seen::default();
    let client = Client::builder("c", "1")
        .protocol_version(ProtocolVersion::V2026_07_28)
        .validate_outputs(false)
        .elicitation(|_| async {
            Ok(ElicitResult {
                action: "accept".into(),
                content: Some(serde_json::from_value(json!({"name": "Ada"})).unwrap()),
                meta: None,
            })
        })
        .layer(recorder(&seen))
        .build();
    let session = connect(&client, &server).await;
    seen.lock().unwrap().clear();
    let r = session.call_tool("form", json!({})).await.unwrap();
    assert!(text(&r).contains("Ada"), "{r:?}");
    let seen = seen.lock().unwrap().clone();
    assert_eq!(
        seen,
        [
            ("tools/call".to_owned(), Some("form".to_owned()), false),
            ("tools/call".to_owned(), Some("form".to_owned()), true)
        ],
        "the first round, then the retry with the answer"
    );
}

#[test]
fn a_layer_error_that_is_a_client_error_stays_one() {
    let e: BoxError = Box::new(ClientError::Closed);
    assert!(e.downcast::<ClientError>().unwrap().is_closed());
}

#[tokio::test(start_paused = true)]
async fn a_layer_sees_and_changes_the_typed_result_and_a_wrong_one_is_refused() {
    for version in [ProtocolVersion::V2025_06_18, ProtocolVersion::V2026_07_28] {
        let (server, _) = test_server();
        // Shouts every tool's text; answers prompts/list with a tools/call result.
        let client = Client::builder("c", "1")
            .protocol_version(version)
            .validate_outputs(false)
            .layer(MapResponseLayer::new(|reply: ClientReply| match reply {
                ClientReply::Result(ServerResult::CallTool(result)) => {
                    let shouted = text(&result).to_uppercase();
                    ClientReply::Result(ServerResult::CallTool(CallToolResult::text(shouted)))
                }
                ClientReply::Result(ServerResult::ListPrompts(_)) => {
                    ClientReply::Result(ServerResult::CallTool(CallToolResult::text("not a list")))
                }
                other => other,
            }))
            .build();
        let session = connect(&client, &server).await;
        let r = session.call_tool("echo", json!({"text": "hi"})).await.unwrap();
        assert_eq!(text(&r), "HI", "{version:?}");
        let e = session.list_prompts(None).await.unwrap_err();
        assert!(e.is_decode(), "{version:?}: {e}");
        assert!(e.to_string().contains("another method"), "{version:?}: {e}");
    }
}
