use mcpwire::tool;

struct Notes;

impl Notes {
    /// Counts.
    #[tool]
    fn count(&self) -> usize {
        0
    }
}

fn main() {}
