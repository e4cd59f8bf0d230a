//! The reference server's MCP App: `test_app` listed with its `_meta.ui`, its page read with
//! the app MIME type and its CSP, the extension declared to clients of both eras.

use std::time::Duration;

use mcpwire_protocol::types::{APPS_EXTENSION, APP_MIME_TYPE};
use mcpwire_reference::APP_URI;
use mcpwire_transport::{memory, Connection};
use serde_json::{json, Value};

struct Peer {
    conn: Connection,
    next_id: i64,
}

impl Peer {
    fn start() -> Self {
        let (client, server_end) = memory::pair();
        let server = mcpwire_reference::server();
        tokio::spawn(async move { server.serve(server_end).await });
        Self { conn: client, next_id: 1 }
    }

    async fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let request = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.conn.outgoing.send(mcpwire_protocol::frame::Outbound::text(request.to_string())).await.unwrap();
        loop {
            let wait = tokio::time::timeout(Duration::from_secs(5), self.conn.incoming.recv());
            let frame = wait.await.expect("in time").unwrap().unwrap();
            let msg: Value = serde_json::from_str(&frame.text).unwrap();
            if msg.get("id") == Some(&json!(id)) && msg.get("method").is_none() {
                return msg;
            }
        }
    }
}

fn modern(mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"extensions": {APPS_EXTENSION: {"mimeTypes": [APP_MIME_TYPE]}}},
    });
    params
}

#[tokio::test]
async fn the_app_tool_is_listed_with_its_meta_ui_and_its_page_read_with_its_csp() {
    let mut peer = Peer::start();
    let discover = peer.call("server/discover", modern(json!({}))).await;
    assert_eq!(discover["result"]["capabilities"]["extensions"][APPS_EXTENSION]["mimeTypes"], json!([APP_MIME_TYPE]));

    let tools = peer.call("tools/list", modern(json!({}))).await;
    let app = tools["result"]["tools"].as_array().unwrap().iter().find(|t| t["name"] == "test_app").expect("listed");
    assert_eq!(app["_meta"]["ui"], json!({"resourceUri": APP_URI}));

    let resources = peer.call("resources/list", modern(json!({}))).await;
    let listed = resources["result"]["resources"].as_array().unwrap().iter().find(|r| r["uri"] == APP_URI).unwrap();
    assert_eq!(listed["mimeType"], APP_MIME_TYPE);
    let csp = json!({"connectDomains": ["https://api.example.com"], "resourceDomains": ["https://*.cdn.example.com"]});
    assert_eq!(listed["_meta"]["ui"]["csp"], csp);

    let read = peer.call("resources/read", modern(json!({"uri": APP_URI}))).await;
    let item = &read["result"]["contents"][0];
    assert_eq!(item["mimeType"], APP_MIME_TYPE);
    assert_eq!(item["_meta"]["ui"], json!({"csp": csp, "prefersBorder": true}));
    let html = item["text"].as_str().unwrap();
    assert!(html.contains("ui/initialize") && html.contains("ui/notifications/tool-result"), "{html}");

    let call = peer.call("tools/call", modern(json!({"name": "test_app", "arguments": {"text": "hi"}}))).await;
    assert_eq!(call["result"]["content"][0]["text"], "hi");
}

#[tokio::test]
async fn legacy_clients_are_told_of_the_extension_too() {
    let mut peer = Peer::start();
    let init = peer
        .call(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {"extensions": {APPS_EXTENSION: {}}},
                   "clientInfo": {"name": "t", "version": "1"}}),
        )
        .await;
    let extensions = &init["result"]["capabilities"]["extensions"];
    assert_eq!(extensions.as_object().unwrap().keys().collect::<Vec<_>>(), [APPS_EXTENSION], "{init}");
}
