//! The API over the client library, against the reference server over HTTP in this process:
//! both eras, Streamable HTTP and HTTP+SSE; calls, the server's questions answered through
//! the event stream and /api/reply, cancellation, history.

use serde_json::{json, Value};

use crate::common::{inspector, Api, Reference};

#[tokio::test]
async fn connects_in_either_era_over_either_http_transport() {
    let server = Reference::start().await;
    let i = inspector().await;
    let api = Api::new(&i);
    let (status, state) = api.get("/api/state").await;
    assert_eq!(status, 200);
    assert_eq!(state["connected"], false);
    for (url, transport, era, revision) in [
        (server.url("/mcp"), "auto", "auto", "2026-07-28"),
        (server.url("/mcp"), "http", "legacy", "2025-11-25"),
        (server.url("/mcp"), "http", "modern", "2026-07-28"),
        (server.url("/sse"), "sse", "legacy", "2025-11-25"),
    ] {
        let (status, c) = api.post("/api/connect", json!({"target": url, "transport": transport, "era": era})).await;
        assert_eq!(status, 200, "{url} {transport} {era}: {c}");
        assert_eq!(c["protocolVersion"], revision, "{url} {era}: {c}");
        assert_eq!(
            c["transport"],
            if transport == "sse" {
                "sse"
            } else if transport == "http" {
                "streamable-http"
            } else {
                "http"
            }
        );
        assert_eq!(c["serverInfo"]["name"].as_str().map(|s| !s.is_empty()), Some(true), "{c}");
        assert!(c["capabilities"]["tools"].is_object(), "{c}");
        assert!(c["instructions"].as_str().unwrap_or_default().contains("reference server"), "{c}");
        assert_eq!(c["serverEntry"]["mcpServers"]["server"]["url"], url.as_str());
        let (_, state) = api.get("/api/state").await;
        assert_eq!(state["connected"], true);
        let (status, tools) = api.post("/api/request", json!({"method": "tools/list"})).await;
        assert_eq!(status, 200);
        assert!(tools["result"]["tools"].as_array().unwrap().iter().any(|t| t["name"] == "echo"), "{tools}");
    }
    let (status, _) = api.post("/api/disconnect", json!({})).await;
    assert_eq!(status, 200);
    let (status, answer) = api.post("/api/request", json!({"method": "tools/list"})).await;
    assert_eq!(status, 409, "not connected: {answer}");
}

#[tokio::test]
async fn bad_requests_are_said_so() {
    let i = inspector().await;
    let api = Api::new(&i);
    let (status, answer) = api.post("/api/connect", json!({})).await;
    assert_eq!(status, 400, "no target: {answer}");
    assert!(answer["error"].as_str().unwrap().contains("target"), "{answer}");
    let (status, answer) = api.post("/api/connect", json!({"target": "x", "era": "middle"})).await;
    assert_eq!(status, 400, "{answer}");
    let (status, answer) = api.post("/api/connect", json!({"target": "mcp serve", "transport": "http"})).await;
    assert_eq!(status, 400, "{answer}");
    let (status, answer) = api.post("/api/connect", json!({"target": 5})).await;
    assert_eq!(status, 400, "{answer}");
    let (status, answer) = api
        .post(
            "/api/connect",
            json!({"target": "http://127.0.0.1:1/mcp", "headers": [{"name": "Bad Name", "value": "x"}]}),
        )
        .await;
    assert_eq!(status, 400, "{answer}");
    assert!(answer["error"].as_str().unwrap().contains("Bad Name"), "{answer}");
    let (status, answer) = api.post("/api/reply/77", json!({"result": {}})).await;
    assert_eq!(status, 404, "{answer}");
    let (status, answer) = api.post("/api/cancel", json!({"id": "none"})).await;
    assert_eq!(status, 404, "{answer}");
}

async fn connected(api: &Api, server: &Reference, era: &str) {
    let (status, c) = api.post("/api/connect", json!({"target": server.url("/mcp"), "era": era})).await;
    assert_eq!(status, 200, "{c}");
}

fn text_of(answer: &Value) -> String {
    answer["result"]["content"]
        .as_array()
        .map(|c| c.iter().filter_map(|b| b["text"].as_str()).collect())
        .unwrap_or_default()
}

#[tokio::test]
async fn calls_tools_reads_resources_and_gets_prompts_with_history() {
    let server = Reference::start().await;
    let i = inspector().await;
    let api = Api::new(&i);
    let mut events = api.events().await;
    for era in ["legacy", "modern"] {
        connected(&api, &server, era).await;
        let (_, answer) = api
            .post("/api/request", json!({"id": format!("c1-{era}"), "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "hi"}}}))
            .await;
        assert_eq!(answer["ok"], true, "{era}: {answer}");
        assert_eq!(text_of(&answer), "hi");
        assert!(answer["durationMs"].as_f64().is_some());
        let request =
            events.until("history", |d| d["id"] == format!("c1-{era}").as_str() && d["phase"] == "request").await;
        assert_eq!(request["request"]["method"], "tools/call");
        // The messages on the wire, raw, in order: the call goes out before its answer is in.
        events
            .until("frame", |d| d["dir"] == "sent" && d["text"].as_str().unwrap_or_default().contains("\"echo\""))
            .await;
        events
            .until("frame", |d| d["dir"] == "received" && d["text"].as_str().unwrap_or_default().contains("\"hi\""))
            .await;
        let response =
            events.until("history", |d| d["id"] == format!("c1-{era}").as_str() && d["phase"] == "response").await;
        assert_eq!(response["ok"], true);

        let (_, add) = api
            .post(
                "/api/request",
                json!({"method": "tools/call", "params": {"name": "add", "arguments": {"a": 1, "b": 2}}}),
            )
            .await;
        assert_eq!(add["result"]["structuredContent"]["sum"], 3.0, "{add}");
        let (_, failed) =
            api.post("/api/request", json!({"method": "tools/call", "params": {"name": "test_error_handling"}})).await;
        assert_eq!(failed["ok"], true);
        assert_eq!(failed["result"]["isError"], true, "{failed}");
        let (_, unknown) =
            api.post("/api/request", json!({"method": "tools/call", "params": {"name": "no_such_tool"}})).await;
        assert_eq!(unknown["ok"], false, "{unknown}");
        assert!(unknown["error"]["message"].is_string());

        let (_, read) = api
            .post("/api/request", json!({"method": "resources/read", "params": {"uri": "test://static-text"}}))
            .await;
        assert_eq!(read["result"]["contents"][0]["text"], "This is the content of the static text resource.", "{read}");
        let (_, prompt) = api
            .post(
                "/api/request",
                json!({"method": "prompts/get", "params": {"name": "test_prompt_with_arguments", "arguments": {"arg1": "a", "arg2": "b"}}}),
            )
            .await;
        let text = prompt["result"]["messages"][0]["content"]["text"].as_str().unwrap_or_default();
        assert!(text.contains("arg1='a'"), "{prompt}");

        // The log level, in either era.
        let (_, level) =
            api.post("/api/request", json!({"method": "logging/setLevel", "params": {"level": "info"}})).await;
        assert_eq!(level["ok"], true, "{era}: {level}");
        let (_, bad) =
            api.post("/api/request", json!({"method": "logging/setLevel", "params": {"level": "loud"}})).await;
        assert_eq!(bad["ok"], false, "{era}: {bad}");
        // Logs reach the page as notifications.
        let (_, logged) = api
            .post("/api/request", json!({"method": "tools/call", "params": {"name": "test_tool_with_logging"}}))
            .await;
        assert_eq!(logged["ok"], true, "{logged}");
        events.until("notification", |d| d["method"] == "notifications/message").await;
        // Progress too, with the request's id.
        let (_, progressed) = api
            .post("/api/request", json!({"id": format!("p1-{era}"), "method": "tools/call", "params": {"name": "test_tool_with_progress"}}))
            .await;
        assert_eq!(progressed["ok"], true, "{progressed}");
        events.until("progress", |d| d["requestId"] == format!("p1-{era}").as_str()).await;
    }
}

#[tokio::test]
async fn the_servers_questions_are_answered_by_the_page() {
    let server = Reference::start().await;
    let i = inspector().await;
    let api = Api::new(&i);
    let mut events = api.events().await;
    for era in ["legacy", "modern"] {
        connected(&api, &server, era).await;
        // Elicitation, accepted.
        let call = api.post(
            "/api/request",
            json!({"method": "tools/call", "params": {"name": "test_elicitation", "arguments": {"message": "who?"}}}),
        );
        let answer = async {
            let asked = events.until("serverRequest", |d| d["method"] == "elicitation/create").await;
            assert_eq!(asked["params"]["message"], "who?");
            assert!(asked["params"]["requestedSchema"]["properties"]["username"].is_object(), "{asked}");
            let id = asked["id"].as_u64().unwrap();
            let (status, _) = api
                .post(
                    &format!("/api/reply/{id}"),
                    json!({"result": {"action": "accept", "content": {"username": "ada", "email": "a@b.c"}}}),
                )
                .await;
            assert_eq!(status, 200);
        };
        let ((_, result), ()) = tokio::join!(call, answer);
        let text = text_of(&result);
        assert!(text.contains("action=accept") && text.contains("ada"), "{era}: {result}");

        // Sampling, answered.
        let call = api.post(
            "/api/request",
            json!({"method": "tools/call", "params": {"name": "test_sampling", "arguments": {"prompt": "2+2?"}}}),
        );
        let answer = async {
            let asked = events.until("serverRequest", |d| d["method"] == "sampling/createMessage").await;
            let id = asked["id"].as_u64().unwrap();
            let reply =
                json!({"result": {"role": "assistant", "content": {"type": "text", "text": "four"}, "model": "me"}});
            let (status, _) = api.post(&format!("/api/reply/{id}"), reply).await;
            assert_eq!(status, 200);
        };
        let ((_, result), ()) = tokio::join!(call, answer);
        assert_eq!(text_of(&result), "LLM response: four", "{era}: {result}");

        // Declined.
        let call = api.post(
            "/api/request",
            json!({"method": "tools/call", "params": {"name": "test_elicitation", "arguments": {"message": "again"}}}),
        );
        let answer = async {
            let asked = events.until("serverRequest", |d| d["params"]["message"] == "again").await;
            let id = asked["id"].as_u64().unwrap();
            api.post(&format!("/api/reply/{id}"), json!({"result": {"action": "decline"}})).await;
            events.until("serverRequestDone", |d| d["id"] == id).await;
        };
        let ((_, result), ()) = tokio::join!(call, answer);
        assert!(text_of(&result).contains("action=decline"), "{era}: {result}");
    }
}

#[tokio::test]
async fn a_call_in_flight_can_be_cancelled() {
    let server = Reference::start().await;
    let i = inspector().await;
    let api = Api::new(&i);
    connected(&api, &server, "legacy").await;
    let mut events = api.events().await;
    let call = api.post(
        "/api/request",
        json!({"id": "slow", "method": "tools/call", "params": {"name": "test_elicitation", "arguments": {"message": "wait"}}}),
    );
    let cancel = async {
        events.until("serverRequest", |d| d["params"]["message"] == "wait").await;
        let (status, answer) = api.post("/api/cancel", json!({"id": "slow"})).await;
        assert_eq!(status, 200, "{answer}");
    };
    let ((status, result), ()) = tokio::join!(call, cancel);
    assert_eq!(status, 200);
    assert_eq!(result["ok"], false, "{result}");
    assert_eq!(result["error"]["cancelled"], true, "{result}");
    // The session is still usable.
    let (_, echo) = api
        .post("/api/request", json!({"method": "tools/call", "params": {"name": "echo", "arguments": {"text": "x"}}}))
        .await;
    assert_eq!(text_of(&echo), "x");
}

#[tokio::test]
async fn a_request_times_out_without_progress() {
    let server = Reference::start().await;
    let i = inspector().await;
    let api = Api::new(&i);
    connected(&api, &server, "modern").await;
    let (_, result) = api
        .post(
            "/api/request",
            json!({"method": "tools/call", "params": {"name": "test_elicitation", "arguments": {"message": "late"}}, "timeoutMs": 300}),
        )
        .await;
    assert_eq!(result["ok"], false, "{result}");
    assert!(result["error"]["message"].as_str().unwrap().contains("no answer within"), "{result}");
}

#[tokio::test]
async fn roots_are_offered_and_checked() {
    let i = inspector().await;
    let api = Api::new(&i);
    let (status, answer) = api
        .http
        .put(format!("{}/api/roots", api.base))
        .bearer_auth(&api.token)
        .json(&json!({"roots": [{"uri": "file:///tmp", "name": "tmp"}]}))
        .send()
        .await
        .map(|r| r.status().as_u16())
        .map(|s| (s, ()))
        .unwrap();
    assert_eq!(status, 200, "{answer:?}");
    let (_, state) = api.get("/api/state").await;
    assert_eq!(state["roots"][0]["uri"], "file:///tmp");
    let refused = api
        .http
        .put(format!("{}/api/roots", api.base))
        .bearer_auth(&api.token)
        .json(&json!({"roots": [{"uri": "http://x"}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 400);
}

#[tokio::test]
async fn task_augmented_calls_subscriptions_and_roots() {
    let server = Reference::start().await;
    let i = inspector().await;
    let api = Api::new(&i);
    let put = |roots: Value| {
        api.http.put(format!("{}/api/roots", api.base)).bearer_auth(&api.token).json(&json!({ "roots": roots })).send()
    };
    assert_eq!(put(json!([{"uri": "file:///srv/data", "name": "data"}])).await.unwrap().status(), 200);
    for era in ["legacy", "modern"] {
        connected(&api, &server, era).await;
        // A task-augmented call: the task, then its result through tasks/result.
        let (_, created) = api
            .post(
                "/api/request",
                json!({"method": "tools/call", "params": {"name": "test_task_required"}, "task": true}),
            )
            .await;
        assert_eq!(created["ok"], true, "{era}: {created}");
        let task_id =
            created["result"]["task"]["taskId"].as_str().unwrap_or_else(|| panic!("{era}: {created}")).to_owned();
        let (_, finished) =
            api.post("/api/request", json!({"method": "tasks/result", "params": {"taskId": task_id}})).await;
        assert_eq!(finished["ok"], true, "{era}: {finished}");
        let text = finished["result"]["content"][0]["text"].as_str().unwrap_or_default();
        assert!(text.contains("Ran as task"), "{era}: {finished}");
        // Roots: answered from the list the page keeps.
        let (_, roots) = api
            .post(
                "/api/request",
                json!({"method": "tools/call", "params": {"name": "test_input_required_result_list_roots"}}),
            )
            .await;
        assert!(text_of(&roots).contains("file:///srv/data"), "{era}: {roots}");
    }
    // Subscriptions (legacy): the update reaches the page.
    connected(&api, &server, "legacy").await;
    let mut events = api.events().await;
    let uri = "test://watched-resource";
    let (_, subscribed) =
        api.post("/api/request", json!({"method": "resources/subscribe", "params": {"uri": uri}})).await;
    assert_eq!(subscribed["ok"], true, "{subscribed}");
    let (_, touched) = api
        .post(
            "/api/request",
            json!({"method": "tools/call", "params": {"name": "test_touch_resource", "arguments": {"uri": uri}}}),
        )
        .await;
    assert_eq!(touched["ok"], true, "{touched}");
    let updated = events.until("notification", |d| d["method"] == "notifications/resources/updated").await;
    assert_eq!(updated["params"]["uri"], uri);
}

#[tokio::test]
async fn an_unanswered_question_is_declined_after_the_reply_timeout() {
    let server = Reference::start().await;
    let i = mcpwire_inspector::Inspector::builder()
        .reply_timeout(std::time::Duration::from_millis(200))
        .build()
        .await
        .unwrap();
    let api = Api::new(&i);
    connected(&api, &server, "legacy").await;
    let (_, result) = api
        .post("/api/request", json!({"method": "tools/call", "params": {"name": "test_elicitation", "arguments": {"message": "anyone?"}}}))
        .await;
    assert!(text_of(&result).contains("action=decline"), "{result}");
    let mut events = api.events().await;
    let asked = events.until("serverRequest", |d| d["params"]["message"] == "anyone?").await;
    events.until("serverRequestDone", |d| d["id"] == asked["id"]).await;
}

#[tokio::test]
async fn progress_resets_the_timeout() {
    let server = Reference::start().await;
    let i = inspector().await;
    let api = Api::new(&i);
    connected(&api, &server, "legacy").await;
    // Eight steps of 150 ms: 1.2 s in all, longer than the 500 ms allowed, but never 500 ms
    // without progress.
    let (_, result) = api
        .post(
            "/api/request",
            json!({"method": "tools/call", "params": {"name": "test_long_running_task", "arguments": {"steps": 8, "delayMs": 150}}, "timeoutMs": 500}),
        )
        .await;
    assert_eq!(result["ok"], true, "{result}");
    assert!(result["durationMs"].as_f64().unwrap() > 500.0, "{result}");
    assert!(text_of(&result).contains("Counted to 8"), "{result}");
}

#[tokio::test]
async fn completions_are_offered_for_prompt_arguments_and_template_variables() {
    let server = Reference::start().await;
    let i = inspector().await;
    let api = Api::new(&i);
    for era in ["legacy", "modern"] {
        let (status, c) = api.post("/api/connect", json!({"target": server.url("/mcp"), "era": era})).await;
        assert_eq!(status, 200, "{c}");
        // The page asks only when the server declares the capability.
        assert!(c["capabilities"]["completions"].is_object(), "{era}: {c}");
        let values = |answer: &Value| -> Vec<String> {
            answer["result"]["completion"]["values"]
                .as_array()
                .map(|v| v.iter().filter_map(|s| s.as_str().map(str::to_owned)).collect())
                .unwrap_or_default()
        };
        let (_, prompt) = api
            .post(
                "/api/request",
                json!({"method": "completion/complete", "params": {
                    "ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"},
                    "argument": {"name": "arg1", "value": "te"}}}),
            )
            .await;
        assert_eq!(prompt["ok"], true, "{era}: {prompt}");
        let got = values(&prompt);
        assert!(got.contains(&"test1".to_owned()) && got.contains(&"test2".to_owned()), "{era}: {prompt}");
        assert!(!got.contains(&"value".to_owned()), "filtered by what was typed: {prompt}");
        let (_, template) = api
            .post(
                "/api/request",
                json!({"method": "completion/complete", "params": {
                    "ref": {"type": "ref/resource", "uri": "test://template/{id}/data"},
                    "argument": {"name": "id", "value": "1"}}}),
            )
            .await;
        assert_eq!(template["ok"], true, "{era}: {template}");
        let got = values(&template);
        assert!(got.contains(&"123".to_owned()), "{era}: {template}");
    }
}

#[tokio::test]
async fn headers_given_at_connect_reach_the_http_server() {
    // The reference server behind a layer that notes the header on every request.
    let seen = std::sync::Arc::new(parking_lot::Mutex::new(Vec::<String>::new()));
    let record = seen.clone();
    let http = mcpwire_http::McpHttp::new(mcpwire_reference::server(), mcpwire_http::HttpConfig::default());
    let app = http.router().layer(axum::middleware::from_fn(
        move |request: axum::extract::Request, next: axum::middleware::Next| {
            let record = record.clone();
            async move {
                if let Some(value) = request.headers().get("x-inspector-check").and_then(|v| v.to_str().ok()) {
                    record.lock().push(value.to_owned());
                }
                next.run(request).await
            }
        },
    ));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let server = tokio::spawn(async move { axum::serve(listener, app).await });
    let i = inspector().await;
    let api = Api::new(&i);
    let (status, c) = api
        .post(
            "/api/connect",
            json!({"target": format!("http://{addr}/mcp"), "headers": [{"name": "X-Inspector-Check", "value": " hello-42 "}]}),
        )
        .await;
    assert_eq!(status, 200, "{c}");
    assert_eq!(c["serverEntry"]["mcpServers"]["server"]["headers"]["X-Inspector-Check"], "hello-42", "{c}");
    let (_, answer) = api
        .post("/api/request", json!({"method": "tools/call", "params": {"name": "echo", "arguments": {"text": "hi"}}}))
        .await;
    assert_eq!(answer["ok"], true, "{answer}");
    let seen = seen.lock().clone();
    // The handshake and the call, at least, each with the header.
    assert!(seen.len() >= 2, "{seen:?}");
    assert!(seen.iter().all(|v| v == "hello-42"), "{seen:?}");
    server.abort();
}
