//! Bursts: the queued routes one freed slot or answered probe releases,
//! planned and committed in one transaction (each route still its own
//! compare-and-set), then their effects — spawns, timers — and their
//! events. One commit for a thousand routes instead of a thousand
//! (`docs/benchmarks-engine.md`).

use std::cell::RefCell;

use super::accounts::{kept_changing, REPLANS};
use super::flow::current_policies;
use super::{Engine, EngineError};
use crate::route::machine::{Plan, World};
use crate::route::RouteRow;
use crate::store::{Batch, Cas, Store};

/// The most routes one burst commits: it holds the store for its whole
/// transaction (a fraction of a millisecond a route), and publishes one
/// event per route into a channel of 1 024 its subscribers must keep up with.
pub(super) const BURST_MOST: usize = 256;

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
        Err(kept_changing(row.id))
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

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn queued_routes_released_in_bursts_never_take_more_slots_than_free() {
        let dir = tempfile::tempdir().unwrap();
        let opts = EngineOptions {
            seed_demo: false,
            adopt_orphans: false,
            ..EngineOptions::default()
        };
        let engine = Engine::open(&dir.path().join("r.db"), opts).await.unwrap();
        let mut agent = AgentSpec::simulated(vec![SimStep::Succeed { after_ms: 100 }]);
        agent.account = Some("shared".into());
        agent.max_concurrent = Some(2);
        let policy = CandidatePolicy::both(ClassPolicy::new(None, None, Exhausted::Stop));
        let p = engine.create_profile("p").unwrap();
        let p = engine
            .save_candidates(
                p.id,
                p.revision,
                vec![CandidateInput::new("c", agent, policy)],
            )
            .unwrap();
        let mut ids = Vec::new();
        for _ in 0..7 {
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
        let start = Instant::now();
        while !ids
            .iter()
            .all(|id| engine.route_row(*id).unwrap().state == RouteState::Succeeded)
        {
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "not done in 20 s"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let mut edges = Vec::new();
        for id in &ids {
            let attempts = engine.route_detail(*id).unwrap().attempts;
            assert_eq!(attempts.len(), 1, "route {id}: dispatched exactly once");
            edges.push((attempts[0].started_at, 1));
            edges.push((attempts[0].finished_at.unwrap(), -1));
        }
        // An end at the same instant as a start comes first.
        edges.sort();
        let (mut open, mut most) = (0, 0);
        for (_, step) in edges {
            open += step;
            most = most.max(open);
        }
        assert!(
            most <= 2,
            "each burst saw the slots the dispatches before it took: {most} ran at once"
        );
        engine.shutdown().await;
    }
}
