//! The OAuth client end to end through the HTTP transport, against an in-process resource
//! server and authorization server: discovery, dynamic registration, PKCE, `iss`, the
//! token request, the retried MCP request, and scope step-up.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::{Form, Query, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use mcpwire_auth::pkce::s256_challenge;
use mcpwire_auth::{OAuthClient, OAuthConfig};
use mcpwire_transport::http::{self, HttpOptions};
use serde_json::{json, Value};

#[derive(Default)]
struct Mock {
    base: String,
    /// What `iss` the authorization endpoint puts in its redirect: `None` for the right one.
    iss_override: Option<String>,
    registrations: Vec<Value>,
    authorizations: Vec<HashMap<String, String>>,
    token_requests: Vec<HashMap<String, String>>,
}

type Shared = Arc<Mutex<Mock>>;

fn base(s: &Shared) -> String {
    s.lock().unwrap().base.clone()
}

async fn mcp(State(s): State<Shared>, headers: HeaderMap, Json(body): Json<Value>) -> Response {
    let b = base(&s);
    let granted: Vec<String> = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer tok:"))
        .map(|scopes| scopes.split(' ').map(str::to_owned).collect())
        .unwrap_or_default();
    if granted.is_empty() {
        let challenge = format!(r#"Bearer resource_metadata="{b}/prm", scope="read""#);
        return (StatusCode::UNAUTHORIZED, [(header::WWW_AUTHENTICATE, challenge)]).into_response();
    }
    if body["method"] == "tools/call" && !granted.iter().any(|g| g == "write") {
        let challenge = format!(r#"Bearer error="insufficient_scope", scope="write", resource_metadata="{b}/prm""#);
        return (StatusCode::FORBIDDEN, [(header::WWW_AUTHENTICATE, challenge)]).into_response();
    }
    Json(json!({"jsonrpc": "2.0", "id": body["id"], "result": {"granted": granted}})).into_response()
}

async fn prm(State(s): State<Shared>) -> Json<Value> {
    let b = base(&s);
    Json(json!({"resource": format!("{b}/mcp"), "authorization_servers": [format!("{b}/as")]}))
}

async fn as_metadata(State(s): State<Shared>) -> Json<Value> {
    let b = base(&s);
    Json(json!({
        "issuer": format!("{b}/as"),
        "authorization_endpoint": format!("{b}/as/authorize"),
        "token_endpoint": format!("{b}/as/token"),
        "registration_endpoint": format!("{b}/as/register"),
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["client_secret_post"],
        "authorization_response_iss_parameter_supported": true,
        "scopes_supported": ["read", "write"],
    }))
}

async fn register(State(s): State<Shared>, Json(body): Json<Value>) -> Response {
    s.lock().unwrap().registrations.push(body);
    (StatusCode::CREATED, Json(json!({"client_id": "dyn-client", "client_secret": "dyn-secret"}))).into_response()
}

async fn authorize(State(s): State<Shared>, Query(q): Query<HashMap<String, String>>) -> Response {
    let mut m = s.lock().unwrap();
    let iss = m.iss_override.clone().unwrap_or_else(|| format!("{}/as", m.base));
    let mut redirect = url::Url::parse(&q["redirect_uri"]).unwrap();
    redirect
        .query_pairs_mut()
        .append_pair("code", &format!("code-{}", m.authorizations.len()))
        .append_pair("state", &q["state"])
        .append_pair("iss", &iss);
    m.authorizations.push(q);
    (StatusCode::FOUND, [(header::LOCATION, redirect.to_string())]).into_response()
}

async fn token(State(s): State<Shared>, Form(f): Form<HashMap<String, String>>) -> Response {
    let mut m = s.lock().unwrap();
    let n: usize = f["code"].trim_start_matches("code-").parse().unwrap();
    let auth = m.authorizations[n].clone();
    m.token_requests.push(f.clone());
    if s256_challenge(&f["code_verifier"]) != auth["code_challenge"]
        || f.get("client_secret").map(String::as_str) != Some("dyn-secret")
    {
        return (StatusCode::BAD_REQUEST, Json(json!({"error": "invalid_grant"}))).into_response();
    }
    let scope = auth.get("scope").cloned().unwrap_or_default();
    Json(json!({"access_token": format!("tok:{scope}"), "token_type": "Bearer", "expires_in": 3600, "scope": scope}))
        .into_response()
}

async fn start(mock: Mock) -> (String, Shared) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let shared = Arc::new(Mutex::new(Mock { base: base.clone(), ..mock }));
    let app = Router::new()
        .route("/mcp", post(mcp))
        .route("/prm", get(prm))
        .route("/.well-known/oauth-authorization-server/as", get(as_metadata))
        .route("/as/register", post(register))
        .route("/as/authorize", get(authorize))
        .route("/as/token", post(token))
        .with_state(shared.clone());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (base, shared)
}

/// Sends one modern-era request and returns its answer.
async fn call(conn: &mut mcpwire_transport::Connection, id: u64, method: &str) -> Value {
    let frame = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": {
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}});
    conn.outgoing.send(mcpwire_transport::Outbound::text(frame.to_string())).await.unwrap();
    let answer = tokio::time::timeout(Duration::from_secs(10), conn.incoming.recv()).await.unwrap().unwrap().unwrap();
    serde_json::from_str(&answer.text).unwrap()
}

fn connect(url: &str) -> mcpwire_transport::Connection {
    let oauth = OAuthClient::new(url, OAuthConfig::new("flow-test", "http://localhost:3000/callback")).unwrap();
    http::connect(url, HttpOptions { auth: Some(Arc::new(oauth)), ..HttpOptions::default() }).unwrap()
}

#[tokio::test]
async fn authorizes_then_steps_up_with_the_union_of_scopes() {
    let (base, mock) = start(Mock::default()).await;
    let url = format!("{base}/mcp");
    let mut conn = connect(&url);

    let listed = call(&mut conn, 1, "tools/list").await;
    assert_eq!(listed["result"]["granted"], json!(["read"]), "{listed}");
    let called = call(&mut conn, 2, "tools/call").await;
    assert_eq!(called["result"]["granted"], json!(["read", "write"]), "{called}");

    let m = mock.lock().unwrap();
    assert_eq!(m.registrations.len(), 1, "one registration per issuer");
    assert_eq!(m.registrations[0]["application_type"], "native");
    assert_eq!(m.registrations[0]["grant_types"], json!(["authorization_code", "refresh_token"]));
    assert_eq!(m.authorizations.len(), 2);
    let first = &m.authorizations[0];
    assert_eq!(first["resource"], url);
    assert_eq!(first["client_id"], "dyn-client");
    assert_eq!(first["code_challenge_method"], "S256");
    assert_eq!(first["scope"], "read");
    assert_eq!(m.authorizations[1]["scope"], "read write");
    assert!(m.token_requests.iter().all(|t| t["resource"] == url && t["grant_type"] == "authorization_code"));
}

#[tokio::test]
async fn refuses_to_exchange_a_code_with_the_wrong_iss() {
    let (base, mock) = start(Mock { iss_override: Some("https://evil.example.com".into()), ..Mock::default() }).await;
    let mut conn = connect(&format!("{base}/mcp"));
    let answer = call(&mut conn, 1, "tools/list").await;
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("iss"), "{answer}");
    let m = mock.lock().unwrap();
    assert_eq!(m.authorizations.len(), 1);
    assert!(m.token_requests.is_empty(), "the code must not be exchanged");
}
