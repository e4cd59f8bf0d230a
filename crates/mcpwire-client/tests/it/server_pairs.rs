//! The client against the real `mcpwire_server::Server`, in memory, for every revision.
//!
//! "Nothing arrives" is checked without waiting on the wall clock: either after a marker that
//! the server sends after anything it could have sent (it answers and announces in order on
//! the connection), or, where there is no such marker, on tokio's paused clock once every
//! task has gone idle (`settle`).

use crate::common;

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;
use mcpwire_client::{Client, ClientError, ClientSession, Era, ProtocolVersion, ServerNotification};
use mcpwire_protocol::types::{
    CompleteParams, CompletionArgument, CompletionReference, ContentBlock, CreateMessageResult, ElicitResult,
    LoggingLevel, Role, Root, SamplingContent, SubscriptionFilter,
};
use mcpwire_protocol::ErrorObject;
use serde_json::json;
use tokio::sync::broadcast;

fn text(result: &mcpwire_protocol::types::CallToolResult) -> &str {
    result.content.first().and_then(ContentBlock::as_text).unwrap_or_default()
}

/// A client with every handler.
fn full_client(builder: mcpwire_client::ClientBuilder) -> Client {
    builder
        .sampling(|params| async move {
            assert_eq!(params.max_tokens, 10);
            Ok(CreateMessageResult {
                role: Role::Assistant,
                content: SamplingContent::Single(ContentBlock::text("4")),
                model: "test-model".into(),
                stop_reason: Some("endTurn".into()),
                meta: None,
            })
        })
        .elicitation(|params| async move {
            assert_eq!(params.message, "Your name?");
            Ok(ElicitResult {
                action: "accept".into(),
                content: Some(serde_json::from_value(json!({"name": "Ada"})).unwrap()),
                meta: None,
            })
        })
        .static_roots(vec![Root { uri: "file:///work".into(), name: Some("work".into()), meta: None }])
        .build()
}

/// Receives the next notification, skipping none, within a bound.
async fn next_notification(rx: &mut broadcast::Receiver<ServerNotification>) -> ServerNotification {
    tokio::time::timeout(WAIT, rx.recv()).await.expect("no notification in time").expect("channel closed")
}

fn assert_no_notification(rx: &mut broadcast::Receiver<ServerNotification>) {
    match rx.try_recv() {
        Err(broadcast::error::TryRecvError::Empty) => {}
        other => panic!("expected no notification, got {other:?}"),
    }
}

/// Every typed call, checked, in whatever era the session is.
async fn exercise(session: &ClientSession, server: &mcpwire_server::Server) {
    let version = session.protocol_version();
    let modern = session.era() == Era::Modern;
    let ctx = format!("{version}");

    // Tools, with pagination at page size 2.
    let page = session.list_tools(None).await.unwrap();
    assert_eq!(page.tools.len(), 2, "{ctx}");
    let next = page.next_cursor.clone().expect("a next cursor");
    let page2 = session.list_tools(Some(next)).await.unwrap();
    assert_eq!(page2.tools.len(), 2, "{ctx}");
    let tools: Vec<String> = session.list_all_tools().await.unwrap().into_iter().map(|t| t.name).collect();
    assert_eq!(tools, ["echo", "fails", "slow", "progress", "log", "ask", "form", "interview", "roots"], "{ctx}");

    let r = session.call_tool("echo", json!({"text": "hi"})).await.unwrap();
    assert_eq!(text(&r), "hi", "{ctx}");
    assert_eq!(r.is_error, None);
    let r = session.call_tool("fails", serde_json::Value::Null).await.unwrap();
    assert_eq!(r.is_error, Some(true), "a tool failure is a result: {ctx}");
    let e = session.call_tool("echo", json!(5)).await.unwrap_err();
    assert!(matches!(e, ClientError::InvalidArguments(_)), "{e}");
    let e = session.call_tool("no-such-tool", json!({})).await.unwrap_err();
    assert!(e.is_protocol() && e.code() == Some(-32602), "{ctx}: {e}");

    // Resources and templates.
    let resources: Vec<String> = session.list_all_resources().await.unwrap().into_iter().map(|r| r.uri).collect();
    assert_eq!(resources, ["test://a", "test://b", "test://c"], "{ctx}");
    let first = session.list_resources(None).await.unwrap();
    assert_eq!(first.resources.len(), 2);
    assert!(first.next_cursor.is_some());
    let templates = session.list_all_resource_templates().await.unwrap();
    assert_eq!(templates.len(), 3, "{ctx}");
    assert_eq!(session.list_resource_templates(None).await.unwrap().resource_templates.len(), 2);
    let read = session.read_resource("test://b").await.unwrap();
    assert_eq!(read.contents[0].text.as_deref(), Some("static"));
    let read = session.read_resource("test://items/42").await.unwrap();
    assert_eq!(read.contents[0].text.as_deref(), Some(r#"vars={"id":"42"}"#));
    let e = session.read_resource("test://missing").await.unwrap_err();
    let expected = if modern { -32602 } else { -32002 };
    assert_eq!(e.code(), Some(expected), "{ctx}: resource not found is revision-specific: {e}");

    // Prompts and completion.
    let prompts: Vec<String> = session.list_all_prompts().await.unwrap().into_iter().map(|p| p.name).collect();
    assert_eq!(prompts, ["p1", "p2", "greet"], "{ctx}");
    assert_eq!(session.list_prompts(None).await.unwrap().prompts.len(), 2);
    let args = BTreeMap::from([("name".to_owned(), "Ada".to_owned())]);
    let prompt = session.get_prompt("greet", args).await.unwrap();
    assert_eq!(prompt.messages[0].content.as_text(), Some("Hello, Ada!"));
    let e = session.get_prompt("greet", BTreeMap::new()).await.unwrap_err();
    assert_eq!(e.code(), Some(-32602), "a missing required argument: {e}");
    let completion = session
        .complete(CompleteParams {
            reference: CompletionReference::Prompt { name: "greet".into() },
            argument: CompletionArgument { name: "name".into(), value: "al".into() },
            context: None,
        })
        .await
        .unwrap();
    assert_eq!(completion.completion.values, ["alice", "albert"], "{ctx}");

    session.ping().await.unwrap();

    // Logging: legacy through logging/setLevel, modern through _meta.
    let mut notes = session.notifications();
    session.set_logging_level(LoggingLevel::Warning).await.unwrap();
    session.call_tool("log", json!({})).await.unwrap();
    match next_notification(&mut notes).await {
        ServerNotification::Log(m) => {
            assert_eq!(m.level, LoggingLevel::Warning);
            assert_eq!(m.data, json!("warning message"));
        }
        other => panic!("{ctx}: expected a log message, got {other:?}"),
    }
    assert_no_notification(&mut notes);

    // Subscriptions: legacy resources/subscribe, modern subscriptions/listen.
    if modern {
        let e = session.subscribe("test://a").await.unwrap_err();
        assert!(e.is_unsupported(), "{e}");
        let filter = SubscriptionFilter {
            resource_subscriptions: Some(vec!["test://a".into()]),
            tools_list_changed: Some(true),
            ..Default::default()
        };
        let mut stream = session.listen(filter).await.unwrap();
        assert_eq!(stream.honoured().resource_subscriptions.as_deref(), Some(&["test://a".to_owned()][..]));
        assert_eq!(stream.honoured().tools_list_changed, Some(true));
        server.notify_resource_updated("test://a");
        let n = tokio::time::timeout(WAIT, stream.next()).await.unwrap().unwrap();
        assert!(matches!(&n, ServerNotification::ResourceUpdated(p) if p.uri == "test://a"), "{n:?}");
        drop(stream);
        // On the paused clock (the modern caller runs on it): once all is idle the server
        // has ended the stream, and once all is idle again anything it sent has arrived.
        settle().await;
        server.notify_resource_updated("test://a");
        settle().await;
        assert_no_notification(&mut notes);
        let discovered = session.discover().await.unwrap();
        assert!(discovered.supported_versions.contains(&"2026-07-28".to_owned()));
    } else {
        let e = session.listen(SubscriptionFilter::default()).await.unwrap_err();
        assert!(e.is_unsupported(), "{e}");
        assert!(session.discover().await.unwrap_err().is_unsupported());
        session.subscribe("test://a").await.unwrap();
        server.notify_resource_updated("test://a");
        match next_notification(&mut notes).await {
            ServerNotification::ResourceUpdated(p) => assert_eq!(p.uri, "test://a"),
            other => panic!("{ctx}: expected resources/updated, got {other:?}"),
        }
        session.unsubscribe("test://a").await.unwrap();
        // The server announces changes one after the other on the connection: an update of a
        // subscribed resource made afterwards is the marker, and nothing comes before it.
        session.subscribe("test://b").await.unwrap();
        server.notify_resource_updated("test://a");
        server.notify_resource_updated("test://b");
        match next_notification(&mut notes).await {
            ServerNotification::ResourceUpdated(p) => assert_eq!(p.uri, "test://b", "{ctx}: test://a is unsubscribed"),
            other => panic!("{ctx}: expected resources/updated, got {other:?}"),
        }
        session.unsubscribe("test://b").await.unwrap();
        assert_no_notification(&mut notes);
    }
}

fn assert_server_facts(session: &ClientSession) {
    let info = session.server_info().expect("server info");
    assert_eq!((info.name.as_str(), info.version.as_str()), ("test-server", "1.2.3"));
    assert_eq!(session.instructions().as_deref(), Some("Use the echo tool."));
    let caps = session.server_capabilities();
    assert!(caps.tools.is_some() && caps.resources.is_some() && caps.prompts.is_some() && caps.logging.is_some());
}

#[tokio::test]
async fn every_call_in_every_pinned_legacy_revision() {
    let (server, _) = test_server();
    for version in ProtocolVersion::LEGACY {
        let client = full_client(Client::builder("test-client", "0.1").protocol_version(version));
        let session = connect(&client, &server).await;
        assert_eq!(session.era(), Era::Legacy);
        assert_eq!(session.protocol_version(), version);
        assert_server_facts(&session);
        exercise(&session, &server).await;
        session.close().await.unwrap();
        assert!(session.is_closed());
        assert!(session.call_tool("echo", json!({"text": "x"})).await.unwrap_err().is_closed());
    }
}

#[tokio::test(start_paused = true)]
async fn modern_is_detected_and_every_call_works() {
    let (server, _) = test_server();
    let client = full_client(Client::builder("test-client", "0.1"));
    let session = connect(&client, &server).await;
    assert_eq!(session.era(), Era::Modern);
    assert_eq!(session.protocol_version(), ProtocolVersion::V2026_07_28);
    assert_server_facts(&session);
    exercise(&session, &server).await;
    session.close().await.unwrap();

    // Pinned to 2026-07-28: the same, without a fallback.
    let client = Client::builder("c", "1").protocol_version(ProtocolVersion::V2026_07_28).build();
    let session = connect(&client, &server).await;
    assert_eq!(session.era(), Era::Modern);
    exercise(&session, &server).await;
}

#[tokio::test(start_paused = true)]
async fn legacy_is_detected_whatever_the_server_answers_to_the_probe() {
    let (server, _) = test_server();
    let client = full_client(Client::builder("c", "1").probe_timeout(Duration::from_millis(300)));
    for answer in [
        LegacyProbeAnswer::MethodNotFound,
        LegacyProbeAnswer::InvalidParams,
        LegacyProbeAnswer::NotInitialized,
        LegacyProbeAnswer::Silent,
    ] {
        let session = tokio::time::timeout(WAIT, client.connect(legacy_only(&server, answer))).await.unwrap().unwrap();
        assert_eq!(session.era(), Era::Legacy, "{answer:?}");
        assert_eq!(session.protocol_version(), ProtocolVersion::LATEST_LEGACY, "{answer:?}");
        assert_server_facts(&session);
        if matches!(answer, LegacyProbeAnswer::MethodNotFound) {
            exercise(&session, &server).await;
        } else {
            let r = session.call_tool("echo", json!({"text": "ok"})).await.unwrap();
            assert_eq!(text(&r), "ok");
        }
        session.close().await.unwrap();
    }
}

#[tokio::test]
async fn sampling_elicitation_and_roots_are_answered_by_handlers_in_both_eras() {
    let (server, _) = test_server();
    // Legacy: real server-to-client requests. Modern: input_required rounds (MRTR), retried
    // transparently inside call_tool.
    for pinned in [Some(ProtocolVersion::V2025_06_18), Some(ProtocolVersion::V2025_11_25), None] {
        let mut builder = Client::builder("c", "1");
        if let Some(v) = pinned {
            builder = builder.protocol_version(v);
        }
        let session = connect(&full_client(builder), &server).await;
        let r = session.call_tool("ask", json!({})).await.unwrap();
        assert_eq!(text(&r), "test-model said 4", "{pinned:?}");
        let r = session.call_tool("form", json!({})).await.unwrap();
        assert_eq!(text(&r), r#"accept:"Ada""#, "{pinned:?}");
        let r = session.call_tool("roots", json!({})).await.unwrap();
        assert_eq!(text(&r), "file:///work", "{pinned:?}");
        let r = session.call_tool("interview", json!({})).await.unwrap();
        assert_eq!(text(&r), r#"1 roots, name "Ada""#, "{pinned:?}");
        session.close().await.unwrap();
    }
    // A bound of one round is too few for a tool that asks twice (modern era).
    let session = connect(&full_client(Client::builder("c", "1").max_input_rounds(1)), &server).await;
    let e = session.call_tool("interview", json!({})).await.unwrap_err();
    assert!(matches!(e, ClientError::InputRequired { rounds: 1, .. }), "{e}");
    // Without handlers nothing is declared, so the server does not ask: its tools fail.
    for pinned in [Some(ProtocolVersion::V2025_11_25), None] {
        let mut builder = Client::builder("c", "1");
        if let Some(v) = pinned {
            builder = builder.protocol_version(v);
        }
        let session = connect(&builder.build(), &server).await;
        for tool in ["ask", "form", "roots"] {
            match session.call_tool(tool, json!({})).await {
                Ok(r) => assert_eq!(r.is_error, Some(true), "{pinned:?} {tool}: {r:?}"),
                // Modern: -32021 MissingRequiredClientCapability.
                Err(e) => assert_eq!(e.code(), Some(-32021), "{pinned:?} {tool}: {e}"),
            }
        }
    }
}

#[tokio::test]
async fn progress_goes_to_the_callback_in_both_eras() {
    let (server, _) = test_server();
    for pinned in [Some(ProtocolVersion::V2025_03_26), None] {
        let mut builder = Client::builder("c", "1");
        if let Some(v) = pinned {
            builder = builder.protocol_version(v);
        }
        let session = connect(&builder.build(), &server).await;
        let mut notes = session.notifications();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = seen.clone();
        let r = session
            .call_tool_with_progress("progress", json!({}), move |p| {
                sink.lock().unwrap().push((p.progress, p.total, p.message));
            })
            .await
            .unwrap();
        assert_eq!(text(&r), "done");
        let seen = seen.lock().unwrap().clone();
        let msg = Some("working".to_owned());
        assert_eq!(
            seen,
            [(1.0, Some(3.0), msg.clone()), (2.0, Some(3.0), msg.clone()), (3.0, Some(3.0), msg)],
            "{pinned:?}"
        );
        assert_no_notification(&mut notes);
        // Without a callback no progress is asked for (the server sends none). What a call
        // makes the server send comes before its response, and the client hands it on as it
        // reads it: by the time the call returns, it would be here.
        session.call_tool("progress", json!({})).await.unwrap();
        assert_no_notification(&mut notes);
    }
}

#[tokio::test]
async fn modern_logging_needs_a_level_in_meta() {
    let (server, _) = test_server();
    let session = connect(&Client::builder("c", "1").build(), &server).await;
    let mut notes = session.notifications();
    // Any log message would come before the response (as the callback below relies on too).
    session.call_tool("log", json!({})).await.unwrap();
    assert_no_notification(&mut notes);
    // A level set on the builder goes into every request's _meta, and the callback sees logs.
    let logged = Arc::new(Mutex::new(Vec::new()));
    let sink = logged.clone();
    let client = Client::builder("c", "1")
        .log_level(LoggingLevel::Debug)
        .on_notification(move |n| {
            if let ServerNotification::Log(m) = n {
                sink.lock().unwrap().push(m.data.clone());
            }
        })
        .build();
    let session = connect(&client, &server).await;
    session.call_tool("log", json!({})).await.unwrap();
    assert_eq!(*logged.lock().unwrap(), [json!("debug message"), json!("warning message")]);
}

#[tokio::test(start_paused = true)]
async fn a_dropped_call_cancels_the_server_handler() {
    for pinned in [Some(ProtocolVersion::V2025_06_18), None] {
        let (server, probes) = test_server();
        let mut builder = Client::builder("c", "1");
        if let Some(v) = pinned {
            builder = builder.protocol_version(v);
        }
        let session = connect(&builder.build(), &server).await;
        let mut notes = session.notifications();
        let call = session.call_tool("slow", json!({}));
        assert!(tokio::time::timeout(Duration::from_millis(100), call).await.is_err(), "the tool is slow");
        probes.slow_dropped.wait(format!("{pinned:?}: the server dropped the handler")).await;
        assert!(!probes.slow_finished.load(Ordering::SeqCst));
        // Nothing leaks to the application, and the session goes on.
        let r = session.call_tool("echo", json!({"text": "after"})).await.unwrap();
        assert_eq!(text(&r), "after");
        settle().await;
        assert_no_notification(&mut notes);
    }
}

#[tokio::test(start_paused = true)]
async fn a_timeout_fails_the_call_and_cancels_it() {
    for pinned in [Some(ProtocolVersion::V2024_11_05), None] {
        let (server, probes) = test_server();
        let mut builder = Client::builder("c", "1");
        if let Some(v) = pinned {
            builder = builder.protocol_version(v);
        }
        let session = connect(&builder.build(), &server).await;
        let started = tokio::time::Instant::now();
        let e = session.with_timeout(Duration::from_millis(200)).call_tool("slow", json!({})).await.unwrap_err();
        assert!(e.is_timeout(), "{e}");
        // On the paused clock: failed exactly when the timeout passed, not before.
        assert_eq!(started.elapsed(), Duration::from_millis(200), "{pinned:?}");
        probes.slow_dropped.wait(format!("{pinned:?}: the timeout cancelled the handler")).await;
        // The default timeout of the session is unchanged.
        assert_eq!(text(&session.call_tool("echo", json!({"text": "x"})).await.unwrap()), "x");
    }
}

#[tokio::test]
async fn list_changes_reach_the_application() {
    let (server, _) = test_server();
    let session =
        connect(&Client::builder("c", "1").protocol_version(ProtocolVersion::V2025_11_25).build(), &server).await;
    let mut notes = session.notifications();
    server.add_tool(mcpwire_protocol::types::Tool::new("new", "new", json!({"type": "object"})), |_, _| async {
        Ok(mcpwire_protocol::types::CallToolResult::text("new"))
    });
    assert_eq!(next_notification(&mut notes).await, ServerNotification::ToolsListChanged);

    let modern = connect(&Client::builder("c", "1").build(), &server).await;
    let mut stream =
        modern.listen(SubscriptionFilter { tools_list_changed: Some(true), ..Default::default() }).await.unwrap();
    server.remove_tool("new");
    let n = tokio::time::timeout(WAIT, stream.next()).await.unwrap();
    assert_eq!(n, Some(ServerNotification::ToolsListChanged));
    // Closing the connection ends the stream.
    modern.close().await.unwrap();
    assert_eq!(tokio::time::timeout(WAIT, stream.next()).await.unwrap(), None);
}

#[tokio::test]
async fn pagination_is_bounded() {
    let (server, _) = test_server();
    let session = connect(&Client::builder("c", "1").max_pages(2).build(), &server).await;
    let e = session.list_all_tools().await.unwrap_err();
    assert!(matches!(e, ClientError::Pagination { .. }), "{e}");
    assert_eq!(session.list_all_prompts().await.unwrap().len(), 3, "two pages suffice");
}

#[tokio::test]
async fn a_handler_error_becomes_the_server_s_error() {
    let (server, _) = test_server();
    let client = Client::builder("c", "1")
        .protocol_version(ProtocolVersion::V2025_06_18)
        .sampling(|_| async { Err(ErrorObject::new(-1, "the user refused")) })
        .build();
    let session = connect(&client, &server).await;
    let r = session.call_tool("ask", json!({})).await.unwrap_err();
    // The server's tool got a protocol error from its sampling request and passed it on.
    assert_eq!(r.code(), Some(-1), "{r}");
}

#[test]
fn sampling_with_tools_is_declared_only_when_asked_and_where_it_exists() {
    use mcpwire_client::Client;
    use mcpwire_protocol::types::{ContentBlock, CreateMessageResult, Role, SamplingContent};
    use mcpwire_protocol::ProtocolVersion;
    let build = |tools: bool| {
        Client::builder("t", "1")
            .sampling(|_| async {
                Ok(CreateMessageResult {
                    role: Role::Assistant,
                    content: SamplingContent::Single(ContentBlock::text("x")),
                    model: "m".into(),
                    stop_reason: None,
                    meta: None,
                })
            })
            .sampling_tools(tools)
            .build()
    };
    let with = build(true);
    assert_eq!(
        with.capabilities(ProtocolVersion::V2025_11_25).sampling.unwrap().get("tools"),
        Some(&serde_json::json!({}))
    );
    assert_eq!(
        with.capabilities(ProtocolVersion::V2026_07_28).sampling.unwrap().get("tools"),
        Some(&serde_json::json!({}))
    );
    assert!(
        with.capabilities(ProtocolVersion::V2025_06_18).sampling.unwrap().is_empty(),
        "no sampling.tools before 2025-11-25"
    );
    assert!(build(false).capabilities(ProtocolVersion::V2025_11_25).sampling.unwrap().is_empty());
}

/// A declared extension reaches the server in either era (MCP Apps, as a host declares it),
/// beside the tasks extension when both are declared; a client that declares none has none.
#[tokio::test(start_paused = true)]
async fn declared_extensions_reach_the_server_in_either_era() {
    use mcpwire_protocol::types::{APPS_EXTENSION, APPS_MIME_TYPES, APP_MIME_TYPE, TASKS_EXTENSION};
    let server = mcpwire_server::Server::builder("s", "1").build();
    server.add_tool(
        mcpwire_protocol::types::Tool::new(
            "extensions",
            "The extensions the client declared",
            json!({"type": "object"}),
        ),
        |_: mcpwire_protocol::types::JsonObject, ctx: mcpwire_server::Context| async move {
            let declared = ctx.client_capabilities().extensions.clone().unwrap_or_default();
            let mut ids: Vec<&String> = declared.keys().collect();
            ids.sort();
            let summary = format!("apps={} ids={ids:?}", ctx.client_supports_apps());
            Ok(mcpwire_protocol::types::CallToolResult::text(summary))
        },
    );
    let host = |version: Option<ProtocolVersion>| {
        let builder = Client::builder("host", "1")
            .extension(APPS_EXTENSION, json!({ APPS_MIME_TYPES: [APP_MIME_TYPE] }))
            // Not an object: declared as `{}`.
            .extension("example.com/other", json!("on"))
            .tasks(true);
        match version {
            Some(v) => builder.protocol_version(v),
            None => builder,
        }
        .build()
    };
    // Sorted, as the tool lists them.
    let both = format!("{:?}", ["example.com/other", TASKS_EXTENSION, APPS_EXTENSION]);
    let legacy = format!("{:?}", ["example.com/other", APPS_EXTENSION]);
    for (client, era, expected) in [
        (host(None), Era::Modern, format!("apps=true ids={both}")),
        // The tasks extension is 2026-07-28's; the others are declared in `initialize` too.
        (host(Some(ProtocolVersion::V2025_11_25)), Era::Legacy, format!("apps=true ids={legacy}")),
        (host(Some(ProtocolVersion::V2025_03_26)), Era::Legacy, format!("apps=true ids={legacy}")),
        (Client::builder("plain", "1").build(), Era::Modern, "apps=false ids=[]".to_owned()),
    ] {
        let session = connect(&client, &server).await;
        assert_eq!(session.era(), era);
        let result = session.call_tool("extensions", json!({})).await.unwrap();
        assert_eq!(text(&result), expected, "{}", session.protocol_version());
        session.close().await.unwrap();
    }
    assert_eq!(
        host(None).capabilities(ProtocolVersion::V2025_06_18).extensions.unwrap()["example.com/other"],
        json!({})
    );
}
