//! JSON-RPC and MCP error codes, and the error object carried by error responses.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Invalid JSON was received.
pub const PARSE_ERROR: i64 = -32700;
/// The JSON sent is not a valid request object.
pub const INVALID_REQUEST: i64 = -32600;
/// The method does not exist or is not available (also: capability not declared).
pub const METHOD_NOT_FOUND: i64 = -32601;
/// Invalid method parameters (also, from 2026-07-28: resource not found, missing `_meta`).
pub const INVALID_PARAMS: i64 = -32602;
/// Internal error.
pub const INTERNAL_ERROR: i64 = -32603;
/// Resource not found (legacy revisions only; 2026-07-28 uses [`INVALID_PARAMS`]).
pub const RESOURCE_NOT_FOUND: i64 = -32002;
/// URL elicitation required (2025-11-25 only).
pub const URL_ELICITATION_REQUIRED: i64 = -32042;
/// HTTP headers disagree with the body (2026-07-28).
pub const HEADER_MISMATCH: i64 = -32020;
/// The request needs a client capability the client did not declare (2026-07-28).
pub const MISSING_REQUIRED_CLIENT_CAPABILITY: i64 = -32021;
/// The member of a `-32021` error's `data` that holds the capabilities the request needs.
pub const REQUIRED_CAPABILITIES: &str = "requiredCapabilities";
/// The requested protocol version is not supported (2026-07-28).
pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;

/// The `error` member of a JSON-RPC error response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorObject {
    /// The error code.
    pub code: i64,
    /// A short description of the error.
    pub message: String,
    /// Additional information about the error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl ErrorObject {
    /// An error with a code and a message.
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        Self { code, message: message.into(), data: None }
    }

    /// Attaches `data`.
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    /// `-32700` Parse error.
    pub fn parse_error(detail: impl std::fmt::Display) -> Self {
        Self::new(PARSE_ERROR, format!("Parse error: {detail}"))
    }

    /// `-32600` Invalid Request.
    pub fn invalid_request(detail: impl std::fmt::Display) -> Self {
        Self::new(INVALID_REQUEST, format!("Invalid Request: {detail}"))
    }

    /// `-32601` Method not found.
    pub fn method_not_found(method: &str) -> Self {
        Self::new(METHOD_NOT_FOUND, format!("Method not found: {method}"))
    }

    /// `-32602` Invalid params.
    pub fn invalid_params(detail: impl std::fmt::Display) -> Self {
        Self::new(INVALID_PARAMS, format!("Invalid params: {detail}"))
    }

    /// The revisions a `-32022` (unsupported protocol version) error says the server
    /// supports (`data.supported`); none for any other error.
    pub fn supported_versions(&self) -> impl Iterator<Item = &str> {
        let list = (self.code == UNSUPPORTED_PROTOCOL_VERSION)
            .then(|| self.data.as_ref()?.get("supported")?.as_array())
            .flatten();
        list.into_iter().flatten().filter_map(Value::as_str)
    }

    /// `-32603` Internal error.
    pub fn internal(detail: impl std::fmt::Display) -> Self {
        Self::new(INTERNAL_ERROR, format!("Internal error: {detail}"))
    }
}

impl std::fmt::Display for ErrorObject {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (code {})", self.message, self.code)
    }
}

impl std::error::Error for ErrorObject {}

/// An error's message followed by its causes' (`a: b: c`), for where only text goes: a
/// command-line message, a JSON-RPC error's message. (Errors here keep their causes as
/// sources, out of their own messages; a cause whose text the message ends with already, as
/// a client's decoding error tells its decoder's, is not repeated.)
pub fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let told = cause.to_string();
        if !text.ends_with(&format!(": {told}")) {
            text.push_str(": ");
            text.push_str(&told);
        }
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    #[test]
    fn only_an_unsupported_version_error_names_the_supported_versions() {
        use super::*;
        use serde_json::json;
        let e = ErrorObject::new(UNSUPPORTED_PROTOCOL_VERSION, "no")
            .with_data(json!({"supported": ["2026-07-28", 5, "2025-11-25"], "requested": "x"}));
        assert_eq!(e.supported_versions().collect::<Vec<_>>(), ["2026-07-28", "2025-11-25"]);
        let other = ErrorObject::new(INVALID_PARAMS, "no").with_data(json!({"supported": ["2026-07-28"]}));
        assert_eq!(other.supported_versions().count(), 0);
        assert_eq!(ErrorObject::new(UNSUPPORTED_PROTOCOL_VERSION, "no").supported_versions().count(), 0);
    }

    use super::chain;
    use std::fmt;

    #[derive(Debug)]
    struct Outer {
        tells_cause: bool,
        cause: std::io::Error,
    }

    impl fmt::Display for Outer {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            match self.tells_cause {
                true => write!(f, "cannot read: {}", self.cause),
                false => f.write_str("cannot read"),
            }
        }
    }

    impl std::error::Error for Outer {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.cause)
        }
    }

    #[test]
    fn causes_follow_the_message_once() {
        let quiet = Outer { tells_cause: false, cause: std::io::Error::other("disk full") };
        assert_eq!(chain(&quiet), "cannot read: disk full");
        let telling = Outer { tells_cause: true, cause: std::io::Error::other("disk full") };
        assert_eq!(chain(&telling), "cannot read: disk full", "a cause the message tells is not repeated");
    }
}
