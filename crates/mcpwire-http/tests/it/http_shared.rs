//! Several instances behind one address acting as one server, on a real Redis the test starts
//! itself (scale-out, docs/SCALING.md): a legacy session opened on one instance is served by
//! another without a handshake; its log level and subscriptions set on one hold on the
//! other; DELETE on one ends it on all; a resource touched on one reaches a subscriber
//! streaming from the other; a lost Redis is a 503, and its return is noticed by itself.

use crate::common;

use common::*;
use mcpwire_http::{EventBudget, HttpConfig, McpHttp, SharedEventStore};
use mcpwire_store_redis::RedisStore;
use mcpwire_testkit::redis::RedisServer;
use serde_json::{json, Value};

const V1125: &str = "2025-11-25";

/// One instance of the reference server sharing `redis` under `prefix`.
async fn instance(redis: &RedisServer, prefix: &str) -> TestServer {
    instance_with(redis, prefix, HttpConfig::default()).await
}

/// One instance configured so.
async fn instance_with(redis: &RedisServer, prefix: &str, config: HttpConfig) -> TestServer {
    let store = RedisStore::connect(&redis.url(), prefix).await.expect("Redis answers");
    let http = McpHttp::shared(mcpwire_reference::server(), config, store.shared_state())
        .await
        .expect("an instance on the shared store");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind 127.0.0.1:0");
    let addr = listener.local_addr().expect("local addr");
    let task = tokio::spawn(http.clone().serve(listener));
    TestServer::from_parts(http, addr, task)
}

/// Two instances of one deployment.
async fn pair(redis: &RedisServer) -> (TestServer, TestServer) {
    let prefix = format!("test-{}", mcpwire_protocol::id::random_id());
    (instance(redis, &prefix).await, instance(redis, &prefix).await)
}

/// Calls `name` in a session through `via` and returns every message of the answer.
async fn call(via: &TestServer, session: &str, id: i64, name: &str, arguments: Value) -> Vec<Value> {
    let body = request(id, "tools/call", json!({"name": name, "arguments": arguments}));
    let resp = within(name, via.post_legacy(session, Some(V1125), &body).send()).await.expect("POST");
    assert_eq!(resp.status(), 200, "{name} through the instance on {}", via.addr);
    all_messages(resp).await
}

/// A GET of a session's stream through `via`: its standalone stream, or with `last_event` the
/// rest of the stream that id names.
fn get_stream(via: &TestServer, session: &str, last_event: Option<&str>) -> reqwest::RequestBuilder {
    let get = via.client.get(via.url("/mcp")).header("Accept", "text/event-stream").header("Mcp-Session-Id", session);
    match last_event {
        Some(id) => get.header("Last-Event-ID", id),
        None => get,
    }
}

fn log_messages(messages: &[Value]) -> usize {
    messages.iter().filter(|m| m["method"] == json!("notifications/message")).count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_opened_on_one_instance_is_served_by_the_other() {
    let redis = RedisServer::start();
    let (a, b) = pair(&redis).await;
    let session = a.legacy_session(V1125, json!({})).await;
    assert_eq!(b.http.session_count(), 0, "b has not seen the session yet");

    // No handshake on b: it restores the session from the store.
    let answer = call(&b, &session, 2, "echo", json!({"text": "hi"})).await;
    let result = answer.last().expect("an answer");
    assert_eq!(result["result"]["content"][0]["text"], json!("hi"), "{result}");
    assert_eq!(b.http.session_count(), 1, "b holds the session now");

    // The log level set on a holds on b for the next request (default: every message).
    assert_eq!(log_messages(&call(&b, &session, 3, "test_tool_with_logging", json!({})).await), 3);
    let set = request(4, "logging/setLevel", json!({"level": "error"}));
    let resp = within("setLevel", a.post_legacy(&session, Some(V1125), &set).send()).await.unwrap();
    assert_eq!(resp.status(), 200);
    final_message(resp).await;
    let quiet = call(&b, &session, 5, "test_tool_with_logging", json!({})).await;
    assert_eq!(log_messages(&quiet), 0, "info messages after setLevel error on the other instance: {quiet:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_on_one_instance_ends_the_session_on_every_one() {
    let redis = RedisServer::start();
    let (a, b) = pair(&redis).await;
    let session = a.legacy_session(V1125, json!({})).await;
    call(&b, &session, 2, "echo", json!({"text": "both hold it"})).await;
    assert_eq!((a.http.session_count(), b.http.session_count()), (1, 1));

    let resp = within("DELETE", b.client.delete(b.url("/mcp")).header("Mcp-Session-Id", &session).send()).await;
    assert_eq!(resp.unwrap().status(), 204);
    for (name, instance) in [("a", &a), ("b", &b)] {
        let body = request(3, "tools/list", json!({}));
        let resp = within("after DELETE", instance.post_legacy(&session, Some(V1125), &body).send()).await.unwrap();
        assert_eq!(resp.status(), 404, "the deleted session on {name}");
    }
    assert_eq!(a.http.session_count(), 0, "a let it go when told");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forged_session_ids_are_unknown_everywhere() {
    let redis = RedisServer::start();
    let (a, b) = pair(&redis).await;
    let real = a.legacy_session(V1125, json!({})).await;
    let mut forged = real.clone().into_bytes();
    forged[0] = if forged[0] == b'0' { b'1' } else { b'0' };
    let forged = String::from_utf8(forged).unwrap();
    for id in [forged.as_str(), "not-a-session", &"f".repeat(4096)] {
        for instance in [&a, &b] {
            let body = request(2, "tools/list", json!({}));
            let resp = within("forged id", instance.post_legacy(id, Some(V1125), &body).send()).await.unwrap();
            assert_eq!(resp.status(), 404, "session id {:?}", &id[..id.len().min(40)]);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resource_touched_on_one_instance_reaches_a_subscriber_streaming_from_the_other() {
    let redis = RedisServer::start();
    let (a, b) = pair(&redis).await;
    let session = a.legacy_session(V1125, json!({})).await;
    let subscribe = request(2, "resources/subscribe", json!({"uri": WATCHED}));
    let resp = within("subscribe", a.post_legacy(&session, Some(V1125), &subscribe).send()).await.unwrap();
    assert_eq!(resp.status(), 200);
    final_message(resp).await;

    // The client's GET stream is on a; the change is made on b.
    let resp = within("GET stream", get_stream(&a, &session, None).send()).await.unwrap();
    assert_eq!(resp.status(), 200);
    let mut stream = SseReader::new(resp);
    call(&b, &session, 3, "test_touch_resource", json!({"uri": WATCHED})).await;
    let note = stream.next_message("resources/updated on the GET stream").await;
    assert_eq!(note["method"], json!("notifications/resources/updated"), "{note}");
    assert_eq!(note["params"]["uri"], json!(WATCHED));

    // Unsubscribed on b: a touch made on a reaches nobody (the next message is the second touch's
    // announcement of another resource the client did subscribe to).
    let unsubscribe = request(4, "resources/unsubscribe", json!({"uri": WATCHED}));
    let resp = within("unsubscribe", b.post_legacy(&session, Some(V1125), &unsubscribe).send()).await.unwrap();
    final_message(resp).await;
    let other = "test://other";
    let subscribe = request(5, "resources/subscribe", json!({"uri": other}));
    final_message(within("subscribe other", b.post_legacy(&session, Some(V1125), &subscribe).send()).await.unwrap())
        .await;
    call(&a, &session, 6, "test_touch_resource", json!({"uri": WATCHED})).await;
    call(&b, &session, 7, "test_touch_resource", json!({"uri": other})).await;
    let note = stream.next_message("the other resource's update").await;
    assert_eq!(note["params"]["uri"], json!(other), "the unsubscribed resource was announced: {note}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_redis_is_503_and_its_return_is_noticed() {
    let mut redis = RedisServer::start();
    let (a, b) = pair(&redis).await;
    let session = a.legacy_session(V1125, json!({})).await;
    redis.stop();
    // b must read the session from the store, which is gone: 503, not 404 (the session lives).
    let body = request(2, "tools/list", json!({}));
    let resp = within("store gone", b.post_legacy(&session, Some(V1125), &body).send()).await.unwrap();
    assert_eq!(resp.status(), 503);
    assert!(resp.headers().contains_key("retry-after"));
    // A new session cannot be kept: 503 too.
    let init = legacy_initialize(1, V1125, json!({}));
    let resp = within("initialize, store gone", a.post_mcp(&init).send()).await.unwrap();
    assert_eq!(resp.status(), 503);
    assert_eq!(a.http.session_count(), 1, "the refused session is not held");

    // Redis comes back (empty: the test's Redis keeps nothing on disk): new sessions work again.
    redis.restart();
    let init = legacy_initialize(1, V1125, json!({}));
    mcpwire_testkit::eventually("a new session once Redis is back", || async {
        let resp = a.post_mcp(&init).send().await.ok()?;
        (resp.status() == 200).then_some(())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_begun_on_one_instance_is_resumed_on_the_other() {
    let redis = RedisServer::start();
    let (a, b) = pair(&redis).await;
    let session = a.legacy_session(V1125, json!({})).await;
    let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
        "name": "test_long_running_task", "arguments": {"steps": 6, "delayMs": 150},
        "_meta": {"progressToken": "p"}}});
    let resp = within("the call on a", a.post_legacy(&session, Some(V1125), &call).send()).await.unwrap();
    assert_eq!(resp.status(), 200);
    let mut first = SseReader::new(resp);
    let progress = first.next_message("the first progress").await;
    assert_eq!(progress["method"], json!("notifications/progress"), "{progress}");
    let last_id = first.last_event_id().expect("events carry ids").to_owned();
    // The connection breaks (a client going away, an instance shutting down).
    drop(first);

    let resp = within("the resumption on b", get_stream(&b, &session, Some(&last_id)).send()).await.unwrap();
    assert_eq!(resp.status(), 200, "resuming {last_id} on the other instance");
    let rest = all_messages(resp).await;
    let answer = rest.last().expect("the rest of the stream");
    assert_eq!(answer["id"], json!(7), "the answer comes through b: {rest:?}");
    assert_eq!(answer["result"]["content"][0]["text"], json!("Counted to 6."));
    let steps: Vec<f64> = rest.iter().filter_map(|m| m["params"]["progress"].as_f64()).collect();
    assert!(!steps.is_empty() && steps.windows(2).all(|w| w[0] < w[1]), "progress in order, none twice: {steps:?}");
    assert!(steps[0] > progress["params"]["progress"].as_f64().unwrap(), "nothing before the resumption point");

    // A stream id of no stream of this session: 400, and never another session's events.
    let other = a.legacy_session(V1125, json!({})).await;
    let get = get_stream(&b, &other, Some(&last_id));
    assert_eq!(within("another session's stream", get.send()).await.unwrap().status(), 400);
    for bad in ["x".repeat(10_000), "1-".into(), "-1".into(), "99999999999999999999999-1".into()] {
        let get = get_stream(&b, &session, Some(&bad));
        assert_eq!(within("a malformed Last-Event-ID", get.send()).await.unwrap().status(), 400, "{bad:.40}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_the_shared_store_let_go_is_answered_with_an_error_where_it_is_resumed() {
    let redis = RedisServer::start();
    let prefix = format!("test-{}", mcpwire_protocol::id::random_id());
    let budget = EventBudget { per_stream: 1000, per_session: 2000, total: 1 << 30 };
    let config = || HttpConfig { event_budget: budget, ..HttpConfig::default() };
    let (a, b) = (instance_with(&redis, &prefix, config()).await, instance_with(&redis, &prefix, config()).await);
    let session = a.legacy_session(V1125, json!({})).await;
    let long = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
        "name": "test_long_running_task", "arguments": {"steps": 3, "delayMs": 50},
        "_meta": {"progressToken": "p"}}});
    let resp = within("the call on a", a.post_legacy(&session, Some(V1125), &long).send()).await.unwrap();
    let mut first = SseReader::new(resp);
    first.next_message("the first progress").await;
    let last_id = first.last_event_id().expect("events carry ids").to_owned();
    drop(first);
    // The call ends on a; then a longer stream in the same session lets it go.
    let store = RedisStore::connect(&redis.url(), &prefix).await.unwrap();
    let stream: u64 = last_id.split('-').next().unwrap().parse().unwrap();
    mcpwire_testkit::eventually("the call's stream finished", || async {
        store.info(&session, stream).await.unwrap().filter(|i| i.done).map(|_| ())
    })
    .await;
    let more = json!({"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {
        "name": "test_long_running_task", "arguments": {"steps": 20, "delayMs": 1},
        "_meta": {"progressToken": "q"}}});
    let resp = within("another call on a", a.post_legacy(&session, Some(V1125), &more).send()).await.unwrap();
    all_messages(resp).await;
    assert!(store.info(&session, stream).await.unwrap().unwrap().evicted, "the finished stream was let go");

    let resp = within("the resumption on b", get_stream(&b, &session, Some(&last_id)).send()).await.unwrap();
    assert_eq!(resp.status(), 200);
    let answer = all_messages(resp).await.pop().expect("an answer");
    assert_eq!(answer["id"], json!(7), "{answer}");
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("send the request again"), "{answer}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_posted_to_another_instance_reaches_the_call_that_asked() {
    let redis = RedisServer::start();
    let (a, b) = pair(&redis).await;
    let session = a.legacy_session(V1125, json!({"elicitation": {}})).await;
    // The call runs on b and asks the client; the client answers through a.
    let call = request(5, "tools/call", json!({"name": "test_elicitation", "arguments": {"message": "Who?"}}));
    let resp = within("the call on b", b.post_legacy(&session, Some(V1125), &call).send()).await.unwrap();
    assert_eq!(resp.status(), 200);
    let mut stream = SseReader::new(resp);
    let question = stream.next_message("the elicitation").await;
    assert_eq!(question["method"], json!("elicitation/create"), "{question}");
    assert!(question["id"].is_string(), "an id naming the instance that asks: {question}");
    let answer = json!({"jsonrpc": "2.0", "id": question["id"], "result": {
        "action": "accept", "content": {"username": "ada", "email": "ada@example.com"}}});
    let resp = within("the answer through a", a.post_legacy(&session, Some(V1125), &answer).send()).await.unwrap();
    assert_eq!(resp.status(), 202);
    let result = stream.next_message("the call's answer").await;
    assert_eq!(result["id"], json!(5), "{result}");
    let text = result["result"]["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.contains("action=accept") && text.contains("ada@example.com"), "{result}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listen_stream_on_one_instance_hears_a_change_made_on_the_other() {
    let redis = RedisServer::start();
    let (a, b) = pair(&redis).await;
    let listen =
        modern_request(1, "subscriptions/listen", json!({"notifications": {"resourceSubscriptions": [WATCHED]}}));
    let resp = within("listen on a", a.post_modern(&listen).send()).await.unwrap();
    assert_eq!(resp.status(), 200);
    let mut stream = SseReader::new(resp);
    let ack = stream.next_message("the acknowledgement").await;
    assert_eq!(ack["method"], json!("notifications/subscriptions/acknowledged"), "{ack}");
    let touch = modern_request(2, "tools/call", json!({"name": "test_touch_resource", "arguments": {"uri": WATCHED}}));
    let resp = within("touch on b", b.post_modern(&touch).send()).await.unwrap();
    assert_eq!(resp.status(), 200);
    final_message(resp).await;
    let note = stream.next_message("the update on a's listen stream").await;
    assert_eq!(note["method"], json!("notifications/resources/updated"), "{note}");
    assert_eq!(note["params"]["uri"], json!(WATCHED));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_gone_from_the_store_unannounced_is_let_go_when_next_touched() {
    let redis = RedisServer::start();
    let prefix = format!("test-{}", mcpwire_protocol::id::random_id());
    // An idle timeout of 800 ms: a held session's lifetime is restarted at most every 100 ms.
    let store = RedisStore::connect(&redis.url(), &prefix).await.unwrap();
    let config = HttpConfig { session_idle_timeout: std::time::Duration::from_millis(800), ..HttpConfig::default() };
    let http = McpHttp::shared(mcpwire_reference::server(), config, store.shared_state()).await.unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let a = TestServer::from_parts(http.clone(), addr, tokio::spawn(http.serve(listener)));
    let session = a.legacy_session(V1125, json!({})).await;
    // Removed behind the instance's back (as if the news of a DELETE elsewhere were lost).
    assert!(mcpwire_http::SessionStore::remove(&store, &session).await.unwrap());
    let list = request(2, "tools/list", json!({}));
    mcpwire_testkit::eventually("the held copy let go", || async {
        let resp = a.post_legacy(&session, Some(V1125), &list).send().await.ok()?;
        (resp.status() == 404).then_some(())
    })
    .await;
    assert_eq!(a.http.session_count(), 0);
}

/// Two instances of one deployment keeping their tasks in the shared store too.
async fn pair_with_tasks(redis: &RedisServer) -> (TestServer, TestServer) {
    let prefix = format!("test-{}", mcpwire_protocol::id::random_id());
    let mut made = Vec::new();
    for _ in 0..2 {
        let store = RedisStore::connect(&redis.url(), &prefix).await.expect("Redis answers");
        let builder = mcpwire_reference::builder().task_store(std::sync::Arc::new(store.clone()));
        let server = mcpwire_reference::server_from(builder, false);
        let http = McpHttp::shared(server, HttpConfig::default(), store.shared_state()).await.expect("an instance");
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("local addr");
        let task = tokio::spawn(http.clone().serve(listener));
        made.push(TestServer::from_parts(http, addr, task));
    }
    let b = made.pop().unwrap();
    (made.pop().unwrap(), b)
}

/// Runs `slow_compute` as a task through `via`; returns the task's id.
async fn start_task(via: &TestServer, session: &str, id: i64) -> String {
    let call = request(
        id,
        "tools/call",
        json!({"name": "slow_compute", "arguments": {"seconds": 0.05}, "task": {"ttl": 60_000}}),
    );
    let resp = within("the task-augmented call", via.post_legacy(session, Some(V1125), &call).send()).await.unwrap();
    assert_eq!(resp.status(), 200);
    let created = final_message(resp).await;
    created["result"]["task"]["taskId"].as_str().unwrap_or_else(|| panic!("a CreateTaskResult: {created}")).to_owned()
}

/// Reads `stream` until the status notification saying `task` completed.
async fn completed_status(stream: &mut SseReader, task: &str) -> Value {
    loop {
        let note = stream.next_message("the task's status").await;
        let about_task =
            note["method"] == json!("notifications/tasks/status") && note["params"]["taskId"] == json!(task);
        if about_task && note["params"]["status"] == json!("completed") {
            return note;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_made_on_one_instance_tells_its_status_on_the_get_stream_open_on_the_other() {
    let redis = RedisServer::start();
    let (a, b) = pair_with_tasks(&redis).await;
    let session = a.legacy_session(V1125, json!({"tasks": {}})).await;
    let resp = within("GET stream on b", get_stream(&b, &session, None).send()).await.unwrap();
    assert_eq!(resp.status(), 200);
    let mut stream = SseReader::new(resp);
    // The task runs on a, where the call came; its news is the session's own, filed in the
    // standalone stream in the store, which b's GET stream reads.
    let task = start_task(&a, &session, 2).await;
    let note = completed_status(&mut stream, &task).await;
    assert!(stream.last_event_id().is_some_and(|id| id.starts_with("0-")), "a resumable event: {note}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_standalone_stream_is_kept_while_no_get_is_open_and_resumes_on_either_instance() {
    let redis = RedisServer::start();
    let (a, b) = pair_with_tasks(&redis).await;
    let session = a.legacy_session(V1125, json!({"tasks": {}})).await;
    // No GET stream anywhere: the task's news waits in the store.
    let first = start_task(&a, &session, 2).await;
    mcpwire_testkit::eventually("the first task completes", || async {
        let get = request(3, "tasks/get", json!({"taskId": first}));
        let resp = b.post_legacy(&session, Some(V1125), &get).send().await.ok()?;
        let status = final_message(resp).await;
        (status["result"]["status"] == json!("completed")).then_some(())
    })
    .await;

    // A GET on b delivers what was filed meanwhile, from the first event.
    let resp = within("GET stream on b", get_stream(&b, &session, None).send()).await.unwrap();
    assert_eq!(resp.status(), 200);
    let mut on_b = SseReader::new(resp);
    completed_status(&mut on_b, &first).await;
    let seen = on_b.last_event_id().expect("events carry ids").to_owned();
    drop(on_b);

    // The client comes back on a, from where it stopped: the next task's news, not the first's.
    let second = start_task(&b, &session, 4).await;
    let resp = within("GET stream resumed on a", get_stream(&a, &session, Some(&seen)).send()).await.unwrap();
    assert_eq!(resp.status(), 200);
    let mut on_a = SseReader::new(resp);
    loop {
        let note = on_a.next_message("the second task's news").await;
        assert_ne!(note["params"]["taskId"], json!(first), "the first task's news came again: {note}");
        if note["params"]["taskId"] == json!(second) && note["params"]["status"] == json!("completed") {
            break;
        }
    }
    assert_eq!(a.http.session_count() + b.http.session_count(), 2, "both instances hold the session");
}

/// A session store that, the first time it is read, lets `meanwhile` run after the read and
/// before the record is handed over: a change made on another instance at the worst moment.
struct ChangedDuringRead {
    store: RedisStore,
    meanwhile: tokio::sync::Mutex<Option<futures::future::BoxFuture<'static, ()>>>,
}

impl mcpwire_http::SessionStore for ChangedDuringRead {
    fn put<'a>(
        &'a self,
        id: &'a str,
        record: &'a mcpwire_http::SessionRecord,
        ttl: std::time::Duration,
    ) -> futures::future::BoxFuture<'a, Result<(), mcpwire_server::shared::StoreError>> {
        self.store.put(id, record, ttl)
    }

    fn get<'a>(
        &'a self,
        id: &'a str,
        ttl: std::time::Duration,
    ) -> futures::future::BoxFuture<'a, Result<Option<mcpwire_http::SessionRecord>, mcpwire_server::shared::StoreError>>
    {
        Box::pin(async move {
            let read = self.store.get(id, ttl).await;
            if let Some(change) = self.meanwhile.lock().await.take() {
                change.await;
            }
            read
        })
    }

    fn touch<'a>(
        &'a self,
        id: &'a str,
        ttl: std::time::Duration,
    ) -> futures::future::BoxFuture<'a, Result<bool, mcpwire_server::shared::StoreError>> {
        self.store.touch(id, ttl)
    }

    fn remove<'a>(
        &'a self,
        id: &'a str,
    ) -> futures::future::BoxFuture<'a, Result<bool, mcpwire_server::shared::StoreError>> {
        self.store.remove(id)
    }

    fn hold<'a>(
        &'a self,
        id: &'a str,
        instance: &'a str,
        ttl: std::time::Duration,
    ) -> futures::future::BoxFuture<'a, Result<(), mcpwire_server::shared::StoreError>> {
        self.store.hold(id, instance, ttl)
    }

    fn release<'a>(
        &'a self,
        id: &'a str,
        instance: &'a str,
    ) -> futures::future::BoxFuture<'a, Result<(), mcpwire_server::shared::StoreError>> {
        self.store.release(id, instance)
    }

    fn holders<'a>(
        &'a self,
        id: &'a str,
    ) -> futures::future::BoxFuture<'a, Result<Vec<String>, mcpwire_server::shared::StoreError>> {
        self.store.holders(id)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_made_while_another_instance_restores_the_session_holds_there() {
    let redis = RedisServer::start();
    let prefix = format!("test-{}", mcpwire_protocol::id::random_id());
    let a = instance(&redis, &prefix).await;
    let session = a.legacy_session(V1125, json!({})).await;

    // b reads the session, then, before it holds its copy, a sets the log level.
    let set_level = {
        let (client, url, session) = (a.client.clone(), a.url("/mcp"), session.clone());
        Box::pin(async move {
            let set = request(2, "logging/setLevel", json!({"level": "error"}));
            let resp = client
                .post(url)
                .header("Accept", "application/json, text/event-stream")
                .header("Content-Type", "application/json")
                .header("Mcp-Session-Id", &session)
                .header("MCP-Protocol-Version", V1125)
                .body(set.to_string())
                .send()
                .await
                .expect("setLevel on a");
            assert_eq!(resp.status(), 200);
            final_message(resp).await;
        }) as futures::future::BoxFuture<'static, ()>
    };
    let store = RedisStore::connect(&redis.url(), &prefix).await.expect("Redis answers");
    let sessions = std::sync::Arc::new(ChangedDuringRead {
        store: store.clone(),
        meanwhile: tokio::sync::Mutex::new(Some(set_level)),
    });
    let shared = mcpwire_http::SharedState { sessions, ..store.shared_state() };
    let http = McpHttp::shared(mcpwire_reference::server(), HttpConfig::default(), shared).await.unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind 127.0.0.1:0");
    let addr = listener.local_addr().expect("local addr");
    let task = tokio::spawn(http.clone().serve(listener));
    let b = TestServer::from_parts(http, addr, task);

    let quiet = call(&b, &session, 3, "test_tool_with_logging", json!({})).await;
    assert_eq!(log_messages(&quiet), 0, "info messages after setLevel error made during the restore: {quiet:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http_sse_session_takes_its_messages_posted_to_any_instance() {
    let redis = RedisServer::start();
    let (a, b) = pair(&redis).await;
    let resp = within("GET /sse on a", a.client.get(a.url("/sse")).header("Accept", "text/event-stream").send());
    let resp = resp.await.unwrap();
    assert_eq!(resp.status(), 200);
    let mut events = SseReader::new(resp);
    let endpoint = events.next_within("the endpoint event").await;
    assert_eq!(endpoint.event.as_deref(), Some("endpoint"), "{endpoint:?}");
    // The client POSTs through the balancer: to b, where the stream is not.
    let post = |body: Value| {
        let url = b.url(&endpoint.data);
        let send = b.client.post(url).header("Content-Type", "application/json").body(body.to_string()).send();
        async move { within("POST /message on b", send).await.unwrap() }
    };
    assert_eq!(post(legacy_initialize(1, "2024-11-05", json!({}))).await.status(), 202);
    let init = events.next_message("the initialize result on a's stream").await;
    assert_eq!(init["result"]["protocolVersion"], json!("2024-11-05"), "{init}");
    assert_eq!(post(notification("notifications/initialized", json!({}))).await.status(), 202);
    let call = request(2, "tools/call", json!({"name": "echo", "arguments": {"text": "through b"}}));
    assert_eq!(post(call).await.status(), 202);
    let answer = events.next_message("the call's answer on a's stream").await;
    assert_eq!((answer["id"].clone(), tool_text(&answer)), (json!(2), "through b".to_owned()), "{answer}");
    assert_eq!(b.http.session_count(), 0, "b holds nothing of it");

    // A forged id is unknown on b; once the stream (the session) ends, so is the real one.
    let session = endpoint.data.split("sessionId=").nth(1).expect("a session id").to_owned();
    let forged = format!("{}0", &session[..31]);
    let forged = if forged == session { format!("{}1", &session[..31]) } else { forged };
    for id in [forged.as_str(), "not-a-session"] {
        let url = b.url(&format!("/message?sessionId={id}"));
        let resp = within("a forged id", b.client.post(url).body(request(3, "ping", json!({})).to_string()).send());
        assert_eq!(resp.await.unwrap().status(), 404, "{id}");
    }
    drop(events);
    mcpwire_testkit::eventually("the ended session is unknown on b", || async {
        let url = b.url(&endpoint.data);
        let resp = b.client.post(url).body(request(4, "ping", json!({})).to_string()).send().await.ok()?;
        (resp.status() == 404).then_some(())
    })
    .await;
}
