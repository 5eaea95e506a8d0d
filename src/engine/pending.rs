//! Work that must reach the database before it is done with: a timer that
//! came due and an attempt's report. Each is kept in memory from the
//! moment it happens until its transition commits (or the route moved on),
//! so a write lock another process holds for longer than the busy timeout
//! delays it instead of losing it. A failed commit is retried with backoff
//! for about a minute, then on every lease heartbeat; the heartbeat also
//! fires any overdue wait of this engine that nothing is handling and
//! reconciles a `running` route of this engine with no attempt behind it.

use std::time::Duration;

use tokio_util::sync::CancellationToken;
use tracing::{debug, error, warn};

use super::{Engine, EngineError};
use crate::route::machine;
use crate::route::{AttemptRecord, Interruption, RouteState};
use crate::runner::Ran;
use crate::scheduler::Fired;

/// Delays between retries of work whose commit failed: about a minute in
/// all, after which it is retried on each lease heartbeat.
const BACKOFF: [Duration; 9] = [
    Duration::from_millis(250),
    Duration::from_millis(500),
    Duration::from_secs(1),
    Duration::from_secs(2),
    Duration::from_secs(4),
    Duration::from_secs(8),
    Duration::from_secs(15),
    Duration::from_secs(15),
    Duration::from_secs(15),
];

/// `(route id, generation)`: the generation the route was at when the work
/// happened (the waiting one for a timer, the attempt's for a report).
pub(super) type WorkKey = (u32, u32);

/// What is still to be committed.
#[derive(Debug, Clone)]
pub(super) enum Work {
    /// The route's wait came due.
    Timer,
    /// The route's attempt ended, in the zone its agent ran in.
    Report(Box<(AttemptRecord, Ran, chrono_tz::Tz)>),
}

#[derive(Debug)]
pub(super) struct Pending {
    work: Work,
    /// Being tried right now (by the task that met it, the retry task or
    /// the heartbeat); nobody else tries it meanwhile.
    in_flight: bool,
}

impl Pending {
    pub(super) fn work(&self) -> &Work {
        &self.work
    }
}

impl Engine {
    /// Keeps `work` until it is committed. Call it before the work stops
    /// being tracked elsewhere (the armed timer, the run handle), so the
    /// heartbeat never sees the route as forgotten.
    pub(super) fn hold(&self, key: WorkKey, work: Work) {
        self.book().pending.entry(key).or_insert(Pending {
            work,
            in_flight: false,
        });
    }

    /// Waits that came due together; each firing is held until its
    /// transition commits, and they are fired in bursts
    /// ([`Engine::fire_held`]).
    pub(super) fn on_timers(&self, fired: &[Fired]) {
        let mut keys = Vec::with_capacity(fired.len());
        for f in fired {
            let key = (f.key, f.generation);
            self.hold(key, Work::Timer);
            let mut book = self.book();
            if book.armed.get(&f.key) == Some(&f.generation) {
                book.armed.remove(&f.key);
            }
            keys.push(key);
        }
        self.fire_held(&keys);
    }

    /// Marks the held work of `keys` as being tried, leaving out work that
    /// is gone or that someone else is trying now; the keys it marked.
    pub(super) fn claim(&self, keys: &[WorkKey]) -> Vec<WorkKey> {
        let mut book = self.book();
        keys.iter()
            .copied()
            .filter(|key| match book.pending.get_mut(key) {
                Some(p) if !p.in_flight => {
                    p.in_flight = true;
                    true
                }
                _ => false,
            })
            .collect()
    }

    /// Held work of `keys` nobody tries any more: it stays held, and the
    /// retry task takes it.
    pub(super) fn unclaim(&self, keys: &[WorkKey]) {
        let mut book = self.book();
        for key in keys {
            if let Some(p) = book.pending.get_mut(key) {
                p.in_flight = false;
            }
        }
    }

    /// Tries held work now; if it cannot be committed it stays held and the
    /// retry task takes it.
    pub(super) fn perform(&self, key: WorkKey) {
        if !self.drive(key) {
            self.inner.retry_wake.notify_one();
        }
    }

    /// Tries the held work of `key` once unless someone is trying it now.
    /// `true` when it is done with: committed, no longer needed (the route
    /// moved on), or failed for a reason a retry cannot mend.
    fn drive(&self, key: WorkKey) -> bool {
        let work = {
            let mut book = self.book();
            match book.pending.get_mut(&key) {
                // Paused: a due wait stays held; resuming performs it.
                Some(p) if matches!(p.work, Work::Timer) && self.is_paused() => return true,
                Some(p) if !p.in_flight => {
                    p.in_flight = true;
                    p.work.clone()
                }
                Some(_) => return false,
                None => return true,
            }
        };
        let (route_id, generation) = key;
        let result = match &work {
            Work::Timer => self.in_burst(|burst| self.fire_in(burst, key)),
            Work::Report(r) => self.handle_report(route_id, &r.0, r.1.clone(), r.2),
        };
        let what = match work {
            Work::Timer => "the timer's transition",
            Work::Report(_) => "the attempt's report",
        };
        let mut book = self.book();
        match result {
            Ok(()) => {
                book.pending.remove(&key);
                true
            }
            Err(EngineError::Store(e)) => {
                drop(book);
                self.unclaim(&[key]);
                warn!(
                    route = route_id,
                    generation, "recording {what} failed; kept to retry: {e}"
                );
                false
            }
            Err(e) => {
                book.pending.remove(&key);
                error!(route = route_id, generation, "recording {what} failed: {e}");
                true
            }
        }
    }

    /// Tries every held work nobody is trying; `true` when none is left.
    pub(super) fn retry_pending(&self) -> bool {
        let keys: Vec<WorkKey> = self
            .book()
            .pending
            .iter()
            .filter(|(_, p)| !p.in_flight)
            .map(|(k, _)| *k)
            .collect();
        for key in keys {
            self.drive(key);
        }
        let paused = self.is_paused();
        self.book()
            .pending
            .values()
            .all(|p| paused && matches!(p.work, Work::Timer))
    }

    /// On a lease heartbeat: every active route this engine owns is being
    /// handled. An overdue wait with no armed timer and no held work fires;
    /// a future one is armed again; a `running` route with no attempt task
    /// and no held report (both gone) goes to manual recovery, not replayed;
    /// queued routes get their turn.
    pub(super) fn check_overdue(&self) -> Result<(), EngineError> {
        if self
            .inner
            .shutting_down
            .load(std::sync::atomic::Ordering::SeqCst)
        {
            // Shutdown drains the run handles before their reports come.
            return Ok(());
        }
        let rows = self.store().active_routes_owned_by(&self.inner.instance)?;
        let now = self.inner.clock.now();
        if rows.iter().any(|r| r.state == RouteState::Queued) {
            self.kick_release();
        }
        for row in rows {
            let key = (row.id, row.generation);
            if self.book().pending.contains_key(&key) {
                continue;
            }
            match row.state {
                RouteState::WaitingReset | RouteState::RetryScheduled => {
                    if self.armed_at(row.id, row.generation) {
                        continue;
                    }
                    let Some(deadline) = row.deadline else {
                        continue;
                    };
                    if deadline <= now {
                        debug!(route = row.id, "overdue wait fired by the heartbeat");
                        self.hold(key, Work::Timer);
                        self.perform(key);
                    } else {
                        self.arm(row.id, row.generation, deadline);
                    }
                }
                RouteState::Running => {
                    if self.run_at(row.id) == Some(row.generation) {
                        continue;
                    }
                    let row = self.route_row(row.id)?;
                    if row.generation != key.1 {
                        continue;
                    }
                    warn!(route = row.id, "running route has no attempt behind it");
                    if let Some(plan) =
                        machine::interrupted(&row, Interruption::EngineLostTrack, now)
                    {
                        self.commit(plan)?;
                    }
                }
                RouteState::Queued
                | RouteState::NeedsManual
                | RouteState::Stopped
                | RouteState::Succeeded => {}
            }
        }
        Ok(())
    }
}

/// Retries held work with [`BACKOFF`] whenever some is left over, until
/// `stop`.
pub(super) async fn retry_loop(engine: Engine, stop: CancellationToken) {
    loop {
        tokio::select! {
            () = stop.cancelled() => return,
            () = engine.inner.retry_wake.notified() => {}
        }
        for delay in BACKOFF {
            tokio::select! {
                () = stop.cancelled() => return,
                () = tokio::time::sleep(delay) => {}
            }
            // A commit may wait out the busy timeout: off the async workers.
            let e = engine.clone();
            match tokio::task::spawn_blocking(move || e.retry_pending()).await {
                Ok(true) => break,
                Ok(false) => {}
                Err(e) => {
                    error!("retrying held work failed: {e}");
                    break;
                }
            }
        }
    }
}

#[cfg(test)]
impl Engine {
    /// Waits until no work is held: a report is let go just after its
    /// commit, which another thread may see first.
    pub(super) async fn until_nothing_held(&self, within: Duration) {
        let start = std::time::Instant::now();
        while !self.book().pending.is_empty() {
            assert!(start.elapsed() < within, "work still held after {within:?}");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::*;
    use crate::agent::{AgentSpec, SimStep};
    use crate::engine::{EngineOptions, RouteSnapshot, StartRun};
    use crate::policy::{CandidatePolicy, ClassPolicy, Exhausted};
    use crate::profile::CandidateInput;

    /// A lease of 3 s: the heartbeat checks this engine's routes every second.
    async fn engine(dir: &tempfile::TempDir, script: Vec<SimStep>) -> (Engine, u32) {
        let opts = EngineOptions {
            seed_demo: false,
            adopt_orphans: false,
            lease: Duration::from_secs(3),
        };
        let engine = Engine::open(&dir.path().join("r.db"), opts).await.unwrap();
        let policy = CandidatePolicy::both(ClassPolicy::new(None, Some((1, 1)), Exhausted::Stop));
        let p = engine.create_profile("p").unwrap();
        let candidate = CandidateInput::new("sim", AgentSpec::simulated(script), policy);
        let p = engine
            .save_candidates(p.id, p.revision, vec![candidate])
            .unwrap();
        (engine, p.id)
    }

    async fn until(engine: &Engine, id: u32, state: RouteState, within: Duration) {
        let start = Instant::now();
        loop {
            let row = engine.route_row(id).unwrap();
            if row.state == state {
                return;
            }
            assert!(
                start.elapsed() < within,
                "route {id} {} within {within:?}, is {}",
                state.as_str(),
                row.state.as_str()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// A route whose first attempt failed with a 529 and whose one retry
    /// (which succeeds) is scheduled.
    async fn retry_scheduled(dir: &tempfile::TempDir) -> (Engine, RouteSnapshot) {
        let (engine, profile_id) = engine(
            dir,
            vec![
                SimStep::Overloaded { after_ms: 10 },
                SimStep::Succeed { after_ms: 10 },
            ],
        )
        .await;
        let s = engine
            .start_run(StartRun {
                profile_id,
                prompt: "go".into(),
                cwd: None,
            })
            .await
            .unwrap();
        until(
            &engine,
            s.id,
            RouteState::RetryScheduled,
            Duration::from_secs(5),
        )
        .await;
        (engine, s)
    }

    #[tokio::test]
    async fn the_heartbeat_fires_an_overdue_wait_whose_timer_was_lost() {
        let dir = tempfile::tempdir().unwrap();
        let (engine, s) = retry_scheduled(&dir).await;
        // The timer is gone as if its firing had been lost.
        engine.disarm(s.id);
        until(&engine, s.id, RouteState::Succeeded, Duration::from_secs(5)).await;
        assert_eq!(engine.route_row(s.id).unwrap().attempts, 2, "retried once");
        engine.shutdown().await;
    }

    #[tokio::test]
    async fn held_work_the_backoff_gave_up_on_is_retried_by_the_heartbeat() {
        let dir = tempfile::tempdir().unwrap();
        let (engine, s) = retry_scheduled(&dir).await;
        // As if its commit had failed for a minute: the timer is gone, the
        // firing is held, and the retry task has stopped trying.
        let generation = engine.route_row(s.id).unwrap().generation;
        engine.disarm(s.id);
        engine.hold((s.id, generation), Work::Timer);
        until(&engine, s.id, RouteState::Succeeded, Duration::from_secs(5)).await;
        engine.until_nothing_held(Duration::from_secs(5)).await;
        assert_eq!(engine.route_row(s.id).unwrap().attempts, 2, "fired once");
        engine.shutdown().await;
    }

    #[tokio::test]
    async fn the_heartbeat_sends_a_running_route_with_no_attempt_to_manual_recovery() {
        let dir = tempfile::tempdir().unwrap();
        let (engine, profile_id) = engine(&dir, vec![SimStep::Succeed { after_ms: 10 }]).await;
        let profile = engine.get_profile(profile_id).unwrap();
        let now = engine.inner.clock.now();
        // Owned by this engine and `running`, but no attempt task and no
        // held report: its report was lost.
        let row = {
            let mut store = engine.store();
            let world = Default::default();
            let new =
                machine::start(&profile, "go".into(), None, engine.lease(), world, now).unwrap();
            let first =
                |row: &crate::route::RouteRow| machine::released(row, engine.lease(), world, now);
            match store.create_route(&new, first).unwrap() {
                crate::store::Cas::Won(row) => row,
                other => panic!("nothing else writes: {other:?}"),
            }
        };
        until(
            &engine,
            row.id,
            RouteState::NeedsManual,
            Duration::from_secs(5),
        )
        .await;
        let reason = engine
            .route_row(row.id)
            .unwrap()
            .manual_reason
            .clone()
            .unwrap();
        let reason = reason.text();
        assert!(
            reason.starts_with("attempt 1 was still running when its engine lost track of it"),
            "{reason}"
        );
        assert_eq!(
            engine.route_row(row.id).unwrap().attempts,
            1,
            "not replayed"
        );
        engine.shutdown().await;
    }
}
