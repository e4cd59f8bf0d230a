//! MCP Apps: app tools and app resources as clients of both eras see them, the capability
//! negotiated each way, the checks made when the server is built, and every `_meta.ui` the
//! server writes validated against the extension's published schema
//! (`tests/fixtures/ext-apps-2.0.4.schema.json`, see `tests/fixtures/README.md`).

use mcpwire_protocol::types::{CallToolResult, Tool, APPS_EXTENSION, APP_MIME_TYPE, TASKS_EXTENSION};
use mcpwire_server::apps::{AppError, AppResource, AppTool, Csp, Permissions, Visibility};
use mcpwire_server::{BuildError, Context, Server, TaskConfig, ToolDef};
use serde_json::{json, Value};

use crate::tasks::Peer;

const VIEW: &str = "ui://clock/view.html";
const HTML: &str = "<!doctype html><p>clock</p>";

/// 2026-07-28 params: the request's `_meta` with these client capabilities.
fn modern(mut params: Value, capabilities: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": capabilities,
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
    });
    params
}

fn apps_capability() -> Value {
    json!({"extensions": {APPS_EXTENSION: {"mimeTypes": [APP_MIME_TYPE]}}})
}

fn tool(name: &str) -> Tool {
    Tool::new(name, "", json!({"type": "object"}))
}

/// A tool that says whether the client renders apps.
fn probe() -> ToolDef {
    ToolDef::new(tool("probe"), |_, ctx: Context| async move {
        Ok(CallToolResult::text(if ctx.client_supports_apps() { "apps" } else { "no apps" }))
    })
    .app(VIEW)
}

fn plain(name: &str) -> ToolDef {
    ToolDef::new(tool(name), |_, _| async { Ok(CallToolResult::text("")) })
}

fn view() -> AppResource {
    AppResource::html(VIEW, "clock-view", HTML)
}

fn app_server() -> Server {
    Server::builder("apps", "1").tool(probe()).resource(view()).try_build().expect("builds")
}

fn text(response: &Value) -> &str {
    response["result"]["content"][0]["text"].as_str().unwrap_or_default()
}

/// The published schema, rooted at one of its definitions.
fn schema(definition: &str) -> jsonschema::Validator {
    let mut root: Value = serde_json::from_str(include_str!("../fixtures/ext-apps-2.0.4.schema.json")).unwrap();
    root["$ref"] = json!(format!("#/$defs/{definition}"));
    jsonschema::validator_for(&root).expect("the schema compiles")
}

fn assert_valid(validator: &jsonschema::Validator, value: &Value) {
    let errors: Vec<String> = validator.iter_errors(value).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{value} does not validate: {errors:?}");
}

#[tokio::test]
async fn every_meta_ui_written_validates_against_the_published_schema() {
    let tool_schema = schema("McpUiToolMeta");
    let resource_schema = schema("McpUiResourceMeta");
    // The schema does refuse what it should (the check checks something).
    assert!(!tool_schema.is_valid(&json!({"resourceUri": VIEW, "visibility": ["everyone"]})));
    assert!(!resource_schema.is_valid(&json!({"csp": {"connect_domains": []}})));
    assert!(!resource_schema.is_valid(&json!({"permissions": {"camera": true}})));

    let server = Server::builder("apps", "1")
        .tool(plain("a").app(VIEW))
        .tool(plain("b").app(AppTool::new(VIEW).visibility([Visibility::App]).with_legacy_key()))
        .tool(plain("c").app(AppTool::new(VIEW).visibility([Visibility::Model, Visibility::App])))
        .resource(view())
        .resource(
            AppResource::html("ui://full", "full", HTML)
                .csp(
                    Csp::new()
                        .connect("https://api.example.com")
                        .connect("wss://live.example.com")
                        .resource("https://*.cdn.example.com")
                        .frame("https://www.youtube.com")
                        .base_uri("https://example.com"),
                )
                .permissions(Permissions::new().camera().microphone().geolocation().clipboard_write())
                .domain("a1b2.example-usercontent.com")
                .prefers_border(false),
        )
        .resource(AppResource::html("ui://some", "some", HTML).csp(Csp::new()).permissions(Permissions::new()))
        .try_build()
        .unwrap();
    for (version, modern_era) in [("2025-06-18", false), ("2025-11-25", false), ("2026-07-28", true)] {
        let mut peer = Peer::start(&server);
        let wrap = |p: Value| if modern_era { modern(p, json!({})) } else { p };
        if !modern_era {
            peer.initialize_with(version, json!({})).await;
        }
        let tools = peer.call("tools/list", wrap(json!({}))).await;
        let tools = tools["result"]["tools"].as_array().unwrap();
        assert_eq!(tools.len(), 3, "{version}");
        for t in tools {
            assert_valid(&tool_schema, &t["_meta"]["ui"]);
        }
        assert_eq!(tools[1]["_meta"]["ui/resourceUri"], VIEW, "{version}");
        assert!(tools[0]["_meta"].get("ui/resourceUri").is_none());

        let resources = peer.call("resources/list", wrap(json!({}))).await;
        let resources = resources["result"]["resources"].as_array().unwrap();
        assert_eq!(resources.len(), 3);
        let mut seen = 0;
        for r in resources {
            assert_eq!(r["mimeType"], APP_MIME_TYPE);
            let read = peer.call("resources/read", wrap(json!({"uri": r["uri"]}))).await;
            let item = &read["result"]["contents"][0];
            assert_eq!((&item["mimeType"], &item["text"]), (&json!(APP_MIME_TYPE), &json!(HTML)));
            assert_eq!(item.get("_meta"), r.get("_meta"), "the list entry and the read item agree");
            if let Some(ui) = r.get("_meta").map(|m| &m["ui"]) {
                assert_valid(&resource_schema, ui);
                seen += 1;
            }
        }
        assert_eq!(seen, 2, "the bare view has no _meta; the two others have one");
        let full = resources.iter().find(|r| r["uri"] == "ui://full").unwrap();
        assert_eq!(
            full["_meta"]["ui"],
            json!({
                "csp": {
                    "connectDomains": ["https://api.example.com", "wss://live.example.com"],
                    "resourceDomains": ["https://*.cdn.example.com"],
                    "frameDomains": ["https://www.youtube.com"],
                    "baseUriDomains": ["https://example.com"],
                },
                "permissions": {"camera": {}, "microphone": {}, "geolocation": {}, "clipboardWrite": {}},
                "domain": "a1b2.example-usercontent.com",
                "prefersBorder": false,
            })
        );
    }
}

#[tokio::test]
async fn legacy_initialize_declares_the_extension_both_ways() {
    for version in ["2025-11-25", "2025-06-18"] {
        let mut peer = Peer::start(&app_server());
        let init = peer.initialize_with(version, apps_capability()).await;
        let caps = &init["result"]["capabilities"];
        assert_eq!(caps["extensions"][APPS_EXTENSION], json!({"mimeTypes": [APP_MIME_TYPE]}), "{version}: {init}");
        assert_eq!(text(&peer.call("tools/call", json!({"name": "probe"})).await), "apps", "{version}");

        // A legacy client that declares no extensions gets none (the revision has no such member).
        let mut without = Peer::start(&app_server());
        let init = without.initialize_with(version, json!({})).await;
        assert!(init["result"]["capabilities"].get("extensions").is_none(), "{version}: {init}");
        assert_eq!(text(&without.call("tools/call", json!({"name": "probe"})).await), "no apps", "{version}");
    }
}

#[tokio::test]
async fn legacy_initialize_keeps_the_tasks_extension_out() {
    let server = Server::builder("apps", "1").tasks(TaskConfig::default()).tool(probe()).resource(view()).build();
    let mut peer = Peer::start(&server);
    let init = peer.initialize_with("2025-11-25", apps_capability()).await;
    let extensions = &init["result"]["capabilities"]["extensions"];
    assert_eq!(extensions.as_object().unwrap().keys().collect::<Vec<_>>(), [APPS_EXTENSION], "{init}");
    assert!(init["result"]["capabilities"].get("tasks").is_some());
}

#[tokio::test]
async fn modern_discover_declares_it_and_each_request_says_whether_the_client_renders_apps() {
    let server = Server::builder("apps", "1").tasks(TaskConfig::default()).tool(probe()).resource(view()).build();
    let mut peer = Peer::start(&server);
    let discover = peer.call("server/discover", modern(json!({}), json!({}))).await;
    let extensions = &discover["result"]["capabilities"]["extensions"];
    assert_eq!(extensions[APPS_EXTENSION], json!({"mimeTypes": [APP_MIME_TYPE]}), "{discover}");
    assert_eq!(extensions[TASKS_EXTENSION], json!({}));

    let call = |caps: Value| modern(json!({"name": "probe", "arguments": {}}), caps);
    assert_eq!(text(&peer.call("tools/call", call(apps_capability())).await), "apps");
    assert_eq!(text(&peer.call("tools/call", call(json!({}))).await), "no apps");
    // The same connection, the next request: per request, not per connection.
    assert_eq!(text(&peer.call("tools/call", call(apps_capability())).await), "apps");
    let other_types = json!({"extensions": {APPS_EXTENSION: {"mimeTypes": ["text/html+skybridge"]}}});
    assert_eq!(text(&peer.call("tools/call", call(other_types)).await), "no apps");
    let no_list = json!({"extensions": {APPS_EXTENSION: {}}});
    assert_eq!(text(&peer.call("tools/call", call(no_list)).await), "apps");
}

#[tokio::test]
async fn a_server_without_apps_declares_nothing() {
    let server = Server::builder("plain", "1").tool(plain("a")).build();
    let mut legacy = Peer::start(&server);
    let init = legacy.initialize_with("2025-11-25", apps_capability()).await;
    assert!(init["result"]["capabilities"].get("extensions").is_none(), "{init}");
    let mut peer = Peer::start(&server);
    let discover = peer.call("server/discover", modern(json!({}), json!({}))).await;
    assert!(discover["result"]["capabilities"].get("extensions").is_none(), "{discover}");
}

#[tokio::test]
async fn html_from_a_string_a_file_or_a_function() {
    let dir = std::env::temp_dir().join(format!("mcpwire-apps-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("view.html");
    std::fs::write(&file, "<p>from a file</p>").unwrap();
    let server = Server::builder("apps", "1")
        .resource(AppResource::html("ui://string", "s", "<p>from a string</p>"))
        .resource(AppResource::file("ui://file", "f", &file))
        .resource(AppResource::from_fn("ui://fn", "f", |ctx: Context| async move {
            Ok(format!("<p>made for {}</p>", ctx.client_info().map_or("?", |i| i.name.as_str())))
        }))
        .build();
    let mut peer = Peer::start(&server);
    peer.initialize_with("2025-11-25", json!({})).await;
    let mut read = async |uri: &str| {
        let r = peer.call("resources/read", json!({"uri": uri})).await;
        r["result"]["contents"][0]["text"].as_str().unwrap().to_owned()
    };
    assert_eq!(read("ui://string").await, "<p>from a string</p>");
    assert_eq!(read("ui://file").await, "<p>from a file</p>");
    std::fs::write(&file, "<p>edited</p>").unwrap();
    assert_eq!(read("ui://file").await, "<p>edited</p>", "read again at each read");
    assert_eq!(read("ui://fn").await, "<p>made for t</p>");
    std::fs::remove_dir_all(&dir).unwrap();
}

fn refused(builder: mcpwire_server::ServerBuilder) -> AppError {
    match builder.try_build() {
        Err(BuildError::App(e)) => e,
        Err(other) => panic!("another error: {other}"),
        Ok(_) => panic!("built"),
    }
}

#[test]
fn a_tool_uri_that_is_not_ui_is_refused() {
    let e = refused(Server::builder("x", "1").tool(plain("a").app("https://x.example/view.html")).resource(view()));
    assert_eq!(e, AppError::ToolUriNotUi { tool: "a".into(), uri: "https://x.example/view.html".into() });
    assert_eq!(e.to_string(), "the app tool `a` names `https://x.example/view.html`, which is not a `ui://` URI");
}

#[test]
fn a_resource_uri_that_is_not_ui_is_refused() {
    let e = refused(Server::builder("x", "1").resource(AppResource::html("https://x.example/v", "v", HTML)));
    assert_eq!(e, AppError::ResourceUriNotUi { uri: "https://x.example/v".into() });
}

#[test]
fn a_tool_naming_a_missing_resource_is_refused() {
    let e = refused(Server::builder("x", "1").tool(plain("a").app("ui://nowhere")).resource(view()));
    assert_eq!(e, AppError::MissingResource { tool: "a".into(), uri: "ui://nowhere".into() });
    assert!(e.to_string().contains("has no resource with that URI"), "{e}");
}

#[test]
fn meta_ui_set_by_hand_as_well_is_refused() {
    let mut hand = tool("a");
    hand.meta = Some(json!({"ui": {"resourceUri": VIEW}}).as_object().unwrap().clone());
    let def = ToolDef::new(hand, |_, _| async { Ok(CallToolResult::text("")) }).app(VIEW);
    let e = refused(Server::builder("x", "1").tool(def).resource(view()));
    assert_eq!(e, AppError::MetaSetByHand { tool: "a".into(), key: "ui".into() });
}

#[test]
fn another_mime_type_is_refused() {
    let e = refused(Server::builder("x", "1").resource(view().mime_type("text/html")));
    assert_eq!(e, AppError::WrongMimeType { uri: VIEW.into(), mime_type: "text/html".into() });
    assert!(e.to_string().contains(APP_MIME_TYPE));
}

#[test]
fn a_malformed_csp_origin_is_refused() {
    let e = refused(Server::builder("x", "1").resource(view().csp(Csp::new().resource("cdn.example.com"))));
    assert!(
        matches!(&e, AppError::MalformedOrigin { directive: "resourceDomains", origin, .. } if origin == "cdn.example.com"),
        "{e:?}"
    );
}

#[test]
fn a_missing_file_is_refused() {
    let e = refused(Server::builder("x", "1").resource(AppResource::file(VIEW, "v", "/nonexistent/view.html")));
    assert_eq!(e, AppError::MissingFile { uri: VIEW.into(), path: "/nonexistent/view.html".into() });
}

#[test]
#[should_panic(expected = "the server cannot be built: the app tool `a` names `ui://nowhere`")]
fn build_panics_with_the_error() {
    let _ = Server::builder("x", "1").tool(plain("a").app("ui://nowhere")).build();
}

#[test]
fn an_app_refused_at_run_time_is_left_out() {
    let server = app_server();
    server.register_tool(plain("bad").app("https://x.example"));
    assert_eq!(server.tool_names(), ["probe"]);
    server.register_resource(AppResource::html("ui://x", "x", HTML).csp(Csp::new().connect("nope"))).unwrap();
    assert_eq!(server.resource_uris(), [VIEW]);
    // A good one registered later is written like one given to the builder.
    server.register_tool(plain("late").app(AppTool::new(VIEW).visibility([Visibility::App])));
    let late = server.tool_definition("late").unwrap();
    assert_eq!(late.meta.unwrap()["ui"], json!({"resourceUri": VIEW, "visibility": ["app"]}));
}
