//! What handlers return, and how it becomes a result.
//!
//! | handler returns | tool result | resource contents | prompt |
//! |---|---|---|---|
//! | `String`, `&'static str` | one text block | text | one user message |
//! | numbers, `bool` | one text block | | |
//! | `()` | no content | | |
//! | [`Json<T>`] | `structuredContent` and the same JSON as text; `outputSchema` from `T` | | |
//! | `ContentBlock`, `Vec<ContentBlock>` | these blocks (images, audio, links...) | | |
//! | `CallToolResult`, `ReadResourceResult`, `GetPromptResult` | as is | as is | as is |
//! | `Vec<u8>` | | a base64 blob | |
//! | `ResourceContents`, `Vec<ResourceContents>` | | as is | |
//! | `PromptMessage`, `Vec<PromptMessage>` | | | these messages |
//! | `Option<T>` | | `None`: resource not found | |
//! | `Result<T, E>` | `Err`: a tool execution error with `E`'s message | `-32603` | `-32603` |
//!
//! An `Err` that is a [`HandlerError`] keeps its meaning (a protocol error stays one, and
//! `input_required` still asks the client); any other `E: Display` (so `anyhow::Error`,
//! [`ToolError`]) gives its message.
//!
//! A `Json<T>` whose `T` is not an object in JSON (a number, a list, an enum) is sent as
//! `{"result": ...}`, and its output schema says so: `structuredContent` must be an object.

use std::any::Any;
use std::fmt;

use base64::Engine;
use mcpwire_protocol::types::{
    CallToolResult, ContentBlock, GetPromptResult, JsonObject, PromptMessage, ReadResourceResult, ResourceContents,
    WRAPPED_RESULT,
};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use super::schema::root_schema;
use crate::error::{HandlerError, HandlerResult};

/// A structured tool result: `T` serialized as `structuredContent` (and as a text block with
/// the same JSON), its schema as the tool's `outputSchema`. As an argument type it is simply
/// `T` read from JSON.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Json<T>(pub T);

impl<T> std::ops::Deref for Json<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

/// A tool's failure, shown to the model as a result with `isError: true`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolError {
    message: String,
}

impl ToolError {
    /// A failure with a message for the model.
    pub fn new(message: impl Into<String>) -> Self {
        Self { message: message.into() }
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ToolError {}

impl From<ToolError> for HandlerError {
    fn from(e: ToolError) -> Self {
        HandlerError::Tool(e.message)
    }
}

/// The output schema of a tool whose results are structured.
#[derive(Debug, Clone, PartialEq)]
pub struct OutputSchema {
    /// The schema of `structuredContent`.
    pub schema: JsonObject,
    /// Whether values are wrapped as `{"result": value}` (they are not objects).
    pub wrapped: bool,
}

impl OutputSchema {
    /// The output schema of values of type `T`.
    pub fn of<T: JsonSchema + ?Sized>() -> Self {
        let (schema, is_object) = root_schema::<T>();
        if is_object {
            return Self { schema, wrapped: false };
        }
        let mut inner = schema;
        let defs = inner.remove("$defs");
        let mut properties = JsonObject::new();
        properties.insert(WRAPPED_RESULT.to_owned(), Value::Object(inner));
        let mut wrapper = JsonObject::new();
        wrapper.insert("type".to_owned(), Value::from("object"));
        wrapper.insert("properties".to_owned(), Value::Object(properties));
        wrapper.insert("required".to_owned(), Value::from(vec![Value::from(WRAPPED_RESULT)]));
        if let Some(defs) = defs {
            wrapper.insert("$defs".to_owned(), defs);
        }
        Self { schema: wrapper, wrapped: true }
    }
}

/// An `Err` of a handler: a [`HandlerError`] as it is, anything else by its message.
fn failure<E: fmt::Display + 'static>(e: E) -> HandlerError {
    match (&e as &dyn Any).downcast_ref::<HandlerError>() {
        Some(handler_error) => handler_error.clone(),
        None => HandlerError::Tool(e.to_string()),
    }
}

/// What a tool handler may return.
#[diagnostic::on_unimplemented(
    message = "a tool cannot return `{Self}`",
    label = "not a tool result",
    note = "return text (`String`), numbers, `Json<T>` for structured results, content blocks, a `CallToolResult`, or a `Result` of one of these"
)]
pub trait IntoToolResult {
    /// The output schema of such results, if they are structured.
    fn output_schema() -> Option<OutputSchema> {
        None
    }

    /// The result; `wrapped` is [`OutputSchema::wrapped`] of [`Self::output_schema`].
    fn into_tool_result(self, wrapped: bool) -> HandlerResult<CallToolResult>;
}

impl<T: Serialize + JsonSchema> IntoToolResult for Json<T> {
    fn output_schema() -> Option<OutputSchema> {
        Some(OutputSchema::of::<T>())
    }

    fn into_tool_result(self, wrapped: bool) -> HandlerResult<CallToolResult> {
        let value = serde_json::to_value(&self.0)
            .map_err(|e| HandlerError::Tool(format!("the result cannot be serialized: {e}")))?;
        let value = match wrapped {
            true => Value::Object(JsonObject::from_iter([(WRAPPED_RESULT.to_owned(), value)])),
            false => value,
        };
        Ok(CallToolResult::structured(value))
    }
}

macro_rules! text_results {
    ($($t:ty),*) => {$(
        impl IntoToolResult for $t {
            fn into_tool_result(self, _: bool) -> HandlerResult<CallToolResult> {
                Ok(CallToolResult::text(self.to_string()))
            }
        }
    )*};
}
text_results!(&'static str, bool, i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize, f32, f64);

/// The text moved into the result, not copied (`to_string` would copy it).
impl IntoToolResult for String {
    fn into_tool_result(self, _: bool) -> HandlerResult<CallToolResult> {
        Ok(CallToolResult::text(self))
    }
}

impl IntoToolResult for () {
    fn into_tool_result(self, _: bool) -> HandlerResult<CallToolResult> {
        Ok(CallToolResult::success(Vec::new()))
    }
}

impl IntoToolResult for CallToolResult {
    fn into_tool_result(self, _: bool) -> HandlerResult<CallToolResult> {
        Ok(self)
    }
}

impl IntoToolResult for ContentBlock {
    fn into_tool_result(self, _: bool) -> HandlerResult<CallToolResult> {
        Ok(CallToolResult::success(vec![self]))
    }
}

impl IntoToolResult for Vec<ContentBlock> {
    fn into_tool_result(self, _: bool) -> HandlerResult<CallToolResult> {
        Ok(CallToolResult::success(self))
    }
}

impl<T: IntoToolResult, E: fmt::Display + 'static> IntoToolResult for Result<T, E> {
    fn output_schema() -> Option<OutputSchema> {
        T::output_schema()
    }

    fn into_tool_result(self, wrapped: bool) -> HandlerResult<CallToolResult> {
        self.map_err(failure)?.into_tool_result(wrapped)
    }
}

/// What a resource handler may return.
#[diagnostic::on_unimplemented(
    message = "a resource cannot return `{Self}`",
    label = "not resource contents",
    note = "return `String`, `Vec<u8>` (a blob), `Option<T>` (`None`: not found), `ResourceContents`, a `ReadResourceResult`, or a `Result` of one of these"
)]
pub trait IntoReadResult {
    /// The contents of the resource `uri`, of type `mime_type` when the handler said so.
    fn into_read_result(self, uri: &str, mime_type: Option<&str>) -> HandlerResult<ReadResourceResult>;
}

fn contents(contents: Vec<ResourceContents>) -> HandlerResult<ReadResourceResult> {
    Ok(ReadResourceResult { contents, meta: None })
}

impl IntoReadResult for String {
    fn into_read_result(self, uri: &str, mime_type: Option<&str>) -> HandlerResult<ReadResourceResult> {
        contents(vec![ResourceContents::text(uri, mime_type, self)])
    }
}

impl IntoReadResult for &'static str {
    fn into_read_result(self, uri: &str, mime_type: Option<&str>) -> HandlerResult<ReadResourceResult> {
        contents(vec![ResourceContents::text(uri, mime_type, self)])
    }
}

impl IntoReadResult for Vec<u8> {
    fn into_read_result(self, uri: &str, mime_type: Option<&str>) -> HandlerResult<ReadResourceResult> {
        let data = base64::engine::general_purpose::STANDARD.encode(self);
        contents(vec![ResourceContents::blob(uri, mime_type, data)])
    }
}

impl IntoReadResult for ResourceContents {
    fn into_read_result(self, _: &str, _: Option<&str>) -> HandlerResult<ReadResourceResult> {
        contents(vec![self])
    }
}

impl IntoReadResult for Vec<ResourceContents> {
    fn into_read_result(self, _: &str, _: Option<&str>) -> HandlerResult<ReadResourceResult> {
        contents(self)
    }
}

impl IntoReadResult for ReadResourceResult {
    fn into_read_result(self, _: &str, _: Option<&str>) -> HandlerResult<ReadResourceResult> {
        Ok(self)
    }
}

impl<T: IntoReadResult> IntoReadResult for Option<T> {
    fn into_read_result(self, uri: &str, mime_type: Option<&str>) -> HandlerResult<ReadResourceResult> {
        match self {
            Some(found) => found.into_read_result(uri, mime_type),
            None => Err(HandlerError::ResourceNotFound(uri.to_owned())),
        }
    }
}

impl<T: IntoReadResult, E: fmt::Display + 'static> IntoReadResult for Result<T, E> {
    fn into_read_result(self, uri: &str, mime_type: Option<&str>) -> HandlerResult<ReadResourceResult> {
        self.map_err(failure)?.into_read_result(uri, mime_type)
    }
}

/// What a prompt handler may return.
#[diagnostic::on_unimplemented(
    message = "a prompt cannot return `{Self}`",
    label = "not prompt messages",
    note = "return `String` (one user message), `PromptMessage`, `Vec<PromptMessage>`, a `GetPromptResult`, or a `Result` of one of these"
)]
pub trait IntoPromptResult {
    /// The prompt's messages, described by `description` unless the result says otherwise.
    fn into_prompt_result(self, description: Option<&str>) -> HandlerResult<GetPromptResult>;
}

fn messages(messages: Vec<PromptMessage>, description: Option<&str>) -> HandlerResult<GetPromptResult> {
    Ok(GetPromptResult { description: description.map(str::to_owned), messages, meta: None })
}

impl IntoPromptResult for String {
    fn into_prompt_result(self, description: Option<&str>) -> HandlerResult<GetPromptResult> {
        messages(vec![PromptMessage::user_text(self)], description)
    }
}

impl IntoPromptResult for &'static str {
    fn into_prompt_result(self, description: Option<&str>) -> HandlerResult<GetPromptResult> {
        messages(vec![PromptMessage::user_text(self)], description)
    }
}

impl IntoPromptResult for PromptMessage {
    fn into_prompt_result(self, description: Option<&str>) -> HandlerResult<GetPromptResult> {
        messages(vec![self], description)
    }
}

impl IntoPromptResult for Vec<PromptMessage> {
    fn into_prompt_result(self, description: Option<&str>) -> HandlerResult<GetPromptResult> {
        messages(self, description)
    }
}

impl IntoPromptResult for GetPromptResult {
    fn into_prompt_result(self, _: Option<&str>) -> HandlerResult<GetPromptResult> {
        Ok(self)
    }
}

impl<T: IntoPromptResult, E: fmt::Display + 'static> IntoPromptResult for Result<T, E> {
    fn into_prompt_result(self, description: Option<&str>) -> HandlerResult<GetPromptResult> {
        self.map_err(failure)?.into_prompt_result(description)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[derive(Serialize, JsonSchema)]
    struct Sum {
        sum: f64,
    }

    fn tool<R: IntoToolResult>(r: R) -> HandlerResult<CallToolResult> {
        let wrapped = R::output_schema().is_some_and(|o| o.wrapped);
        r.into_tool_result(wrapped)
    }

    #[test]
    fn json_results_are_structured_and_described() {
        let out = <Json<Sum> as IntoToolResult>::output_schema().unwrap();
        assert!(!out.wrapped);
        assert_eq!(out.schema["required"], json!(["sum"]));
        let r = tool(Json(Sum { sum: 3.0 })).unwrap();
        assert_eq!(r.structured_content, Some(json!({"sum": 3.0})));
        assert_eq!(r.content[0].as_text(), Some("{\"sum\":3.0}"));
    }

    #[test]
    fn values_that_are_not_objects_are_wrapped() {
        let out = <Json<Vec<u32>> as IntoToolResult>::output_schema().unwrap();
        assert!(out.wrapped);
        assert_eq!(out.schema["required"], json!(["result"]));
        assert_eq!(out.schema["properties"]["result"]["type"], "array");
        let r = tool(Json(vec![1u32, 2])).unwrap();
        assert_eq!(r.structured_content, Some(json!({"result": [1, 2]})));
        let compiled = jsonschema::validator_for(&Value::Object(out.schema)).unwrap();
        assert!(compiled.is_valid(r.structured_content.as_ref().unwrap()));
    }

    #[test]
    fn errors_keep_their_meaning() {
        let r: Result<String, ToolError> = Err(ToolError::new("city must not be empty"));
        assert!(matches!(tool(r), Err(HandlerError::Tool(m)) if m == "city must not be empty"));
        let r: Result<String, std::io::Error> = Err(std::io::Error::other("disk full"));
        assert!(matches!(tool(r), Err(HandlerError::Tool(m)) if m == "disk full"));
        let r: Result<String, HandlerError> = Err(HandlerError::InputRequired);
        assert!(matches!(tool(r), Err(HandlerError::InputRequired)));
        assert_eq!(tool(42u8).unwrap().content[0].as_text(), Some("42"));
    }

    #[test]
    fn resources_and_prompts_take_plain_values() {
        let r = Some("hi".to_owned()).into_read_result("notes://0", Some("text/plain")).unwrap();
        assert_eq!(r.contents[0].text.as_deref(), Some("hi"));
        assert_eq!(r.contents[0].mime_type.as_deref(), Some("text/plain"));
        let none: Option<String> = None;
        assert!(
            matches!(none.into_read_result("notes://9", None), Err(HandlerError::ResourceNotFound(u)) if u == "notes://9")
        );
        let blob = vec![0u8, 255].into_read_result("bin://x", None).unwrap();
        assert_eq!(blob.contents[0].blob.as_deref(), Some("AP8="));
        let p = "Review this".into_prompt_result(Some("A review")).unwrap();
        assert_eq!(p.description.as_deref(), Some("A review"));
        assert_eq!(p.messages, vec![PromptMessage::user_text("Review this")]);
    }
}
