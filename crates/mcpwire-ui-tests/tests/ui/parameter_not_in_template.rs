use mcpwire::resource;

/// A note.
#[resource("notes://{id}")]
fn note(id: usize, page: usize) -> String {
    format!("{id} {page}")
}

fn main() {}
