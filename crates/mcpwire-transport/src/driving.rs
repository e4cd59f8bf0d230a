//! What every async driver of a protocol engine needs besides a connection: the time as the
//! engine takes it, a wait for the engine's next deadline, and sending a frame from where one
//! cannot wait (a destructor, the task reading the connection).
//!
//! The client's and the server's drivers use these, so that both keep the same time and the
//! same policy on a full queue.

use std::pin::Pin;
use std::time::{Duration, Instant};

use mcpwire_protocol::engine::Now;
use mcpwire_protocol::frame::Outbound;
use tokio::sync::mpsc;
use tokio::time::Sleep;

/// The time now, as an engine takes it: tokio's clock for deadlines (so that a test's paused
/// clock applies), and the wall clock for what outlives the process.
pub fn now() -> Now {
    let unix_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or_default();
    Now::new(tokio::time::Instant::now().into_std(), unix_ms)
}

/// A driver's one timer for its engine's deadlines (`poll_timeout`): moved only when the
/// deadline does, so that a connection does not make and register a new timer for every
/// frame it handles.
pub struct Timer {
    sleep: Pin<Box<Sleep>>,
    /// The deadline the timer is set to; `None`: not set (or it has rung).
    deadline: Option<Instant>,
}

impl Default for Timer {
    fn default() -> Self {
        // Not registered with the runtime's timers until it is first waited on.
        Self { sleep: Box::pin(tokio::time::sleep_until(tokio::time::Instant::now())), deadline: None }
    }
}

impl Timer {
    /// Sets the timer to `deadline` (`None`: never rings), if that is not what it is set to.
    pub fn set_deadline(&mut self, deadline: Option<Instant>) {
        if deadline == self.deadline {
            return;
        }
        if let Some(d) = deadline {
            self.sleep.as_mut().reset(d.into());
        }
        self.deadline = deadline;
    }

    /// Waits until the deadline set; for ever when none is. Once it has rung, it is unset
    /// until [`Self::set_deadline`] sets it again (with the same deadline, it waits again
    /// rather than ringing at once).
    pub async fn ring(&mut self) {
        if self.deadline.is_none() {
            return std::future::pending().await;
        }
        self.sleep.as_mut().await;
        self.deadline = None;
    }
}

/// How long a frame that found its queue full may wait for room, from a task of its own.
pub const SEND_LATER_LIMIT: Duration = Duration::from_secs(10);

/// Sends `out` without waiting: at once when the queue has room; when it is full, from a task
/// of its own that waits at most [`SEND_LATER_LIMIT`] for room (a frame is not lost because
/// its reader is briefly behind, and a reader that never reads again holds no task for
/// long). Returns `false` when the queue is closed (nobody reads it any more).
pub fn send_now(tx: &mpsc::Sender<Outbound>, out: Outbound) -> bool {
    match tx.try_send(out) {
        Ok(()) => true,
        Err(mpsc::error::TrySendError::Full(out)) => {
            // Outside a runtime (a destructor run at shutdown) there is nowhere to wait.
            if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                let tx = tx.clone();
                runtime.spawn(async move {
                    let _ = tokio::time::timeout(SEND_LATER_LIMIT, tx.send(out)).await;
                });
            }
            true
        }
        Err(mpsc::error::TrySendError::Closed(_)) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcpwire_protocol::frame::Outbound;

    #[tokio::test(start_paused = true)]
    async fn a_frame_that_finds_its_queue_full_is_sent_once_there_is_room_and_not_after_the_limit() {
        let (tx, mut rx) = mpsc::channel(1);
        assert!(send_now(&tx, Outbound::CloseStream));
        assert!(send_now(&tx, Outbound::CloseStream), "full: sent later");
        assert!(rx.recv().await.is_some());
        assert!(rx.recv().await.is_some(), "the frame that waited came");

        // A reader that never reads again: the waiting task gives up at the limit.
        assert!(send_now(&tx, Outbound::CloseStream));
        assert!(send_now(&tx, Outbound::CloseStream));
        tokio::time::sleep(SEND_LATER_LIMIT + Duration::from_secs(1)).await;
        assert!(rx.recv().await.is_some());
        assert!(rx.try_recv().is_err(), "the late frame was dropped at the limit");

        drop(rx);
        assert!(!send_now(&tx, Outbound::CloseStream), "closed");
    }

    #[tokio::test(start_paused = true)]
    async fn a_timer_rings_at_its_deadline_follows_it_when_it_moves_and_never_rings_without_one() {
        let mut timer = Timer::default();
        let never = tokio::time::timeout(Duration::from_secs(3600), timer.ring()).await;
        assert!(never.is_err(), "no deadline: it never rings");

        let start = tokio::time::Instant::now();
        timer.set_deadline(Some(now().instant + Duration::from_secs(5)));
        timer.ring().await;
        assert_eq!(start.elapsed(), Duration::from_secs(5));

        // Rung, then set again: it waits for the new deadline, not ringing at once.
        let deadline = now().instant + Duration::from_secs(3);
        timer.set_deadline(Some(deadline));
        let early = tokio::time::timeout(Duration::from_secs(1), timer.ring()).await;
        assert!(early.is_err(), "not before its deadline");
        // Moved earlier while set: it rings at the new one.
        timer.set_deadline(Some(now().instant + Duration::from_secs(1)));
        let start = tokio::time::Instant::now();
        timer.ring().await;
        assert_eq!(start.elapsed(), Duration::from_secs(1));
        timer.set_deadline(Some(deadline));
        timer.ring().await;
        assert_eq!(start.elapsed(), Duration::from_secs(2), "set again after ringing, it rings at its deadline");

        // Unset: never.
        timer.set_deadline(Some(now().instant + Duration::from_secs(1)));
        timer.set_deadline(None);
        let never = tokio::time::timeout(Duration::from_secs(3600), timer.ring()).await;
        assert!(never.is_err());
    }
}
