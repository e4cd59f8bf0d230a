//! A real child process: `mcp serve` (the reference server), in both eras.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcpwire_client::{ChildCommand, Client, Era, ProtocolVersion};
use mcpwire_protocol::types::{ContentBlock, CreateMessageResult, ElicitResult, LoggingLevel, Role, SamplingContent};
use serde_json::json;

/// `$MCP_BIN`, else `<workspace>/target/release/mcp` (CI builds it before the tests).
fn mcp_binary() -> Option<PathBuf> {
    let path = match std::env::var_os("MCP_BIN") {
        Some(p) => PathBuf::from(p),
        None => {
            let target = std::env::var_os("CARGO_TARGET_DIR")
                .map(PathBuf::from)
                .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target"));
            target.join("release/mcp")
        }
    };
    let path =
        if path.is_relative() { PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..").join(path) } else { path };
    if path.is_file() {
        Some(path)
    } else {
        eprintln!("SKIPPED: {} does not exist; build it with `cargo build --release -p mcpwire-cli`", path.display());
        None
    }
}

fn command(binary: &PathBuf) -> ChildCommand {
    ChildCommand::new(binary).arg("serve").env("MCP_LOG", "debug")
}

fn first_text(r: &mcpwire_protocol::types::CallToolResult) -> &str {
    r.content.first().and_then(ContentBlock::as_text).unwrap_or_default()
}

#[tokio::test]
async fn modern_session_with_mcp_serve() {
    let Some(binary) = mcp_binary() else { return };
    let client = Client::builder("child-test", "1").log_level(LoggingLevel::Info).build();
    let session =
        tokio::time::timeout(Duration::from_secs(20), client.spawn(&command(&binary))).await.unwrap().unwrap();
    assert_eq!(session.era(), Era::Modern);
    assert_eq!(session.protocol_version(), ProtocolVersion::V2026_07_28);
    assert_eq!(session.server_info().unwrap().name, "mcp-reference-server");
    let tools = session.list_all_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "echo"), "{tools:?}");
    let r = session.call_tool("echo", json!({"text": "over stdio"})).await.unwrap();
    assert_eq!(first_text(&r), "over stdio");
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    session
        .call_tool_with_progress("test_tool_with_progress", json!({}), move |p| sink.lock().unwrap().push(p.progress))
        .await
        .unwrap();
    assert_eq!(*seen.lock().unwrap(), [0.0, 50.0, 100.0]);
    let mut notes = session.notifications();
    session.call_tool("test_tool_with_logging", json!({})).await.unwrap();
    let mut logs = 0;
    while let Ok(n) = notes.try_recv() {
        if let mcpwire_client::ServerNotification::Log(_) = n {
            logs += 1;
        }
    }
    assert_eq!(logs, 3, "three log messages at level info");
    let read = session.read_resource("test://static-text").await.unwrap();
    assert!(read.contents[0].text.is_some());
    let status = session.close().await.unwrap().expect("an exit status");
    assert!(status.success(), "mcp serve exits cleanly on end of input: {status:?}");
    assert!(session.is_closed());
}

#[tokio::test]
async fn legacy_session_with_mcp_serve_answers_server_requests() {
    let Some(binary) = mcp_binary() else { return };
    let client = Client::builder("child-test", "1")
        .protocol_version(ProtocolVersion::V2025_06_18)
        .sampling(|_| async {
            Ok(CreateMessageResult {
                role: Role::Assistant,
                content: SamplingContent::Single(ContentBlock::text("from the client")),
                model: "m".into(),
                stop_reason: None,
                meta: None,
            })
        })
        .elicitation(|_| async {
            Ok(ElicitResult {
                action: "accept".into(),
                content: Some(serde_json::from_value(json!({"username": "ada", "email": "a@b.c"})).unwrap()),
                meta: None,
            })
        })
        .build();
    let session =
        tokio::time::timeout(Duration::from_secs(20), client.spawn(&command(&binary))).await.unwrap().unwrap();
    assert_eq!(session.era(), Era::Legacy);
    assert_eq!(session.protocol_version(), ProtocolVersion::V2025_06_18);
    session.ping().await.unwrap();
    let r = session.call_tool("test_sampling", json!({"prompt": "hi"})).await.unwrap();
    assert_eq!(first_text(&r), "LLM response: from the client");
    let r = session.call_tool("test_elicitation", json!({"message": "who?"})).await.unwrap();
    assert!(first_text(&r).contains("action=accept"), "{r:?}");
    let status = session.close().await.unwrap().expect("an exit status");
    assert!(status.success(), "{status:?}");
}

#[tokio::test]
async fn auto_detection_over_stdio_and_command_line_parsing() {
    let Some(binary) = mcp_binary() else { return };
    let line = format!("{} serve", shell_quote(&binary.to_string_lossy()));
    let command = ChildCommand::parse(&line).unwrap();
    let session = Client::builder("c", "1").build().spawn(&command).await.unwrap();
    assert_eq!(session.era(), Era::Modern);
    let pid_status = session.close().await.unwrap();
    assert!(pid_status.is_some_and(|s| s.success()));
    // A command that does not exist.
    let e = Client::builder("c", "1").build().spawn(&ChildCommand::new("/nonexistent/server")).await.unwrap_err();
    assert!(matches!(e, mcpwire_client::ClientError::Spawn(_)), "{e}");
}

#[tokio::test]
async fn a_program_that_does_not_exist_is_a_spawn_error_with_the_os_error_as_source() {
    use std::error::Error as _;
    let client = Client::builder("c", "1").build();
    let e = client.spawn(&ChildCommand::new("/nonexistent/mcpwire-server")).await.unwrap_err();
    assert!(e.is_spawn() && !e.is_closed(), "{e}");
    assert_eq!(e.to_string(), "cannot start /nonexistent/mcpwire-server", "the source's text is not repeated");
    let io = e.source().and_then(|s| s.downcast_ref::<std::io::Error>()).expect("an io::Error source");
    assert_eq!(io.kind(), std::io::ErrorKind::NotFound);
    // A command line that does not parse is a spawn error too, its parser's error the source.
    let e = mcpwire_client::ClientError::from(ChildCommand::parse("server 'unterminated").unwrap_err());
    assert!(e.is_spawn(), "{e}");
    assert_eq!(e.to_string(), "cannot parse the command line");
    assert!(e.source().is_some(), "{e:?}");
}

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// `test_client_task_elicitation` of `mcp serve`: a client that answers elicitations as
/// tasks (2025-11-25) is asked with one; a task that never ends ends the call at its time
/// to live with a tool error.
#[tokio::test]
async fn mcp_serve_asks_a_client_that_takes_task_requests_with_a_task() {
    let Some(binary) = mcp_binary() else { return };
    let answer = |hang: bool| {
        move |_| async move {
            if hang {
                std::future::pending::<()>().await;
            }
            Ok(ElicitResult {
                action: "accept".into(),
                content: json!({"username": "ada", "email": "ada@example.com"}).as_object().cloned(),
                meta: None,
            })
        }
    };
    for (task_requests, expected) in [(true, "as a task"), (false, "plainly")] {
        let client = Client::builder("child-test", "1")
            .protocol_version(ProtocolVersion::V2025_11_25)
            .task_requests(task_requests)
            .elicitation(answer(false))
            .build();
        let session =
            tokio::time::timeout(Duration::from_secs(20), client.spawn(&command(&binary))).await.unwrap().unwrap();
        let r = session.call_tool("test_client_task_elicitation", json!({})).await.unwrap();
        assert_eq!(
            first_text(&r),
            format!(
                r#"User response ({expected}): action=accept, content={{"username":"ada","email":"ada@example.com"}}"#
            )
        );
        session.close().await.unwrap();
    }
    let client = Client::builder("child-test", "1")
        .protocol_version(ProtocolVersion::V2025_11_25)
        .task_requests(true)
        .elicitation(answer(true))
        .build();
    let session =
        tokio::time::timeout(Duration::from_secs(20), client.spawn(&command(&binary))).await.unwrap().unwrap();
    let r = session.call_tool("test_client_task_elicitation", json!({"ttlMs": 300})).await.unwrap();
    assert_eq!(r.is_error, Some(true), "{r:?}");
    assert!(first_text(&r).contains("time to live"), "{r:?}");
    session.close().await.unwrap();
}
