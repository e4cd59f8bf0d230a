//! Our client over HTTP against our HTTP server, in every era and transport: the client
//! transport (`mcpwire_transport::http`) and the server (`mcpwire_http`) talking for real on 127.0.0.1.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcpwire_client::{Client, ClientSession};
use mcpwire_http::{HttpConfig, McpHttp};
use mcpwire_protocol::types::{ContentBlock, CreateMessageResult, ElicitResult, Role, SamplingContent};
use mcpwire_protocol::{Era, ProtocolVersion};
use mcpwire_transport::http::{self, HttpMode, HttpOptions};
use serde_json::json;

const WAIT: Duration = Duration::from_secs(20);

async fn serve() -> (String, McpHttp, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let http = McpHttp::new(mcpwire_reference::server(), HttpConfig::default());
    let served = http.clone();
    let task = tokio::spawn(async move {
        let _ = served.serve(listener).await;
    });
    (format!("http://{addr}"), http, task)
}

fn client(pin: Option<ProtocolVersion>) -> Client {
    let mut b = Client::builder("http-test", "1")
        .request_timeout(Duration::from_secs(10))
        .sampling(|_| async {
            Ok(CreateMessageResult {
                role: Role::Assistant,
                content: SamplingContent::Single(ContentBlock::text("Paris")),
                model: "test-model".into(),
                stop_reason: Some("endTurn".into()),
                meta: None,
            })
        })
        .elicitation(|_| async {
            Ok(ElicitResult {
                action: "accept".into(),
                content: Some(
                    serde_json::from_value(json!({"username": "ann", "email": "a@b.c", "name": "Ann"})).unwrap(),
                ),
                meta: None,
            })
        });
    if let Some(v) = pin {
        b = b.protocol_version(v);
    }
    b.build()
}

async fn connect(url: &str, pin: Option<ProtocolVersion>, mode: HttpMode) -> ClientSession {
    let conn = http::connect(url, HttpOptions { mode, ..HttpOptions::default() }).unwrap();
    tokio::time::timeout(WAIT, client(pin).connect(conn)).await.expect("connect timed out").expect("connect failed")
}

fn text(result: &mcpwire_protocol::types::CallToolResult) -> String {
    result.content.iter().filter_map(ContentBlock::as_text).collect()
}

/// The calls every era must answer the same way.
async fn exercise(session: &ClientSession) {
    let tools = session.list_all_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "echo"));
    let r = session.call_tool("echo", json!({"text": "héllo"})).await.unwrap();
    assert_eq!(text(&r), "héllo");
    let r = session.call_tool("test_sampling", json!({"prompt": "capital?"})).await.unwrap();
    assert_eq!(text(&r), "LLM response: Paris", "{r:?}");
    let r = session.call_tool("test_elicitation", json!({"message": "who?"})).await.unwrap();
    assert!(text(&r).contains("action=accept"), "{r:?}");
    let r = session.read_resource("test://template/5/data").await.unwrap();
    assert!(r.contents[0].text.as_deref().unwrap_or_default().contains("\"5\""));
    let progress = Arc::new(Mutex::new(Vec::new()));
    let seen = progress.clone();
    let r = session
        .call_tool_with_progress("test_tool_with_progress", json!({}), move |p| seen.lock().unwrap().push(p.progress))
        .await
        .unwrap();
    assert_eq!(text(&r), "Progress test completed");
    assert_eq!(*progress.lock().unwrap(), [0.0, 50.0, 100.0]);
}

#[tokio::test]
async fn modern_client_is_detected_and_stateless() {
    let (url, http, _task) = serve().await;
    let session = connect(&format!("{url}/mcp"), None, HttpMode::Auto).await;
    assert_eq!(session.era(), Era::Modern);
    exercise(&session).await;
    // Custom x-mcp-header parameters are sent from the tool's annotations.
    let r = session.call_tool("test_header_echo", json!({"region": "eu-west ✓"})).await.unwrap();
    assert_eq!(text(&r), "region=eu-west ✓");
    assert_eq!(http.session_count(), 0, "no session is minted for 2026-07-28");
    session.close().await.unwrap();
}

#[tokio::test]
async fn legacy_streamable_http_with_sessions() {
    for version in [ProtocolVersion::V2025_03_26, ProtocolVersion::V2025_06_18, ProtocolVersion::V2025_11_25] {
        let (url, http, _task) = serve().await;
        let session = connect(&format!("{url}/mcp"), Some(version), HttpMode::Auto).await;
        assert_eq!(session.protocol_version(), version);
        if version >= ProtocolVersion::V2025_06_18 {
            exercise(&session).await;
        } else {
            let r = session.call_tool("echo", json!({"text": "x"})).await.unwrap();
            assert_eq!(text(&r), "x");
        }
        assert_eq!(http.session_count(), 1);
        session.close().await.unwrap();
        // DELETE on close ends the session on the server.
        mcpwire_testkit::eventually(format!("{version}: the session was deleted"), || async {
            (http.session_count() == 0).then_some(())
        })
        .await;
    }
}

#[tokio::test]
async fn sse_polling_is_resumed_with_last_event_id() {
    let (url, _http, _task) = serve().await;
    let session = connect(&format!("{url}/mcp"), Some(ProtocolVersion::V2025_11_25), HttpMode::Auto).await;
    // The server closes this call's stream at once; the answer comes on the resumed stream.
    let r = tokio::time::timeout(WAIT, session.call_tool("test_reconnection", json!({}))).await.unwrap().unwrap();
    assert!(text(&r).starts_with("Reconnection test completed"), "{r:?}");
    session.close().await.unwrap();
}

#[tokio::test]
async fn http_sse_transport_2024_11_05() {
    let (url, _http, _task) = serve().await;
    // Given the SSE endpoint, Auto mode finds that it takes no POST and falls back to HTTP+SSE.
    let session = connect(&format!("{url}/sse"), Some(ProtocolVersion::V2024_11_05), HttpMode::Auto).await;
    assert_eq!(session.protocol_version(), ProtocolVersion::V2024_11_05);
    let r = session.call_tool("echo", json!({"text": "over sse"})).await.unwrap();
    assert_eq!(text(&r), "over sse");
    let r = session.call_tool("test_sampling", json!({"prompt": "q"})).await.unwrap();
    assert_eq!(text(&r), "LLM response: Paris");
    session.close().await.unwrap();
    // Unpinned over HTTP+SSE: our dual-era server answers the discovery probe on any transport.
    let auto = connect(&format!("{url}/sse"), None, HttpMode::Sse).await;
    assert_eq!(auto.era(), Era::Modern);
    let r = auto.call_tool("echo", json!({"text": "modern over sse"})).await.unwrap();
    assert_eq!(text(&r), "modern over sse");
    auto.close().await.unwrap();
}

#[tokio::test]
async fn unreachable_server_fails_fast() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    drop(listener);
    let conn = http::connect(&url, HttpOptions::default()).unwrap();
    let r = tokio::time::timeout(WAIT, client(None).connect(conn)).await.expect("no hang");
    assert!(r.is_err());
}

#[tokio::test]
async fn slow_requests_are_answered_504_and_cancelled() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let server = mcpwire_server::Server::builder("slow", "1").build();
    let dropped = Arc::new(AtomicBool::new(false));
    struct OnDrop(Arc<AtomicBool>);
    impl Drop for OnDrop {
        fn drop(&mut self) {
            self.0.store(true, Ordering::SeqCst);
        }
    }
    let flag = dropped.clone();
    server.add_tool(mcpwire_protocol::types::Tool::new("slow", "sleeps", json!({"type": "object"})), move |_, _| {
        let guard = OnDrop(flag.clone());
        async move {
            let _guard = guard;
            tokio::time::sleep(Duration::from_secs(30)).await;
            Ok(mcpwire_protocol::types::CallToolResult::text("late"))
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let config = HttpConfig { request_timeout: Duration::from_millis(200), ..HttpConfig::default() };
    let http = McpHttp::new(server, config);
    tokio::spawn(async move {
        let _ = http.serve(listener).await;
    });
    for pin in [None, Some(ProtocolVersion::V2025_06_18)] {
        dropped.store(false, Ordering::SeqCst);
        let session = connect(&format!("http://{addr}/mcp"), pin, HttpMode::Auto).await;
        let err = session.call_tool("slow", json!({})).await.unwrap_err();
        assert!(err.to_string().contains("timed out"), "{pin:?}: {err}");
        mcpwire_testkit::eventually(format!("{pin:?}: the handler was cancelled"), || async {
            dropped.load(Ordering::SeqCst).then_some(())
        })
        .await;
        session.close().await.unwrap();
    }
}

#[tokio::test]
async fn a_tool_with_invalid_header_annotations_is_dropped_where_headers_are_sent() {
    let server = mcpwire_server::Server::builder("s", "1").build();
    let schema = |annotated: serde_json::Value| json!({"type": "object", "properties": {"region": annotated}});
    let tool = |name: &str, annotated| mcpwire_protocol::types::Tool::new(name, name, schema(annotated));
    let answer = |_, _| async { Ok(mcpwire_protocol::types::CallToolResult::text("ok")) };
    server.add_tool(tool("good", json!({"type": "string", "x-mcp-header": "Region"})), answer);
    // An object cannot travel in a header: the annotation is invalid.
    server.add_tool(tool("bad", json!({"type": "object", "x-mcp-header": "Region"})), answer);
    server.add_tool(tool("unnamed", json!({"type": "string", "x-mcp-header": "not a header"})), answer);

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let http = McpHttp::new(server.clone(), HttpConfig::default());
    let _task = tokio::spawn(async move { http.serve(listener).await });
    let names = |tools: Vec<mcpwire_protocol::types::Tool>| tools.into_iter().map(|t| t.name).collect::<Vec<_>>();

    // Over HTTP in 2026-07-28 the client sends Mcp-Param-* headers: the tools whose
    // annotations it cannot honour are not offered to the application.
    let session = connect(&url, None, HttpMode::Auto).await;
    assert_eq!(session.era(), Era::Modern);
    assert_eq!(names(session.list_all_tools().await.unwrap()), ["good"]);
    assert_eq!(text(&session.call_tool("good", json!({"region": "eu"})).await.unwrap()), "ok");
    session.close().await.unwrap();

    // Over a transport without headers, the annotations mean nothing: every tool is listed.
    let (client_end, server_end) = mcpwire_transport::memory::pair();
    let _served = tokio::spawn(async move { server.serve(server_end).await });
    let session = tokio::time::timeout(WAIT, client(None).connect(client_end)).await.unwrap().unwrap();
    let mut listed = names(session.list_all_tools().await.unwrap());
    listed.sort();
    assert_eq!(listed, ["bad", "good", "unnamed"]);
}

/// A server mounted at `/mcp/` behind a redirect from `/mcp` (as Starlette answers a path
/// without its slash), and behind a second one to another name of the same host: the client
/// follows both in every era (every POST, the GET stream, the DELETE), and shows its bearer
/// token only to the host it was given for, as reqwest did.
#[tokio::test]
async fn redirects_are_followed_and_credentials_stay_with_their_host() {
    use axum::extract::Request;
    use axum::http::{header, StatusCode};
    use axum::routing::any;

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let http =
        McpHttp::new(mcpwire_reference::server(), HttpConfig { endpoint: "/mcp/".into(), ..HttpConfig::default() });
    // Each request that reached the endpoint: its method, the host it named, whether it
    // carried the token.
    let seen = Arc::new(Mutex::new(Vec::<(String, String, bool)>::new()));
    let record = seen.clone();
    let router = http
        .router()
        .route("/mcp", any(|| async { (StatusCode::TEMPORARY_REDIRECT, [(header::LOCATION, "/mcp/")]) }))
        .route("/loop", any(|| async { (StatusCode::TEMPORARY_REDIRECT, [(header::LOCATION, "/loop")]) }))
        .route(
            "/away",
            any(move || async move {
                (StatusCode::PERMANENT_REDIRECT, [(header::LOCATION, format!("http://localhost:{port}/mcp/"))])
            }),
        )
        .layer(axum::middleware::map_request(move |request: Request| {
            if request.uri().path() == "/mcp/" {
                let host = request.headers().get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("");
                let bearer = request.headers().get(header::AUTHORIZATION).is_some_and(|a| a == "Bearer secret");
                record.lock().unwrap().push((request.method().to_string(), host.to_owned(), bearer));
            }
            std::future::ready(request)
        }));
    let served = tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    for (path, host, bearer) in [("/mcp", "127.0.0.1", true), ("/away", "localhost", false)] {
        for pin in [None, Some(ProtocolVersion::V2025_06_18)] {
            seen.lock().unwrap().clear();
            let options = HttpOptions { bearer: Some("secret".into()), ..HttpOptions::default() };
            let conn = http::connect(&format!("http://127.0.0.1:{port}{path}"), options).unwrap();
            let session =
                tokio::time::timeout(WAIT, client(pin).connect(conn)).await.expect("connect timed out").unwrap();
            let r = session.call_tool("echo", json!({"text": "redirected"})).await.unwrap();
            assert_eq!(text(&r), "redirected", "{path} {pin:?}");
            session.close().await.unwrap();
            let seen = seen.lock().unwrap().clone();
            let methods: Vec<&str> = seen.iter().map(|(m, _, _)| m.as_str()).collect();
            assert!(methods.contains(&"POST"), "{path} {pin:?}: {seen:?}");
            if pin.is_some() {
                // The legacy session's GET stream was redirected as well as its POSTs.
                assert!(methods.contains(&"GET"), "{path} {pin:?}: {seen:?}");
            }
            for (method, named, shown) in &seen {
                assert_eq!(named, &format!("{host}:{port}"), "{path} {pin:?} {method}");
                assert_eq!(*shown, bearer, "{path} {pin:?} {method}: the token shown to {named}");
            }
        }
    }
    // A redirect to itself ends, with the reason.
    let conn = http::connect(&format!("http://127.0.0.1:{port}/loop"), HttpOptions::default()).unwrap();
    let e = tokio::time::timeout(WAIT, client(None).connect(conn)).await.expect("no hang").unwrap_err();
    assert!(e.to_string().contains("more than 10 redirects"), "{e}");
    served.abort();
}
