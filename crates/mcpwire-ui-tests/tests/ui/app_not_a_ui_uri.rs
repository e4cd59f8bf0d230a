use mcpwire::tool;

/// Shows a clock.
#[tool(app = "https://example.com/clock.html")]
fn clock() -> String {
    String::new()
}

fn main() {}
