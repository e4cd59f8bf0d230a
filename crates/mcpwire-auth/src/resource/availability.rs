//! Whether a verifier's authorization server answers, as it last found: a failure is
//! remembered for [`RETRY_AFTER`] (the requests of that while are refused at once, without
//! each waiting on an unreachable server) and logged once per streak of failures, not once
//! per request; the first success after a streak is logged too.

use std::time::{Duration, Instant};

use parking_lot::Mutex;

use super::verifier::TokenError;

/// How long a failure to reach the authorization server stands before it is tried again;
/// also what a `503` tells clients to wait (`Retry-After`).
pub const RETRY_AFTER: Duration = Duration::from_secs(2);

/// The state of one verifier's authorization server.
pub(crate) struct Availability {
    /// What the log names: the issuer, or the endpoint when there is no issuer.
    label: String,
    /// The current streak of failures, if any.
    failing: Mutex<Option<Streak>>,
}

struct Streak {
    /// When the last attempt failed.
    at: Instant,
    /// Why.
    why: String,
}

impl Availability {
    pub(crate) fn new(label: impl Into<String>) -> Self {
        Self { label: label.into(), failing: Mutex::new(None) }
    }

    /// `Err` (the last failure) while a failure less than [`RETRY_AFTER`] old stands: not
    /// worth trying again yet.
    pub(crate) fn check(&self) -> Result<(), TokenError> {
        match &*self.failing.lock() {
            Some(streak) if streak.at.elapsed() < RETRY_AFTER => Err(TokenError::Unavailable(streak.why.clone())),
            _ => Ok(()),
        }
    }

    /// Notes the outcome of an attempt to reach the authorization server, and hands it back.
    pub(crate) fn note<T>(&self, outcome: Result<T, TokenError>) -> Result<T, TokenError> {
        match &outcome {
            Ok(_) => self.succeeded(),
            Err(TokenError::Unavailable(why)) => self.failed(why),
            Err(_) => {}
        }
        outcome
    }

    fn failed(&self, why: &str) {
        let mut failing = self.failing.lock();
        if failing.is_none() {
            tracing::warn!(
                "the authorization server {} cannot be reached: {why}; requests that need it are answered 503 \
                 until it can (tried again every {} s at most)",
                self.label,
                RETRY_AFTER.as_secs()
            );
        }
        *failing = Some(Streak { at: Instant::now(), why: why.to_owned() });
    }

    fn succeeded(&self) {
        if self.failing.lock().take().is_some() {
            tracing::warn!("the authorization server {} answers again", self.label);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_stands_for_a_while_and_a_success_ends_the_streak() {
        let a = Availability::new("https://as.example");
        assert!(a.check().is_ok());
        let failed = a.note::<()>(Err(TokenError::Unavailable("refused".into())));
        assert!(failed.is_err());
        match a.check() {
            Err(TokenError::Unavailable(why)) => assert_eq!(why, "refused"),
            other => panic!("{other:?}"),
        }
        // A refusal of the token itself says nothing of the server.
        assert!(a.note::<()>(Err(TokenError::Expired)).is_err());
        assert!(a.check().is_err());
        a.note(Ok(())).unwrap();
        assert!(a.check().is_ok());
    }
}
