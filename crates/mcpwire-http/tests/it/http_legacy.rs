//! Streamable HTTP with sessions (2025-03-26 .. 2025-11-25): initialize mints a session,
//! later POSTs carry it, the GET stream carries unrelated messages, DELETE ends it, and
//! idle sessions expire.

use crate::common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::*;
use mcpwire_http::HttpConfig;
use mcpwire_protocol::types::{CallToolResult, Tool};
use mcpwire_server::{HandlerResult, Server};
use serde_json::json;

const V0326: &str = "2025-03-26";
const V0618: &str = "2025-06-18";
const V1125: &str = "2025-11-25";

#[tokio::test]
async fn initialize_mints_a_session_and_initialized_is_202() {
    for version in [V0618, V0326, V1125] {
        let s = TestServer::reference().await;
        let init = legacy_initialize(1, version, json!({}));
        let resp = within("initialize", s.post_mcp(&init).send()).await.unwrap();
        assert_eq!(resp.status(), 200, "{version}");
        let id = resp
            .headers()
            .get("mcp-session-id")
            .unwrap_or_else(|| panic!("{version}: no Mcp-Session-Id on the initialize answer"))
            .to_str()
            .expect("ASCII")
            .to_owned();
        assert!(id.len() >= 32, "{version}: session id too short: {id:?}");
        assert!(id.bytes().all(|b| (0x21..=0x7e).contains(&b)), "{version}: not visible ASCII: {id:?}");
        let answer = final_message(resp).await;
        assert_eq!(answer["id"], json!(1));
        assert_eq!(answer["result"]["protocolVersion"], json!(version), "{answer}");
        assert!(answer["result"]["capabilities"]["tools"].is_object(), "{answer}");
        assert_eq!(s.http.session_count(), 1);

        let note = notification("notifications/initialized", json!({}));
        let resp = within("initialized", s.post_legacy(&id, Some(version), &note).send()).await.unwrap();
        assert_eq!(resp.status(), 202, "{version}");
        let body = within("202 body", resp.bytes()).await.unwrap();
        assert!(body.is_empty(), "{version}: 202 must have no body, got {body:?}");

        // The session works.
        let list = request(2, "tools/list", json!({}));
        let resp = within("tools/list", s.post_legacy(&id, Some(version), &list).send()).await.unwrap();
        assert_eq!(resp.status(), 200);
        let answer = final_message(resp).await;
        assert_eq!(answer["id"], json!(2));
        assert!(answer["result"]["tools"].as_array().is_some_and(|t| !t.is_empty()), "{answer}");
    }
}

#[tokio::test]
async fn two_initializes_make_two_distinct_sessions() {
    let s = TestServer::reference().await;
    let a = s.legacy_session(V0618, json!({})).await;
    let b = s.legacy_session(V0618, json!({})).await;
    assert_ne!(a, b);
    assert_eq!(s.http.session_count(), 2);
}

#[tokio::test]
async fn request_without_session_header_is_400() {
    let s = TestServer::reference().await;
    let _session = s.legacy_session(V0618, json!({})).await;
    let list = request(2, "tools/list", json!({}));
    let resp = s.post_mcp(&list).header("MCP-Protocol-Version", V0618);
    let resp = within("POST", resp.send()).await.unwrap();
    assert_eq!(resp.status(), 400);
}

#[tokio::test]
async fn request_with_unknown_session_is_404() {
    let s = TestServer::reference().await;
    let _session = s.legacy_session(V0618, json!({})).await;
    let list = request(2, "tools/list", json!({}));
    let resp = s.post_legacy("0123456789abcdef0123456789abcdef", Some(V0618), &list);
    let resp = within("POST", resp.send()).await.unwrap();
    assert_eq!(resp.status(), 404);
}

#[tokio::test]
async fn missing_version_header_is_accepted_as_2025_03_26() {
    let s = TestServer::reference().await;
    let session = s.legacy_session(V0618, json!({})).await;
    let call = request(3, "tools/call", json!({"name": "echo", "arguments": {"text": "no header"}}));
    let resp = within("POST", s.post_legacy(&session, None, &call).send()).await.unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(tool_text(&final_message(resp).await), "no header");
}

#[tokio::test]
async fn unsupported_version_header_is_400() {
    let s = TestServer::reference().await;
    let session = s.legacy_session(V0618, json!({})).await;
    let list = request(4, "tools/list", json!({}));
    let resp = within("POST", s.post_legacy(&session, Some("1999-01-01"), &list).send()).await.unwrap();
    assert_eq!(resp.status(), 400);
}

#[tokio::test]
async fn any_supported_legacy_version_header_is_accepted() {
    let s = TestServer::reference().await;
    let session = s.legacy_session(V0618, json!({})).await;
    for (i, v) in [V0326, V0618, V1125].into_iter().enumerate() {
        let call = request(10 + i as i64, "tools/call", json!({"name": "echo", "arguments": {"text": v}}));
        let resp = within("POST", s.post_legacy(&session, Some(v), &call).send()).await.unwrap();
        assert_eq!(resp.status(), 200, "header {v} on a 2025-06-18 session");
        assert_eq!(tool_text(&final_message(resp).await), v);
    }
}

#[tokio::test]
async fn batch_under_2025_03_26_gets_an_array() {
    let s = TestServer::reference().await;
    let session = s.legacy_session(V0326, json!({})).await;
    let batch = json!([
        request(21, "tools/call", json!({"name": "echo", "arguments": {"text": "one"}})),
        notification("notifications/cancelled", json!({"requestId": 999})),
        request(22, "tools/call", json!({"name": "echo", "arguments": {"text": "two"}})),
    ]);
    let resp = within("batch", s.post_legacy(&session, Some(V0326), &batch).send()).await.unwrap();
    assert_eq!(resp.status(), 200);
    let answer = final_message(resp).await;
    let items = answer.as_array().unwrap_or_else(|| panic!("a batch is answered with an array: {answer}"));
    assert_eq!(items.len(), 2, "{answer}");
    let by_id = |id: i64| items.iter().find(|m| m["id"] == json!(id)).unwrap_or_else(|| panic!("no {id} in {answer}"));
    assert_eq!(tool_text(by_id(21)), "one");
    assert_eq!(tool_text(by_id(22)), "two");
}

#[tokio::test]
async fn batch_under_2025_06_18_is_invalid_request() {
    let s = TestServer::reference().await;
    let session = s.legacy_session(V0618, json!({})).await;
    let batch = json!([
        request(23, "tools/list", json!({})),
        request(24, "tools/call", json!({"name": "echo", "arguments": {"text": "x"}})),
    ]);
    let resp = within("batch", s.post_legacy(&session, Some(V0618), &batch).send()).await.unwrap();
    let status = resp.status().as_u16();
    assert!(status == 200 || status == 400, "status {status}");
    let answer = final_message(resp).await;
    assert_eq!(answer["error"]["code"], json!(-32600), "{answer}");
}

/// A client that accepts JSON only gets the batch's `-32600` as JSON too (it once got an
/// empty 500: the refusal went where SSE would have carried it).
#[tokio::test]
async fn batch_after_2025_03_26_with_a_json_only_accept_is_invalid_request() {
    let s = TestServer::reference().await;
    for version in [V0618, V1125] {
        let session = s.legacy_session(version, json!({})).await;
        let batch = json!([request(25, "ping", json!({})), request(26, "ping", json!({}))]);
        let resp = s
            .client
            .post(s.url("/mcp"))
            .header("Accept", "application/json")
            .header("Content-Type", "application/json")
            .header("Mcp-Session-Id", &session)
            .header("MCP-Protocol-Version", version)
            .body(batch.to_string());
        let resp = within("batch", resp.send()).await.unwrap();
        let status = resp.status().as_u16();
        assert!(status == 200 || status == 400, "{version}: status {status}");
        assert_eq!(content_type(resp.headers()), "application/json", "{version}");
        let answer: serde_json::Value = within("body", resp.json()).await.unwrap();
        assert_eq!(answer["error"]["code"], json!(-32600), "{version}: {answer}");
        assert_eq!(answer["id"], json!(null), "{version}: {answer}");
    }
}

#[tokio::test]
async fn two_concurrent_posts_on_one_session_are_both_answered() {
    let s = TestServer::reference().await;
    let session = s.legacy_session(V0618, json!({})).await;
    // test_reconnection pauses 100 ms before answering, so both calls are in flight together.
    let a = request(31, "tools/call", json!({"name": "test_reconnection", "arguments": {}}));
    let b = request(
        32,
        "tools/call",
        json!({"name": "test_tool_with_progress", "arguments": {}, "_meta": {"progressToken": "p"}}),
    );
    let (ra, rb) = within("two concurrent POSTs", async {
        let (ra, rb) = tokio::join!(
            s.post_legacy(&session, Some(V0618), &a).send(),
            s.post_legacy(&session, Some(V0618), &b).send()
        );
        let (ra, rb) = (ra.unwrap(), rb.unwrap());
        assert_eq!(ra.status(), 200);
        assert_eq!(rb.status(), 200);
        tokio::join!(all_messages(ra), all_messages(rb))
    })
    .await;
    let fa = ra.last().unwrap();
    assert_eq!(fa["id"], json!(31), "{ra:?}");
    assert!(tool_text(fa).starts_with("Reconnection test completed"), "{fa}");
    // Each stream carries only its own request's messages.
    assert!(ra.iter().all(|m| m["method"] != json!("notifications/progress")), "{ra:?}");
    let fb = rb.last().unwrap();
    assert_eq!(fb["id"], json!(32), "{rb:?}");
    assert_eq!(tool_text(fb), "Progress test completed");
    let progress = rb.iter().filter(|m| m["method"] == json!("notifications/progress")).count();
    assert_eq!(progress, 3, "{rb:?}");
}

#[tokio::test]
async fn get_stream_receives_list_changed_and_a_second_get_is_409() {
    let s = TestServer::reference().await;
    let session = s.legacy_session(V0618, json!({})).await;
    let get = || {
        s.client
            .get(s.url("/mcp"))
            .header("Accept", "text/event-stream")
            .header("Mcp-Session-Id", session.as_str())
            .header("MCP-Protocol-Version", V0618)
            .send()
    };
    let stream = within("GET stream", get()).await.unwrap();
    assert_eq!(stream.status(), 200);
    assert!(is_sse(&stream), "{:?}", stream.headers());
    let mut events = SseReader::new(stream);

    let second = within("second GET", get()).await.unwrap();
    assert_eq!(second.status(), 409, "only one GET stream per session");

    let call = request(41, "tools/call", json!({"name": "test_trigger_tool_change", "arguments": {}}));
    let resp = within("trigger", s.post_legacy(&session, Some(V0618), &call).send()).await.unwrap();
    assert_eq!(resp.status(), 200);
    let messages = all_messages(resp).await;
    assert_eq!(tool_text(messages.last().unwrap()), "dynamic_tool added");
    assert!(
        messages.iter().all(|m| m["method"] != json!("notifications/tools/list_changed")),
        "an unrelated notification belongs on the GET stream only: {messages:?}"
    );

    let note = events.next_message("tools/list_changed on the GET stream").await;
    assert_eq!(note["method"], json!("notifications/tools/list_changed"), "{note}");
    assert!(note.get("id").is_none(), "{note}");
}

#[tokio::test]
async fn get_stream_with_unknown_session_is_404() {
    let s = TestServer::reference().await;
    let resp = s
        .client
        .get(s.url("/mcp"))
        .header("Accept", "text/event-stream")
        .header("Mcp-Session-Id", "ffffffffffffffffffffffffffffffff")
        .send();
    assert_eq!(within("GET", resp).await.unwrap().status(), 404);
}

#[tokio::test]
async fn sampling_request_goes_on_the_post_stream_and_the_reply_completes_the_call() {
    let s = TestServer::reference().await;
    let session = s.legacy_session(V0618, json!({"sampling": {}})).await;
    let call =
        request(51, "tools/call", json!({"name": "test_sampling", "arguments": {"prompt": "Capital of France?"}}));
    let resp = within("POST test_sampling", s.post_legacy(&session, Some(V0618), &call).send()).await.unwrap();
    assert_eq!(resp.status(), 200);
    assert!(is_sse(&resp), "the call's stream must carry the sampling request first: {:?}", resp.headers());
    let mut stream = SseReader::new(resp);
    let ask = stream.next_message("sampling/createMessage").await;
    assert_eq!(ask["method"], json!("sampling/createMessage"), "{ask}");
    let ask_id = ask["id"].clone();
    assert!(!ask_id.is_null(), "{ask}");
    assert_eq!(ask["params"]["messages"][0]["content"]["text"], json!("Capital of France?"), "{ask}");

    let reply = json!({
        "jsonrpc": "2.0",
        "id": ask_id,
        "result": {
            "role": "assistant",
            "content": {"type": "text", "text": "Paris, of course"},
            "model": "test-model",
            "stopReason": "endTurn"
        }
    });
    let resp = within("POST the sampling reply", s.post_legacy(&session, Some(V0618), &reply).send()).await.unwrap();
    assert_eq!(resp.status(), 202);
    assert!(within("202 body", resp.bytes()).await.unwrap().is_empty());

    let answer = stream.next_message("the tool result").await;
    assert_eq!(answer["id"], json!(51), "{answer}");
    assert_eq!(tool_text(&answer), "LLM response: Paris, of course");
    stream.expect_end("the call's stream ends after its result").await;
}

#[tokio::test]
async fn delete_ends_the_session() {
    let s = TestServer::reference().await;
    let session = s.legacy_session(V0618, json!({})).await;
    assert_eq!(s.http.session_count(), 1);
    let resp =
        s.client.delete(s.url("/mcp")).header("Mcp-Session-Id", session.as_str()).header("MCP-Protocol-Version", V0618);
    let resp = within("DELETE", resp.send()).await.unwrap();
    assert!(resp.status().is_success(), "DELETE status {}", resp.status());
    assert_eq!(s.http.session_count(), 0);

    let list = request(61, "tools/list", json!({}));
    let resp = within("POST after DELETE", s.post_legacy(&session, Some(V0618), &list).send()).await.unwrap();
    assert_eq!(resp.status(), 404);
    let resp = s.client.delete(s.url("/mcp")).header("Mcp-Session-Id", session.as_str());
    assert_eq!(within("second DELETE", resp.send()).await.unwrap().status(), 404);
}

#[tokio::test]
async fn delete_ends_the_get_stream() {
    let s = TestServer::reference().await;
    let session = s.legacy_session(V0618, json!({})).await;
    let stream = s
        .client
        .get(s.url("/mcp"))
        .header("Accept", "text/event-stream")
        .header("Mcp-Session-Id", session.as_str())
        .send();
    let stream = within("GET", stream).await.unwrap();
    assert_eq!(stream.status(), 200);
    let mut events = SseReader::new(stream);
    let resp = s.client.delete(s.url("/mcp")).header("Mcp-Session-Id", session.as_str());
    assert!(within("DELETE", resp.send()).await.unwrap().status().is_success());
    events.expect_end("the GET stream of a deleted session").await;
}

#[tokio::test]
async fn idle_session_expires() {
    let config = HttpConfig { session_idle_timeout: Duration::from_millis(300), ..HttpConfig::default() };
    let s = TestServer::reference_with(config).await;
    // Before the session's last request: it cannot have been idle longer than this.
    let idle = std::time::Instant::now();
    let session = s.legacy_session(V0618, json!({})).await;
    assert_eq!(s.http.session_count(), 1);
    // Real sockets, so the wall clock: polled (the reaper runs every 75 ms).
    mcpwire_testkit::eventually("the idle session must have expired", || async {
        (s.http.session_count() == 0).then_some(())
    })
    .await;
    assert!(
        idle.elapsed() >= Duration::from_millis(300),
        "expired after {:?}, before its idle timeout",
        idle.elapsed()
    );
    let list = request(71, "tools/list", json!({}));
    let resp = within("POST after expiry", s.post_legacy(&session, Some(V0618), &list).send()).await.unwrap();
    assert_eq!(resp.status(), 404);
}

#[tokio::test]
async fn active_session_does_not_expire() {
    let config = HttpConfig { session_idle_timeout: Duration::from_millis(600), ..HttpConfig::default() };
    let s = TestServer::reference_with(config).await;
    let session = s.legacy_session(V0618, json!({})).await;
    for i in 0..8 {
        tokio::time::sleep(Duration::from_millis(200)).await;
        let list = request(80 + i, "tools/list", json!({}));
        let resp = within("POST", s.post_legacy(&session, Some(V0618), &list).send()).await.unwrap();
        assert_eq!(resp.status(), 200, "request {i} of a session used every 200 ms");
        final_message(resp).await;
    }
    assert_eq!(s.http.session_count(), 1);
}

struct DropFlag(Arc<AtomicBool>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// In the legacy era a disconnect is not a cancellation: the handler runs on.
#[tokio::test]
async fn legacy_disconnect_does_not_cancel() {
    let dropped = Arc::new(AtomicBool::new(false));
    let finished = Arc::new(AtomicBool::new(false));
    let server = Server::builder("slow", "1.0").build();
    let (d, f) = (dropped.clone(), finished.clone());
    server.add_tool(Tool::new("slow", "Progress, then 300 ms of work.", json!({"type": "object"})), move |_, ctx| {
        let guard = DropFlag(d.clone());
        let finished = f.clone();
        async move {
            let _guard = guard;
            let _ = ctx.progress(1.0, Some(2.0), None).await;
            tokio::time::sleep(Duration::from_millis(300)).await;
            finished.store(true, Ordering::SeqCst);
            HandlerResult::Ok(CallToolResult::text("done"))
        }
    });
    let s = TestServer::start(server, HttpConfig::default()).await;
    let session = s.legacy_session(V0618, json!({})).await;
    let call = request(91, "tools/call", json!({"name": "slow", "arguments": {}, "_meta": {"progressToken": 1}}));
    let resp = within("POST slow", s.post_legacy(&session, Some(V0618), &call).send()).await.unwrap();
    assert!(is_sse(&resp));
    let mut reader = SseReader::new(resp);
    reader.next_message("progress").await;
    drop(reader);
    mcpwire_testkit::eventually("the handler finishing", || async { dropped.load(Ordering::SeqCst).then_some(()) })
        .await;
    assert!(finished.load(Ordering::SeqCst), "the handler must run to completion after a legacy disconnect");
}
