//! HTTP+SSE (2024-11-05): `GET /sse` names the POST endpoint in its first event; every
//! message is POSTed there (202) and the answers arrive as `message` events.

use crate::common;

use common::*;
use serde_json::{json, Value};

const V1105: &str = "2024-11-05";

/// Opens `GET /sse`; returns the reader and the absolute POST URL from the `endpoint` event.
async fn open(s: &TestServer) -> (SseReader, String) {
    let resp = s.client.get(s.url("/sse")).header("Accept", "text/event-stream").send();
    let resp = within("GET /sse", resp).await.unwrap();
    assert_eq!(resp.status(), 200);
    assert!(is_sse(&resp), "{:?}", resp.headers());
    let mut reader = SseReader::new(resp);
    let first = reader.next_within("the endpoint event").await;
    assert_eq!(first.event.as_deref(), Some("endpoint"), "{first:?}");
    assert!(first.data.starts_with('/'), "the endpoint is a path: {:?}", first.data);
    assert!(first.data.contains("sessionId="), "{:?}", first.data);
    let url = s.url(&first.data);
    (reader, url)
}

async fn post(s: &TestServer, url: &str, body: &Value) -> reqwest::Response {
    let resp = s.client.post(url).header("Content-Type", "application/json").body(body.to_string()).send();
    within("POST /message", resp).await.unwrap()
}

/// The next `message` event, skipping none: it must be exactly a `message` event.
async fn next_message_event(reader: &mut SseReader, what: &str) -> Value {
    let e = reader.next_within(what).await;
    assert_eq!(e.event.as_deref(), Some("message"), "{what}: {e:?}");
    e.json()
}

#[tokio::test]
async fn initialize_and_call_over_http_sse() {
    let s = TestServer::reference().await;
    let (mut events, url) = open(&s).await;
    assert_eq!(s.http.session_count(), 1);

    let resp = post(&s, &url, &legacy_initialize(1, V1105, json!({}))).await;
    assert_eq!(resp.status(), 202);
    let init = next_message_event(&mut events, "the initialize result").await;
    assert_eq!(init["id"], json!(1), "{init}");
    assert_eq!(init["result"]["protocolVersion"], json!(V1105), "{init}");
    assert!(init["result"]["serverInfo"]["name"].is_string(), "{init}");

    let resp = post(&s, &url, &notification("notifications/initialized", json!({}))).await;
    assert_eq!(resp.status(), 202);

    let call = request(2, "tools/call", json!({"name": "echo", "arguments": {"text": "over sse"}}));
    let resp = post(&s, &url, &call).await;
    assert_eq!(resp.status(), 202);
    let answer = next_message_event(&mut events, "the echo result").await;
    assert_eq!(answer["id"], json!(2), "{answer}");
    assert_eq!(tool_text(&answer), "over sse");
}

#[tokio::test]
async fn progress_and_result_arrive_on_the_sse_stream() {
    let s = TestServer::reference().await;
    let (mut events, url) = open(&s).await;
    assert_eq!(post(&s, &url, &legacy_initialize(1, V1105, json!({}))).await.status(), 202);
    next_message_event(&mut events, "the initialize result").await;
    assert_eq!(post(&s, &url, &notification("notifications/initialized", json!({}))).await.status(), 202);
    let call = request(
        3,
        "tools/call",
        json!({"name": "test_tool_with_progress", "arguments": {}, "_meta": {"progressToken": 9}}),
    );
    assert_eq!(post(&s, &url, &call).await.status(), 202);
    for expected in [0.0, 50.0, 100.0] {
        let m = next_message_event(&mut events, "progress").await;
        assert_eq!(m["method"], json!("notifications/progress"), "{m}");
        assert_eq!(m["params"]["progressToken"], json!(9), "{m}");
        assert_eq!(m["params"]["progress"].as_f64(), Some(expected), "{m}");
    }
    let answer = next_message_event(&mut events, "the result").await;
    assert_eq!(answer["id"], json!(3));
    assert_eq!(tool_text(&answer), "Progress test completed");
}

#[tokio::test]
async fn post_with_unknown_session_is_404() {
    let s = TestServer::reference().await;
    let (_events, _url) = open(&s).await;
    let url = s.url("/message?sessionId=00000000000000000000000000000000");
    let resp = post(&s, &url, &legacy_initialize(1, V1105, json!({}))).await;
    assert_eq!(resp.status(), 404);
}

#[tokio::test]
async fn closing_the_sse_stream_ends_the_session() {
    let s = TestServer::reference().await;
    let (events, url) = open(&s).await;
    assert_eq!(s.http.session_count(), 1);
    drop(events);
    mcpwire_testkit::eventually("the session to end", || async { (s.http.session_count() == 0).then_some(()) }).await;
    let resp = post(&s, &url, &legacy_initialize(1, V1105, json!({}))).await;
    assert_eq!(resp.status(), 404);
}
