//! Host and Origin checks (DNS rebinding), body limits and malformed bodies.

use crate::common;

use common::*;
use mcpwire_http::HttpConfig;
use serde_json::json;

fn list() -> serde_json::Value {
    modern_request(1, "tools/list", json!({}))
}

#[tokio::test]
async fn foreign_host_is_403_on_every_route() {
    let s = TestServer::reference().await;
    let evil = "evil.example.com";
    let resp = within("POST /mcp", s.post_modern(&list()).header("Host", evil).send()).await.unwrap();
    assert_eq!(resp.status(), 403, "POST /mcp");
    let resp = s.client.get(s.url("/mcp")).header("Host", evil).header("Accept", "text/event-stream").send();
    assert_eq!(within("GET /mcp", resp).await.unwrap().status(), 403, "GET /mcp");
    let resp = s.client.delete(s.url("/mcp")).header("Host", evil).header("Mcp-Session-Id", "x").send();
    assert_eq!(within("DELETE /mcp", resp).await.unwrap().status(), 403, "DELETE /mcp");
    let resp = s.client.get(s.url("/sse")).header("Host", evil).send();
    assert_eq!(within("GET /sse", resp).await.unwrap().status(), 403, "GET /sse");
    let resp = s.client.post(s.url("/message?sessionId=x")).header("Host", evil).body("{}").send();
    assert_eq!(within("POST /message", resp).await.unwrap().status(), 403, "POST /message");
    // A look-alike name is not loopback either.
    let resp = s.post_modern(&list()).header("Host", format!("127.0.0.1.evil.example.com:{}", s.addr.port()));
    assert_eq!(within("POST", resp.send()).await.unwrap().status(), 403, "look-alike host");
    assert_eq!(s.http.session_count(), 0, "a refused GET /sse must not open a session");
}

#[tokio::test]
async fn foreign_origin_with_a_good_host_is_403() {
    let s = TestServer::reference().await;
    let resp = s.post_modern(&list()).header("Origin", "http://evil.example.com");
    assert_eq!(within("POST", resp.send()).await.unwrap().status(), 403);
    let resp = s.post_modern(&list()).header("Origin", format!("http://evil.example.com:{}", s.addr.port()));
    assert_eq!(within("POST", resp.send()).await.unwrap().status(), 403);
    let resp = s.client.get(s.url("/sse")).header("Origin", "https://evil.example.com").send();
    assert_eq!(within("GET /sse", resp).await.unwrap().status(), 403);
}

/// `Origin: null` is what a sandboxed iframe or a `file:` page of any site sends; it names
/// no allowed origin, so a browser page must not reach the server through it.
#[tokio::test]
async fn null_origin_is_403() {
    let s = TestServer::reference().await;
    let resp = s.post_modern(&list()).header("Origin", "null");
    assert_eq!(within("POST", resp.send()).await.unwrap().status(), 403);
}

#[tokio::test]
async fn good_host_and_origin_are_served() {
    let s = TestServer::reference().await;
    let port = s.addr.port();
    for (host, origin) in [
        (format!("127.0.0.1:{port}"), format!("http://127.0.0.1:{port}")),
        (format!("localhost:{port}"), format!("http://localhost:{port}")),
        ("localhost".to_owned(), "http://localhost".to_owned()),
    ] {
        let resp = s.post_modern(&list()).header("Host", host.as_str()).header("Origin", origin.as_str());
        let resp = within("POST", resp.send()).await.unwrap();
        assert!(resp.status().is_success(), "Host {host}, Origin {origin}: {}", resp.status());
        let answer = final_message(resp).await;
        assert_eq!(answer["result"]["resultType"], json!("complete"), "{answer}");
    }
}

#[tokio::test]
async fn body_over_the_limit_is_413_and_the_server_keeps_serving() {
    let config = HttpConfig { max_body: 1024, ..HttpConfig::default() };
    let s = TestServer::reference_with(config).await;
    let big = modern_request(1, "tools/call", json!({"name": "echo", "arguments": {"text": "x".repeat(4096)}}));
    let resp = within("POST big", s.post_modern(&big).send()).await.unwrap();
    assert_eq!(resp.status(), 413);

    let resp = within("POST small", s.post_modern(&list()).send()).await.unwrap();
    assert_eq!(resp.status(), 200);
    let answer = final_message(resp).await;
    assert_eq!(answer["result"]["resultType"], json!("complete"), "{answer}");

    // The same limit on the HTTP+SSE POST endpoint.
    let resp = s.client.get(s.url("/sse")).send();
    let mut events = SseReader::new(within("GET /sse", resp).await.unwrap());
    let endpoint = events.next_within("endpoint").await.data;
    let resp = s.client.post(s.url(&endpoint)).header("Content-Type", "application/json").body(big.to_string()).send();
    assert_eq!(within("POST /message big", resp).await.unwrap().status(), 413);
}

#[tokio::test]
async fn non_json_body_is_400_parse_error() {
    let s = TestServer::reference().await;
    let resp = s
        .client
        .post(s.url("/mcp"))
        .header("Content-Type", "application/json")
        .header("Accept", ACCEPT_BOTH)
        .header("MCP-Protocol-Version", MODERN)
        .header("Mcp-Method", "tools/list")
        .body("{this is not json")
        .send();
    let resp = within("POST", resp).await.unwrap();
    assert_eq!(resp.status(), 400);
    let body: serde_json::Value = serde_json::from_str(&within("body", resp.text()).await.unwrap()).expect("JSON body");
    assert_eq!(body["jsonrpc"], json!("2.0"), "{body}");
    assert_eq!(body["error"]["code"], json!(-32700), "{body}");
    assert!(body["id"].is_null(), "{body}");
}

#[tokio::test]
async fn text_plain_is_415() {
    let s = TestServer::reference().await;
    let resp = s
        .client
        .post(s.url("/mcp"))
        .header("Content-Type", "text/plain")
        .header("Accept", ACCEPT_BOTH)
        .header("MCP-Protocol-Version", MODERN)
        .header("Mcp-Method", "tools/list")
        .body(list().to_string())
        .send();
    assert_eq!(within("POST", resp).await.unwrap().status(), 415);
}

/// A header the server checks, given twice, is refused: were the first read here and the
/// last by a proxy in front (or the other way round), the two could disagree.
#[tokio::test]
async fn a_checked_header_given_twice_is_400() {
    let s = TestServer::reference().await;
    let call = modern_request(1, "tools/call", json!({"name": "echo", "arguments": {"text": "x"}}));
    for (header, second) in [
        ("Mcp-Method", "tools/list"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "other"),
        ("MCP-Protocol-Version", "2025-06-18"),
    ] {
        let resp = within(header, s.post_modern(&call).header(header, second).send()).await.unwrap();
        assert_eq!(resp.status(), 400, "{header} given twice");
        let body = within("body", resp.text()).await.unwrap();
        assert!(body.contains("more than once"), "{header}: {body}");
    }
    let session = s.legacy_session("2025-06-18", json!({})).await;
    let legacy_list = request(2, "tools/list", json!({}));
    let resp = s.post_legacy(&session, Some("2025-06-18"), &legacy_list).header("Mcp-Session-Id", &session);
    assert_eq!(within("Mcp-Session-Id twice", resp.send()).await.unwrap().status(), 400);
    let resp = s.post_modern(&list()).header("Origin", "http://127.0.0.1").header("Origin", "http://evil.example.com");
    assert_eq!(within("Origin twice", resp.send()).await.unwrap().status(), 403);
    // Once each, the same requests are served.
    let resp = within("once", s.post_modern(&call).send()).await.unwrap();
    assert_eq!(tool_text(&final_message(resp).await), "x");
}

/// `MCP-Protocol-Version` given twice is answered as every other checked header given twice
/// (`Mcp-Method`, `Mcp-Name`): the same status, a JSON-RPC `-32020` (HeaderMismatch) echoing
/// the request's id, not a bare `400 text/plain` a dual-era client cannot read.
#[tokio::test]
async fn a_protocol_version_given_twice_is_a_header_mismatch_like_the_others() {
    let s = TestServer::reference().await;
    let call = modern_request(7, "tools/call", json!({"name": "echo", "arguments": {"text": "x"}}));
    let method_twice = s.post_modern(&call).header("Mcp-Method", "tools/call").send();
    let method_twice = within("Mcp-Method twice", method_twice).await.unwrap();
    let status = method_twice.status().as_u16();
    let error = expect_error(method_twice, status, -32020, &json!(7), "Mcp-Method twice").await;
    assert!(error["message"].as_str().unwrap().contains("more than once"), "{error}");
    for second in [MODERN, "2025-06-18"] {
        let resp = s.post_modern(&call).header("MCP-Protocol-Version", second).send();
        let resp = within("MCP-Protocol-Version twice", resp).await.unwrap();
        let error = expect_error(resp, status, -32020, &json!(7), "MCP-Protocol-Version twice").await;
        assert!(error["message"].as_str().unwrap().contains("more than once"), "{error}");
    }
    // The same on a legacy session's request.
    let session = s.legacy_session("2025-06-18", json!({})).await;
    let legacy_list = request(2, "tools/list", json!({}));
    let resp = s.post_legacy(&session, Some("2025-06-18"), &legacy_list).header("MCP-Protocol-Version", "2025-06-18");
    let resp = within("legacy MCP-Protocol-Version twice", resp.send()).await.unwrap();
    expect_error(resp, status, -32020, &json!(2), "legacy MCP-Protocol-Version twice").await;
}

/// A body nested 100,000 deep is not a batch of one invalid element (`200`) but an invalid
/// body: `400` with the JSON-RPC error (`-32600`, id null), as a body that does not parse is.
#[tokio::test]
async fn a_body_nested_too_deep_is_400_with_a_json_rpc_error() {
    let s = TestServer::reference().await;
    let session = s.legacy_session("2025-03-26", json!({})).await;
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    for (what, version, with_session) in
        [("no version, no session", None, false), ("a 2025-03-26 session", Some("2025-03-26"), true)]
    {
        let mut post = s
            .client
            .post(s.url("/mcp"))
            .header("Content-Type", "application/json")
            .header("Accept", ACCEPT_BOTH)
            .body(deep.clone());
        if let Some(version) = version {
            post = post.header("MCP-Protocol-Version", version);
        }
        if with_session {
            post = post.header("Mcp-Session-Id", &session);
        }
        let resp = within(what, post.send()).await.unwrap();
        expect_error(resp, 400, -32600, &serde_json::Value::Null, what).await;
    }
    // A batch as deep as a value may be is still read element by element.
    let batch = json!([request(3, "tools/list", json!({})), [[1]]]);
    let resp = within("a shallow batch", s.post_legacy(&session, Some("2025-03-26"), &batch).send()).await.unwrap();
    assert_eq!(resp.status(), 200);
    let answers = final_message(resp).await;
    let answers = answers.as_array().unwrap_or_else(|| panic!("a batch of answers: {answers}"));
    assert!(answers.iter().any(|a| a["id"] == 3 && a.get("result").is_some()), "{answers:?}");
    assert!(answers.iter().any(|a| a["error"]["code"] == -32600), "{answers:?}");
}

/// Host and Origin are judged on the headers alone: a refused request is answered before
/// its body arrives (here: a body announced and never sent).
#[tokio::test]
async fn a_foreign_host_is_refused_before_the_body_is_read() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let s = TestServer::reference().await;
    for (path, host) in [("/mcp", "evil.example.com"), ("/message?sessionId=x", "evil.example.com")] {
        let mut tcp = tokio::net::TcpStream::connect(s.addr).await.unwrap();
        let head = format!(
            "POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n{{"
        );
        tcp.write_all(head.as_bytes()).await.unwrap();
        let mut answer = vec![0; 64];
        let n = within("the answer before the body", tcp.read(&mut answer)).await.unwrap();
        let status_line = String::from_utf8_lossy(&answer[..n]).lines().next().unwrap_or_default().to_owned();
        assert!(status_line.starts_with("HTTP/1.1 403"), "{path}: {status_line}");
    }
}
