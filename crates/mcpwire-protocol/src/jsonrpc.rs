//! The JSON-RPC 2.0 envelope: ids, requests, notifications, responses, batches.
//!
//! Decoding classifies bad input precisely, so that a server can answer each kind with the
//! right error: invalid JSON is a parse error (`-32700`, id null); JSON that is not a
//! request, notification or response is an invalid request (`-32600`), with the id when one
//! could be read.

use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;
use std::fmt;

use crate::error::ErrorObject;

/// A JSON-RPC request id: a string or an integer (never null in a request).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RequestId {
    /// An integer id.
    Number(i64),
    /// A string id.
    String(String),
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Number(n) => write!(f, "{n}"),
            Self::String(s) => write!(f, "{s:?}"),
        }
    }
}

impl From<i64> for RequestId {
    fn from(n: i64) -> Self {
        Self::Number(n)
    }
}

impl From<&str> for RequestId {
    fn from(s: &str) -> Self {
        Self::String(s.to_owned())
    }
}

impl RequestId {
    /// Reads an id from a JSON value; `None` for null, floats, objects, arrays, booleans.
    pub fn from_value(v: &Value) -> Option<Self> {
        match v {
            Value::String(s) => Some(Self::String(s.clone())),
            Value::Number(n) => n.as_i64().map(Self::Number),
            _ => None,
        }
    }

    /// The id as a JSON value.
    pub fn to_value(&self) -> Value {
        match self {
            Self::Number(n) => Value::from(*n),
            Self::String(s) => Value::from(s.as_str()),
        }
    }
}

impl Serialize for RequestId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Number(n) => s.serialize_i64(*n),
            Self::String(v) => s.serialize_str(v),
        }
    }
}

impl<'de> Deserialize<'de> for RequestId {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        Self::from_value(&v).ok_or_else(|| de::Error::custom("a request id must be a string or an integer"))
    }
}

/// A notification: no id, no response.
#[derive(Debug, Clone, PartialEq)]
pub struct Notification {
    /// The method name.
    pub method: String,
    /// The parameters, if any.
    pub params: Option<Value>,
}

/// A response: a result or an error for the request with `id`.
///
/// The result is kept as the text it came in, checked to be JSON but not read: what reads
/// it knows the request it answers, and so the type to read it as
/// ([`crate::codec::answer`]), without a [`Value`] tree in between.
#[derive(Debug, Clone)]
pub struct Response {
    /// The id of the request answered; `None` only for errors about unreadable requests.
    pub id: Option<RequestId>,
    /// The result, or the error.
    pub outcome: Result<Box<RawValue>, ErrorObject>,
}

impl PartialEq for Response {
    fn eq(&self, other: &Self) -> bool {
        let outcomes = match (&self.outcome, &other.outcome) {
            (Ok(a), Ok(b)) => a.get() == b.get(),
            (Err(a), Err(b)) => a == b,
            _ => false,
        };
        self.id == other.id && outcomes
    }
}

/// Why a JSON value is not a valid JSON-RPC message.
#[derive(Debug, Clone, PartialEq)]
pub struct InvalidMessage {
    /// The id, when one could be read (so that the error response can carry it).
    pub id: Option<RequestId>,
    /// The error to answer with (`-32600`).
    pub error: ErrorObject,
    /// Whether it names a method: a request (or notification) gone wrong, to be answered,
    /// rather than an answer gone wrong.
    pub names_method: bool,
}

/// Why a frame could not be decoded at all.
#[derive(Debug, Clone, PartialEq)]
pub enum DecodeError {
    /// Not JSON: answer `-32700` with a null id.
    Parse(ErrorObject),
    /// JSON but not a message (or an empty batch): answer `-32600`.
    Invalid(InvalidMessage),
}

impl DecodeError {
    /// The id to answer with (null for parse errors).
    pub fn id(&self) -> Option<&RequestId> {
        match self {
            Self::Parse(_) => None,
            Self::Invalid(m) => m.id.as_ref(),
        }
    }

    /// The error object to answer with.
    pub fn error(&self) -> &ErrorObject {
        match self {
            Self::Parse(e) => e,
            Self::Invalid(m) => &m.error,
        }
    }
}

/// A message as read off the wire, its params not read yet: they stay a slice of the input,
/// for the codec to read straight into the method's own types.
#[derive(Debug, Clone)]
pub enum RawMessage<'a> {
    /// A request.
    Request {
        /// Its id.
        id: RequestId,
        /// Its method, as sent.
        method: String,
        /// Its params (an object or an array), unread.
        params: Option<&'a RawValue>,
    },
    /// A notification.
    Notification {
        /// Its method, as sent.
        method: String,
        /// Its params, unread.
        params: Option<&'a RawValue>,
    },
    /// A response.
    Response(Response),
}

/// A frame read off the wire: one message, or a batch.
#[derive(Debug, Clone)]
pub enum RawIncoming<'a> {
    /// A single message.
    Single(RawMessage<'a>),
    /// A JSON array of messages; each element read on its own.
    Batch(Vec<Result<RawMessage<'a>, InvalidMessage>>),
}

/// Deserializes a present member as `Some`, `null` included.
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

/// The envelope as it arrives: every member optional and unread, classified afterwards.
#[derive(Deserialize)]
struct RawEnvelope<'a> {
    #[serde(default, borrow, deserialize_with = "present")]
    jsonrpc: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    id: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    method: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    params: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    result: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    error: Option<&'a RawValue>,
}

fn invalid(id: Option<RequestId>, detail: impl fmt::Display) -> InvalidMessage {
    InvalidMessage { id, error: ErrorObject::invalid_request(detail), names_method: false }
}

fn is_null(raw: &RawValue) -> bool {
    raw.get() == "null"
}

/// Reads an id: a string or an integer; `Err` for anything else but null.
fn read_id(raw: &RawValue) -> Result<Option<RequestId>, ()> {
    let text = raw.get();
    match text.as_bytes().first() {
        Some(b'"') => serde_json::from_str::<String>(text).map(|s| Some(RequestId::String(s))).map_err(drop),
        Some(b'-' | b'0'..=b'9') => text.parse::<i64>().map(|n| Some(RequestId::Number(n))).map_err(drop),
        _ if is_null(raw) => Ok(None),
        _ => Err(()),
    }
}

impl<'a> RawEnvelope<'a> {
    fn classify(self) -> Result<RawMessage<'a>, InvalidMessage> {
        let names_method = self.method.is_some();
        self.classify_fields().map_err(|invalid| InvalidMessage { names_method, ..invalid })
    }

    fn classify_fields(self) -> Result<RawMessage<'a>, InvalidMessage> {
        let id = match self.id {
            None => None,
            Some(raw) => match read_id(raw) {
                Ok(id) => id,
                Err(()) => return Err(invalid(None, "id must be a string or an integer")),
            },
        };
        if self.jsonrpc.map(RawValue::get) != Some("\"2.0\"") {
            return Err(invalid(id, "jsonrpc must be \"2.0\""));
        }
        if let Some(method) = self.method {
            let Ok(method) = serde_json::from_str::<String>(method.get()) else {
                return Err(invalid(id, "method must be a string"));
            };
            if let Some(p) = self.params {
                if !matches!(p.get().as_bytes().first(), Some(b'{' | b'[')) {
                    return Err(invalid(id, "params must be an object or an array"));
                }
            }
            return match (self.id, id) {
                (None, _) => Ok(RawMessage::Notification { method, params: self.params }),
                (Some(_), Some(id)) => Ok(RawMessage::Request { id, method, params: self.params }),
                (Some(_), None) => Err(invalid(None, "a request id must not be null")),
            };
        }
        match (self.result, self.error) {
            (Some(result), None) => match id {
                Some(id) => Ok(RawMessage::Response(Response { id: Some(id), outcome: Ok(result.to_owned()) })),
                None => Err(invalid(None, "a result response needs an id")),
            },
            (None, Some(error)) => match serde_json::from_str::<ErrorObject>(error.get()) {
                Ok(e) => Ok(RawMessage::Response(Response { id, outcome: Err(e) })),
                Err(e) => Err(invalid(id, format_args!("malformed error object: {e}"))),
            },
            (Some(_), Some(_)) => Err(invalid(id, "a response has either result or error, not both")),
            (None, None) => Err(invalid(id, "missing method")),
        }
    }
}

fn classify_raw(raw: &RawValue) -> Result<RawMessage<'_>, InvalidMessage> {
    if !raw.get().starts_with('{') {
        return Err(invalid(None, "a message must be a JSON object"));
    }
    match serde_json::from_str::<RawEnvelope<'_>>(raw.get()) {
        Ok(envelope) => envelope.classify(),
        Err(e) => Err(invalid(None, e)),
    }
}

/// The deepest a batch may nest arrays and objects (the batch itself counted): as deep as
/// serde_json reads a value. A batch nested deeper is refused whole, as an invalid request,
/// not element by element.
pub const MAX_BATCH_DEPTH: usize = 128;

/// Whether `text` nests arrays and objects deeper than `limit` (what strings hold is not
/// counted). A scan, not a validation.
fn nests_deeper_than(text: &str, limit: usize) -> bool {
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for &b in text.as_bytes() {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > limit {
                    return true;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    false
}

/// Reads one frame (one line on stdio, one HTTP body), leaving params unread.
pub fn decode_raw(text: &str) -> Result<RawIncoming<'_>, DecodeError> {
    let trimmed = text.trim_start();
    if trimmed.starts_with('{') {
        return match serde_json::from_str::<RawEnvelope<'_>>(text) {
            Ok(envelope) => envelope.classify().map(RawIncoming::Single).map_err(DecodeError::Invalid),
            Err(e) if e.is_syntax() || e.is_eof() => Err(DecodeError::Parse(ErrorObject::parse_error(e))),
            Err(e) => Err(DecodeError::Invalid(invalid(None, e))),
        };
    }
    if trimmed.starts_with('[') {
        // Elements are kept unread, which serde_json does at any depth: a body of 100,000
        // nested arrays would be a batch of one invalid element rather than an invalid body.
        if nests_deeper_than(trimmed, MAX_BATCH_DEPTH) {
            let why = format_args!("the batch nests deeper than {MAX_BATCH_DEPTH} levels");
            return Err(DecodeError::Invalid(invalid(None, why)));
        }
        let items = serde_json::from_str::<Vec<&RawValue>>(text)
            .map_err(|e| DecodeError::Parse(ErrorObject::parse_error(e)))?;
        if items.is_empty() {
            return Err(DecodeError::Invalid(invalid(None, "empty batch")));
        }
        return Ok(RawIncoming::Batch(items.into_iter().map(classify_raw).collect()));
    }
    let raw = serde_json::from_str::<&RawValue>(text).map_err(|e| DecodeError::Parse(ErrorObject::parse_error(e)))?;
    classify_raw(raw).map(RawIncoming::Single).map_err(DecodeError::Invalid)
}

#[derive(Serialize)]
struct WireRequest<'a> {
    jsonrpc: &'static str,
    id: &'a RequestId,
    method: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    params: Option<&'a Value>,
}

#[derive(Serialize)]
struct WireNotification<'a> {
    jsonrpc: &'static str,
    method: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    params: Option<&'a Value>,
}

#[derive(Serialize)]
struct WireResult<'a, T: ?Sized> {
    jsonrpc: &'static str,
    id: &'a RequestId,
    result: &'a T,
}

#[derive(Serialize)]
struct WireError<'a> {
    jsonrpc: &'static str,
    id: Option<&'a RequestId>,
    error: &'a ErrorObject,
}

fn to_string<T: Serialize>(v: &T) -> String {
    // Serializing these envelopes cannot fail: every member is a JSON value or a string.
    serde_json::to_string(v).unwrap_or_default()
}

/// Encodes a request.
pub fn encode_request(id: &RequestId, method: &str, params: Option<&Value>) -> String {
    to_string(&WireRequest { jsonrpc: "2.0", id, method, params })
}

/// Encodes a notification.
pub fn encode_notification(method: &str, params: Option<&Value>) -> String {
    to_string(&WireNotification { jsonrpc: "2.0", method, params })
}

/// Encodes a successful response.
pub fn encode_result(id: &RequestId, result: &Value) -> String {
    encode_result_of(id, result)
}

/// Encodes a success response whose result is any serializable value (written straight
/// out, with no `Value` tree in between).
pub fn encode_result_of<T: Serialize + ?Sized>(id: &RequestId, result: &T) -> String {
    to_string(&WireResult { jsonrpc: "2.0", id, result })
}

/// Encodes an error response (`id` null when the request's id could not be read).
pub fn encode_error(id: Option<&RequestId>, error: &ErrorObject) -> String {
    to_string(&WireError { jsonrpc: "2.0", id, error })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::*;

    fn single(s: &str) -> RawMessage<'_> {
        match decode_raw(s) {
            Ok(RawIncoming::Single(m)) => m,
            other => panic!("{s}: {other:?}"),
        }
    }

    fn invalid_code(s: &str) -> (i64, Option<RequestId>) {
        match decode_raw(s) {
            Err(e) => (e.error().code, e.id().cloned()),
            Ok(RawIncoming::Single(m)) => panic!("{s} decoded as {m:?}"),
            Ok(RawIncoming::Batch(b)) => panic!("{s} decoded as batch {b:?}"),
        }
    }

    #[test]
    fn decodes_each_kind() {
        assert!(
            matches!(single(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#), RawMessage::Request { id, .. } if id == RequestId::Number(1))
        );
        let r = single(r#"{"jsonrpc":"2.0","id":"a","method":"ping","params":{}}"#);
        assert!(
            matches!(r, RawMessage::Request { id, params: Some(p), .. } if id == RequestId::from("a") && p.get() == "{}")
        );
        assert!(matches!(
            single(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
            RawMessage::Notification { .. }
        ));
        assert!(matches!(
            single(r#"{"jsonrpc":"2.0","id":3,"result":{}}"#),
            RawMessage::Response(Response { outcome: Ok(_), .. })
        ));
        assert!(matches!(
            single(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}"#),
            RawMessage::Response(Response { id: None, outcome: Err(_) })
        ));
    }

    #[test]
    fn a_bad_message_says_whether_it_named_a_method() {
        let names_method = |s: &str| match decode_raw(s) {
            Err(DecodeError::Invalid(invalid)) => invalid.names_method,
            other => panic!("{s} decoded as {other:?}"),
        };
        assert!(names_method(r#"{"jsonrpc":"2.0","id":1,"method":5}"#));
        assert!(names_method(r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#));
        assert!(names_method(r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":3}"#));
        assert!(!names_method(r#"{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}}"#));
        assert!(!names_method(r#"{"jsonrpc":"2.0","id":1}"#));
    }

    #[test]
    fn classifies_bad_input() {
        assert_eq!(invalid_code("{not json").0, PARSE_ERROR);
        assert_eq!(invalid_code("").0, PARSE_ERROR);
        assert_eq!(invalid_code("42").0, INVALID_REQUEST);
        assert_eq!(invalid_code("[]").0, INVALID_REQUEST);
        assert_eq!(invalid_code(r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#).0, INVALID_REQUEST);
        assert_eq!(invalid_code(r#"{"jsonrpc":"2.0","id":7}"#), (INVALID_REQUEST, Some(RequestId::Number(7))));
        assert_eq!(
            invalid_code(r#"{"jsonrpc":"1.0","id":"x","method":"ping"}"#),
            (INVALID_REQUEST, Some(RequestId::from("x")))
        );
        assert_eq!(invalid_code(r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#).0, INVALID_REQUEST);
        assert_eq!(invalid_code(r#"{"jsonrpc":"2.0","id":1,"method":5}"#).0, INVALID_REQUEST);
        assert_eq!(invalid_code(r#"{"jsonrpc":"2.0","id":1,"method":"x","params":3}"#).0, INVALID_REQUEST);
        assert_eq!(invalid_code(r#"{"jsonrpc":"2.0","id":1,"method":"x","params":null}"#).0, INVALID_REQUEST);
    }

    #[test]
    fn batch_elements_decode_independently() {
        let Ok(RawIncoming::Batch(items)) = decode_raw(r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}, 5]"#) else {
            panic!()
        };
        assert!(items[0].is_ok());
        assert!(items[1].is_err());
    }

    #[test]
    fn a_batch_nested_too_deep_is_invalid_whole() {
        let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert_eq!(invalid_code(&deep(100_000)), (INVALID_REQUEST, None));
        assert_eq!(invalid_code(&deep(MAX_BATCH_DEPTH + 1)).0, INVALID_REQUEST);
        // As deep as allowed: a batch of one invalid element, as JSON-RPC has it.
        assert!(
            matches!(decode_raw(&deep(MAX_BATCH_DEPTH)), Ok(RawIncoming::Batch(b)) if b.len() == 1 && b[0].is_err())
        );
        // Brackets in strings are not nesting.
        let text = format!(
            r#"[{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"s":"{}\"{}"}}}}]"#,
            "[".repeat(500),
            "{".repeat(500)
        );
        assert!(matches!(decode_raw(&text), Ok(RawIncoming::Batch(b)) if b[0].is_ok()), "{text}");
        assert!(nests_deeper_than(&deep(3), 2) && !nests_deeper_than(&deep(3), 3));
    }

    #[test]
    fn encodes_each_kind() {
        let id = RequestId::Number(1);
        assert_eq!(encode_request(&id, "ping", None), r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#);
        let params = serde_json::json!({"progressToken": "t", "progress": 1});
        assert_eq!(
            encode_notification("notifications/progress", Some(&params)),
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1}}"#
        );
        assert_eq!(
            encode_result(&RequestId::from("q"), &serde_json::json!({"a": 1})),
            r#"{"jsonrpc":"2.0","id":"q","result":{"a":1}}"#
        );
        assert_eq!(
            encode_error(None, &ErrorObject::new(PARSE_ERROR, "Parse error")),
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#
        );
    }
}
