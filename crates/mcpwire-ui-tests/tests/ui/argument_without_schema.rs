use mcpwire::tool;

#[derive(serde::Deserialize)]
struct Point {
    x: f64,
}

/// Moves to a point.
#[tool]
fn go(to: Point) -> String {
    format!("{}", to.x)
}

fn main() {}
