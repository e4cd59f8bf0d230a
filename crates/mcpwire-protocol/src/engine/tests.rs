//! A client engine and a server engine driven against each other, step by step, on simulated
//! time (quinn-proto's `Pair` is the model): every frame goes through the codec both ways, and
//! nothing sleeps.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::*;
use crate::codec;
use crate::error::{INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, UNSUPPORTED_PROTOCOL_VERSION};
use crate::frame::{FrameKind, Outbound};
use crate::message::{to_raw, ClientRequest, ClientResult, ServerNotification, ServerRequest, ServerResult};
use crate::types::{
    CallToolParams, CallToolResult, ClientCapabilities, ElicitParams, ElicitResult, Implementation, ListToolsResult,
    ListenParams, LoggingLevel, PaginatedParams, ServerCapabilities, SubscriptionFilter, Tool,
};
use crate::{Method, ProtocolVersion, RequestId};

/// What the test server offers.
struct TestOffer {
    tools: bool,
}

impl Offer for TestOffer {
    fn offers(&self, feature: Feature) -> bool {
        match feature {
            Feature::Tools => self.tools,
            Feature::Logging => true,
            _ => false,
        }
    }

    fn capabilities(&self) -> ServerCapabilities {
        ServerCapabilities {
            tools: self.tools.then_some(crate::types::ListChangedCapability { list_changed: Some(true) }),
            logging: Some(Default::default()),
            ..Default::default()
        }
    }
}

type Client = ClientPeer<&'static str, ()>;
type Server = ServerPeer<&'static str, ()>;
type ClientEv = Event<super::Client, &'static str, ()>;
type ServerEv = Event<super::Server, &'static str, ()>;

/// Two engines wired together, with a simulated clock.
struct Pair {
    client: Client,
    server: Server,
    offer: TestOffer,
    now: Now,
    client_events: Vec<ClientEv>,
    server_events: Vec<ServerEv>,
    /// Every frame each side sent, in order.
    client_sent: Vec<Transmit>,
    server_sent: Vec<Transmit>,
    /// Frames in flight, not yet delivered (so that tests can make them cross).
    to_server: Vec<String>,
    to_client: Vec<String>,
}

fn caps() -> ClientCapabilities {
    ClientCapabilities { elicitation: Some(Default::default()), roots: Some(Default::default()), ..Default::default() }
}

fn client_settings(pinned: Option<ProtocolVersion>) -> ClientSettings {
    ClientSettings {
        info: Implementation::new("test-client", "1"),
        capabilities: ProtocolVersion::ALL.iter().map(|v| (*v, caps())).collect(),
        pinned,
        accept_negotiated: false,
        probe_timeout: Duration::from_secs(3),
        request_timeout: Duration::from_secs(60),
        log_level: None,
        max_input_rounds: 8,
    }
}

fn server_settings() -> ServerSettings {
    ServerSettings::new(Implementation::new("test-server", "1"))
}

impl Pair {
    fn new(client: ClientSettings, server: ServerSettings) -> Self {
        Self {
            client: ClientPeer::new(Arc::new(client)),
            server: ServerPeer::new(Arc::new(server)),
            offer: TestOffer { tools: true },
            now: Now::new(Instant::now(), 1_000_000),
            client_events: Vec::new(),
            server_events: Vec::new(),
            client_sent: Vec::new(),
            server_sent: Vec::new(),
            to_server: Vec::new(),
            to_client: Vec::new(),
        }
    }

    /// Collects what each side has to send and to tell, without delivering anything.
    fn collect(&mut self) {
        while let Some(t) = self.client.poll_transmit() {
            if let Outbound::Frame(f) = &t.out {
                self.to_server.push(f.text.clone());
            }
            self.client_sent.push(t);
        }
        while let Some(t) = self.server.poll_transmit() {
            if let Outbound::Frame(f) = &t.out {
                self.to_client.push(f.text.clone());
            }
            self.server_sent.push(t);
        }
        while let Some(e) = self.client.poll_event() {
            self.client_events.push(e);
        }
        while let Some(e) = self.server.poll_event() {
            self.server_events.push(e);
        }
    }

    /// Delivers every frame in flight, both ways, until the line is quiet.
    fn drive(&mut self) {
        loop {
            self.collect();
            if self.to_server.is_empty() && self.to_client.is_empty() {
                return;
            }
            for text in std::mem::take(&mut self.to_server) {
                match codec::read_from_client(&text) {
                    Ok(frame) => self.server.handle(frame, self.now, &self.offer),
                    Err(e) => self.server.handle_unreadable(e.id(), e.error()),
                }
            }
            for text in std::mem::take(&mut self.to_client) {
                let frame = codec::read_from_server(&text).expect("the server writes readable frames");
                self.client.handle(frame, self.now);
            }
        }
    }

    /// Lets `d` pass on the simulated clock, then wakes both engines.
    fn advance(&mut self, d: Duration) {
        self.now = self.now.after(d);
        self.client.handle_timeout(self.now);
        self.server.handle_timeout(self.now);
        self.collect();
    }

    fn connect(&mut self) -> Negotiated {
        self.client.connect(self.now);
        self.drive();
        self.connected()
    }

    fn connected(&mut self) -> Negotiated {
        let found = self.client_events.iter().find_map(|e| match e {
            Event::Role(ClientNews::Connected(n)) => Some(n.as_ref().clone()),
            Event::Role(ClientNews::ConnectFailed(f)) => panic!("connect failed: {f:?}"),
            _ => None,
        });
        found.expect("connected")
    }

    fn call(&mut self, request: ClientRequest, options: RequestOptions, waiter: &'static str) -> RequestId {
        self.client.send_request(&request, options, waiter, self.now).expect("sent")
    }

    fn take_server_requests(&mut self) -> Vec<ServedRequest> {
        let events = std::mem::take(&mut self.server_events);
        let mut served = Vec::new();
        for e in events {
            match e {
                Event::Request { request, .. } => served.push(*request),
                other => self.server_events.push(other),
            }
        }
        served
    }

    fn take_client_requests(&mut self) -> Vec<crate::message::Request<ServerRequest>> {
        let events = std::mem::take(&mut self.client_events);
        let mut served = Vec::new();
        for e in events {
            match e {
                Event::Request { request, .. } => served.push(*request),
                other => self.client_events.push(other),
            }
        }
        served
    }

    /// The answer to the request of `waiter`, as the engine read it.
    fn client_reply(&self, waiter: &str) -> Option<&Result<Reply, Failure>> {
        self.client_events.iter().find_map(|e| match e {
            Event::Response { waiter: w, outcome, .. } if *w == waiter => Some(outcome),
            _ => None,
        })
    }

    /// The answer to the request of `waiter`, a complete result read as JSON.
    fn client_response(&self, waiter: &str) -> Option<Result<Value, Failure>> {
        self.client_reply(waiter).map(|outcome| match outcome {
            Ok(Reply::Complete(raw)) => Ok(serde_json::from_str(raw.get()).expect("a result is JSON")),
            Ok(other) => panic!("{waiter}: not a complete result: {other:?}"),
            Err(failure) => Err(failure.clone()),
        })
    }

    /// The notifications of our listen stream `id`, in order.
    fn listened(&self, id: &RequestId) -> Vec<&ServerNotification> {
        self.client_events
            .iter()
            .filter_map(|e| match e {
                Event::Role(ClientNews::Listened { id: i, notification }) if i == id => Some(notification),
                _ => None,
            })
            .collect()
    }

    /// Answers our request `id` with `result` as written here, instead of the server engine
    /// (the frame it was sent in is dropped).
    fn answer_with(&mut self, id: &RequestId, result: Value) {
        self.collect();
        self.to_server.clear();
        self.to_client.push(json!({"jsonrpc": "2.0", "id": id.to_value(), "result": result}).to_string());
        self.drive();
    }

    fn server_frames_of(&self, kind: impl Fn(&FrameKind) -> bool) -> Vec<String> {
        self.server_sent
            .iter()
            .filter_map(|t| match &t.out {
                Outbound::Frame(f) if kind(&f.kind) => Some(f.text.clone()),
                _ => None,
            })
            .collect()
    }
}

fn call_tool(name: &str) -> ClientRequest {
    ClientRequest::CallTool(CallToolParams { name: name.into(), arguments: None, task: None })
}

fn elicit() -> ServerRequest {
    ServerRequest::Elicit(ElicitParams {
        mode: None,
        message: "name?".into(),
        requested_schema: None,
        url: None,
        elicitation_id: None,
        task: None,
    })
}

fn tool(name: &str) -> Tool {
    let mut t = Tool::new(name, "d", json!({"type": "object"}));
    t.title = Some("A title".into());
    t
}

#[test]
fn every_legacy_revision_negotiates_and_serves_a_request_in_its_shape() {
    for rev in ProtocolVersion::LEGACY {
        let mut pair = Pair::new(client_settings(Some(rev)), server_settings());
        let negotiated = pair.connect();
        assert_eq!((negotiated.era, negotiated.version), (crate::Era::Legacy, rev));
        assert!(negotiated.capabilities.tools.is_some());
        assert!(pair
            .server_events
            .iter()
            .any(|e| matches!(e, Event::Role(ServerNews::SessionBegan(s)) if s.revision == rev)));
        assert_eq!(pair.server.session().map(|s| s.revision), Some(rev));

        pair.call(ClientRequest::ListTools(PaginatedParams::default()), RequestOptions::default(), "list");
        pair.drive();
        let served = pair.take_server_requests();
        assert_eq!(served.len(), 1, "{rev}");
        assert_eq!(served[0].scope.revision, rev);
        assert!(served[0].round.is_none(), "no rounds in the legacy era");
        let result = ServerResult::ListTools(ListToolsResult { tools: vec![tool("t")], next_cursor: None });
        assert!(pair.server.respond(&served[0].id, Ok(result)));
        pair.drive();
        let Some(Ok(value)) = pair.client_response("list") else { panic!("{rev}: no answer") };
        // The codec wrote it for the revision: titles only from 2025-06-18, no resultType.
        assert_eq!(value["tools"][0].get("title").is_some(), rev >= ProtocolVersion::V2025_06_18, "{rev}");
        assert!(value.get("resultType").is_none());
    }
}

#[test]
fn a_modern_server_is_detected_by_the_probe_and_every_request_carries_its_meta() {
    let mut pair = Pair::new(client_settings(None), server_settings());
    let negotiated = pair.connect();
    assert_eq!((negotiated.era, negotiated.version), (crate::Era::Modern, ProtocolVersion::LATEST));
    assert_eq!(negotiated.server_info.map(|i| i.name), Some("test-server".to_owned()));
    assert!(pair.server.session().is_none(), "no session in the modern era");

    pair.call(call_tool("echo"), RequestOptions::default(), "call");
    pair.drive();
    let served = pair.take_server_requests();
    assert_eq!(served[0].scope.revision, ProtocolVersion::LATEST);
    assert!(served[0].scope.capabilities.elicitation.is_some(), "capabilities came with the request");
    assert!(served[0].round.is_some(), "a modern tools/call is a round");
    pair.server.respond(&served[0].id, Ok(ServerResult::CallTool(CallToolResult::text("hi"))));
    pair.drive();
    let Some(Ok(value)) = pair.client_response("call") else { panic!() };
    assert_eq!(value["resultType"], "complete");
    assert_eq!(value["_meta"][crate::types::meta_keys::SERVER_INFO]["name"], "test-server");
}

#[test]
fn a_legacy_server_is_found_after_an_error_or_after_the_probe_timeout() {
    // A legacy server answers the probe with an error: initialize follows at once.
    let mut pair = Pair::new(client_settings(None), server_settings());
    pair.client.connect(pair.now);
    pair.collect();
    let probe = pair.to_server.remove(0);
    assert!(probe.contains("server/discover"));
    let id = serde_json::from_str::<Value>(&probe).unwrap()["id"].clone();
    let refusal = json!({"jsonrpc": "2.0", "id": id, "error": {"code": METHOD_NOT_FOUND, "message": "no"}});
    pair.to_client.push(refusal.to_string());
    pair.drive();
    assert_eq!(pair.connected().version, ProtocolVersion::LATEST_LEGACY);

    // One that never answers: initialize after the probe timeout, not before.
    let mut pair = Pair::new(client_settings(None), server_settings());
    pair.client.connect(pair.now);
    pair.collect();
    pair.to_server.clear();
    assert_eq!(pair.client.poll_timeout(), Some(pair.now.instant + Duration::from_secs(3)));
    pair.advance(Duration::from_millis(2_999));
    assert!(pair.to_server.is_empty(), "still waiting for the probe");
    pair.advance(Duration::from_millis(1));
    assert!(pair.to_server[0].contains("\"initialize\""), "{:?}", pair.to_server);
    assert!(
        !pair.to_server.iter().any(|f| f.contains("notifications/cancelled")),
        "the probe is not cancelled: a legacy server may not know the method"
    );
    pair.drive();
    assert_eq!(pair.connected().era, crate::Era::Legacy);
}

#[test]
fn a_modern_only_server_refuses_initialize_naming_what_it_speaks() {
    let mut settings = server_settings();
    settings.modern_only = true;
    let mut pair = Pair::new(client_settings(Some(ProtocolVersion::V2025_06_18)), settings);
    pair.client.connect(pair.now);
    pair.drive();
    let failure = pair.client_events.iter().find_map(|e| match e {
        Event::Role(ClientNews::ConnectFailed(ConnectError::Refused { error, .. })) => Some(error.clone()),
        _ => None,
    });
    let error = failure.expect("refused");
    assert_eq!(error.code, UNSUPPORTED_PROTOCOL_VERSION);
    assert_eq!(error.data.unwrap()["supported"], json!(["2026-07-28"]));
}

#[test]
fn a_question_to_the_client_times_out_on_the_simulated_clock_and_the_client_is_told() {
    let mut pair = Pair::new(client_settings(Some(ProtocolVersion::V2025_11_25)), server_settings());
    pair.connect();
    let options = SendOptions { timeout: Some(Duration::from_secs(10)), cancel_on_timeout: true, ..Default::default() };
    let id = pair.server.request(&elicit(), None, options, "ask", pair.now).expect("the client declared elicitation");
    pair.drive();
    let asked = pair.take_client_requests();
    assert_eq!(asked[0].id, id);
    assert_eq!(pair.server.poll_timeout(), Some(pair.now.instant + Duration::from_secs(10)));
    pair.advance(Duration::from_secs(10));
    assert!(pair
        .server_events
        .iter()
        .any(|e| matches!(e, Event::Response { waiter: "ask", outcome: Err(Failure::TimedOut), .. })));
    pair.drive();
    assert!(
        pair.client_events.iter().any(|e| matches!(e, Event::Cancelled { id: c, .. } if *c == id)),
        "the client hears that the question is withdrawn"
    );
    // The client's late answer is not sent: it no longer serves the request.
    let late = ClientResult::Elicit(ElicitResult { action: "decline".into(), content: None, meta: None });
    assert!(!pair.client.respond(&id, Ok(late)));
}

#[test]
fn a_cancelled_request_is_not_answered_and_a_crossing_answer_is_ignored() {
    let mut pair = Pair::new(client_settings(Some(ProtocolVersion::V2025_06_18)), server_settings());
    pair.connect();

    // The cancel arrives first: the server application hears of it and its answer is dropped.
    let id = pair.call(call_tool("slow"), RequestOptions::default(), "slow");
    pair.drive();
    let served = pair.take_server_requests();
    assert_eq!(pair.client.cancel(&id, "changed my mind"), Some("slow"));
    pair.drive();
    assert!(pair
        .server_events
        .iter()
        .any(|e| matches!(e, Event::Cancelled { id: c, reason: Some(r), .. } if *c == id && r == "changed my mind")));
    let before = pair.server_sent.len();
    assert!(!pair.server.respond(&served[0].id, Ok(ServerResult::CallTool(CallToolResult::text("late")))));
    pair.collect();
    assert_eq!(pair.server_sent.len(), before, "nothing is sent for a cancelled request");

    // They cross: the server answers while the client's cancel is on its way.
    let id = pair.call(call_tool("quick"), RequestOptions::default(), "quick");
    pair.drive();
    let served = pair.take_server_requests();
    assert!(pair.server.respond(&served[0].id, Ok(ServerResult::CallTool(CallToolResult::text("done")))));
    pair.client.cancel(&id, "too late");
    pair.collect();
    assert_eq!(pair.to_client.len(), 1, "the answer is on its way");
    assert_eq!(pair.to_server.len(), 1, "and so is the cancel");
    pair.drive();
    assert!(pair.client_response("quick").is_none(), "the answer to a cancelled request is ignored");
    assert!(
        !pair.server_events.iter().any(|e| matches!(e, Event::Cancelled { id: c, .. } if *c == id)),
        "a cancel for an answered request is ignored"
    );
}

#[test]
fn progress_increases_arrives_before_the_answer_and_stops_with_it() {
    let mut pair = Pair::new(client_settings(Some(ProtocolVersion::V2025_03_26)), server_settings());
    pair.connect();
    let options = RequestOptions { progress: true, ..Default::default() };
    let id = pair.call(call_tool("long"), options, "long");
    pair.drive();
    let served = pair.take_server_requests();
    let sid = served[0].id.clone();
    assert!(served[0].meta.progress_token.is_some());
    pair.server.progress(&sid, 1.0, Some(3.0), Some("one".into()), None).unwrap();
    pair.server.progress(&sid, 2.0, Some(3.0), None, None).unwrap();
    assert!(matches!(
        pair.server.progress(&sid, 2.0, None, None, None),
        Err(super::progress::ProgressError::NotIncreasing { .. })
    ));
    pair.server.respond(&sid, Ok(ServerResult::CallTool(CallToolResult::text("ok"))));
    assert!(matches!(pair.server.progress(&sid, 3.0, None, None, None), Err(super::progress::ProgressError::Finished)));
    pair.drive();
    let order: Vec<String> = pair
        .client_events
        .iter()
        .filter_map(|e| match e {
            Event::Progress { id: p, params } if *p == id => Some(format!("progress {}", params.progress)),
            Event::Response { waiter: "long", .. } => Some("answer".into()),
            _ => None,
        })
        .collect();
    assert_eq!(order, ["progress 1", "progress 2", "answer"]);

    // A request that did not ask for progress gets none.
    pair.call(call_tool("quiet"), RequestOptions::default(), "quiet");
    pair.drive();
    let served = pair.take_server_requests();
    assert!(matches!(
        pair.server.progress(&served[0].id, 1.0, None, None, None),
        Err(super::progress::ProgressError::NotRequested)
    ));
}

#[test]
fn an_input_round_asks_then_the_retry_brings_the_answer_and_tampered_state_is_refused() {
    let mut pair = Pair::new(client_settings(None), server_settings());
    pair.connect();
    let request = call_tool("greet");
    pair.call(request.clone(), RequestOptions::default(), "round-1");
    pair.drive();
    let mut served = pair.take_server_requests();
    let first = served.remove(0);
    let mut round = first.round.expect("a round");
    assert_eq!(round.answer("name", &elicit()), None, "nothing answered yet");
    pair.server.respond_input_required(&first.id, &first.request, &round, pair.now);
    pair.drive();
    // The engine read the answer's kind and its question.
    let Some(Ok(Reply::InputRequired(asked))) = pair.client_reply("round-1") else { panic!() };
    let [(key, Ok(ServerRequest::Elicit(question)))] = asked.questions.as_slice() else { panic!("{asked:?}") };
    assert_eq!((key.as_str(), question.message.as_str()), ("name", "name?"));
    assert_eq!(asked.resume.retries(), 0);
    let resume = asked.resume.clone();
    let state = json!(resume.request_state().expect("a sealed state"));

    // The retry: the engine sends the same request again, with the answer and the state.
    let accepted = ElicitResult {
        action: "accept".into(),
        content: Some(serde_json::from_value(json!({"n": "Ada"})).unwrap()),
        meta: None,
    };
    let answers = [("name".to_owned(), ClientResult::Elicit(accepted))];
    let retry_id = pair
        .client
        .retry(&request, &resume, &answers, RequestOptions::default(), "round-2", pair.now)
        .expect("retried");
    assert_ne!(Some(&retry_id), Some(&first.id), "a retry is a new request");
    pair.drive();
    let second = pair.take_server_requests().remove(0);
    let mut round = second.round.expect("a round");
    assert_eq!(round.answer("name", &elicit()).unwrap()["content"]["n"], "Ada");
    pair.server.respond(&second.id, Ok(ServerResult::CallTool(CallToolResult::text("hello Ada"))));

    pair.drive();
    let Some(Ok(value)) = pair.client_response("round-2") else { panic!() };
    assert_eq!(value["content"][0]["text"], "hello Ada");
    let answer = json!({"name": {"action": "accept", "content": {"n": "Ada"}}});

    // A state altered by the client, or used for another request, is refused by the engine.
    let mut tampered = state.as_str().unwrap().to_owned();
    tampered.insert(3, 'x');
    let bad =
        crate::message::RoundInput { input_responses: Some(to_raw(&answer)), request_state: Some(to_raw(&tampered)) };
    pair.call(request.clone(), RequestOptions { round: bad, ..Default::default() }, "tampered");
    let other =
        crate::message::RoundInput { input_responses: Some(to_raw(&answer)), request_state: Some(to_raw(&state)) };
    pair.call(call_tool("other"), RequestOptions { round: other, ..Default::default() }, "other");
    pair.drive();
    // And one past its expiry (the server's wall clock is the one passed in).
    pair.advance(Duration::from_secs(601));
    let expired =
        crate::message::RoundInput { input_responses: Some(to_raw(&answer)), request_state: Some(to_raw(&state)) };
    pair.call(request, RequestOptions { round: expired, ..Default::default() }, "expired");
    pair.drive();
    assert!(pair.take_server_requests().is_empty(), "none of them reaches the application");
    for waiter in ["tampered", "other", "expired"] {
        let Some(Err(Failure::Error(e))) = pair.client_response(waiter) else { panic!("{waiter}") };
        assert_eq!(e.code, INVALID_PARAMS, "{waiter}");
    }
}

#[test]
fn the_engine_answers_ping_level_and_listen_itself_and_gates_by_revision_and_offer() {
    let mut pair = Pair::new(client_settings(Some(ProtocolVersion::V2025_06_18)), server_settings());
    pair.connect();
    pair.call(ClientRequest::Ping, RequestOptions::default(), "ping");
    // Listen is no method of a legacy revision: the client's engine does not send it, and the
    // server's refuses it when it comes anyway (sent by name); tools/list is gated by what is
    // offered.
    let listen = ClientRequest::Listen(ListenParams::default());
    let refused = pair.client.send_request(&listen, RequestOptions::default(), "listen", pair.now);
    assert_eq!(refused, Err(NotSent::Unsupported { method: Method::Listen, version: ProtocolVersion::V2025_06_18 }));
    let sent = pair.client.send_custom(
        Method::Listen.as_str(),
        Some(json!({ "notifications": {} })),
        RequestOptions::default(),
        "listen",
        pair.now,
    );
    sent.expect("a method sent by name is the application's choice");
    pair.offer.tools = false;
    pair.call(ClientRequest::ListTools(PaginatedParams::default()), RequestOptions::default(), "tools");
    pair.drive();
    assert!(pair.take_server_requests().is_empty());
    assert!(matches!(pair.client_response("ping"), Some(Ok(v)) if v == json!({})));
    for waiter in ["listen", "tools"] {
        let Some(Err(Failure::Error(e))) = pair.client_response(waiter) else { panic!("{waiter}") };
        assert_eq!(e.code, METHOD_NOT_FOUND, "{waiter}");
    }

    // Log messages pass the session's threshold, set by logging/setLevel.
    pair.call(
        ClientRequest::SetLevel(crate::types::SetLevelParams { level: LoggingLevel::Warning }),
        RequestOptions::default(),
        "level",
    );
    pair.drive();
    assert!(!pair.server.log(None, LoggingLevel::Info, None, json!("quiet"), None));
    assert!(pair.server.log(None, LoggingLevel::Error, None, json!("loud"), None));
}

#[test]
fn the_client_engine_sends_only_the_requests_its_revision_has() {
    use crate::types::{ResourceParams, TaskIdParams};
    let task = || TaskIdParams { task_id: "t".into() };
    let subscribe = || ClientRequest::Subscribe(ResourceParams { uri: "file:///a".into() });
    for (version, refused, sent) in [
        (
            ProtocolVersion::V2026_07_28,
            vec![ClientRequest::Ping, subscribe(), ClientRequest::TaskResult(task())],
            vec![ClientRequest::GetTask(task()), ClientRequest::Discover],
        ),
        (
            ProtocolVersion::V2025_06_18,
            vec![ClientRequest::Discover, ClientRequest::GetTask(task())],
            vec![ClientRequest::Ping, subscribe()],
        ),
        (ProtocolVersion::V2025_11_25, vec![ClientRequest::Discover], vec![ClientRequest::TaskResult(task())]),
    ] {
        let mut pair = Pair::new(client_settings(Some(version)), server_settings());
        pair.connect();
        pair.collect();
        let before = pair.client_sent.len();
        for request in refused {
            let outcome = pair.client.send_request(&request, RequestOptions::default(), "no", pair.now);
            assert_eq!(outcome, Err(NotSent::Unsupported { method: request.method(), version }), "{version}");
        }
        pair.collect();
        assert_eq!(pair.client_sent.len(), before, "{version}: nothing refused was written");
        let count = sent.len();
        for request in sent {
            pair.client.send_request(&request, RequestOptions::default(), "yes", pair.now).expect("sent");
        }
        assert_eq!(pair.client.waiting(), count, "{version}");
    }
}

#[test]
fn a_listen_stream_is_acknowledged_carries_changes_and_ends_with_its_result() {
    let mut pair = Pair::new(client_settings(None), server_settings());
    pair.connect();
    let filter =
        SubscriptionFilter { tools_list_changed: Some(true), prompts_list_changed: Some(true), ..Default::default() };
    let id =
        pair.call(ClientRequest::Listen(ListenParams { notifications: filter }), RequestOptions::default(), "listen");
    pair.drive();
    assert!(pair.server.is_listening());
    let acks = pair.server_frames_of(|k| matches!(k, FrameKind::Notification { .. }));
    let ack: Value = serde_json::from_str(&acks[0]).unwrap();
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    // Prompts are not offered: not honoured.
    assert_eq!(ack["params"]["notifications"], json!({"toolsListChanged": true}));
    pair.server.announce(&Change::Tools, &pair.offer);
    pair.server.announce(&Change::Prompts, &pair.offer);
    pair.drive();
    let tagged = pair.server_sent.iter().filter(|t| t.related.as_ref() == Some(&id)).count();
    assert_eq!(tagged, 2, "the acknowledgement and one change, both on the stream's request");
    pair.server.close();
    pair.drive();
    let Some(Ok(end)) = pair.client_response("listen") else { panic!() };
    assert_eq!(end["_meta"][crate::types::meta_keys::SUBSCRIPTION_ID], json!(id.to_value()));
}

#[test]
fn a_batch_is_answered_as_one_array_once_each_request_is() {
    let mut pair = Pair::new(client_settings(Some(ProtocolVersion::V2025_03_26)), server_settings());
    pair.connect();
    // Answered at once or not, every element's answer is in the one array.
    pair.server.handle(
        codec::read_from_client(r#"[{"jsonrpc":"2.0","id":1,"method":"ping"},42]"#).unwrap(),
        pair.now,
        &pair.offer,
    );
    pair.collect();
    let both: Vec<Value> = serde_json::from_str(&pair.server_frames_of(|k| matches!(k, FrameKind::Batch))[0]).unwrap();
    assert_eq!(both.len(), 2, "{both:?}");
    pair.server_sent.clear();
    let batch = r#"[{"jsonrpc":"2.0","id":"a","method":"ping"},{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"t"}},
        {"jsonrpc":"2.0","id":"c","method":"initialize","params":{}},5]"#;
    pair.server.handle(codec::read_from_client(batch).unwrap(), pair.now, &pair.offer);
    pair.collect();
    assert!(pair.server_frames_of(|k| matches!(k, FrameKind::Batch)).is_empty(), "b is not answered yet");
    let served = pair.take_server_requests();
    pair.server.respond(&served[0].id, Ok(ServerResult::CallTool(CallToolResult::text("b"))));
    pair.collect();
    let batches = pair.server_frames_of(|k| matches!(k, FrameKind::Batch));
    let answers: Vec<Value> = serde_json::from_str(&batches[0]).unwrap();
    assert_eq!(answers.len(), 4);
    let codes: Vec<Option<i64>> = answers.iter().map(|a| a["error"]["code"].as_i64()).collect();
    assert_eq!(codes, [None, Some(INVALID_REQUEST), Some(INVALID_REQUEST), None]);

    // Outside 2025-03-26 a batch is refused whole.
    let mut pair = Pair::new(client_settings(Some(ProtocolVersion::V2025_06_18)), server_settings());
    pair.connect();
    pair.server.handle(
        codec::read_from_client(r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#).unwrap(),
        pair.now,
        &pair.offer,
    );
    pair.collect();
    let refused: Value = serde_json::from_str(pair.to_client.last().unwrap()).unwrap();
    assert_eq!((refused["id"].clone(), refused["error"]["code"].clone()), (Value::Null, json!(INVALID_REQUEST)));
}

#[test]
fn modern_requests_are_negotiated_one_by_one() {
    let mut pair = Pair::new(client_settings(None), server_settings());
    let send = |pair: &mut Pair, text: &str| {
        pair.server.handle(codec::read_from_client(text).unwrap(), pair.now, &pair.offer);
        pair.collect();
        serde_json::from_str::<Value>(&pair.to_client.pop().unwrap()).unwrap()
    };
    let answer = send(&mut pair, r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
    assert_eq!(answer["error"]["code"], INVALID_PARAMS, "no _meta and no initialize: {answer}");
    let answer = send(
        &mut pair,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
    );
    assert_eq!(answer["error"]["code"], UNSUPPORTED_PROTOCOL_VERSION);
    assert_eq!(answer["error"]["data"]["supported"], json!(["2026-07-28"]));
    let answer = send(
        &mut pair,
        r#"{"jsonrpc":"2.0","id":3,"method":"ping","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
    );
    assert_eq!(answer["error"]["code"], METHOD_NOT_FOUND, "ping is gone in 2026-07-28");
    // A request id in use by a request in flight is refused.
    let call = r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"t","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    pair.server.handle(codec::read_from_client(call).unwrap(), pair.now, &pair.offer);
    let answer = send(&mut pair, call);
    assert_eq!(answer["error"]["code"], INVALID_REQUEST);
    assert_eq!(pair.take_server_requests().len(), 1);
}

#[test]
fn a_stateless_request_cannot_initialize_whatever_its_params() {
    let mut lone = ServerPeer::<(), ()>::stateless(Arc::new(server_settings()));
    let now = Now::new(Instant::now(), 0);
    let offer = TestOffer { tools: true };
    for params in
        [r#"{}"#, r#"{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}"#]
    {
        let text = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{params}}}"#);
        lone.handle(codec::read_from_client(&text).unwrap(), now, &offer);
        let Some(Transmit { out: Outbound::Frame(frame), .. }) = lone.poll_transmit() else { panic!("an answer") };
        assert_eq!(frame.error_code(), Some(METHOD_NOT_FOUND), "{params}");
    }
    assert!(lone.session().is_none());
}

#[test]
fn capability_gating_of_questions_to_the_client() {
    let mut settings = client_settings(Some(ProtocolVersion::V2025_06_18));
    settings.capabilities = ProtocolVersion::ALL.iter().map(|v| (*v, ClientCapabilities::default())).collect();
    let mut pair = Pair::new(settings, server_settings());
    pair.connect();
    let refused = pair.server.request(&elicit(), None, SendOptions::default(), "ask", pair.now);
    assert_eq!(refused, Err(NotAsked::MissingCapability("elicitation")));
    let ok = pair.server.request(&ServerRequest::Ping, None, SendOptions::default(), "ping", pair.now);
    assert!(ok.is_ok());
    // Before any session there is nothing to send on.
    let mut lone = ServerPeer::<(), ()>::new(Arc::new(server_settings()));
    assert_eq!(
        lone.request(&ServerRequest::Ping, None, SendOptions::default(), (), pair.now),
        Err(NotAsked::NoSession)
    );
}

#[test]
fn connecting_after_the_line_closed_fails_at_once() {
    let mut pair = Pair::new(client_settings(None), server_settings());
    pair.client.close();
    pair.client.connect(pair.now);
    pair.collect();
    assert!(pair.client_sent.is_empty(), "nothing is written on a closed line");
    let failed =
        pair.client_events.iter().any(|e| matches!(e, Event::Role(ClientNews::ConnectFailed(ConnectError::Closed))));
    assert!(failed, "{:?}", pair.client_events.len());
}

#[test]
fn the_client_engine_bounds_the_rounds_of_a_request_and_counts_its_retries() {
    let mut settings = client_settings(None);
    settings.max_input_rounds = 2;
    let mut pair = Pair::new(settings, server_settings());
    pair.connect();
    let request = call_tool("greet");
    let waiters = ["round-0", "round-1", "round-2"];
    let mut id = pair.call(request.clone(), RequestOptions::default(), waiters[0]);
    let mut sent = vec![id.clone()];
    for (n, waiter) in waiters.iter().enumerate() {
        pair.drive();
        // The server asks something new every time (an earlier answer comes back with it).
        let served = pair.take_server_requests().remove(0);
        let mut round = served.round.expect("a round");
        if n > 0 {
            assert_eq!(round.answer(&format!("q{}", n - 1), &elicit()), Some(json!({"action": "decline"})));
        }
        assert_eq!(round.answer(&format!("q{n}"), &elicit()), None);
        pair.server.respond_input_required(&served.id, &served.request, &round, pair.now);
        pair.drive();
        match pair.client_reply(waiter) {
            Some(Ok(Reply::InputRequired(asked))) => {
                assert_eq!(asked.resume.retries() as usize, n);
                let resume = asked.resume.clone();
                assert_eq!(asked.questions[0].0, format!("q{n}"));
                let answers = [(format!("q{n}"), ClientResult::Elicit(declined()))];
                let next = waiters[n + 1];
                id = pair.client.retry(&request, &resume, &answers, RequestOptions::default(), next, pair.now).unwrap();
                sent.push(id.clone());
            }
            Some(Err(Failure::TooManyRounds(retries))) => {
                assert_eq!((*retries, n), (2, 2), "two retries allowed, the third question fails the call");
                break;
            }
            other => panic!("{waiter}: {other:?}"),
        }
    }
    sent.dedup();
    assert_eq!(sent.len(), 3, "each retry is a request of its own");
    assert_eq!(pair.client.waiting(), 0);
}

fn declined() -> ElicitResult {
    ElicitResult { action: "decline".into(), content: None, meta: None }
}

#[test]
fn the_client_engine_reads_what_each_request_may_be_answered_with() {
    let task = json!({"taskId": "t1", "status": "working", "createdAt": "2026-01-01T00:00:00Z",
        "lastUpdatedAt": "2026-01-01T00:00:00Z", "ttl": null});
    let question = json!({"method": "elicitation/create", "params": {"message": "name?"}});
    let malformed = |pair: &Pair, waiter: &str, words: &str| match pair.client_reply(waiter) {
        Some(Err(Failure::Malformed(detail))) => assert!(detail.contains(words), "{waiter}: {detail}"),
        other => panic!("{waiter}: {other:?}"),
    };

    let mut pair = Pair::new(client_settings(None), server_settings());
    pair.connect();
    let list = || ClientRequest::ListTools(PaginatedParams::default());
    let id = pair.call(list(), RequestOptions::default(), "list");
    pair.answer_with(&id, json!({"resultType": "input_required", "inputRequests": {"q": question}}));
    malformed(&pair, "list", "only allowed on tools/call");
    let id = pair.call(call_tool("t"), RequestOptions::default(), "undeclared task");
    pair.answer_with(&id, json!({"resultType": "task", "task": task}));
    malformed(&pair, "undeclared task", "a task result");
    let declared = RequestOptions { declare_tasks: true, ..Default::default() };
    let id = pair.call(call_tool("t"), declared, "task");
    pair.answer_with(&id, json!({"resultType": "task", "task": task}));
    let Some(Ok(Reply::Task(created))) = pair.client_reply("task") else { panic!() };
    assert_eq!(created.task.task_id, "t1");
    let id = pair.call(call_tool("t"), RequestOptions::default(), "empty");
    pair.answer_with(&id, json!({"resultType": "input_required"}));
    malformed(&pair, "empty", "neither inputRequests nor requestState");
    let id = pair.call(call_tool("t"), RequestOptions::default(), "unknown");
    pair.answer_with(&id, json!({"resultType": "later"}));
    malformed(&pair, "unknown", "unknown resultType");
    // A question the client cannot be asked is its to refuse: the answer itself reads.
    let id = pair.call(call_tool("t"), RequestOptions::default(), "odd question");
    let odd = json!({"method": "tools/list"});
    pair.answer_with(&id, json!({"resultType": "input_required", "inputRequests": {"a": question, "b": odd}}));
    let Some(Ok(Reply::InputRequired(asked))) = pair.client_reply("odd question") else { panic!() };
    assert!(matches!(&asked.questions[0], (k, Ok(ServerRequest::Elicit(_))) if k == "a"));
    assert!(matches!(&asked.questions[1], (k, Err(crate::codec::answer::QuestionError::NotAQuestion(m)))
        if k == "b" && m == "tools/list"));

    // 2025-11-25: a call that asked for a task may be answered with one; any other is complete.
    let mut pair = Pair::new(client_settings(Some(ProtocolVersion::V2025_11_25)), server_settings());
    pair.connect();
    let mut asking = CallToolParams { name: "t".into(), arguments: None, task: None };
    asking.task = Some(crate::types::TaskMetadata { ttl: None });
    let id = pair.call(ClientRequest::CallTool(asking), RequestOptions::default(), "legacy task");
    pair.answer_with(&id, json!({"task": task}));
    assert!(matches!(pair.client_reply("legacy task"), Some(Ok(Reply::Task(_)))));
    let id = pair.call(call_tool("t"), RequestOptions::default(), "legacy plain");
    pair.answer_with(&id, json!({"task": task, "resultType": "task"}));
    let Some(Ok(value)) = pair.client_response("legacy plain") else { panic!() };
    assert_eq!(value["task"]["taskId"], "t1", "resultType means nothing before 2026-07-28");
}

#[test]
fn a_listen_stream_s_notifications_are_routed_to_it_until_it_ends() {
    use crate::types::meta_keys::SUBSCRIPTION_ID;
    let mut pair = Pair::new(client_settings(None), server_settings());
    pair.connect();
    let filter = SubscriptionFilter { tools_list_changed: Some(true), ..Default::default() };
    let listen = || ClientRequest::Listen(ListenParams { notifications: filter.clone() });
    let id = pair.call(listen(), RequestOptions::default(), "listen");
    pair.drive();
    pair.server.announce(&Change::Tools, &pair.offer);
    pair.drive();
    let seen = pair.listened(&id);
    assert!(
        matches!(
            seen.as_slice(),
            [ServerNotification::SubscriptionsAcknowledged(_), ServerNotification::ToolsListChanged]
        ),
        "{seen:?}"
    );
    let plain = |pair: &Pair| pair.client_events.iter().filter(|e| matches!(e, Event::Notification(_))).count();
    assert_eq!(plain(&pair), 0, "none of them is a notification of the connection's");

    // One tagged with an id that is no stream of ours is the connection's.
    let tagged = |id: Value| {
        json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed",
        "params": {"_meta": {SUBSCRIPTION_ID: id}}})
        .to_string()
    };
    pair.to_client.push(tagged(json!("elsewhere")));
    pair.drive();
    assert_eq!(plain(&pair), 1);

    // The stream ends with its result; later notifications naming it are the connection's.
    pair.server.close();
    pair.drive();
    assert!(matches!(pair.client_reply("listen"), Some(Ok(Reply::Complete(_)))));
    pair.to_client.push(tagged(id.to_value()));
    pair.drive();
    assert_eq!((pair.listened(&id).len(), plain(&pair)), (2, 2));

    // Over stdio the server ends a stream with notifications/cancelled naming it.
    let mut pair = Pair::new(client_settings(None), server_settings());
    pair.connect();
    let id = pair.call(listen(), RequestOptions::default(), "stdio listen");
    pair.collect();
    pair.to_server.clear();
    let cancelled = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": id.to_value(), "reason": "shutting down"}});
    pair.to_client.push(cancelled.to_string());
    pair.drive();
    assert!(matches!(pair.client_reply("stdio listen"), Some(Err(Failure::Closed))));
    assert_eq!(pair.client.waiting(), 0);
    // A stream we cancel is ours no more either.
    let id = pair.call(listen(), RequestOptions::default(), "cancelled listen");
    assert_eq!(pair.client.cancel(&id, "done"), Some("cancelled listen"));
    pair.to_client.push(tagged(id.to_value()));
    pair.drive();
    assert!(pair.listened(&id).is_empty());
}

#[test]
fn the_next_deadline_is_never_late_and_an_answered_request_only_brings_one_early_wake() {
    let mut pair = Pair::new(client_settings(None), server_settings());
    pair.connect();
    // The handshake's own deadline (the probe's, answered) may still be the wake-up time:
    // reached, it is looked at again and nothing is left to wake for.
    if let Some(wake) = pair.client.poll_timeout() {
        pair.advance(wake.saturating_duration_since(pair.now.instant));
    }
    assert_eq!(pair.client.poll_timeout(), None);
    let start = pair.now.instant;
    let ten = RequestOptions { timeout: Some(Duration::from_secs(10)), ..Default::default() };
    pair.call(call_tool("first"), ten.clone(), "first");
    pair.drive();
    let first = pair.take_server_requests().remove(0);
    pair.advance(Duration::from_secs(2));
    pair.call(call_tool("second"), ten, "second");
    pair.drive();
    assert_eq!(pair.take_server_requests().len(), 1, "the second request reached the server");
    assert_eq!(pair.client.poll_timeout(), Some(start + Duration::from_secs(10)));

    // The first is answered: the engine does not look for the next deadline at once, so its
    // wake-up time stays (early, never late).
    pair.server.respond(&first.id, Ok(ServerResult::CallTool(CallToolResult::text("hi"))));
    pair.drive();
    assert!(matches!(pair.client_reply("first"), Some(Ok(_))));
    assert_eq!(pair.client.poll_timeout(), Some(start + Duration::from_secs(10)));

    // Woken then: nothing is due, and the second request's deadline is next.
    pair.advance(Duration::from_secs(8));
    assert!(pair.client_reply("second").is_none(), "not timed out before its deadline");
    assert_eq!(pair.client.poll_timeout(), Some(start + Duration::from_secs(12)));
    pair.advance(Duration::from_secs(2));
    assert!(matches!(pair.client_reply("second"), Some(Err(Failure::TimedOut))));
    assert_eq!(pair.client.poll_timeout(), None, "nothing pending: nothing to wake for");

    // A request with an earlier deadline than the one set moves it earlier.
    pair.call(
        call_tool("slow"),
        RequestOptions { timeout: Some(Duration::from_secs(60)), ..Default::default() },
        "slow",
    );
    let later = pair.client.poll_timeout().expect("a deadline");
    pair.call(
        call_tool("quick"),
        RequestOptions { timeout: Some(Duration::from_secs(1)), ..Default::default() },
        "quick",
    );
    assert!(pair.client.poll_timeout().expect("a deadline") < later);
}
