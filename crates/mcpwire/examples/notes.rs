//! A notes server over stdio: state shared by tools, a resource template and a fixed
//! resource, and a prompt, all plain functions.
//!
//! ```sh
//! cargo build -p mcpwire --example notes
//! mcp call target/debug/examples/notes add_note text="buy milk"
//! mcp list target/debug/examples/notes
//! ```

use std::sync::{Arc, Mutex};

use mcpwire::{prompt, resource, tools, Json, Server, State, ToolError};
use schemars::JsonSchema;
use serde::Serialize;

/// The notes, shared by every handler.
#[derive(Default)]
struct Notes {
    notes: Mutex<Vec<String>>,
}

/// What `search` finds.
#[derive(Serialize, JsonSchema)]
struct Found {
    /// The numbers of the notes that contain the text.
    ids: Vec<usize>,
}

#[tools]
impl Notes {
    /// Stores a note; answers its number.
    #[tool]
    fn add_note(
        &self,
        /// The note's text.
        text: String,
    ) -> Result<String, ToolError> {
        if text.trim().is_empty() {
            return Err(ToolError::new("a note needs some text"));
        }
        let mut notes = self.notes.lock().unwrap();
        notes.push(text);
        Ok((notes.len() - 1).to_string())
    }

    /// Finds the notes that contain some text.
    #[tool(read_only)]
    fn search(
        &self,
        /// The text to look for (case-insensitive).
        text: String,
    ) -> Json<Found> {
        let needle = text.to_lowercase();
        let notes = self.notes.lock().unwrap();
        let ids =
            notes.iter().enumerate().filter(|(_, n)| n.to_lowercase().contains(&needle)).map(|(i, _)| i).collect();
        Json(Found { ids })
    }
}

/// A note, by number.
#[resource("notes://{id}", mime_type = "text/plain")]
fn note(id: usize, State(notes): State<Arc<Notes>>) -> Option<String> {
    notes.notes.lock().unwrap().get(id).cloned()
}

/// Every note, one per line.
#[resource("notes://all", mime_type = "text/plain")]
fn all_notes(State(notes): State<Arc<Notes>>) -> String {
    notes.notes.lock().unwrap().join("\n")
}

/// Asks for a summary of the notes.
#[prompt]
fn summarize(
    /// How long the summary may be, in words.
    words: Option<u32>,
    State(notes): State<Arc<Notes>>,
) -> String {
    let notes = notes.notes.lock().unwrap().join("\n- ");
    format!("Summarize these notes in at most {} words:\n- {notes}", words.unwrap_or(50))
}

#[tokio::main]
async fn main() {
    let notes = Arc::new(Notes::default());
    let server = Server::builder("notes", "1.0")
        .state(notes.clone())
        .tools(notes)
        .resource(note_resource())
        .resource(all_notes_resource())
        .prompt(summarize_prompt())
        .build();
    server.serve_stdio().await;
}
