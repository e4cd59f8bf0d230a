//! The client against scripted fake servers: MRTR rounds, version retries, era detection
//! edge cases, late answers, server requests, bad input.
//!
//! Tests whose fake server checks for silence run on tokio's paused clock (`start_paused`),
//! where "nothing for 100 ms" means nothing once every task is idle and 100 ms have passed,
//! without waiting for them. Those about the client's own request timeouts do not: the
//! client times its requests with `std::time::Instant` (the wall clock).

use crate::common;

use std::collections::BTreeMap;
use std::error::Error as _;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::*;
use mcpwire_client::{Client, ClientError, Era, ProtocolVersion, ServerNotification};
use mcpwire_protocol::types::{
    ContentBlock, CreateMessageResult, ElicitResult, ListRootsResult, Role, Root, SamplingContent,
};
use serde_json::{json, Value};

fn handlers(builder: mcpwire_client::ClientBuilder, calls: Arc<AtomicUsize>) -> Client {
    let (c1, c2) = (calls.clone(), calls.clone());
    builder
        .sampling(move |p| {
            c1.fetch_add(1, Ordering::SeqCst);
            async move {
                let prompt = match &p.messages[0].content {
                    SamplingContent::Single(b) => b.as_text().unwrap_or_default().to_owned(),
                    SamplingContent::Multiple(_) => String::new(),
                };
                Ok(CreateMessageResult {
                    role: Role::Assistant,
                    content: SamplingContent::Single(ContentBlock::text(format!("answer to {prompt}"))),
                    model: "m".into(),
                    stop_reason: None,
                    meta: None,
                })
            }
        })
        .elicitation(move |_| {
            c2.fetch_add(1, Ordering::SeqCst);
            async move {
                Ok(ElicitResult {
                    action: "accept".into(),
                    content: Some(serde_json::from_value(json!({"name": "Ada"})).unwrap()),
                    meta: None,
                })
            }
        })
        .roots(|| async {
            Ok(ListRootsResult { roots: vec![Root { uri: "file:///r".into(), name: None, meta: None }] })
        })
        .build()
}

fn modern_meta_ok(msg: &Value) {
    let meta = &msg["params"]["_meta"];
    assert_eq!(meta["io.modelcontextprotocol/protocolVersion"], "2026-07-28", "{msg}");
    assert!(meta["io.modelcontextprotocol/clientCapabilities"].is_object(), "{msg}");
    assert_eq!(meta["io.modelcontextprotocol/clientInfo"]["name"], "mrtr-client", "{msg}");
}

#[tokio::test]
async fn mrtr_rounds_carry_new_ids_input_responses_and_verbatim_state() {
    let (client_end, mut fake) = Fake::pair();
    // A state with characters JSON may escape differently: it must come back unchanged.
    let state1 = "c3RhdGU=.é\u{2028}\"q\"\\/\u{1F600}";
    let state2 = "second-state";
    let script = tokio::spawn(async move {
        fake.accept_modern().await;
        let first = fake.expect("tools/call").await;
        modern_meta_ok(&first);
        assert_eq!(first["params"]["arguments"], json!({"x": 1}));
        assert!(first["params"].get("inputResponses").is_none() && first["params"].get("requestState").is_none());
        fake.reply(
            &first,
            json!({
                "resultType": "input_required",
                "inputRequests": {
                    "who": {"method": "elicitation/create", "params": {"message": "Name?", "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}}},
                    "llm": {"method": "sampling/createMessage", "params": {"messages": [{"role": "user", "content": {"type": "text", "text": "2+2"}}], "maxTokens": 5}}
                },
                "requestState": state1,
            }),
        )
        .await;
        let (raw2, second) = fake.recv_raw().await;
        assert_eq!(second["method"], "tools/call");
        assert_ne!(second["id"], first["id"], "a retry has a new id");
        modern_meta_ok(&second);
        assert_eq!(second["params"]["name"], "t");
        assert_eq!(second["params"]["arguments"], json!({"x": 1}), "the original params");
        assert_eq!(second["params"]["requestState"], state1, "requestState verbatim");
        assert!(raw2.contains(&serde_json::to_string(state1).unwrap()), "byte-identical on the wire: {raw2}");
        let responses = second["params"]["inputResponses"].as_object().unwrap();
        assert_eq!(responses.keys().collect::<Vec<_>>(), ["who", "llm"]);
        assert_eq!(responses["who"], json!({"action": "accept", "content": {"name": "Ada"}}));
        assert_eq!(responses["llm"]["content"]["text"], "answer to 2+2");
        assert_eq!(responses["llm"]["model"], "m");
        fake.reply(
            &second,
            json!({"resultType": "input_required", "inputRequests": {"r": {"method": "roots/list"}}, "requestState": state2}),
        )
        .await;
        let third = fake.expect("tools/call").await;
        assert_ne!(third["id"], first["id"]);
        assert_ne!(third["id"], second["id"]);
        assert_eq!(third["params"]["requestState"], state2);
        assert_eq!(third["params"]["inputResponses"], json!({"r": {"roots": [{"uri": "file:///r"}]}}));
        assert_eq!(third["params"]["arguments"], json!({"x": 1}));
        fake.reply(&third, json!({"resultType": "complete", "content": [{"type": "text", "text": "done"}]})).await;

        // prompts/get and resources/read: state only, then complete.
        let get = fake.expect("prompts/get").await;
        fake.reply(&get, json!({"resultType": "input_required", "requestState": "p"})).await;
        let retry = fake.expect("prompts/get").await;
        assert_eq!(retry["params"]["requestState"], "p");
        assert!(retry["params"].get("inputResponses").is_none(), "no inputRequests, no inputResponses");
        assert_eq!(retry["params"]["arguments"], json!({"a": "b"}));
        fake.reply(&retry, json!({"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}]})).await;
        let read = fake.expect("resources/read").await;
        fake.reply(&read, json!({"resultType": "input_required", "inputRequests": {"e": {"method": "elicitation/create", "params": {"message": "ok?"}}}})).await;
        let retry = fake.expect("resources/read").await;
        assert!(retry["params"].get("requestState").is_none(), "no requestState sent, none returned");
        assert_eq!(retry["params"]["inputResponses"]["e"]["action"], "accept");
        assert_eq!(retry["params"]["uri"], "test://r");
        fake.reply(&retry, json!({"resultType": "complete", "contents": [{"uri": "test://r", "text": "r"}]})).await;
        fake
    });
    let calls = Arc::new(AtomicUsize::new(0));
    let client = handlers(Client::builder("mrtr-client", "1").validate_outputs(false), calls.clone());
    let session = client.connect(client_end).await.unwrap();
    assert_eq!(session.era(), Era::Modern);
    assert_eq!(session.server_info().unwrap().name, "fake");
    assert_eq!(session.instructions().as_deref(), Some("fake instructions"));
    let r = session.call_tool("t", json!({"x": 1})).await.unwrap();
    assert_eq!(r.content[0].as_text(), Some("done"));
    assert_eq!(calls.load(Ordering::SeqCst), 2, "each input request answered once");
    let p = session.get_prompt("p", BTreeMap::from([("a".to_owned(), "b".to_owned())])).await.unwrap();
    assert_eq!(p.messages[0].content.as_text(), Some("hi"));
    let r = session.read_resource("test://r").await.unwrap();
    assert_eq!(r.contents[0].text.as_deref(), Some("r"));
    script.await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn mrtr_gives_up_after_the_round_bound() {
    let (client_end, mut fake) = Fake::pair();
    let script = tokio::spawn(async move {
        fake.accept_modern().await;
        let mut ids = Vec::new();
        for round in 0..4 {
            let req = fake.expect("tools/call").await;
            ids.push(req["id"].clone());
            fake.reply(&req, json!({"resultType": "input_required", "requestState": format!("s{round}")})).await;
        }
        fake.expect_silence(Duration::from_millis(100)).await;
        ids
    });
    let client = Client::builder("c", "1").max_input_rounds(3).build();
    let session = client.connect(client_end).await.unwrap();
    let e = session.call_tool("t", json!({})).await.unwrap_err();
    assert!(matches!(&e, ClientError::InputRequired { rounds: 3, .. }), "{e}");
    let ids = script.await.unwrap();
    let distinct: std::collections::HashSet<_> = ids.iter().map(Value::to_string).collect();
    assert_eq!(distinct.len(), 4, "1 request + 3 retries, each with its own id: {ids:?}");
}

#[tokio::test]
async fn mrtr_input_the_client_cannot_give_is_a_clear_error() {
    let (client_end, mut fake) = Fake::pair();
    let script = tokio::spawn(async move {
        fake.accept_modern().await;
        let req = fake.expect("tools/call").await;
        let ask = json!({"method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 1}});
        fake.reply(&req, json!({"resultType": "input_required", "inputRequests": {"k": ask}})).await;
        let req = fake.expect("tools/call").await;
        fake.reply(&req, json!({"resultType": "input_required", "inputRequests": {"k": {"method": "tasks/get"}}}))
            .await;
        let req = fake.expect("tools/call").await;
        fake.reply(&req, json!({"resultType": "input_required"})).await;
        let req = fake.expect("tools/call").await;
        fake.reply(&req, json!({"resultType": "task", "task": {}})).await;
        let req = fake.expect("tools/call").await;
        let ask = json!({"method": "sampling/createMessage", "params": {"messages": "nope", "maxTokens": 1}});
        fake.reply(&req, json!({"resultType": "input_required", "inputRequests": {"k": ask}})).await;
        let req = fake.expect("tools/list").await;
        fake.reply(&req, json!({"resultType": "input_required", "requestState": "x"})).await;
    });
    let session = Client::builder("c", "1").build().connect(client_end).await.unwrap();
    let e = session.call_tool("t", json!({})).await.unwrap_err();
    assert!(matches!(&e, ClientError::Handler { method, .. } if method == "sampling/createMessage"), "{e}");
    let e = session.call_tool("t", json!({})).await.unwrap_err();
    assert!(matches!(&e, ClientError::Handler { method, .. } if method == "tasks/get"), "{e}");
    let e = session.call_tool("t", json!({})).await.unwrap_err();
    assert!(e.is_decode(), "input_required with nothing in it: {e}");
    assert!(e.source().is_none(), "found by the client, no decoder error: {e:?}");
    let e = session.call_tool("t", json!({})).await.unwrap_err();
    assert!(e.is_decode(), "an unknown resultType: {e}");
    // A question that does not decode: the decoder's error is the source, its words the
    // end of the text (with no position in the question's own text, which the user never saw).
    let e = session.call_tool("t", json!({})).await.unwrap_err();
    assert!(e.is_decode(), "{e}");
    assert_eq!(
        e.to_string(),
        r#"cannot decode the answer to tools/call: input request "k": expected a list, got "nope""#
    );
    assert!(e.source().and_then(|s| s.downcast_ref::<serde_json::Error>()).is_some(), "{e:?}");
    let e = session.list_tools(None).await.unwrap_err();
    assert!(e.is_decode(), "input_required where MRTR is not allowed: {e}");
    script.await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn unsupported_version_is_retried_once() {
    let (client_end, mut fake) = Fake::pair();
    let script = tokio::spawn(async move {
        fake.accept_modern().await;
        let unsupported = json!({"code": -32022, "message": "Unsupported protocol version",
            "data": {"supported": ["2026-07-28"], "requested": "2026-07-28"}});
        let first = fake.expect("tools/list").await;
        fake.reply_error(&first, unsupported.clone()).await;
        let retry = fake.expect("tools/list").await;
        assert_ne!(retry["id"], first["id"]);
        fake.reply(&retry, json!({"tools": [], "resultType": "complete"})).await;
        // Refused twice: the error surfaces after exactly one retry.
        // (Were there a second retry, it would get the answer below and the client's next
        // call would then break the final silence.)
        for _ in 0..2 {
            let req = fake.expect("tools/list").await;
            fake.reply_error(&req, unsupported.clone()).await;
        }
        // Refused with nothing in common: no retry at all.
        let req = fake.expect("tools/list").await;
        fake.reply_error(
            &req,
            json!({"code": -32022, "message": "no", "data": {"supported": ["2099-01-01"], "requested": "2026-07-28"}}),
        )
        .await;
        fake.expect_silence(Duration::from_millis(100)).await;
    });
    let session = Client::builder("c", "1").build().connect(client_end).await.unwrap();
    assert!(session.list_tools(None).await.unwrap().tools.is_empty());
    let e = session.list_tools(None).await.unwrap_err();
    assert_eq!(e.code(), Some(-32022), "{e}");
    let e = session.list_tools(None).await.unwrap_err();
    assert_eq!(e.code(), Some(-32022), "{e}");
    script.await.unwrap();
}

#[tokio::test]
async fn a_modern_error_listing_only_legacy_versions_leads_to_initialize() {
    let (client_end, mut fake) = Fake::pair();
    let script = tokio::spawn(async move {
        let probe = fake.expect("server/discover").await;
        fake.reply_error(
            &probe,
            json!({"code": -32022, "message": "unsupported", "data": {"supported": ["2025-06-18"], "requested": "2026-07-28"}}),
        )
        .await;
        let init = fake.expect("initialize").await;
        assert_eq!(init["params"]["protocolVersion"], "2025-11-25", "offers the newest legacy revision");
        assert_eq!(init["params"]["clientInfo"]["name"], "c");
        assert_eq!(init["params"]["capabilities"], json!({"sampling": {}}));
        // The server answers an older revision: accepted.
        fake.reply(
            &init,
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "serverInfo": {"name": "old", "version": "1"}}),
        )
        .await;
        fake.expect("notifications/initialized").await;
        let ping = fake.expect("ping").await;
        assert!(ping["params"].get("_meta").is_none(), "no modern _meta in the legacy era: {ping}");
        fake.reply(&ping, json!({})).await;
    });
    let client =
        Client::builder("c", "1").sampling(|_| async { Err(mcpwire_client::ErrorObject::internal("x")) }).build();
    let session = client.connect(client_end).await.unwrap();
    assert_eq!(session.era(), Era::Legacy);
    assert_eq!(session.protocol_version(), ProtocolVersion::V2025_06_18);
    assert_eq!(session.server_info().unwrap().name, "old");
    session.ping().await.unwrap();
    script.await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn negotiation_failures_are_clear() {
    // A pinned legacy revision the server does not speak.
    let (client_end, mut fake) = Fake::pair();
    let script = tokio::spawn(async move {
        let init = fake.expect("initialize").await;
        assert_eq!(init["params"]["protocolVersion"], "2025-03-26", "pinned: no probe");
        fake.reply(
            &init,
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "serverInfo": {"name": "s", "version": "1"}}),
        )
        .await;
        fake
    });
    let client = Client::builder("c", "1").protocol_version(ProtocolVersion::V2025_03_26).build();
    let e = client.connect(client_end).await.unwrap_err();
    assert!(matches!(e, ClientError::Negotiation(_)), "{e}");
    assert!(e.is_negotiation() && !e.is_decode(), "{e}");
    assert!(e.source().is_none(), "the client's own account of the mismatch: {e:?}");
    let mut fake = script.await.unwrap();
    assert!(fake.conn.incoming.recv().await.is_none(), "the client closed the connection");

    // An initialize answer with a revision nobody knows.
    let (client_end, mut fake) = Fake::pair();
    let script = tokio::spawn(async move {
        let probe = fake.expect("server/discover").await;
        fake.reply(&probe, json!({"weird": true})).await;
        let init = fake.expect("initialize").await;
        fake.reply(
            &init,
            json!({"protocolVersion": "1999-01-01", "capabilities": {}, "serverInfo": {"name": "s", "version": "1"}}),
        )
        .await;
    });
    let e = Client::builder("c", "1").build().connect(client_end).await.unwrap_err();
    assert!(matches!(e, ClientError::Negotiation(_)), "{e}");
    script.await.unwrap();

    // Pinned 2026-07-28 never falls back to initialize.
    let (client_end, mut fake) = Fake::pair();
    let script = tokio::spawn(async move {
        let probe = fake.expect("server/discover").await;
        fake.reply_error(&probe, json!({"code": -32601, "message": "Method not found"})).await;
        fake.expect_silence(Duration::from_millis(100)).await;
    });
    let client = Client::builder("c", "1").protocol_version(ProtocolVersion::V2026_07_28).build();
    let e = client.connect(client_end).await.unwrap_err();
    assert_eq!(e.code(), Some(-32601), "{e}");
    script.await.unwrap();

    // The server goes away during the probe.
    let (client_end, mut fake) = Fake::pair();
    let script = tokio::spawn(async move {
        fake.expect("server/discover").await;
        drop(fake);
    });
    let e = Client::builder("c", "1").build().connect(client_end).await.unwrap_err();
    assert!(e.is_closed(), "{e}");
    script.await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_late_response_after_a_timeout_is_ignored() {
    let (client_end, mut fake) = Fake::pair();
    let script = tokio::spawn(async move {
        fake.accept_modern().await;
        let slow = fake.expect("tools/call").await;
        let cancel = fake.expect("notifications/cancelled").await;
        assert_eq!(cancel["params"]["requestId"], slow["id"]);
        assert_eq!(cancel["params"]["reason"], "timed out");
        // Answer anyway, late; then answer the next call.
        fake.reply(&slow, json!({"content": [{"type": "text", "text": "late"}]})).await;
        let next = fake.expect("tools/call").await;
        fake.reply(&next, json!({"content": [{"type": "text", "text": "fresh"}]})).await;
        // A dropped call future also cancels.
        let dropped = fake.expect("tools/call").await;
        let cancel = fake.expect("notifications/cancelled").await;
        assert_eq!(cancel["params"]["requestId"], dropped["id"]);
        fake.reply(&dropped, json!({"content": []})).await;
        let ping = fake.expect("server/discover").await;
        fake.reply(&ping, discover_result()).await;
    });
    let session = Client::builder("c", "1").validate_outputs(false).build().connect(client_end).await.unwrap();
    let mut notes = session.notifications();
    let e = session.with_timeout(Duration::from_millis(150)).call_tool("slow", json!({})).await.unwrap_err();
    assert!(e.is_timeout(), "{e}");
    let r = session.call_tool("next", json!({})).await.unwrap();
    assert_eq!(r.content[0].as_text(), Some("fresh"), "the late answer did not leak into the next call");
    let call = session.call_tool("dropped", json!({}));
    assert!(tokio::time::timeout(Duration::from_millis(50), call).await.is_err());
    session.ping().await.unwrap();
    assert!(notes.try_recv().is_err(), "nothing reached the application");
    script.await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn legacy_server_requests_are_answered_or_refused() {
    let (client_end, mut fake) = Fake::pair();
    let (go, ready) = tokio::sync::oneshot::channel();
    let script = tokio::spawn(async move {
        let init = fake.expect("initialize").await;
        fake.reply(
            &init,
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "serverInfo": {"name": "f", "version": "0"}}),
        )
        .await;
        fake.expect("notifications/initialized").await;
        assert_eq!(init["params"]["capabilities"], json!({"roots": {"listChanged": true}}));
        for (id, method) in [
            (10, "ping"),
            (11, "roots/list"),
            (12, "sampling/createMessage"),
            (13, "elicitation/create"),
            (14, "vendor/x"),
        ] {
            fake.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": {}})).await;
            let answer = fake.recv().await;
            assert_eq!(answer["id"], id, "{answer}");
            match method {
                "ping" => assert_eq!(answer["result"], json!({})),
                "roots/list" => assert_eq!(answer["result"]["roots"][0]["uri"], "file:///only"),
                _ => assert_eq!(answer["error"]["code"], -32601, "{method}: no handler: {answer}"),
            }
        }
        // Bad input of every kind: ignored or answered, never fatal.
        for junk in [
            "not json",
            "[]",
            "42",
            r#"{"jsonrpc":"2.0","id":99,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":7,"method":5}"#,
        ] {
            fake.conn.outgoing.send(mcpwire_protocol::frame::Outbound::text(junk.to_owned())).await.unwrap();
        }
        let answer = fake.recv().await;
        assert_eq!((answer["id"].clone(), answer["error"]["code"].clone()), (json!(7), json!(-32600)), "{answer}");
        go.send(()).unwrap();
        let list = fake.expect("tools/list").await;
        fake.reply(
            &list,
            json!({"tools": [{"name": "t", "inputSchema": {"type": "object"}, "unknownField": 1}], "extra": true}),
        )
        .await;
        // A malformed response to a pending request fails it at once.
        let list = fake.expect("tools/list").await;
        fake.send(json!({"jsonrpc": "2.0", "id": list["id"]})).await;
        let list = fake.expect("tools/list").await;
        fake.reply(&list, json!({"tools": "nope"})).await;
        // The server cancels a request it sent: the handler is dropped, no answer comes.
        fake.send(json!({"jsonrpc": "2.0", "id": "r", "method": "roots/list"})).await;
        fake.send(json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "r"}})).await;
        fake.send(
            json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "hello"}}),
        )
        .await;
        fake.expect_silence(Duration::from_millis(300)).await;
    });
    let client = Client::builder("c", "1")
        .protocol_version(ProtocolVersion::V2025_06_18)
        .roots(|| async {
            // 100 ms of paused time: the server's cancellation below comes while it runs,
            // and the silence after it outlasts it.
            tokio::time::sleep(Duration::from_millis(100)).await;
            Ok(ListRootsResult { roots: vec![Root { uri: "file:///only".into(), name: None, meta: None }] })
        })
        .build();
    let session = client.connect(client_end).await.unwrap();
    let mut notes = session.notifications();
    ready.await.unwrap();
    // Tolerant decoding: unknown members are ignored.
    let tools = tokio::time::timeout(WAIT, session.list_tools(None)).await.unwrap().unwrap();
    assert_eq!(tools.tools[0].name, "t");
    // A response that is not valid JSON-RPC: the engine's words, no decoder error.
    let e = session.list_tools(None).await.unwrap_err();
    assert!(e.is_decode(), "{e}");
    assert!(matches!(&e, ClientError::Decode { detail: Some(_), source: None, .. }), "{e:?}");
    // A result of the wrong shape: the decoder's error is the source, its words (where, and
    // what) the end of the text.
    let e = session.list_tools(None).await.unwrap_err();
    assert!(e.is_decode(), "{e}");
    assert_eq!(e.to_string(), r#"cannot decode the answer to tools/list: `tools`: expected a list, got "nope""#);
    let json = e.source().and_then(|s| s.downcast_ref::<serde_json::Error>()).expect("a serde_json::Error source");
    assert!(json.is_data(), "{json}");
    script.await.unwrap();
    let n = notes.recv().await.unwrap();
    assert!(matches!(&n, ServerNotification::Cancelled(_)), "{n:?}");
    let n = notes.recv().await.unwrap();
    assert!(matches!(&n, ServerNotification::Log(m) if m.data == "hello"), "{n:?}");
}

#[tokio::test]
async fn a_server_that_goes_away_fails_pending_calls() {
    let (client_end, mut fake) = Fake::pair();
    let script = tokio::spawn(async move {
        fake.accept_modern().await;
        fake.expect("tools/call").await;
        drop(fake);
    });
    let session = Client::builder("c", "1").build().connect(client_end).await.unwrap();
    let e = tokio::time::timeout(WAIT, session.call_tool("t", json!({}))).await.unwrap().unwrap_err();
    assert!(e.is_closed(), "{e}");
    tokio::time::timeout(WAIT, session.closed()).await.unwrap();
    assert!(session.call_tool("t", json!({})).await.unwrap_err().is_closed());
    script.await.unwrap();
}

#[tokio::test]
async fn listen_streams_follow_their_subscription_id() {
    let (client_end, mut fake) = Fake::pair();
    let script = tokio::spawn(async move {
        fake.accept_modern().await;
        let listen = fake.expect("subscriptions/listen").await;
        modern_meta_ok_any(&listen);
        let id = listen["id"].clone();
        let sub = |v: Value| {
            let mut v = v;
            v["_meta"] = json!({"io.modelcontextprotocol/subscriptionId": id});
            v
        };
        // Something for another subscription, then the acknowledgement, then notifications.
        fake.send(json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed", "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": "other"}}}))
            .await;
        fake.send(json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged", "params": sub(json!({"notifications": {"toolsListChanged": true}}))}))
            .await;
        fake.send(json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed", "params": sub(json!({}))}))
            .await;
        fake.send(json!({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": sub(json!({"uri": "x://y"}))}))
            .await;
        // The server ends the subscription gracefully.
        fake.reply(&listen, json!({"resultType": "complete", "_meta": {"io.modelcontextprotocol/subscriptionId": id}}))
            .await;
        // A second one, cancelled by the client.
        let listen = fake.expect("subscriptions/listen").await;
        fake.send(json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged", "params": {"notifications": {}, "_meta": {"io.modelcontextprotocol/subscriptionId": listen["id"]}}}))
            .await;
        let cancel = fake.expect("notifications/cancelled").await;
        assert_eq!(cancel["params"]["requestId"], listen["id"]);
        // A third, refused.
        let listen = fake.expect("subscriptions/listen").await;
        fake.reply_error(&listen, json!({"code": -32602, "message": "bad filter"})).await;
    });
    let session = Client::builder("listen-client", "1").build().connect(client_end).await.unwrap();
    let mut notes = session.notifications();
    let filter = mcpwire_protocol::types::SubscriptionFilter { tools_list_changed: Some(true), ..Default::default() };
    let mut stream = session.listen(filter.clone()).await.unwrap();
    assert_eq!(stream.honoured().tools_list_changed, Some(true));
    assert_eq!(stream.next().await, Some(ServerNotification::ToolsListChanged));
    assert!(matches!(stream.next().await, Some(ServerNotification::ResourceUpdated(p)) if p.uri == "x://y"));
    assert_eq!(tokio::time::timeout(WAIT, stream.next()).await.unwrap(), None, "ended by the server");
    // The unknown subscription's notification went to the general channel.
    assert_eq!(notes.try_recv().unwrap(), ServerNotification::ToolsListChanged);
    let second = session.listen(filter.clone()).await.unwrap();
    drop(second);
    let e = session.listen(filter).await.unwrap_err();
    assert_eq!(e.code(), Some(-32602), "{e}");
    script.await.unwrap();
}

fn modern_meta_ok_any(msg: &Value) {
    assert_eq!(msg["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"], "2026-07-28", "{msg}");
    assert_eq!(msg["params"]["_meta"]["io.modelcontextprotocol/clientInfo"]["name"], "listen-client");
}

#[tokio::test]
async fn raw_requests_and_notifications() {
    let (client_end, mut fake) = Fake::pair();
    let script = tokio::spawn(async move {
        fake.accept_modern().await;
        let req = fake.expect("vendor/method").await;
        assert_eq!(req["params"]["a"], 1);
        assert_eq!(req["params"]["_meta"]["mine"], "kept");
        assert_eq!(req["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"], "2026-07-28");
        assert_eq!(req["params"]["_meta"]["io.modelcontextprotocol/logLevel"], "error");
        fake.reply(&req, json!({"resultType": "complete", "b": 2})).await;
        let n = fake.expect("vendor/notice").await;
        assert!(n.get("id").is_none());
    });
    let session = Client::builder("c", "1").build().connect(client_end).await.unwrap();
    session.set_logging_level(mcpwire_protocol::types::LoggingLevel::Error).await.unwrap();
    let r = session.request("vendor/method", Some(json!({"a": 1, "_meta": {"mine": "kept"}}))).await.unwrap();
    assert_eq!(r["b"], 2);
    session.notify("vendor/notice", Some(json!({}))).await.unwrap();
    let e = session.request("vendor/x", Some(json!([1]))).await.unwrap_err();
    assert!(matches!(e, ClientError::InvalidArguments(_)), "{e}");
    assert!(e.is_invalid_arguments() && e.source().is_none(), "{e:?}");
    assert!(session.notify_roots_list_changed().await.unwrap_err().is_unsupported());
    script.await.unwrap();
}

/// A 2025-11-25 server whose tool declares an output schema, answering `results` in turn.
async fn output_script(mut fake: Fake, results: Vec<Value>) {
    fake.accept_legacy("2025-11-25").await;
    let mut listed = false;
    for result in results {
        let mut call = fake.recv().await;
        if call["method"] == "tools/list" {
            listed = true;
            let schema = json!({"type": "object", "properties": {"sum": {"type": "number"}}, "required": ["sum"]});
            let tool = json!({"name": "add", "inputSchema": {"type": "object"}, "outputSchema": schema});
            fake.reply(&call, json!({"tools": [tool]})).await;
            call = fake.expect("tools/call").await;
        }
        fake.reply(&call, result).await;
    }
    assert!(listed, "the client listed the tools before checking a result");
}

#[tokio::test]
async fn structured_results_are_checked_against_the_listed_output_schema() {
    let (client_end, fake) = Fake::pair();
    let good = json!({"content": [{"type": "text", "text": "{\"sum\":3}"}], "structuredContent": {"sum": 3}});
    let bad = json!({"content": [{"type": "text", "text": "{\"sum\":\"3\"}"}], "structuredContent": {"sum": "3"}});
    let missing = json!({"content": [{"type": "text", "text": "3"}]});
    let failed = json!({"content": [{"type": "text", "text": "no"}], "isError": true});
    let script = tokio::spawn(output_script(fake, vec![good, bad, missing, failed.clone(), failed]));
    let client = Client::builder("outputs", "1.0").build();
    let session = client.connect(client_end).await.unwrap();

    #[derive(serde::Deserialize, Debug, PartialEq)]
    struct Sum {
        sum: f64,
    }
    assert_eq!(session.call_tool_as::<Sum>("add", json!({})).await.unwrap(), Sum { sum: 3.0 });
    let e = session.call_tool("add", json!({})).await.unwrap_err();
    assert!(e.is_invalid_output(), "{e:?}");
    assert_eq!(
        e.to_string(),
        "the result of tool add does not fit its output schema: `sum`: \"3\" is not of type \"number\""
    );
    let e = session.call_tool("add", json!({})).await.unwrap_err();
    assert!(e.to_string().contains("no structuredContent"), "{e}");
    let failed = session.call_tool("add", json!({})).await.unwrap();
    assert_eq!(failed.is_error, Some(true), "a tool error is not checked");
    let e = session.call_tool_as::<Sum>("add", json!({})).await.unwrap_err();
    assert!(e.is_tool_failure() && e.to_string() == "tool add failed: no", "{e}");
    script.await.unwrap();
}
