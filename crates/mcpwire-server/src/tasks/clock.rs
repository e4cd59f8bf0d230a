//! The time tasks are stamped and expired by: the system's, or one a test supplies.

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

/// The wall-clock time a task store and the task runtime read: when a task was created
/// (`createdAt`), last changed (`lastUpdatedAt`), and whether its `ttl` elapsed.
///
/// The system's clock by default ([`TaskClock::system`]). Tests on tokio's paused clock
/// give [`TaskClock::tokio`], which moves with tokio's clock, so that tasks expire in
/// virtual time; [`TaskClock::from_fn`] takes any other source. Timestamps on the wire stay
/// RFC 3339 wall-clock times, whatever the clock. (A handler's own `ttl` timer always runs
/// on tokio's clock.)
#[derive(Clone)]
pub struct TaskClock(Arc<dyn Fn() -> SystemTime + Send + Sync>);

impl TaskClock {
    /// The system's clock ([`SystemTime::now`]).
    pub fn system() -> Self {
        Self(Arc::new(SystemTime::now))
    }

    /// A clock that reads `now` (a test may move it at will).
    pub fn from_fn(now: impl Fn() -> SystemTime + Send + Sync + 'static) -> Self {
        Self(Arc::new(now))
    }

    /// A clock that follows tokio's: the system's time when it is made, plus how far
    /// [`tokio::time::Instant`] has moved since. On a paused runtime (`start_paused`,
    /// `tokio::time::advance`) it moves only when tokio's clock does, so that tasks expire
    /// in virtual time.
    pub fn tokio() -> Self {
        let base = SystemTime::now();
        let start = tokio::time::Instant::now();
        Self(Arc::new(move || base + start.elapsed()))
    }

    /// The time now.
    pub fn now(&self) -> SystemTime {
        (self.0)()
    }

    /// The time now in milliseconds since the Unix epoch (zero before it).
    pub fn now_ms(&self) -> u64 {
        self.now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
    }
}

impl Default for TaskClock {
    fn default() -> Self {
        Self::system()
    }
}

impl std::fmt::Debug for TaskClock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "TaskClock({} ms)", self.now_ms())
    }
}
