//! Byte transports for MCP: they move whole JSON-RPC frames and know nothing of their meaning.
//!
//! Every transport produces a [`Connection`]: a stream of inbound frames and a sink of
//! outbound ones, as bounded channels, so runtimes are written once for all transports.
//!
//! - [`stdio`]: newline-delimited frames over any `AsyncRead`/`AsyncWrite` pair, the process's
//!   own stdin/stdout among them, with a bound on the size of a frame.
//! - [`memory`]: a connected pair of in-memory connections, for tests and embedding.
//! - [`http`]: MCP over HTTP as a client: Streamable HTTP in both eras and HTTP+SSE, with
//!   transport and era detection, session handling and stream resumption.
//! - [`child`]: a server run as a child process, over its stdin/stdout, with its stderr
//!   logged and the specification's close sequence (stdin EOF, SIGTERM, SIGKILL).
#![deny(missing_docs)]

pub mod child;
pub mod http;
pub mod memory;
pub mod stdio;

use tokio::sync::mpsc;

/// Why an inbound frame could not be delivered as text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    /// The frame was longer than the limit; it was skipped without being held in memory.
    #[error("message of more than {limit} bytes skipped")]
    TooLarge {
        /// The limit in bytes.
        limit: usize,
    },
    /// The frame was not valid UTF-8.
    #[error("message is not valid UTF-8")]
    InvalidUtf8,
}

/// One inbound message, and where its answers go.
#[derive(Debug, Clone)]
pub struct Frame {
    /// The text of the message (one JSON-RPC message or batch).
    pub text: String,
    /// Where the responses to the requests in this frame, and the messages related to them
    /// (progress, logs, requests back to the peer), are to be sent. `None`: on the
    /// connection's `outgoing` channel. Request-scoped HTTP streams set it; the receiver
    /// knows a stream is complete when it has seen the response to each of its requests.
    pub reply: Option<mpsc::Sender<String>>,
}

impl Frame {
    /// A frame whose answers go to the connection's `outgoing` channel.
    pub fn new(text: impl Into<String>) -> Self {
        Self { text: text.into(), reply: None }
    }
}

impl PartialEq for Frame {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text && self.reply.is_none() == other.reply.is_none()
    }
}

/// One inbound frame, or why it could not be read.
pub type Inbound = Result<Frame, FrameError>;

/// One end of a message connection.
#[derive(Debug)]
pub struct Connection {
    /// Frames from the peer; `None` once the peer has closed.
    pub incoming: mpsc::Receiver<Inbound>,
    /// Frames to the peer; dropping every clone closes the connection's sending side.
    pub outgoing: mpsc::Sender<String>,
    /// The task writing frames out, when there is one: await it after dropping every
    /// `outgoing` sender to be sure everything sent was flushed.
    pub writer: Option<tokio::task::JoinHandle<()>>,
}

/// A frame a runtime may put on a request-scoped reply sink (never on a connection's own
/// `outgoing`) to suggest that the transport close the response stream now and let the
/// client resume it later (SSE polling, SEP-1699). Not JSON: it can never be a message.
pub const CLOSE_STREAM_HINT: &str = "\u{0}close-stream";

/// Default bound on one inbound frame: 4 MiB.
pub const DEFAULT_MAX_FRAME: usize = 4 * 1024 * 1024;

/// Capacity of the channels between a transport's tasks and the runtime.
pub const CHANNEL_CAPACITY: usize = 256;
