//! Bursts: the timers that came due together, or the queued routes one
//! freed slot or answered probe releases, planned and committed in one
//! transaction (each route still its own compare-and-set), then their
//! effects — spawns, timers — and their events. One commit for a thousand
//! routes instead of a thousand: under a burst the queue behind the store
//! was the lateness (`docs/benchmarks-engine.md`).

use std::cell::RefCell;

use tracing::{error, warn};

use super::accounts::REPLANS;
use super::flow::current_policies;
use super::pending::{Work, WorkKey};
use super::{Engine, EngineError};
use crate::route::machine::{self, Plan, World};
use crate::route::RouteRow;
use crate::scheduler::Fired;
use crate::store::{Batch, Cas, Store};

/// One burst's transaction, as its body sees it.
pub(super) struct Burst<'a> {
    engine: &'a Engine,
    batch: &'a Batch<'a>,
    won: RefCell<Vec<(Plan, RouteRow)>>,
}

impl Burst<'_> {
    /// The store, read inside the transaction.
    pub(super) fn store(&self) -> &Store {
        self.batch.store()
    }

    /// [`Engine::advance`] inside the burst: plans `step` for `row` in its
    /// world as the burst left it and commits it; its effect and event
    /// follow the burst's commit.
    pub(super) fn advance(
        &self,
        mut row: RouteRow,
        step: impl Fn(&RouteRow, World<'_>) -> Option<Plan>,
    ) -> Result<Option<Cas>, EngineError> {
        for _ in 0..REPLANS {
            let since = row.queued.as_ref().map(|q| q.since);
            let facts = self
                .engine
                .facts_in(self.store(), row.id, &row.candidates, since)?;
            let Some(plan) = step(&row, facts.world()) else {
                return Ok(None);
            };
            match self.batch.commit_transition(&plan)? {
                Cas::WorldChanged(current) => row = current_policies(self.store(), current)?,
                Cas::Won(stored) => {
                    self.won.borrow_mut().push((plan, stored.clone()));
                    return Ok(Some(Cas::Won(stored)));
                }
                lost => return Ok(Some(lost)),
            }
        }
        Err(EngineError::Conflict(format!(
            "route {}: the limits of its accounts kept changing while it was being dispatched; \
             it is left as it was",
            row.id
        )))
    }
}

impl Engine {
    /// Runs `body` in one transaction; once it committed, performs every
    /// committed plan's effect and publishes its event. Nothing of a body
    /// that fails is kept.
    pub(super) fn in_burst<T>(
        &self,
        body: impl FnOnce(&Burst<'_>) -> Result<T, EngineError>,
    ) -> Result<T, EngineError> {
        let mut store = self.store();
        let (out, won) = store.in_one_transaction(|batch| {
            let burst = Burst {
                engine: self,
                batch,
                won: RefCell::new(Vec::new()),
            };
            let out = body(&burst)?;
            Ok::<_, EngineError>((out, burst.won.into_inner()))
        })?;
        for (plan, row) in &won {
            let probe = plan.write().probe().is_some();
            self.apply_effect(&store, row, plan.effect().clone(), probe);
        }
        drop(store);
        for (plan, row) in &won {
            self.publish(row);
            self.after_commit(plan);
        }
        Ok(out)
    }

    /// Timers that came due together: held like any firing, then fired in
    /// one burst. When the burst cannot commit, they stay held for the
    /// retry task, which fires them one by one.
    pub(super) fn on_timers(&self, fired: &[Fired]) {
        let keys: Vec<WorkKey> = fired.iter().map(|f| (f.key, f.generation)).collect();
        for f in fired {
            self.hold((f.key, f.generation), Work::Timer);
            let mut book = self.book();
            if book.armed.get(&f.key) == Some(&f.generation) {
                book.armed.remove(&f.key);
            }
        }
        if self.is_paused() {
            // Held; resuming performs them.
            return;
        }
        let claimed = self.claim(&keys);
        let result = self.fire_many(&claimed);
        let mut book = self.book();
        match result {
            Ok(()) => {
                for key in &claimed {
                    book.pending.remove(key);
                }
            }
            Err(EngineError::Store(e)) => {
                for key in &claimed {
                    if let Some(p) = book.pending.get_mut(key) {
                        p.release();
                    }
                }
                drop(book);
                warn!(
                    timers = claimed.len(),
                    "recording a burst of timers failed; kept to retry: {e}"
                );
                self.inner.retry_wake.notify_one();
            }
            Err(e) => {
                for key in &claimed {
                    book.pending.remove(key);
                }
                error!(
                    timers = claimed.len(),
                    "recording a burst of timers failed: {e}"
                );
            }
        }
    }

    /// Fires the waits of `keys` in one burst: each that is still at its
    /// generation and owned here is planned as [`Engine::fire`] plans one.
    fn fire_many(&self, keys: &[WorkKey]) -> Result<(), EngineError> {
        if keys.is_empty() {
            return Ok(());
        }
        self.in_burst(|burst| {
            for &(route_id, generation) in keys {
                let Some(row) = burst.store().route(route_id)? else {
                    warn!(
                        route = route_id,
                        "a timer came due for a route that is gone"
                    );
                    continue;
                };
                if row.generation != generation
                    || row.owner.as_deref() != Some(self.inner.instance.as_str())
                {
                    continue;
                }
                let row = current_policies(burst.store(), row)?;
                burst.advance(row, |row, world| {
                    machine::timer_fired(row, self.lease(), world, self.inner.clock.now())
                })?;
            }
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::*;
    use crate::agent::{AgentSpec, SimStep};
    use crate::engine::{EngineOptions, StartRun};
    use crate::policy::{CandidatePolicy, ClassPolicy, Exhausted};
    use crate::profile::CandidateInput;
    use crate::route::RouteState;

    /// Five routes on one account that runs two agents at a time, each
    /// with its one retry of a 529 scheduled 60 s ahead.
    async fn five_waiting(dir: &tempfile::TempDir) -> (Engine, Vec<u32>) {
        let opts = EngineOptions {
            seed_demo: false,
            adopt_orphans: false,
            ..EngineOptions::default()
        };
        let engine = Engine::open(&dir.path().join("r.db"), opts).await.unwrap();
        let mut agent = AgentSpec::simulated(vec![
            SimStep::Overloaded { after_ms: 1 },
            SimStep::Succeed { after_ms: 200 },
        ]);
        agent.account = Some("shared".into());
        agent.max_concurrent = Some(2);
        let policy = CandidatePolicy::both(ClassPolicy::new(None, Some((1, 60)), Exhausted::Stop));
        let p = engine.create_profile("p").unwrap();
        let p = engine
            .save_candidates(
                p.id,
                p.revision,
                vec![CandidateInput::new("c", agent, policy)],
            )
            .unwrap();
        let mut ids = Vec::new();
        for _ in 0..5 {
            let s = engine
                .start_run(StartRun {
                    profile_id: p.id,
                    prompt: "go".into(),
                    cwd: None,
                })
                .await
                .unwrap();
            ids.push(s.id);
        }
        until(&engine, &ids, |s| s == RouteState::RetryScheduled).await;
        (engine, ids)
    }

    async fn until(engine: &Engine, ids: &[u32], done: impl Fn(RouteState) -> bool) {
        let start = Instant::now();
        while !ids
            .iter()
            .all(|id| done(engine.route_row(*id).unwrap().state))
        {
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "not there in 10 s"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn timers_due_together_commit_in_one_burst_that_counts_the_slots_it_takes() {
        let dir = tempfile::tempdir().unwrap();
        let (engine, ids) = five_waiting(&dir).await;
        let fired: Vec<Fired> = ids
            .iter()
            .map(|&id| {
                engine.disarm(id);
                Fired {
                    key: id,
                    generation: engine.route_row(id).unwrap().generation,
                }
            })
            .collect();
        let e = engine.clone();
        let due = fired.clone();
        tokio::task::spawn_blocking(move || e.on_timers(&due))
            .await
            .unwrap();
        // Read as the burst left them, before any agent could end.
        let states: Vec<RouteState> = ids
            .iter()
            .map(|id| engine.route_row(*id).unwrap().state)
            .collect();
        let running = states.iter().filter(|s| **s == RouteState::Running).count();
        let queued = states.iter().filter(|s| **s == RouteState::Queued).count();
        assert_eq!(
            (running, queued),
            (2, 3),
            "one burst, yet each dispatch saw the slots the ones before it took: {states:?}"
        );
        assert!(engine.book().pending.is_empty(), "every firing done with");
        // Fired again (a duplicate from the scheduler): the generation moved, nothing happens.
        let e = engine.clone();
        tokio::task::spawn_blocking(move || e.on_timers(&fired))
            .await
            .unwrap();
        until(&engine, &ids, |s| s == RouteState::Succeeded).await;
        for id in &ids {
            assert_eq!(
                engine.route_row(*id).unwrap().attempts,
                2,
                "route {id}: the failure and one retry, never a second dispatch"
            );
        }
        engine.shutdown().await;
    }
}
