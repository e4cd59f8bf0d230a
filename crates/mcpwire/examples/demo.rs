//! The program of the typed-authoring contract, as written there: tools as plain typed
//! functions and methods, a resource template reading shared state, a prompt; served on
//! stdio.
//!
//! ```sh
//! cargo build -p mcpwire --example demo
//! mcp call target/debug/examples/demo add a=1 b=2
//! ```

use std::sync::{Arc, Mutex};

use mcpwire::{prompt, resource, tool, tools, Context, Json, Server, State, ToolError};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Serialize, JsonSchema)]
struct Sum {
    sum: f64,
}

/// Adds two numbers.
#[tool(read_only)]
async fn add(
    /// The first addend.
    a: f64,
    /// The second addend.
    b: f64,
) -> Json<Sum> {
    Json(Sum { sum: a + b })
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Unit {
    Celsius,
    Fahrenheit,
}

/// Tells the temperature of a city.
#[tool(name = "get_weather", title = "Weather")]
fn weather(city: String, unit: Option<Unit>, _ctx: Context) -> Result<String, ToolError> {
    if city.is_empty() {
        return Err(ToolError::new("city must not be empty"));
    }
    Ok(format!("{city}: 21 {}", if matches!(unit, Some(Unit::Fahrenheit)) { "F" } else { "C" }))
}

#[derive(Default)]
struct Notes {
    notes: Mutex<Vec<String>>,
}

#[tools]
impl Notes {
    /// Stores a note; answers its number.
    #[tool]
    async fn add_note(&self, text: String) -> String {
        let mut notes = self.notes.lock().unwrap();
        notes.push(text);
        (notes.len() - 1).to_string()
    }
}

/// A note, by number.
#[resource("notes://{id}", mime_type = "text/plain")]
async fn note(id: usize, State(notes): State<Arc<Notes>>) -> Option<String> {
    notes.notes.lock().unwrap().get(id).cloned()
}

/// Asks for a review of some code.
#[prompt]
async fn review(code: String, language: Option<String>) -> String {
    format!("Review this {} code:\n{code}", language.as_deref().unwrap_or("unknown"))
}

#[tokio::main]
async fn main() {
    let notes = Arc::new(Notes::default());
    let server = Server::builder("demo", "1.0")
        .state(notes.clone())
        .tool(add_tool())
        .tool(weather_tool())
        .tools(notes)
        .resource(note_resource())
        .prompt(review_prompt())
        .build();
    let _ = server.serve_stdio().await;
}
