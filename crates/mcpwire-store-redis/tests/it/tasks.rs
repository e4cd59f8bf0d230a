//! Tasks on a real Redis: the store's semantics (creation order, compare-and-set across
//! connections, listing per owner, expiry, the index of running tasks), and two instances of
//! one server sharing their tasks: a task made on one is polled, awaited, listed and
//! cancelled on the other, and fails when its instance stops.
//!
//! The servers' poll interval is ten minutes: whatever happens within a test's deadline on the
//! other instance happened through the bus, not through polling the store.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use mcpwire_protocol::frame::Outbound;
use mcpwire_protocol::message::{Decoded, Received};
use mcpwire_protocol::types::{CallToolResult, ElicitParams, TaskStatus, TaskSupport, Tool};
use mcpwire_protocol::{Principal, ProtocolVersion};
use mcpwire_server::shared::{Instance, LeaseGuard, Presence, StoreError};
use mcpwire_server::{
    Context, HandlerError, Server, ServerSession, TaskChange, TaskConfig, TaskOutcome, TaskPage, TaskRecord, TaskStore,
    TaskStoreError, TASK_RUNNER_STOPPED,
};
use mcpwire_store_redis::RedisStore;
use mcpwire_testkit::eventually;
use mcpwire_testkit::redis::RedisServer;
use serde_json::{json, Value};
use tokio::sync::{mpsc, Notify};

/// The longest a request may take to be answered (a bound, not a pause).
const WAIT: Duration = Duration::from_secs(20);

/// The instances' lease in these tests: short, so that a stopped instance is found out soon.
const LEASE: Duration = Duration::from_millis(500);

const MINUTE: Option<Duration> = Some(Duration::from_secs(60));

fn record(id: &str, owner: Option<&str>, ttl: Option<Duration>) -> TaskRecord {
    let revision = ProtocolVersion::V2025_11_25;
    TaskRecord::new(id.into(), owner.map(str::to_owned), revision, "tools/call", ttl, None, mcpwire_server::now_ms())
}

async fn connect(redis: &RedisServer, prefix: &str) -> RedisStore {
    RedisStore::connect(&redis.url(), prefix).await.expect("Redis answers")
}

/// A plain connection, to look at (and damage) what the store keeps.
async fn raw(redis: &RedisServer) -> redis::aio::MultiplexedConnection {
    let client = redis::Client::open(redis.url()).unwrap();
    client.get_multiplexed_async_connection().await.unwrap()
}

fn ids(page: &TaskPage) -> Vec<&str> {
    page.tasks.iter().map(|r| r.task_id.as_str()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn changes_are_atomic_across_connections() {
    let redis = RedisServer::start();
    let (a, b) = (connect(&redis, "cas").await, connect(&redis, "cas").await);
    let created = a.create(record("t1", Some("o"), MINUTE)).await.unwrap();
    assert_eq!(created.seq, 1);
    assert_eq!(b.create(record("t2", Some("o"), MINUTE)).await.unwrap().seq, 2, "one counter for every connection");
    assert_eq!(b.get("t1").await.unwrap(), Some(created));
    assert!(matches!(b.create(record("t1", None, MINUTE)).await, Err(TaskStoreError::Backend(_))), "ids are unique");

    // Questions asked at once through both connections: each is applied to what the others
    // wrote, none is lost.
    let asks = (0..10).map(|i| {
        let store = if i % 2 == 0 { a.clone() } else { b.clone() };
        async move {
            let requests = json!({ format!("q{i}"): {"method": "ping"} }).as_object().unwrap().clone();
            store.update("t1", TaskChange::Ask { requests }).await
        }
    });
    for asked in futures::future::join_all(asks).await {
        asked.unwrap();
    }
    let asked = a.get("t1").await.unwrap().unwrap();
    assert_eq!((asked.status, asked.input_requests.len()), (TaskStatus::InputRequired, 10));

    // Cancelled through one connection while finishing through the other: it stays cancelled.
    b.cancel("t1", Some("stop".into())).await.unwrap();
    let done = TaskOutcome::Result(json!({"content": []}));
    assert_eq!(
        a.store_outcome("t1", TaskStatus::Completed, done, None).await,
        Err(TaskStoreError::Terminal(TaskStatus::Cancelled))
    );
    assert_eq!(a.update("nope", TaskChange::Cancel { message: None }).await, Err(TaskStoreError::NotFound));

    // What the store holds but cannot read is an error, not a panic.
    let mut c = raw(&redis).await;
    redis::cmd("SET").arg("cas:task:bad").arg("{not json").query_async::<()>(&mut c).await.unwrap();
    assert!(matches!(a.get("bad").await, Err(TaskStoreError::Backend(_))));
    assert!(matches!(a.cancel("bad", None).await, Err(TaskStoreError::Backend(_))));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listing_is_per_owner_in_creation_order_and_skips_what_expired() {
    let redis = RedisServer::start();
    let store = connect(&redis, "list").await;
    let tasks = [("a1", Some("a")), ("b1", Some("b")), ("a2", Some("a")), ("n1", None), ("a3", Some("a"))];
    for (id, owner) in tasks.into_iter().chain([("a4", Some("a")), ("b2", Some("b"))]) {
        store.create(record(id, owner, MINUTE)).await.unwrap();
    }
    let first = store.list(Some("a"), None, 2).await.unwrap();
    assert_eq!(ids(&first), ["a1", "a2"]);
    let second = store.list(Some("a"), first.next_after, 2).await.unwrap();
    assert_eq!((ids(&second), second.next_after), (vec!["a3", "a4"], None));
    assert_eq!(ids(&store.list(Some("b"), None, 10).await.unwrap()), ["b1", "b2"]);
    assert_eq!(ids(&store.list(None, None, 10).await.unwrap()), ["n1"], "no owner is an owner of its own");
    assert!(store.list(Some("none"), None, 10).await.unwrap().tasks.is_empty());

    // A task gone (as when it expires) is skipped, and its entry in the index dropped.
    let mut c = raw(&redis).await;
    redis::cmd("DEL").arg("list:task:a2").query_async::<()>(&mut c).await.unwrap();
    let page = store.list(Some("a"), None, 2).await.unwrap();
    assert_eq!((ids(&page), page.next_after.is_some()), (vec!["a1", "a3"], true));
    let kept: usize = redis::cmd("ZCARD").arg("list:task-owner:o:a").query_async(&mut c).await.unwrap();
    assert_eq!(kept, 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_expire_and_every_key_has_an_expiry() {
    let redis = RedisServer::start();
    let store = connect(&redis, "ttl").await;
    store.create(record("short", Some("o"), Some(Duration::from_millis(300)))).await.unwrap();
    store.create(record("later", Some("o"), MINUTE)).await.unwrap();
    store.create(record("forever", None, None)).await.unwrap();
    let mut running = record("running", None, MINUTE);
    running.runner = Some("instance-1".into());
    store.create(running).await.unwrap();
    assert_eq!(ids(&store.list(Some("o"), None, 10).await.unwrap()), ["short", "later"]);
    let running: Vec<String> = store.running_on_instances().await.unwrap().into_iter().map(|r| r.task_id).collect();
    assert_eq!(running, ["running"], "only a task with a runner is running somewhere");

    let mut c = raw(&redis).await;
    let keys: Vec<String> = redis::cmd("KEYS").arg("*").query_async(&mut c).await.unwrap();
    assert!(keys.iter().all(|k| k.starts_with("ttl:")), "every key is under the prefix: {keys:?}");
    for key in keys.iter().filter(|k| !k.starts_with("ttl:instance:")) {
        let left: i64 = redis::cmd("PTTL").arg(key).query_async(&mut c).await.unwrap();
        assert!(left > 0, "{key} expires");
    }
    let left: i64 = redis::cmd("PTTL").arg("ttl:task:forever").query_async(&mut c).await.unwrap();
    assert!(left > 23 * 3600 * 1000, "a task without a ttl is kept a day, not for ever");

    eventually("the short task expires", || async { store.get("short").await.unwrap().is_none().then_some(()) }).await;
    assert_eq!(store.purge_expired().await.unwrap(), 1, "its entry in the owner's index went");
    assert_eq!(ids(&store.list(Some("o"), None, 10).await.unwrap()), ["later"]);

    // A task that ends leaves the running set.
    store.store_outcome("running", TaskStatus::Completed, TaskOutcome::Result(json!({})), None).await.unwrap();
    assert!(store.running_on_instances().await.unwrap().is_empty());
    let members: usize = redis::cmd("SCARD").arg("ttl:task-running:all").query_async(&mut c).await.unwrap();
    assert_eq!(members, 0);
}

/// What the test's tools tell it.
#[derive(Default)]
struct Signals {
    /// Lets the `quick` tool finish.
    release: Notify,
    /// The `wait` tool saw its cancellation.
    cancelled: AtomicBool,
}

/// One instance: tasks in the shared store, a tool that waits for its cancellation and one
/// that waits for the test. Cursors are sealed with the deployment's key.
fn instance(store: &RedisStore, signals: &Arc<Signals>) -> Server {
    let config = TaskConfig { poll_interval: Duration::from_secs(600), ..TaskConfig::default() };
    let server =
        Server::builder("tasks", "1").tasks(config).task_store(Arc::new(store.clone())).cursor_key([7; 32]).build();
    let seen = signals.clone();
    server.add_tool(
        Tool::new("wait", "waits until cancelled", json!({"type": "object"})).with_task_support(TaskSupport::Optional),
        move |_, ctx: Context| {
            let seen = seen.clone();
            async move {
                ctx.cancellation().cancelled().await;
                seen.cancelled.store(true, Ordering::SeqCst);
                Err(HandlerError::tool("cancelled"))
            }
        },
    );
    server.add_tool(
        Tool::new("ask", "asks the user's name", json!({"type": "object"})).with_task_support(TaskSupport::Optional),
        |_, ctx: Context| async move {
            // Asked after the hand-over: the question is the task's, not the request's.
            tokio::task::yield_now().await;
            let schema = json!({"type": "object", "properties": {"name": {"type": "string"}}});
            let form = ElicitParams {
                mode: None,
                message: "name?".into(),
                requested_schema: schema.as_object().cloned(),
                url: None,
                elicitation_id: None,
                task: None,
            };
            let answer = ctx.elicit_as("name", form).await?;
            let name = answer.content.and_then(|c| c.get("name").cloned()).unwrap_or_default();
            Ok(CallToolResult::text(format!("hello {}", name.as_str().unwrap_or("?"))))
        },
    );
    let release = signals.clone();
    server.add_tool(
        Tool::new("quick", "finishes when told", json!({"type": "object"})).with_task_support(TaskSupport::Optional),
        move |_, _| {
            let release = release.clone();
            async move {
                release.release.notified().await;
                Ok(CallToolResult::text("done"))
            }
        },
    );
    server
}

/// A [`Presence`] that can die: then it renews nothing and releases nothing, as an instance
/// that crashed (its lease runs out by itself).
struct Mortal {
    store: RedisStore,
    dead: AtomicBool,
}

impl Presence for Mortal {
    fn renew<'a>(&'a self, instance: &'a str, lease: Duration) -> BoxFuture<'a, Result<(), StoreError>> {
        if self.dead.load(Ordering::SeqCst) {
            return Box::pin(std::future::ready(Ok(())));
        }
        Presence::renew(&self.store, instance, lease)
    }

    fn alive<'a>(&'a self, instance: &'a str) -> BoxFuture<'a, Result<bool, StoreError>> {
        Presence::alive(&self.store, instance)
    }

    fn release<'a>(&'a self, instance: &'a str) -> BoxFuture<'a, Result<(), StoreError>> {
        if self.dead.load(Ordering::SeqCst) {
            return Box::pin(std::future::ready(Ok(())));
        }
        Presence::release(&self.store, instance)
    }
}

/// The messages a session sent on its own (status notifications), as they came; shared
/// between the session's sink and the test.
#[derive(Clone, Default)]
struct Messages(Arc<Mutex<Vec<Value>>>);

impl Messages {
    fn push(&self, message: Value) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).push(message);
    }

    fn any(&self, pred: impl Fn(&Value) -> bool) -> bool {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).iter().any(pred)
    }
}

/// A client's legacy (2025-11-25) session on one instance, fed message by message as the
/// HTTP transport does: the same session id on two instances is one session.
struct Client {
    session: ServerSession,
    own: Messages,
    next_id: i64,
}

fn sink(own: &Messages) -> impl Fn(Outbound) -> bool + Send + Sync + 'static {
    let own = own.clone();
    move |frame| {
        if let Outbound::Frame(frame) = frame {
            own.push(serde_json::from_str(&frame.text).unwrap_or(Value::Null));
        }
        true
    }
}

/// An answer to come.
struct Pending {
    id: i64,
    frames: mpsc::Receiver<Outbound>,
}

impl Pending {
    async fn answer(mut self) -> Value {
        loop {
            let frame = tokio::time::timeout(WAIT, self.frames.recv()).await.expect("answered in time").expect("open");
            let Outbound::Frame(frame) = frame else { continue };
            let message: Value = serde_json::from_str(&frame.text).expect("JSON");
            if message["id"] == json!(self.id) && message.get("method").is_none() {
                return message;
            }
        }
    }
}

impl Client {
    /// Opens session `id` on `server` for `principal`, and initializes it.
    async fn open(server: &Server, id: &str, principal: Option<&Principal>) -> Self {
        let own = Messages::default();
        let session = server.session_with_id(id, sink(&own));
        session.set_principal(principal.cloned().map(Arc::new));
        let mut client = Self { session, own, next_id: 1 };
        let params =
            json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}});
        let answer = client.call("initialize", params).await;
        assert!(answer.get("result").is_some(), "initialized: {answer}");
        let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        client.session.receive(mcpwire_protocol::codec::read_from_client(initialized).unwrap(), None).await;
        client
    }

    /// The session `id` of `from` as another instance restores it, for `principal`.
    fn restore(from: &Client, server: &Server, id: &str, principal: Option<&Principal>) -> Self {
        let own = Messages::default();
        let snapshot = from.session.snapshot().expect("initialized");
        let session = server.restore_session(id, snapshot, sink(&own)).expect("restored");
        session.set_principal(principal.cloned().map(Arc::new));
        Self { session, own, next_id: 1000 }
    }

    async fn start(&mut self, method: &str, params: Value) -> Pending {
        let id = self.next_id;
        self.next_id += 1;
        let text = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string();
        let (tx, frames) = mpsc::channel(16);
        self.session.receive(mcpwire_protocol::codec::read_from_client(&text).unwrap(), Some(tx)).await;
        Pending { id, frames }
    }

    async fn call(&mut self, method: &str, params: Value) -> Value {
        self.start(method, params).await.answer().await
    }

    /// Calls `tool` as a task; returns the task's id.
    async fn task(&mut self, tool: &str) -> String {
        let created = self.call("tools/call", json!({"name": tool, "arguments": {}, "task": {"ttl": 60_000}})).await;
        let id = created["result"]["task"]["taskId"].as_str().unwrap_or_else(|| panic!("a task: {created}"));
        id.to_owned()
    }

    async fn status(&mut self, task: &str) -> Value {
        let got = self.call("tasks/get", json!({"taskId": task})).await;
        got["result"]["status"].clone()
    }
}

fn alice() -> Principal {
    Principal { issuer: Some("https://issuer".into()), subject: Some("alice".into()), ..Principal::default() }
}

/// Two instances of one server on one Redis, sharing their tasks.
/// Each with its lease, renewed while the guard is held.
async fn deployment(redis: &RedisServer, prefix: &str) -> [(Server, LeaseGuard, Arc<Signals>); 2] {
    let mut made = Vec::new();
    for _ in 0..2 {
        let store = connect(redis, prefix).await;
        let signals = Arc::new(Signals::default());
        let server = instance(&store, &signals);
        let lease = Instance::new().keep_alive(Arc::new(store.clone()), LEASE).await.unwrap();
        server.share_tasks(Arc::new(store.clone()), &lease).await.unwrap();
        made.push((server, lease, signals));
    }
    made.try_into().unwrap_or_else(|_| unreachable!())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_is_polled_awaited_listed_and_cancelled_on_either_instance() {
    let redis = RedisServer::start();
    let [(a, _lease_a, on_a_signals), (b, _lease_b, _)] = deployment(&redis, "two").await;
    let principal = alice();
    let mut on_a = Client::open(&a, "session-1", Some(&principal)).await;
    let mut on_b = Client::restore(&on_a, &b, "session-1", Some(&principal));

    // Made on A, awaited on B: B's `tasks/result` wakes when A's handler finishes.
    let quick = on_a.task("quick").await;
    assert_eq!(on_b.status(&quick).await, "working");
    let result = on_b.start("tasks/result", json!({"taskId": quick})).await;
    on_a_signals.release.notify_one();
    let result = result.answer().await;
    assert_eq!(result["result"]["content"][0]["text"], "done", "{result}");
    assert_eq!(on_b.status(&quick).await, "completed");

    // Cancelled on B: A's handler stops, and A's connection is told.
    let waiting = on_a.task("wait").await;
    assert_eq!(a.running_tasks(), 1);
    let listed = on_b.call("tasks/list", json!({})).await;
    let listed: Vec<&str> =
        listed["result"]["tasks"].as_array().unwrap().iter().filter_map(|t| t["taskId"].as_str()).collect();
    assert_eq!(listed, [quick.as_str(), waiting.as_str()]);
    let cancelled = on_b.call("tasks/cancel", json!({"taskId": waiting})).await;
    assert_eq!(cancelled["result"]["status"], "cancelled", "{cancelled}");
    eventually("A's handler sees the cancellation", || {
        std::future::ready(on_a_signals.cancelled.load(Ordering::SeqCst).then_some(()))
    })
    .await;
    eventually("A's handler ends", || std::future::ready((a.running_tasks() == 0).then_some(()))).await;
    eventually("A's connection hears the task was cancelled", || {
        let told = on_a.own.any(|m| {
            m["method"] == "notifications/tasks/status"
                && m["params"]["taskId"] == json!(waiting)
                && m["params"]["status"] == "cancelled"
        });
        std::future::ready(told.then_some(()))
    })
    .await;
    assert_eq!(on_a.status(&waiting).await, "cancelled");

    // Another party on the same session, or another session, sees none of it.
    let mallory = Principal { subject: Some("mallory".into()), ..alice() };
    for mut stranger in
        [Client::restore(&on_a, &b, "session-1", Some(&mallory)), Client::restore(&on_a, &b, "session-2", None)]
    {
        for method in ["tasks/get", "tasks/result", "tasks/cancel"] {
            let refused = stranger.call(method, json!({"taskId": quick})).await;
            assert!(refused.get("error").is_some(), "{method}: {refused}");
        }
        let listed = stranger.call("tasks/list", json!({})).await;
        assert_eq!(listed["result"]["tasks"], json!([]), "{listed}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tasks_of_an_instance_that_stops_fail() {
    let redis = RedisServer::start();
    let principal = alice();
    let store_a = connect(&redis, "die").await;
    let signals_a = Arc::new(Signals::default());
    let a = instance(&store_a, &signals_a);
    let mortal = Arc::new(Mortal { store: store_a.clone(), dead: AtomicBool::new(false) });
    let lease_a = Instance::new().keep_alive(mortal.clone(), LEASE).await.unwrap();
    a.share_tasks(Arc::new(store_a.clone()), &lease_a).await.unwrap();
    let store_b = connect(&redis, "die").await;
    let signals_b = Arc::new(Signals::default());
    let b = instance(&store_b, &signals_b);
    let _lease_b = Instance::new().keep_alive(Arc::new(store_b.clone()), LEASE).await.unwrap();
    b.share_tasks(Arc::new(store_b.clone()), &_lease_b).await.unwrap();

    let mut on_a = Client::open(&a, "session-1", Some(&principal)).await;
    let mut on_b = Client::restore(&on_a, &b, "session-1", Some(&principal));
    let orphan = on_a.task("wait").await;
    let kept = on_b.task("wait").await;

    // A stops renewing its lease (and never releases it): it runs out, and B fails A's task.
    mortal.dead.store(true, Ordering::SeqCst);
    let failed = eventually("B fails the task of the instance that stopped", || {
        let store = store_b.clone();
        let orphan = orphan.clone();
        async move { store.get(&orphan).await.unwrap().filter(|r| r.status == TaskStatus::Failed) }
    })
    .await;
    assert_eq!(failed.status_message.as_deref(), Some(TASK_RUNNER_STOPPED));
    let result = on_b.call("tasks/result", json!({"taskId": orphan})).await;
    assert!(result["error"]["message"].as_str().is_some_and(|m| m.contains("stopped")), "{result}");
    // B's own task, whose instance lives, goes on (A, still sweeping, found B alive).
    assert_eq!(on_b.status(&kept).await, "working");
    // A was only cut off: its handler learns that its task ended, and stops.
    eventually("A's handler stops", || std::future::ready((a.running_tasks() == 0).then_some(()))).await;
    assert!(signals_a.cancelled.load(Ordering::SeqCst));
    let cancelled = on_b.call("tasks/cancel", json!({"taskId": kept})).await;
    assert_eq!(cancelled["result"]["status"], "cancelled", "{cancelled}");
}

/// One 2026-07-28 request from `principal`, standing alone as over HTTP, declaring the tasks
/// extension; its answer.
async fn modern(server: &Server, principal: &Principal, method: &str, mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities":
            {"elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}},
    });
    let text = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string();
    let Ok(Decoded::Single(Received::Request(request))) = mcpwire_protocol::codec::read_from_client(&text) else {
        panic!("a request: {text}")
    };
    let (tx, mut frames) = mpsc::channel(64);
    let principal = Some(Arc::new(principal.clone()));
    let served = server.serve_stateless_for(request, principal, tx, Default::default());
    tokio::time::timeout(WAIT, served).await.expect("answered in time");
    let mut answer = None;
    while let Ok(Outbound::Frame(frame)) = frames.try_recv() {
        if frame.answers(&1.into()) {
            answer = Some(frame.text);
        }
    }
    serde_json::from_str(&answer.expect("an answer")).expect("JSON")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_modern_task_is_answered_and_cancelled_through_the_other_instance() {
    let redis = RedisServer::start();
    let [(a, _lease_a, signals_a), (b, _lease_b, _)] = deployment(&redis, "modern").await;
    let alice = alice();

    // The handler asks on A; the question is read and answered on B; A's handler goes on.
    let created = modern(&a, &alice, "tools/call", json!({"name": "ask", "arguments": {}})).await;
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    let id = created["result"]["taskId"].as_str().unwrap().to_owned();
    let asked = eventually("the question is seen on B", || async {
        let got = modern(&b, &alice, "tasks/get", json!({"taskId": id})).await;
        (got["result"]["status"] == "input_required").then_some(got)
    })
    .await;
    assert_eq!(asked["result"]["inputRequests"]["name"]["method"], "elicitation/create", "{asked}");
    let answer = json!({"taskId": id, "inputResponses": {"name": {"action": "accept", "content": {"name": "Grace"}}}});
    let updated = modern(&b, &alice, "tasks/update", answer).await;
    assert!(updated.get("result").is_some(), "{updated}");
    let done = eventually("A's handler takes the answer and finishes", || async {
        let got = modern(&b, &alice, "tasks/get", json!({"taskId": id})).await;
        (got["result"]["status"] == "completed").then_some(got)
    })
    .await;
    assert_eq!(done["result"]["result"]["content"][0]["text"], "hello Grace", "{done}");
    let mallory = Principal { subject: Some("mallory".into()), ..alice.clone() };
    let refused = modern(&b, &mallory, "tasks/get", json!({"taskId": id})).await;
    assert_eq!(refused["error"]["code"], -32602, "another party's task is unknown: {refused}");

    // Cancelled on B: the handler on A stops.
    let created = modern(&a, &alice, "tools/call", json!({"name": "wait", "arguments": {}})).await;
    let id = created["result"]["taskId"].as_str().unwrap_or_else(|| panic!("a task: {created}")).to_owned();
    let refused = modern(&b, &mallory, "tasks/cancel", json!({"taskId": id})).await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    let cancelled = modern(&b, &alice, "tasks/cancel", json!({"taskId": id})).await;
    assert!(cancelled.get("result").is_some(), "{cancelled}");
    eventually("A's handler sees the cancellation", || {
        std::future::ready(signals_a.cancelled.load(Ordering::SeqCst).then_some(()))
    })
    .await;
    assert_eq!(modern(&a, &alice, "tasks/get", json!({"taskId": id})).await["result"]["status"], "cancelled");
}
