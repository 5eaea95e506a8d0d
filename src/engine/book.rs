//! What this engine has in flight, behind one lock: running attempts, armed
//! timers, the generation last published per route, how far other
//! processes' changes were read, and work held until it commits.
//!
//! Lock order (`docs/architecture.md`): the store, then the book. The book
//! is taken for map operations only and never held across a call into the
//! store, the runner or the scheduler, so nothing waits on it for long.

use std::collections::HashMap;
use std::sync::MutexGuard;

use chrono::{DateTime, Utc};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::pending::{Pending, WorkKey};
use super::Engine;
use crate::agent::Transcript;
use crate::store::ChangeSeq;

#[derive(Default)]
pub(super) struct Book {
    /// Running attempts by route.
    pub runs: HashMap<u32, RunHandle>,
    /// Armed timers by route, with the generation they were armed at.
    pub armed: HashMap<u32, u32>,
    /// Last generation published per route.
    pub published: HashMap<u32, u32>,
    /// Routes last published (or found at open) archived: an archive mark
    /// moves no generation, so it is compared on its own.
    pub archived: std::collections::HashSet<u32>,
    /// Route changes up to this point have been looked at.
    pub seen_change: ChangeSeq,
    /// Timer firings and attempt reports not committed yet.
    pub pending: HashMap<WorkKey, Pending>,
    /// Limit marks already noticed, by id and when each was made.
    pub seen_marks: std::collections::HashSet<(u32, DateTime<Utc>)>,
}

pub(super) struct RunHandle {
    pub generation: u32,
    pub cancel: CancellationToken,
    pub task: JoinHandle<()>,
    /// The attempt's transcript as it grows.
    pub live: tokio::sync::watch::Receiver<Transcript>,
}

impl Engine {
    pub(super) fn book(&self) -> MutexGuard<'_, Book> {
        self.inner.book.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The one place a route's timer is armed: noted at the route's
    /// generation, then handed to the scheduler.
    pub(super) fn arm(&self, route_id: u32, generation: u32, at: DateTime<Utc>) {
        self.book().armed.insert(route_id, generation);
        let instant = self.inner.clock.instant_of(at);
        self.inner.scheduler.arm(route_id, generation, instant);
    }

    pub(super) fn disarm(&self, route_id: u32) {
        let was_armed = self.book().armed.remove(&route_id).is_some();
        if was_armed {
            self.inner.scheduler.disarm(route_id);
        }
    }

    /// Whether a timer of `route_id` is armed at `generation`.
    pub(super) fn armed_at(&self, route_id: u32, generation: u32) -> bool {
        self.book().armed.get(&route_id) == Some(&generation)
    }

    /// Cancels this engine's run of `route_id`, if it has one.
    pub(super) fn kill(&self, route_id: u32) {
        if let Some(run) = self.book().runs.get(&route_id) {
            run.cancel.cancel();
        }
    }

    /// What the agent of this engine's run of `route_id` has said and done
    /// so far, sanitized; `None` when this engine runs no attempt of it.
    pub fn live_transcript(&self, route_id: u32) -> Option<Transcript> {
        let live = self.book().runs.get(&route_id)?.live.clone();
        let transcript = live.borrow().clone();
        Some(transcript.sanitized())
    }

    /// The generation of this engine's run of `route_id`, if it has one.
    pub(super) fn run_at(&self, route_id: u32) -> Option<u32> {
        self.book().runs.get(&route_id).map(|r| r.generation)
    }
}
