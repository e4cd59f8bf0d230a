//! What the API adds to a request's answer and history: the structured content checked
//! against the tool's output schema, the HTTP exchanges (headers) of an HTTP server; and
//! resource subscriptions in either era (2026-07-28: a `subscriptions/listen` stream).

use serde_json::{json, Value};

use crate::common::{inspector, Api, Reference};
use crate::lying::server_with_a_lying_tool;

#[tokio::test]
async fn structured_content_is_checked_against_the_output_schema() {
    let server = Reference::start_with(server_with_a_lying_tool()).await;
    let i = inspector().await;
    let api = Api::new(&i);
    for era in ["legacy", "modern"] {
        let (status, c) = api.post("/api/connect", json!({"target": server.url("/mcp"), "era": era})).await;
        assert_eq!(status, 200, "{c}");
        let (_, tools) = api.post("/api/request", json!({"method": "tools/list"})).await;
        assert!(tools["result"]["tools"].as_array().unwrap().iter().any(|t| t["name"] == "bad_sum"), "{tools}");

        let (_, good) = api
            .post(
                "/api/request",
                json!({"method": "tools/call", "params": {"name": "add", "arguments": {"a": 1, "b": 2}}}),
            )
            .await;
        assert_eq!(good["ok"], true, "{good}");
        assert_eq!(good["result"]["structuredContent"]["sum"], 3.0, "{good}");
        assert_eq!(good["outputCheck"], json!({"valid": true, "errors": []}), "{era}: {good}");

        let (_, bad) = api
            .post("/api/request", json!({"method": "tools/call", "params": {"name": "bad_sum", "arguments": {}}}))
            .await;
        assert_eq!(bad["ok"], true, "the inspector shows what came, checked: {bad}");
        assert_eq!(bad["outputCheck"]["valid"], false, "{era}: {bad}");
        let errors = bad["outputCheck"]["errors"].as_array().unwrap();
        assert!(errors.iter().any(|e| e.as_str().unwrap().contains("/sum")), "{bad}");

        let (_, plain) = api
            .post(
                "/api/request",
                json!({"method": "tools/call", "params": {"name": "echo", "arguments": {"text": "x"}}}),
            )
            .await;
        assert!(plain.get("outputCheck").is_none(), "no output schema, no check: {plain}");
    }
}

fn header<'a>(headers: &'a Value, name: &str) -> Option<&'a str> {
    headers.as_array()?.iter().find(|h| h[0].as_str() == Some(name)).and_then(|h| h[1].as_str())
}

#[tokio::test]
async fn history_shows_the_http_exchanges_of_a_request() {
    let server = Reference::start().await;
    let i = inspector().await;
    let api = Api::new(&i);
    let mut events = api.events().await;
    for era in ["legacy", "modern"] {
        let headers =
            json!([{"name": "X-Trace", "value": "abc"}, {"name": "Authorization", "value": "Bearer secret-token"}]);
        let connect = json!({"target": server.url("/mcp"), "era": era, "headers": headers});
        let (status, c) = api.post("/api/connect", connect).await;
        assert_eq!(status, 200, "{c}");
        let id = format!("h-{era}");
        let (_, answer) = api.post("/api/request", json!({"id": id, "method": "tools/list"})).await;
        assert_eq!(answer["ok"], true, "{answer}");
        let http = answer["http"].as_array().unwrap_or_else(|| panic!("{era}: no HTTP exchanges: {answer}"));
        assert_eq!(http.len(), 1, "{answer}");
        let x = &http[0];
        assert_eq!(x["method"], "POST");
        assert_eq!(x["url"], server.url("/mcp"));
        assert_eq!(x["status"], 200, "{x}");
        assert_eq!(header(&x["requestHeaders"], "x-trace"), Some("abc"), "{x}");
        assert_eq!(header(&x["requestHeaders"], "content-type"), Some("application/json"), "{x}");
        // A credential is not shown (the page may be on a screen, or in a screenshot).
        assert_eq!(header(&x["requestHeaders"], "authorization"), Some("Bearer (hidden)"), "{x}");
        assert!(!x.to_string().contains("secret-token"), "{x}");
        assert!(header(&x["responseHeaders"], "content-type").is_some(), "{x}");
        assert!(x["durationMs"].as_f64().unwrap() >= 0.0);
        if era == "legacy" {
            assert!(header(&x["requestHeaders"], "mcp-session-id").is_some(), "{x}");
        } else {
            assert_eq!(header(&x["requestHeaders"], "mcp-method"), Some("tools/list"), "{x}");
        }
        // The history entry carries them too.
        let entry = events.until("history", |d| d["id"] == id.as_str() && d["phase"] == "response").await;
        assert_eq!(entry["http"], answer["http"]);
    }
}

#[tokio::test]
async fn an_http_sse_request_shows_its_post() {
    let server = Reference::start().await;
    let i = inspector().await;
    let api = Api::new(&i);
    let (status, _) = api.post("/api/connect", json!({"target": server.url("/sse"), "transport": "sse"})).await;
    assert_eq!(status, 200);
    let (_, answer) = api.post("/api/request", json!({"method": "tools/list"})).await;
    assert_eq!(answer["ok"], true, "{answer}");
    // HTTP+SSE: the POST to the message endpoint is answered 202, the result comes on the
    // event stream.
    let http = answer["http"].as_array().unwrap_or_else(|| panic!("the POST of an HTTP+SSE request: {answer}"));
    assert!(!http.is_empty() && http.iter().all(|x| x["status"] == 202), "{answer}");
}

#[tokio::test]
async fn resource_subscriptions_in_either_era() {
    let server = Reference::start().await;
    let i = inspector().await;
    let api = Api::new(&i);
    let mut events = api.events().await;
    let uri = "test://watched-resource";
    for era in ["legacy", "modern"] {
        let (status, c) = api.post("/api/connect", json!({"target": server.url("/mcp"), "era": era})).await;
        assert_eq!(status, 200, "{c}");
        let (_, sub) = api
            .post(
                "/api/request",
                json!({"id": format!("s-{era}"), "method": "resources/subscribe", "params": {"uri": uri}}),
            )
            .await;
        assert_eq!(sub["ok"], true, "{era}: {sub}");
        if era == "modern" {
            assert_eq!(sub["result"]["listen"]["honoured"]["resourceSubscriptions"], json!([uri]), "{sub}");
            // The stream went out as subscriptions/listen, not resources/subscribe.
            events
                .until("frame", |d| d["dir"] == "sent" && d["text"].as_str().unwrap().contains("subscriptions/listen"))
                .await;
        }
        let touch =
            json!({"method": "tools/call", "params": {"name": "test_touch_resource", "arguments": {"uri": uri}}});
        let (_, touched) = api.post("/api/request", touch.clone()).await;
        assert_eq!(touched["ok"], true, "{touched}");
        let updated = events
            .until("notification", |d| d["method"] == "notifications/resources/updated" && d["params"]["uri"] == uri)
            .await;
        assert_eq!(updated["params"]["uri"], uri, "{era}");
        let (_, unsub) =
            api.post("/api/request", json!({"method": "resources/unsubscribe", "params": {"uri": uri}})).await;
        assert_eq!(unsub["ok"], true, "{era}: {unsub}");
        if era == "modern" {
            let (_, again) =
                api.post("/api/request", json!({"method": "resources/unsubscribe", "params": {"uri": uri}})).await;
            assert_eq!(again["ok"], false, "not subscribed any more: {again}");
        }
    }
}
