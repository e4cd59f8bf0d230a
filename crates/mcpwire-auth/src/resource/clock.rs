//! The time a verifier judges expiry and refetch intervals by: the system's, or one a test
//! sets.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Seconds since the Unix epoch, as a verifier reads them.
#[derive(Clone)]
pub struct Clock(Arc<dyn Fn() -> u64 + Send + Sync>);

impl Clock {
    /// The system's clock.
    pub fn system() -> Self {
        Self(Arc::new(|| {
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or_default()
        }))
    }

    /// A clock that reads `now` (set it to move time: tests judge expiry without waiting).
    pub fn manual(now: Arc<AtomicU64>) -> Self {
        Self(Arc::new(move || now.load(Ordering::Relaxed)))
    }

    /// Seconds since the Unix epoch.
    pub fn now(&self) -> u64 {
        (self.0)()
    }
}

impl Default for Clock {
    fn default() -> Self {
        Self::system()
    }
}

impl std::fmt::Debug for Clock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Clock({})", self.now())
    }
}
