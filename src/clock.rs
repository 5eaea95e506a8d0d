//! The engine's clock: UTC derived from tokio's monotonic clock.
//!
//! Anchoring UTC to `tokio::time::Instant` once at start keeps deadlines and
//! `now` on one time line, so timers armed from UTC deadlines fire exactly
//! when the evaluator expects, and tests with paused tokio time control both.

use chrono::{DateTime, Utc};
use tokio::time::Instant;

#[derive(Debug, Clone, Copy)]
pub struct Clock {
    utc_at_start: DateTime<Utc>,
    instant_at_start: Instant,
}

impl Clock {
    pub fn start() -> Clock {
        Clock {
            utc_at_start: Utc::now(),
            instant_at_start: Instant::now(),
        }
    }

    pub fn now(&self) -> DateTime<Utc> {
        let elapsed = Instant::now().duration_since(self.instant_at_start);
        self.utc_at_start + chrono::Duration::from_std(elapsed).unwrap_or(chrono::Duration::MAX)
    }

    /// The instant a UTC deadline falls on, exactly: equal deadlines are
    /// equal instants, so they fire in a fixed order (route id). One before
    /// the clock started is due at once.
    pub fn instant_of(&self, at: DateTime<Utc>) -> Instant {
        let since_start = (at - self.utc_at_start).to_std().unwrap_or_default();
        self.instant_at_start + since_start
    }
}
