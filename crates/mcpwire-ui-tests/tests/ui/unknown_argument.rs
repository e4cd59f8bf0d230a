use mcpwire::tool;

/// Reads.
#[tool(readonly)]
fn read() -> String {
    String::new()
}

fn main() {}
