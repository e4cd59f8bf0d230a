use mcpwire::tool;

struct Opaque;

/// Returns something that is not a result.
#[tool]
fn opaque() -> Opaque {
    Opaque
}

fn main() {}
