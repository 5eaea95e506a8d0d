//! Pausing new dispatches: while paused this engine launches no new
//! attempt. Running attempts continue. A wait that comes due is held (it
//! stays due, shown with its past deadline) and dispatches when the pause
//! ends; a failure whose decision is to switch to the next candidate at once
//! is committed as a wait on that candidate due now, held the same way; a
//! new route or a manual `retry-now` / `skip-now` / `resume` is refused with
//! `conflict`. The pause lives in this engine only: it is not stored, and
//! another process (the CLI) on the same database is not paused.

use std::sync::atomic::Ordering;

use super::pending::Work;
use super::{Engine, EngineError};
use crate::route::machine::{Effect, Plan};
use crate::route::RouteState;

impl Engine {
    /// Whether new dispatches are paused.
    pub fn is_paused(&self) -> bool {
        self.inner.paused.load(Ordering::SeqCst)
    }

    /// Pauses or resumes new dispatches. Resuming dispatches every wait that
    /// came due meanwhile, at once.
    pub fn set_paused(&self, paused: bool) {
        let was = self.inner.paused.swap(paused, Ordering::SeqCst);
        if was && !paused {
            let due: Vec<_> = self
                .pending()
                .iter()
                .filter(|(_, p)| matches!(p.work(), Work::Timer))
                .map(|(k, _)| *k)
                .collect();
            for key in due {
                self.perform(key);
            }
        }
        tracing::info!(
            paused,
            "new dispatches {}",
            if paused { "paused" } else { "resumed" }
        );
    }

    /// The error for a dispatch a person asked for while paused.
    pub(super) fn refuse_if_paused(&self, what: &str) -> Result<(), EngineError> {
        if self.is_paused() {
            return Err(EngineError::Conflict(format!(
                "new dispatches are paused, so {what} would not start an agent; resume dispatches first"
            )));
        }
        Ok(())
    }
}

/// While paused, a plan that would dispatch right after a report (a skip to
/// the next candidate) becomes a wait on that candidate due now: the
/// decision and the attempt's result are recorded, no agent starts, and
/// the wait fires when the pause ends.
pub(super) fn hold_dispatch(mut plan: Plan) -> Plan {
    if !matches!(plan.effect, Effect::Dispatch(_)) {
        return plan;
    }
    let now = plan.next.updated_at;
    plan.write.dispatch = None;
    plan.next.state = RouteState::RetryScheduled;
    plan.next.deadline = Some(now);
    plan.effect = Effect::Arm(now);
    plan
}
