//! An MCP App: a tool with an interactive interface. `roll_dice` rolls dice; a host that
//! renders MCP Apps (the `io.modelcontextprotocol/ui` extension) shows its `ui://` resource,
//! a page of plain JavaScript (`app.html`, no bundler) that completes the `ui/initialize`
//! handshake with the host over `postMessage`, shows the call's input and result, and rolls
//! again by calling the tool through the host. Served on stdio.
//!
//! ```sh
//! cargo build -p mcpwire --example app
//! mcp call target/debug/examples/app roll_dice sides=20 count=2
//! mcp read target/debug/examples/app ui://dice/view.html
//! ```

use std::time::{SystemTime, UNIX_EPOCH};

use mcpwire::apps::AppResource;
use mcpwire::types::CallToolResult;
use mcpwire::{tool, Context, Server, ToolError};
use serde::Serialize;

/// The page the host renders, in a sandboxed frame.
const VIEW: &str = include_str!("app.html");

#[derive(Serialize)]
struct Roll {
    /// Each die's face.
    rolls: Vec<u32>,
    /// Their sum.
    total: u32,
}

/// Rolls dice and shows them.
#[tool(app = "ui://dice/view.html", read_only)]
fn roll_dice(
    /// Faces of each die (2 to 100; 6 if not given).
    sides: Option<u32>,
    /// How many dice (1 to 20; 1 if not given).
    count: Option<u32>,
    ctx: Context,
) -> Result<CallToolResult, ToolError> {
    let (sides, count) = (sides.unwrap_or(6), count.unwrap_or(1));
    if !(2..=100).contains(&sides) || !(1..=20).contains(&count) {
        return Err(ToolError::new("a roll takes 2 to 100 sides and 1 to 20 dice"));
    }
    let mut seed = SystemTime::now().duration_since(UNIX_EPOCH).map_or(1, |d| d.as_nanos() as u64) | 1;
    let rolls: Vec<u32> = (0..count)
        .map(|_| {
            // xorshift64: dice for a demonstration, not for a casino.
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % u64::from(sides)) as u32 + 1
        })
        .collect();
    let total = rolls.iter().sum();
    let mut text = format!("Rolled {count}d{sides}: {rolls:?}, total {total}.");
    if !ctx.client_supports_apps() {
        text.push_str(" (A host that renders MCP Apps would show the dice.)");
    }
    let roll = Roll { rolls, total };
    let mut result = CallToolResult::text(text);
    result.structured_content = serde_json::to_value(&roll).ok();
    Ok(result)
}

#[tokio::main]
async fn main() {
    let view = AppResource::html("ui://dice/view.html", "dice-view", VIEW)
        .title("Dice")
        .description("The dice of the last roll, with a button to roll again")
        .prefers_border(true);
    let server = Server::builder("dice", "1.0").tool(roll_dice_tool()).resource(view).build();
    server.serve_stdio().await;
}
