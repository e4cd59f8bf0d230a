//! A function marked `#[tool]`, `#[resource]` or `#[prompt]` stays a plain function: its
//! name is free for a variable beside it (a `let`, a `match` arm), it is called as written,
//! and the function the macro adds (`note_tool()`, `item_resource()`, `hello_prompt()`)
//! registers it. This module compiling is half the test.

use mcpwire::{prompt, resource, tool, Server, TestClient};
use serde_json::json;

/// Writes a note.
#[tool]
async fn note(text: String) -> String {
    format!("noted: {text}")
}

/// An item, by number.
#[resource("items://{id}")]
fn item(id: u32) -> String {
    format!("item {id}")
}

/// Says hello.
#[prompt]
fn hello(name: String) -> String {
    format!("Hello, {name}!")
}

#[tokio::test]
async fn the_names_of_handlers_are_free_for_variables() {
    // Variables named as the handlers, in their module: new bindings, not patterns.
    let note = 1;
    let item = 2;
    let hello = match note + item {
        0 => 0,
        hello => hello * 2,
    };
    assert_eq!((note, item, hello), (1, 2, 6));

    let server = Server::builder("names", "1.0")
        .tool(note_tool())
        .resource(item_resource())
        .prompt(hello_prompt().with_completions("name", ["Ada"]))
        .build();
    assert_eq!(server.tool_names(), ["note"]);
    let client = server.test_client().await.unwrap();
    let called = client.call_tool("note", json!({"text": "milk"})).await.unwrap();
    assert_eq!(called.content[0].as_text(), Some("noted: milk"));
    let read = client.read_resource("items://7").await.unwrap();
    assert_eq!(read.contents[0].text.as_deref(), Some("item 7"));
    let args = [("name".to_owned(), "Ada".to_owned())].into();
    let got = client.get_prompt("hello", args).await.unwrap();
    assert_eq!(got.messages[0].content.as_text(), Some("Hello, Ada!"));
}

#[tokio::test]
async fn the_functions_are_called_as_written() {
    // The shadowed names are reached by path; in another scope, plainly.
    let note = "a variable";
    assert_eq!(self::note("x".into()).await, "noted: x");
    assert_eq!(note, "a variable");
    assert_eq!(item(3), "item 3");
    assert_eq!(hello("Bob".into()), "Hello, Bob!");
    // The definitions are plain values too, to adjust before registering.
    assert_eq!(note_tool().definition().description.as_deref(), Some("Writes a note."));
    assert_eq!(item_resource().uri(), "items://{id}");
    assert_eq!(hello_prompt().definition().name, "hello");
}
