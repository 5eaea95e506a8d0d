//! Route flow: starting routes, manual actions and agent reports, each
//! planned by [`crate::route::machine`], committed by compare-and-set, and
//! only then followed by its effect.

use std::path::PathBuf;
use std::sync::MutexGuard;

use chrono_tz::Tz;
use tracing::{error, warn};

use super::accounts::REPLANS;
use super::book::RunHandle;
use super::pending::Work;
use super::saved::Saved;
use super::views::snapshot;
use super::{ActionRequest, Engine, EngineError, RouteSnapshot, StartRun};
use crate::account::AccountNames;
use crate::agent::FilesChanged;
use crate::classification::Class;
use crate::route::machine::{self, Effect, Plan, Refusal, StartRefusal, World};
use crate::route::{
    Actor, Ask, AttemptInput, AttemptRecord, Interruption, ManualAction, RouteRow, RouteState,
};
use crate::runner::{self, Launch, Ran, ResumeSession, RunReport};
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
        let profile = self.get_profile(req.profile_id)?;
        let now = self.inner.clock.now();
        let new = machine::start(&profile, req.prompt, cwd, self.lease(), self.world(), now)
            .map_err(|refusal| match refusal {
                StartRefusal::NoEnabledCandidate => {
                    EngineError::validation("profile_id", "the profile has no enabled candidate")
                }
                StartRefusal::Paused => paused("a new route"),
            })?;
        // Created queued and released at once, in one transaction: its
        // first dispatch sees the accounts' marks and slots like any other.
        for _ in 0..REPLANS {
            let facts = self.facts(0, &new.candidates, None)?;
            let now = self.inner.clock.now();
            let lease = self.lease();
            let mut planned = None;
            let mut store = self.store();
            let created = store.create_route(&new, |row| {
                planned = machine::released(row, lease, facts.world(), now);
                planned.clone()
            })?;
            let (Cas::Won(row), Some(plan)) = (created, planned) else {
                continue;
            };
            self.settle(store, &row, &plan);
            return Ok(self.snapshot_of(&row));
        }
        Err(EngineError::Conflict(
            "the limits of the profile's accounts kept changing while the route was being \
             started; nothing was started"
                .to_string(),
        ))
    }

    /// Applies a manual action fenced by the generation the person saw,
    /// recorded in the route's history as asked `by` the app or the CLI.
    pub async fn act(&self, req: ActionRequest, by: Actor) -> Result<RouteSnapshot, EngineError> {
        let row = self.with_current_policies(self.route_row(req.route_id)?)?;
        let mut ask = Ask::new(req.action, req.expected_generation, by);
        if req.confirm_repeat {
            ask = ask.accepting_repeat();
        }
        let input = match req.action {
            ManualAction::Continue | ManualAction::Handover => {
                // Admitted first, so a stale or invalid request is told so
                // rather than why its session could not be resumed.
                if let Err(r) =
                    machine::admit(&row, req.action, req.expected_generation, self.world())
                {
                    return refused(r, &row, req.action, &self.account_names());
                }
                self.continuation_input(&row, &req)?
            }
            _ => AttemptInput::Prompt,
        };
        // Refused before anything is killed or written.
        let kills = match self.manual_plan(ask, &input, &row, self.world()) {
            Ok(p) => *p.effect() == Effect::Kill,
            Err(r) => return refused(r, &row, req.action, &self.account_names()),
        };
        let run_here = self.run_at(row.id).is_some();
        if kills && !run_here {
            // Run by another process: the attempt is recorded as killed
            // only once its agent is known to be gone.
            self.make_sure_agent_gone(&row).await?;
        }
        // What the accounts' facts refuse (a limit in force) is said as
        // such, not as a stale request the person would send again.
        let refusal = std::cell::RefCell::new(None);
        let step =
            |row: &RouteRow, world: World<'_>| match self.manual_plan(ask, &input, row, world) {
                Ok(plan) => Some(plan),
                Err(r) => {
                    refusal.replace(Some((r, row.clone())));
                    None
                }
            };
        match self.advance(row.clone(), step)? {
            Some(Cas::Won(row)) => {
                if kills && run_here {
                    self.until_run_ends(row.id).await;
                }
                Ok(self.snapshot_of(&row))
            }
            Some(Cas::Lost(current) | Cas::WorldChanged(current)) if kills && !run_here => {
                self.stop_after_its_report(current, ask, &input)
            }
            Some(Cas::Lost(current) | Cas::WorldChanged(current)) => {
                Err(stale(self.snapshot_of(&current)))
            }
            None => match refusal.into_inner() {
                Some((r, at)) => refused(r, &at, req.action, &self.account_names()),
                None => Err(stale(self.snapshot_of(&self.route_row(row.id)?))),
            },
        }
    }

    /// The agent this process killed was reported by its owner first: the
    /// person's stop still applies to where that report left the route,
    /// unless the owner has started another agent meanwhile (which only the
    /// owner could stop).
    fn stop_after_its_report(
        &self,
        current: RouteRow,
        ask: Ask,
        input: &AttemptInput,
    ) -> Result<RouteSnapshot, EngineError> {
        let ask = Ask {
            expected_generation: current.generation,
            ..ask
        };
        let id = current.id;
        let outcome = self.advance(current, |row, world| {
            self.manual_plan(ask, input, row, world)
                .ok()
                .filter(|plan| *plan.effect() != Effect::Kill)
        })?;
        match outcome {
            Some(Cas::Won(row)) => Ok(self.snapshot_of(&row)),
            Some(Cas::Lost(current) | Cas::WorldChanged(current)) => {
                Err(stale(self.snapshot_of(&current)))
            }
            None => Err(stale(self.snapshot_of(&self.route_row(id)?))),
        }
    }

    fn manual_plan(
        &self,
        ask: Ask,
        input: &AttemptInput,
        row: &RouteRow,
        world: machine::World<'_>,
    ) -> Result<Plan, Refusal> {
        let now = self.inner.clock.now();
        match input {
            AttemptInput::Prompt => machine::manual(row, ask, self.lease(), world, now),
            sends => {
                machine::manual_continuation(row, sends.clone(), ask, self.lease(), world, now)
            }
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
        while self.run_at(route_id).is_some() && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
    }

    pub(super) fn route_row(&self, id: u32) -> Result<RouteRow, EngineError> {
        self.store()
            .route(id)?
            .ok_or_else(|| EngineError::not_found("route", id))
    }

    /// Commits a plan; on success performs its effect and publishes the
    /// event.
    pub(super) fn commit(&self, plan: Plan) -> Result<Cas, EngineError> {
        let mut store = self.store();
        let outcome = store.commit_transition(&plan)?;
        let Cas::Won(row) = outcome else {
            return Ok(outcome);
        };
        self.settle(store, &row, &plan);
        Ok(Cas::Won(row))
    }

    /// A won plan of one route (not a burst): its effect with the store
    /// still held, then, the store let go, its event and follow-ups.
    fn settle(&self, store: MutexGuard<'_, Store>, row: &RouteRow, plan: &Plan) {
        let probe = plan.write().probe().is_some();
        self.apply_effect(&store, &Saved::default(), row, plan.effect().clone(), probe);
        drop(store);
        self.publish(row);
        self.after_commit(plan);
    }

    /// `saved`: the candidates as saved, which a dispatch reads its
    /// variables' values from.
    pub(super) fn apply_effect(
        &self,
        store: &Store,
        saved: &Saved,
        row: &RouteRow,
        effect: Effect,
        probe: bool,
    ) {
        match effect {
            Effect::Arm(at) => self.arm(row.id, row.generation, at),
            Effect::Dispatch(attempt) => {
                self.disarm(row.id);
                self.launch(store, saved, row, attempt, probe);
            }
            Effect::Kill => {
                self.disarm(row.id);
                self.kill(row.id);
            }
            Effect::Nothing => self.disarm(row.id),
        }
    }

    fn launch(
        &self,
        store: &Store,
        saved: &Saved,
        row: &RouteRow,
        attempt: AttemptRecord,
        probe: bool,
    ) {
        let index = attempt.candidate_index as usize;
        let step = match store.candidate_attempts(row.id, attempt.candidate_index) {
            Ok(n) => n.saturating_sub(1),
            Err(e) => {
                error!(route = row.id, "cannot count attempts: {e}");
                0
            }
        };
        let (spawned, mut started) = tokio::sync::mpsc::unbounded_channel();
        let (progress, live) = tokio::sync::watch::channel(crate::agent::Transcript::default());
        let resume = match &attempt.input {
            AttemptInput::Continue {
                session_id,
                message,
                ..
            } => Some(ResumeSession {
                session_id: session_id.clone(),
                message: message.clone(),
            }),
            AttemptInput::Prompt | AttemptInput::Handover { .. } => None,
        };
        let (agent, cannot_start) =
            super::dispatch_env::agent_at_dispatch(store, saved, row, index);
        // Clock times the agent prints without a zone are in its own `TZ`.
        let zone = timing::agent_local_tz(Some(&agent.env));
        let launch = Launch {
            agent,
            prompt: attempt.input.prompt(&row.prompt),
            resume,
            cwd: row.cwd.as_ref().map(PathBuf::from),
            step,
            clock: self.inner.clock,
            spawned: Some(spawned),
            progress: Some(progress),
            answered: probe.then(|| self.probe_listener(row.id, attempt.generation)),
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
            let ran = match cannot_start {
                Some(why) => runner::cannot_start(&launch, &why),
                None => runner::run(launch, token).await,
            };
            // Its commit may wait (a burst, a lock): off the async workers.
            let reported =
                tokio::task::spawn_blocking(move || engine.on_report(route_id, attempt, ran, zone));
            if let Err(e) = reported.await {
                error!(route = route_id, "recording the attempt's end failed: {e}");
            }
        });
        self.book().runs.insert(
            route_id,
            RunHandle {
                generation,
                cancel,
                task,
                live,
            },
        );
    }

    /// An attempt ended. Only the route's current attempt drives a
    /// transition; anything else is recorded as a late result. The report
    /// is held until it is recorded (see [`super::pending`]).
    fn on_report(&self, route_id: u32, attempt: AttemptRecord, report: Ran, zone: Tz) {
        let key = (route_id, attempt.generation);
        let generation = attempt.generation;
        self.hold(key, Work::Report(Box::new((attempt, report, zone))));
        {
            let mut book = self.book();
            if book
                .runs
                .get(&route_id)
                .is_some_and(|r| r.generation == generation)
            {
                book.runs.remove(&route_id);
            }
        }
        self.perform(key);
    }

    pub(super) fn handle_report(
        &self,
        route_id: u32,
        attempt: &AttemptRecord,
        ran: Ran,
        zone: Tz,
    ) -> Result<(), EngineError> {
        // What the agent said and did is kept first, however the attempt
        // is judged (and again harmlessly if this work is retried).
        let transcript = ran.transcript.sanitized();
        self.store()
            .save_transcript(route_id, attempt.number, &transcript, ran.files.as_ref())?;
        let files_changed = ran.files.as_ref().map(FilesChanged::count);
        let report = ran.report;
        let row = self.with_current_policies(self.route_row(route_id)?)?;
        let now = self.inner.clock.now();
        let current = row.state == RouteState::Running && row.generation == attempt.generation;
        if !current {
            return self.record_late(&row, attempt, report, zone, now);
        }
        let mut failure = match report {
            RunReport::Succeeded => {
                let plan = machine::succeeded(&row, attempt.number, now);
                return self.commit_report(plan.map(|p| self.commit(p)).transpose()?, route_id);
            }
            RunReport::Killed => {
                let plan = machine::interrupted(&row, Interruption::ShutDown, now);
                return self.commit_report(plan.map(|p| self.commit(p)).transpose()?, route_id);
            }
            RunReport::Failed { raw, effect } => {
                self.failure(&row, attempt, raw, effect, None, zone, true)
            }
            RunReport::Runtime {
                failure,
                raw,
                effect,
            } => self.failure(&row, attempt, raw, effect, Some(failure), zone, true),
        };
        failure.session = self.session_of(&row, attempt, &transcript, &failure)?;
        failure.files_changed = files_changed;
        // Only an unclassified failure can be one of a repeat: the history
        // is read for nothing else.
        if failure.classification.class == Class::Unclassified {
            failure.earlier = self.earlier_sightings(route_id, attempt.number)?;
        }
        // Planned in the world of its accounts: the failure may mark one,
        // and a skip dispatches to the next candidate.
        let outcome = self.advance(row, |row, world| {
            let now = self.inner.clock.now();
            machine::failed(row, failure.clone(), self.lease(), world, now)
        })?;
        self.commit_report(outcome, route_id)
    }

    /// A report's transition lost its race: said in the log.
    fn commit_report(&self, outcome: Option<Cas>, route_id: u32) -> Result<(), EngineError> {
        if let Some(Cas::Lost(current) | Cas::WorldChanged(current)) = outcome {
            warn!(
                route = route_id,
                "attempt report lost a race to generation {}", current.generation
            );
        }
        Ok(())
    }

    /// The row with its candidates' policies as they are now, read by
    /// candidate id (see [`machine::with_policies`]).
    pub(super) fn with_current_policies(&self, row: RouteRow) -> Result<RouteRow, EngineError> {
        Ok(Saved::default().policies(&self.store(), row)?)
    }
}

/// What a refused manual action answers: the route as it is (an action
/// already done), or why not, its accounts by their names in `names`.
fn refused(
    refusal: Refusal,
    row: &RouteRow,
    action: ManualAction,
    names: &AccountNames,
) -> Result<RouteSnapshot, EngineError> {
    Err(match &refusal {
        Refusal::AlreadyDone => return Ok(snapshot(row, names)),
        Refusal::Stale => stale(snapshot(row, names)),
        // Each reads on its own (the CLI prints it after `error:`, the app
        // after the action's label), naming the action as its button does.
        Refusal::NotValid { action, state } => EngineError::Conflict(format!(
            "{} is not possible while the route {}",
            action.label(),
            state.after_the_route()
        )),
        Refusal::NoCandidateLeft => {
            EngineError::Conflict("no candidate is left to skip to in this cycle".to_string())
        }
        Refusal::Paused => paused(&format!("“{}”", action.label())),
        Refusal::RepeatRisk(risk) => EngineError::Conflict(format!(
            "{} {} and may repeat work: {}; confirm that you want it",
            action.label(),
            action.what_it_sends().unwrap_or("starts an agent"),
            risk.text()
        )),
        Refusal::Unavailable(_) | Refusal::Limited { .. } | Refusal::NotStarted { .. } => {
            EngineError::Conflict(refusal.why(names).unwrap_or_default())
        }
    })
}

fn stale(current: RouteSnapshot) -> EngineError {
    EngineError::Stale {
        current: Box::new(current),
    }
}

/// The error for a dispatch a person asked for while dispatches are paused.
fn paused(what: &str) -> EngineError {
    EngineError::Conflict(format!(
        "new dispatches are paused, so {what} would not start an agent; resume dispatches first"
    ))
}

/// The directory a new route runs in, recorded so every route shows it:
/// the one given, else the one Recourse runs in (see
/// [`super::housekeeping::inspect_workdir`], which the form asks first).
fn check_cwd(cwd: Option<&str>) -> Result<Option<String>, EngineError> {
    let check = super::housekeeping::inspect_workdir(cwd);
    match check.problem {
        Some(problem) => Err(EngineError::validation("cwd", problem)),
        None => Ok(Some(check.path)),
    }
}
