//! Middleware: tower layers around the handling of each request, in memory, on tokio's
//! paused clock (time moves only when every task waits, straight to the next timer).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use futures::future::BoxFuture;
use mcpwire::protocol::message::{ClientRequest, ServerResult};
use mcpwire::types::{ContentBlock, ElicitParams, ElicitResult};
use mcpwire::{
    tool, Client, Context, ErrorObject, HandlerError, McpRequest, McpResponse, ProtocolVersion, Server, TestClient,
};
use serde_json::json;
use tower::{Layer, Service, ServiceBuilder};

/// Echoes its text.
#[tool]
fn echo(text: String) -> String {
    text
}

/// Sets a flag when dropped: whether a handler's future was let go.
struct DropFlag(Arc<AtomicBool>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// What a [`Recorder`] saw of one request.
#[derive(Debug, Clone, PartialEq)]
struct Seen {
    layer: &'static str,
    method: String,
    name: Option<String>,
    revision: ProtocolVersion,
    error: bool,
    took: Duration,
}

/// A layer of our own: refuses the tool `forbidden` by itself, upper-cases `echo`'s text on
/// the way in, adds a content block to every tool result on the way out, and records each
/// request with how long (in virtual time) its handling took.
#[derive(Clone)]
struct Recorder {
    name: &'static str,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl<S> Layer<S> for Recorder {
    type Service = Recording<S>;

    fn layer(&self, inner: S) -> Recording<S> {
        Recording { layer: self.clone(), inner }
    }
}

#[derive(Clone)]
struct Recording<S> {
    layer: Recorder,
    inner: S,
}

impl<S> Service<McpRequest> for Recording<S>
where
    S: Service<McpRequest, Response = McpResponse> + Send + 'static,
    S::Future: Send + 'static,
{
    type Response = McpResponse;
    type Error = S::Error;
    type Future = BoxFuture<'static, Result<McpResponse, S::Error>>;

    fn poll_ready(&mut self, cx: &mut TaskContext<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: McpRequest) -> Self::Future {
        let started = tokio::time::Instant::now();
        let mut seen = Seen {
            layer: self.layer.name,
            method: request.method().to_string(),
            name: request.name().map(str::to_owned),
            revision: request.revision(),
            error: false,
            took: Duration::ZERO,
        };
        let record = self.layer.seen.clone();
        if request.name() == Some("forbidden") {
            return Box::pin(async move {
                seen.error = true;
                record.lock().unwrap().push(seen);
                Ok(McpResponse::Error(ErrorObject::invalid_params("the tool forbidden is not for you")))
            });
        }
        if let ClientRequest::CallTool(call) = request.message_mut() {
            if let Some(text) = call.arguments.as_mut().and_then(|a| a.get_mut("text")) {
                *text = json!(text.as_str().unwrap_or_default().to_uppercase());
            }
        }
        let response = self.inner.call(request);
        Box::pin(async move {
            let mut response = response.await?;
            if let Some(ServerResult::CallTool(result)) = response.result_mut() {
                result.content.push(ContentBlock::text("(seen)"));
            }
            seen.error = response.is_error();
            seen.took = started.elapsed();
            record.lock().unwrap().push(seen);
            Ok(response)
        })
    }
}

fn texts(result: &mcpwire::types::CallToolResult) -> Vec<&str> {
    result.content.iter().filter_map(|c| c.as_text()).collect()
}

#[tokio::test(start_paused = true)]
async fn a_layer_short_circuits_changes_the_request_and_the_result_and_times_the_handler() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    /// Waits three seconds, then answers.
    #[tool]
    async fn slow() -> String {
        tokio::time::sleep(Duration::from_secs(3)).await;
        "done".into()
    }
    let server = Server::builder("layered", "1.0")
        .tool(echo_tool())
        .tool(slow_tool())
        .layer(Recorder { name: "inner", seen: seen.clone() })
        .layer(Recorder { name: "outer", seen: seen.clone() })
        .build();
    let client = server.test_client().await.unwrap();

    // Both layers upper-case the text (twice is the same) and each adds its block: the
    // inner's first, since the outer sees the response last.
    let result = client.call_tool("echo", json!({"text": "hello"})).await.unwrap();
    assert_eq!(texts(&result), ["HELLO", "(seen)", "(seen)"]);

    let result = client.call_tool("slow", json!({})).await.unwrap();
    assert_eq!(texts(&result), ["done", "(seen)", "(seen)"]);

    // The outer layer answers by itself: the inner one never sees the request.
    let refused = client.call_tool("forbidden", json!({})).await.unwrap_err();
    assert_eq!(refused.code(), Some(mcpwire::protocol::error::INVALID_PARAMS), "{refused}");
    assert!(refused.to_string().contains("the tool forbidden is not for you"), "{refused}");

    // An unknown tool is the handlers' error, seen by both layers on its way out.
    let unknown = client.call_tool("nope", json!({})).await.unwrap_err();
    assert_eq!(unknown.code(), Some(mcpwire::protocol::error::INVALID_PARAMS), "{unknown}");

    // A list goes through the layers too. (The client lists the tools by itself as well, to
    // learn their output schemas: those lists are left out below.)
    let lists = |seen: &[Seen]| seen.iter().filter(|s| s.method == "tools/list").count();
    let before = lists(&seen.lock().unwrap());
    let tools = client.list_tools(None).await.unwrap();
    assert_eq!(tools.tools.len(), 2);
    assert_eq!(lists(&seen.lock().unwrap()), before + 2, "both layers see the list");

    let seen = seen.lock().unwrap().clone();
    let rows: Vec<_> = seen
        .iter()
        .filter(|s| s.method != "tools/list")
        .map(|s| (s.layer, s.method.as_str(), s.name.as_deref(), s.error, s.took.as_secs()))
        .collect();
    assert_eq!(
        rows,
        [
            ("inner", "tools/call", Some("echo"), false, 0),
            ("outer", "tools/call", Some("echo"), false, 0),
            ("inner", "tools/call", Some("slow"), false, 3),
            ("outer", "tools/call", Some("slow"), false, 3),
            ("outer", "tools/call", Some("forbidden"), true, 0),
            ("inner", "tools/call", Some("nope"), true, 0),
            ("outer", "tools/call", Some("nope"), true, 0),
        ]
    );
    assert!(seen.iter().all(|s| s.revision == ProtocolVersion::LATEST));
}

#[tokio::test(start_paused = true)]
async fn towers_timeout_cancels_the_handler_and_says_so() {
    let dropped = Arc::new(AtomicBool::new(false));
    let flag = dropped.clone();
    let server = Server::builder("timeouts", "1.0")
        .tool(mcpwire::ToolDef::new(
            mcpwire::types::Tool::new("stuck", "Never answers", json!({"type": "object"})),
            move |_, _| {
                let guard = DropFlag(flag.clone());
                async move {
                    let _guard = guard;
                    std::future::pending::<()>().await;
                    Ok(mcpwire::types::CallToolResult::text("never"))
                }
            },
        ))
        .resource(mcpwire::ResourceDef::fixed(mcpwire::types::Resource::new("stuck://r", "stuck"), |_, _| {
            std::future::pending::<mcpwire::HandlerResult<mcpwire::types::ReadResourceResult>>()
        }))
        .layer(tower::timeout::TimeoutLayer::new(Duration::from_secs(2)))
        .build();
    let client = server.test_client().await.unwrap();

    let started = tokio::time::Instant::now();
    let result = client.call_tool("stuck", json!({})).await.unwrap();
    assert_eq!(started.elapsed(), Duration::from_secs(2));
    assert_eq!(result.is_error, Some(true));
    assert_eq!(texts(&result), ["the tool stuck failed: request timed out"]);
    assert!(dropped.load(Ordering::SeqCst), "the handler's future is dropped when the layer gives up");

    // Anything else that times out is a JSON-RPC internal error that says so.
    let error = client.read_resource("stuck://r").await.unwrap_err();
    assert_eq!(error.code(), Some(mcpwire::protocol::error::INTERNAL_ERROR), "{error}");
    assert!(error.to_string().contains("request timed out"), "{error}");

    // The session goes on.
    assert_eq!(client.list_tools(None).await.unwrap().tools.len(), 1);
}

/// A tool `wait` that counts its calls in `entered`, then waits for `release`.
fn waiting_tool(release: &Arc<tokio::sync::Notify>, entered: &Arc<AtomicUsize>) -> mcpwire::ToolDef {
    let (release, entered) = (release.clone(), entered.clone());
    mcpwire::ToolDef::new(
        mcpwire::types::Tool::new("wait", "Waits to be released", json!({"type": "object"})),
        move |_, _| {
            let (release, entered) = (release.clone(), entered.clone());
            async move {
                entered.fetch_add(1, Ordering::SeqCst);
                release.notified().await;
                Ok(mcpwire::types::CallToolResult::text("released"))
            }
        },
    )
}

#[tokio::test(start_paused = true)]
async fn towers_concurrency_limit_with_load_shedding_refuses_what_does_not_fit() {
    sheds_what_does_not_fit(|server| server.layer(ServiceBuilder::new().load_shed().concurrency_limit(1))).await;
}

#[tokio::test(start_paused = true)]
async fn load_shedding_added_over_a_concurrency_limit_sees_that_it_is_not_ready() {
    // Two calls of `layer`: the load shedding asks the readiness of the stack it wraps, which
    // must be the limit's.
    sheds_what_does_not_fit(|server| {
        server.layer(tower::limit::ConcurrencyLimitLayer::new(1)).layer(tower::load_shed::LoadShedLayer::new())
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn towers_concurrency_limit_alone_queues_the_call_that_does_not_fit() {
    let release = Arc::new(tokio::sync::Notify::new());
    let entered = Arc::new(AtomicUsize::new(0));
    let server = Server::builder("queued", "1.0")
        .tool(waiting_tool(&release, &entered))
        .layer(tower::limit::ConcurrencyLimitLayer::new(1))
        .build();
    let client = Arc::new(server.test_client().await.unwrap());
    // The limit counts every request. A client checks a tool's result against the listed
    // output schemas, listing the tools after its first call if it has not yet: that list
    // would queue behind the second call, which waits for the first to end (until a client
    // timeout cuts the knot). Listed here first, as a client that lists before it calls.
    assert_eq!(client.list_tools(None).await.unwrap().tools.len(), 1);
    let call = || {
        let client = client.clone();
        tokio::spawn(async move { client.call_tool("wait", json!({})).await })
    };

    let first = call();
    mcpwire_testkit::eventually("the first call reached the handler", || async {
        (entered.load(Ordering::SeqCst) == 1).then_some(())
    })
    .await;
    // The first call holds the only slot: the second waits for it, neither refused nor let
    // through (5 s, well within the client's request timeout of 60 s).
    let second = call();
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert_eq!(entered.load(Ordering::SeqCst), 1, "the second call waits for the slot");
    assert!(!second.is_finished(), "the second call is queued, not refused");

    release.notify_one();
    let first = tokio::time::timeout(Duration::from_secs(10), first).await.expect("the first call answered");
    assert_eq!(texts(&first.unwrap().unwrap()), ["released"]);
    mcpwire_testkit::eventually("the queued call reached the handler once the slot was free", || async {
        (entered.load(Ordering::SeqCst) == 2).then_some(())
    })
    .await;
    release.notify_one();
    let second = tokio::time::timeout(Duration::from_secs(10), second).await.expect("the queued call answered");
    assert_eq!(texts(&second.unwrap().unwrap()), ["released"]);
}

/// A server with the tool `wait` and `layers` (a concurrency limit of 1 with load shedding)
/// sheds the calls that come while one call holds the slot, and serves them once it is free.
async fn sheds_what_does_not_fit(layers: impl FnOnce(mcpwire::ServerBuilder) -> mcpwire::ServerBuilder) {
    let release = Arc::new(tokio::sync::Notify::new());
    let entered = Arc::new(AtomicUsize::new(0));
    let server = layers(Server::builder("limited", "1.0").tool(waiting_tool(&release, &entered))).build();
    let client = Arc::new(server.test_client().await.unwrap());
    let call = || {
        let client = client.clone();
        tokio::spawn(async move { client.call_tool("wait", json!({})).await })
    };

    let first = call();
    mcpwire_testkit::eventually("the first call reached the handler", || async {
        (entered.load(Ordering::SeqCst) > 0).then_some(())
    })
    .await;
    // One call holds the only slot: the next is shed at once (not queued: the paused clock
    // bounds the wait if it were), as a tool error.
    let shed = tokio::time::timeout(Duration::from_secs(10), client.call_tool("wait", json!({})))
        .await
        .expect("refused at once, not queued behind the first call")
        .unwrap();
    assert_eq!(shed.is_error, Some(true));
    assert_eq!(texts(&shed), ["the tool wait failed: service overloaded"]);
    let shed = client.list_tools(None).await.unwrap_err();
    assert!(shed.to_string().contains("service overloaded"), "{shed}");

    release.notify_one();
    assert_eq!(texts(&first.await.unwrap().unwrap()), ["released"]);
    // The slot is free again.
    let again = call();
    mcpwire_testkit::eventually("the call after the release reached the handler", || async {
        (entered.load(Ordering::SeqCst) > 1).then_some(())
    })
    .await;
    release.notify_one();
    assert_eq!(texts(&again.await.unwrap().unwrap()), ["released"]);
    assert_eq!(entered.load(Ordering::SeqCst), 2, "shed calls never reached the handler");
}

/// A layer that panics on `tools/call` of `boom` and on `prompts/list`.
#[derive(Clone)]
struct Panicky<S>(S);

impl<S> Service<McpRequest> for Panicky<S>
where
    S: Service<McpRequest, Response = McpResponse>,
{
    type Response = McpResponse;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut TaskContext<'_>) -> Poll<Result<(), S::Error>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, request: McpRequest) -> S::Future {
        if request.name() == Some("boom") || request.method() == mcpwire::protocol::Method::ListPrompts {
            panic!("the layer broke on {}", request.method());
        }
        self.0.call(request)
    }
}

#[tokio::test(start_paused = true)]
async fn a_layer_that_panics_fails_its_request_only() {
    let server = Server::builder("panicky", "1.0")
        .tool(echo_tool())
        .prompt(mcpwire::PromptDef::new(mcpwire::types::Prompt::new("p", "A prompt", vec![]), |_, _| async {
            Ok(mcpwire::types::GetPromptResult::default())
        }))
        .layer(tower::layer::layer_fn(Panicky))
        .build();
    let client = server.test_client().await.unwrap();

    let result = client.call_tool("boom", json!({})).await.unwrap();
    assert_eq!(result.is_error, Some(true));
    assert!(texts(&result)[0].contains("the tool boom failed unexpectedly"), "{result:?}");
    let error = client.list_prompts(None).await.unwrap_err();
    assert_eq!(error.code(), Some(mcpwire::protocol::error::INTERNAL_ERROR), "{error}");
    assert!(error.to_string().contains("the prompts/list handler failed unexpectedly"), "{error}");

    // The same session goes on serving.
    let result = client.call_tool("echo", json!({"text": "still here"})).await.unwrap();
    assert_eq!(texts(&result), ["still here"]);
}

#[tokio::test(start_paused = true)]
async fn a_multi_round_request_goes_through_the_layers_on_each_round() {
    /// Asks the user's name.
    #[tool]
    async fn greet(ctx: Context) -> Result<String, HandlerError> {
        let answer = ctx
            .elicit(ElicitParams {
                mode: None,
                message: "Your name?".into(),
                requested_schema: Some(
                    serde_json::from_value(json!({"type":"object","properties":{"name":{"type":"string"}}})).unwrap(),
                ),
                url: None,
                elicitation_id: None,
                task: None,
            })
            .await?;
        let name = answer.content.and_then(|c| c.get("name").cloned()).unwrap_or_default();
        Ok(format!("Hello, {}!", name.as_str().unwrap_or_default()))
    }
    let seen = Arc::new(Mutex::new(Vec::new()));
    let server = Server::builder("rounds", "1.0")
        .tool(greet_tool())
        .layer(Recorder { name: "only", seen: seen.clone() })
        .build();
    for revision in [ProtocolVersion::V2026_07_28, ProtocolVersion::V2025_11_25] {
        let client = Client::builder("c", "1.0")
            .protocol_version(revision)
            .elicitation(|_| async {
                Ok(ElicitResult {
                    action: "accept".into(),
                    content: Some(serde_json::from_value(json!({"name": "Ada"})).unwrap()),
                    meta: None,
                })
            })
            .build();
        let session = server.test_client_with(&client).await.unwrap();
        let result = session.call_tool("greet", json!({})).await.unwrap();
        assert_eq!(texts(&result), ["Hello, Ada!", "(seen)"], "{revision}");
    }
    let seen = seen.lock().unwrap().clone();
    let rows: Vec<_> = seen.iter().filter(|s| s.method == "tools/call").map(|s| (s.revision, s.error)).collect();
    // 2026-07-28 asks in rounds: the first round ends `input_required`, the retry answers.
    // 2025-11-25 asks within the one request.
    assert_eq!(
        rows,
        [
            (ProtocolVersion::V2026_07_28, false),
            (ProtocolVersion::V2026_07_28, false),
            (ProtocolVersion::V2025_11_25, false)
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn the_timeout_layer_cancels_a_call_past_its_tools_limit_and_says_so() {
    use mcpwire::server::middleware::TimeoutLayer;
    let cancelled = Arc::new(AtomicBool::new(false));
    let flag = cancelled.clone();
    let server = Server::builder("timeouts", "1.0")
        .tool(mcpwire::ToolDef::new(
            mcpwire::types::Tool::new("stuck", "Never answers", json!({"type": "object"})),
            move |_, ctx: Context| {
                // Work handed elsewhere watches the request's cancellation.
                let token = ctx.cancellation().clone();
                let flag = flag.clone();
                tokio::spawn(async move {
                    token.cancelled().await;
                    flag.store(true, Ordering::SeqCst);
                });
                std::future::pending::<mcpwire::HandlerResult<mcpwire::types::CallToolResult>>()
            },
        ))
        .tool(mcpwire::ToolDef::new(
            mcpwire::types::Tool::new("patient", "Answers after 30 s", json!({"type": "object"})),
            |_, _| async {
                tokio::time::sleep(Duration::from_secs(30)).await;
                Ok(mcpwire::types::CallToolResult::text("patience pays"))
            },
        ))
        .resource(mcpwire::ResourceDef::fixed(mcpwire::types::Resource::new("slow://r", "slow"), |_, _| async {
            tokio::time::sleep(Duration::from_secs(30)).await;
            Ok(mcpwire::types::ReadResourceResult { contents: vec![], meta: None })
        }))
        .layer(TimeoutLayer::new(Duration::from_secs(5)).tool("patient", Duration::from_secs(60)))
        .build();
    let client = server.test_client().await.unwrap();

    let started = tokio::time::Instant::now();
    let result = client.call_tool("stuck", json!({})).await.unwrap();
    assert_eq!(started.elapsed(), Duration::from_secs(5));
    assert_eq!(texts(&result), ["the tool stuck did not finish within 5s; it was cancelled"]);
    tokio::task::yield_now().await;
    assert!(cancelled.load(Ordering::SeqCst), "the request's cancellation token is cancelled");

    // A tool with a limit of its own.
    let started = tokio::time::Instant::now();
    let result = client.call_tool("patient", json!({})).await.unwrap();
    assert_eq!(started.elapsed(), Duration::from_secs(30));
    assert_eq!(texts(&result), ["patience pays"]);

    // Anything else past the limit of every request.
    let error = client.read_resource("slow://r").await.unwrap_err();
    assert_eq!(error.code(), Some(mcpwire::protocol::error::INTERNAL_ERROR), "{error}");
    assert!(error.to_string().contains("the request did not finish within 5s; it was cancelled"), "{error}");
}

#[tokio::test(start_paused = true)]
async fn the_rate_limit_layer_keeps_a_bucket_per_session_and_says_when_to_retry() {
    use mcpwire::server::middleware::{RateLimitLayer, RATE_LIMITED};
    let server = Server::builder("limited", "1.0").tool(echo_tool()).layer(RateLimitLayer::new(2.0, 3)).build();
    let a = server.test_client().await.unwrap();
    let b = server.test_client().await.unwrap();
    let call = |s: &mcpwire::ClientSession| {
        let s = s.clone();
        async move { s.call_tool("echo", json!({"text": "x"})).await }
    };
    // The client's own first request (the tool list, for output schemas) takes a token too.
    for _ in 0..2 {
        call(&a).await.unwrap();
    }
    let refused = call(&a).await.unwrap_err();
    let error = refused.error_object().expect("a JSON-RPC error");
    assert_eq!(error.code, RATE_LIMITED);
    assert_eq!(error.message, "rate limit exceeded: retry in 500 ms");
    assert_eq!(error.data, Some(json!({"retryAfterMs": 500})));
    // Another session has a bucket of its own.
    call(&b).await.unwrap();
    // Half a second on, one token is back.
    tokio::time::sleep(Duration::from_millis(500)).await;
    call(&a).await.unwrap();
    assert!(call(&a).await.is_err());

    // Keyed on nothing but the tool: one bucket for every session.
    let shared = RateLimitLayer::new(1.0, 1)
        .keyed_by(|request| (request.method() == mcpwire::protocol::Method::CallTool).then_some(()));
    let server = Server::builder("shared", "1.0").tool(echo_tool()).layer(shared).build();
    let (a, b) = (server.test_client().await.unwrap(), server.test_client().await.unwrap());
    call(&a).await.unwrap();
    let refused = call(&b).await.unwrap_err();
    assert_eq!(refused.code(), Some(RATE_LIMITED), "{refused}");
    // Lists are not keyed, so not limited.
    for _ in 0..5 {
        b.list_tools(None).await.unwrap();
    }
}

#[tokio::test(start_paused = true)]
async fn the_result_size_layer_fails_what_is_too_large() {
    use mcpwire::server::middleware::ResultSizeLayer;
    let server = Server::builder("bounded", "1.0").tool(echo_tool()).layer(ResultSizeLayer::new(1_000)).build();
    let client = server.test_client().await.unwrap();
    let result = client.call_tool("echo", json!({"text": "small"})).await.unwrap();
    assert_eq!(texts(&result), ["small"]);
    let big = "x".repeat(2_000);
    let result = client.call_tool("echo", json!({"text": big})).await.unwrap();
    assert_eq!(result.is_error, Some(true));
    assert_eq!(texts(&result), ["the result of the tool echo is larger than 1000 bytes"]);

    let server = Server::builder("tiny", "1.0").tool(echo_tool()).layer(ResultSizeLayer::new(50)).build();
    let client = server.test_client().await.unwrap();
    let error = client.list_tools(None).await.unwrap_err();
    assert_eq!(error.code(), Some(mcpwire::protocol::error::INTERNAL_ERROR), "{error}");
    assert!(error.to_string().contains("the result of tools/list is larger than 50 bytes"), "{error}");
}

#[tokio::test(start_paused = true)]
async fn the_visibility_layer_hides_items_from_lists_and_calls_alike() {
    use mcpwire::server::middleware::{Item, VisibilityLayer};
    use mcpwire::types::{
        CompleteParams, CompletionArgument, CompletionReference, Prompt, Resource, ResourceTemplate, Tool,
    };
    let admin = |item: &Item<'_>| item.meta().and_then(|m| m.get("tags")) == Some(&json!(["admin"]));
    let tags = Some(serde_json::from_value(json!({"tags": ["admin"]})).unwrap());
    let server = Server::builder("visible", "1.0")
        .tool(echo_tool())
        .tool(mcpwire::ToolDef::new(
            Tool { meta: tags.clone(), ..Tool::new("wipe", "Wipes everything", json!({"type": "object"})) },
            |_, _| async { Ok(mcpwire::types::CallToolResult::text("wiped")) },
        ))
        .resource(mcpwire::ResourceDef::fixed(
            Resource { meta: tags.clone(), ..Resource::new("secret://keys", "keys") },
            |_, _| async { Ok(mcpwire::types::ReadResourceResult::default()) },
        ))
        .resource(mcpwire::ResourceDef::template(
            ResourceTemplate {
                uri_template: "secret://users/{id}".into(),
                name: "users".into(),
                title: None,
                description: None,
                mime_type: None,
                icons: None,
                annotations: None,
                meta: tags.clone(),
            },
            |_, _, _| async { Ok(mcpwire::types::ReadResourceResult::default()) },
        ))
        .prompt(
            mcpwire::PromptDef::new(
                Prompt { meta: tags.clone(), ..Prompt::new("audit", "Audits", vec![]) },
                |_, _| async { Ok(mcpwire::types::GetPromptResult::default()) },
            )
            .with_completions("scope", ["all"]),
        )
        .layer(VisibilityLayer::new(move |ctx, item| {
            !admin(&item) || ctx.client_info().is_some_and(|c| c.name == "console")
        }))
        .build();

    for revision in [ProtocolVersion::V2026_07_28, ProtocolVersion::V2025_06_18] {
        let guest =
            server.test_client_with(&Client::builder("guest", "1").protocol_version(revision).build()).await.unwrap();
        let names: Vec<_> = guest.list_tools(None).await.unwrap().tools.into_iter().map(|t| t.name).collect();
        assert_eq!(names, ["echo"], "{revision}");
        assert!(guest.list_resources(None).await.unwrap().resources.is_empty(), "{revision}");
        assert!(guest.list_resource_templates(None).await.unwrap().resource_templates.is_empty(), "{revision}");
        assert!(guest.list_prompts(None).await.unwrap().prompts.is_empty(), "{revision}");
        // Hidden is as if it did not exist.
        let hidden = guest.call_tool("wipe", json!({})).await.unwrap_err();
        let missing = guest.call_tool("no_such_tool", json!({})).await.unwrap_err();
        assert_eq!(hidden.code(), missing.code(), "{revision}");
        assert_eq!(hidden.to_string().replace("wipe", "X"), missing.to_string().replace("no_such_tool", "X"));
        for uri in ["secret://keys", "secret://users/7"] {
            let e = guest.read_resource(uri).await.unwrap_err();
            assert_eq!(e.code(), Some(revision.resource_not_found_code()), "{revision} {uri}: {e}");
        }
        let e = guest.get_prompt("audit", Default::default()).await.unwrap_err();
        assert!(e.to_string().contains("Unknown prompt: audit"), "{e}");
        let complete = CompleteParams {
            reference: CompletionReference::Prompt { name: "audit".into() },
            argument: CompletionArgument { name: "scope".into(), value: "a".into() },
            context: None,
        };
        let e = guest.complete(complete.clone()).await.unwrap_err();
        assert!(e.to_string().contains("Unknown prompt: audit"), "{e}");

        let console =
            server.test_client_with(&Client::builder("console", "1").protocol_version(revision).build()).await.unwrap();
        assert_eq!(console.list_tools(None).await.unwrap().tools.len(), 2, "{revision}");
        assert_eq!(texts(&console.call_tool("wipe", json!({})).await.unwrap()), ["wiped"]);
        console.read_resource("secret://users/7").await.unwrap();
        console.get_prompt("audit", Default::default()).await.unwrap();
        assert_eq!(console.complete(complete).await.unwrap().completion.values, ["all"]);
    }
}

/// The spans a test sees: each with its fields as recorded, and the messages of the events
/// inside it.
#[derive(Clone, Default)]
struct Spans(Arc<Mutex<Vec<SpanSeen>>>);

#[derive(Debug, Clone, Default)]
struct SpanSeen {
    name: &'static str,
    fields: std::collections::BTreeMap<String, String>,
    events: Vec<String>,
}

struct Fields<'a>(&'a mut std::collections::BTreeMap<String, String>);

impl tracing::field::Visit for Fields<'_> {
    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }

    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
}

impl<S> tracing_subscriber::Layer<S> for Spans
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
{
    fn on_new_span(
        &self,
        attrs: &tracing::span::Attributes<'_>,
        id: &tracing::span::Id,
        ctx: tracing_subscriber::layer::Context<'_, S>,
    ) {
        let mut seen = SpanSeen { name: attrs.metadata().name(), ..Default::default() };
        attrs.record(&mut Fields(&mut seen.fields));
        let mut spans = self.0.lock().unwrap();
        ctx.span(id).unwrap().extensions_mut().insert(spans.len());
        spans.push(seen);
    }

    fn on_record(
        &self,
        id: &tracing::span::Id,
        values: &tracing::span::Record<'_>,
        ctx: tracing_subscriber::layer::Context<'_, S>,
    ) {
        let index = *ctx.span(id).unwrap().extensions().get::<usize>().unwrap();
        values.record(&mut Fields(&mut self.0.lock().unwrap()[index].fields));
    }

    fn on_event(&self, event: &tracing::Event<'_>, ctx: tracing_subscriber::layer::Context<'_, S>) {
        let Some(span) = ctx.event_span(event) else { return };
        let Some(index) = span.scope().find_map(|s| s.extensions().get::<usize>().copied()) else { return };
        let mut fields = std::collections::BTreeMap::new();
        event.record(&mut Fields(&mut fields));
        self.0.lock().unwrap()[index].events.push(fields.remove("message").unwrap_or_default());
    }
}

/// Fails when asked to.
#[tool]
fn flaky(fail: bool) -> Result<String, mcpwire::ToolError> {
    tracing::info!("flaky runs");
    match fail {
        true => Err(mcpwire::ToolError::new("it failed")),
        false => Ok("fine".into()),
    }
}

/// A layer that fails every call of the tool `gated` with an error of its own (the others
/// go on).
#[derive(Clone)]
struct Gate(mcpwire::server::middleware::Stack);

impl Service<McpRequest> for Gate {
    type Response = McpResponse;
    type Error = mcpwire::server::middleware::BoxError;
    type Future = BoxFuture<'static, Result<McpResponse, Self::Error>>;

    fn poll_ready(&mut self, cx: &mut TaskContext<'_>) -> Poll<Result<(), Self::Error>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, request: McpRequest) -> Self::Future {
        match request.name() {
            Some("gated") => Box::pin(async { Err("the gate is shut".into()) }),
            _ => self.0.call(request),
        }
    }
}

/// A tool the gate stops.
fn gated_tool() -> mcpwire::ToolDef {
    let tool = mcpwire::types::Tool::new("gated", "Behind the gate", json!({"type": "object"}));
    mcpwire::ToolDef::new(tool, |_, _| async { Ok(mcpwire::types::CallToolResult::text("through")) })
}

/// The `mcp.server.request` spans of three calls of `flaky` (fine, failing, unknown), one
/// of `gated` if `gated`, and the client's own list of the tools, on a server built by
/// `layers`.
async fn request_spans(
    layers: impl FnOnce(mcpwire::ServerBuilder) -> mcpwire::ServerBuilder,
    gated: bool,
) -> Vec<SpanSeen> {
    use tracing_subscriber::layer::SubscriberExt;
    let spans = Spans::default();
    let _guard = tracing::subscriber::set_default(tracing_subscriber::registry().with(spans.clone()));
    let server = layers(Server::builder("traced", "1.0").tool(flaky_tool()).tool(gated_tool())).build();
    let client = server.test_client().await.unwrap();
    client.call_tool("flaky", json!({"fail": false})).await.unwrap();
    client.call_tool("flaky", json!({"fail": true})).await.unwrap();
    client.call_tool("nope", json!({})).await.unwrap_err();
    if gated {
        let result = client.call_tool("gated", json!({})).await.unwrap();
        assert_eq!(result.is_error, Some(true));
        assert_eq!(texts(&result), ["the tool gated failed: the gate is shut"]);
    }
    let spans = spans.0.lock().unwrap();
    spans.iter().filter(|s| s.name == "mcp.server.request").cloned().collect()
}

/// Checks the spans of [`request_spans`] against the semantic conventions.
fn assert_conventions(spans: &[SpanSeen], gated: bool) {
    let by_name = |name: &str| spans.iter().filter(|s| s.fields["otel.name"] == name).cloned().collect::<Vec<_>>();
    let calls = by_name("tools/call flaky");
    assert_eq!(calls.len(), 2, "{spans:#?}");
    let ok = &calls[0];
    for (field, value) in [
        ("otel.kind", "server"),
        ("mcp.method.name", "tools/call"),
        ("mcp.protocol.version", ProtocolVersion::LATEST.as_str()),
        ("gen_ai.tool.name", "flaky"),
        ("gen_ai.operation.name", "execute_tool"),
    ] {
        assert_eq!(ok.fields.get(field).map(String::as_str), Some(value), "{field}: {ok:#?}");
    }
    assert!(ok.fields.contains_key("jsonrpc.request.id"), "{ok:#?}");
    assert!(!ok.fields.contains_key("error.type"), "{ok:#?}");
    assert_eq!(ok.events, ["flaky runs"], "the handler's events are inside the span");
    let failed = &calls[1];
    assert_eq!(failed.fields.get("error.type").map(String::as_str), Some("tool_error"), "{failed:#?}");
    assert_eq!(failed.fields.get("otel.status_code").map(String::as_str), Some("ERROR"), "{failed:#?}");
    let unknown = &by_name("tools/call nope")[0];
    assert_eq!(unknown.fields.get("error.type").map(String::as_str), Some("-32602"), "{unknown:#?}");
    let gate = by_name("tools/call gated");
    match gated {
        // A layer's error, as the layer said it (the client gets a tool error).
        true => assert_eq!(gate[0].fields.get("error.type").map(String::as_str), Some("the gate is shut"), "{gate:#?}"),
        false => assert!(gate.is_empty(), "{gate:#?}"),
    }
    // The client's own list of the tools: a span named by the method alone.
    let list = &by_name("tools/list")[0];
    assert!(!list.fields.contains_key("gen_ai.tool.name"), "{list:#?}");
}

#[tokio::test(start_paused = true)]
async fn the_tracing_layer_makes_a_span_per_request_with_the_semantic_conventions() {
    use mcpwire::server::middleware::TracingLayer;
    // Added last, the server runs the layer itself: alone, and around other layers.
    assert_conventions(&request_spans(|b| b.layer(TracingLayer::new()), false).await, false);
    let outermost = request_spans(|b| b.layer(tower::layer::layer_fn(Gate)).layer(TracingLayer::new()), true).await;
    assert_conventions(&outermost, true);
    // Inside another layer, it is one more service of the stack: the same spans.
    let inside = request_spans(
        |b| b.layer(tower::layer::layer_fn(Gate)).layer(TracingLayer::new()).layer(tower::layer::util::Identity::new()),
        true,
    )
    .await;
    assert_conventions(&inside, true);
    // Run by the server, the layer's span holds the log line of a layer's failure too.
    let gate = outermost.iter().find(|s| s.fields["otel.name"] == "tools/call gated").unwrap();
    assert_eq!(gate.events, ["a middleware layer failed the request: the gate is shut"]);
    let fields = |spans: Vec<SpanSeen>| {
        spans
            .into_iter()
            .map(|mut s| {
                s.fields.remove("jsonrpc.request.id");
                s.fields
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(fields(outermost), fields(inside));
}
