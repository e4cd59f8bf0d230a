//! Lists that follow the server's changes just after the handshake.
//!
//! A legacy-era server may add tools, prompts or resources once it knows the client (when
//! `notifications/initialized` arrives; server-everything adds its sampling and elicitation
//! tools so) and announce them with a `list_changed` notification. A list taken at once can
//! miss them. [`ListChanges`] counts every announcement from the start of the connection (it
//! is the client's notification callback, so none is missed between the handshake and the
//! first list), and [`Settle`] says how long after the handshake `mcp list` follows them.

use std::time::Duration;

use mcpwire_client::ServerNotification;
use tokio::sync::watch;
use tokio::time::Instant;

use super::args::ListKind;

/// How long after the last change followed the lists are taken as complete, when the
/// window has not closed yet: a server that adds things after the handshake adds them in one
/// burst.
pub const QUIET: Duration = Duration::from_millis(250);

/// Counts of the `list_changed` announcements received, per list, since the connection
/// started.
#[derive(Debug)]
pub struct ListChanges {
    counts: watch::Sender<[u64; 3]>,
}

impl Default for ListChanges {
    fn default() -> Self {
        Self { counts: watch::Sender::new([0; 3]) }
    }
}

/// The slot of a list in the counts (resources and their templates share one
/// announcement).
fn slot(kind: ListKind) -> usize {
    match kind {
        ListKind::Tools => 0,
        ListKind::Resources | ListKind::Templates => 1,
        ListKind::Prompts => 2,
    }
}

impl ListChanges {
    /// Counts `notification` if it announces a list change (the client's notification
    /// callback calls this for every notification).
    pub fn record(&self, notification: &ServerNotification) {
        let slot = match notification {
            ServerNotification::ToolsListChanged => 0,
            ServerNotification::ResourcesListChanged => 1,
            ServerNotification::PromptsListChanged => 2,
            _ => return,
        };
        self.counts.send_modify(|counts| counts[slot] += 1);
    }

    /// How many changes of `kind`'s list have been announced so far.
    pub fn count(&self, kind: ListKind) -> u64 {
        self.counts.borrow()[slot(kind)]
    }

    /// A receiver that sees every announcement made after this call.
    pub fn watch(&self) -> watch::Receiver<[u64; 3]> {
        self.counts.subscribe()
    }
}

/// How `mcp list` follows changes: the announcements, and until when they are waited for.
#[derive(Debug, Clone, Copy)]
pub struct Settle {
    /// The end of the window: the end of the handshake plus `--settle`.
    pub until: Instant,
}

impl Settle {
    /// A window of `window` from now (call it when the handshake has ended).
    pub fn after_handshake(window: Duration) -> Self {
        Self { until: Instant::now() + window }
    }

    /// Waits for the next announcement, until the window closes (or [`QUIET`] after
    /// `followed`, the time a change was last followed, if any). Returns whether one came.
    pub async fn next_change(&self, changes: &mut watch::Receiver<[u64; 3]>, followed: Option<Instant>) -> bool {
        let until = match followed {
            Some(at) => self.until.min(at + QUIET),
            None => self.until,
        };
        if Instant::now() >= until {
            return false;
        }
        matches!(tokio::time::timeout_at(until, changes.changed()).await, Ok(Ok(())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_each_list_and_ignores_other_notifications() {
        let changes = ListChanges::default();
        changes.record(&ServerNotification::ToolsListChanged);
        changes.record(&ServerNotification::ToolsListChanged);
        changes.record(&ServerNotification::ResourcesListChanged);
        changes.record(&ServerNotification::ElicitationComplete { elicitation_id: "e".into() });
        assert_eq!(changes.count(ListKind::Tools), 2);
        assert_eq!(changes.count(ListKind::Resources), 1);
        assert_eq!(changes.count(ListKind::Templates), 1);
        assert_eq!(changes.count(ListKind::Prompts), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn waits_for_a_change_until_the_window_closes() {
        let changes = std::sync::Arc::new(ListChanges::default());
        let settle = Settle::after_handshake(Duration::from_millis(500));
        let mut rx = changes.watch();
        let later = changes.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(300)).await;
            later.record(&ServerNotification::PromptsListChanged);
        });
        assert!(settle.next_change(&mut rx, None).await);
        assert_eq!(changes.count(ListKind::Prompts), 1);
        // Nothing else comes: the window closes at 500 ms, not later.
        let start = Instant::now();
        assert!(!settle.next_change(&mut rx, None).await);
        assert_eq!(Instant::now() - start, Duration::from_millis(200));
    }

    #[tokio::test(start_paused = true)]
    async fn a_followed_change_closes_the_window_after_a_quiet_spell() {
        let changes = ListChanges::default();
        let settle = Settle::after_handshake(Duration::from_secs(10));
        let mut rx = changes.watch();
        let start = Instant::now();
        assert!(!settle.next_change(&mut rx, Some(start)).await);
        assert_eq!(Instant::now() - start, QUIET);
    }
}
