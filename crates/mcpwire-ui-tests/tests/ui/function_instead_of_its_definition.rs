use mcpwire::tool;

/// Adds two numbers.
#[tool]
fn add(a: f64, b: f64) -> f64 {
    a + b
}

fn main() {
    // The function itself, where the definition the macro adds beside it (`add_tool()`) goes.
    let _ = mcpwire::Server::builder("a", "1").tool(add).build();
}
