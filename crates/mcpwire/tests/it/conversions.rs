//! What does not read as its type is told in words, over the wire: a template variable, a
//! prompt argument, a tool's result read by the client as the wrong type.

use mcpwire::{prompt, resource, tool, ClientError, Json, Server, TestClient};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

/// A note, by number.
#[resource("notes://{id}")]
fn note(id: u64) -> String {
    format!("note {id}")
}

/// Summarizes in so many words.
#[prompt]
fn summarize(words: u8) -> String {
    format!("Summarize in {words} words")
}

#[derive(Serialize, JsonSchema)]
struct Sum {
    sum: f64,
}

/// Adds two numbers.
#[tool]
fn add(a: f64, b: f64) -> Json<Sum> {
    Json(Sum { sum: a + b })
}

fn server() -> Server {
    Server::builder("conversions", "1.0").resource(note_resource()).prompt(summarize_prompt()).tool(add_tool()).build()
}

/// The message of the JSON-RPC error the server answered with.
fn refusal<T: std::fmt::Debug>(result: Result<T, ClientError>) -> String {
    match result {
        Err(ClientError::Protocol { error, .. }) => error.message,
        other => panic!("not a JSON-RPC error: {other:?}"),
    }
}

#[tokio::test]
async fn template_variables_and_prompt_arguments_say_what_they_take() {
    let client = server().test_client().await.unwrap();
    assert_eq!(client.read_resource("notes://5").await.unwrap().contents[0].text.as_deref(), Some("note 5"));
    assert_eq!(
        refusal(client.read_resource("notes://abc").await),
        r#"Invalid params: argument `id`: expected an unsigned integer, got "abc""#
    );
    let words = |w: &str| [("words".to_owned(), w.to_owned())].into();
    assert!(client.get_prompt("summarize", words("12")).await.is_ok());
    assert_eq!(
        refusal(client.get_prompt("summarize", words("many")).await),
        r#"Invalid params: argument `words`: expected an integer from 0 to 255, got "many""#
    );
    assert_eq!(
        refusal(client.get_prompt("summarize", words("1000")).await),
        "Invalid params: argument `words`: expected an integer from 0 to 255, got 1000"
    );
}

#[tokio::test]
async fn a_result_read_as_the_wrong_type_says_why_in_its_message() {
    #[derive(Debug, Deserialize, PartialEq)]
    struct Total {
        sum: f64,
    }
    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Titled {
        title: String,
    }
    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Named {
        sum: String,
    }
    let client = server().test_client().await.unwrap();
    let args = json!({"a": 1, "b": 2});
    assert_eq!(client.call_tool_as::<Total>("add", args.clone()).await.unwrap(), Total { sum: 3.0 });

    let e = client.call_tool_as::<Titled>("add", args.clone()).await.unwrap_err();
    assert!(e.is_decode(), "{e:?}");
    assert_eq!(
        e.to_string(),
        "cannot decode the answer to tools/call: the result of tool add does not read as `Titled`: missing field `title`"
    );
    assert_eq!(mcpwire::protocol::error::chain(&e), e.to_string(), "the cause is told once");

    let e = client.call_tool_as::<Named>("add", args.clone()).await.unwrap_err();
    assert_eq!(
        e.to_string(),
        "cannot decode the answer to tools/call: the result of tool add does not read as `Named`: `sum`: expected a string, got 3.0"
    );
    let e = client.call_tool_as::<Vec<u8>>("add", args).await.unwrap_err();
    assert_eq!(
        e.to_string(),
        "cannot decode the answer to tools/call: the result of tool add does not read as `Vec<u8>`: expected a list, got an object"
    );
}
