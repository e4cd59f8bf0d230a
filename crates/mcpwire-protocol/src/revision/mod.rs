//! Protocol revisions and what each one has.

use std::fmt;
use std::str::FromStr;

mod methods;

pub use methods::Sender;

/// A published MCP protocol revision.
///
/// Ordered by publication date, so `rev >= ProtocolVersion::V2025_06_18` reads as
/// "this revision has what 2025-06-18 introduced".
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ProtocolVersion {
    /// `2024-11-05`: the first published revision.
    V2024_11_05,
    /// `2025-03-26`: Streamable HTTP, batches, tool annotations, audio, completions capability.
    V2025_03_26,
    /// `2025-06-18`: structured tool output, elicitation, resource links, titles; no batches.
    V2025_06_18,
    /// `2025-11-25`: icons, URL elicitation, sampling with tools, tasks. Last legacy revision.
    V2025_11_25,
    /// `2026-07-28`: the modern, stateless era (`server/discover`, per-request `_meta`).
    V2026_07_28,
}

/// The era a revision belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Era {
    /// Revisions with `initialize` and sessions (2024-11-05 to 2025-11-25).
    Legacy,
    /// Stateless revisions (2026-07-28 and later).
    Modern,
}

impl ProtocolVersion {
    /// Every revision, oldest first.
    pub const ALL: [ProtocolVersion; 5] =
        [Self::V2024_11_05, Self::V2025_03_26, Self::V2025_06_18, Self::V2025_11_25, Self::V2026_07_28];
    /// The legacy revisions, oldest first.
    pub const LEGACY: [ProtocolVersion; 4] =
        [Self::V2024_11_05, Self::V2025_03_26, Self::V2025_06_18, Self::V2025_11_25];
    /// The newest revision.
    pub const LATEST: ProtocolVersion = Self::V2026_07_28;
    /// The newest legacy revision: what a legacy `initialize` gets when it asks for one we lack.
    pub const LATEST_LEGACY: ProtocolVersion = Self::V2025_11_25;

    /// The revision's date string as it appears on the wire.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::V2024_11_05 => "2024-11-05",
            Self::V2025_03_26 => "2025-03-26",
            Self::V2025_06_18 => "2025-06-18",
            Self::V2025_11_25 => "2025-11-25",
            Self::V2026_07_28 => "2026-07-28",
        }
    }

    /// Parses a wire version string; `None` for anything unknown.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|v| v.as_str() == s)
    }

    /// The era of this revision.
    pub const fn era(self) -> Era {
        match self {
            Self::V2026_07_28 => Era::Modern,
            _ => Era::Legacy,
        }
    }

    /// Whether this revision is of the modern (stateless) era.
    pub const fn is_modern(self) -> bool {
        matches!(self.era(), Era::Modern)
    }

    /// JSON-RPC batches are allowed (2025-03-26 only).
    pub const fn allows_batches(self) -> bool {
        matches!(self, Self::V2025_03_26)
    }

    /// Results carry `resultType` (and cacheable results `ttlMs`/`cacheScope`).
    pub const fn has_result_type(self) -> bool {
        self.is_modern()
    }

    /// Invalid tool arguments are a tool execution error (`isError: true`, which the model
    /// sees and can correct) rather than a JSON-RPC `-32602`: from 2025-11-25 on.
    pub const fn tool_input_errors_are_results(self) -> bool {
        matches!(self, Self::V2025_11_25 | Self::V2026_07_28)
    }

    /// Error code for "resource not found": `-32002` in the legacy era, `-32602` from 2026-07-28.
    pub const fn resource_not_found_code(self) -> i64 {
        if self.is_modern() {
            crate::error::INVALID_PARAMS
        } else {
            crate::error::RESOURCE_NOT_FOUND
        }
    }
}

impl fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The error returned when parsing an unknown revision string.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown MCP protocol version {0:?}")]
pub struct UnknownVersion(pub String);

impl FromStr for ProtocolVersion {
    type Err = UnknownVersion;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s).ok_or_else(|| UnknownVersion(s.to_owned()))
    }
}

impl serde::Serialize for ProtocolVersion {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> serde::Deserialize<'de> for ProtocolVersion {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        Self::parse(&s).ok_or_else(|| serde::de::Error::custom(UnknownVersion(s.into_owned())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_and_round_trip() {
        for w in ProtocolVersion::ALL.windows(2) {
            assert!(w[0] < w[1]);
        }
        for v in ProtocolVersion::ALL {
            assert_eq!(ProtocolVersion::parse(v.as_str()), Some(v));
        }
        assert_eq!(ProtocolVersion::parse("2024-10-07"), None);
        assert!(ProtocolVersion::V2026_07_28.is_modern());
        assert!(!ProtocolVersion::V2025_11_25.is_modern());
        assert!(ProtocolVersion::V2025_03_26.allows_batches());
        assert!(!ProtocolVersion::V2025_06_18.allows_batches());
    }
}
