//! What a handler (or a middleware layer) that panics does to a server: it fails its own
//! request, and nothing else.
//! A panic is a bug, but a server with many clients should not go down for one of them; the
//! panic is logged on stderr with the method and the name of what panicked.
//!
//! ```sh
//! cargo build -p mcpwire --example panics
//! mcp call target/debug/examples/panics divide a=1 b=0    # a tool error; the server goes on
//! ```

use std::time::Duration;

use mcpwire::protocol::Method;
use mcpwire::server::TaskConfig;
use mcpwire::{prompt, resource, tool, McpRequest, Server};
use tower::util::MapRequestLayer;

/// Divides two integers (integer division by zero panics).
#[tool]
fn divide(a: i64, b: i64) -> i64 {
    a / b
}

/// Panics after its first wait, in the task it runs in.
#[tool(task = "optional")]
async fn panic_later() -> String {
    tokio::time::sleep(Duration::from_millis(10)).await;
    panic!("the work went wrong after a while")
}

/// A resource whose reading panics.
#[resource("panics://resource", mime_type = "text/plain")]
fn broken_resource() -> String {
    panic!("the resource is broken")
}

/// A prompt whose rendering panics.
#[prompt]
fn broken_prompt(
    /// Anything.
    topic: String,
) -> String {
    let words: Vec<&str> = topic.split(' ').collect();
    words[10].to_owned()
}

#[tokio::main]
async fn main() {
    // The panics are logged (at `error` level): on stderr, which stdio leaves to the log.
    tracing_subscriber::fmt().with_writer(std::io::stderr).with_ansi(false).init();
    let completing = broken_prompt_prompt().complete_with("topic", |_, _, _| async { panic!("no completions") });
    // A middleware layer with a bug: it looks up the tool of every call, and takes for
    // granted that it exists (a call of an unknown tool panics here).
    let audit = MapRequestLayer::new(|request: McpRequest| {
        if request.method() == Method::CallTool {
            let name = request.name().unwrap_or_default();
            let tool = request.server().tool_definition(name).expect("every tool called exists");
            tracing::debug!(tool = tool.name, "audited");
        }
        request
    });
    let server = Server::builder("panics", "1.0")
        .tool(divide_tool())
        .tool(panic_later_tool())
        .resource(broken_resource_resource())
        .prompt(completing)
        .tasks(TaskConfig::default())
        .layer(audit)
        .build();
    server.serve_stdio().await;
}
