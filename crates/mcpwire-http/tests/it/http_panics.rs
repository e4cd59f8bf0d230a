//! A handler that panics, over real HTTP: its request is answered (a tool execution error
//! for a tool, `-32603` otherwise) and the server, the session and every other request go on.
//! The same with a middleware layer around the handlers, and with a layer that panics.

use crate::common;

use common::*;
use mcpwire_http::HttpConfig;
use mcpwire_protocol::types::{CallToolResult, GetPromptResult, Prompt, Resource, Tool};
use mcpwire_server::{HandlerResult, McpRequest, McpResponse, PromptDef, Server};
use serde_json::{json, Value};
use std::task::{Context as TaskContext, Poll};
use tower::Service;

fn explode<T>(what: &str) -> HandlerResult<T> {
    panic!("{what} exploded")
}

/// A middleware layer that panics on the tool `layer_boom`.
#[derive(Clone)]
struct PanicOn<S>(S);

impl<S: Service<McpRequest, Response = McpResponse>> Service<McpRequest> for PanicOn<S> {
    type Response = McpResponse;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut TaskContext<'_>) -> Poll<Result<(), S::Error>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, request: McpRequest) -> S::Future {
        if request.name() == Some("layer_boom") {
            panic!("the layer exploded");
        }
        self.0.call(request)
    }
}

/// The server whose handlers panic; `layered`: with the layer [`PanicOn`] around them.
fn server_of(layered: bool) -> Server {
    let builder = Server::builder("panics", "1");
    let server = match layered {
        true => builder.layer(tower::layer::layer_fn(PanicOn)).build(),
        false => builder.build(),
    };
    let tool = |name: &str| Tool::new(name, "test tool", json!({"type": "object"}));
    server.add_tool(tool("boom"), |_, _| async { explode("tool") });
    server.add_tool(tool("boom_later"), |_, _| async {
        tokio::task::yield_now().await;
        explode("tool after waiting")
    });
    server.add_tool(tool("fine"), |_, _| async { Ok(CallToolResult::text("fine")) });
    server.add_resource(Resource::new("test://boom", "boom"), |_, _| async { explode("resource") });
    server.add_prompt(Prompt::new("boom", "a prompt", vec![]), |_, _| async { explode("prompt") });
    let completing = PromptDef::new(Prompt::new("completing", "a prompt", vec![]), |_, _| async {
        Ok(GetPromptResult { description: None, messages: vec![], meta: None })
    })
    .complete_with("x", |_, _, _| async { explode("completion") });
    server.register_prompt(completing);
    server
}

fn server() -> Server {
    server_of(false)
}

/// The requests whose handlers panic, and what each must be answered with: `Ok` a tool
/// execution error, `Err(code)` a JSON-RPC error.
fn exploding() -> Vec<(&'static str, Value, Result<(), i64>)> {
    exploding_of(false)
}

/// The same; `layered`: with the call that the layer [`PanicOn`] panics on.
fn exploding_of(layered: bool) -> Vec<(&'static str, Value, Result<(), i64>)> {
    let mut requests = vec![
        ("tools/call", json!({"name": "boom"}), Ok(())),
        ("tools/call", json!({"name": "boom_later"}), Ok(())),
        ("resources/read", json!({"uri": "test://boom"}), Err(-32603)),
        ("prompts/get", json!({"name": "boom"}), Err(-32603)),
        (
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "completing"}, "argument": {"name": "x", "value": ""}}),
            Err(-32603),
        ),
    ];
    if layered {
        requests.push(("tools/call", json!({"name": "layer_boom"}), Ok(())));
    }
    requests
}

fn check(answer: &Value, expected: Result<(), i64>, what: &str) {
    match expected {
        Ok(()) => {
            assert_eq!(answer["result"]["isError"], json!(true), "{what}: {answer}");
            assert!(tool_text(answer).contains("panicked"), "{what}: {answer}");
        }
        Err(code) => assert_eq!(answer["error"]["code"], json!(code), "{what}: {answer}"),
    }
}

#[tokio::test]
async fn stateless_requests_whose_handler_panics_are_answered_and_the_server_serves_on() {
    let s = TestServer::start(server(), HttpConfig::default()).await;
    for (i, (method, params, expected)) in exploding().into_iter().enumerate() {
        let resp = within(method, s.post_modern(&modern_request(i as i64, method, params)).send()).await.unwrap();
        assert_eq!(resp.status(), 200, "{method}");
        check(&final_message(resp).await, expected, method);
    }
    let resp = within("fine", s.post_modern(&modern_request(9, "tools/call", json!({"name": "fine"}))).send()).await;
    assert_eq!(tool_text(&final_message(resp.unwrap()).await), "fine");
}

#[tokio::test]
async fn a_session_whose_handler_panics_goes_on() {
    let s = TestServer::start(server(), HttpConfig::default()).await;
    for version in ["2025-03-26", "2025-06-18", "2025-11-25"] {
        let session = s.legacy_session(version, json!({})).await;
        for (i, (method, params, expected)) in exploding().into_iter().enumerate() {
            let body = request(i as i64 + 2, method, params);
            let resp = within(method, s.post_legacy(&session, Some(version), &body).send()).await.unwrap();
            check(&final_message(resp).await, expected, &format!("{version} {method}"));
        }
        let body = request(9, "tools/call", json!({"name": "fine"}));
        let resp = within("fine", s.post_legacy(&session, Some(version), &body).send()).await.unwrap();
        assert_eq!(tool_text(&final_message(resp).await), "fine", "{version}");
        assert_eq!(s.http.session_count(), 1, "{version}: the session is still open");
        let resp = s.client.delete(s.url("/mcp")).header("Mcp-Session-Id", &session).send();
        assert_eq!(within("DELETE", resp).await.unwrap().status(), 204);
    }
}

#[tokio::test]
async fn with_a_layer_that_panics_every_panic_fails_its_own_request_only() {
    let s = TestServer::start(server_of(true), HttpConfig::default()).await;
    for (i, (method, params, expected)) in exploding_of(true).into_iter().enumerate() {
        let what = format!("stateless {method} {params}");
        let resp = within(&what, s.post_modern(&modern_request(i as i64, method, params)).send()).await.unwrap();
        assert_eq!(resp.status(), 200, "{what}");
        check(&final_message(resp).await, expected, &what);
    }
    let version = "2025-11-25";
    let session = s.legacy_session(version, json!({})).await;
    for (i, (method, params, expected)) in exploding_of(true).into_iter().enumerate() {
        let what = format!("{version} {method} {params}");
        let body = request(i as i64 + 2, method, params);
        let resp = within(&what, s.post_legacy(&session, Some(version), &body).send()).await.unwrap();
        check(&final_message(resp).await, expected, &what);
    }
    let body = request(20, "tools/call", json!({"name": "fine"}));
    let resp = within("fine", s.post_legacy(&session, Some(version), &body).send()).await.unwrap();
    assert_eq!(tool_text(&final_message(resp).await), "fine");
    assert_eq!(s.http.session_count(), 1, "the session is still open");
}
