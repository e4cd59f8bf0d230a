//! Middleware over real HTTP: a layer sees the legacy session's id (what the tracing layer
//! records as `mcp.session.id`), and nothing for a stateless request.

use crate::common;

use std::sync::{Arc, Mutex};

use common::*;
use mcpwire_http::HttpConfig;
use mcpwire_protocol::types::{CallToolResult, Tool};
use mcpwire_server::{McpRequest, Server};
use serde_json::json;
use tower::util::MapRequestLayer;

#[tokio::test]
async fn a_layer_sees_the_session_id_of_a_legacy_session_and_none_for_a_stateless_request() {
    let seen: Arc<Mutex<Vec<Option<String>>>> = Arc::default();
    let record = seen.clone();
    let server = Server::builder("sessions", "1")
        .layer(MapRequestLayer::new(move |request: McpRequest| {
            record.lock().unwrap().push(request.context().session_id().map(str::to_owned));
            request
        }))
        .build();
    server.add_tool(Tool::new("fine", "test tool", json!({"type": "object"})), |_, _| async {
        Ok(CallToolResult::text("fine"))
    });
    let s = TestServer::start(server, HttpConfig::default()).await;

    let version = "2025-11-25";
    let session = s.legacy_session(version, json!({})).await;
    let body = request(2, "tools/call", json!({"name": "fine"}));
    let resp = within("legacy call", s.post_legacy(&session, Some(version), &body).send()).await.unwrap();
    assert_eq!(tool_text(&final_message(resp).await), "fine");

    let resp =
        within("stateless call", s.post_modern(&modern_request(3, "tools/call", json!({"name": "fine"}))).send())
            .await
            .unwrap();
    assert_eq!(tool_text(&final_message(resp).await), "fine");

    assert_eq!(*seen.lock().unwrap(), [Some(session), None]);
}
