//! The gateway: several servers behind one, each under its prefix, reached by our client of
//! either era. All in memory, on tokio's paused clock.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcpwire_bridge::{client_builder, CallRouter, Gateway, MountError};
use mcpwire_client::{CallToolOutcome, Client, ClientError, ClientSession, ServerNotification};
use mcpwire_protocol::types::{
    CallToolResult, CompleteParams, CompletionArgument, CompletionReference, ContentBlock, CreateMessageResult,
    ElicitResult, Role, SamplingContent,
};
use mcpwire_protocol::{Era, ProtocolVersion};
use mcpwire_server::Server;
use mcpwire_transport::memory;
use serde_json::json;
use tokio::sync::broadcast::error::RecvError;

const WAIT: Duration = Duration::from_secs(10);

/// A small server of notes: a tool, a resource, a template and a prompt.
fn notes() -> Server {
    let server = Server::builder("notes", "1").build();
    server.add_tool(
        serde_json::from_value(json!({
            "name": "count", "description": "Counts words.",
            "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
            "annotations": {"readOnlyHint": true}
        }))
        .unwrap(),
        |args: mcpwire_protocol::types::JsonObject, _ctx| async move {
            let words = args["text"].as_str().unwrap_or_default().split_whitespace().count();
            Ok(CallToolResult::text(words.to_string()))
        },
    );
    server.add_resource(
        serde_json::from_value(json!({"uri": "notes://all", "name": "all"})).unwrap(),
        |uri, _ctx| async move {
            Ok(serde_json::from_value(json!({"contents": [{"uri": uri, "text": "every note"}]})).unwrap())
        },
    );
    server
        .add_resource_template(
            serde_json::from_value(json!({"uriTemplate": "notes://item/{id}", "name": "item"})).unwrap(),
            |uri, vars: std::collections::HashMap<String, String>, _ctx| async move {
                let text = format!("note {}", vars["id"]);
                Ok(serde_json::from_value(json!({"contents": [{"uri": uri, "text": text}]})).unwrap())
            },
        )
        .unwrap();
    server.add_prompt(
        serde_json::from_value(json!({"name": "greet", "arguments": [{"name": "who", "required": true}]})).unwrap(),
        |args: BTreeMap<String, String>, _ctx| async move {
            Ok(serde_json::from_value(json!({"messages": [
                {"role": "user", "content": {"type": "text", "text": format!("hello {}", args["who"])}}
            ]}))
            .unwrap())
        },
    );
    server
}

/// A gateway with the reference server under `ref` and the notes under `notes`.
async fn gateway() -> (Gateway, Server) {
    let gateway = Gateway::new("gateway", "1", |b| b);
    gateway.mount_server("ref", mcpwire_reference::server()).await.expect("mount ref");
    let notes = notes();
    gateway.mount_server("notes", notes.clone()).await.expect("mount notes");
    (gateway, notes)
}

async fn downstream(server: &Server, pin: Option<ProtocolVersion>) -> ClientSession {
    let (down_client, down_server) = memory::pair();
    let server = server.clone();
    tokio::spawn(async move { server.serve(down_server).await });
    let mut builder = Client::builder("downstream", "1")
        .elicitation(|_| async move {
            Ok(ElicitResult {
                action: "accept".into(),
                content: Some(serde_json::from_value(json!({"name": "Ada", "color": "teal"})).unwrap()),
                meta: None,
            })
        })
        .sampling(|_| async {
            Ok(CreateMessageResult {
                role: Role::Assistant,
                content: SamplingContent::Single(ContentBlock::text("from downstream")),
                model: "m".into(),
                stop_reason: None,
                meta: None,
            })
        });
    if let Some(v) = pin {
        builder = builder.protocol_version(v);
    }
    builder.build().connect(down_client).await.expect("downstream connect")
}

fn text(r: &CallToolResult) -> String {
    r.content.iter().filter_map(ContentBlock::as_text).collect()
}

#[tokio::test(start_paused = true)]
async fn every_mounted_server_is_reachable_under_its_prefix_in_both_eras() {
    let (gateway, _notes) = tokio::time::timeout(WAIT, gateway()).await.unwrap();
    assert_eq!(gateway.prefixes(), ["ref", "notes"]);
    let reference = downstream(&mcpwire_reference::server(), None).await;
    let upstream_tools = reference.list_all_tools().await.unwrap();
    for pin in [Some(ProtocolVersion::V2025_06_18), None] {
        let client = tokio::time::timeout(WAIT, downstream(gateway.server(), pin)).await.unwrap();
        let label = format!("{:?}", client.protocol_version());
        let tools = client.list_all_tools().await.unwrap();
        // Each tool under its prefix, with its schemas and annotations as upstream.
        for up in &upstream_tools {
            let down = tools.iter().find(|t| t.name == format!("ref_{}", up.name));
            let down = down.unwrap_or_else(|| panic!("{label}: ref_{} listed", up.name));
            assert_eq!(down.input_schema, up.input_schema, "{label}: {}", up.name);
            assert_eq!(down.output_schema, up.output_schema, "{label}: {}", up.name);
            assert_eq!(down.annotations, up.annotations, "{label}: {}", up.name);
            assert_eq!(down.description, up.description, "{label}: {}", up.name);
        }
        let count = tools.iter().find(|t| t.name == "notes_count").expect("notes_count");
        assert_eq!(count.annotations.as_ref().and_then(|a| a.read_only_hint), Some(true));
        assert_eq!(tools.len(), upstream_tools.len() + 1, "{label}: nothing else listed");

        let r = client.call_tool("ref_echo", json!({"text": "through"})).await.unwrap();
        assert_eq!(text(&r), "through", "{label}");
        let r = client.call_tool("notes_count", json!({"text": "one two three"})).await.unwrap();
        assert_eq!(text(&r), "3", "{label}");
        let unknown = client.call_tool("echo", json!({"text": "x"})).await;
        assert!(unknown.is_err() || unknown.unwrap().is_error == Some(true), "{label}: no unprefixed names");

        let seen = Arc::new(Mutex::new(Vec::new()));
        let s2 = seen.clone();
        let r = client
            .call_tool_with_progress("ref_test_tool_with_progress", json!({}), move |p| {
                s2.lock().unwrap().push(p.progress)
            })
            .await
            .unwrap();
        assert_eq!(text(&r), "Progress test completed", "{label}");
        assert_eq!(*seen.lock().unwrap(), [0.0, 50.0, 100.0], "{label}: progress passes through");

        // Resources: URIs prefixed after the scheme, templates too, read through.
        let uris: Vec<String> = client.list_all_resources().await.unwrap().into_iter().map(|r| r.uri).collect();
        assert!(uris.contains(&"notes://notes/all".to_owned()), "{label}: {uris:?}");
        assert!(
            uris.contains(&"test://ref/static-text".to_owned()) || uris.iter().any(|u| u.starts_with("test://ref/"))
        );
        let templates: Vec<String> =
            client.list_all_resource_templates().await.unwrap().into_iter().map(|t| t.uri_template).collect();
        assert!(templates.contains(&"notes://notes/item/{id}".to_owned()), "{label}: {templates:?}");
        assert!(templates.contains(&"test://ref/template/{id}/data".to_owned()), "{label}: {templates:?}");
        let read = client.read_resource("notes://notes/all").await.unwrap();
        assert_eq!(read.contents[0].text.as_deref(), Some("every note"), "{label}");
        let read = client.read_resource("notes://notes/item/7").await.unwrap();
        assert_eq!(read.contents[0].text.as_deref(), Some("note 7"), "{label}");
        assert_eq!(read.contents[0].uri, "notes://notes/item/7", "{label}: the URI as the client knows it");
        let read = client.read_resource("test://ref/template/9/data").await.unwrap();
        assert!(read.contents[0].text.as_deref().unwrap().contains("\"9\""), "{label}");
        let missing = client.read_resource("notes://notes/nope").await.unwrap_err();
        let expected = if client.era() == Era::Modern { -32602 } else { -32002 };
        assert_eq!(missing.code(), Some(expected), "{label}");

        // Prompts and completions, routed by prefix.
        let prompt = client.get_prompt("notes_greet", [("who".into(), "Ada".into())].into()).await.unwrap();
        assert!(format!("{:?}", prompt.messages).contains("hello Ada"), "{label}");
        let completion = client
            .complete(CompleteParams {
                reference: CompletionReference::Prompt { name: "ref_test_prompt_with_arguments".into() },
                argument: CompletionArgument { name: "arg2".into(), value: "al".into() },
                context: None,
            })
            .await
            .unwrap();
        assert_eq!(completion.completion.values, ["alpha"], "{label}");
        let completion = client
            .complete(CompleteParams {
                reference: CompletionReference::Resource { uri: "test://ref/template/{id}/data".into() },
                argument: CompletionArgument { name: "id".into(), value: "12".into() },
                context: None,
            })
            .await
            .unwrap();
        assert_eq!(completion.completion.values, ["123"], "{label}");

        // A mounted server's question reaches the downstream client of the call.
        let r = client.call_tool("ref_test_sampling", json!({"prompt": "q"})).await.unwrap();
        assert_eq!(text(&r), "LLM response: from downstream", "{label}");
        if client.era() == Era::Modern {
            let r = client.call_tool("ref_test_input_required_result_multi_round", json!({})).await.unwrap();
            assert!(text(&r).contains("Ada") && text(&r).contains("teal"), "{label}: {}", text(&r));
        }
        client.close().await.unwrap();
    }
}

/// Waits for a notification that `pick` accepts, at most `WAIT`.
async fn next(
    notes: &mut tokio::sync::broadcast::Receiver<ServerNotification>,
    pick: impl Fn(&ServerNotification) -> bool,
) -> bool {
    let wait = async {
        loop {
            match notes.recv().await {
                Ok(n) if pick(&n) => return true,
                Ok(_) | Err(RecvError::Lagged(_)) => {}
                Err(RecvError::Closed) => return false,
            }
        }
    };
    tokio::time::timeout(WAIT, wait).await.unwrap_or(false)
}

/// Mounts `server` under `prefix`, spoken to in revision `version` over memory.
async fn mount_pinned(gateway: &Gateway, prefix: &str, server: Server, version: ProtocolVersion) {
    gateway
        .mount(prefix, move |router: CallRouter| {
            let server = server.clone();
            async move {
                let (ours, theirs) = memory::pair();
                tokio::spawn(async move { server.serve(theirs).await });
                client_builder("gateway", "1", &router).protocol_version(version).build().connect(ours).await
            }
        })
        .await
        .unwrap();
}

#[tokio::test(start_paused = true)]
async fn changes_of_a_mounted_server_reach_the_clients() {
    // Told by a legacy upstream as notifications (and updates once subscribed), by a
    // modern one on a `subscriptions/listen` stream.
    for version in [ProtocolVersion::V2025_11_25, ProtocolVersion::V2026_07_28] {
        changes_reach_the_clients(version).await;
    }
}

async fn changes_reach_the_clients(version: ProtocolVersion) {
    let gateway = Gateway::new("gateway", "1", |b| b);
    let notes = notes();
    mount_pinned(&gateway, "notes", notes.clone(), version).await;
    let client = downstream(gateway.server(), Some(ProtocolVersion::V2025_11_25)).await;
    // A tool added to the mounted server appears under its prefix.
    let mut notifications = client.notifications();
    notes.add_tool(
        serde_json::from_value(json!({"name": "late", "inputSchema": {"type": "object"}})).unwrap(),
        |_args: mcpwire_protocol::types::JsonObject, _ctx| async { Ok(CallToolResult::text("late")) },
    );
    assert!(
        next(&mut notifications, |n| matches!(n, ServerNotification::ToolsListChanged)).await,
        "told of the change"
    );
    let tools =
        || async { client.list_all_tools().await.unwrap().into_iter().map(|t| t.name).collect::<Vec<String>>() };
    mcpwire_testkit::eventually_within(WAIT, "notes_late listed", || async {
        tools().await.iter().any(|n| n == "notes_late").then_some(())
    })
    .await;
    assert_eq!(text(&client.call_tool("notes_late", json!({})).await.unwrap()), "late");
    // And one removed disappears.
    notes.remove_tool("late");
    mcpwire_testkit::eventually_within(WAIT, "notes_late removed", || async {
        (!tools().await.iter().any(|n| n == "notes_late")).then_some(())
    })
    .await;

    // A resource update, under its downstream URI, to a subscribed client.
    client.subscribe("notes://notes/all").await.unwrap();
    let mut notifications = client.notifications();
    notes.notify_resource_updated("notes://all");
    let updated = next(
        &mut notifications,
        |n| matches!(n, ServerNotification::ResourceUpdated(p) if p.uri == "notes://notes/all"),
    );
    assert!(updated.await, "{version:?}: the update reached the subscribed client under the prefixed URI");
}

#[tokio::test(start_paused = true)]
async fn a_dropped_server_is_connected_again_and_serves_on() {
    let gateway = Gateway::new("gateway", "1", |b| b);
    let connections = Arc::new(AtomicUsize::new(0));
    let serving: Arc<Mutex<Option<tokio::task::JoinHandle<()>>>> = Arc::default();
    let (count, slot) = (connections.clone(), serving.clone());
    gateway
        .mount("notes", move |router: CallRouter| {
            let (count, slot) = (count.clone(), slot.clone());
            async move {
                count.fetch_add(1, Ordering::SeqCst);
                let (ours, theirs) = memory::pair();
                let server = notes();
                *slot.lock().unwrap() = Some(tokio::spawn(async move { server.serve(theirs).await }));
                client_builder("gateway", "1", &router).build().connect(ours).await
            }
        })
        .await
        .unwrap();
    let client = downstream(gateway.server(), None).await;
    assert_eq!(text(&client.call_tool("notes_count", json!({"text": "a b"})).await.unwrap()), "2");

    // The server side goes away: the connection drops.
    serving.lock().unwrap().take().unwrap().abort();
    let again = mcpwire_testkit::eventually_within(WAIT, "served again", || async {
        if connections.load(Ordering::SeqCst) != 2 {
            return None;
        }
        let r = client.call_tool("notes_count", json!({"text": "a b c"})).await.ok()?;
        (r.is_error != Some(true)).then(|| text(&r))
    })
    .await;
    assert_eq!(again, "3");
    assert_eq!(connections.load(Ordering::SeqCst), 2, "one reconnection");
    // Its tools were never unlisted.
    let names: Vec<String> = client.list_all_tools().await.unwrap().into_iter().map(|t| t.name).collect();
    assert_eq!(names, ["notes_count"]);
}

#[tokio::test(start_paused = true)]
async fn mounting_errors_say_what_is_wrong_and_mount_nothing() {
    let gateway = Gateway::new("gateway", "1", |b| b);
    let bad = gateway.mount_server("a b", notes()).await.unwrap_err();
    assert!(matches!(bad, MountError::Prefix(_)), "{bad}");
    assert!(bad.to_string().contains("cannot be a prefix"), "{bad}");
    gateway.mount_server("notes", notes()).await.unwrap();
    let taken = gateway.mount_server("notes", notes()).await.unwrap_err();
    assert_eq!(taken.to_string(), "the prefix \"notes\" is already mounted");
    let refused = gateway
        .mount("down", |_router: CallRouter| async { Err::<ClientSession, _>(ClientError::Closed) })
        .await
        .unwrap_err();
    assert!(matches!(refused, MountError::Connect(_)), "{refused}");
    assert_eq!(gateway.prefixes(), ["notes"]);
    let client = downstream(gateway.server(), None).await;
    let names: Vec<String> = client.list_all_tools().await.unwrap().into_iter().map(|t| t.name).collect();
    assert_eq!(names, ["notes_count"]);
}

#[tokio::test(start_paused = true)]
async fn task_tools_work_through_the_gateway_for_a_client_with_tasks() {
    let (gateway, _notes) = gateway().await;
    let with_tasks = |server: Server| async move {
        let (down_client, down_server) = memory::pair();
        tokio::spawn(async move { server.serve(down_server).await });
        Client::builder("downstream", "1")
            .protocol_version(ProtocolVersion::V2026_07_28)
            .tasks(true)
            .elicitation(|_| async move {
                Ok(ElicitResult {
                    action: "accept".into(),
                    content: Some(serde_json::from_value(json!({"name": "Ada", "confirmed": true})).unwrap()),
                    meta: None,
                })
            })
            .build()
            .connect(down_client)
            .await
            .unwrap()
    };
    let through = with_tasks(gateway.server().clone()).await;
    let direct = with_tasks(mcpwire_reference::server()).await;
    // A task-capable tool, called by a client that takes tasks: the gateway may run the call
    // as a task of its own, which forwards it; its result is the tool's.
    assert!(through.server_offers_tool_tasks(), "the gateway offers tasks");
    let args = json!({"steps": 3, "delayMs": 10});
    let expected = tokio::time::timeout(WAIT, direct.call_tool("test_long_running_task", args.clone())).await.unwrap();
    let outcome = through.call_tool_as_task("ref_test_long_running_task", args, None);
    let outcome = tokio::time::timeout(WAIT, outcome).await.expect("in time").unwrap();
    // In 2026-07-28 the server decides whether a call becomes a task: either way, the result.
    let r = match outcome {
        CallToolOutcome::Task(task) => {
            tokio::time::timeout(WAIT, through.task_result(&task.task_id)).await.expect("in time").unwrap()
        }
        CallToolOutcome::Result(r) => r,
    };
    let expected = expected.unwrap();
    assert_eq!(text(&r), text(&expected), "the same result as without the gateway");
    // A 2025-11-25 client asks for the task itself, and the gateway makes one. (The tool's task
    // support is known from a server mounted in 2025-11-25: a 2026-07-28 tools list does not
    // carry `execution`, tasks being an extension there.)
    mount_pinned(&gateway, "old", mcpwire_reference::server(), ProtocolVersion::V2025_11_25).await;
    let legacy = downstream(gateway.server(), Some(ProtocolVersion::V2025_11_25)).await;
    let outcome = legacy.call_tool_as_task("old_test_long_running_task", json!({"steps": 3, "delayMs": 10}), None);
    let outcome = tokio::time::timeout(WAIT, outcome).await.expect("in time").unwrap();
    let CallToolOutcome::Task(task) = outcome else { panic!("a task: {outcome:?}") };
    let r = tokio::time::timeout(WAIT, legacy.task_result(&task.task_id)).await.expect("in time").unwrap();
    assert_eq!(text(&r), text(&expected), "the task's result is the tool's");

    // A tool that runs only as a task upstream is called as one by the gateway, for clients
    // of both eras that call it plainly: a 2025-11-25 upstream says so in its list, a
    // 2026-07-28 one by refusing the first plain call.
    let modern = downstream(gateway.server(), None).await;
    for client in [&legacy, &modern] {
        for tool in ["ref_test_task_required", "old_test_task_required"] {
            let label = format!("{tool} from {:?}", client.protocol_version());
            for _ in 0..2 {
                let r = tokio::time::timeout(WAIT, client.call_tool(tool, json!({}))).await.expect("in time");
                let r = r.unwrap_or_else(|e| panic!("{label}: {e}"));
                assert!(text(&r).starts_with("Ran as task "), "{label}: {r:?}");
                assert!(!text(&r).contains("none"), "{label}: it ran as a task upstream: {r:?}");
            }
        }
    }
}
