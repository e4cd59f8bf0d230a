//! MCP Apps through the facade: `#[tool(app = "ui://…")]` on a function and on a method of a
//! `#[tools]` block, `mcpwire::apps` for the resource, and a client that sees the result.

use mcpwire::apps::{AppResource, AppTool, Visibility, APP_MIME_TYPE};
use mcpwire::{tool, tools, Server, TestClient};
use serde_json::json;

/// Shows a clock.
#[tool(app = "ui://clock/view.html", read_only)]
fn clock() -> String {
    "12:00".to_owned()
}

struct Timer;

#[tools]
impl Timer {
    /// Starts a timer (called by the app only).
    #[tool(app = "ui://clock/view.html", name = "start_timer")]
    fn start(&self, seconds: u32) -> String {
        format!("started for {seconds}s")
    }
}

fn view() -> AppResource {
    AppResource::html("ui://clock/view.html", "clock-view", "<!doctype html><p>clock</p>")
}

#[tokio::test]
async fn the_macro_makes_an_app_tool() {
    // The macro's settings replaced by the builder's, on a copy under another name.
    let mut app_only = clock_tool().app(AppTool::new("ui://clock/view.html").visibility([Visibility::App]));
    app_only.definition_mut().name = "app_clock".into();
    let server = Server::builder("clock", "1.0")
        .tool(clock_tool())
        .tools(Timer)
        .tool(app_only)
        .resource(view())
        .try_build()
        .expect("builds");
    let meta = |name: &str| server.tool_definition(name).unwrap().meta.unwrap()["ui"].clone();
    assert_eq!(meta("clock"), json!({"resourceUri": "ui://clock/view.html"}));
    assert_eq!(meta("start_timer"), json!({"resourceUri": "ui://clock/view.html"}));
    assert_eq!(meta("app_clock"), json!({"resourceUri": "ui://clock/view.html", "visibility": ["app"]}));
    let client = server.test_client().await.unwrap();
    let listed = client.list_tools(None).await.unwrap();
    assert!(listed.tools.iter().all(|t| t.meta.as_ref().is_some_and(|m| m.contains_key("ui"))));
    let read = client.read_resource("ui://clock/view.html").await.unwrap();
    assert_eq!(read.contents[0].mime_type.as_deref(), Some(APP_MIME_TYPE));
}

#[test]
fn the_macro_form_is_checked_when_the_server_is_built() {
    let error = Server::builder("clock", "1.0").tool(clock_tool()).try_build().unwrap_err();
    assert_eq!(
        error.to_string(),
        "the app tool `clock` names `ui://clock/view.html`, but the server has no resource with that URI"
    );
}
