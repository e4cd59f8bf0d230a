//! Shared helpers: a test server, in-memory connections, a legacy-only shim and a scripted
//! fake server.
#![allow(dead_code)]

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use mcpwire_client::{Client, ClientSession};
use mcpwire_protocol::types::{
    CallToolResult, ContentBlock, CreateMessageParams, ElicitParams, GetPromptResult, LoggingLevel, Prompt,
    PromptArgument, PromptMessage, ReadResourceResult, Resource, ResourceContents, ResourceTemplate, Role,
    SamplingContent, SamplingMessage, Tool,
};
use mcpwire_server::{Context, HandlerError, Server};
use mcpwire_transport::{memory, Connection};
use serde_json::{json, Value};

pub const WAIT: Duration = Duration::from_secs(5);

/// A flag that can be waited for: raised by the code under test, awaited by the test.
#[derive(Default)]
pub struct Signal {
    raised: AtomicBool,
}

impl Signal {
    pub fn raise(&self) {
        self.raised.store(true, Ordering::SeqCst);
    }

    pub fn is_raised(&self) -> bool {
        self.raised.load(Ordering::SeqCst)
    }

    /// Waits until the signal is raised, at most `WAIT` (on the paused clock, less than the
    /// `slow` tool's work); panics naming `what` if it is not.
    pub async fn wait(&self, what: impl std::fmt::Display) {
        mcpwire_testkit::eventually_within(WAIT, what, || std::future::ready(self.is_raised().then_some(()))).await;
    }
}

/// Raises a signal when dropped (a handler future that was dropped by cancellation).
pub struct OnDrop(pub Arc<Signal>);

impl Drop for OnDrop {
    fn drop(&mut self) {
        self.0.raise();
    }
}

/// On the paused clock (`start_paused = true`): returns once every task has run as far as it
/// can (the clock moves only when nothing is left to run), so whatever was in flight has
/// arrived.
pub async fn settle() {
    let before = tokio::time::Instant::now();
    tokio::task::yield_now().await;
    assert_eq!(before, tokio::time::Instant::now(), "settle() needs the paused clock (start_paused = true)");
    tokio::time::sleep(Duration::from_millis(1)).await;
}

fn tool(name: &str) -> Tool {
    Tool::new(name, "test tool", json!({"type": "object"}))
}

/// Flags a test can watch.
#[derive(Default, Clone)]
pub struct Probes {
    /// The `slow` tool's future was dropped.
    pub slow_dropped: Arc<Signal>,
    /// The `slow` tool ran to the end.
    pub slow_finished: Arc<AtomicBool>,
}

/// A server with every feature, five tools (pagination at page size 2) among them.
pub fn test_server() -> (Server, Probes) {
    let server = Server::builder("test-server", "1.2.3").instructions("Use the echo tool.").page_size(2).build();
    let probes = Probes::default();
    server.add_tool(
        Tool::new(
            "echo",
            "echoes",
            json!({"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}),
        ),
        |args, _| async move {
            Ok(CallToolResult::text(args.get("text").and_then(Value::as_str).unwrap_or_default().to_owned()))
        },
    );
    server.add_tool(tool("fails"), |_, _| async { Err(HandlerError::tool("it broke")) });
    let (dropped, finished) = (probes.slow_dropped.clone(), probes.slow_finished.clone());
    server.add_tool(tool("slow"), move |_, _| {
        let (dropped, finished) = (dropped.clone(), finished.clone());
        async move {
            let _guard = OnDrop(dropped);
            tokio::time::sleep(Duration::from_secs(30)).await;
            finished.store(true, Ordering::SeqCst);
            Ok(CallToolResult::text("late"))
        }
    });
    server.add_tool(tool("progress"), |_, ctx: Context| async move {
        for step in [1.0, 2.0, 3.0] {
            let _ = ctx.progress(step, Some(3.0), Some("working")).await;
        }
        Ok(CallToolResult::text("done"))
    });
    server.add_tool(tool("log"), |_, ctx: Context| async move {
        ctx.log(LoggingLevel::Debug, "debug message").await;
        ctx.log(LoggingLevel::Warning, "warning message").await;
        Ok(CallToolResult::text("logged"))
    });
    server.add_tool(tool("ask"), |_, ctx: Context| async move {
        let reply = ctx
            .sample(CreateMessageParams {
                messages: vec![SamplingMessage {
                    role: Role::User,
                    content: SamplingContent::Single(ContentBlock::text("what is 2+2?")),
                }],
                max_tokens: 10,
                system_prompt: None,
                model_preferences: None,
                include_context: None,
                temperature: None,
                stop_sequences: None,
                metadata: None,
                tools: None,
                tool_choice: None,
                task: None,
            })
            .await?;
        let text = match reply.content {
            SamplingContent::Single(b) => b.as_text().unwrap_or_default().to_owned(),
            SamplingContent::Multiple(_) => "many".into(),
        };
        Ok(CallToolResult::text(format!("{} said {text}", reply.model)))
    });
    server.add_tool(tool("form"), |_, ctx: Context| async move {
        let answer = ctx
            .elicit(ElicitParams {
                mode: None,
                message: "Your name?".into(),
                requested_schema: Some(
                    serde_json::from_value(json!({"type":"object","properties":{"name":{"type":"string"}}})).unwrap(),
                ),
                url: None,
                elicitation_id: None,
                task: None,
            })
            .await?;
        let name = answer.content.and_then(|c| c.get("name").cloned()).unwrap_or(Value::Null);
        Ok(CallToolResult::text(format!("{}:{name}", answer.action)))
    });
    // Asks twice in sequence: two input rounds in the modern era.
    server.add_tool(tool("interview"), |_, ctx: Context| async move {
        let roots = ctx.list_roots().await?;
        let answer = ctx
            .elicit(ElicitParams {
                mode: None,
                message: "Your name?".into(),
                requested_schema: Some(
                    serde_json::from_value(json!({"type":"object","properties":{"name":{"type":"string"}}})).unwrap(),
                ),
                url: None,
                elicitation_id: None,
                task: None,
            })
            .await?;
        let name = answer.content.and_then(|c| c.get("name").cloned()).unwrap_or(Value::Null);
        Ok(CallToolResult::text(format!("{} roots, name {name}", roots.roots.len())))
    });
    server.add_tool(tool("roots"), |_, ctx: Context| async move {
        let roots = ctx.list_roots().await?;
        Ok(CallToolResult::text(roots.roots.iter().map(|r| r.uri.as_str()).collect::<Vec<_>>().join(",")))
    });

    for (uri, name) in [("test://a", "a"), ("test://b", "b"), ("test://c", "c")] {
        server.add_resource(Resource::new(uri, name), |uri, _| async move {
            Ok(ReadResourceResult {
                contents: vec![ResourceContents::text(&uri, Some("text/plain"), "static")],
                meta: None,
            })
        });
    }
    for (template, name) in [("test://items/{id}", "items"), ("test://users/{user}", "users"), ("test://x/{y}", "x")] {
        let t = ResourceTemplate {
            uri_template: template.into(),
            name: name.into(),
            title: None,
            description: None,
            mime_type: None,
            icons: None,
            annotations: None,
            meta: None,
        };
        server
            .add_resource_template(t, |uri, vars, _| async move {
                let text = format!("vars={}", json!(vars));
                Ok(ReadResourceResult { contents: vec![ResourceContents::text(uri, None, text)], meta: None })
            })
            .unwrap();
    }
    for name in ["p1", "p2"] {
        server.add_prompt(Prompt::new(name, "plain", vec![]), |_, _| async {
            Ok(GetPromptResult { description: None, messages: vec![PromptMessage::user_text("plain")], meta: None })
        });
    }
    server.add_prompt_with_completions(
        Prompt::new("greet", "greets", vec![PromptArgument::new("name", "who", true)]),
        HashMap::from([("name".to_owned(), vec!["alice".to_owned(), "albert".to_owned(), "bob".to_owned()])]),
        |args, _| async move {
            let name = args.get("name").cloned().unwrap_or_default();
            Ok(GetPromptResult {
                description: Some("a greeting".into()),
                messages: vec![PromptMessage::user_text(format!("Hello, {name}!"))],
                meta: None,
            })
        },
    );
    (server, probes)
}

/// Serves `server` on one end of an in-memory pair; returns the other end.
pub fn serve(server: &Server) -> Connection {
    let (client_end, server_end) = memory::pair();
    let server = server.clone();
    tokio::spawn(async move { server.serve(server_end).await });
    client_end
}

/// Connects `client` to `server` in memory.
pub async fn connect(client: &Client, server: &Server) -> ClientSession {
    tokio::time::timeout(WAIT, client.connect(serve(server))).await.expect("connect timed out").expect("connect")
}

/// How a legacy-only server answers `server/discover` before `initialize`.
#[derive(Debug, Clone, Copy)]
pub enum LegacyProbeAnswer {
    /// `-32601` Method not found.
    MethodNotFound,
    /// `-32602` Invalid params.
    InvalidParams,
    /// `-32600` with an unrelated message.
    NotInitialized,
    /// Nothing at all.
    Silent,
}

/// `server` behind a shim that makes it look like a legacy-only server: `server/discover`
/// never reaches it and is answered as `answer` says.
pub fn legacy_only(server: &Server, answer: LegacyProbeAnswer) -> Connection {
    let (client_end, mut shim_front) = memory::pair();
    let mut shim_back = serve(server);
    tokio::spawn(async move {
        loop {
            tokio::select! {
                frame = shim_front.incoming.recv() => {
                    let Some(Ok(frame)) = frame else { break };
                    let msg: Value = serde_json::from_str(&frame.text).unwrap_or(Value::Null);
                    if msg["method"] == "server/discover" {
                        let error = match answer {
                            LegacyProbeAnswer::MethodNotFound => json!({"code": -32601, "message": "Method not found"}),
                            LegacyProbeAnswer::InvalidParams => json!({"code": -32602, "message": "Invalid params"}),
                            LegacyProbeAnswer::NotInitialized => json!({"code": -32600, "message": "Server not initialized"}),
                            LegacyProbeAnswer::Silent => continue,
                        };
                        let reply = json!({"jsonrpc": "2.0", "id": msg["id"], "error": error});
                        if shim_front.outgoing.send(mcpwire_protocol::frame::Outbound::text(reply.to_string())).await.is_err() { break }
                    } else if shim_back.outgoing.send(mcpwire_protocol::frame::Outbound::text(frame.text)).await.is_err() {
                        break;
                    }
                }
                frame = shim_back.incoming.recv() => {
                    let Some(Ok(frame)) = frame else { break };
                    if shim_front.outgoing.send(mcpwire_protocol::frame::Outbound::text(frame.text)).await.is_err() { break }
                }
            }
        }
    });
    client_end
}

/// The far end of a connection, driven by a test script.
pub struct Fake {
    pub conn: Connection,
}

impl Fake {
    /// A client end and a fake server end.
    pub fn pair() -> (Connection, Fake) {
        let (client, server) = memory::pair();
        (client, Fake { conn: server })
    }

    pub async fn send(&self, v: Value) {
        self.conn.outgoing.send(mcpwire_protocol::frame::Outbound::text(v.to_string())).await.expect("client gone");
    }

    /// The next message from the client, raw text and parsed.
    pub async fn recv_raw(&mut self) -> (String, Value) {
        let frame = tokio::time::timeout(WAIT, self.conn.incoming.recv())
            .await
            .expect("timed out waiting for the client")
            .expect("client closed")
            .expect("bad frame");
        let v = serde_json::from_str(&frame.text).expect("client sent invalid JSON");
        (frame.text, v)
    }

    pub async fn recv(&mut self) -> Value {
        self.recv_raw().await.1
    }

    /// The next message, which must be a request for `method`.
    pub async fn expect(&mut self, method: &str) -> Value {
        let msg = self.recv().await;
        assert_eq!(msg["method"], method, "expected {method}, got {msg}");
        msg
    }

    /// Nothing arrives for `d`.
    pub async fn expect_silence(&mut self, d: Duration) {
        if let Ok(Some(frame)) = tokio::time::timeout(d, self.conn.incoming.recv()).await {
            panic!("expected nothing from the client, got {frame:?}");
        }
    }

    pub async fn reply(&self, request: &Value, result: Value) {
        self.send(json!({"jsonrpc": "2.0", "id": request["id"], "result": result})).await;
    }

    pub async fn reply_error(&self, request: &Value, error: Value) {
        self.send(json!({"jsonrpc": "2.0", "id": request["id"], "error": error})).await;
    }

    /// Answers the client's `server/discover` probe as a 2026-07-28 server.
    pub async fn accept_modern(&mut self) {
        let probe = self.expect("server/discover").await;
        assert_eq!(probe["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"], "2026-07-28");
        self.reply(&probe, discover_result()).await;
    }

    /// Answers the probe as a legacy server, then `initialize` with `version`.
    pub async fn accept_legacy(&mut self, version: &str) -> Value {
        let probe = self.expect("server/discover").await;
        self.reply_error(&probe, json!({"code": -32601, "message": "Method not found"})).await;
        let init = self.expect("initialize").await;
        self.reply(
            &init,
            json!({"protocolVersion": version, "capabilities": {"tools": {}}, "serverInfo": {"name": "fake", "version": "0"}}),
        )
        .await;
        self.expect("notifications/initialized").await;
        init
    }
}

pub fn discover_result() -> Value {
    json!({
        "supportedVersions": ["2026-07-28"],
        "capabilities": {"tools": {}, "prompts": {}, "resources": {}},
        "instructions": "fake instructions",
        "resultType": "complete",
        "ttlMs": 0,
        "cacheScope": "private",
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "fake", "version": "0"}}
    })
}
