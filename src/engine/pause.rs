//! Pausing new dispatches: while paused this engine launches no new
//! attempt. Running attempts continue. The state machine is told through
//! its `World`: a wait that comes due is held (it stays due, shown with its
//! past deadline) and dispatches when the pause ends; a failure whose
//! decision is to switch to the next candidate at once is committed as a
//! wait on that candidate due now, held the same way; a new route or a
//! manual `retry-now` / `skip-now` / `resume` is refused with `conflict`.
//! The pause lives in this engine only: it is not stored, and another
//! process (the CLI) on the same database is not paused.

use std::sync::atomic::Ordering;

use super::pending::Work;
use super::Engine;

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
                .book()
                .pending
                .iter()
                .filter(|(_, p)| matches!(p.work(), Work::Timer))
                .map(|(k, _)| *k)
                .collect();
            self.fire_held(&due);
            self.kick_release();
        }
        tracing::info!(
            paused,
            "new dispatches {}",
            if paused { "paused" } else { "resumed" }
        );
    }
}
