//! The security points of the inspector, each over raw HTTP on 127.0.0.1: loopback by
//! default, the token on every route under /api/ (not from a query string or a cookie), the
//! Origin and Host checks, the page's Content-Security-Policy.

use mcpwire_inspector::{Inspector, InspectorError};

use crate::common::{inspector, raw};

#[tokio::test]
async fn binds_loopback_on_a_free_port_with_a_fresh_token() {
    let a = inspector().await;
    let b = inspector().await;
    assert!(a.local_addr().ip().is_loopback());
    assert_ne!(a.local_addr().port(), 0);
    assert_ne!(a.local_addr().port(), b.local_addr().port());
    let token = a.token();
    assert!(token.len() >= 32 && token.chars().all(|c| c.is_ascii_hexdigit()), "{token}");
    assert_ne!(token, b.token(), "a fresh token per launch");
    assert_eq!(a.url(), format!("http://127.0.0.1:{}/#token={token}", a.local_addr().port()));
}

#[tokio::test]
async fn a_remote_host_is_refused_unless_allowed() {
    let refused = Inspector::builder().host("0.0.0.0").build().await.unwrap_err();
    assert!(matches!(refused, InspectorError::RemoteHost(_)));
    let message = refused.to_string();
    assert!(message.contains("not a loopback address") && message.contains("--allow-remote"), "{message}");
    let bad = Inspector::builder().host("example.com").build().await.unwrap_err();
    assert!(matches!(bad, InspectorError::BadHost(_)), "{bad}");
    let local = Inspector::builder().host("localhost").build().await.expect("localhost is loopback");
    assert!(local.local_addr().ip().is_loopback());
}

#[tokio::test]
async fn every_api_route_wants_the_token() {
    let i = inspector().await;
    let addr = i.local_addr();
    let host = format!("Host: 127.0.0.1:{}", addr.port());
    let token = i.token();
    let wrong: String = token.chars().map(|c| if c == '0' { '1' } else { '0' }).collect();
    let ok = raw(addr, &format!("GET /api/health HTTP/1.1\n{host}\nAuthorization: Bearer {token}"), "").await;
    assert_eq!(ok.status, 200, "{ok:?}");
    assert!(ok.body.contains("\"ok\":true"), "{}", ok.body);
    for (what, head) in [
        ("no token", format!("GET /api/health HTTP/1.1\n{host}")),
        ("a wrong token", format!("GET /api/health HTTP/1.1\n{host}\nAuthorization: Bearer {wrong}")),
        ("a prefix of the token", format!("GET /api/health HTTP/1.1\n{host}\nAuthorization: Bearer {}", &token[..10])),
        ("the token as Basic", format!("GET /api/health HTTP/1.1\n{host}\nAuthorization: Basic {token}")),
        ("the token in the query", format!("GET /api/health?token={token} HTTP/1.1\n{host}")),
        ("the token in the query (access_token)", format!("GET /api/health?access_token={token} HTTP/1.1\n{host}")),
        ("the token in a cookie", format!("GET /api/health HTTP/1.1\n{host}\nCookie: token={token}")),
        ("the event stream without it", format!("GET /api/events HTTP/1.1\n{host}")),
        ("the state without it", format!("GET /api/state HTTP/1.1\n{host}")),
        ("an unknown route under /api/", format!("GET /api/nothing HTTP/1.1\n{host}")),
    ] {
        let answer = raw(addr, &head, "").await;
        assert_eq!(answer.status, 401, "{what}: {answer:?}");
        assert_eq!(answer.header("www-authenticate").as_deref(), Some("Bearer"), "{what}");
    }
}

#[tokio::test]
async fn no_process_is_started_without_the_token() {
    let i = inspector().await;
    let addr = i.local_addr();
    let marker = std::env::temp_dir().join(format!("mcp-inspector-spawned-{}", std::process::id()));
    let _ = std::fs::remove_file(&marker);
    let body = serde_json::json!({"target": format!("touch {}", marker.display())}).to_string();
    let answer = raw(
        addr,
        &format!("POST /api/connect HTTP/1.1\nHost: 127.0.0.1:{}\nContent-Type: application/json", addr.port()),
        &body,
    )
    .await;
    assert_eq!(answer.status, 401, "{answer:?}");
    // The same request with the token does start it (so that the check above means something).
    let authorized = raw(
        addr,
        &format!(
            "POST /api/connect HTTP/1.1\nHost: 127.0.0.1:{}\nContent-Type: application/json\nAuthorization: Bearer {}",
            addr.port(),
            i.token()
        ),
        &body,
    )
    .await;
    assert_eq!(authorized.status, 502, "touch is no MCP server: {authorized:?}");
    assert!(marker.exists(), "an authenticated request starts the process");
    let _ = std::fs::remove_file(&marker);
    // And without: still not.
    let again = raw(
        addr,
        &format!("POST /api/connect HTTP/1.1\nHost: 127.0.0.1:{}\nContent-Type: application/json", addr.port()),
        &body,
    )
    .await;
    assert_eq!(again.status, 401);
    assert!(!marker.exists(), "no process without the token");
}

#[tokio::test]
async fn a_foreign_origin_is_refused() {
    let i = inspector().await;
    let addr = i.local_addr();
    let port = addr.port();
    let auth = format!("Authorization: Bearer {}", i.token());
    for origin in ["http://evil.example", "http://127.0.0.1:1", "null", "https://127.0.0.1:{port}"] {
        let origin = origin.replace("{port}", &port.to_string());
        let api =
            raw(addr, &format!("GET /api/health HTTP/1.1\nHost: 127.0.0.1:{port}\n{auth}\nOrigin: {origin}"), "").await;
        assert_eq!(api.status, 403, "{origin}: {api:?}");
        let page = raw(addr, &format!("GET / HTTP/1.1\nHost: 127.0.0.1:{port}\nOrigin: {origin}"), "").await;
        assert_eq!(page.status, 403, "{origin}: {page:?}");
    }
    let own = raw(
        addr,
        &format!("GET /api/health HTTP/1.1\nHost: 127.0.0.1:{port}\n{auth}\nOrigin: http://127.0.0.1:{port}"),
        "",
    )
    .await;
    assert_eq!(own.status, 200, "{own:?}");
}

#[tokio::test]
async fn a_foreign_host_is_refused() {
    let i = inspector().await;
    let addr = i.local_addr();
    let port = addr.port();
    let auth = format!("Authorization: Bearer {}", i.token());
    for host in
        [format!("evil.example:{port}"), "127.0.0.1".to_owned(), format!("127.0.0.1:{}", port ^ 1), String::new()]
    {
        let head = if host.is_empty() {
            format!("GET /api/health HTTP/1.1\n{auth}")
        } else {
            format!("GET /api/health HTTP/1.1\nHost: {host}\n{auth}")
        };
        let api = raw(addr, &head, "").await;
        assert!(matches!(api.status, 421 | 403 | 400), "Host {host:?}: {api:?}");
        let page = raw(addr, &format!("GET / HTTP/1.1\nHost: {host}"), "").await;
        assert!(matches!(page.status, 421 | 403 | 400), "Host {host:?}: {page:?}");
    }
    let named = raw(addr, &format!("GET /api/health HTTP/1.1\nHost: localhost:{port}\n{auth}"), "").await;
    assert_eq!(named.status, 200, "the loopback name and port: {named:?}");
}

#[tokio::test]
async fn the_page_has_a_strict_csp_and_no_inline_script() {
    let i = inspector().await;
    let addr = i.local_addr();
    let page = raw(addr, &format!("GET / HTTP/1.1\nHost: 127.0.0.1:{}", addr.port()), "").await;
    assert_eq!(page.status, 200, "{page:?}");
    assert!(page.header("content-type").unwrap_or_default().starts_with("text/html"));
    let csp = page.header("content-security-policy").expect("a CSP");
    assert!(csp.contains("script-src 'self'"), "{csp}");
    assert!(csp.contains("default-src 'none'"), "{csp}");
    assert!(!csp.contains("unsafe-inline") && !csp.contains("unsafe-eval"), "{csp}");
    assert!(csp.contains("frame-ancestors 'none'"), "{csp}");
    // Frames (an MCP App's) only from the inspector: an app cannot navigate its frame away.
    assert!(csp.contains("frame-src 'self'"), "{csp}");
    assert_eq!(page.header("x-content-type-options").as_deref(), Some("nosniff"));
    // Every script is a file of the inspector's; no inline handlers.
    let html = page.body.to_ascii_lowercase();
    for tag in html.split("<script").skip(1) {
        let open = &tag[..tag.find('>').expect("a closed tag")];
        assert!(open.contains("src=\"/"), "an inline script: <script{open}>");
        assert!(tag[tag.find('>').unwrap() + 1..].trim_start().starts_with("</script>"), "a script with a body");
    }
    for handler in [" onclick=", " onload=", " onerror=", "javascript:"] {
        assert!(!html.contains(handler), "{handler} in the page");
    }
    let script = raw(addr, &format!("GET /app.js HTTP/1.1\nHost: 127.0.0.1:{}", addr.port()), "").await;
    assert_eq!(script.status, 200);
    assert!(script.header("content-type").unwrap_or_default().starts_with("text/javascript"));
    assert!(
        !script.body.contains("innerHTML") && !script.body.contains("insertAdjacentHTML"),
        "server data is text only"
    );
    assert!(!script.body.contains("document.write") && !script.body.contains("eval("));
}

/// What connecting and requesting now start (an OAuth flow and its loopback listener, a
/// `subscriptions/listen` stream) is behind the token like the rest: no new route, and the
/// routes that start them refuse a request without it.
#[tokio::test]
async fn oauth_and_subscriptions_want_the_token_too() {
    let i = inspector().await;
    let addr = i.local_addr();
    let host = format!("Host: 127.0.0.1:{}\nContent-Type: application/json", addr.port());
    for (what, path, body) in [
        ("connect with OAuth", "/api/connect", r#"{"target": "http://127.0.0.1:1/mcp", "oauth": true}"#),
        ("subscribe", "/api/request", r#"{"method": "resources/subscribe", "params": {"uri": "test://x"}}"#),
        ("unsubscribe", "/api/request", r#"{"method": "resources/unsubscribe", "params": {"uri": "test://x"}}"#),
    ] {
        let answer = raw(addr, &format!("POST {path} HTTP/1.1\n{host}"), body).await;
        assert_eq!(answer.status, 401, "{what}: {answer:?}");
        assert!(!answer.body.contains("authorize"), "{what}: {answer:?}");
    }
}
