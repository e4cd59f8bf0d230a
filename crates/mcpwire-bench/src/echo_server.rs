//! One MCP server with one tool, `echo`, written two ways, to measure what typed authoring
//! costs on the hot path: `typed` is a `#[tool]` function of a `String` (its schema generated,
//! its argument deserialized into the parameter), `raw` a hand-written schema and a closure
//! over the JSON arguments. Both are validated against their input schema, as every tool is.

use anyhow::{Context as _, Result};
use mcpwire::types::{CallToolResult, Tool};
use mcpwire::{tool, HandlerError, Server, ToolDef};
use serde_json::json;

/// How the `echo` tool is written.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum Style {
    /// `#[tool] fn echo(text: String) -> String`.
    Typed,
    /// A hand-written schema and a closure over the JSON arguments.
    Raw,
}

/// The middleware layers around the handlers: what a layer costs.
#[derive(Debug, Clone, Copy, Default, clap::ValueEnum)]
pub enum Layers {
    /// None: requests are served directly.
    #[default]
    None,
    /// tower's `Identity`: the cost of the stack itself (the request moved into it, a
    /// boxed service and future).
    Identity,
    /// `TracingLayer`, with no subscriber (nothing recorded, nothing exported).
    Tracing,
}

/// Returns its `text` argument as text content.
#[tool]
fn echo(
    /// Text to echo
    text: String,
) -> String {
    text
}

fn raw_echo() -> ToolDef {
    let schema = json!({"type":"object","properties":{"text":{"type":"string","description":"Text to echo"}},"required":["text"]});
    ToolDef::new(Tool::new("echo", "Returns its `text` argument as text content.", schema), |args, _| async move {
        match args.get("text").and_then(|t| t.as_str()) {
            Some(text) => Ok(CallToolResult::text(text)),
            None => Err(HandlerError::tool("argument `text` must be a string")),
        }
    })
}

/// Serves the echo server (with `layers`) on stdio, or on 127.0.0.1:`port` over Streamable HTTP.
pub fn serve(style: Style, http: Option<u16>, layers: Layers) -> Result<()> {
    let builder = Server::builder("mcp-bench-echo", env!("CARGO_PKG_VERSION"));
    let builder = match layers {
        Layers::None => builder,
        Layers::Identity => builder.layer(tower::layer::util::Identity::new()),
        Layers::Tracing => builder.layer(mcpwire::server::middleware::TracingLayer::new()),
    };
    let server = match style {
        Style::Typed => builder.tool(echo_tool()),
        Style::Raw => builder.tool(raw_echo()),
    }
    .build();
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    rt.block_on(async move {
        let Some(port) = http else {
            server.serve_stdio().await;
            return Ok(());
        };
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
            .await
            .with_context(|| format!("cannot bind 127.0.0.1:{port}"))?;
        // The memory case opens 10,000 sessions: above the default cap.
        let config = mcpwire::http::HttpConfig { max_sessions: 100_000, ..Default::default() };
        mcpwire::http::McpHttp::new(server, config).serve(listener).await.context("HTTP server failed")
    })
}
