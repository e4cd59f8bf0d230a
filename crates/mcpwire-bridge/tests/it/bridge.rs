//! The bridge between our client and our server, in memory, across eras: a downstream client
//! of one era reaches, through the bridge, an upstream server spoken to in another.
//!
//! All in memory, on tokio's paused clock (`start_paused`): the reference server's pauses
//! take no wall-clock time.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcpwire_bridge::{client_builder, Bridge, CallRouter};
use mcpwire_client::{Client, ClientSession, ServerNotification};
use mcpwire_protocol::types::{ContentBlock, CreateMessageResult, ElicitResult, Role, SamplingContent};
use mcpwire_protocol::{Era, ProtocolVersion};
use mcpwire_transport::memory;
use serde_json::json;
use tokio::sync::broadcast::{self, error::RecvError};

const WAIT: Duration = Duration::from_secs(10);

/// The reference server, reached through a bridge whose upstream client speaks `upstream`.
async fn bridged(upstream: Option<ProtocolVersion>) -> Bridge {
    let (up_client, up_server) = memory::pair();
    let reference = mcpwire_reference::server();
    tokio::spawn(async move { reference.serve(up_server).await });
    let router = CallRouter::default();
    let mut builder = client_builder("bridge", "1", &router);
    if let Some(v) = upstream {
        builder = builder.protocol_version(v);
    }
    let session = builder.build().connect(up_client).await.expect("upstream connect");
    Bridge::mirror(session, router).await.expect("mirror")
}

/// A downstream client of `era` on the bridge.
async fn downstream(bridge: &Bridge, pin: Option<ProtocolVersion>) -> ClientSession {
    let (down_client, down_server) = memory::pair();
    let server = bridge.server().clone();
    tokio::spawn(async move { server.serve(down_server).await });
    let mut builder = Client::builder("downstream", "1")
        .elicitation(|params| async move {
            let answer =
                if params.message.contains("colour") { json!({"color": "teal"}) } else { json!({"name": "Ada"}) };
            Ok(ElicitResult {
                action: "accept".into(),
                content: Some(serde_json::from_value(answer).unwrap()),
                meta: None,
            })
        })
        .roots(|| async {
            Ok(serde_json::from_value(json!({"roots": [{"uri": "file:///down", "name": "down"}]})).unwrap())
        })
        .sampling(|_| async {
            Ok(CreateMessageResult {
                role: Role::Assistant,
                content: SamplingContent::Single(ContentBlock::text("from downstream")),
                model: "m".into(),
                stop_reason: None,
                meta: None,
            })
        });
    if let Some(v) = pin {
        builder = builder.protocol_version(v);
    }
    builder.build().connect(down_client).await.expect("downstream connect")
}

fn text(r: &mcpwire_protocol::types::CallToolResult) -> String {
    r.content.iter().filter_map(ContentBlock::as_text).collect()
}

#[tokio::test(start_paused = true)]
async fn forwards_everything_across_eras() {
    let combos = [
        (Some(ProtocolVersion::V2025_06_18), None),
        (None, Some(ProtocolVersion::V2025_06_18)),
        (None, None),
        (Some(ProtocolVersion::V2024_11_05), Some(ProtocolVersion::V2025_11_25)),
    ];
    for (up, down) in combos {
        let bridge = tokio::time::timeout(WAIT, bridged(up)).await.unwrap();
        let client = tokio::time::timeout(WAIT, downstream(&bridge, down)).await.unwrap();
        let label =
            format!("upstream {:?} / downstream {:?}", bridge.session().protocol_version(), client.protocol_version());
        let names: Vec<String> = client.list_all_tools().await.unwrap().into_iter().map(|t| t.name).collect();
        let upstream: Vec<String> =
            bridge.session().list_all_tools().await.unwrap().into_iter().map(|t| t.name).collect();
        assert_eq!(names, upstream, "{label}: the same tools in the same order");
        let r = client.call_tool("echo", json!({"text": "through"})).await.unwrap();
        assert_eq!(text(&r), "through", "{label}");
        let seen = Arc::new(Mutex::new(Vec::new()));
        let s2 = seen.clone();
        let r = client
            .call_tool_with_progress("test_tool_with_progress", json!({}), move |p| s2.lock().unwrap().push(p.progress))
            .await
            .unwrap();
        assert_eq!(text(&r), "Progress test completed", "{label}");
        assert_eq!(*seen.lock().unwrap(), [0.0, 50.0, 100.0], "{label}: progress passes through, in order");
        let read = client.read_resource("test://template/9/data").await.unwrap();
        assert!(read.contents[0].text.as_deref().unwrap().contains("\"9\""), "{label}");
        let err = client.read_resource("test://nope").await.unwrap_err();
        let expected = if client.era() == Era::Modern { -32602 } else { -32002 };
        assert_eq!(err.code(), Some(expected), "{label}: not-found in the downstream revision's code");
        let prompt = client
            .get_prompt("test_prompt_with_arguments", [("arg1".into(), "a".into()), ("arg2".into(), "b".into())].into())
            .await
            .unwrap();
        assert!(format!("{:?}", prompt.messages).contains("arg1='a'"), "{label}");
        // Upstream questions reach the downstream client, whatever the eras: a legacy one as
        // a request, a modern one as an `input_required` round.
        let r = client.call_tool("test_sampling", json!({"prompt": "q"})).await.unwrap();
        assert_eq!(text(&r), "LLM response: from downstream", "{label}");
        client.close().await.unwrap();
    }
}

/// Waits for the next tools list change (or a sign that some were missed), at most `WAIT`.
async fn next_tools_change(notes: &mut broadcast::Receiver<ServerNotification>) -> bool {
    let change = async {
        loop {
            match notes.recv().await {
                Ok(ServerNotification::ToolsListChanged) | Err(RecvError::Lagged(_)) => return true,
                Ok(_) => {}
                Err(RecvError::Closed) => return false,
            }
        }
    };
    tokio::time::timeout(WAIT, change).await.unwrap_or(false)
}

#[tokio::test(start_paused = true)]
async fn upstream_list_changes_reach_downstream_clients() {
    let bridge = bridged(Some(ProtocolVersion::V2025_11_25)).await;
    let client = downstream(&bridge, Some(ProtocolVersion::V2025_06_18)).await;
    let mut notes = client.notifications();
    client.call_tool("test_trigger_tool_change", json!({})).await.unwrap();
    assert!(next_tools_change(&mut notes).await, "downstream told of the change");
    // The bridge re-mirrors the list one tool at a time, each change announced after it is
    // made: once the tool is in, a change notice follows, so listing after each notice finds it.
    let mut found = false;
    loop {
        let names: Vec<String> = client.list_all_tools().await.unwrap().into_iter().map(|t| t.name).collect();
        if names.iter().any(|n| n == "dynamic_tool") {
            found = true;
            break;
        }
        if !next_tools_change(&mut notes).await {
            break;
        }
    }
    assert!(found, "the new upstream tool is listed downstream");
    let r = client.call_tool("dynamic_tool", json!({})).await.unwrap();
    assert_eq!(text(&r), "I was added at runtime.");
}

#[tokio::test(start_paused = true)]
async fn a_modern_downstream_client_answers_upstream_questions_in_rounds() {
    // Upstream legacy: the questions are requests to the bridge; upstream modern: they are
    // the upstream server's own `input_required` rounds. Downstream, both become rounds.
    for up in [ProtocolVersion::V2025_11_25, ProtocolVersion::V2026_07_28] {
        let bridge = tokio::time::timeout(WAIT, bridged(Some(up))).await.unwrap();
        let client = downstream(&bridge, Some(ProtocolVersion::V2026_07_28)).await;
        assert_eq!(client.era(), Era::Modern);
        let label = format!("upstream {up:?}");
        let call = |name: &'static str| client.call_tool(name, json!({}));
        let r = tokio::time::timeout(WAIT, call("test_input_required_result_multi_round")).await.unwrap().unwrap();
        let out = text(&r);
        assert!(out.starts_with("Completed two rounds:"), "{label}: {out}");
        assert!(out.contains("Ada") && out.contains("teal"), "{label}: both answers reached upstream: {out}");
        let r = tokio::time::timeout(WAIT, call("test_input_required_result_multiple_inputs")).await.unwrap().unwrap();
        assert!(text(&r).starts_with("Received all inputs"), "{label}: {}", text(&r));
        let r = tokio::time::timeout(WAIT, call("test_input_required_result_list_roots")).await.unwrap().unwrap();
        assert!(text(&r).contains("file:///down"), "{label}: {}", text(&r));
        // Calls in parallel keep their own rounds apart.
        let (a, b) = tokio::join!(
            client.call_tool("test_sampling", json!({"prompt": "a"})),
            client.call_tool("test_input_required_result_elicitation", json!({}))
        );
        assert_eq!(text(&a.unwrap()), "LLM response: from downstream", "{label}");
        assert!(text(&b.unwrap()).contains("Ada"), "{label}");
        client.close().await.unwrap();
    }
}
