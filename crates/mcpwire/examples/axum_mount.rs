//! An existing axum application with an MCP server mounted beside its own routes, over
//! Streamable HTTP (`/mcp`; the legacy HTTP+SSE transport at `/sse`), on 127.0.0.1.
//!
//! ```sh
//! cargo run -p mcpwire --example axum_mount -- 3000
//! mcp list http://127.0.0.1:3000/mcp
//! curl http://127.0.0.1:3000/health
//! ```

use axum::routing::get;
use axum::Router;
use mcpwire::http::{HttpConfig, McpHttp};
use mcpwire::{tool, Server};

/// Says hello.
#[tool]
fn hello(
    /// Who to greet.
    name: String,
) -> String {
    format!("Hello, {name}!")
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let port: u16 = std::env::args().nth(1).and_then(|p| p.parse().ok()).unwrap_or(3000);
    let server = Server::builder("axum-app", "1.0").tool(hello_tool()).build();
    let mcp = McpHttp::new(server, HttpConfig::default());
    // The application's own routes, and the MCP endpoints merged in.
    let app = Router::new()
        .route("/health", get(|| async { "ok" }))
        .route("/", get(|| async { "an axum application with an MCP endpoint at /mcp" }))
        .merge(mcp.router());
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    eprintln!("listening on http://{}", listener.local_addr()?);
    axum::serve(listener, app).await
}
