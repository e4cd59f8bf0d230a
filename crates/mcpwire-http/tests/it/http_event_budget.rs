//! The event budget of resumable streams, over real HTTP on loopback: a stream let go to stay
//! within the budget is no longer resumable, and its resumption is answered with an error
//! answer to its request (not a hang, not a 404 that would end the session); clients that
//! hang up mid-stream cannot make the server keep more than the budget.

use crate::common;

use std::sync::Arc;

use common::*;
use mcpwire_http::{EventBudget, HttpConfig, MemoryEventStore};
use mcpwire_protocol::types::{CallToolResult, Tool};
use mcpwire_server::{HandlerResult, Server};
use reqwest::StatusCode;
use serde_json::{json, Value};

const V1125: &str = "2025-11-25";

/// A server whose `chatty` tool sends `count` progress notifications of `size` bytes of
/// message each, then answers.
fn chatty() -> Server {
    let server = Server::builder("chatty", "1.0").build();
    let schema = json!({"type": "object", "properties": {"count": {"type": "integer"}, "size": {"type": "integer"}}});
    server.add_tool(Tool::new("chatty", "Progress, then an answer.", schema), |args, ctx| async move {
        let count = args.get("count").and_then(Value::as_u64).unwrap_or(1);
        let size = args.get("size").and_then(Value::as_u64).unwrap_or(10) as usize;
        let message = "m".repeat(size);
        for i in 0..count {
            let _ = ctx.progress(i as f64, Some(count as f64), Some(&message)).await;
        }
        HandlerResult::Ok(CallToolResult::text("done"))
    });
    server
}

fn call(id: u64, count: u64, size: u64) -> Value {
    request(
        id,
        "tools/call",
        json!({"name": "chatty", "arguments": {"count": count, "size": size}, "_meta": {"progressToken": id}}),
    )
}

/// Calls `chatty` and reads its stream to the end; the ids of its events, and its answer.
async fn call_to_the_end(s: &TestServer, session: &str, body: &Value) -> (Vec<String>, Value) {
    let resp = within("POST chatty", s.post_legacy(session, Some(V1125), body).send()).await.unwrap();
    assert!(is_sse(&resp), "a call with progress is answered on a stream");
    let mut reader = SseReader::new(resp);
    let mut ids = Vec::new();
    loop {
        let event = reader.next_within("an event of chatty").await;
        ids.extend(event.id.clone());
        if event.data.is_empty() {
            continue; // the priming event
        }
        let message = event.json();
        if message.get("id").is_some() {
            return (ids, message);
        }
    }
}

/// Resumes a stream after `last_event_id`: the response.
async fn resume(s: &TestServer, session: &str, last_event_id: &str) -> reqwest::Response {
    within(
        "GET with Last-Event-ID",
        s.client
            .get(s.url("/mcp"))
            .header("Accept", "text/event-stream")
            .header("Mcp-Session-Id", session)
            .header("MCP-Protocol-Version", V1125)
            .header("Last-Event-ID", last_event_id)
            .send(),
    )
    .await
    .unwrap()
}

/// The first message of a resumed stream.
async fn first_resumed_message(resp: reqwest::Response) -> Value {
    assert_eq!(resp.status(), StatusCode::OK);
    assert!(is_sse(&resp));
    let mut reader = SseReader::new(resp);
    loop {
        let event = reader.next_within("a resumed event").await;
        if !event.data.is_empty() {
            return event.json();
        }
    }
}

#[tokio::test]
async fn a_finished_stream_let_go_for_the_session_budget_answers_its_resumption_with_an_error() {
    let budget = EventBudget { per_stream: 1000, per_session: 20_000, total: 1 << 30 };
    let store = Arc::new(MemoryEventStore::with_budget(budget));
    let s = TestServer::start_with_store(chatty(), HttpConfig::default(), store.clone()).await;
    let session = s.legacy_session(V1125, json!({})).await;

    // About 8 KB of events, read to the end.
    let (first_ids, answer) = call_to_the_end(&s, &session, &call(10, 8, 1000)).await;
    assert_eq!(tool_text(&answer), "done");
    // The client lost the connection after the first progress event: it resumes, and gets
    // the rest, answer included.
    let after_first = &first_ids[1];
    let resumed = first_resumed_message(resume(&s, &session, after_first).await).await;
    assert_eq!(resumed["method"], "notifications/progress", "{resumed}");

    // Two more calls of about 8 KB: the session holds 20 KB, the first stream goes.
    call_to_the_end(&s, &session, &call(11, 8, 1000)).await;
    let (third_ids, _) = call_to_the_end(&s, &session, &call(12, 8, 1000)).await;
    assert!(store.kept_bytes_of(&session) <= budget.per_session, "{} kept", store.kept_bytes_of(&session));

    let answer = first_resumed_message(resume(&s, &session, after_first).await).await;
    assert_eq!(answer["id"], 10, "the error answers the request of the stream let go: {answer}");
    assert_eq!(answer["error"]["code"], -32603, "{answer}");
    assert!(answer["error"]["message"].as_str().unwrap().contains("send the request again"), "{answer}");
    // The latest stream is still resumable.
    let resumed = first_resumed_message(resume(&s, &session, &third_ids[1]).await).await;
    assert_eq!(resumed["method"], "notifications/progress", "{resumed}");
    // The session itself goes on.
    let (_, answer) = call_to_the_end(&s, &session, &call(13, 1, 10)).await;
    assert_eq!(tool_text(&answer), "done");
}

#[tokio::test]
async fn streams_forgotten_for_their_number_are_answered_and_unknown_ones_are_not_a_404() {
    let s = TestServer::start(chatty(), HttpConfig::default()).await;
    let session = s.legacy_session(V1125, json!({})).await;
    let mut first = None;
    // More finished streams than a session keeps (16): the first is forgotten.
    for id in 1..=20 {
        let (ids, _) = call_to_the_end(&s, &session, &call(id, 1, 10)).await;
        first.get_or_insert(ids);
    }
    let first = first.unwrap();
    let answer = first_resumed_message(resume(&s, &session, &first[0]).await).await;
    assert_eq!(answer["id"], 1, "{answer}");
    assert_eq!(answer["error"]["code"], -32603, "{answer}");
    // A stream the session never opened.
    let resp = resume(&s, &session, "999-1").await;
    assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn clients_hanging_up_mid_stream_cannot_make_the_server_keep_more_than_the_budget() {
    // The hostile pattern of issue 13: sessions each making progress-streaming calls and
    // hanging up once the stream has begun; the calls run on and their events are kept.
    let budget = EventBudget { per_stream: 1000, per_session: 64 * 1024, total: 256 * 1024 };
    let store = Arc::new(MemoryEventStore::with_budget(budget));
    let s = TestServer::start_with_store(chatty(), HttpConfig::default(), store.clone()).await;
    let mut sessions = Vec::new();
    for _ in 0..10 {
        let session = s.legacy_session(V1125, json!({})).await;
        for id in 1..=17 {
            // About 40 KB of events per call.
            let resp =
                within("POST chatty", s.post_legacy(&session, Some(V1125), &call(id, 40, 1000)).send()).await.unwrap();
            let mut reader = SseReader::new(resp);
            reader.next_within("the priming event").await;
            drop(reader);
        }
        sessions.push(session);
    }
    // Every call finishes on its own (their streams are kept, not their connections): a
    // resumption of each reads to its answer, or is told its stream was let go.
    let mut answered = 0;
    let mut let_go = 0;
    for session in &sessions {
        for stream in 1..=17 {
            let resp = resume(&s, session, &format!("{stream}-0")).await;
            let mut reader = SseReader::new(resp);
            loop {
                let event = reader.next_within("a resumed event").await;
                if event.data.is_empty() {
                    continue;
                }
                let message = event.json();
                if message.get("error").is_some() {
                    let_go += 1;
                    break;
                }
                if message.get("result").is_some() {
                    answered += 1;
                    break;
                }
            }
        }
        assert!(store.kept_bytes_of(session) <= budget.per_session, "{} kept", store.kept_bytes_of(session));
    }
    assert_eq!(answered + let_go, 170, "every call is accounted for");
    assert!(let_go > 0, "the budget was reached (170 calls of 40 KB in 256 KiB)");
    assert!(store.kept_bytes() <= budget.total, "{} kept in all", store.kept_bytes());
}

/// The default budget (issue 29): one session leaving 17 progress-streaming calls running once
/// their streams began (about 3.7 MB of events, the hostile pattern) keeps at most 1 MiB of
/// them; each call is still accounted for, answered on resumption or told it was let go.
#[tokio::test]
async fn the_default_budget_holds_a_session_to_one_mebibyte_of_kept_events() {
    const MIB: usize = 1024 * 1024;
    let budget = HttpConfig::default().event_budget;
    assert!(budget.per_session <= MIB, "{budget:?}");
    assert_eq!(budget, EventBudget::default());
    let store = Arc::new(MemoryEventStore::with_budget(budget));
    let s = TestServer::start_with_store(chatty(), HttpConfig::default(), store.clone()).await;
    let session = s.legacy_session(V1125, json!({})).await;
    for id in 1..=17 {
        // About 220 KB of events per call.
        let resp =
            within("POST chatty", s.post_legacy(&session, Some(V1125), &call(id, 200, 1000)).send()).await.unwrap();
        let mut reader = SseReader::new(resp);
        reader.next_within("the priming event").await;
        drop(reader);
    }
    let (mut answered, mut let_go) = (0, 0);
    for stream in 1..=17 {
        let resp = resume(&s, &session, &format!("{stream}-0")).await;
        let mut reader = SseReader::new(resp);
        loop {
            let event = reader.next_within("a resumed event").await;
            if event.data.is_empty() {
                continue;
            }
            let message = event.json();
            if message.get("error").is_some() {
                let_go += 1;
                break;
            }
            if message.get("result").is_some() {
                answered += 1;
                break;
            }
        }
    }
    assert_eq!(answered + let_go, 17, "every call is accounted for");
    assert!(let_go > 0, "the budget was reached (17 calls of 220 KB in 1 MiB)");
    let kept = store.kept_bytes_of(&session);
    assert!(kept <= MIB, "{kept} bytes kept for one session");
    assert!(kept > MIB / 4, "the budget is used, not emptied: {kept} bytes kept");
}
