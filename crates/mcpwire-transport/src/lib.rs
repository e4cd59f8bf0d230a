//! Byte transports for MCP: they move whole JSON-RPC frames and know nothing of their meaning.
//!
//! Every transport produces a [`Connection`]: a stream of inbound frames (text) and a sink of
//! outbound ones (typed: [`Outbound`], what each frame is, never read again here), as bounded
//! channels, so runtimes are written once for all transports.
//!
//! - [`stdio`]: newline-delimited frames over any `AsyncRead`/`AsyncWrite` pair, the process's
//!   own stdin/stdout among them, with a bound on the size of a frame.
//! - [`memory`]: a connected pair of in-memory connections, for tests and embedding.
//! - [`http`]: MCP over HTTP as a client: Streamable HTTP in both eras and HTTP+SSE, with
//!   transport and era detection, session handling and stream resumption.
//! - [`child`]: a server run as a child process, over its stdin/stdout, with its stderr
//!   logged and the specification's close sequence (stdin EOF, SIGTERM, SIGKILL).
//! - [`driving`]: what the client's and the server's drivers of the protocol engine share:
//!   its time, its deadlines, sending a frame from where one cannot wait.
#![deny(missing_docs)]

pub mod child;
pub mod driving;
#[cfg(feature = "http")]
pub mod http;
pub mod memory;
pub mod stdio;

use tokio::sync::mpsc;

/// Why an inbound frame could not be delivered as text.
///
/// As with every error of this crate, the `Display` text is this layer's only: an underlying
/// error is the [`source`](std::error::Error::source), not part of the text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    /// The frame was longer than the limit; it was skipped without being held in memory.
    #[error("message of more than {limit} bytes skipped")]
    TooLarge {
        /// The limit in bytes.
        limit: usize,
    },
    /// The frame was not valid UTF-8; the source says where it stops being.
    #[error("message is not valid UTF-8")]
    InvalidUtf8 {
        /// The UTF-8 decoder's error (its position in the frame and the invalid bytes' length).
        #[source]
        source: std::str::Utf8Error,
    },
}

pub use mcpwire_protocol::frame::{Frame as OutFrame, FrameKind, Outbound};

/// One inbound message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// The text of the message (one JSON-RPC message or batch).
    pub text: String,
}

impl Frame {
    /// A frame of this text.
    pub fn new(text: impl Into<String>) -> Self {
        Self { text: text.into() }
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
    pub outgoing: mpsc::Sender<Outbound>,
    /// The task writing frames out, when there is one: await it after dropping every
    /// `outgoing` sender to be sure everything sent was flushed.
    pub writer: Option<tokio::task::JoinHandle<()>>,
    /// Whether the transport sends each frame's HTTP headers ([`OutFrame::headers`]): over
    /// it, a tool whose `x-mcp-header` annotations are invalid cannot be called (2026-07-28).
    pub sends_headers: bool,
}

impl Connection {
    /// A connection of these channels, over a transport that sends no headers.
    pub fn new(incoming: mpsc::Receiver<Inbound>, outgoing: mpsc::Sender<Outbound>) -> Self {
        Self { incoming, outgoing, writer: None, sends_headers: false }
    }
}

/// Default bound on one inbound frame: 4 MiB.
pub const DEFAULT_MAX_FRAME: usize = 4 * 1024 * 1024;

/// Capacity of the channels between a transport's tasks and the runtime.
pub const CHANNEL_CAPACITY: usize = 256;
