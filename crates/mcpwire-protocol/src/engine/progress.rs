//! The rules of progress reporting for one request.

use crate::types::ProgressToken;

/// Why a progress update was not sent.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ProgressError {
    /// The request carried no progress token.
    #[error("the request did not ask for progress")]
    NotRequested,
    /// Progress must increase with every notification.
    #[error("progress must increase: {value} after {last}")]
    NotIncreasing {
        /// The previous value.
        last: f64,
        /// The refused value.
        value: f64,
    },
    /// The request was already answered.
    #[error("the request has completed")]
    Finished,
    /// Progress must be a finite number.
    #[error("progress must be a finite number")]
    NotFinite,
}

/// Tracks one request's progress: the token, the last value, whether it has finished.
#[derive(Debug, Clone)]
pub struct ProgressTracker {
    token: Option<ProgressToken>,
    last: Option<f64>,
    finished: bool,
}

impl ProgressTracker {
    /// A tracker for a request with (or without) a progress token.
    pub fn new(token: Option<ProgressToken>) -> Self {
        Self { token, last: None, finished: false }
    }

    /// Accepts `value` as the next progress, returning the token to echo.
    pub fn advance(&mut self, value: f64) -> Result<&ProgressToken, ProgressError> {
        if self.finished {
            return Err(ProgressError::Finished);
        }
        if !value.is_finite() {
            return Err(ProgressError::NotFinite);
        }
        let token = self.token.as_ref().ok_or(ProgressError::NotRequested)?;
        if let Some(last) = self.last {
            if value <= last {
                return Err(ProgressError::NotIncreasing { last, value });
            }
        }
        self.last = Some(value);
        Ok(token)
    }

    /// The token to echo, if the request asked for progress.
    pub fn token(&self) -> Option<&ProgressToken> {
        self.token.as_ref()
    }

    /// Marks the request answered: no progress after this.
    pub fn finish(&mut self) {
        self.finished = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strictly_increasing_and_nothing_after_finish() {
        let mut t = ProgressTracker::new(Some(ProgressToken::Number(7)));
        assert_eq!(t.advance(0.0), Ok(&ProgressToken::Number(7)));
        assert!(matches!(t.advance(0.0), Err(ProgressError::NotIncreasing { .. })));
        assert!(t.advance(1.0).is_ok());
        t.finish();
        assert_eq!(t.advance(2.0), Err(ProgressError::Finished));
        assert_eq!(ProgressTracker::new(None).advance(1.0), Err(ProgressError::NotRequested));
    }
}
