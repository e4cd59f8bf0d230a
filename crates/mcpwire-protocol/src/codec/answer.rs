//! Reading a server's result for the request it answers: complete, `input_required`, or a
//! task, each read once from the text it came in, straight into its type.
//!
//! A 2026-07-28 result says what it is in `resultType` (absent means complete, as in the
//! legacy revisions). A 2025-11-25 task-augmented request is answered by a task as
//! `{"task": {...}}` with no `resultType`: read as a task only when the caller asked for one.

use std::borrow::Cow;
use std::sync::LazyLock;

use memchr::memmem::Finder;

use serde::de::{DeserializeOwned, IgnoredAny};
use serde::Deserialize;
use serde_json::value::RawValue;

use super::own_meta;
use crate::mismatch::{self, Mismatch};
use crate::types::CreateTaskResult;

pub use crate::types::result_type::{COMPLETE, INPUT_REQUIRED, TASK};

/// A result, read for the request it answers.
#[derive(Debug)]
// The complete result is the common case; boxing it would add an allocation to every call.
#[allow(clippy::large_enum_variant)]
pub enum Answer<T> {
    /// The request's own result.
    Complete(T),
    /// The server needs input first (2026-07-28): the questions and the state to send back.
    InputRequired(InputRequired),
    /// The request became this task.
    Task(Box<CreateTaskResult>),
}

/// Members of an object in their order, each value kept as its text.
pub type RawEntries = Vec<(String, Box<RawValue>)>;

/// The members of an `input_required` result.
///
/// Each question is kept as its text: which questions a client can be asked is the client's
/// to judge (a method it cannot answer is refused as its handlers would refuse it, not read
/// as a malformed result); [`read_question`] reads one.
#[derive(Debug, Default)]
pub struct InputRequired {
    /// `inputRequests`: the questions, by the keys the answers go back under.
    pub input_requests: RawEntries,
    /// `requestState`: opaque state to send back with the answers.
    pub request_state: Option<String>,
}

impl InputRequired {
    /// Whether the result asks for nothing and keeps no state: no retry could differ.
    pub fn is_empty(&self) -> bool {
        self.input_requests.is_empty() && self.request_state.is_none()
    }
}

/// What is said of a task result where the request cannot become a task.
pub const TASK_NOT_ALLOWED: &str = "a task result, which this request cannot have";
/// What is said of an `input_required` result for a request that takes no rounds.
pub const INPUT_REQUIRED_NOT_ALLOWED: &str =
    "input_required is only allowed on tools/call, prompts/get and resources/read";

/// Why a result does not read.
#[derive(Debug)]
pub enum AnswerError {
    /// `resultType` names no kind of result this library knows.
    UnknownResultType(String),
    /// A result that had to be complete is of another kind.
    NotComplete(ResultType),
    /// The result, or a member of it, is not of its type.
    Mismatch(Mismatch),
}

impl std::fmt::Display for AnswerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::UnknownResultType(kind) => write!(f, "unknown resultType {kind:?}"),
            Self::NotComplete(kind) => write!(f, "resultType {:?} where only a complete result can be", kind.as_str()),
            Self::Mismatch(m) => m.fmt(f),
        }
    }
}

impl std::error::Error for AnswerError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::UnknownResultType(_) | Self::NotComplete(_) => None,
            Self::Mismatch(m) => Some(m.json_error()),
        }
    }
}

/// The kind of a result, as `resultType` tells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResultType {
    /// `complete`, or no `resultType`.
    Complete,
    /// `input_required`.
    InputRequired,
    /// `task`.
    Task,
}

impl ResultType {
    /// How `resultType` writes it.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Complete => COMPLETE,
            Self::InputRequired => INPUT_REQUIRED,
            Self::Task => TASK,
        }
    }
}

/// The member of a 2025-11-25 task's answer, as a JSON key is written.
const TASK_KEY: &str = "\"task\"";

/// What is looked at before a result is read: its kind, and whether it has a `task` member
/// (a 2025-11-25 task). Every other member is skipped unread.
#[derive(Deserialize)]
struct Peek<'a> {
    #[serde(rename = "resultType", borrow, default)]
    result_type: Option<Cow<'a, str>>,
    #[serde(default)]
    task: Option<IgnoredAny>,
}

fn peek(raw: &RawValue) -> Result<Peek<'_>, AnswerError> {
    let text = raw.get();
    // Not an object: no kind to find, and reading it as its type says what is wrong.
    if !text.starts_with('{') {
        return Ok(Peek { result_type: None, task: None });
    }
    // Without an escape, the names can be spelled one way only, and found as text (the
    // searches are memchr's: `str::contains` was most of what this cost).
    if memchr::memchr(b'\\', text.as_bytes()).is_none() && TASK_FINDER.find(text.as_bytes()).is_none() {
        match RESULT_TYPE_FINDER.find(text.as_bytes()) {
            // A legacy result: not read twice (the text is JSON already; its members are
            // checked when it is read as its type).
            None => return Ok(Peek { result_type: None, task: None }),
            Some(at) if plainly_complete(&text[at + RESULT_TYPE_FINDER.needle().len()..]) => {
                return Ok(Peek { result_type: Some(Cow::Borrowed(COMPLETE)), task: None })
            }
            Some(_) => {}
        }
    }
    serde_json::from_str(text).map_err(|e| AnswerError::Mismatch(Mismatch::new(None, e)))
}

/// Finds `"task"` in a result's text.
static TASK_FINDER: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(TASK_KEY));
/// Finds `"resultType"` (the member, as a JSON key is written) in a result's text.
static RESULT_TYPE_FINDER: LazyLock<Finder<'static>> =
    LazyLock::new(|| Finder::new(&format!("\"{}\"", crate::types::result_type::MEMBER)).into_owned());

/// Whether a result with no escape and no `task` in its text, and `"resultType"` in it just
/// before `rest`, says it is complete in the way every 2026-07-28 server answers most
/// requests: that member once, as `complete`.
///
/// Without escapes, every `"` opens or closes a string, so `"resultType"` followed by `:` is
/// that key, and no other spelling of it exists. Once in the text, it is either the result's
/// own or an inner object's; either way the result is complete (an absent `resultType` means
/// complete). Reading the whole result for its kind cost half as much as reading it as its
/// type (callgrind, a small `tools/call` at 2026-07-28).
fn plainly_complete(rest: &str) -> bool {
    let Some(value) = rest.trim_start_matches(JSON_SPACE).strip_prefix(':') else { return false };
    let said = value.trim_start_matches(JSON_SPACE).strip_prefix('"').and_then(|v| v.strip_prefix(COMPLETE));
    said.is_some_and(|after| after.starts_with('"')) && RESULT_TYPE_FINDER.find(rest.as_bytes()).is_none()
}

/// JSON's whitespace.
const JSON_SPACE: &[char] = &[' ', '\t', '\n', '\r'];

/// The kind a peeked result says it is; with `legacy_task`, a `task` member and no
/// `resultType` make a task.
fn kind(peeked: &Peek<'_>, legacy_task: bool) -> Result<ResultType, AnswerError> {
    Ok(match peeked.result_type.as_deref() {
        None if legacy_task && peeked.task.is_some() => ResultType::Task,
        None | Some(COMPLETE) => ResultType::Complete,
        Some(INPUT_REQUIRED) => ResultType::InputRequired,
        Some(TASK) => ResultType::Task,
        Some(other) => return Err(AnswerError::UnknownResultType(other.to_owned())),
    })
}

/// The kind of a result (`resultType`; absent or null means complete).
pub fn result_type(raw: &RawValue) -> Result<ResultType, AnswerError> {
    kind(&peek(raw)?, false)
}

/// [`result_type`]; with `legacy_task`, a result with a `task` member and no `resultType` is a
/// task (the answer of a 2025-11-25 task-augmented request).
pub fn result_kind(raw: &RawValue, legacy_task: bool) -> Result<ResultType, AnswerError> {
    kind(&peek(raw)?, legacy_task)
}

/// Reads the members of an `input_required` result (its kind already known).
pub fn read_input_required(raw: &RawValue) -> Result<InputRequired, AnswerError> {
    mismatch::from_str::<InputRequiredWire>(raw.get()).map(Into::into).map_err(AnswerError::Mismatch)
}

/// Reads a result: as a `T` when complete, or as what else it says it is. With
/// `legacy_task`, a result with a `task` member and no `resultType` is a task (the answer of
/// a 2025-11-25 task-augmented request).
pub fn read<T: DeserializeOwned>(raw: &RawValue, legacy_task: bool) -> Result<Answer<T>, AnswerError> {
    let kind = kind(&peek(raw)?, legacy_task)?;
    let text = raw.get();
    Ok(match kind {
        ResultType::Complete => Answer::Complete(mismatch::from_str(text).map_err(AnswerError::Mismatch)?),
        ResultType::Task => Answer::Task(Box::new(mismatch::from_str(text).map_err(AnswerError::Mismatch)?)),
        ResultType::InputRequired => Answer::InputRequired(read_input_required(raw)?),
    })
}

/// Reads a complete result as a `T` (no other kind is accepted).
pub fn read_complete<T: DeserializeOwned>(raw: &RawValue) -> Result<T, AnswerError> {
    match result_type(raw)? {
        ResultType::Complete => mismatch::from_str(raw.get()).map_err(AnswerError::Mismatch),
        other => Err(AnswerError::NotComplete(other)),
    }
}

/// Reads the text of a complete result of a request of `method` as a `T`. Its `_meta` is read
/// without the server's info (`io.modelcontextprotocol/serverInfo`, which a 2026-07-28 server
/// puts in every result for the protocol's sake; the client learned it from `server/discover`),
/// and is absent when nothing else is in it; except for `initialize` and `server/discover`,
/// whose answer that information is. [`read_server_result`] reads results the same way.
pub fn read_result<T: DeserializeOwned>(method: crate::method::Method, text: &str) -> Result<T, Mismatch> {
    use crate::method::Method as M;
    match method {
        M::Initialize | M::Discover => mismatch::from_str(text),
        _ => own_meta::read(text),
    }
}

/// Reads the complete result of a request of `method` sent in `version` into the
/// [`ServerResult`](crate::message::ServerResult) of its kind: what a layer over a client's
/// requests sees. A method with nothing in its result (`ping`, `resources/subscribe`, ...,
/// `tasks/cancel` from 2026-07-28) reads as `Empty`; `tasks/result` as the payload it is.
pub fn read_server_result(
    method: crate::method::Method,
    version: crate::revision::ProtocolVersion,
    raw: &RawValue,
) -> Result<crate::message::ServerResult, Mismatch> {
    use crate::message::ServerResult as R;
    use crate::method::Method as M;
    let text = raw.get();
    Ok(match method {
        M::Initialize => R::Initialize(Box::new(read_result(method, text)?)),
        M::Discover => R::Discover(Box::new(read_result(method, text)?)),
        M::ListTools => R::ListTools(read_result(method, text)?),
        M::CallTool => R::CallTool(read_result(method, text)?),
        M::ListResources => R::ListResources(read_result(method, text)?),
        M::ListResourceTemplates => R::ListResourceTemplates(read_result(method, text)?),
        M::ReadResource => R::ReadResource(read_result(method, text)?),
        M::ListPrompts => R::ListPrompts(read_result(method, text)?),
        M::GetPrompt => R::GetPrompt(read_result(method, text)?),
        M::Complete => R::Complete(read_result(method, text)?),
        M::ListTasks => R::ListTasks(read_result(method, text)?),
        M::GetTask => R::Task(Box::new(read_result(method, text)?)),
        M::CancelTask if !version.is_modern() => R::Task(Box::new(read_result(method, text)?)),
        M::TaskResult => R::TaskPayload(read_result(method, text)?),
        _ => R::Empty(read_result(method, text)?),
    })
}

/// How `input_required` is written; `null` members read as absent.
#[derive(Deserialize)]
struct InputRequiredWire {
    #[serde(rename = "inputRequests", default, deserialize_with = "entries")]
    input_requests: Option<RawEntries>,
    #[serde(rename = "requestState", default)]
    request_state: Option<String>,
}

/// An object's members in their order, each value kept as its text (`null`: none).
fn entries<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<RawEntries>, D::Error> {
    struct Entries;
    impl<'de> serde::de::Visitor<'de> for Entries {
        type Value = Option<RawEntries>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("an object")
        }
        fn visit_unit<E>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut entries = Vec::with_capacity(map.size_hint().unwrap_or(0));
            while let Some(entry) = map.next_entry()? {
                entries.push(entry);
            }
            Ok(Some(entries))
        }
    }
    d.deserialize_any(Entries)
}

impl From<InputRequiredWire> for InputRequired {
    fn from(wire: InputRequiredWire) -> Self {
        Self { input_requests: wire.input_requests.unwrap_or_default(), request_state: wire.request_state }
    }
}

/// Why a question of an `input_required` result cannot be answered as asked.
#[derive(Debug)]
pub enum QuestionError {
    /// It names no method.
    NoMethod,
    /// It names a method that is no question to a client (`method` as named).
    NotAQuestion(String),
    /// Its params are not those of its method.
    Mismatch(Mismatch),
}

/// Reads one question of an `input_required` result: `sampling/createMessage`,
/// `elicitation/create` or `roots/list`.
pub fn read_question(raw: &RawValue) -> Result<crate::message::ServerRequest, QuestionError> {
    use crate::method::Method;
    #[derive(Deserialize)]
    struct Named<'a> {
        #[serde(borrow, default)]
        method: Option<Cow<'a, str>>,
    }
    let named: Named<'_> =
        serde_json::from_str(raw.get()).map_err(|e| QuestionError::Mismatch(Mismatch::new(None, e)))?;
    let method = named.method.ok_or(QuestionError::NoMethod)?;
    if !matches!(Method::parse(&method), Some(Method::CreateMessage | Method::Elicit | Method::ListRoots)) {
        return Err(QuestionError::NotAQuestion(method.into_owned()));
    }
    mismatch::from_str(raw.get()).map_err(QuestionError::Mismatch)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::ServerRequest;
    use crate::types::{CallToolResult, ContentBlock, TaskStatus};

    fn raw(text: &str) -> Box<RawValue> {
        RawValue::from_string(text.to_owned()).unwrap()
    }

    #[test]
    fn each_kind_of_result_reads_as_itself() {
        let complete = raw(r#"{"content":[{"type":"text","text":"hi"}],"resultType":"complete"}"#);
        let Answer::Complete(result) = read::<CallToolResult>(&complete, false).unwrap() else { panic!() };
        assert_eq!(result.content, vec![ContentBlock::text("hi")]);
        // Legacy results have no resultType.
        assert!(matches!(read::<CallToolResult>(&raw(r#"{"content":[]}"#), false), Ok(Answer::Complete(_))));

        let asked =
            raw(r#"{"resultType":"input_required","inputRequests":{"a":{"method":"roots/list"}},"requestState":"s"}"#);
        let Answer::InputRequired(input) = read::<CallToolResult>(&asked, false).unwrap() else { panic!() };
        assert_eq!(input.request_state.as_deref(), Some("s"));
        assert_eq!(input.input_requests.len(), 1);
        assert!(matches!(read_question(&input.input_requests[0].1), Ok(ServerRequest::ListRoots)));
        let nulls = raw(r#"{"resultType":"input_required","inputRequests":null,"requestState":null}"#);
        let Answer::InputRequired(input) = read::<CallToolResult>(&nulls, false).unwrap() else { panic!() };
        assert!(input.is_empty());

        let modern_task = raw(
            r#"{"resultType":"task","taskId":"t","status":"working","createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:00Z","ttl":null}"#,
        );
        let Answer::Task(task) = read::<CallToolResult>(&modern_task, false).unwrap() else { panic!() };
        assert_eq!((task.task.task_id.as_str(), task.task.status), ("t", TaskStatus::Working));

        let legacy_task = raw(
            r#"{"task":{"taskId":"u","status":"working","createdAt":"2025-01-01T00:00:00Z","lastUpdatedAt":"2025-01-01T00:00:00Z","ttl":null}}"#,
        );
        assert!(matches!(read::<CallToolResult>(&legacy_task, true), Ok(Answer::Task(t)) if t.task.task_id == "u"));
        // Not asked for, a task member is just a member: the result reads as the request's.
        let Ok(Answer::Complete(result)) = read::<serde_json::Value>(&legacy_task, false) else { panic!() };
        assert!(result["task"].is_object());

        // A kind spelled with escapes is still found (a text with neither name in it is not
        // read for its kind).
        let escaped = raw(r#"{"result\u0054ype":"input_required","requestState":"s"}"#);
        assert!(matches!(read::<CallToolResult>(&escaped, false), Ok(Answer::InputRequired(_))));
        let escaped_task = raw(
            r#"{"t\u0061sk":{"taskId":"u","status":"working","createdAt":"2025-01-01T00:00:00Z","lastUpdatedAt":"2025-01-01T00:00:00Z","ttl":null}}"#,
        );
        assert!(matches!(read::<CallToolResult>(&escaped_task, true), Ok(Answer::Task(_))));
        assert_eq!(result_kind(&raw(r#"{"content":[]}"#), true).unwrap(), ResultType::Complete);
    }

    #[test]
    fn a_result_is_seen_complete_from_its_text_only_when_nothing_else_could_be_meant() {
        // Complete, as a 2026-07-28 server writes it, or with spaces around the colon.
        let seen = |text: &str| {
            let text = raw(text);
            // Seen from the text, the kind is borrowed from this module's constant; read as
            // JSON, from the text.
            matches!(peek(&text).unwrap().result_type, Some(Cow::Borrowed(kind)) if std::ptr::eq(kind, COMPLETE))
        };
        assert!(seen(r#"{"content":[],"resultType":"complete","_meta":{"k":1}}"#));
        assert!(seen("{\"resultType\" :\n \"complete\"}"));
        // An inner object's resultType: the result's own is absent, so complete all the same.
        assert!(seen(r#"{"structuredContent":{"resultType":"complete"}}"#));
        // Anything else is read: another kind, two of them (which is the result's own is
        // not known from the text), a task member, an escape, the name as a value.
        for text in [
            r#"{"resultType":"input_required","inputRequests":{}}"#,
            r#"{"resultType":"completed"}"#,
            r#"{"structuredContent":{"resultType":"complete"},"resultType":"task"}"#,
            r#"{"resultType":"complete","task":{}}"#,
            r#"{"resultType":"complete","text":"a \" b"}"#,
            r#"{"kind":"resultType","other":"complete"}"#,
        ] {
            assert!(!seen(text), "{text}");
        }
        // And what it sees agrees with reading: the inner object's member does not make the
        // result input_required, nor hides the result's own kind.
        let inner = raw(r#"{"structuredContent":{"resultType":"complete"},"resultType":"input_required"}"#);
        assert_eq!(result_type(&inner).unwrap(), ResultType::InputRequired);
        let nested = raw(r#"{"content":[],"structuredContent":{"resultType":"complete"}}"#);
        assert_eq!(result_type(&nested).unwrap(), ResultType::Complete);
    }

    #[test]
    fn what_does_not_read_says_why() {
        let unknown = read::<CallToolResult>(&raw(r#"{"resultType":"later"}"#), false).unwrap_err();
        assert!(matches!(&unknown, AnswerError::UnknownResultType(k) if k == "later"), "{unknown}");
        let wrong = read::<CallToolResult>(&raw(r#"{"content":"nope"}"#), false).unwrap_err();
        let AnswerError::Mismatch(m) = &wrong else { panic!("{wrong}") };
        assert_eq!(m.path(), Some("content"));
        let asked = read::<CallToolResult>(&raw(r#"{"resultType":"input_required","inputRequests":[]}"#), false);
        assert!(matches!(asked, Err(AnswerError::Mismatch(_))));
        let task = read_complete::<CallToolResult>(&raw(r#"{"resultType":"task"}"#));
        assert!(matches!(task, Err(AnswerError::NotComplete(ResultType::Task))));

        assert!(matches!(read_question(&raw("{}")), Err(QuestionError::NoMethod)));
        assert!(
            matches!(read_question(&raw(r#"{"method":"tasks/get"}"#)), Err(QuestionError::NotAQuestion(m)) if m == "tasks/get")
        );
        let bad = raw(r#"{"method":"sampling/createMessage","params":{"messages":"nope","maxTokens":1}}"#);
        assert!(matches!(read_question(&bad), Err(QuestionError::Mismatch(_))));
    }

    #[test]
    fn a_complete_result_reads_as_the_server_result_of_its_method() {
        use crate::message::ServerResult;
        use crate::method::Method;
        use crate::revision::ProtocolVersion as V;
        let text = raw(r#"{"content":[{"type":"text","text":"hi"}]}"#);
        assert!(matches!(read_server_result(Method::CallTool, V::LATEST, &text), Ok(ServerResult::CallTool(_))));
        let tools = raw(r#"{"tools":[{"name":"a","inputSchema":{"type":"object"}}]}"#);
        let Ok(ServerResult::ListTools(list)) = read_server_result(Method::ListTools, V::LATEST, &tools) else {
            panic!()
        };
        assert_eq!(list.tools[0].name, "a");
        let empty = raw(r#"{"_meta":{"k":1}}"#);
        assert!(matches!(read_server_result(Method::Ping, V::LATEST, &empty), Ok(ServerResult::Empty(_))));
        // tasks/cancel answers with the task in 2025-11-25, with nothing from 2026-07-28.
        let task = raw(r#"{"taskId":"t","status":"cancelled","createdAt":"x","lastUpdatedAt":"x","ttl":null}"#);
        let legacy = read_server_result(Method::CancelTask, V::V2025_11_25, &task);
        assert!(matches!(legacy, Ok(ServerResult::Task(_))), "{legacy:?}");
        assert!(matches!(read_server_result(Method::CancelTask, V::LATEST, &empty), Ok(ServerResult::Empty(_))));
        let wrong = read_server_result(Method::ListTools, V::LATEST, &text).unwrap_err();
        assert!(wrong.to_string().contains("tools"), "{wrong}");
    }
}
