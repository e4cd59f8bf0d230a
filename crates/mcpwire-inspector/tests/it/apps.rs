//! MCP Apps: the frame an app is rendered in. The policy built from the resource's `_meta.ui`
//! (hostile origins left out and reported), the document served with it (header and meta),
//! without the token but only to whoever has the frame's id; and the reference server's app
//! read and framed as the page does it.

use serde_json::{json, Value};

use crate::common::{inspector, raw, Api, Reference};

const DOCUMENT: &str = "<!doctype html><html><head><title>t</title></head><body><p>app</p></body></html>";

#[tokio::test]
async fn the_frame_policy_leaves_hostile_origins_out() {
    let i = inspector().await;
    let addr = i.local_addr();
    let api = Api::new(&i);
    let ui = json!({
        "csp": {
            "connectDomains": ["https://api.example.com", "https://a.com; script-src *", "'unsafe-eval'"],
            "resourceDomains": ["https://*.cdn.example.com", "https://evil.com 'unsafe-inline'"],
            "frameDomains": ["javascript:alert(1)"],
            "baseUriDomains": [42],
        },
        "permissions": {"camera": {}, "usb": {}},
    });
    let (status, frame) = api.post("/api/apps/frame", json!({"html": DOCUMENT, "ui": ui})).await;
    assert_eq!(status, 200, "{frame}");
    let csp = frame["csp"].as_str().expect("the policy");
    assert!(csp.starts_with("default-src 'none'; script-src 'unsafe-inline' https://*.cdn.example.com;"), "{csp}");
    assert!(csp.contains("connect-src https://api.example.com;"), "{csp}");
    assert!(
        csp.contains("frame-src 'none'") && csp.contains("base-uri 'none'") && csp.contains("object-src 'none'"),
        "{csp}"
    );
    assert!(csp.contains(&format!("frame-ancestors http://127.0.0.1:{}", addr.port())), "{csp}");
    for hostile in ["script-src *", "a.com", "unsafe-eval", "evil.com", "javascript"] {
        assert!(!csp.contains(hostile), "{hostile} in {csp}");
    }
    let dropped: Vec<&Value> = frame["dropped"].as_array().expect("dropped").iter().collect();
    assert_eq!(dropped.len(), 6, "{frame}");
    assert!(dropped.iter().any(|d| d["value"] == "https://a.com; script-src *" && d["list"] == "connectDomains"));
    assert!(dropped.iter().any(|d| d["value"] == "usb" && d["list"] == "permissions"));
    assert_eq!(frame["allow"], "camera");
    assert_eq!(frame["permissions"], json!({"camera": {}}));
    assert_eq!(frame["approved"]["connectDomains"], json!(["https://api.example.com"]));

    // The document, without the token, with its own policy (and the same in a meta first in
    // its head), framable by the inspector alone.
    let url = frame["url"].as_str().expect("the frame's URL");
    assert!(url.starts_with("/apps/frame/") && url.len() > "/apps/frame/".len() + 16, "{url}");
    let served = raw(addr, &format!("GET {url} HTTP/1.1\nHost: 127.0.0.1:{}", addr.port()), "").await;
    assert_eq!(served.status, 200, "{served:?}");
    assert_eq!(served.header("content-security-policy").as_deref(), Some(csp));
    assert!(served.header("x-frame-options").is_none(), "{served:?}");
    assert!(served.header("content-type").unwrap_or_default().starts_with("text/html"));
    let meta = format!(
        "<meta http-equiv=\"Content-Security-Policy\" content=\"{}",
        csp.split("; frame-ancestors").next().unwrap()
    );
    assert!(served.body.contains(&format!("<head>{meta}\"><title>t</title>")), "{}", served.body);

    // Any other id is unknown, and answered with the inspector's own policy.
    let other = raw(addr, &format!("GET /apps/frame/0123abcd HTTP/1.1\nHost: 127.0.0.1:{}", addr.port()), "").await;
    assert_eq!(other.status, 404, "{other:?}");
    assert!(other.header("content-security-policy").unwrap_or_default().contains("frame-ancestors 'none'"));
    assert_eq!(other.header("x-frame-options").as_deref(), Some("DENY"));

    // Making a frame wants the token; an app (Origin: null) cannot use the API.
    let host = format!("Host: 127.0.0.1:{}\nContent-Type: application/json", addr.port());
    let body = json!({"html": "<p>x</p>"}).to_string();
    let refused = raw(addr, &format!("POST /api/apps/frame HTTP/1.1\n{host}"), &body).await;
    assert_eq!(refused.status, 401, "{refused:?}");
    let from_app = raw(
        addr,
        &format!("POST /api/apps/frame HTTP/1.1\n{host}\nOrigin: null\nAuthorization: Bearer {}", i.token()),
        &body,
    )
    .await;
    assert_eq!(from_app.status, 403, "{from_app:?}");
    let (status, answer) = api.post("/api/apps/frame", json!({"ui": {}})).await;
    assert_eq!(status, 400, "no html: {answer}");
}

#[tokio::test]
async fn the_reference_app_is_framed_with_its_declared_origins() {
    let server = Reference::start().await;
    let i = inspector().await;
    let api = Api::new(&i);
    let (status, c) = api.post("/api/connect", json!({"target": server.url("/mcp")})).await;
    assert_eq!(status, 200, "{c}");
    let (_, tools) = api.post("/api/request", json!({"method": "tools/list"})).await;
    let tool = tools["result"]["tools"].as_array().unwrap().iter().find(|t| t["name"] == "test_app").cloned();
    let tool = tool.expect("test_app is listed");
    let uri = tool["_meta"]["ui"]["resourceUri"].as_str().expect("an app tool");
    let (status, read) = api.post("/api/request", json!({"method": "resources/read", "params": {"uri": uri}})).await;
    assert_eq!(status, 200, "{read}");
    let item = &read["result"]["contents"][0];
    assert_eq!(item["mimeType"], "text/html;profile=mcp-app");
    let body = json!({"html": item["text"], "ui": item["_meta"]["ui"]});
    let (status, frame) = api.post("/api/apps/frame", body).await;
    assert_eq!(status, 200, "{frame}");
    let csp = frame["csp"].as_str().unwrap();
    assert!(csp.contains("connect-src https://api.example.com;"), "{csp}");
    assert!(csp.contains("img-src data: https://*.cdn.example.com;"), "{csp}");
    assert_eq!(frame["dropped"], json!([]), "{frame}");
    assert_eq!(frame["allow"], "");
    // The connection ended, its frames are gone.
    let (status, _) = api.post("/api/disconnect", json!({})).await;
    assert_eq!(status, 200);
    let addr = i.local_addr();
    let url = frame["url"].as_str().unwrap();
    let gone = raw(addr, &format!("GET {url} HTTP/1.1\nHost: 127.0.0.1:{}", addr.port()), "").await;
    assert_eq!(gone.status, 404, "{gone:?}");
}
