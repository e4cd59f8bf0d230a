use mcpwire::resource;

/// A note.
#[resource("notes://{id}")]
fn note() -> String {
    String::new()
}

fn main() {}
