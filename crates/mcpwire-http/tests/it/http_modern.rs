//! Streamable HTTP, 2026-07-28: stateless POSTs whose `Mcp-*` headers are checked against
//! the body, and the status table of PROTOCOL.md §c.

use crate::common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::*;
use mcpwire_http::HttpConfig;
use mcpwire_protocol::types::{CallToolResult, Tool};
use mcpwire_server::{HandlerResult, Server};
use serde_json::{json, Value};

const HEADER_MISMATCH: i64 = -32020;
const MISSING_CAPABILITY: i64 = -32021;
const UNSUPPORTED_VERSION: i64 = -32022;
const INVALID_PARAMS: i64 = -32602;
const METHOD_NOT_FOUND: i64 = -32601;

fn b64(s: &str) -> String {
    use base64::Engine;
    format!("=?base64?{}?=", base64::engine::general_purpose::STANDARD.encode(s))
}

#[tokio::test]
async fn correct_post_answers_json_with_result_type_and_no_session() {
    let s = TestServer::reference().await;
    let body = modern_request(1, "tools/list", json!({}));
    let resp = within("tools/list", s.post_modern(&body).send()).await.unwrap();
    assert_eq!(resp.status(), 200);
    assert!(content_type(resp.headers()).starts_with("application/json"), "{:?}", resp.headers());
    assert!(resp.headers().get("mcp-session-id").is_none(), "no session may be minted: {:?}", resp.headers());
    let answer = final_message(resp).await;
    assert_eq!(answer["id"], json!(1), "{answer}");
    assert_eq!(answer["result"]["resultType"], json!("complete"), "{answer}");
    assert!(answer["result"]["tools"].as_array().is_some_and(|t| !t.is_empty()), "{answer}");
    assert_eq!(s.http.session_count(), 0, "a 2026-07-28 request must not open a session");

    let body = modern_request("call-1", "tools/call", json!({"name": "echo", "arguments": {"text": "hi"}}));
    let resp = within("tools/call echo", s.post_modern(&body).send()).await.unwrap();
    assert_eq!(resp.status(), 200);
    assert!(resp.headers().get("mcp-session-id").is_none());
    let answer = final_message(resp).await;
    assert_eq!(answer["id"], json!("call-1"));
    assert_eq!(answer["result"]["resultType"], json!("complete"), "{answer}");
    assert_eq!(tool_text(&answer), "hi");
    assert_eq!(s.http.session_count(), 0);
}

#[tokio::test]
async fn progress_token_gives_an_sse_stream_with_three_progress_events_then_the_result() {
    let s = TestServer::reference().await;
    let body = modern_request(
        7,
        "tools/call",
        json!({"name": "test_tool_with_progress", "arguments": {}, "_meta": {"progressToken": "tok-1"}}),
    );
    let resp = within("tools/call with progress", s.post_modern(&body).send()).await.unwrap();
    assert_eq!(resp.status(), 200);
    assert!(is_sse(&resp), "content type {:?}", resp.headers().get("content-type"));
    assert_eq!(resp.headers().get("x-accel-buffering").and_then(|v| v.to_str().ok()), Some("no"));
    assert!(resp.headers().get("mcp-session-id").is_none());
    let mut reader = SseReader::new(resp);
    for expected in [0.0, 50.0, 100.0] {
        let e = reader.next_within("a progress notification").await;
        assert!(e.id.is_none(), "2026-07-28 streams carry no event ids: {e:?}");
        let m = e.json();
        assert_eq!(m["method"], json!("notifications/progress"), "{m}");
        assert!(m.get("id").is_none(), "{m}");
        assert_eq!(m["params"]["progressToken"], json!("tok-1"), "{m}");
        assert_eq!(m["params"]["progress"].as_f64(), Some(expected), "{m}");
        assert_eq!(m["params"]["total"].as_f64(), Some(100.0), "{m}");
    }
    let e = reader.next_within("the tool result").await;
    assert!(e.id.is_none(), "2026-07-28 streams carry no event ids: {e:?}");
    let answer = e.json();
    assert_eq!(answer["id"], json!(7), "{answer}");
    assert_eq!(answer["result"]["resultType"], json!("complete"), "{answer}");
    assert_eq!(tool_text(&answer), "Progress test completed");
    reader.expect_end("the stream closes after the response").await;
}

#[tokio::test]
async fn version_header_missing_while_body_has_meta_is_header_mismatch() {
    let s = TestServer::reference().await;
    let body = modern_request(11, "tools/list", json!({}));
    let resp = s.post_mcp(&body).header("Mcp-Method", "tools/list").send();
    let resp = within("POST", resp).await.unwrap();
    expect_error(resp, 400, HEADER_MISMATCH, &json!(11), "no MCP-Protocol-Version header").await;
}

#[tokio::test]
async fn meta_without_client_capabilities_is_invalid_params() {
    let s = TestServer::reference().await;
    let body = request(12, "tools/list", json!({"_meta": {META_VERSION: MODERN}}));
    let resp = within("POST", s.post_modern(&body).send()).await.unwrap();
    let e = expect_error(resp, 400, INVALID_PARAMS, &json!(12), "_meta without clientCapabilities").await;
    assert!(e["message"].as_str().unwrap_or_default().contains("clientCapabilities"), "{e}");
}

#[tokio::test]
async fn meta_without_protocol_version_is_invalid_params() {
    let s = TestServer::reference().await;
    let body = request(13, "tools/list", json!({"_meta": {META_CAPS: {}}}));
    let resp = within("POST", s.post_modern(&body).send()).await.unwrap();
    expect_error(resp, 400, INVALID_PARAMS, &json!(13), "_meta without protocolVersion").await;
}

#[tokio::test]
async fn version_header_different_from_meta_is_header_mismatch() {
    let s = TestServer::reference().await;
    let body = modern_request_with(14, "tools/list", json!({}), modern_meta("2025-11-25", json!({})));
    let resp = within("POST", s.post_modern(&body).send()).await.unwrap();
    expect_error(resp, 400, HEADER_MISMATCH, &json!(14), "header 2026-07-28, _meta 2025-11-25").await;
}

/// The other direction: a legacy version in the header, the 2026-07-28 `_meta` in the body,
/// no session. The header and `_meta` disagree, so this is a HeaderMismatch (a dual-era
/// client must be able to recognize the modern error), not a legacy "no session" answer.
#[tokio::test]
async fn legacy_version_header_with_modern_meta_is_header_mismatch() {
    let s = TestServer::reference().await;
    let body = modern_request(15, "tools/list", json!({}));
    let resp = s.post_mcp(&body).header("MCP-Protocol-Version", "2025-11-25").header("Mcp-Method", "tools/list");
    let resp = within("POST", resp.send()).await.unwrap();
    expect_error(resp, 400, HEADER_MISMATCH, &json!(15), "header 2025-11-25, _meta 2026-07-28").await;
}

#[tokio::test]
async fn unsupported_version_is_reported_with_the_supported_list() {
    let s = TestServer::reference().await;
    let body = modern_request_with(16, "tools/list", json!({}), modern_meta("2099-01-01", json!({})));
    let resp = s.post_mcp(&body).header("MCP-Protocol-Version", "2099-01-01").header("Mcp-Method", "tools/list");
    let resp = within("POST", resp.send()).await.unwrap();
    let e = expect_error(resp, 400, UNSUPPORTED_VERSION, &json!(16), "version 2099-01-01").await;
    let supported = e["data"]["supported"].as_array().unwrap_or_else(|| panic!("data.supported: {e}"));
    assert!(supported.contains(&json!(MODERN)), "{e}");
    assert_eq!(e["data"]["requested"], json!("2099-01-01"), "{e}");
}

#[tokio::test]
async fn method_header_mismatch_is_header_mismatch() {
    let s = TestServer::reference().await;
    let body = modern_request(17, "tools/list", json!({}));
    let resp = s.post_mcp(&body).header("MCP-Protocol-Version", MODERN).header("Mcp-Method", "prompts/list");
    let resp = within("POST", resp.send()).await.unwrap();
    expect_error(resp, 400, HEADER_MISMATCH, &json!(17), "Mcp-Method prompts/list for tools/list").await;
}

#[tokio::test]
async fn method_header_in_the_wrong_case_is_header_mismatch() {
    let s = TestServer::reference().await;
    let body = modern_request(18, "tools/list", json!({}));
    let resp = s.post_mcp(&body).header("MCP-Protocol-Version", MODERN).header("Mcp-Method", "TOOLS/LIST");
    let resp = within("POST", resp.send()).await.unwrap();
    expect_error(resp, 400, HEADER_MISMATCH, &json!(18), "Mcp-Method TOOLS/LIST").await;
}

#[tokio::test]
async fn method_header_missing_is_header_mismatch() {
    let s = TestServer::reference().await;
    let body = modern_request(19, "tools/list", json!({}));
    let resp = s.post_mcp(&body).header("MCP-Protocol-Version", MODERN);
    let resp = within("POST", resp.send()).await.unwrap();
    expect_error(resp, 400, HEADER_MISMATCH, &json!(19), "no Mcp-Method").await;
}

#[tokio::test]
async fn name_header_missing_for_tools_call_is_header_mismatch() {
    let s = TestServer::reference().await;
    let body = modern_request(20, "tools/call", json!({"name": "echo", "arguments": {"text": "x"}}));
    let resp = s.post_mcp(&body).header("MCP-Protocol-Version", MODERN).header("Mcp-Method", "tools/call");
    let resp = within("POST", resp.send()).await.unwrap();
    expect_error(resp, 400, HEADER_MISMATCH, &json!(20), "no Mcp-Name").await;
}

#[tokio::test]
async fn name_header_mismatch_for_tools_call_is_header_mismatch() {
    let s = TestServer::reference().await;
    let body = modern_request(21, "tools/call", json!({"name": "echo", "arguments": {"text": "x"}}));
    let resp = s
        .post_mcp(&body)
        .header("MCP-Protocol-Version", MODERN)
        .header("Mcp-Method", "tools/call")
        .header("Mcp-Name", "test_simple_text");
    let resp = within("POST", resp.send()).await.unwrap();
    expect_error(resp, 400, HEADER_MISMATCH, &json!(21), "Mcp-Name test_simple_text for echo").await;
}

#[tokio::test]
async fn name_header_in_base64_form_is_accepted() {
    let s = TestServer::reference().await;
    let body = modern_request(22, "tools/call", json!({"name": "echo", "arguments": {"text": "b64"}}));
    let resp = s
        .post_mcp(&body)
        .header("MCP-Protocol-Version", MODERN)
        .header("Mcp-Method", "tools/call")
        .header("Mcp-Name", b64("echo"));
    let resp = within("POST", resp.send()).await.unwrap();
    assert_eq!(resp.status(), 200);
    let answer = final_message(resp).await;
    assert_eq!(answer["id"], json!(22));
    assert_eq!(tool_text(&answer), "b64");
}

#[tokio::test]
async fn unknown_method_is_404_method_not_found() {
    let s = TestServer::reference().await;
    let body = modern_request(23, "no/such_method", json!({}));
    let resp = within("POST", s.post_modern(&body).send()).await.unwrap();
    expect_error(resp, 404, METHOD_NOT_FOUND, &json!(23), "unknown method").await;
}

#[tokio::test]
async fn removed_methods_are_404_method_not_found() {
    let s = TestServer::reference().await;
    let cases = [
        ("ping", json!({})),
        (
            "initialize",
            json!({"protocolVersion": MODERN, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}),
        ),
        ("logging/setLevel", json!({"level": "info"})),
        ("resources/subscribe", json!({"uri": "test://watched-resource"})),
    ];
    for (i, (method, params)) in cases.into_iter().enumerate() {
        let id = json!(format!("removed-{i}"));
        let body = modern_request(id.clone(), method, params);
        let resp = within(method, s.post_modern(&body).send()).await.unwrap();
        expect_error(resp, 404, METHOD_NOT_FOUND, &id, &format!("removed method {method}")).await;
    }
    assert_eq!(s.http.session_count(), 0, "a 2026-07-28 initialize must not open a session");
}

#[tokio::test]
async fn missing_client_capability_is_400_with_required_capabilities() {
    let s = TestServer::reference().await;
    let body = modern_request(24, "tools/call", json!({"name": "test_missing_capability", "arguments": {}}));
    let resp = within("POST", s.post_modern(&body).send()).await.unwrap();
    let e = expect_error(resp, 400, MISSING_CAPABILITY, &json!(24), "test_missing_capability without sampling").await;
    assert!(e["data"]["requiredCapabilities"]["sampling"].is_object(), "{e}");
}

#[tokio::test]
async fn session_header_is_ignored_by_modern_requests() {
    let s = TestServer::reference().await;
    let body = modern_request(25, "tools/list", json!({}));
    let resp = s.post_modern(&body).header("Mcp-Session-Id", "not-a-session-at-all");
    let resp = within("POST", resp.send()).await.unwrap();
    assert_eq!(resp.status(), 200);
    assert!(resp.headers().get("mcp-session-id").is_none());
    let answer = final_message(resp).await;
    assert_eq!(answer["result"]["resultType"], json!("complete"), "{answer}");
}

#[tokio::test]
async fn notification_is_202_with_an_empty_body() {
    let s = TestServer::reference().await;
    let note =
        notification("notifications/cancelled", json!({"requestId": 1, "_meta": modern_meta(MODERN, json!({}))}));
    let resp = s.post_mcp(&note).header("MCP-Protocol-Version", MODERN).header("Mcp-Method", "notifications/cancelled");
    let resp = within("POST", resp.send()).await.unwrap();
    assert_eq!(resp.status(), 202);
    assert!(resp.headers().get("mcp-session-id").is_none());
    assert!(within("body", resp.bytes()).await.unwrap().is_empty());
    assert_eq!(s.http.session_count(), 0);
}

fn header_echo(id: i64, region: Option<&str>) -> Value {
    let mut args = json!({"note": "n"});
    if let Some(r) = region {
        args["region"] = json!(r);
    }
    modern_request(id, "tools/call", json!({"name": "test_header_echo", "arguments": args}))
}

#[tokio::test]
async fn param_header_matching_the_argument_is_accepted() {
    let s = TestServer::reference().await;
    let body = header_echo(30, Some("eu-west"));
    let resp = within("POST", s.post_modern(&body).header("Mcp-Param-Region", "eu-west").send()).await.unwrap();
    assert_eq!(resp.status(), 200);
    let answer = final_message(resp).await;
    assert_eq!(tool_text(&answer), "region=eu-west");

    // The same value in the base64 form, and a header name in another case.
    let body = header_echo(31, Some("eu-west"));
    let resp = within("POST", s.post_modern(&body).header("mcp-param-region", b64("eu-west")).send()).await.unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(tool_text(&final_message(resp).await), "region=eu-west");

    // A value that must travel in base64 (non-ASCII).
    let body = header_echo(32, Some("Zürich"));
    let resp = within("POST", s.post_modern(&body).header("Mcp-Param-Region", b64("Zürich")).send()).await.unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(tool_text(&final_message(resp).await), "region=Zürich");
}

#[tokio::test]
async fn param_header_mismatch_is_header_mismatch() {
    let s = TestServer::reference().await;
    let body = header_echo(33, Some("eu-west"));
    let resp = within("POST", s.post_modern(&body).header("Mcp-Param-Region", "us-east").send()).await.unwrap();
    expect_error(resp, 400, HEADER_MISMATCH, &json!(33), "Mcp-Param-Region us-east for eu-west").await;
}

#[tokio::test]
async fn param_header_missing_while_the_body_has_it_is_header_mismatch() {
    let s = TestServer::reference().await;
    let body = header_echo(34, Some("eu-west"));
    let resp = within("POST", s.post_modern(&body).send()).await.unwrap();
    expect_error(resp, 400, HEADER_MISMATCH, &json!(34), "no Mcp-Param-Region").await;
}

#[tokio::test]
async fn param_header_with_bad_base64_is_header_mismatch() {
    let s = TestServer::reference().await;
    let body = header_echo(35, Some("eu-west"));
    let resp = s.post_modern(&body).header("Mcp-Param-Region", "=?base64?!!not*base64!!?=");
    let resp = within("POST", resp.send()).await.unwrap();
    expect_error(resp, 400, HEADER_MISMATCH, &json!(35), "Mcp-Param-Region with invalid base64").await;
}

/// A server with a tool whose integer argument is mirrored in `Mcp-Param-Count`.
fn counting_server() -> Server {
    let server = Server::builder("counting", "1.0").build();
    server.add_tool(
        Tool::new(
            "count",
            "Echoes n",
            json!({"type": "object", "properties": {"n": {"type": "integer", "x-mcp-header": "Count"}}, "required": ["n"]}),
        ),
        |args, _| async move { HandlerResult::Ok(CallToolResult::text(format!("n={}", args["n"]))) },
    );
    server
}

#[tokio::test]
async fn integer_param_header_is_compared_numerically() {
    let s = TestServer::start(counting_server(), HttpConfig::default()).await;
    let call = |id: i64, n: Value| modern_request(id, "tools/call", json!({"name": "count", "arguments": {"n": n}}));

    let resp = within("POST", s.post_modern(&call(40, json!(42))).header("Mcp-Param-Count", "42").send()).await;
    let resp = resp.unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(tool_text(&final_message(resp).await), "n=42");

    // 42.0 in the body is the integer 42: the same number as the header's "42".
    let resp = within("POST", s.post_modern(&call(41, json!(42.0))).header("Mcp-Param-Count", "42").send()).await;
    let resp = resp.unwrap();
    assert_eq!(resp.status(), 200, "42 vs 42.0 must compare equal");

    let resp = within("POST", s.post_modern(&call(42, json!(42))).header("Mcp-Param-Count", "43").send()).await;
    expect_error(resp.unwrap(), 400, HEADER_MISMATCH, &json!(42), "Mcp-Param-Count 43 for 42").await;

    let resp = within("POST", s.post_modern(&call(43, json!(42))).header("Mcp-Param-Count", "forty-two").send()).await;
    expect_error(resp.unwrap(), 400, HEADER_MISMATCH, &json!(43), "Mcp-Param-Count forty-two for 42").await;
}

/// Integers beyond 2^53 are still integers: two different ones must not compare equal.
#[tokio::test]
async fn large_integer_param_header_is_compared_exactly() {
    let s = TestServer::start(counting_server(), HttpConfig::default()).await;
    let body = modern_request(44, "tools/call", json!({"name": "count", "arguments": {"n": 9007199254740993_u64}}));
    let resp = within("POST", s.post_modern(&body).header("Mcp-Param-Count", "9007199254740992").send()).await;
    expect_error(resp.unwrap(), 400, HEADER_MISMATCH, &json!(44), "Mcp-Param-Count 2^53 for 2^53+1").await;
}

#[tokio::test]
async fn get_without_a_session_is_405_with_allow() {
    let s = TestServer::reference().await;
    let resp = s.client.get(s.url("/mcp")).header("Accept", "text/event-stream").send();
    let resp = within("GET", resp).await.unwrap();
    assert_eq!(resp.status(), 405);
    let allow = resp.headers().get("allow").and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
    assert!(allow.contains("POST"), "Allow: {allow:?}");
}

#[tokio::test]
async fn delete_without_a_session_is_405_with_allow() {
    let s = TestServer::reference().await;
    let resp = within("DELETE", s.client.delete(s.url("/mcp")).send()).await.unwrap();
    assert_eq!(resp.status(), 405, "DELETE without Mcp-Session-Id (a 2026-07-28 client has none)");
    let allow = resp.headers().get("allow").and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
    assert!(allow.contains("POST"), "Allow: {allow:?}");
}

/// Sets its flag when dropped: proves the handler's future went away.
struct DropFlag(Arc<AtomicBool>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

#[tokio::test]
async fn closing_the_response_stream_cancels_the_request() {
    let dropped = Arc::new(AtomicBool::new(false));
    let finished = Arc::new(AtomicBool::new(false));
    let server = Server::builder("slow", "1.0").build();
    let (d, f) = (dropped.clone(), finished.clone());
    server.add_tool(
        Tool::new("slow", "Reports progress once, then sleeps a minute.", json!({"type": "object"})),
        move |_, ctx| {
            let guard = DropFlag(d.clone());
            let finished = f.clone();
            async move {
                let _guard = guard;
                let _ = ctx.progress(1.0, Some(2.0), Some("started")).await;
                tokio::time::sleep(Duration::from_secs(60)).await;
                finished.store(true, Ordering::SeqCst);
                HandlerResult::Ok(CallToolResult::text("done"))
            }
        },
    );
    let s = TestServer::start(server, HttpConfig::default()).await;
    let body =
        modern_request(50, "tools/call", json!({"name": "slow", "arguments": {}, "_meta": {"progressToken": 1}}));
    let resp = within("POST slow", s.post_modern(&body).send()).await.unwrap();
    assert_eq!(resp.status(), 200);
    assert!(is_sse(&resp), "a progress notification first makes the answer a stream");
    let mut reader = SseReader::new(resp);
    let first = reader.next_message("the first progress event").await;
    assert_eq!(first["method"], json!("notifications/progress"), "{first}");
    assert!(!dropped.load(Ordering::SeqCst), "the handler must still be running");
    drop(reader);

    mcpwire_testkit::eventually_within(
        Duration::from_secs(5),
        "closing the response stream must cancel the request within 5 s",
        || async { dropped.load(Ordering::SeqCst).then_some(()) },
    )
    .await;
    assert!(!finished.load(Ordering::SeqCst));
}
