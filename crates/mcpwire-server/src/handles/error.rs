//! Why a handle could not be used, in words a model can act on.

use std::error::Error as StdError;
use std::fmt;

use crate::authoring::ToolError;
use crate::error::HandlerError;
use crate::shared::StoreError;

/// How much of a handle an error repeats: enough to recognize it, never what an attacker
/// sent in full.
const ECHOED_CHARS: usize = 80;

/// Why a handle could not be used ([`crate::Handles`]). Ask with the `is_*` predicates.
///
/// Its message is written for the model that called the tool, and `?` in a tool turns it
/// into a tool execution error (a result with `isError: true`) with that message: for an
/// unknown or expired handle, to create a new one (with the creation tool, when one was
/// marked with [`crate::ToolDef::creates`]); for a store that is unavailable, to retry
/// later. An unavailable store is a tool execution error rather than a protocol error on
/// purpose: the model can act on it (wait and call again), while an internal error tells it
/// nothing. The store's own error, which may name hosts, is kept as the
/// [`source`](StdError::source) for the logs, and not shown to the model.
#[derive(Debug)]
pub struct HandleError {
    kind: Kind,
    /// The handle's kind ("cart").
    what: String,
    /// The tool that makes handles of this kind, if known.
    creator: Option<String>,
    source: Option<Source>,
}

#[derive(Debug)]
enum Kind {
    /// Unknown, expired, another principal's, or malformed: told apart for nobody.
    Unknown { handle: String },
    /// The store could not be reached.
    Unavailable,
    /// What the store holds under the handle is not a value of this kind (written by
    /// another version of the server, say).
    Unreadable { handle: String },
    /// The value could not be written as JSON.
    Unwritable,
}

#[derive(Debug)]
enum Source {
    Store(StoreError),
    Json(serde_json::Error),
}

impl HandleError {
    pub(super) fn unknown(what: &str, creator: Option<String>, handle: &str) -> Self {
        Self::new(Kind::Unknown { handle: echo(handle) }, what, creator, None)
    }

    pub(super) fn store(what: &str, creator: Option<String>, handle: &str, error: StoreError) -> Self {
        let kind = match error.is_corrupt() {
            true => Kind::Unreadable { handle: echo(handle) },
            false => Kind::Unavailable,
        };
        Self::new(kind, what, creator, Some(Source::Store(error)))
    }

    pub(super) fn unreadable(what: &str, creator: Option<String>, handle: &str, error: serde_json::Error) -> Self {
        Self::new(Kind::Unreadable { handle: echo(handle) }, what, creator, Some(Source::Json(error)))
    }

    pub(super) fn unwritable(what: &str, error: serde_json::Error) -> Self {
        Self::new(Kind::Unwritable, what, None, Some(Source::Json(error)))
    }

    fn new(kind: Kind, what: &str, creator: Option<String>, source: Option<Source>) -> Self {
        let error = Self { kind, what: what.to_owned(), creator, source };
        // The model reads the message; whoever runs the server needs the cause.
        if let Some(source) = &error.source {
            tracing::warn!(kind = %error.what, error = %source, "handle store: {error}");
        }
        error
    }

    /// The handle is unknown: never made, expired, removed, malformed, or another
    /// principal's (which is not told apart, so as not to reveal that it exists).
    pub fn is_unknown(&self) -> bool {
        matches!(self.kind, Kind::Unknown { .. })
    }

    /// The store could not be reached; the same call may succeed later. The store's error
    /// is the [`source`](StdError::source).
    pub fn is_unavailable(&self) -> bool {
        matches!(self.kind, Kind::Unavailable)
    }

    /// What the store holds under the handle is not a value of this kind (a value written by
    /// another version of the server), or the value could not be written as JSON.
    pub fn is_unreadable(&self) -> bool {
        matches!(self.kind, Kind::Unreadable { .. } | Kind::Unwritable)
    }

    fn create_anew(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.creator {
            Some(tool) => write!(f, "create a new one with {tool}"),
            None => f.write_str("create a new one"),
        }
    }
}

/// At most [`ECHOED_CHARS`] of `handle`, marked when cut.
fn echo(handle: &str) -> String {
    match handle.char_indices().nth(ECHOED_CHARS) {
        Some((end, _)) => format!("{}…", &handle[..end]),
        None => handle.to_owned(),
    }
}

impl fmt::Display for HandleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = &self.what;
        match &self.kind {
            Kind::Unknown { handle } => {
                write!(f, "unknown or expired {what} handle {handle:?}: ")?;
                self.create_anew(f)
            }
            Kind::Unavailable => {
                write!(f, "the {what} service is temporarily unavailable: retry in a moment")
            }
            Kind::Unreadable { handle } => {
                write!(f, "the {what} handle {handle:?} can no longer be read: ")?;
                self.create_anew(f)
            }
            Kind::Unwritable => write!(f, "the {what} could not be saved"),
        }
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Store(e) => match e.source() {
                Some(cause) => write!(f, "{e}: {cause}"),
                None => write!(f, "{e}"),
            },
            Source::Json(e) => write!(f, "{e}"),
        }
    }
}

impl StdError for HandleError {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        match &self.source {
            Some(Source::Store(e)) => Some(e),
            Some(Source::Json(e)) => Some(e),
            None => None,
        }
    }
}

/// A tool execution error with the message (see [`HandleError`]).
impl From<HandleError> for ToolError {
    fn from(e: HandleError) -> Self {
        ToolError::new(e.to_string())
    }
}

/// A tool execution error with the message (see [`HandleError`]); `-32603` from a resource
/// or prompt handler.
impl From<HandleError> for HandlerError {
    fn from(e: HandleError) -> Self {
        HandlerError::Tool(e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_tell_the_model_what_to_do() {
        let e = HandleError::unknown("cart", Some("cart_create".into()), "cart_12");
        assert!(e.is_unknown() && !e.is_unavailable());
        assert_eq!(e.to_string(), r#"unknown or expired cart handle "cart_12": create a new one with cart_create"#);
        let e = HandleError::unknown("cart", None, "x\"y");
        assert_eq!(e.to_string(), r#"unknown or expired cart handle "x\"y": create a new one"#);
        let cause = StoreError::unavailable("handle get", std::io::Error::other("connection refused"));
        let e = HandleError::store("cart", None, "cart_1", cause);
        assert!(e.is_unavailable() && !e.is_unknown());
        assert_eq!(e.to_string(), "the cart service is temporarily unavailable: retry in a moment");
        let source = e.source().unwrap().downcast_ref::<StoreError>().unwrap();
        assert!(source.is_unavailable());
        assert_eq!(ToolError::from(e).message(), "the cart service is temporarily unavailable: retry in a moment");
    }

    #[test]
    fn long_handles_are_not_repeated_in_full() {
        let long = "é".repeat(10_000);
        let message = HandleError::unknown("cart", None, &long).to_string();
        assert!(message.len() < 300, "{message}");
        assert!(message.contains('…'));
    }
}
