//! Bursts: the timers that came due together, or the queued routes one
//! freed slot or answered probe releases, planned and committed in one
//! transaction (each route still its own compare-and-set), then their
//! effects — spawns, timers — and their events. One commit for a thousand
//! routes instead of a thousand (`docs/benchmarks-engine.md`), and what
//! is the same for all of them read once: the candidates as saved
//! ([`Saved`]) and the accounts' names their events speak of.

use std::cell::RefCell;

use tracing::{error, warn};

use super::accounts::{kept_changing, REPLANS};
use super::pending::WorkKey;
use super::saved::Saved;
use super::{Engine, EngineError};
use crate::route::machine::{self, Plan, World};
use crate::route::RouteRow;
use crate::store::{Batch, Cas, Store, StoreError};

/// The most routes one burst commits: it holds the store for its whole
/// transaction (a fraction of a millisecond a route), and publishes one
/// event per route into a channel of 1 024 its subscribers must keep up with.
pub(super) const BURST_MOST: usize = 256;

/// One burst's transaction, as its body sees it.
pub(super) struct Burst<'a> {
    engine: &'a Engine,
    batch: &'a Batch<'a>,
    won: RefCell<Vec<(Plan, RouteRow)>>,
    saved: Saved,
}

impl Burst<'_> {
    /// The store, read inside the transaction.
    pub(super) fn store(&self) -> &Store {
        self.batch.store()
    }

    /// `row` with its candidates' policies as saved, each candidate read
    /// once a burst.
    pub(super) fn policies(&self, row: RouteRow) -> Result<RouteRow, StoreError> {
        self.saved.policies(self.store(), row)
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
                Cas::WorldChanged(current) => row = self.policies(current)?,
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
    /// committed plan's effect and publishes their events, the accounts'
    /// names read once for all. Nothing of a body that fails is kept.
    pub(super) fn in_burst<T>(
        &self,
        body: impl FnOnce(&Burst<'_>) -> Result<T, EngineError>,
    ) -> Result<T, EngineError> {
        let mut store = self.store();
        let (out, won, saved) = store.in_one_transaction(|batch| {
            let burst = Burst {
                engine: self,
                batch,
                won: RefCell::new(Vec::new()),
                saved: Saved::default(),
            };
            let out = body(&burst)?;
            Ok::<_, EngineError>((out, burst.won.into_inner(), burst.saved))
        })?;
        let (plans, rows): (Vec<Plan>, Vec<RouteRow>) = won.into_iter().unzip();
        for (plan, row) in plans.iter().zip(&rows) {
            let probe = plan.write().probe().is_some();
            self.apply_effect(&store, &saved, row, plan.effect().clone(), probe);
        }
        drop(store);
        self.publish_all(&rows);
        for plan in &plans {
            self.after_commit(plan);
        }
        Ok(out)
    }

    /// Fires the held waits of `keys` (work someone else tries now is left
    /// to them) in bursts of at most [`BURST_MOST`]: one transaction
    /// commits every transition, then the spawns follow. A wait that
    /// cannot be planned (its accounts kept changing) is logged and let go,
    /// as one fired alone; when a burst cannot commit, its waits stay held
    /// for the retry task. While dispatches are paused they stay held, and
    /// resuming fires them.
    pub(super) fn fire_held(&self, keys: &[WorkKey]) {
        if self.is_paused() {
            return;
        }
        let claimed = self.claim(keys);
        for keys in claimed.chunks(BURST_MOST) {
            let fired = self.in_burst(|burst| {
                let mut failed = Vec::new();
                for &key in keys {
                    match self.fire_in(burst, key) {
                        Ok(()) => {}
                        Err(EngineError::Store(e)) => return Err(EngineError::Store(e)),
                        Err(e) => failed.push((key, e)),
                    }
                }
                Ok(failed)
            });
            match fired {
                Ok(failed) => {
                    let mut book = self.book();
                    for key in keys {
                        book.pending.remove(key);
                    }
                    for ((route, generation), e) in failed {
                        error!(
                            route,
                            generation, "recording the timer's transition failed: {e}"
                        );
                    }
                }
                Err(e) => {
                    self.unclaim(keys);
                    warn!(
                        timers = keys.len(),
                        "recording a burst of due timers failed; kept to retry: {e}"
                    );
                    self.inner.retry_wake.notify_one();
                }
            }
        }
    }

    /// The wait of route `route_id`, armed at `generation`, came due:
    /// planned and committed inside `burst` if the route is still at that
    /// generation and owned here (else there is nothing to do).
    pub(super) fn fire_in(
        &self,
        burst: &Burst<'_>,
        (route_id, generation): WorkKey,
    ) -> Result<(), EngineError> {
        let Some(row) = burst.store().route(route_id)? else {
            return Ok(());
        };
        if row.generation != generation
            || row.owner.as_deref() != Some(self.inner.instance.as_str())
        {
            return Ok(());
        }
        let row = burst.policies(row)?;
        burst
            .advance(row, |row, world| {
                machine::timer_fired(row, self.lease(), world, self.inner.clock.now())
            })
            .map(drop)
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

    /// An engine and `routes` routes started on one candidate playing
    /// `script` on account "shared", which runs two agents at a time;
    /// `retry` is its retry (count, first interval in seconds).
    async fn on_two_slots(
        dir: &tempfile::TempDir,
        script: Vec<SimStep>,
        retry: Option<(u32, u32)>,
        routes: usize,
    ) -> (Engine, Vec<u32>) {
        let opts = EngineOptions {
            seed_demo: false,
            adopt_orphans: false,
            ..EngineOptions::default()
        };
        let engine = Engine::open(&dir.path().join("r.db"), opts).await.unwrap();
        let mut agent = AgentSpec::simulated(script);
        agent.account = Some("shared".into());
        agent.max_concurrent = Some(2);
        let policy = CandidatePolicy::both(ClassPolicy::new(None, retry, Exhausted::Stop));
        let p = engine.create_profile("p").unwrap();
        let p = engine
            .save_candidates(
                p.id,
                p.revision,
                vec![CandidateInput::new("c", agent, policy)],
            )
            .unwrap();
        let mut ids = Vec::new();
        for _ in 0..routes {
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
        (engine, ids)
    }

    /// Waits until every route of `ids` is in `state`.
    async fn until_all(engine: &Engine, ids: &[u32], state: RouteState, within: Duration) {
        let start = Instant::now();
        while !ids
            .iter()
            .all(|id| engine.route_row(*id).unwrap().state == state)
        {
            assert!(start.elapsed() < within, "not all {state:?} in {within:?}");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Waits until every route of `ids` succeeded, each after `attempts`
    /// attempts, and checks that no more than the account's two ran at
    /// once: each burst planned its dispatches from the slots the ones
    /// before it took.
    async fn succeed_on_two_slots(engine: &Engine, ids: &[u32], attempts: usize) {
        until_all(engine, ids, RouteState::Succeeded, Duration::from_secs(20)).await;
        let (most, counts) = most_at_once(engine, ids);
        assert!(
            counts.iter().all(|n| *n == attempts),
            "{attempts} attempts each: {counts:?}"
        );
        assert!(most <= 2, "{most} ran at once on an account of two slots");
    }

    /// The most attempts of `ids` that ran at once, from their stored
    /// start and end; each route's attempt count.
    fn most_at_once(engine: &Engine, ids: &[u32]) -> (i32, Vec<usize>) {
        let mut edges = Vec::new();
        let mut counts = Vec::new();
        for id in ids {
            let attempts = engine.route_detail(*id).unwrap().attempts;
            counts.push(attempts.len());
            for a in attempts {
                edges.push((a.started_at, 1));
                edges.push((a.finished_at.unwrap(), -1));
            }
        }
        // An end at the same instant as a start comes first.
        edges.sort();
        let (mut open, mut most) = (0, 0);
        for (_, step) in edges {
            open += step;
            most = most.max(open);
        }
        (most, counts)
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn queued_routes_released_in_bursts_never_take_more_slots_than_free() {
        let dir = tempfile::tempdir().unwrap();
        let script = vec![SimStep::Succeed { after_ms: 100 }];
        let (engine, ids) = on_two_slots(&dir, script, None, 7).await;
        // Each dispatched exactly once.
        succeed_on_two_slots(&engine, &ids, 1).await;
        engine.shutdown().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn waits_due_at_once_fire_in_one_burst_that_counts_the_slots_it_takes() {
        let dir = tempfile::tempdir().unwrap();
        let script = vec![
            SimStep::Overloaded { after_ms: 10 },
            SimStep::Succeed { after_ms: 200 },
        ];
        let (engine, ids) = on_two_slots(&dir, script, Some((1, 3)), 5).await;
        until_all(
            &engine,
            &ids,
            RouteState::RetryScheduled,
            Duration::from_millis(2500),
        )
        .await;
        // Every retry (3 s after its failure) comes due while
        // dispatches are paused, so resuming fires all five together.
        engine.set_paused(true);
        tokio::time::sleep(Duration::from_millis(3500)).await;
        let held = engine.book().pending.len();
        assert_eq!(held, ids.len(), "every retry came due and is held");
        engine.set_paused(false);
        // Each failed once and was retried exactly once.
        succeed_on_two_slots(&engine, &ids, 2).await;
        engine.until_nothing_held(Duration::from_secs(5)).await;
        engine.shutdown().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_burst_names_the_account_in_each_route_s_event_reading_names_and_candidates_once() {
        let dir = tempfile::tempdir().unwrap();
        let opts = EngineOptions {
            seed_demo: false,
            adopt_orphans: false,
            ..EngineOptions::default()
        };
        let engine = Engine::open(&dir.path().join("r.db"), opts).await.unwrap();
        // No label: the account is derived (from the simulated script) and
        // named in words read from the saved candidates, never its id.
        let script = vec![
            SimStep::UsageLimit {
                after_ms: 10,
                resets_in_s: 2,
            },
            SimStep::Succeed { after_ms: 5_000 },
        ];
        let agent = AgentSpec::simulated(script);
        let policy = CandidatePolicy::both(ClassPolicy::new(Some(3600), None, Exhausted::Stop));
        let p = engine.create_profile("p").unwrap();
        let p = engine
            .save_candidates(
                p.id,
                p.revision,
                vec![CandidateInput::new("c", agent, policy)],
            )
            .unwrap();
        let run = || StartRun {
            profile_id: p.id,
            prompt: "go".into(),
            cwd: None,
        };
        let mut ids = vec![engine.start_run(run()).await.unwrap().id];
        let within = Duration::from_secs(5);
        until_all(&engine, &ids, RouteState::WaitingReset, within).await;
        // Held by the limit the first hit, without an attempt.
        for _ in 0..4 {
            ids.push(engine.start_run(run()).await.unwrap().id);
        }
        until_all(&engine, &ids, RouteState::WaitingReset, within).await;
        let accounts = engine.accounts().unwrap().accounts;
        let name = accounts.iter().find(|a| !a.labelled).unwrap().name.clone();
        // Every wait comes due while paused: resuming fires all five in
        // one burst, the first probing, the others queued behind it.
        engine.set_paused(true);
        let reset = engine.route_row(ids[0]).unwrap().deadline.unwrap();
        let until_reset = (reset - chrono::Utc::now()).to_std().unwrap_or_default();
        tokio::time::sleep(until_reset + Duration::from_millis(800)).await;
        assert_eq!(engine.book().pending.len(), ids.len(), "every wait is held");
        let mut events = engine.subscribe();
        let reads_before = {
            let store = engine.store();
            (store.account_candidates_reads(), store.candidate_reads())
        };
        engine.set_paused(false);
        let (names_read, candidates_read) = {
            let store = engine.store();
            (
                store.account_candidates_reads() - reads_before.0,
                store.candidate_reads() - reads_before.1,
            )
        };
        let mut seen = std::collections::BTreeMap::new();
        while seen.len() < ids.len() {
            let event = tokio::time::timeout(within, events.recv())
                .await
                .expect("every route of the burst is published")
                .unwrap();
            seen.entry(event.route_id).or_insert(event.snapshot);
        }
        let queued: Vec<_> = seen
            .values()
            .filter(|s| s.state == RouteState::Queued)
            .collect();
        assert_eq!(queued.len(), ids.len() - 1, "one probes, the rest queue");
        for s in queued {
            let said = s.queued.as_deref().unwrap();
            assert!(
                said.contains(&format!("the limit of {name} has reset")),
                "route {}'s queue names its account: {said}",
                s.id
            );
            if s.id == ids[0] {
                // Its own failure's decision, which names no account.
                continue;
            }
            let decided = s.last_failure.as_ref().and_then(|f| f.decision.as_deref());
            assert!(
                decided.is_some_and(|d| d.starts_with(&format!("not dispatched: {name} limited"))),
                "route {}'s hold names its account: {decided:?}",
                s.id
            );
        }
        assert_eq!(
            names_read,
            1,
            "the names are read once for the burst's {} events, not once each",
            ids.len()
        );
        // The release pass the probe's dispatch asks for may have run
        // before this count: once more, for its own burst.
        assert!(
            candidates_read <= 2,
            "the routes' one candidate is read once for the burst's plans, not once a \
             route: read {candidates_read} times"
        );
        engine.shutdown().await;
    }
}
