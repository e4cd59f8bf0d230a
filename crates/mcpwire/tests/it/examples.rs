//! The examples of `crates/mcpwire/examples`, run for real: each is spawned as a child process
//! and driven by our client, over stdio or over HTTP on 127.0.0.1.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use mcpwire::types::Root;
use mcpwire::{ChildCommand, Client, ClientSession};
use serde_json::json;
use tokio::time::timeout;

const LIMIT: Duration = Duration::from_secs(60);

/// The example's binary, built beside this test (cargo builds examples with the tests);
/// built now if it is not there.
fn example(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("the test's path");
    let profile_dir = exe.parent().and_then(|deps| deps.parent()).expect("target/<profile>/deps/<test>");
    let path = profile_dir.join("examples").join(name);
    if !path.exists() {
        let profile = match profile_dir.file_name().and_then(|n| n.to_str()) {
            Some("debug") | None => "dev".to_owned(),
            Some(other) => other.to_owned(),
        };
        let status = Command::new(env!("CARGO"))
            .args(["build", "-p", "mcpwire", "--example", name, "--profile", &profile])
            .status()
            .expect("cargo runs");
        assert!(status.success(), "cargo build --example {name}");
    }
    path
}

async fn spawn(client: &Client, name: &str) -> ClientSession {
    let command = ChildCommand::new(example(name));
    timeout(LIMIT, client.spawn(&command)).await.expect("in time").expect("the example starts")
}

fn text(result: &mcpwire::types::CallToolResult) -> &str {
    result.content.first().and_then(|c| c.as_text()).unwrap_or_default()
}

#[tokio::test]
async fn notes_keeps_notes_and_serves_them_as_resources_and_prompts() {
    let s = spawn(&Client::builder("t", "1").build(), "notes").await;
    let run = async {
        assert_eq!(text(&s.call_tool("add_note", json!({"text": "Buy milk"})).await.unwrap()), "0");
        assert_eq!(text(&s.call_tool("add_note", json!({"text": "call Ada"})).await.unwrap()), "1");
        let empty = s.call_tool("add_note", json!({"text": " "})).await.unwrap();
        assert_eq!((empty.is_error, text(&empty)), (Some(true), "a note needs some text"));
        #[derive(serde::Deserialize)]
        struct Found {
            ids: Vec<usize>,
        }
        let found: Found = s.call_tool_as("search", json!({"text": "MILK"})).await.unwrap();
        assert_eq!(found.ids, [0]);
        let one = s.read_resource("notes://1").await.unwrap();
        assert_eq!(one.contents[0].text.as_deref(), Some("call Ada"));
        let all = s.read_resource("notes://all").await.unwrap();
        assert_eq!(all.contents[0].text.as_deref(), Some("Buy milk\ncall Ada"));
        let prompt = s.get_prompt("summarize", BTreeMap::from([("words".to_owned(), "10".to_owned())])).await.unwrap();
        let message = prompt.messages[0].content.as_text().unwrap();
        assert!(message.starts_with("Summarize these notes in at most 10 words:"), "{message}");
        let bad = s.get_prompt("summarize", BTreeMap::from([("words".to_owned(), "ten".to_owned())])).await;
        assert!(bad.is_err_and(|e| e.to_string().contains("argument `words`")), "a word count must be a number");
    };
    timeout(LIMIT, run).await.expect("in time");
    s.close().await.unwrap();
}

#[tokio::test]
async fn cart_keeps_a_cart_under_a_handle() {
    let s = spawn(&Client::builder("t", "1").build(), "cart").await;
    let run = async {
        let cart = text(&s.call_tool("cart_create", json!({})).await.unwrap()).to_owned();
        assert!(cart.starts_with("cart_"), "{cart}");
        let add = |item: &str, quantity: u32| {
            s.call_tool("cart_add", json!({"cart": cart, "item": item, "quantity": quantity}))
        };
        assert_eq!(text(&add("tea", 2).await.unwrap()), "2");
        assert_eq!(text(&add("tea", 1).await.unwrap()), "3");
        add("milk", 1).await.unwrap();
        let shown = s.call_tool("cart_show", json!({"cart": cart})).await.unwrap();
        assert_eq!(shown.structured_content, Some(json!({"items": {"milk": 1, "tea": 3}})));
        let unknown = s.call_tool("cart_show", json!({"cart": "cart_42"})).await.unwrap();
        assert_eq!(unknown.is_error, Some(true));
        assert_eq!(text(&unknown), r#"unknown or expired cart handle "cart_42": create a new one with cart_create"#);
    };
    timeout(LIMIT, run).await.expect("in time");
    s.close().await.unwrap();
}

/// Two instances of the cart example sharing a Redis: a cart made through one is filled and
/// shown through the other, over Streamable HTTP (2025-11-25 sessions, and 2026-07-28).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cart_instances_sharing_redis_serve_each_others_carts() {
    let redis = mcpwire_testkit::redis::RedisServer::start();
    let mut instances = Vec::new();
    for _ in 0..2 {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let child = tokio::process::Command::new(example("cart"))
            .args(["--http", &format!("127.0.0.1:{port}"), "--store", &redis.url()])
            .kill_on_drop(true)
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        instances.push((child, port));
    }
    let run = async {
        for (_, port) in &instances {
            listens(*port).await;
        }
        for version in [mcpwire::ProtocolVersion::V2025_11_25, mcpwire::ProtocolVersion::LATEST] {
            let connect = |port: u16| async move {
                let url = format!("http://127.0.0.1:{port}/mcp");
                let connection = mcpwire::transport::http::connect(&url, Default::default()).unwrap();
                Client::builder("t", "1").protocol_version(version).build().connect(connection).await.unwrap()
            };
            let (a, b) = (connect(instances[0].1).await, connect(instances[1].1).await);
            let cart = text(&a.call_tool("cart_create", json!({})).await.unwrap()).to_owned();
            let added = b.call_tool("cart_add", json!({"cart": cart, "item": "tea", "quantity": 2})).await.unwrap();
            assert_eq!(text(&added), "2", "{version}: the cart made on a, filled on b");
            let shown = a.call_tool("cart_show", json!({"cart": cart})).await.unwrap();
            assert_eq!(shown.structured_content, Some(json!({"items": {"tea": 2}})), "{version}");
        }
    };
    timeout(LIMIT, run).await.expect("in time");
}

#[tokio::test]
async fn demo_the_contract_program_serves_over_stdio() {
    let client = Client::builder("t", "1").build();
    let command = ChildCommand::parse(example("demo").to_str().unwrap()).unwrap();
    let s = timeout(LIMIT, client.spawn(&command)).await.expect("in time").expect("the example starts");
    let run = async {
        #[derive(serde::Deserialize)]
        struct Sum {
            sum: f64,
        }
        let sum: Sum = s.call_tool_as("add", json!({"a": 1, "b": 2})).await.unwrap();
        assert_eq!(sum.sum, 3.0);
        let weather = s.call_tool("get_weather", json!({"city": "Lyon", "unit": "fahrenheit"})).await.unwrap();
        assert_eq!(text(&weather), "Lyon: 21 F");
        let refused = s.call_tool("get_weather", json!({"town": "Lyon"})).await.unwrap();
        assert_eq!(refused.is_error, Some(true), "validated before the handler: {}", text(&refused));
        assert_eq!(text(&s.call_tool("add_note", json!({"text": "hi"})).await.unwrap()), "0");
        let note = s.read_resource("notes://0").await.unwrap();
        assert_eq!(note.contents[0].text.as_deref(), Some("hi"));
        let review = s.get_prompt("review", BTreeMap::from([("code".to_owned(), "x".to_owned())])).await.unwrap();
        assert_eq!(review.messages[0].content.as_text(), Some("Review this unknown code:\nx"));
    };
    timeout(LIMIT, run).await.expect("in time");
    s.close().await.unwrap();
}

#[tokio::test]
async fn file_server_reads_inside_the_roots_only() {
    let dir = std::env::temp_dir().join(format!("mcp-example-files-{}", std::process::id()));
    let root = dir.join("root");
    std::fs::create_dir_all(root.join("docs")).unwrap();
    std::fs::write(root.join("docs/readme.txt"), "inside").unwrap();
    std::fs::write(dir.join("secret.txt"), "outside").unwrap();
    let root_uri = format!("file://{}", std::fs::canonicalize(&root).unwrap().display());
    let client = Client::builder("t", "1").static_roots(vec![Root { uri: root_uri, name: None, meta: None }]).build();
    let s = spawn(&client, "file_server").await;
    let run = async {
        let read = s.call_tool("read_file", json!({"path": "docs/readme.txt"})).await.unwrap();
        assert_eq!((read.is_error, text(&read)), (None, "inside"));
        let listed = s.call_tool("list_dir", json!({"path": "."})).await.unwrap();
        assert_eq!(text(&listed), "docs/");
        for outside in ["../secret.txt", dir.join("secret.txt").to_str().unwrap(), "/etc/passwd"] {
            let refused = s.call_tool("read_file", json!({"path": outside})).await.unwrap();
            assert_eq!(refused.is_error, Some(true), "{outside}");
            assert!(text(&refused).contains("outside the client's roots"), "{outside}: {}", text(&refused));
        }
    };
    timeout(LIMIT, run).await.expect("in time");
    s.close().await.unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn axum_mount_serves_mcp_beside_the_application_routes() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut child = tokio::process::Command::new(example("axum_mount"))
        .arg(port.to_string())
        .kill_on_drop(true)
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let run = async {
        listens(port).await;
        let health = http_get(port, "/health").await;
        assert!(health.starts_with("HTTP/1.1 200") && health.ends_with("ok"), "{health}");
        let url = format!("http://127.0.0.1:{port}/mcp");
        let connection = mcpwire::transport::http::connect(&url, Default::default()).unwrap();
        let s = Client::builder("t", "1").build().connect(connection).await.unwrap();
        let hello = s.call_tool("hello", json!({"name": "Ada"})).await.unwrap();
        assert_eq!(text(&hello), "Hello, Ada!");
    };
    timeout(LIMIT, run).await.expect("in time");
    child.kill().await.unwrap();
}

/// Waits until something accepts connections on `port`.
async fn listens(port: u16) {
    mcpwire_testkit::eventually(format!("the example listening on {port}"), || async {
        tokio::net::TcpStream::connect(("127.0.0.1", port)).await.ok()
    })
    .await;
}

/// A plain HTTP/1.1 GET; the whole response as text.
async fn http_get(port: u16, path: &str) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let request = format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).await.unwrap();
    response
}

/// What the test's tracing subscriber writes: the child's stderr lines among them.
#[derive(Clone, Default)]
struct Captured(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl Captured {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

impl std::io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Captured {
    type Writer = Captured;

    fn make_writer(&'a self) -> Self::Writer {
        self.clone()
    }
}

/// A real stdio child whose handlers panic: each request is answered (a tool execution
/// error, a failed task, `-32603`), the panics are in the child's log, and the child serves on.
#[tokio::test]
async fn panics_a_handler_that_panics_fails_its_own_request_only() {
    use mcpwire::client::CallToolOutcome;
    use mcpwire::types::{CompleteParams, CompletionArgument, CompletionReference, TaskStatus};

    // The client logs the child's stderr lines; this (current-thread) test catches them.
    let log = Captured::default();
    let subscriber = tracing_subscriber::fmt().with_writer(log.clone()).with_ansi(false).finish();
    let _guard = tracing::subscriber::set_default(subscriber);
    let s = spawn(&Client::builder("t", "1").tasks(true).build(), "panics").await;
    let run = async {
        assert_eq!(text(&s.call_tool("divide", json!({"a": 6, "b": 3})).await.unwrap()), "2");
        let failed = s.call_tool("divide", json!({"a": 1, "b": 0})).await.unwrap();
        assert_eq!(failed.is_error, Some(true));
        assert!(text(&failed).contains("the tool divide failed unexpectedly"), "{}", text(&failed));
        // A panic after the handler's first wait (where a task-capable tool becomes a task,
        // which then fails).
        match s.call_tool("panic_later", json!({})).await {
            Ok(later) => assert_eq!(later.is_error, Some(true), "{}", text(&later)),
            Err(e) => assert!(e.to_string().contains("failed unexpectedly"), "{e}"),
        }
        match s.call_tool_as_task("panic_later", json!({}), None).await.unwrap() {
            CallToolOutcome::Task(task) => {
                let task = s.wait_for_task(&task.task_id).await.unwrap();
                assert_eq!(task.status, TaskStatus::Failed, "{task:?}");
            }
            CallToolOutcome::Result(r) => panic!("the server offers tasks, yet answered {r:?}"),
        }
        let resource = s.read_resource("panics://resource").await.unwrap_err();
        assert!(resource.to_string().contains("failed unexpectedly"), "{resource}");
        let topic = BTreeMap::from([("topic".to_owned(), "two words".to_owned())]);
        let prompt = s.get_prompt("broken_prompt", topic).await.unwrap_err();
        assert!(prompt.to_string().contains("failed unexpectedly"), "{prompt}");
        let complete = s
            .complete(CompleteParams {
                reference: CompletionReference::Prompt { name: "broken_prompt".into() },
                argument: CompletionArgument { name: "topic".into(), value: "a".into() },
                context: None,
            })
            .await
            .unwrap_err();
        assert!(complete.to_string().contains("failed unexpectedly"), "{complete}");
        // The middleware layer panics on a tool that does not exist.
        let layer = s.call_tool("missing", json!({})).await.unwrap();
        assert_eq!(layer.is_error, Some(true));
        assert!(text(&layer).contains("the tool missing failed unexpectedly"), "{}", text(&layer));
        // The same child serves on.
        assert_eq!(text(&s.call_tool("divide", json!({"a": 9, "b": 3})).await.unwrap()), "3");
    };
    timeout(LIMIT, run).await.expect("in time");
    s.close().await.unwrap();
    // The child's stderr reaches the log as its lines come: waited for.
    let expected = [
        "the handler panicked: attempt to divide by zero method=tools/call name=divide",
        "the task's handler panicked: the work went wrong after a while method=tools/call name=panic_later",
        "the handler panicked: the resource is broken method=resources/read name=panics://resource",
        "method=prompts/get name=broken_prompt",
        "the handler panicked: no completions method=completion/complete name=broken_prompt (argument topic)",
        "a middleware layer panicked: every tool called exists method=tools/call name=missing",
    ];
    let what =
        mcpwire_testkit::describe(|f| write!(f, "the child logged the panic of each of {expected:?}:\n{}", log.text()));
    mcpwire_testkit::eventually(what, || async { expected.iter().all(|e| log.text().contains(e)).then_some(()) }).await;
    let log = log.text();
    for e in expected {
        assert!(log.contains(e), "the child logged the panic of {e}:\n{log}");
    }
}

use crate::provider;

/// The protected example behind oidc-provider, reached by our OAuth client as a machine
/// (client credentials): it discovers the authorization server from the 401, gets a token for
/// this resource, and steps up when a tool needs a scope it lacks (403 insufficient_scope).
#[tokio::test]
async fn protected_serves_by_scope_and_signs_notes_with_the_caller() {
    let Some(auth) = provider::AuthServer::start().await else { return };
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut child = tokio::process::Command::new(example("protected"))
        .args([auth.issuer.as_str(), &port.to_string()])
        .kill_on_drop(true)
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let connect = |client_id: &'static str| {
        let url = url.clone();
        async move {
            let mut config = mcpwire::auth::OAuthConfig::new("examples test", "http://127.0.0.1:1/unused");
            config.grant = mcpwire::auth::Grant::ClientCredentials;
            // The example takes bearer tokens; DPoP-bound ones it would not.
            config.use_dpop = false;
            config
                .credentials
                .push(mcpwire::auth::ClientCredentials::new(client_id).secret(format!("{client_id}-secret")));
            let oauth = std::sync::Arc::new(mcpwire::auth::OAuthClient::new(&url, config).unwrap());
            let options = mcpwire::transport::http::HttpOptions { auth: Some(oauth), ..Default::default() };
            let connection = mcpwire::transport::http::connect(&url, options).unwrap();
            Client::builder("t", "1").build().connect(connection).await.expect("authorized and connected")
        }
    };
    let run = async {
        listens(port).await;
        let alice = connect("jwt-alice").await;
        let who = alice.call_tool("whoami", json!({})).await.unwrap();
        assert_eq!(text(&who), "subject jwt-alice, client jwt-alice, scopes mcp");
        let names = |tools: Vec<mcpwire::types::Tool>| tools.into_iter().map(|t| t.name).collect::<Vec<_>>();
        assert_eq!(names(alice.list_all_tools().await.unwrap()), ["whoami"], "only what the token's scopes permit");
        // notes:write is missing: 403, the client steps up, the call goes through.
        let noted = alice.call_tool("add_note", json!({"text": "hello"})).await.unwrap();
        assert_eq!(text(&noted), "noted, jwt-alice");
        assert_eq!(names(alice.list_all_tools().await.unwrap()), ["whoami", "add_note"]);
        // The resource and the prompt need notes:read: not listed for this token.
        assert!(alice.list_all_resources().await.unwrap().is_empty());
        assert!(alice.list_all_prompts().await.unwrap().is_empty());
        let bob = connect("jwt-bob").await;
        let notes = bob.call_tool("list_notes", json!({})).await.unwrap();
        assert_eq!(text(&notes), "jwt-alice: hello\n");
        // Stepped up to notes:read, bob sees them listed.
        assert_eq!(bob.list_all_resources().await.unwrap().len(), 1);
        assert_eq!(bob.list_all_prompts().await.unwrap().len(), 1);
    };
    timeout(LIMIT, run).await.expect("in time");
    child.kill().await.unwrap();
}

#[tokio::test]
async fn app_serves_a_tool_with_an_interface() {
    let s = spawn(&Client::builder("t", "1").build(), "app").await;
    let run = async {
        let tools = s.list_tools(None).await.unwrap().tools;
        let roll = tools.iter().find(|t| t.name == "roll_dice").expect("listed");
        let meta = roll.meta.as_ref().expect("app metadata");
        assert_eq!(meta["ui"], json!({"resourceUri": "ui://dice/view.html"}));
        let view = s.read_resource("ui://dice/view.html").await.unwrap();
        assert_eq!(view.contents[0].mime_type.as_deref(), Some(mcpwire::apps::APP_MIME_TYPE));
        let html = view.contents[0].text.as_deref().unwrap();
        for word in [
            "ui/initialize",
            "ui/notifications/initialized",
            "ui/notifications/tool-input",
            "ui/notifications/tool-result",
            "tools/call",
        ] {
            assert!(html.contains(word), "the page speaks {word}");
        }
        let rolled = s.call_tool("roll_dice", json!({"sides": 6, "count": 3})).await.unwrap();
        let rolls = rolled.structured_content.as_ref().unwrap()["rolls"].as_array().unwrap().clone();
        assert_eq!(rolls.len(), 3);
        assert!(rolls.iter().all(|r| (1..=6).contains(&r.as_u64().unwrap())), "{rolls:?}");
        assert!(text(&rolled).contains("would show the dice"), "this client renders no app: {}", text(&rolled));
    };
    timeout(LIMIT, run).await.expect("in time");
    s.close().await.unwrap();
}
