//! Accounts in the running engine: the world a dispatch is planned in (the
//! limit marks of the route's accounts, their probes, the free slots), the
//! loop that plans again when that world moved under a plan, the queue's
//! release, the probe's first answer, and each candidate's account.
//!
//! The machine decides from what it is told ([`crate::route::machine::World`]);
//! here it is read from the store, whose commit refuses a plan made from
//! marks or slots that changed meanwhile, in this process or another.

use std::collections::BTreeSet;

use super::ownership::owner_gone;
use super::{Engine, EngineError};
use crate::account::{self, AccountId, AccountState};
use crate::profile::{Candidate, CandidateInput};
use crate::route::machine::{Plan, World};
use crate::route::{RouteRow, RouteState};
use crate::store::Cas;

/// How often a plan is made again when the world keeps moving under it
/// (other processes marking and dispatching on the same accounts).
pub(super) const REPLANS: usize = 16;

/// What a route's dispatch is planned from, owned; [`Facts::world`] lends
/// it to the machine.
pub(super) struct Facts {
    paused: bool,
    accounts: Vec<AccountState>,
    global_full: bool,
    stamp: u64,
}

impl Facts {
    pub(super) fn world(&self) -> World<'_> {
        World {
            paused: self.paused,
            accounts: &self.accounts,
            global_full: self.global_full,
            stamp: self.stamp,
        }
    }
}

impl Engine {
    /// The world of route `route_id` with `candidates`, queued since
    /// `queued_since` (if it is queued): the marks of every account a
    /// dispatch of it may go to, whether their probes are alive, and which
    /// slots are free for it.
    pub(super) fn facts(
        &self,
        route_id: u32,
        candidates: &[Candidate],
        queued_since: Option<chrono::DateTime<chrono::Utc>>,
    ) -> Result<Facts, EngineError> {
        self.facts_in(&self.store(), route_id, candidates, queued_since)
    }

    /// [`Engine::facts`] read from `store` (a batch's, say).
    pub(super) fn facts_in(
        &self,
        store: &crate::store::Store,
        route_id: u32,
        candidates: &[Candidate],
        queued_since: Option<chrono::DateTime<chrono::Utc>>,
    ) -> Result<Facts, EngineError> {
        let ids: BTreeSet<&AccountId> = candidates
            .iter()
            .filter_map(|c| c.account.as_ref())
            .collect();
        let ids: Vec<&AccountId> = ids.into_iter().collect();
        let now = self.inner.clock.now();
        let alive = |owner: Option<&str>, lease| !owner_gone(owner, lease, now);
        let facts = store.dispatch_facts(route_id, &ids, queued_since, &alive)?;
        Ok(Facts {
            paused: self.is_paused(),
            accounts: facts.accounts,
            global_full: facts.global_full,
            stamp: facts.stamp,
        })
    }

    /// Plans `step` for `row` in its world and commits it; when the world
    /// moved under the plan (a mark written, a slot taken), plans again
    /// from the route as it is now. `None`: the step planned nothing.
    pub(super) fn advance(
        &self,
        mut row: RouteRow,
        step: impl Fn(&RouteRow, World<'_>) -> Option<Plan>,
    ) -> Result<Option<Cas>, EngineError> {
        for _ in 0..REPLANS {
            let since = row.queued.as_ref().map(|q| q.since);
            let facts = self.facts(row.id, &row.candidates, since)?;
            let Some(plan) = step(&row, facts.world()) else {
                return Ok(None);
            };
            match self.commit(plan)? {
                Cas::WorldChanged(current) => row = self.with_current_policies(current)?,
                done => return Ok(Some(done)),
            }
        }
        Err(kept_changing(row.id))
    }

    /// Gives queued routes of this engine their turn, first queued first,
    /// as far as slots allow. A route that stays queued blocks the routes
    /// behind it on its account; one held by the global maximum ends the
    /// pass (a slot freed later starts a new one).
    pub(super) fn release_queued(&self) -> Result<(), EngineError> {
        if self.is_paused() || self.is_shutting_down() {
            return Ok(());
        }
        let rows = self.store().queued_routes_owned_by(&self.inner.instance)?;
        if rows.is_empty() {
            return Ok(());
        }
        // In bursts: a probe's answer may release a thousand routes.
        let mut blocked: BTreeSet<AccountId> = BTreeSet::new();
        for rows in rows.chunks(super::burst::BURST_MOST) {
            let ended = self.in_burst(|burst| {
                for row in rows {
                    let row = burst.policies(row.clone())?;
                    if row.account().is_some_and(|a| blocked.contains(a)) {
                        continue;
                    }
                    let id = row.id;
                    let account = row.account().cloned();
                    let outcome = burst.advance(row, |row, world| {
                        crate::route::machine::released(
                            row,
                            self.lease(),
                            world,
                            self.inner.clock.now(),
                        )
                    })?;
                    let stays = match outcome {
                        None => true,
                        Some(Cas::Won(now)) => now.state == RouteState::Queued,
                        Some(Cas::Lost(_) | Cas::WorldChanged(_)) => false,
                    };
                    if !stays {
                        continue;
                    }
                    let global = burst
                        .store()
                        .route(id)?
                        .and_then(|r| r.queued.clone())
                        .is_some_and(|q| matches!(q.reason, crate::route::QueueReason::GlobalFull));
                    if global {
                        return Ok(true);
                    }
                    blocked.extend(account);
                }
                Ok(false)
            })?;
            if ended {
                break;
            }
        }
        Ok(())
    }

    /// Asks the release task to give queued routes their turn: a slot may
    /// have freed, or a mark changed.
    pub(super) fn kick_release(&self) {
        self.inner.release_wake.notify_one();
    }

    /// After `plan` committed: a plan that ends or moves a running attempt,
    /// or touches the limit marks, may free a slot, so queued routes get
    /// their turn; a new mark is noticed (one notification per mark).
    pub(super) fn after_commit(&self, plan: &Plan) {
        let write = plan.write();
        if plan.expected_state() == RouteState::Running || write.probe_end().is_some() {
            self.kick_release();
        }
        if write.mark().is_some() {
            self.notice_marks();
        }
    }

    /// Told when the probe route `route_id` runs at `generation` first
    /// answers (any assistant output).
    pub(super) fn probe_listener(
        &self,
        route_id: u32,
        generation: u32,
    ) -> tokio::sync::mpsc::UnboundedSender<()> {
        let (answered, mut first) = tokio::sync::mpsc::unbounded_channel();
        let engine = self.clone();
        tokio::spawn(async move {
            if first.recv().await.is_some() {
                let e = engine.clone();
                let cleared =
                    tokio::task::spawn_blocking(move || e.on_probe_answered(route_id, generation));
                if let Err(e) = cleared.await {
                    tracing::error!(route = route_id, "clearing the probed marks failed: {e}");
                }
            }
        });
        answered
    }

    /// The probe route `route_id` runs at `generation` showed its first
    /// sign of success: its marks are cleared, and the routes waiting for
    /// it get their turn.
    pub(super) fn on_probe_answered(&self, route_id: u32, generation: u32) {
        match self.store().probe_answered(route_id, generation) {
            Ok(0) => {}
            Ok(n) => {
                tracing::info!(route = route_id, "probe answered: {n} limit marks cleared");
                self.kick_release();
            }
            Err(e) => tracing::warn!(route = route_id, "cannot clear the probed marks: {e}"),
        }
    }

    /// The account each input runs as, read before its secrets go to the
    /// keyring (a value already there is read back from it to be hashed).
    pub(super) fn accounts_of(
        &self,
        inputs: &[CandidateInput],
    ) -> Result<Vec<AccountId>, EngineError> {
        let key = self.store().account_key()?;
        Ok(inputs.iter().map(|c| derive(&c.agent, &key)).collect())
    }

    /// Derives the account of every candidate saved before accounts
    /// existed.
    pub(super) fn derive_missing_accounts(&self) -> Result<(), EngineError> {
        let missing = self.store().candidates_without_account()?;
        if missing.is_empty() {
            return Ok(());
        }
        let key = self.store().account_key()?;
        for (id, agent) in missing {
            let account = derive(&agent, &key);
            self.store().set_candidate_account(id, &account)?;
        }
        Ok(())
    }
}

/// A route replanned [`REPLANS`] times, its world moving under each plan.
pub(super) fn kept_changing(route_id: u32) -> EngineError {
    EngineError::Conflict(format!(
        "route {route_id}: the limits of its accounts kept changing while it was being \
         dispatched; it is left as it was"
    ))
}

/// `agent`'s account; credentials kept in the keyring are read back for
/// the hash, and when the keyring cannot give them their references are
/// hashed instead (stable, though another copy of the key is then another
/// account until it is saved again with a keyring running).
fn derive(agent: &crate::agent::AgentSpec, key: &account::AccountKey) -> AccountId {
    let facts = &agent.kind.descriptor().account;
    let names: Vec<&str> = facts
        .credentials
        .iter()
        .chain(facts.base_urls)
        .copied()
        .collect();
    let referenced: std::collections::BTreeMap<String, String> = agent
        .env
        .iter()
        .filter(|(n, v)| {
            names.contains(&n.as_str()) && crate::agent::keyring_reference(v).is_some()
        })
        .map(|(n, v)| (n.clone(), v.clone()))
        .collect();
    let resolved = if referenced.is_empty() {
        referenced
    } else {
        crate::keyring::resolve_env(&referenced).unwrap_or_else(|why| {
            tracing::warn!("an account is derived from keyring references: {why}");
            referenced
        })
    };
    account::derive(agent, key, |name| {
        resolved.get(name).or_else(|| agent.env.get(name)).cloned()
    })
}

/// Gives queued routes their turn whenever [`Engine::kick_release`] asks,
/// until `stop`; a burst of asks makes one pass.
pub(super) async fn release_loop(engine: Engine, stop: tokio_util::sync::CancellationToken) {
    loop {
        tokio::select! {
            () = stop.cancelled() => return,
            () = engine.inner.release_wake.notified() => {}
        }
        // A commit may wait out the busy timeout: off the async workers.
        let e = engine.clone();
        match tokio::task::spawn_blocking(move || e.release_queued()).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::warn!("giving queued routes their turn failed: {e}"),
            Err(e) => tracing::error!("giving queued routes their turn failed: {e}"),
        }
    }
}
