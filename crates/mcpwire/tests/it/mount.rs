//! `ServerBuilder::mount`: servers mounted in another under prefixes, with their own
//! handlers and state, in memory, on tokio's paused clock, for clients of both eras.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use mcpwire::client::ServerNotification;
use mcpwire::types::{
    CallToolResult, CompleteParams, CompletionArgument, CompletionReference, ContentBlock, ElicitParams, ElicitResult,
};
use mcpwire::{
    prompt, resource, tool, Client, Context, HandlerError, McpRequest, ProtocolVersion, Server, State, TestClient,
};
use serde_json::json;
use tokio::sync::broadcast::error::RecvError;
use tower::util::MapRequestLayer;

const WAIT: Duration = Duration::from_secs(10);

/// The notes' own state: how many were counted.
struct Counter(AtomicUsize);

/// Counts the words of `text`, keeping a total in the notes server's state.
#[tool]
fn count(text: String, counter: State<Arc<Counter>>) -> String {
    let words = text.split_whitespace().count();
    let total = (counter.0).0.fetch_add(words, Ordering::SeqCst) + words;
    format!("{words} words, {total} in all")
}

/// Asks who is there.
#[tool]
async fn ask(ctx: Context) -> Result<String, HandlerError> {
    let form: ElicitParams = serde_json::from_value(
        json!({"message": "Who?", "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}}),
    )
    .unwrap();
    let answer = ctx.elicit(form).await?;
    Ok(format!("hello {}", answer.content.and_then(|c| c.get("name").cloned()).unwrap_or_default()))
}

/// Every note.
#[resource("notes://all")]
fn all() -> &'static str {
    "every note"
}

/// One note.
#[resource("notes://item/{id}")]
fn item(id: u32) -> String {
    format!("note {id}")
}

/// Greets someone.
#[prompt]
fn greet(who: String) -> String {
    format!("hello {who}")
}

fn notes() -> Server {
    Server::builder("notes", "1")
        .state(Arc::new(Counter(AtomicUsize::new(0))))
        .tool(count_tool())
        .tool(ask_tool())
        .resource(all_resource())
        .resource(item_resource().with_completions("id", ["1", "12", "123"]))
        .prompt(greet_prompt())
        .build()
}

/// Echoes its text.
#[tool]
fn echo(text: String) -> String {
    text
}

fn text(r: &CallToolResult) -> &str {
    r.content.first().and_then(ContentBlock::as_text).unwrap_or_default()
}

#[tokio::test(start_paused = true)]
async fn a_mounted_server_is_served_under_its_prefix_with_its_own_state() {
    let notes = notes();
    let seen = Arc::new(AtomicUsize::new(0));
    let counted = seen.clone();
    let server = Server::builder("outer", "1")
        .tool(echo_tool())
        .mount("notes", notes.clone())
        .mount("again", notes.clone())
        // The outer server's layers see the mounted server's requests.
        .layer(MapRequestLayer::new(move |r: McpRequest| {
            counted.fetch_add(1, Ordering::SeqCst);
            r
        }))
        .build();
    for version in [ProtocolVersion::V2025_06_18, ProtocolVersion::V2026_07_28] {
        let client = Client::builder("c", "1")
            .protocol_version(version)
            .elicitation(|_| async {
                Ok(ElicitResult {
                    action: "accept".into(),
                    content: Some(serde_json::from_value(json!({"name": "Ada"})).unwrap()),
                    meta: None,
                })
            })
            .build();
        let session = tokio::time::timeout(WAIT, server.test_client_with(&client)).await.unwrap().unwrap();
        let names: Vec<String> = session.list_all_tools().await.unwrap().into_iter().map(|t| t.name).collect();
        assert_eq!(names, ["echo", "notes_count", "notes_ask", "again_count", "again_ask"], "{version:?}");
        let count_tool = session.list_all_tools().await.unwrap().into_iter().find(|t| t.name == "notes_count").unwrap();
        let original = notes.tool_definition("count").unwrap();
        assert_eq!(count_tool.input_schema, original.input_schema, "the schema as the mounted server has it");

        let r = session.call_tool("notes_count", json!({"text": "a b c"})).await.unwrap();
        assert!(text(&r).starts_with("3 words"), "{version:?}: {r:?}");
        // The validation is the outer server's, with the mounted tool's schema.
        let bad = session.call_tool("notes_count", json!({"text": 5})).await;
        assert!(bad.is_err() || bad.unwrap().is_error == Some(true), "{version:?}");
        // A question of the mounted tool reaches the client, in either era.
        let r = session.call_tool("again_ask", json!({})).await.unwrap();
        assert_eq!(text(&r), "hello \"Ada\"", "{version:?}");

        let read = session.read_resource("notes://notes/all").await.unwrap();
        assert_eq!(read.contents[0].text.as_deref(), Some("every note"));
        let read = session.read_resource("notes://again/item/7").await.unwrap();
        assert_eq!(read.contents[0].text.as_deref(), Some("note 7"));
        assert_eq!(read.contents[0].uri, "notes://again/item/7", "the URI as the client asked");
        let prompt = session.get_prompt("notes_greet", [("who".into(), "Ada".into())].into()).await.unwrap();
        assert!(format!("{:?}", prompt.messages).contains("hello Ada"));
        let completion = session
            .complete(CompleteParams {
                reference: CompletionReference::Resource { uri: "notes://notes/item/{id}".into() },
                argument: CompletionArgument { name: "id".into(), value: "12".into() },
                context: None,
            })
            .await
            .unwrap();
        assert_eq!(completion.completion.values, ["12", "123"]);
        let missing = session.call_tool("count", json!({"text": "x"})).await;
        assert!(missing.is_err(), "no unprefixed name: {missing:?}");
        session.close().await.unwrap();
    }
    // Both mounts share the notes server's one state: 3 words twice, in two eras.
    let r = notes.test_client().await.unwrap().call_tool("count", json!({"text": "x"})).await.unwrap();
    assert_eq!(text(&r), "1 words, 7 in all");
    assert!(seen.load(Ordering::SeqCst) > 10, "the outer server's layer saw the mounted requests");
}

#[tokio::test(start_paused = true)]
async fn later_changes_of_a_mounted_server_follow() {
    let notes = notes();
    let middle = Server::builder("middle", "1").mount("notes", notes.clone()).build();
    let outer = Server::builder("outer", "1").mount("m", middle.clone()).build();
    let client = Client::builder("c", "1").protocol_version(ProtocolVersion::V2025_11_25).build();
    let session = tokio::time::timeout(WAIT, outer.test_client_with(&client)).await.unwrap().unwrap();
    let names: Vec<String> = session.list_all_tools().await.unwrap().into_iter().map(|t| t.name).collect();
    assert_eq!(names, ["m_notes_count", "m_notes_ask"], "mounts nest");

    let mut notifications = session.notifications();
    notes.add_tool(
        serde_json::from_value(json!({"name": "late", "inputSchema": {"type": "object"}})).unwrap(),
        |_args, _ctx| async { Ok(CallToolResult::text("late")) },
    );
    let changed = async {
        loop {
            match notifications.recv().await {
                Ok(ServerNotification::ToolsListChanged) => return true,
                Ok(_) | Err(RecvError::Lagged(_)) => {}
                Err(RecvError::Closed) => return false,
            }
        }
    };
    assert!(tokio::time::timeout(WAIT, changed).await.unwrap_or(false), "the outer server's client is told");
    let r = session.call_tool("m_notes_late", json!({})).await.unwrap();
    assert_eq!(text(&r), "late");

    notes.remove_tool("late");
    let names: Vec<String> = session.list_all_tools().await.unwrap().into_iter().map(|t| t.name).collect();
    assert!(!names.contains(&"m_notes_late".to_owned()), "{names:?}");

    session.subscribe("notes://m/notes/all").await.unwrap();
    let mut notifications = session.notifications();
    notes.notify_resource_updated("notes://all");
    let updated = async {
        loop {
            match notifications.recv().await {
                Ok(ServerNotification::ResourceUpdated(p)) => return p.uri,
                Ok(_) | Err(RecvError::Lagged(_)) => {}
                Err(RecvError::Closed) => return String::new(),
            }
        }
    };
    assert_eq!(tokio::time::timeout(WAIT, updated).await.unwrap(), "notes://m/notes/all");
}

#[tokio::test(start_paused = true)]
async fn a_prefix_that_cannot_be_one_leaves_the_server_out() {
    let server = Server::builder("outer", "1").tool(echo_tool()).mount("bad prefix", notes()).build();
    let names = server.tool_names();
    assert_eq!(names, ["echo"]);
}
