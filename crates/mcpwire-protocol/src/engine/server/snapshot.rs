//! What a legacy session is, apart from its requests in flight: enough to serve it on another
//! instance of the server without the handshake again (scale-out), or after a restart.

use std::collections::HashSet;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::{ServerPeer, Session};
use crate::revision::ProtocolVersion;
use crate::types::{ClientCapabilities, Implementation, LoggingLevel};

/// A legacy session's negotiated state: its revision, the client's capabilities and info, its
/// log level and resource subscriptions. Serializable, to be kept in a shared store.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionSnapshot {
    /// The revision agreed by `initialize`.
    pub revision: ProtocolVersion,
    /// What the client declared.
    pub capabilities: ClientCapabilities,
    /// Who the client is.
    pub client_info: Implementation,
    /// The threshold of log messages (`logging/setLevel`); `None`: none are sent.
    pub log_level: Option<LoggingLevel>,
    /// The resources the client subscribed to, sorted.
    pub subscriptions: Vec<String>,
}

impl<W, H: Clone + Default> ServerPeer<W, H> {
    /// The session's state, once `initialize` has been answered.
    pub fn snapshot(&self) -> Option<SessionSnapshot> {
        let session = self.session.as_ref()?;
        let mut subscriptions: Vec<String> = self.subscriptions.iter().cloned().collect();
        subscriptions.sort_unstable();
        Some(SessionSnapshot {
            revision: session.revision,
            capabilities: (*session.capabilities).clone(),
            client_info: (*session.client_info).clone(),
            log_level: self.log_level,
            subscriptions,
        })
    }

    /// Makes this engine the session `snapshot` describes, as if its `initialize` had been
    /// answered here (another instance answered it), or brings the log level and
    /// subscriptions of the session it already is up to date (another instance changed them).
    /// A snapshot of a modern revision is refused: 2026-07-28 has no sessions.
    pub fn restore(&mut self, snapshot: SessionSnapshot) -> Result<(), SnapshotRefused> {
        if snapshot.revision.is_modern() || self.stateless {
            return Err(SnapshotRefused);
        }
        self.session = Some(Session {
            revision: snapshot.revision,
            capabilities: Arc::new(snapshot.capabilities),
            client_info: Arc::new(snapshot.client_info),
        });
        self.log_level = snapshot.log_level;
        self.subscriptions = snapshot.subscriptions.into_iter().collect::<HashSet<_>>();
        Ok(())
    }

    /// How many times what a [`SessionSnapshot`] holds has changed here (by `initialize`,
    /// `logging/setLevel`, `resources/subscribe` and `unsubscribe`; not by [`Self::restore`]):
    /// a transport that keeps sessions in a shared store writes the snapshot again when it grows.
    pub fn state_changes(&self) -> u64 {
        self.state_changes
    }
}

/// A [`SessionSnapshot`] could not be restored: it names a 2026-07-28 revision (which has no
/// sessions), or the engine serves stateless requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SnapshotRefused;

impl std::fmt::Display for SnapshotRefused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a session snapshot names a revision without sessions, or the engine is stateless")
    }
}

impl std::error::Error for SnapshotRefused {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::ServerSettings;
    use crate::types::Implementation;

    fn snapshot() -> SessionSnapshot {
        SessionSnapshot {
            revision: ProtocolVersion::V2025_06_18,
            capabilities: ClientCapabilities::default(),
            client_info: Implementation::new("c", "1"),
            log_level: Some(LoggingLevel::Warning),
            subscriptions: vec!["file:///a".into(), "file:///b".into()],
        }
    }

    #[test]
    fn a_restored_session_snapshots_as_it_was_and_survives_json() {
        let settings = Arc::new(ServerSettings::new(Implementation::new("s", "1")));
        let mut peer: ServerPeer = ServerPeer::new(settings);
        assert!(peer.snapshot().is_none(), "no session before initialize");
        let json = serde_json::to_string(&snapshot()).unwrap();
        peer.restore(serde_json::from_str(&json).unwrap()).unwrap();
        assert_eq!(peer.snapshot(), Some(snapshot()));
        assert_eq!(peer.session().unwrap().revision, ProtocolVersion::V2025_06_18);
        assert_eq!(peer.state_changes(), 0, "a restore is not a change made here");
    }

    #[test]
    fn a_modern_revision_has_no_session_to_restore() {
        let settings = Arc::new(ServerSettings::new(Implementation::new("s", "1")));
        let mut peer: ServerPeer = ServerPeer::new(settings);
        let modern = SessionSnapshot { revision: ProtocolVersion::LATEST, ..snapshot() };
        assert_eq!(peer.restore(modern), Err(SnapshotRefused));
        assert!(peer.session().is_none());
    }
}
