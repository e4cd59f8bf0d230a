use mcpwire::tool;

/// Echoes.
#[tool]
fn echo<T: ToString>(text: String) -> String {
    text
}

fn main() {}
