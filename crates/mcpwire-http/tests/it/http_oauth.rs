//! The endpoint as an OAuth protected resource, against a real authorization server:
//! oidc-provider (tests/auth/provider.mjs), started here as a child process, issuing JWT and
//! opaque access tokens bound to our resource by the client credentials grant.
//!
//! Needs Node.js and `tests/auth/node_modules` (`npm ci` in tests/auth; scripts/test does
//! it). Without them the tests fail, unless `MCP_SKIP_AUTH_PROVIDER` is set.
#![cfg(feature = "auth")]

use crate::common;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use common::*;
use mcpwire_auth::resource::{Clock, IntrospectionVerifier, JwtVerifier, ResourceServer};
use mcpwire_auth::BearerChallenge;
use mcpwire_http::{HttpConfig, McpHttp};
use mcpwire_protocol::types::{CallToolResult, Tool};
use mcpwire_server::{HandlerResult, Server, ToolDef};
use serde_json::{json, Value};

use crate::provider;

use provider::AuthServer;

/// Tools: `whoami` (any principal), `read_notes` (`notes:read`), `add_note` (`notes:write`).
fn server() -> Server {
    let server = Server::builder("protected", "1.0").build();
    let schema = json!({"type": "object"});
    server.register_tool(ToolDef::new(Tool::new("whoami", "Who calls", schema.clone()), |_, ctx| async move {
        let p = ctx.principal().expect("a protected endpoint gives every request a principal");
        let text = format!(
            "{} {} {}",
            p.subject.as_deref().unwrap_or("-"),
            p.client_id.as_deref().unwrap_or("-"),
            p.scopes.join(",")
        );
        HandlerResult::Ok(CallToolResult::text(text))
    }));
    let read = ToolDef::new(Tool::new("read_notes", "Reads", schema.clone()), |_, _| async {
        HandlerResult::Ok(CallToolResult::text("the notes"))
    });
    server.register_tool(read.with_scopes(["notes:read"]));
    let write = ToolDef::new(Tool::new("add_note", "Writes", schema), |_, _| async {
        HandlerResult::Ok(CallToolResult::text("added"))
    });
    server.register_tool(write.with_scopes(["notes:write"]));
    server
}

/// A fresh loopback port, and the URL of the endpoint to serve there (the resource).
async fn bind() -> (tokio::net::TcpListener, String) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let resource = format!("http://{}/mcp", listener.local_addr().expect("addr"));
    (listener, resource)
}

/// The endpoint, protected by `rs`.
fn protected(listener: tokio::net::TcpListener, rs: ResourceServer) -> TestServer {
    protected_server(listener, rs, server())
}

/// `server` at the endpoint, protected by `rs`.
fn protected_server(listener: tokio::net::TcpListener, rs: ResourceServer, server: Server) -> TestServer {
    let addr = listener.local_addr().expect("addr");
    let config = HttpConfig { auth: Some(rs), ..HttpConfig::default() };
    let http = McpHttp::new(server, config);
    let task = tokio::spawn(http.clone().serve(listener));
    TestServer::from_parts(http, addr, task)
}

fn bearer(r: reqwest::RequestBuilder, token: &str) -> reqwest::RequestBuilder {
    r.header("authorization", format!("Bearer {token}"))
}

fn tool_names(answer: &Value) -> Vec<String> {
    let tools = answer["result"]["tools"].as_array().cloned().unwrap_or_default();
    tools.iter().map(|t| t["name"].as_str().unwrap_or_default().to_owned()).collect()
}

fn challenge(resp: &reqwest::Response) -> BearerChallenge {
    let value = resp.headers().get("www-authenticate").expect("WWW-Authenticate").to_str().expect("ASCII");
    BearerChallenge::parse(value).unwrap_or_else(|| panic!("not a Bearer challenge: {value}"))
}

/// An authorization server that does not answer (nothing listens on its port): requests
/// whose token needs it (the issuer's metadata and keys, or introspection) are answered `503`
/// with `Retry-After`; a request without a token needs nothing of it and is a `401` as ever.
/// The resource server is made without reaching it (`discovering`).
#[tokio::test]
async fn an_unreachable_authorization_server_is_a_503_with_retry_after() {
    let dead = {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        format!("http://127.0.0.1:{port}")
    };
    // A JWT in form (ES256, at+jwt) that no issuer signed: checking it needs the keys.
    let token = "eyJhbGciOiJFUzI1NiIsInR5cCI6ImF0K2p3dCIsImtpZCI6ImsifQ.eyJzdWIiOiJ4In0.c2ln";
    let list = request(1, "tools/list", json!({}));
    let (listener, resource) = bind().await;
    let jwt =
        ResourceServer::new(&*resource, JwtVerifier::discovering(&*dead, &*resource)).authorization_server(&*dead);
    let jwt = protected(listener, jwt);
    let (listener, resource) = bind().await;
    let verifier = IntrospectionVerifier::new(format!("{dead}/token/introspection"), &*resource, "rs", "rs-secret");
    let introspected = protected(listener, ResourceServer::new(&*resource, verifier).authorization_server(&*dead));
    for s in [&jwt, &introspected] {
        for _ in 0..3 {
            let resp = within("POST with a token", bearer(s.post_mcp(&list), token).send()).await.unwrap();
            assert_eq!(resp.status(), 503);
            let retry_after = resp.headers().get("retry-after").expect("Retry-After on the 503").to_str().unwrap();
            assert_eq!(retry_after, mcpwire_auth::resource::RETRY_AFTER.as_secs().to_string());
        }
        let resp = within("POST without a token", s.post_mcp(&list).send()).await.unwrap();
        assert_eq!(resp.status(), 401);
        assert!(resp.headers().get("retry-after").is_none());
    }
}

#[tokio::test]
async fn jwt_access_tokens_from_a_real_authorization_server() {
    let Some(auth) = AuthServer::start().await else { return };
    let now =
        Arc::new(AtomicU64::new(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs()));
    let (listener, resource) = bind().await;
    // The keys' URL found in the issuer's metadata.
    let verifier = within("discovery", JwtVerifier::discover(auth.issuer.clone(), resource.clone())).await;
    let verifier = verifier.expect("the issuer's metadata names its jwks_uri").clock(Clock::manual(now.clone()));
    let rs = ResourceServer::new(resource.clone(), verifier)
        .authorization_server(auth.issuer.clone())
        .scopes_supported(["mcp", "notes:read", "notes:write"])
        .required_scopes(["mcp"]);
    let s = protected(listener, rs);

    // The metadata, at the path-suffixed and the plain well-known URLs.
    for path in ["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"] {
        let metadata: Value = client().get(s.url(path)).send().await.unwrap().json().await.unwrap();
        assert_eq!(metadata["resource"], json!(resource), "{path}: {metadata}");
        assert_eq!(metadata["authorization_servers"], json!([auth.issuer]), "{metadata}");
    }

    // No token: 401, and a challenge that leads to the metadata and names the scope needed.
    let list = modern_request(1, "tools/list", json!({}));
    let resp = s.post_modern(&list).send().await.unwrap();
    assert_eq!(resp.status(), 401);
    let c = challenge(&resp);
    assert_eq!(c.resource_metadata.as_deref(), Some(&*s.url("/.well-known/oauth-protected-resource/mcp")));
    assert_eq!(c.scopes(), ["mcp"]);
    assert_eq!(c.error, None);

    // A reader's token: the list shows what its scopes permit, the handler sees the principal.
    let reader = auth.token("jwt-reader", "mcp notes:read", &resource).await;
    let answer = final_message(bearer(s.post_modern(&list), &reader).send().await.unwrap()).await;
    assert_eq!(tool_names(&answer), ["whoami", "read_notes"], "{answer}");
    let whoami = modern_request(2, "tools/call", json!({"name": "whoami", "arguments": {}}));
    let answer = final_message(bearer(s.post_modern(&whoami), &reader).send().await.unwrap()).await;
    assert_eq!(tool_text(&answer), "jwt-reader jwt-reader mcp,notes:read");

    // A tool it lacks the scope of: 403 insufficient_scope naming the scopes to step up to.
    let add = modern_request(3, "tools/call", json!({"name": "add_note", "arguments": {}}));
    let resp = bearer(s.post_modern(&add), &reader).send().await.unwrap();
    assert_eq!(resp.status(), 403);
    let c = challenge(&resp);
    assert!(c.is_insufficient_scope(), "{c:?}");
    assert_eq!(c.scopes(), ["mcp", "notes:write"]);

    // A token without the scope every request needs.
    let no_mcp = auth.token("jwt-alice", "notes:read", &resource).await;
    let resp = bearer(s.post_modern(&list), &no_mcp).send().await.unwrap();
    assert_eq!(resp.status(), 403);
    assert_eq!(challenge(&resp).scopes(), ["mcp"]);

    // A legacy session: bound to the party that opened it. Alice steps up within it; Bob's
    // token with Alice's session id is answered as if the session did not exist.
    let alice = auth.token("jwt-alice", "mcp notes:read", &resource).await;
    let init = legacy_initialize(1, "2025-11-25", json!({}));
    let resp = bearer(s.post_mcp(&init), &alice).send().await.unwrap();
    assert_eq!(resp.status(), 200);
    let session = resp.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let legacy_add = request(2, "tools/call", json!({"name": "add_note", "arguments": {}}));
    let resp = bearer(s.post_legacy(&session, Some("2025-11-25"), &legacy_add), &alice).send().await.unwrap();
    assert_eq!(resp.status(), 403);
    let stepped_up = auth.token("jwt-alice", "mcp notes:read notes:write", &resource).await;
    let resp = bearer(s.post_legacy(&session, Some("2025-11-25"), &legacy_add), &stepped_up).send().await.unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(tool_text(&final_message(resp).await), "added");
    let bob = auth.token("jwt-bob", "mcp notes:read notes:write", &resource).await;
    let resp = bearer(s.post_legacy(&session, Some("2025-11-25"), &legacy_add), &bob).send().await.unwrap();
    assert_eq!(resp.status(), 404, "another principal's token on a session");
    let delete = bearer(s.client.delete(s.url("/mcp")).header("mcp-session-id", &session), &bob).send().await.unwrap();
    assert_eq!(delete.status(), 404, "nor may another principal end it");
    assert_eq!(s.http.session_count(), 1);

    // A token issued for another resource (RFC 8707): refused.
    let elsewhere = auth.token("jwt-alice", "mcp", "http://127.0.0.1:1/mcp").await;
    let resp = bearer(s.post_modern(&list), &elsewhere).send().await.unwrap();
    assert_eq!(resp.status(), 401);
    assert_eq!(challenge(&resp).error.as_deref(), Some("invalid_token"));

    // Bad tokens of every shape: 401 (400 for a header that is not a bearer token), never 500.
    let (header, rest) = alice.split_once('.').unwrap();
    let (payload, signature) = rest.split_once('.').unwrap();
    let b64 = |v: &Value| {
        use base64::Engine;
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string())
    };
    let claims: Value = {
        use base64::Engine;
        serde_json::from_slice(&base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(payload).unwrap()).unwrap()
    };
    let alg_none = format!("{}.{payload}.", b64(&json!({"alg": "none", "typ": "at+jwt"})));
    let hmac = format!("{}.{payload}.{signature}", b64(&json!({"alg": "HS256", "typ": "at+jwt"})));
    let untyped = format!("{}.{payload}.{signature}", b64(&json!({"alg": "ES256", "typ": "JWT"})));
    let mut forged_claims = claims.clone();
    forged_claims["scope"] = json!("mcp notes:read notes:write");
    let forged = format!("{header}.{}.{signature}", b64(&forged_claims));
    let unknown_kid =
        format!("{}.{payload}.{signature}", b64(&json!({"alg": "ES256", "typ": "at+jwt", "kid": "gone"})));
    let truncated = &alice[..alice.len() / 2];
    let huge = "a".repeat(20_000);
    for (what, token) in [
        ("truncated", truncated),
        ("alg none", &alg_none),
        ("HMAC", &hmac),
        ("typ JWT", &untyped),
        ("forged claims", &forged),
        ("unknown kid", &unknown_kid),
        ("opaque garbage", "not-a-jwt"),
        ("huge", &huge),
    ] {
        let resp = bearer(s.post_modern(&list), token).send().await.unwrap();
        assert_eq!(resp.status(), 401, "{what}");
        assert_eq!(challenge(&resp).error.as_deref(), Some("invalid_token"), "{what}");
    }
    for header in ["Bearer a b", "Bearer"] {
        let resp = s.post_modern(&list).header("authorization", header).send().await.unwrap();
        assert_eq!(resp.status(), 400, "{header}");
    }
    // Another scheme is answered as no token: the challenge says which scheme is taken.
    for header in ["Basic YTpi", "DPoP abc"] {
        let resp = s.post_modern(&list).header("authorization", header).send().await.unwrap();
        assert_eq!(resp.status(), 401, "{header}");
        assert_eq!(challenge(&resp).error, None, "{header}");
    }

    // The issuer rotates its keys: a token signed with a new key names a key id the verifier
    // does not hold, so it fetches the keys again, but not more than once per 30 s (the
    // unknown kid above made it fetch them a moment ago).
    auth.rotate_keys().await;
    let rotated = auth.token("jwt-reader", "mcp notes:read", &resource).await;
    assert_ne!(rotated.split('.').next(), reader.split('.').next(), "a new key id");
    let resp = bearer(s.post_modern(&list), &rotated).send().await.unwrap();
    assert_eq!(resp.status(), 401, "the keys were fetched less than 30 s ago");
    now.fetch_add(31, Ordering::Relaxed);
    let resp = bearer(s.post_modern(&list), &rotated).send().await.unwrap();
    assert_eq!(resp.status(), 200, "fetched again: the new key is known");
    // A token verified is remembered for 60 s (without a second signature check); past that,
    // a token signed by the withdrawn key is refused.
    now.fetch_add(30, Ordering::Relaxed);
    let resp = bearer(s.post_modern(&list), &reader).send().await.unwrap();
    assert_eq!(resp.status(), 401, "the old key is no longer published");

    // Expiry, judged by the verifier's clock: 300 s tokens, 30 s of leeway.
    let exp = {
        use base64::Engine;
        let payload = rotated.split('.').nth(1).unwrap();
        let claims: Value =
            serde_json::from_slice(&base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(payload).unwrap()).unwrap();
        claims["exp"].as_u64().unwrap()
    };
    now.store(exp + 30, Ordering::Relaxed);
    let resp = bearer(s.post_modern(&list), &rotated).send().await.unwrap();
    assert_eq!(resp.status(), 200, "within the leeway");
    now.store(exp + 31, Ordering::Relaxed);
    let resp = bearer(s.post_modern(&list), &rotated).send().await.unwrap();
    assert_eq!(resp.status(), 401, "expired");
    assert!(challenge(&resp).error_description.unwrap_or_default().contains("expired"));
}

#[tokio::test]
async fn opaque_tokens_are_introspected() {
    let Some(auth) = AuthServer::start().await else { return };
    let (listener, resource) = bind().await;
    let verifier =
        IntrospectionVerifier::discover(&*auth.issuer, &*resource, "resource-server", "resource-server-secret");
    let verifier = within("discovery", verifier).await.expect("the issuer's metadata names its introspection endpoint");
    let s =
        protected(listener, ResourceServer::new(resource.clone(), verifier).authorization_server(auth.issuer.clone()));
    let token = auth.token("opaque-alice", "mcp notes:read", &resource).await;
    assert!(token.split('.').count() < 3, "an opaque token: {token}");
    let list = modern_request(1, "tools/list", json!({}));
    let answer = final_message(bearer(s.post_modern(&list), &token).send().await.unwrap()).await;
    assert_eq!(tool_names(&answer), ["whoami", "read_notes"], "{answer}");
    let whoami = modern_request(2, "tools/call", json!({"name": "whoami", "arguments": {}}));
    let answer = final_message(bearer(s.post_modern(&whoami), &token).send().await.unwrap()).await;
    assert_eq!(tool_text(&answer), "- opaque-alice mcp,notes:read");

    let elsewhere = auth.token("opaque-alice", "mcp", "http://127.0.0.1:1/mcp").await;
    for (what, token) in [("another resource's", elsewhere.as_str()), ("unknown", "abcdef")] {
        let resp = bearer(s.post_modern(&list), token).send().await.unwrap();
        assert_eq!(resp.status(), 401, "{what}");
        assert_eq!(challenge(&resp).error.as_deref(), Some("invalid_token"), "{what}");
    }
}

/// A task is its principal's: another session of the same party finds it, another party's
/// does not, nor lists it.
#[tokio::test]
async fn tasks_are_visible_to_their_principal_only() {
    let Some(auth) = AuthServer::start().await else { return };
    let (listener, resource) = bind().await;
    let verifier = within("discovery", JwtVerifier::discover(auth.issuer.clone(), resource.clone())).await.unwrap();
    let rs = ResourceServer::new(resource.clone(), verifier).authorization_server(auth.issuer.clone());
    let s = protected_server(listener, rs, mcpwire_reference::server());
    let alice = auth.token("jwt-alice", "mcp", &resource).await;
    let bob = auth.token("jwt-bob", "mcp", &resource).await;
    let session = |token: String| {
        let s = &s;
        async move {
            let init = legacy_initialize(1, "2025-11-25", json!({"tasks": {}}));
            let resp = bearer(s.post_mcp(&init), &token).send().await.unwrap();
            assert_eq!(resp.status(), 200);
            resp.headers()["mcp-session-id"].to_str().unwrap().to_owned()
        }
    };
    let ask = |token: &str, session: &str, body: Value| {
        let request = bearer(s.post_legacy(session, Some("2025-11-25"), &body), token).send();
        async move { final_message(request.await.unwrap()).await }
    };
    let first = session(alice.clone()).await;
    let call =
        request(2, "tools/call", json!({"name": "slow_compute", "arguments": {"seconds": 0}, "task": {"ttl": 60000}}));
    let created = ask(&alice, &first, call).await;
    let task_id = created["result"]["task"]["taskId"].as_str().unwrap_or_else(|| panic!("{created}")).to_owned();
    let get = request(3, "tasks/get", json!({"taskId": task_id}));

    let second = session(alice.clone()).await;
    let found = ask(&alice, &second, get.clone()).await;
    assert_eq!(found["result"]["taskId"], json!(task_id), "the same principal, another session: {found}");

    let bobs = session(bob.clone()).await;
    let refused = ask(&bob, &bobs, get).await;
    assert_eq!(refused["error"]["code"], json!(-32602), "another principal: {refused}");
    let listed = ask(&bob, &bobs, request(4, "tasks/list", json!({}))).await;
    assert_eq!(listed["result"]["tasks"], json!([]), "{listed}");
    let listed = ask(&alice, &second, request(5, "tasks/list", json!({}))).await;
    assert_eq!(listed["result"]["tasks"].as_array().map(Vec::len), Some(1), "{listed}");
}

/// A 2026-07-28 `requestState` is sealed for the principal whose request asked: another
/// principal's retry with it is refused, its own goes through.
#[tokio::test]
async fn a_request_state_serves_its_principal_only() {
    let Some(auth) = AuthServer::start().await else { return };
    let (listener, resource) = bind().await;
    let verifier = within("discovery", JwtVerifier::discover(auth.issuer.clone(), resource.clone())).await.unwrap();
    let rs = ResourceServer::new(resource.clone(), verifier).authorization_server(auth.issuer.clone());
    let s = protected_server(listener, rs, mcpwire_reference::server());
    let alice = auth.token("jwt-alice", "mcp", &resource).await;
    let bob = auth.token("jwt-bob", "mcp", &resource).await;
    let meta = modern_meta(MODERN, json!({"elicitation": {}}));
    let params = json!({"name": "test_elicitation", "arguments": {"message": "who are you?"}});
    let first = modern_request_with(1, "tools/call", params.clone(), meta.clone());
    let asked = final_message(bearer(s.post_modern(&first), &alice).send().await.unwrap()).await;
    assert_eq!(asked["result"]["resultType"], json!("input_required"), "{asked}");
    let key = asked["result"]["inputRequests"].as_object().and_then(|q| q.keys().next().cloned()).expect("a question");
    let mut retry = params;
    retry["inputResponses"] =
        json!({ key: {"action": "accept", "content": {"username": "ada", "email": "ada@example.com"}} });
    retry["requestState"] = asked["result"]["requestState"].clone();
    let retry = modern_request_with(2, "tools/call", retry, meta);
    let refused = final_message(bearer(s.post_modern(&retry), &bob).send().await.unwrap()).await;
    assert_eq!(refused["error"]["code"], json!(-32602), "another principal's retry: {refused}");
    let answered = final_message(bearer(s.post_modern(&retry), &alice).send().await.unwrap()).await;
    assert_eq!(answered["result"]["resultType"], json!("complete"), "{answered}");
    assert!(tool_text(&answered).contains("ada"), "{answered}");
}

/// Two instances of one deployment sharing a Redis, each a protected resource: a session
/// opened by one party is served to it on the other instance, and is unknown (404) to another
/// party there, as on the first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shared_session_serves_its_principal_only_on_every_instance() {
    let Some(auth) = AuthServer::start().await else { return };
    let redis = mcpwire_testkit::redis::RedisServer::start();
    let prefix = format!("oauth-{}", mcpwire_protocol::id::random_id());
    // One resource (one audience) behind two addresses, as behind a load balancer.
    let (first, resource) = bind().await;
    let second = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let mut instances = Vec::new();
    for listener in [first, second] {
        let verifier = within("discovery", JwtVerifier::discover(auth.issuer.clone(), resource.clone())).await.unwrap();
        let rs = ResourceServer::new(resource.clone(), verifier).authorization_server(auth.issuer.clone());
        let config = HttpConfig { auth: Some(rs), ..HttpConfig::default() };
        let store = mcpwire_store_redis::RedisStore::connect(&redis.url(), &prefix).await.unwrap();
        let http = McpHttp::shared(server(), config, store.shared_state()).await.unwrap();
        let addr = listener.local_addr().unwrap();
        let task = tokio::spawn(http.clone().serve(listener));
        instances.push(TestServer::from_parts(http, addr, task));
    }
    let (a, b) = (&instances[0], &instances[1]);
    let alice = auth.token("jwt-alice", "mcp", &resource).await;
    let bob = auth.token("jwt-bob", "mcp", &resource).await;
    let init = legacy_initialize(1, "2025-11-25", json!({}));
    let resp = within("initialize", bearer(a.post_mcp(&init), &alice).send()).await.unwrap();
    assert_eq!(resp.status(), 200);
    let session = resp.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let whoami = request(2, "tools/call", json!({"name": "whoami", "arguments": {}}));
    for (name, instance) in [("b", b), ("a", a)] {
        let resp = bearer(instance.post_legacy(&session, Some("2025-11-25"), &whoami), &bob).send().await.unwrap();
        assert_eq!(resp.status(), 404, "alice's session presented by bob on {name}");
    }
    let resp = bearer(b.post_legacy(&session, Some("2025-11-25"), &whoami), &alice).send().await.unwrap();
    assert_eq!(resp.status(), 200, "alice's session on b");
    let answer = final_message(resp).await;
    let text = answer["result"]["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.starts_with("jwt-alice") || text.contains("alice"), "{answer}");
}
