//! Route flow: starting routes, manual actions, timer firings and agent
//! reports, each planned by [`super::route`], committed by compare-and-set,
//! and only then followed by its effect.

use std::path::PathBuf;

use tracing::{error, warn};

use super::pending::Work;
use super::{snapshot, Engine, EngineError, RunHandle};
use super::{ActionRequest, RouteEvent, RouteSnapshot, StartRun};
use crate::classification::RuntimeFailure;
use crate::evidence::{Correlation, Evidence};
use crate::route::machine::{self, Effect, Failure, Lease, Plan, Refusal};
use crate::route::{
    AttemptOutcome, AttemptRecord, AttemptResultRecord, ManualAction, RouteRow, RouteState,
};
use crate::runner::{self, Launch, RunReport};
use crate::scheduler::Fired;
use crate::store::{Cas, Store};
use crate::timing;

/// How long a stop waits for a SIGKILLed agent to be gone.
pub(super) const AGENT_GONE_WITHIN: std::time::Duration = std::time::Duration::from_secs(5);

impl Engine {
    /// Creates a route on the profile's first enabled candidate and
    /// dispatches its first attempt (persisted before launch).
    pub async fn start_run(&self, req: StartRun) -> Result<RouteSnapshot, EngineError> {
        if req.prompt.trim().is_empty() {
            return Err(EngineError::validation("prompt", "the prompt is empty"));
        }
        let cwd = check_cwd(req.cwd.as_deref())?;
        self.refuse_if_paused("a new route")?;
        let profile = self.get_profile(req.profile_id)?;
        let lease = Lease {
            owner: &self.inner.instance,
            until: self.lease_until(),
        };
        let now = self.inner.clock.now();
        let new = machine::start(&profile, req.prompt, cwd, lease, now).ok_or_else(|| {
            EngineError::validation("profile_id", "the profile has no enabled candidate")
        })?;
        let mut store = self.store();
        let row = store.insert_route(&new, |id| new.first_attempt(id))?;
        let attempt = store.attempts(row.id)?.remove(0).attempt;
        self.apply_effect(&store, &row, Effect::Dispatch(attempt));
        drop(store);
        self.publish(&row);
        Ok(snapshot(&row))
    }

    /// Applies a manual action fenced by the generation the person saw.
    pub async fn act(&self, req: ActionRequest) -> Result<RouteSnapshot, EngineError> {
        if matches!(
            req.action,
            ManualAction::RetryNow | ManualAction::SkipNow | ManualAction::Resume
        ) {
            self.refuse_if_paused(req.action.as_str())?;
        }
        let row = self.route_row(req.route_id)?;
        let now = self.inner.clock.now();
        let until = self.lease_until();
        let lease = Lease {
            owner: &self.inner.instance,
            until,
        };
        match machine::manual(&row, req.action, req.expected_generation, lease, now) {
            Ok(plan) => {
                let kills = plan.effect == Effect::Kill;
                let run_here = self.runs().contains_key(&row.id);
                if kills && !run_here {
                    // Run by another process: the attempt is recorded as
                    // killed only once its agent is known to be gone.
                    self.make_sure_agent_gone(&row).await?;
                }
                match self.commit(plan)? {
                    Cas::Won(row) => {
                        if kills && run_here {
                            self.until_run_ends(row.id).await;
                        }
                        Ok(snapshot(&row))
                    }
                    Cas::Lost(current) => Err(stale(&current)),
                }
            }
            Err(Refusal::AlreadyDone) => Ok(snapshot(&row)),
            Err(Refusal::Stale) => Err(stale(&row)),
            Err(Refusal::NotValid { action, state }) => Err(EngineError::Conflict(format!(
                "{} is not possible while the route is {}",
                action.as_str(),
                state.as_str()
            ))),
            Err(Refusal::NoCandidateLeft) => Err(EngineError::Conflict(
                "no candidate is left to skip to in this cycle".to_string(),
            )),
        }
    }

    /// Kills the process group of the route's latest attempt if it still
    /// runs (verified by pid and start time), and waits until it is gone.
    async fn make_sure_agent_gone(&self, row: &RouteRow) -> Result<(), EngineError> {
        let Some((pid, start)) = self.store().latest_attempt_process(row.id)? else {
            return Ok(());
        };
        let process = runner::AgentProcess { pid, start };
        if process.kill_and_wait(AGENT_GONE_WITHIN).await {
            return Ok(());
        }
        Err(EngineError::Conflict(format!(
            "the agent of attempt {} (pid {pid}) is still running after SIGKILL; the route was left as it is",
            row.attempts
        )))
    }

    /// Waits until this engine's run of `route_id` has been killed and reaped,
    /// so a resume right after a stop can never run two agents at once.
    async fn until_run_ends(&self, route_id: u32) {
        let deadline = tokio::time::Instant::now() + AGENT_GONE_WITHIN;
        while self.runs().contains_key(&route_id) && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
    }

    pub(super) fn route_row(&self, id: u32) -> Result<RouteRow, EngineError> {
        self.store()
            .route(id)?
            .ok_or_else(|| EngineError::not_found("route", id))
    }

    pub(super) fn lease_until(&self) -> chrono::DateTime<chrono::Utc> {
        let lease = chrono::Duration::from_std(self.inner.opts.lease).unwrap_or_default();
        self.inner.clock.now() + lease
    }

    /// Commits a plan; on success performs its effect and publishes the
    /// event.
    pub(super) fn commit(&self, plan: Plan) -> Result<Cas, EngineError> {
        let mut store = self.store();
        let outcome = store.commit_transition(
            plan.expected_generation,
            plan.expected_state,
            &plan.next,
            &plan.write,
        )?;
        let Cas::Won(row) = outcome else {
            return Ok(outcome);
        };
        self.apply_effect(&store, &row, plan.effect);
        drop(store);
        self.publish(&row);
        Ok(Cas::Won(row))
    }

    fn apply_effect(&self, store: &Store, row: &RouteRow, effect: Effect) {
        match effect {
            Effect::Arm(at) => {
                self.armed().insert(row.id, row.generation);
                let instant = self.inner.clock.instant_of(at);
                self.inner.scheduler.arm(row.id, row.generation, instant);
            }
            Effect::Dispatch(attempt) => {
                self.disarm(row.id);
                self.launch(store, row, attempt);
            }
            Effect::Kill => {
                self.disarm(row.id);
                self.kill(row.id);
            }
            Effect::Nothing => self.disarm(row.id),
        }
    }

    pub(super) fn disarm(&self, route_id: u32) {
        if self.armed().remove(&route_id).is_some() {
            self.inner.scheduler.disarm(route_id);
        }
    }

    pub(super) fn kill(&self, route_id: u32) {
        if let Some(run) = self.runs().get(&route_id) {
            run.cancel.cancel();
        }
    }

    fn launch(&self, store: &Store, row: &RouteRow, attempt: AttemptRecord) {
        let index = attempt.candidate_index as usize;
        let step = match store.candidate_attempts(row.id, attempt.candidate_index) {
            Ok(n) => n.saturating_sub(1),
            Err(e) => {
                error!(route = row.id, "cannot count attempts: {e}");
                0
            }
        };
        let (spawned, mut started) = tokio::sync::mpsc::unbounded_channel();
        let launch = Launch {
            agent: row.candidates[index].agent.clone(),
            prompt: row.prompt.clone(),
            cwd: row.cwd.as_ref().map(PathBuf::from),
            step,
            clock: self.inner.clock,
            spawned: Some(spawned),
        };
        let recorder = self.clone();
        let number = attempt.number;
        let route = row.id;
        tokio::spawn(async move {
            if let Some(p) = started.recv().await {
                let stored = recorder
                    .store()
                    .set_attempt_process(route, number, p.pid, p.start);
                if let Err(e) = stored {
                    error!(route, attempt = number, "cannot store the agent's pid: {e}");
                }
            }
        });
        let cancel = self.inner.stop.child_token();
        let engine = self.clone();
        let route_id = row.id;
        let token = cancel.clone();
        let generation = attempt.generation;
        let task = tokio::spawn(async move {
            let report = runner::run(launch, token).await;
            engine.on_report(route_id, attempt, report);
        });
        self.runs().insert(
            route_id,
            RunHandle {
                generation,
                cancel,
                task,
            },
        );
    }

    /// An attempt ended. Only the route's current attempt drives a
    /// transition; anything else is recorded as a late result. The report
    /// is held until it is recorded (see [`super::pending`]).
    fn on_report(&self, route_id: u32, attempt: AttemptRecord, report: RunReport) {
        let key = (route_id, attempt.generation);
        let generation = attempt.generation;
        self.hold(key, Work::Report(Box::new((attempt, report))));
        {
            let mut runs = self.runs();
            if runs
                .get(&route_id)
                .is_some_and(|r| r.generation == generation)
            {
                runs.remove(&route_id);
            }
        }
        self.perform(key);
    }

    pub(super) fn handle_report(
        &self,
        route_id: u32,
        attempt: &AttemptRecord,
        report: RunReport,
    ) -> Result<(), EngineError> {
        let row = self.refreshed(self.route_row(route_id)?)?;
        let now = self.inner.clock.now();
        let current = row.state == RouteState::Running && row.generation == attempt.generation;
        let until = self.lease_until();
        let lease = Lease {
            owner: &self.inner.instance,
            until,
        };
        let plan = match report {
            RunReport::Succeeded if current => machine::succeeded(&row, attempt.number, now),
            RunReport::Failed { raw, effect } if current => {
                let failure = self.failure(&row, attempt, raw, effect, None, true);
                machine::failed(&row, failure, lease, now)
            }
            RunReport::Runtime {
                failure,
                raw,
                effect,
            } if current => {
                let failure = self.failure(&row, attempt, raw, effect, Some(failure), true);
                machine::failed(&row, failure, lease, now)
            }
            RunReport::Killed if current => {
                machine::interrupted(&row, "Recourse was shut down", now)
            }
            late => return self.record_late(&row, attempt, late, now),
        };
        let Some(mut plan) = plan else {
            return Ok(());
        };
        if self.is_paused() {
            plan = super::pause::hold_dispatch(plan);
        }
        if let Cas::Lost(current) = self.commit(plan)? {
            warn!(
                route = route_id,
                "attempt report lost a race to generation {}", current.generation
            );
        }
        Ok(())
    }

    fn failure(
        &self,
        row: &RouteRow,
        attempt: &AttemptRecord,
        mut raw: crate::evidence::RawEvidence,
        mut effect: crate::safety::EffectContext,
        runtime: Option<RuntimeFailure>,
        current: bool,
    ) -> Failure {
        raw.correlation = Some(Correlation {
            route_id: row.id.to_string(),
            generation: attempt.generation,
            attempt: attempt.number,
            invocation_id: attempt.invocation_id.clone(),
        });
        effect.evidence_current = Some(current);
        let evidence = Evidence::from_raw(raw);
        let catalogue = self.catalogue();
        let classification = match runtime {
            Some(failure) => failure.classify(&catalogue.version),
            None => {
                let candidate = row.candidates.get(attempt.candidate_index as usize);
                let zone = timing::agent_local_tz(candidate.map(|c| &c.agent.env));
                catalogue.classify(&evidence, zone)
            }
        };
        Failure {
            number: attempt.number,
            evidence,
            classification,
            effect,
        }
    }

    /// The attempt ended after its route moved on (stopped, taken over).
    fn record_late(
        &self,
        row: &RouteRow,
        attempt: &AttemptRecord,
        report: RunReport,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Result<(), EngineError> {
        let mut result = AttemptResultRecord {
            number: attempt.number,
            finished_at: now,
            outcome: AttemptOutcome::Killed,
            classification: None,
            effect: None,
            policy_revision: None,
            policy: None,
            decision: Some("none: the route had already moved on".to_string()),
            evidence: None,
            excerpt: None,
        };
        match report {
            RunReport::Succeeded => result.outcome = AttemptOutcome::Succeeded,
            RunReport::Failed { raw, effect } => {
                let f = self.failure(row, attempt, raw, effect, None, false);
                result.outcome = AttemptOutcome::Failed;
                result.excerpt = Some(machine::excerpt(&f.evidence.message));
                result.classification = Some(f.classification);
                result.effect = Some(f.effect);
                result.evidence = Some(f.evidence);
            }
            RunReport::Runtime {
                failure,
                raw,
                effect,
            } => {
                let f = self.failure(row, attempt, raw, effect, Some(failure), false);
                result.outcome = AttemptOutcome::Failed;
                result.excerpt = Some(machine::excerpt(&f.evidence.message));
                result.classification = Some(f.classification);
                result.effect = Some(f.effect);
                result.evidence = Some(f.evidence);
            }
            RunReport::Killed => {}
        }
        self.store().record_late_result(row.id, &result)?;
        Ok(())
    }

    /// Policies and enabled flags as they are now: an edit applies to the
    /// next decision; a pending deadline is never recomputed.
    fn refreshed(&self, mut row: RouteRow) -> Result<RouteRow, EngineError> {
        let ids: Vec<u32> = row.candidates.iter().map(|c| c.id).collect();
        let current = self.store().candidates_by_id(&ids)?;
        for c in &mut row.candidates {
            if let Some(now) = current.iter().find(|n| n.id == c.id) {
                c.policy = now.policy.clone();
                c.policy_revision = now.policy_revision;
            }
        }
        Ok(row)
    }

    /// A wait came due; the firing is held until its transition commits.
    pub(super) fn on_timer(&self, fired: Fired) {
        let key = (fired.key, fired.generation);
        self.hold(key, Work::Timer);
        {
            let mut armed = self.armed();
            if armed.get(&fired.key) == Some(&fired.generation) {
                armed.remove(&fired.key);
            }
        }
        self.perform(key);
    }

    pub(super) fn publish(&self, row: &RouteRow) {
        self.published().insert(row.id, row.generation);
        // No subscriber is fine: nobody is watching.
        let _ = self.inner.events.send(RouteEvent {
            route_id: row.id,
            generation: row.generation,
            snapshot: snapshot(row),
        });
    }
}

fn stale(current: &RouteRow) -> EngineError {
    EngineError::Stale {
        current: Box::new(snapshot(current)),
    }
}

fn check_cwd(cwd: Option<&str>) -> Result<Option<String>, EngineError> {
    let Some(dir) = cwd.map(str::trim).filter(|d| !d.is_empty()) else {
        return Ok(None);
    };
    if !std::path::Path::new(dir).is_dir() {
        return Err(EngineError::validation(
            "cwd",
            format!("{dir} is not a directory"),
        ));
    }
    Ok(Some(dir.to_string()))
}
