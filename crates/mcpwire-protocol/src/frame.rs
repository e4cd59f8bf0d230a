//! Typed outgoing frames: what the protocol layers hand down to a transport.
//!
//! A frame is one encoded JSON-RPC message (or batch) together with what it is, so that a
//! transport never reads a frame again to learn it: an HTTP server knows the final frame of a
//! request's stream and its error code, an HTTP client knows which request it posts and that
//! a cancellation can be an abort instead. The one control signal that is not a message, the
//! hint to close a response stream, is a variant of its own.

use crate::jsonrpc::{decode_raw, RawIncoming, RawMessage, RequestId, Response};
use crate::method::MethodName;

/// The standard headers of MCP over HTTP (the protocol's one home for them: [`crate::headers`]).
pub use crate::headers;

/// What an encoded frame is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FrameKind {
    /// A request of ours.
    Request {
        /// Its id.
        id: RequestId,
        /// Its method.
        method: MethodName,
    },
    /// A notification of ours (not a cancellation).
    Notification {
        /// Its method.
        method: MethodName,
    },
    /// `notifications/cancelled` for a request of ours: a transport that carries each request
    /// on its own stream may end that stream instead of sending this.
    Cancel {
        /// The cancelled request.
        id: RequestId,
    },
    /// A response to a request of the peer's.
    Response {
        /// The request answered (`None`: an error about an unreadable request).
        id: Option<RequestId>,
        /// The JSON-RPC error code, when the response is an error.
        error: Option<i64>,
    },
    /// A JSON array of responses: the answers to a batch.
    Batch,
}

/// A header name: one of [`headers`], or a tool's `Mcp-Param-*`.
pub type Header = std::borrow::Cow<'static, str>;

/// One encoded message and what it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// The JSON text (one line: no newline inside, none at the end).
    pub text: String,
    /// What it is.
    pub kind: FrameKind,
    /// The standard HTTP headers of this message ([`headers`]: its revision, and for a
    /// 2026-07-28 request its method, name and declared parameters), which an HTTP transport
    /// sends with it and other transports ignore. Empty for a server's frames.
    pub headers: Vec<(Header, String)>,
}

impl Frame {
    /// A frame of this kind, with no headers.
    pub fn new(text: String, kind: FrameKind) -> Self {
        Self { text, kind, headers: Vec::new() }
    }

    /// A response frame for `id` (an error when `error` has the code).
    pub fn response(text: String, id: Option<RequestId>, error: Option<i64>) -> Self {
        Self::new(text, FrameKind::Response { id, error })
    }

    /// A frame of text written elsewhere than by the codec (a test peer, a recorded
    /// session), its kind read off the text. Text that is no message is taken for a
    /// notification.
    pub fn from_text(text: impl Into<String>) -> Self {
        let text = text.into();
        let kind = match decode_raw(&text) {
            Ok(RawIncoming::Single(RawMessage::Request { id, method, .. })) => {
                FrameKind::Request { id, method: MethodName::parse(&method) }
            }
            Ok(RawIncoming::Single(RawMessage::Notification { method, .. })) => {
                FrameKind::Notification { method: MethodName::parse(&method) }
            }
            Ok(RawIncoming::Single(RawMessage::Response(Response { id, outcome }))) => {
                FrameKind::Response { id, error: outcome.err().map(|e| e.code) }
            }
            Ok(RawIncoming::Batch(_)) => FrameKind::Batch,
            Err(_) => FrameKind::Notification { method: MethodName::Unknown(String::new()) },
        };
        Self::new(text, kind)
    }

    /// The value of header `name`, if the frame has it.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    /// Whether this frame answers request `id` (its response, or a batch of answers).
    pub fn answers(&self, id: &RequestId) -> bool {
        match &self.kind {
            FrameKind::Response { id: Some(answered), .. } => answered == id,
            FrameKind::Response { id: None, .. } | FrameKind::Batch => true,
            _ => false,
        }
    }

    /// The JSON-RPC error code, for an error response.
    pub fn error_code(&self) -> Option<i64> {
        match &self.kind {
            FrameKind::Response { error, .. } => *error,
            _ => None,
        }
    }
}

/// What goes down to a transport.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outbound {
    /// A message to send.
    Frame(Frame),
    /// A hint for a request-scoped stream (an HTTP response): close it now, the client will
    /// resume it later (SSE polling). Other transports ignore it.
    CloseStream,
}

impl From<Frame> for Outbound {
    fn from(f: Frame) -> Self {
        Self::Frame(f)
    }
}

impl Outbound {
    /// A frame of text written elsewhere than by the codec ([`Frame::from_text`]).
    pub fn text(text: impl Into<String>) -> Self {
        Self::Frame(Frame::from_text(text))
    }
}
