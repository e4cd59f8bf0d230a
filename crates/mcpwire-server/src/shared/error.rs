//! The error of a shared store: opaque, with predicates, the cause kept as its source.

use std::error::Error as StdError;
use std::fmt;

type Cause = Box<dyn StdError + Send + Sync>;

/// A shared store (or the bus) could not do what was asked.
///
/// Ask what happened with the `is_*` predicates; the underlying error (the Redis client's,
/// say) is the [`source`](StdError::source).
#[derive(Debug)]
pub struct StoreError {
    kind: Kind,
    what: &'static str,
    cause: Option<Cause>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Unavailable,
    Corrupt,
}

impl StoreError {
    /// The store could not be reached (or did not answer): the operation `what` may succeed
    /// later, once it is back.
    pub fn unavailable(what: &'static str, cause: impl Into<Cause>) -> Self {
        Self { kind: Kind::Unavailable, what, cause: Some(cause.into()) }
    }

    /// The store answered, but what it holds for `what` could not be read (written by another
    /// version, or damaged).
    pub fn corrupt(what: &'static str, cause: impl Into<Cause>) -> Self {
        Self { kind: Kind::Corrupt, what, cause: Some(cause.into()) }
    }

    /// Whether the store could not be reached.
    pub fn is_unavailable(&self) -> bool {
        self.kind == Kind::Unavailable
    }

    /// Whether what the store holds could not be read.
    pub fn is_corrupt(&self) -> bool {
        self.kind == Kind::Corrupt
    }
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            Kind::Unavailable => write!(f, "the shared store is unavailable ({})", self.what),
            Kind::Corrupt => write!(f, "the shared store holds an unreadable value ({})", self.what),
        }
    }
}

impl StdError for StoreError {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        self.cause.as_deref().map(|c| c as &(dyn StdError + 'static))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cause_is_the_source_and_the_kind_a_predicate() {
        let e = StoreError::unavailable("session lookup", std::io::Error::other("connection refused"));
        assert!(e.is_unavailable() && !e.is_corrupt());
        assert_eq!(e.to_string(), "the shared store is unavailable (session lookup)");
        assert_eq!(e.source().unwrap().to_string(), "connection refused");
    }
}
