//! In-memory client/server pair tests of the runtime's behaviour, in both eras.
//!
//! Everything here is in memory, so tests about time run on tokio's paused clock
//! (`start_paused`): it moves only when every task waits, straight to the next timer, so
//! timeouts fire at their exact virtual instant and no test waits on the wall clock.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use mcpwire_protocol::types::{
    CallToolResult, LoggingLevel, Prompt, ReadResourceResult, Resource, ResourceContents, Tool,
};
use mcpwire_server::{Context, HandlerError, Server};
use mcpwire_transport::{memory, Connection};
use serde_json::{json, Value};

const WAIT: Duration = Duration::from_secs(5);

/// The client end of an in-memory connection to a served server.
struct Peer {
    conn: Connection,
    next_id: i64,
}

impl Peer {
    fn start(server: &Server) -> Self {
        let (client, server_end) = memory::pair();
        let server = server.clone();
        tokio::spawn(async move { server.serve(server_end).await });
        Self { conn: client, next_id: 1 }
    }

    async fn send(&self, v: Value) {
        self.conn.outgoing.send(mcpwire_protocol::frame::Outbound::text(v.to_string())).await.expect("server gone");
    }

    async fn recv(&mut self) -> Value {
        let frame = tokio::time::timeout(WAIT, self.conn.incoming.recv())
            .await
            .expect("timed out waiting for the server")
            .expect("connection closed")
            .expect("bad frame");
        serde_json::from_str(&frame.text).expect("server sent invalid JSON")
    }

    /// Receives nothing for `d` (or fails with what arrived).
    async fn expect_silence(&mut self, d: Duration) {
        if let Ok(Some(frame)) = tokio::time::timeout(d, self.conn.incoming.recv()).await {
            panic!("expected nothing, got {frame:?}");
        }
    }

    /// Sends a request and returns (notifications before the response, the response).
    async fn request(&mut self, method: &str, params: Value) -> (Vec<Value>, Value) {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({"jsonrpc":"2.0","id":id,"method":method,"params":params})).await;
        let mut before = Vec::new();
        loop {
            let msg = self.recv().await;
            if msg.get("id") == Some(&json!(id)) && msg.get("method").is_none() {
                return (before, msg);
            }
            before.push(msg);
        }
    }

    async fn call(&mut self, method: &str, params: Value) -> Value {
        let (_, r) = self.request(method, params).await;
        r
    }

    async fn initialize(&mut self, version: &str, capabilities: Value) -> Value {
        let r = self
            .call(
                "initialize",
                json!({"protocolVersion":version,"capabilities":capabilities,"clientInfo":{"name":"t","version":"1"}}),
            )
            .await;
        self.send(json!({"jsonrpc":"2.0","method":"notifications/initialized"})).await;
        r
    }
}

/// On the paused clock: returns once every task has run as far as it can (the clock moves
/// only when nothing is left to run), so whatever was in flight has been handled.
async fn settle() {
    let before = tokio::time::Instant::now();
    tokio::task::yield_now().await;
    assert_eq!(before, tokio::time::Instant::now(), "settle() needs the paused clock (start_paused = true)");
    tokio::time::sleep(Duration::from_millis(1)).await;
}

fn modern(mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    params
}

fn tool(name: &str) -> Tool {
    Tool::new(name, "test tool", json!({"type":"object"}))
}

fn names(list: &Value, key: &str) -> Vec<String> {
    list[key].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_owned()).collect()
}

#[tokio::test]
async fn tool_set_changes_at_runtime_and_clients_are_told() {
    let server = Server::builder("s", "1").build();
    server.add_tool(tool("a"), |_, _| async { Ok(CallToolResult::text("a")) });
    let mut peer = Peer::start(&server);
    peer.initialize("2025-06-18", json!({})).await;
    server.add_tool(tool("b"), |_, _| async { Ok(CallToolResult::text("b")) });
    assert_eq!(peer.recv().await["method"], "notifications/tools/list_changed");
    let r = peer.call("tools/list", json!({})).await;
    assert_eq!(names(&r["result"], "tools"), ["a", "b"], "deterministic (insertion) order");
    assert!(server.remove_tool("a"));
    assert_eq!(peer.recv().await["method"], "notifications/tools/list_changed");
    let r = peer.call("tools/call", json!({"name":"a"})).await;
    assert_eq!(r["error"]["code"], -32602, "a removed tool is unknown: {r}");
}

#[tokio::test]
async fn pagination_with_opaque_cursors() {
    let server = Server::builder("s", "1").page_size(2).build();
    for n in ["t1", "t2", "t3", "t4", "t5"] {
        server.add_tool(tool(n), |_, _| async { Ok(CallToolResult::text("")) });
    }
    let mut peer = Peer::start(&server);
    peer.initialize("2025-11-25", json!({})).await;
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..10 {
        let params = match &cursor {
            Some(c) => json!({"cursor": c}),
            None => json!({}),
        };
        let r = peer.call("tools/list", params).await;
        seen.extend(names(&r["result"], "tools"));
        cursor = r["result"]["nextCursor"].as_str().map(str::to_owned);
        if cursor.is_none() {
            break;
        }
    }
    assert_eq!(seen, ["t1", "t2", "t3", "t4", "t5"]);

    let first = peer.call("tools/list", json!({})).await;
    let good = first["result"]["nextCursor"].as_str().unwrap().to_owned();
    let mut tampered = good.clone().into_bytes();
    tampered[3] = if tampered[3] == b'A' { b'B' } else { b'A' };
    let r = peer.call("tools/list", json!({"cursor": String::from_utf8(tampered).unwrap()})).await;
    assert_eq!(r["error"]["code"], -32602, "tampered cursor: {r}");
    let r = peer.call("tools/list", json!({"cursor": "garbage!"})).await;
    assert_eq!(r["error"]["code"], -32602);
    server.add_tool(tool("t6"), |_, _| async { Ok(CallToolResult::text("")) });
    let _ = peer.recv().await; // list_changed
    let r = peer.call("tools/list", json!({"cursor": good})).await;
    assert_eq!(r["error"]["code"], -32602, "a cursor from before the list changed is stale: {r}");
}

#[tokio::test]
async fn undeclared_capabilities_are_method_not_found() {
    let server = Server::builder("s", "1").build();
    server.add_tool(tool("a"), |_, _| async { Ok(CallToolResult::text("a")) });
    let mut peer = Peer::start(&server);
    let init = peer.initialize("2025-06-18", json!({})).await;
    let caps = &init["result"]["capabilities"];
    assert!(caps.get("prompts").is_none() && caps.get("resources").is_none());
    for method in ["prompts/list", "resources/list", "resources/read", "completion/complete"] {
        let r = peer.call(method, json!({})).await;
        assert_eq!(r["error"]["code"], -32601, "{method}: {r}");
    }
    let r = peer.call("subscriptions/listen", json!({})).await;
    assert_eq!(r["error"]["code"], -32601, "listen is modern-only: {r}");
}

#[tokio::test(start_paused = true)]
async fn a_call_that_waits_does_not_hold_up_the_calls_behind_it() {
    // Requests run on the connection until they first wait: one that waits must be moved off
    // it, so that the connection goes on reading and answering. `slow` waits until the test
    // has the answer to `fast`: were it holding up the connection, that answer would never
    // come.
    let server = Server::builder("s", "1").build();
    let gate = Arc::new(tokio::sync::Notify::new());
    let opens = gate.clone();
    server.add_tool(tool("slow"), move |_, _| {
        let opens = opens.clone();
        async move {
            opens.notified().await;
            Ok(CallToolResult::text("slow"))
        }
    });
    server.add_tool(tool("fast"), |_, _| async { Ok(CallToolResult::text("fast")) });
    for version in ["2025-06-18", "2026-07-28"] {
        let mut peer = Peer::start(&server);
        let params = |name: &str| {
            if version == "2026-07-28" {
                modern(json!({"name": name}))
            } else {
                json!({"name": name})
            }
        };
        if version != "2026-07-28" {
            peer.initialize(version, json!({})).await;
        }
        peer.send(json!({"jsonrpc":"2.0","id":"s","method":"tools/call","params":params("slow")})).await;
        peer.send(json!({"jsonrpc":"2.0","id":"f","method":"tools/call","params":params("fast")})).await;
        let first = peer.recv().await;
        assert_eq!((&first["id"], &first["result"]["content"][0]["text"]), (&json!("f"), &json!("fast")), "{version}");
        gate.notify_one();
        let second = peer.recv().await;
        assert_eq!(
            (&second["id"], &second["result"]["content"][0]["text"]),
            (&json!("s"), &json!("slow")),
            "{version}"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn cancellation_drops_the_handler_and_sends_no_response() {
    let server = Server::builder("s", "1").build();
    let finished = Arc::new(AtomicBool::new(false));
    let dropped = Arc::new(AtomicBool::new(false));
    let started = Arc::new(tokio::sync::Notify::new());
    struct OnDrop(Arc<AtomicBool>);
    impl Drop for OnDrop {
        fn drop(&mut self) {
            self.0.store(true, Ordering::SeqCst);
        }
    }
    const WORK: Duration = Duration::from_secs(30);
    let (f, d, s) = (finished.clone(), dropped.clone(), started.clone());
    server.add_tool(tool("slow"), move |_, _| {
        let (f, d, s) = (f.clone(), d.clone(), s.clone());
        async move {
            let _guard = OnDrop(d);
            s.notify_one();
            tokio::time::sleep(WORK).await;
            f.store(true, Ordering::SeqCst);
            Ok(CallToolResult::text("late"))
        }
    });
    for version in ["2025-06-18", "2026-07-28"] {
        finished.store(false, Ordering::SeqCst);
        dropped.store(false, Ordering::SeqCst);
        let mut peer = Peer::start(&server);
        let params = if version == "2026-07-28" {
            modern(json!({"name":"slow"}))
        } else {
            peer.initialize(version, json!({})).await;
            json!({"name":"slow"})
        };
        peer.send(json!({"jsonrpc":"2.0","id":"slow-1","method":"tools/call","params":params})).await;
        tokio::time::timeout(WAIT, started.notified()).await.expect("the handler started");
        peer.send(
            json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"slow-1","reason":"test"}}),
        )
        .await;
        // Within `WAIT` of paused time: well before the handler's work would be done.
        mcpwire_testkit::eventually_within(WAIT, "the handler future was dropped", || async {
            dropped.load(Ordering::SeqCst).then_some(())
        })
        .await;
        assert!(dropped.load(Ordering::SeqCst), "{version}: the handler future was dropped");
        assert!(!finished.load(Ordering::SeqCst));
        // No response, not even once the handler's work would have been done.
        peer.expect_silence(WORK + Duration::from_secs(1)).await;
        assert!(!finished.load(Ordering::SeqCst), "{version}: the dropped handler never ran on");
    }
}

#[tokio::test]
async fn legacy_logging_follows_set_level_and_modern_follows_meta() {
    let server = Server::builder("s", "1").build();
    server.add_tool(tool("log"), |_, ctx: Context| async move {
        ctx.log(LoggingLevel::Debug, "debug").await;
        ctx.log(LoggingLevel::Warning, "warning").await;
        Ok(CallToolResult::text("done"))
    });
    let mut peer = Peer::start(&server);
    peer.initialize("2025-03-26", json!({})).await;
    peer.call("logging/setLevel", json!({"level":"warning"})).await;
    let (notes, _) = peer.request("tools/call", json!({"name":"log"})).await;
    let data: Vec<&Value> = notes.iter().map(|n| &n["params"]["data"]).collect();
    assert_eq!(data, [&json!("warning")]);
    let r = peer.call("logging/setLevel", json!({"level":"loud"})).await;
    assert_eq!(r["error"]["code"], -32602);

    let mut peer = Peer::start(&server);
    let (notes, _) = peer.request("tools/call", modern(json!({"name":"log"}))).await;
    assert!(notes.is_empty(), "no logLevel in _meta means no logs: {notes:?}");
    let mut params = modern(json!({"name":"log"}));
    params["_meta"]["io.modelcontextprotocol/logLevel"] = json!("debug");
    let (notes, r) = peer.request("tools/call", params).await;
    assert_eq!(notes.len(), 2, "{notes:?}");
    assert_eq!(r["result"]["resultType"], "complete");
}

#[tokio::test(start_paused = true)]
async fn resource_subscriptions_in_both_eras() {
    let server = Server::builder("s", "1").build();
    server.add_resource(Resource::new("test://r", "r"), |uri, _| async move {
        Ok(ReadResourceResult { contents: vec![ResourceContents::text(uri, None, "x")], meta: None })
    });
    let mut legacy = Peer::start(&server);
    legacy.initialize("2025-06-18", json!({})).await;
    assert_eq!(legacy.call("resources/subscribe", json!({"uri":"test://r"})).await["result"], json!({}));
    server.notify_resource_updated("test://other");
    server.notify_resource_updated("test://r");
    let n = legacy.recv().await;
    assert_eq!(n["method"], "notifications/resources/updated");
    assert_eq!(n["params"]["uri"], "test://r");
    legacy.call("resources/unsubscribe", json!({"uri":"test://r"})).await;
    server.notify_resource_updated("test://r");
    legacy.expect_silence(Duration::from_millis(100)).await;

    let mut modern_peer = Peer::start(&server);
    let listen = modern(json!({"notifications":{"resourceSubscriptions":["test://r"],"toolsListChanged":true}}));
    modern_peer.send(json!({"jsonrpc":"2.0","id":"L","method":"subscriptions/listen","params":listen})).await;
    let ack = modern_peer.recv().await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], "L");
    assert_eq!(
        ack["params"]["notifications"],
        json!({"resourceSubscriptions":["test://r"]}),
        "no tools on this server"
    );
    server.notify_resource_updated("test://r");
    let n = modern_peer.recv().await;
    assert_eq!(n["method"], "notifications/resources/updated");
    assert_eq!(n["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], "L");
    modern_peer.send(json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"L"}})).await;
    // The cancellation has been handled, and the stream ended, once every task is idle.
    settle().await;
    server.notify_resource_updated("test://r");
    modern_peer.expect_silence(Duration::from_millis(100)).await;
    // The removed legacy methods are unknown to a modern request.
    let r = modern_peer.call("resources/subscribe", modern(json!({"uri":"test://r"}))).await;
    assert_eq!(r["error"]["code"], -32601);
}

#[tokio::test(start_paused = true)]
async fn legacy_sampling_is_a_real_request_and_times_out() {
    const TIMEOUT: Duration = Duration::from_millis(300);
    let server = Server::builder("s", "1").request_timeout(TIMEOUT).build();
    server.add_tool(tool("ask"), |_, ctx: Context| async move {
        let reply = ctx
            .sample(
                serde_json::from_value(
                    json!({"messages":[{"role":"user","content":{"type":"text","text":"q"}}],"maxTokens":5}),
                )
                .unwrap(),
            )
            .await?;
        Ok(CallToolResult::text(format!("model said via {}", reply.model)))
    });
    let mut peer = Peer::start(&server);
    peer.initialize("2025-06-18", json!({"sampling":{}})).await;
    peer.send(json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask"}})).await;
    let req = peer.recv().await;
    assert_eq!(req["method"], "sampling/createMessage");
    peer.send(json!({"jsonrpc":"2.0","id":req["id"],"result":{"role":"assistant","content":{"type":"text","text":"a"},"model":"m1"}}))
        .await;
    let r = peer.recv().await;
    assert_eq!(r["result"]["content"][0]["text"], "model said via m1");

    // Unanswered: the request times out, the client is told it no longer needs answering, and
    // the tool reports an error; a late answer is ignored.
    peer.send(json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ask"}})).await;
    let req = peer.recv().await;
    // The clock stands still while anything runs: the request was sent at `asked`.
    let asked = tokio::time::Instant::now();
    peer.expect_silence(TIMEOUT - Duration::from_millis(1)).await;
    let cancelled = peer.recv().await;
    assert!(asked.elapsed() >= TIMEOUT, "given up after {:?}, before the timeout", asked.elapsed());
    assert_eq!(cancelled["method"], "notifications/cancelled", "{cancelled}");
    assert_eq!(cancelled["params"]["requestId"], req["id"], "{cancelled}");
    let r = peer.recv().await;
    assert_eq!(r["id"], 2);
    assert!(r["error"]["message"].as_str().unwrap().contains("in time"), "{r}");
    peer.send(json!({"jsonrpc":"2.0","id":req["id"],"result":{"role":"assistant","content":{"type":"text","text":"a"},"model":"m"}}))
        .await;
    assert_eq!(peer.call("ping", json!({})).await["result"], json!({}));

    // A client without the capability is never asked.
    let mut peer = Peer::start(&server);
    peer.initialize("2025-06-18", json!({})).await;
    let r = peer.call("tools/call", json!({"name":"ask"})).await;
    assert_eq!(r["result"]["isError"], true, "{r}");
}

/// What a handler's question came to, as the tool reports it.
fn describe(outcome: Result<mcpwire_protocol::types::CreateMessageResult, HandlerError>) -> String {
    match outcome {
        Ok(r) => format!("answered by {}", r.model),
        Err(HandlerError::Ask(e)) => {
            let source = std::error::Error::source(&e).map(|s| s.to_string()).unwrap_or_default();
            format!(
                "timeout={} unsupported={} malformed={} closed={} source={source}",
                e.is_timeout(),
                e.is_unsupported(),
                e.is_malformed(),
                e.is_closed()
            )
        }
        Err(other) => format!("other: {other}"),
    }
}

#[tokio::test(start_paused = true)]
async fn a_handler_learns_why_its_question_got_no_answer() {
    const TIMEOUT: Duration = Duration::from_millis(300);
    let server = Server::builder("s", "1").request_timeout(TIMEOUT).build();
    server.add_tool(tool("why"), |_, ctx: Context| async move {
        let params = serde_json::from_value(
            json!({"messages":[{"role":"user","content":{"type":"text","text":"q"}}],"maxTokens":5}),
        )
        .unwrap();
        Ok(CallToolResult::text(describe(ctx.sample(params).await)))
    });
    let text = |r: &Value| r["result"]["content"][0]["text"].as_str().unwrap_or_default().to_owned();

    let mut peer = Peer::start(&server);
    peer.initialize("2025-06-18", json!({"sampling":{}})).await;
    // An answer that is not a sampling result: malformed, the engine's finding as the cause.
    peer.send(json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"why"}})).await;
    let req = peer.recv().await;
    peer.send(json!({"jsonrpc":"2.0","id":req["id"],"result":{"role":"assistant"}})).await;
    let said = text(&peer.recv().await);
    assert!(said.starts_with("timeout=false unsupported=false malformed=true closed=false source="), "{said}");
    assert!(said.len() > "timeout=false unsupported=false malformed=true closed=false source=".len(), "{said}");
    // No answer: a timeout.
    peer.send(json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"why"}})).await;
    let _question = peer.recv().await;
    let _cancelled = peer.recv().await;
    assert_eq!(text(&peer.recv().await), "timeout=true unsupported=false malformed=false closed=false source=");

    // A client without the capability is not asked.
    let mut peer = Peer::start(&server);
    peer.initialize("2025-06-18", json!({})).await;
    let r = peer.call("tools/call", json!({"name":"why"})).await;
    assert_eq!(text(&r), "timeout=false unsupported=true malformed=false closed=false source=");
}

#[tokio::test]
async fn tool_errors_are_results_and_protocol_errors_are_errors() {
    let server = Server::builder("s", "1").build();
    server.add_tool(tool("fails"), |_, _| async { Err(HandlerError::tool("it broke")) });
    server.add_tool(
        Tool::new("needs", "needs x", json!({"type":"object","properties":{"x":{"type":"string"}},"required":["x"]})),
        |_, _| async { Ok(CallToolResult::text("ok")) },
    );
    server.add_prompt(Prompt::new("p", "a prompt", vec![]), |_, _| async {
        Err(HandlerError::invalid_params("bad prompt input"))
    });
    let mut peer = Peer::start(&server);
    peer.initialize("2025-11-25", json!({})).await;
    let r = peer.call("tools/call", json!({"name":"fails"})).await;
    assert_eq!(r["result"]["isError"], true);
    assert_eq!(r["result"]["content"][0]["text"], "it broke");
    let r = peer.call("tools/call", json!({"name":"needs","arguments":{}})).await;
    assert_eq!(r["result"]["isError"], true, "input validation is a tool error (SEP-1303): {r}");
    let r = peer.call("prompts/get", json!({"name":"p"})).await;
    assert_eq!(r["error"]["code"], -32602);
    let r = peer.call("tools/call", json!({"name":"needs","arguments":"x"})).await;
    assert_eq!(r["error"]["code"], -32602, "arguments must be an object: {r}");
}

fn elicit_params(message: &str) -> mcpwire_protocol::types::ElicitParams {
    serde_json::from_value(
        json!({"message": message, "requestedSchema": {"type":"object","properties":{"v":{"type":"string"}}}}),
    )
    .unwrap()
}

/// A tool that asks twice, keeps state across rounds, and has a side effect after its last question.
fn two_question_server(effects: Arc<std::sync::atomic::AtomicUsize>) -> Server {
    let server = Server::builder("s", "1").build();
    server.add_tool(tool("ask2"), move |_, ctx: Context| {
        let effects = effects.clone();
        async move {
            if ctx.round_state().is_none() {
                ctx.set_round_state(json!("carried"));
            }
            let a = ctx.elicit_as("first", elicit_params("first?")).await?;
            let b = ctx.elicit(elicit_params("second?")).await?;
            effects.fetch_add(1, Ordering::SeqCst);
            let state = ctx.round_state().unwrap_or(json!("legacy"));
            Ok(CallToolResult::text(format!("{}+{} state={state}", a.content.unwrap()["v"], b.content.unwrap()["v"])))
        }
    });
    server
}

#[tokio::test]
async fn one_handler_api_modern_rounds() {
    let effects = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let server = two_question_server(effects.clone());
    let mut peer = Peer::start(&server);
    let mut params = modern(json!({"name":"ask2"}));
    params["_meta"]["io.modelcontextprotocol/clientCapabilities"] = json!({"elicitation":{}});
    let r1 = peer.call("tools/call", params.clone()).await;
    assert_eq!(r1["result"]["resultType"], "input_required", "{r1}");
    assert_eq!(r1["result"]["inputRequests"]["first"]["method"], "elicitation/create");
    let s1 = r1["result"]["requestState"].as_str().unwrap().to_owned();
    assert!(r1["result"].get("ttlMs").is_none());

    let mut retry = params.clone();
    retry["inputResponses"] = json!({"first": {"action":"accept","content":{"v":"A"}}});
    retry["requestState"] = json!(s1);
    let r2 = peer.call("tools/call", retry).await;
    assert_eq!(r2["result"]["resultType"], "input_required");
    assert!(r2["result"]["inputRequests"].get("input-1").is_some(), "unnamed questions get input-N keys: {r2}");
    let s2 = r2["result"]["requestState"].as_str().unwrap().to_owned();
    assert_ne!(s1, s2);

    // The first answer travels in the sealed state: the last retry carries only the second.
    let mut last = params.clone();
    last["inputResponses"] = json!({"input-1": {"action":"accept","content":{"v":"B"}}});
    last["requestState"] = json!(s2);
    let r3 = peer.call("tools/call", last.clone()).await;
    assert_eq!(r3["result"]["content"][0]["text"], "\"A\"+\"B\" state=\"carried\"", "{r3}");
    assert_eq!(effects.load(Ordering::SeqCst), 1, "the side effect after the last question ran once");

    // Tampered, or replayed on another request: refused.
    last["requestState"] = json!(format!("{s2}x"));
    assert_eq!(peer.call("tools/call", last.clone()).await["error"]["code"], -32602);
    let mut other = modern(json!({"name":"ask2","arguments":{"different":true}}));
    other["requestState"] = json!(s2);
    assert_eq!(peer.call("tools/call", other).await["error"]["code"], -32602);
    // A client that cannot answer is never asked: -32021 naming the capability.
    let r = peer.call("tools/call", modern(json!({"name":"ask2"}))).await;
    assert_eq!(r["error"]["code"], -32021);
    assert_eq!(r["error"]["data"]["requiredCapabilities"], json!({"elicitation":{}}));
}

#[tokio::test]
async fn one_handler_api_legacy_requests() {
    let effects = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let server = two_question_server(effects.clone());
    let mut peer = Peer::start(&server);
    peer.initialize("2025-06-18", json!({"elicitation":{}})).await;
    peer.send(json!({"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"ask2"}})).await;
    for answer in ["A", "B"] {
        let req = peer.recv().await;
        assert_eq!(req["method"], "elicitation/create", "{req}");
        peer.send(json!({"jsonrpc":"2.0","id":req["id"],"result":{"action":"accept","content":{"v":answer}}})).await;
    }
    let r = peer.recv().await;
    assert_eq!(r["result"]["content"][0]["text"], "\"A\"+\"B\" state=\"legacy\"", "{r}");
    assert_eq!(effects.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_modern_only_server_refuses_initialize_and_says_what_it_speaks() {
    let server = Server::builder("s", "1").modern_only(true).build();
    let mut peer = Peer::start(&server);
    let r = peer.initialize("2025-06-18", json!({})).await;
    assert_eq!(r["error"]["code"], -32022, "{r}");
    assert_eq!(r["error"]["data"]["supported"], json!(["2026-07-28"]));
    assert_eq!(r["error"]["data"]["requested"], "2025-06-18");
    let d = peer.call("server/discover", modern(json!({}))).await;
    assert_eq!(d["result"]["supportedVersions"], json!(["2026-07-28"]), "{d}");
}

/// A handler's panic (the handler here never returns normally).
fn explode<T>(what: &str) -> mcpwire_server::HandlerResult<T> {
    panic!("{what} exploded")
}

/// A handler that panics fails its own request only: a tool's call is answered with a tool
/// execution error, any other request with `-32603`, and the connection goes on serving, in
/// both eras, whether the panic comes before the handler's first wait (on the connection)
/// or after it (in the request's own task).
#[tokio::test(start_paused = true)]
async fn a_panicking_handler_fails_only_its_own_request() {
    let server = Server::builder("s", "1").build();
    server.add_tool(tool("boom"), |_, _| async { explode("tool") });
    server.add_tool(tool("boom_later"), |_, _| async {
        tokio::time::sleep(Duration::from_millis(10)).await;
        explode("tool after waiting")
    });
    server.add_tool(
        tool("boom_at_once"),
        |_, _| -> std::future::Ready<mcpwire_server::HandlerResult<CallToolResult>> {
            panic!("tool exploded before making its future")
        },
    );
    server.add_tool(tool("fine"), |_, _| async { Ok(CallToolResult::text("fine")) });
    server.add_resource(Resource::new("test://boom", "boom"), |_, _| async { explode("resource") });
    server.add_prompt(Prompt::new("boom", "a prompt", vec![]), |_, _| async { explode("prompt") });
    server.set_completion_handler(|_, _| async { explode("completion") });
    for version in ["2025-06-18", "2026-07-28"] {
        let mut peer = Peer::start(&server);
        let params = |p: Value| if version == "2026-07-28" { modern(p) } else { p };
        if version != "2026-07-28" {
            peer.initialize(version, json!({})).await;
        }
        for name in ["boom", "boom_later", "boom_at_once"] {
            let answer = peer.call("tools/call", params(json!({"name": name}))).await;
            assert_eq!(answer["result"]["isError"], json!(true), "{version} {name}: {answer}");
            let text = answer["result"]["content"][0]["text"].as_str().unwrap_or_default();
            assert!(text.contains(name) && text.contains("panicked"), "{version} {name}: {answer}");
            assert!(!text.contains("exploded"), "{version} {name}: the panic's message is for the log only: {text}");
        }
        let others = [
            ("resources/read", json!({"uri": "test://boom"})),
            ("prompts/get", json!({"name": "boom"})),
            (
                "completion/complete",
                json!({"ref": {"type": "ref/prompt", "name": "boom"}, "argument": {"name": "a", "value": ""}}),
            ),
        ];
        for (method, p) in others {
            let answer = peer.call(method, params(p)).await;
            assert_eq!(answer["error"]["code"], json!(-32603), "{version} {method}: {answer}");
        }
        // The connection (and its session) goes on.
        let answer = peer.call("tools/call", params(json!({"name": "fine"}))).await;
        assert_eq!(answer["result"]["content"][0]["text"], json!("fine"), "{version}: {answer}");
        let answer = peer.call("tools/list", params(json!({}))).await;
        assert_eq!(names(&answer["result"], "tools").len(), 4, "{version}: {answer}");
    }
}

/// A request beyond the in-flight limits (of the session, of the server) is refused at once,
/// and the others are served; a slot freed is a slot for the next.
#[tokio::test(start_paused = true)]
async fn requests_beyond_the_in_flight_limits_are_refused_at_once() {
    let config = mcpwire_server::ServerConfig { max_in_flight: 3, max_in_flight_per_session: 2, ..Default::default() };
    let server = Server::builder("s", "1").config(config).build();
    let gate = Arc::new(tokio::sync::Semaphore::new(0));
    let opens = gate.clone();
    server.add_tool(tool("wait"), move |_, _| {
        let opens = opens.clone();
        async move {
            opens.acquire().await.expect("gate").forget();
            Ok(CallToolResult::text("done"))
        }
    });
    let call = |id: &str| json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":"wait"}});
    let mut a = Peer::start(&server);
    a.initialize("2025-06-18", json!({})).await;
    for id in ["a1", "a2", "a3"] {
        a.send(call(id)).await;
    }
    let refused = a.recv().await;
    assert_eq!((&refused["id"], &refused["error"]["code"]), (&json!("a3"), &json!(-32603)), "{refused}");
    let message = refused["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("too many requests in flight (2 in this session)"), "{message}");
    let mut b = Peer::start(&server);
    b.initialize("2025-06-18", json!({})).await;
    b.send(call("b1")).await;
    b.send(call("b2")).await;
    let refused = b.recv().await;
    assert_eq!(&refused["id"], &json!("b2"), "{refused}");
    let message = refused["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("too many requests in flight (3)"), "{message}");
    gate.add_permits(3);
    let mut answered = [a.recv().await, a.recv().await, b.recv().await];
    answered.sort_by_key(|m| m["id"].as_str().unwrap_or_default().to_owned());
    for (m, id) in answered.iter().zip(["a1", "a2", "b1"]) {
        assert_eq!((&m["id"], &m["result"]["content"][0]["text"]), (&json!(id), &json!("done")), "{m}");
    }
    gate.add_permits(1);
    let answer = b.call("tools/call", json!({"name": "wait"})).await;
    assert_eq!(answer["result"]["content"][0]["text"], json!("done"), "{answer}");
}
