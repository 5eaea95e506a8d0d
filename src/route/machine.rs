//! The route state machine, pure: given a route row, an event, what it is
//! told of the world and `now`, what the next row is and which effect
//! (dispatch, timer, kill) follows.
//!
//! It is the only place a route changes: rows, plans and transition writes
//! are built here and nowhere else (the store only restores rows it read).
//! No IO here. The engine commits the returned [`Plan`] with one
//! compare-and-set and performs its [`Effect`] only after the commit.

use chrono::{DateTime, Utc};

mod continuation;
mod dispatch;

use super::row::RouteRecord;
use super::transitions::{self, Event};
use super::{
    ActionRecord, Ask, AttemptInput, AttemptOutcome, AttemptRecord, AttemptResultRecord, Decided,
    HoldReason, Interruption, LedTo, ManualAction, NewRoute, ProbeEnd, RepeatRisk, RouteRow,
    RouteState, TransitionWrite,
};
use crate::account::{AccountId, AccountNames, AccountState, Mark};
use crate::classification::{Classification, SemanticCode};
use crate::evaluator::{
    self, CandidateSlot, Decision, ManualReason, NotContinued, RouteCycle, SessionFacts, Sighting,
    ToolCalls,
};
use crate::evidence::Evidence;
use crate::policy::CandidatePolicy;
use crate::profile::{Candidate, Profile};
use crate::safety::{self, EffectContext};

pub use continuation::manual as manual_continuation;
use dispatch::dispatch;
pub use dispatch::released;

/// What the engine does after the commit.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    Nothing,
    /// Launch the attempt written by the transition.
    Dispatch(AttemptRecord),
    Arm(DateTime<Utc>),
    /// Kill the running attempt of the previous generation.
    Kill,
}

/// A transition ready to commit: read-only outside this module.
#[derive(Debug, Clone)]
pub struct Plan {
    expected_state: RouteState,
    expected_generation: u32,
    next: RouteRow,
    write: TransitionWrite,
    effect: Effect,
}

impl Plan {
    /// The state the route must still be in for the plan to commit.
    pub fn expected_state(&self) -> RouteState {
        self.expected_state
    }

    /// The generation the route must still be at for the plan to commit.
    pub fn expected_generation(&self) -> u32 {
        self.expected_generation
    }

    /// The row as it will be stored (its generation is bumped on commit).
    pub fn next(&self) -> &RouteRow {
        &self.next
    }

    pub fn write(&self) -> &TransitionWrite {
        &self.write
    }

    pub fn effect(&self) -> &Effect {
        &self.effect
    }
}

/// What the machine is told about the world beyond the route. The default
/// is a world with nothing paused, limited or full.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct World<'a> {
    /// New dispatches are paused: nothing starts an agent. A dispatch that
    /// follows a failure at once (a skip) becomes a wait due now, which the
    /// engine holds until the pause ends.
    pub paused: bool,
    /// The accounts of the route's candidates: their limit marks, and
    /// whether a slot is free on each for this route.
    pub accounts: &'a [AccountState],
    /// The global maximum of running agents leaves no slot for this route.
    pub global_full: bool,
    /// The version of the limit marks these were read at: a plan made from
    /// them commits only while it holds.
    pub stamp: u64,
}

impl World<'_> {
    /// What the world says of `account`; an account it does not list has
    /// no marks and room.
    pub fn account(&self, account: &AccountId) -> Option<&AccountState> {
        self.accounts.iter().find(|a| a.account == *account)
    }
}

/// Why a manual action was not planned.
#[derive(Debug, Clone, PartialEq)]
pub enum Refusal {
    /// Asked with an old generation.
    Stale,
    /// Already done (a repeated cancel or stop): nothing to change.
    AlreadyDone,
    NotValid {
        action: ManualAction,
        state: RouteState,
    },
    NoCandidateLeft,
    /// The action would start an agent while new dispatches are paused.
    Paused,
    /// The action sends work again and may repeat what an agent already
    /// did; the person has not accepted that.
    RepeatRisk(RepeatRisk),
    /// A continue or hand-over that cannot be made, and why.
    Unavailable(String),
    /// Retry now while a limit holds the candidate's account: it would not
    /// start. Worded by [`Refusal::why`], the account by its name.
    Limited {
        candidate: String,
        mark: Box<Mark>,
    },
    /// A continue or hand-over that would start no agent now: nothing is
    /// sent. `next`: the route as that dispatch would leave it.
    NotStarted {
        next: Box<RouteRow>,
    },
}

impl Refusal {
    /// Why the action cannot be made now, for the refusals that say it in
    /// words of their own, each account by its name in `names`.
    pub fn why(&self, names: &AccountNames) -> Option<String> {
        match self {
            Refusal::Unavailable(why) => Some(why.clone()),
            Refusal::Limited { candidate, mark } => Some(format!(
                "{candidate} would not start now: {}; skip now, wait for it, or clear the limit \
                 in Accounts if it has lifted",
                mark.limited_until(names)
            )),
            Refusal::NotStarted { next, .. } => Some(format!(
                "no agent would start now ({}); nothing was sent, try again when one can start",
                continuation::not_started(next, names)
            )),
            Refusal::Stale
            | Refusal::AlreadyDone
            | Refusal::NotValid { .. }
            | Refusal::NoCandidateLeft
            | Refusal::Paused
            | Refusal::RepeatRisk(_) => None,
        }
    }
}

/// Why a route was not started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StartRefusal {
    NoEnabledCandidate,
    Paused,
}

/// Actions valid in the row's current state, in display order: the
/// [`transitions`] table's, less a skip or hand-over when no candidate is
/// left to skip to, and Continue when the current kind cannot resume.
pub fn valid_actions(row: &RouteRow) -> Vec<ManualAction> {
    let skip = next_eligible(row).is_some();
    let resumes = row
        .candidates
        .get(row.candidate_index as usize)
        .is_some_and(|c| c.agent.kind.descriptor().resume.is_some());
    transitions::actions(row.state)
        .filter(|a| skip || !matches!(a, ManualAction::SkipNow | ManualAction::Handover))
        .filter(|a| resumes || *a != ManualAction::Continue)
        .collect()
}

/// Where a skip from the row's current candidate goes: the next enabled
/// candidate not excluded this cycle; `None` on the last one.
pub fn next_eligible(row: &RouteRow) -> Option<u32> {
    let enabled = row.candidates.iter().map(|c| c.enabled);
    row.cycle.next_eligible(enabled, row.candidate_index + 1)
}

/// The row's record, to change into the next row: no deadline, reason or
/// place in the queue carries over unless the transition sets it again.
fn base(row: &RouteRow, now: DateTime<Utc>) -> RouteRecord {
    RouteRecord {
        deadline: None,
        manual_reason: None,
        archived_at: None,
        queued: None,
        updated_at: now,
        ..row.0.clone()
    }
}

fn plan(row: &RouteRow, next: RouteRecord, write: TransitionWrite, effect: Effect) -> Plan {
    Plan {
        expected_state: row.state,
        expected_generation: row.generation,
        next: RouteRow(next),
        write,
        effect,
    }
}

/// The one place an attempt and its invocation id (`r<route>-a<number>-<owner>`)
/// are made, for a route's first attempt and every later one.
fn attempt_record(
    route_id: u32,
    number: u32,
    generation: u32,
    (candidate_index, candidate): (u32, &Candidate),
    owner: &str,
    now: DateTime<Utc>,
) -> AttemptRecord {
    AttemptRecord {
        number,
        generation,
        candidate_index,
        candidate_id: candidate.id,
        candidate_name: candidate.name.clone(),
        invocation_id: format!("r{route_id}-a{number}-{owner}"),
        started_at: now,
        account: candidate.account.clone(),
        input: super::AttemptInput::Prompt,
    }
}

/// A new route on `profile` at its first enabled candidate. The store
/// creates it queued and, in the same transaction, commits [`released`]:
/// its first dispatch, which a limit mark or a full account may hold back.
pub fn start(
    profile: &Profile,
    prompt: String,
    cwd: Option<String>,
    lease: Lease<'_>,
    world: World<'_>,
    now: DateTime<Utc>,
) -> Result<NewRoute, StartRefusal> {
    if world.paused {
        return Err(StartRefusal::Paused);
    }
    let enabled = profile.candidates.iter().map(|c| c.enabled);
    let first = RouteCycle::default()
        .next_eligible(enabled, 0)
        .ok_or(StartRefusal::NoEnabledCandidate)?;
    Ok(NewRoute {
        profile_id: profile.id,
        profile_name: profile.name.clone(),
        prompt,
        cwd,
        candidates: profile.candidates.clone(),
        cycle: RouteCycle::new(first),
        candidate_index: first,
        owner: lease.owner.to_string(),
        lease_until: lease.until,
        now,
    })
}

/// Ownership handed over with a transition.
#[derive(Debug, Clone, Copy)]
pub struct Lease<'a> {
    pub owner: &'a str,
    pub until: DateTime<Utc>,
}

/// A pending wait or retry came due; `None` when it does not apply, or
/// while paused (the wait stays due).
pub fn timer_fired(
    row: &RouteRow,
    lease: Lease<'_>,
    world: World<'_>,
    now: DateTime<Utc>,
) -> Option<Plan> {
    if transitions::after(row.state, Event::TimerFired).is_empty() || world.paused {
        return None;
    }
    let next = base(row, now);
    Some(dispatch(
        row,
        next,
        TransitionWrite::default(),
        lease,
        world,
        now,
    ))
}

/// A person asked for `ask.action` at `ask.expected_generation`. An action
/// that sends work again while the route carries a [`RepeatRisk`] is
/// refused unless the person accepted it. The plan records the action in
/// the route's history, in the same transaction as its transition.
pub fn manual(
    row: &RouteRow,
    ask: Ask,
    lease: Lease<'_>,
    world: World<'_>,
    now: DateTime<Utc>,
) -> Result<Plan, Refusal> {
    let action = ask.action;
    admit(row, action, ask.expected_generation, world)?;
    let risk = accepted_risk(row, ask)?;
    let mut next = base(row, now);
    // A person's action ends the pending wait's schedule, except retry-now
    // during a wait: that runs the scheduled attempt early.
    if !(action == ManualAction::RetryNow && row.state.is_waiting()) {
        next.pending_outcome = None;
    }
    let write = TransitionWrite::default();
    let mut plan = match action {
        // One more attempt in the same cycle: from a wait it brings the
        // scheduled attempt forward, and after automatic recovery ended the
        // candidate's retries and reset wait stay used, so when it fails
        // the candidate's exhausted outcome applies (the decision: each
        // candidate and class uses them once per cycle; only resume starts
        // a fresh cycle).
        // A limit in force would hold the dispatch and let the policy
        // decide, a skip or a stop the person did not ask for.
        ManualAction::RetryNow => match dispatch::limit_in_force(row, world, now) {
            Some(mark) => {
                return Err(Refusal::Limited {
                    candidate: row.candidates[row.candidate_index as usize].name.clone(),
                    mark: Box::new(mark),
                })
            }
            None => dispatch(row, next, write, lease, world, now),
        },
        ManualAction::SkipNow => {
            let index = next_eligible(row).ok_or(Refusal::NoCandidateLeft)?;
            next.cycle = row.cycle.skip_to(index);
            next.candidate_index = index;
            dispatch(row, next, write, lease, world, now)
        }
        ManualAction::CancelWait => {
            next.state = RouteState::NeedsManual;
            next.manual_reason = Some(HoldReason::WaitCancelled);
            plan(row, next, write, Effect::Nothing)
        }
        ManualAction::Stop => stop(row, next, now),
        ManualAction::Resume => {
            next.cycle = RouteCycle::new(row.candidate_index);
            dispatch(row, next, write, lease, world, now)
        }
        // What they send is found by the engine: `manual_continuation`.
        ManualAction::Continue | ManualAction::Handover => {
            return continuation::manual(row, AttemptInput::Prompt, ask, lease, world, now)
        }
    };
    plan.write.action = Some(action_record(row, ask, &plan, risk, now));
    Ok(plan)
}

/// Why sending work again on `row` may repeat what an agent already did:
/// the one rule the snapshot, the CLI and [`manual`] read.
pub fn repeat_risk(row: &RouteRow) -> Option<RepeatRisk> {
    row.manual_reason.as_ref().and_then(HoldReason::repeat_risk)
}

/// The risk the person accepted when `ask` starts an agent on a route whose
/// earlier agent may already have done work; refused when they did not.
fn accepted_risk(row: &RouteRow, ask: Ask) -> Result<Option<RepeatRisk>, Refusal> {
    let risk = repeat_risk(row).filter(|_| transitions::dispatches(ask.action));
    match risk {
        Some(risk) if !ask.accepts_repeat => Err(Refusal::RepeatRisk(risk)),
        risk => Ok(risk),
    }
}

/// The history's entry for `ask`, from what its plan does.
fn action_record(
    row: &RouteRow,
    ask: Ask,
    plan: &Plan,
    accepted: Option<RepeatRisk>,
    now: DateTime<Utc>,
) -> ActionRecord {
    let next = &plan.next;
    let led_to = match (ask.action, plan.write.dispatch()) {
        (_, Some(a)) => LedTo::Dispatched {
            attempt: a.number,
            candidate_index: a.candidate_index,
            candidate_name: a.candidate_name.clone(),
        },
        (ManualAction::CancelWait, None) => LedTo::WaitCancelled {
            was: row.state,
            deadline: row.deadline,
        },
        (ManualAction::Stop, None) => LedTo::Stopped {
            killed: plan.write.result().map(|r| r.number),
        },
        (
            ManualAction::RetryNow
            | ManualAction::SkipNow
            | ManualAction::Resume
            | ManualAction::Continue
            | ManualAction::Handover,
            None,
        ) => LedTo::NotDispatched {
            state: next.state,
            candidate_index: next.candidate_index,
            candidate_name: next
                .candidates
                .get(next.candidate_index as usize)
                .map(|c| c.name.clone())
                .unwrap_or_default(),
        },
    };
    ActionRecord {
        action: ask.action,
        by: ask.by,
        at: now,
        from: row.state,
        led_to,
        accepted,
    }
}

/// Whether `action` may be planned at all: not done already, asked at the
/// current generation, valid in the route's state, not paused.
pub fn admit(
    row: &RouteRow,
    action: ManualAction,
    expected_generation: u32,
    world: World<'_>,
) -> Result<(), Refusal> {
    if already_done(row, action) {
        return Err(Refusal::AlreadyDone);
    }
    if row.generation != expected_generation {
        return Err(Refusal::Stale);
    }
    if let Some(refusal) = not_offered(row, action) {
        return Err(refusal);
    }
    if world.paused && transitions::dispatches(action) {
        return Err(Refusal::Paused);
    }
    Ok(())
}

/// Why the route's state and candidates do not offer `action`; `None` when
/// they do.
fn not_offered(row: &RouteRow, action: ManualAction) -> Option<Refusal> {
    if valid_actions(row).contains(&action) {
        return None;
    }
    let skips = matches!(action, ManualAction::SkipNow | ManualAction::Handover);
    if skips && next_eligible(row).is_none() {
        return Some(Refusal::NoCandidateLeft);
    }
    let offered = transitions::actions(row.state).any(|a| a == action);
    if let (true, ManualAction::Continue, Some(c)) = (
        offered,
        action,
        row.candidates.get(row.candidate_index as usize),
    ) {
        return Some(Refusal::Unavailable(format!(
            "{} candidates cannot resume a session; retry now or skip to the next candidate \
             instead",
            c.agent.kind.descriptor().label
        )));
    }
    Some(Refusal::NotValid {
        action,
        state: row.state,
    })
}

/// Why each action the route does not offer now is not offered, in words
/// for its greyed-out button: the refusal [`admit`] gives a request for it
/// at the route's current generation, so the window says what the engine
/// would answer. Actions it offers are absent.
pub fn unavailable(row: &RouteRow) -> Vec<(ManualAction, String)> {
    ManualAction::ALL
        .into_iter()
        .filter_map(|action| {
            let refusal = if already_done(row, action) {
                Refusal::AlreadyDone
            } else {
                not_offered(row, action)?
            };
            Some((action, refusal_words(&refusal, action, row.state)))
        })
        .collect()
}

/// A refusal as a person reads it beside the action: one clause that does
/// not name the action again (the window puts its label before it and
/// makes it a sentence).
fn refusal_words(refusal: &Refusal, action: ManualAction, state: RouteState) -> String {
    match refusal {
        Refusal::AlreadyDone if action == ManualAction::CancelWait => {
            "the wait is cancelled already".to_string()
        }
        Refusal::AlreadyDone => format!("the route {} already", state.after_the_route()),
        Refusal::NotValid {
            action: ManualAction::CancelWait,
            state,
        } => format!(
            "there is no wait to cancel: the route {}",
            state.after_the_route()
        ),
        Refusal::NotValid { state, .. } => {
            format!("not possible while the route {}", state.after_the_route())
        }
        Refusal::NoCandidateLeft => "no candidate is left to skip to in this cycle".to_string(),
        Refusal::Unavailable(_) | Refusal::Limited { .. } | Refusal::NotStarted { .. } => {
            refusal.why(&AccountNames::default()).unwrap_or_default()
        }
        Refusal::Stale => "the route changed since it was shown".to_string(),
        Refusal::Paused => "new dispatches are paused".to_string(),
        Refusal::RepeatRisk(risk) => risk.text(),
    }
}

/// Cancelling a cancelled wait and stopping a stopped route change nothing.
fn already_done(row: &RouteRow, action: ManualAction) -> bool {
    match action {
        ManualAction::CancelWait => {
            row.state == RouteState::NeedsManual
                && row.manual_reason == Some(HoldReason::WaitCancelled)
        }
        ManualAction::Stop => row.state == RouteState::Stopped,
        ManualAction::RetryNow
        | ManualAction::SkipNow
        | ManualAction::Resume
        | ManualAction::Continue
        | ManualAction::Handover => false,
    }
}

/// Stops the route. Its hold keeps why work sent again may repeat work: a
/// running agent is stopped mid-way, or the hold it was stopped from had a
/// risk (so stop then resume asks as retry would have).
fn stop(row: &RouteRow, mut next: RouteRecord, now: DateTime<Utc>) -> Plan {
    next.state = RouteState::Stopped;
    let mut write = TransitionWrite::default();
    let (effect, risk) = if row.state == RouteState::Running {
        write.result = Some(bare_result(row.attempts, AttemptOutcome::Killed, now));
        write.probe_end = Some(ProbeEnd::Released);
        let risk = RepeatRisk::StoppedWhileRunning {
            attempt: row.attempts,
        };
        (Effect::Kill, Some(risk))
    } else {
        (Effect::Nothing, repeat_risk(row))
    };
    next.manual_reason = Some(HoldReason::StoppedByYou { risk });
    plan(row, next, write, effect)
}

fn bare_result(number: u32, outcome: AttemptOutcome, now: DateTime<Utc>) -> AttemptResultRecord {
    AttemptResultRecord {
        number,
        finished_at: now,
        outcome,
        classification: None,
        effect: None,
        policy_revision: None,
        policy: None,
        decision: None,
        evidence: None,
        excerpt: None,
    }
}

/// The running attempt succeeded; `None` unless the route is running.
pub fn succeeded(row: &RouteRow, number: u32, now: DateTime<Utc>) -> Option<Plan> {
    if transitions::after(row.state, Event::AttemptSucceeded).is_empty() {
        return None;
    }
    let mut next = base(row, now);
    next.state = RouteState::Succeeded;
    next.owner = None;
    next.lease_until = None;
    next.pending_outcome = None;
    let write = TransitionWrite {
        result: Some(bare_result(number, AttemptOutcome::Succeeded, now)),
        probe_end: Some(ProbeEnd::Answered),
        ..TransitionWrite::default()
    };
    Some(plan(row, next, write, Effect::Nothing))
}

/// The row with each candidate's policy (and its revision) and account
/// replaced by the stored one of the same id in `current`: a policy or
/// account edit applies to the route's next decision. Enabled flags and
/// order stay as the route started with them, and a deadline already
/// committed is never recomputed.
pub fn with_policies(mut row: RouteRow, current: &[Candidate]) -> RouteRow {
    for c in &mut row.0.candidates {
        if let Some(now) = current.iter().find(|n| n.id == c.id) {
            c.policy = now.policy.clone();
            c.policy_revision = now.policy_revision;
            c.account.clone_from(&now.account);
        }
    }
    row
}

/// A failed attempt, already sanitized and classified.
#[derive(Debug, Clone)]
pub struct Failure {
    pub number: u32,
    pub evidence: Evidence,
    pub classification: Classification,
    pub effect: EffectContext,
    /// What the engine found about the CLI session the attempt ran in.
    pub session: Session,
    /// How many files of the working directory the attempt changed (`None`:
    /// not a git repository).
    pub files_changed: Option<u32>,
    /// The route's attempts before this one, oldest first, as far back as a
    /// repeat count can reach ([`crate::policy::REPEAT_THRESHOLD_RANGE`]).
    pub earlier: Vec<Sighting>,
}

/// What the repeat count makes of an earlier attempt of the route, read
/// back from its stored result: a failure is judged as when it happened
/// (its class, the gate on its effects, its files, its evidence's
/// fingerprint); anything else ends a run of identical failures.
pub fn earlier_sighting(
    attempt: &AttemptRecord,
    result: Option<&AttemptResultRecord>,
    files_changed: Option<u32>,
) -> Sighting {
    let candidate = attempt.candidate_index;
    let failed = result.filter(|r| r.outcome == AttemptOutcome::Failed);
    let facts = failed.and_then(|r| {
        Some((
            r.classification.as_ref()?,
            r.effect.as_ref()?,
            r.evidence.as_ref()?,
        ))
    });
    match facts {
        Some((classification, effect, evidence)) => Sighting::of(
            candidate,
            classification.class,
            &safety::gate(effect),
            files_changed,
            evidence.fingerprint(),
        ),
        None => Sighting::other(candidate),
    }
}

impl Failure {
    /// What the repeat count makes of this failure on `candidate`.
    pub fn sighting(&self, candidate: u32, verdict: &safety::GateVerdict) -> Sighting {
        Sighting::of(
            candidate,
            self.classification.class,
            verdict,
            self.files_changed,
            self.evidence.fingerprint(),
        )
    }
}

/// What the engine found about a failed attempt's CLI session: the
/// evidence automatic continuation and the gate need beyond the attempt's
/// own effects. The default knows nothing: no session, tool calls unknown,
/// no earlier attempt.
#[derive(Debug, Clone, Default)]
pub struct Session {
    /// The session id, when the CLI reported one, its kind resumes
    /// sessions and the session's files are still where the CLI keeps them.
    pub resumable: Option<String>,
    /// How the attempt's tool calls ended.
    pub tools: ToolCalls,
    /// What the attempts whose session this one continued did (see
    /// [`EffectContext::with_earlier`]); `None` when it started its own.
    pub earlier: Option<EffectContext>,
}

/// The running attempt failed: gate, evaluate, and plan what the decision
/// says; `None` unless the route is running. An account- or model-scoped
/// failure also marks the candidate's account, in the same transition.
///
/// The gate judges the session (the attempt with the ones it continued).
/// An automatic continuation is planned only when it starts an agent at
/// once: one the account's limits, its slots or the pause would hold back
/// would later be dispatched as the plain prompt, so then the gate decides
/// as it does without the option.
pub fn failed(
    row: &RouteRow,
    failure: Failure,
    lease: Lease<'_>,
    world: World<'_>,
    now: DateTime<Utc>,
) -> Option<Plan> {
    if transitions::after(row.state, Event::AttemptFailed).is_empty() {
        return None;
    }
    let effect = match &failure.session.earlier {
        Some(earlier) => failure.effect.with_earlier(earlier),
        None => failure.effect.clone(),
    };
    let verdict = safety::gate(&effect);
    let facts = SessionFacts {
        resumable: failure.session.resumable.is_some(),
        tools: failure.session.tools,
    };
    let slots = slots(row);
    let classification = &failure.classification;
    let current = failure.sighting(row.candidate_index, &verdict);
    let identical = evaluator::repeated::identical(&failure.earlier, &current);
    let decision = evaluator::evaluate_failure(
        &row.cycle,
        classification,
        &verdict,
        identical,
        &facts,
        &slots,
        now,
    );
    if let (Decision::Continue { .. }, Some(session_id)) = (decision, &failure.session.resumable) {
        let candidate = &row.candidates[row.candidate_index as usize];
        let input = AttemptInput::Continue {
            of_attempt: failure.number,
            session_id: session_id.clone(),
            message: super::continue_message(&candidate.agent),
            automatic: true,
        };
        let mut plan = plan_failure(row, &failure, decision, lease, world, now);
        if continuation::sends(&mut plan, input) {
            return Some(plan);
        }
    }
    // No continuation was made: what the gate and policy decide without it.
    let (gated, held_back) = match decision {
        Decision::Continue { .. } => (
            evaluator::evaluate(&row.cycle, classification, &verdict, identical, &slots, now),
            true,
        ),
        decided => (decided, false),
    };
    let mut plan = plan_failure(row, &failure, gated, lease, world, now);
    // A person held by the gate reads why an opted-in candidate did not
    // continue its session instead.
    if let Some(HoldReason::UnsafeEffect {
        not_continued: why, ..
    }) = plan.next.0.manual_reason.as_mut()
    {
        *why = if held_back {
            Some(NotContinued::NotAtOnce)
        } else {
            evaluator::continuation(&row.cycle, classification, &verdict, &facts, &slots)
                .err()
                .filter(|why| *why != NotContinued::Off)
        };
    }
    Some(plan)
}

/// What `decision` about `failure` leads to, with the attempt's result, the
/// decision and any account mark in the same transition.
fn plan_failure(
    row: &RouteRow,
    failure: &Failure,
    decision: Decision,
    lease: Lease<'_>,
    world: World<'_>,
    now: DateTime<Utc>,
) -> Plan {
    let candidate = &row.candidates[row.candidate_index as usize];
    let policy = candidate.policy.clone();
    let mut next = base(row, now);
    decide(
        &mut next,
        &failure.classification,
        &policy,
        Decided::Typed(decision),
        &decision,
    );
    let mark = candidate.account.as_ref().and_then(|account| {
        let known = world.account(account).map_or(&[][..], |a| &a.marks[..]);
        crate::account::mark_for(
            &failure.classification,
            account,
            candidate.agent.model.as_deref(),
            (row.id, failure.number),
            known,
            now,
        )
    });
    // A program that would not start: the person reads the cause first.
    let cannot_start = (failure.classification.code == SemanticCode::SpawnFailed)
        .then(|| excerpt(&failure.evidence.message));
    let write = TransitionWrite {
        result: Some(AttemptResultRecord {
            number: failure.number,
            finished_at: now,
            outcome: AttemptOutcome::Failed,
            excerpt: Some(excerpt(&failure.evidence.message)),
            classification: Some(failure.classification.clone()),
            effect: Some(failure.effect.clone()),
            policy_revision: Some(candidate.policy_revision),
            policy: Some(policy),
            decision: Some(Decided::Typed(decision)),
            evidence: Some(failure.evidence.clone()),
        }),
        mark,
        probe_end: Some(ProbeEnd::Released),
        ..TransitionWrite::default()
    };
    let mut plan = follow(row, next, write, &decision, lease, world, now);
    if let (Some(cause), Some(HoldReason::NoRecovery { .. })) =
        (cannot_start, &plan.next.manual_reason)
    {
        plan.next.0.manual_reason = Some(HoldReason::CannotStart { cause });
    }
    plan
}

/// Records on `next` a decision about its current candidate, made from
/// `classification` under `policy` (a failure's, or a limit mark's).
fn decide(
    next: &mut RouteRecord,
    classification: &Classification,
    policy: &CandidatePolicy,
    recorded: Decided,
    decision: &Decision,
) {
    next.failed_candidate = Some(next.candidate_index);
    next.cycle = next.cycle.apply(decision);
    next.classification = Some(classification.clone());
    next.policy = Some(policy.clone());
    next.decision = Some(recorded);
    // Pending only while this candidate waits or retries: after a skip it
    // belongs to a candidate no longer running, and after a stop by the
    // gate or policy it will never apply.
    next.pending_outcome = match decision {
        Decision::WaitForReset { .. } | Decision::Retry { .. } => classification
            .class
            .policy_class()
            .map(|c| policy.section(c).on_exhausted),
        Decision::Continue { .. }
        | Decision::Skip { .. }
        | Decision::SkipRepeated { .. }
        | Decision::Stop { .. }
        | Decision::Manual { .. } => None,
    };
}

/// Plans what `decision` says: wait, retry, dispatch the next candidate, or
/// hand the route to a person.
fn follow(
    row: &RouteRow,
    mut next: RouteRecord,
    write: TransitionWrite,
    decision: &Decision,
    lease: Lease<'_>,
    world: World<'_>,
    now: DateTime<Utc>,
) -> Plan {
    let reason = match *decision {
        Decision::WaitForReset { until, .. } => {
            next.state = RouteState::WaitingReset;
            next.deadline = Some(until);
            return plan(row, next, write, Effect::Arm(until));
        }
        Decision::Retry { at, .. } => {
            next.state = RouteState::RetryScheduled;
            next.deadline = Some(at);
            return plan(row, next, write, Effect::Arm(at));
        }
        Decision::Skip { next: index, .. } | Decision::SkipRepeated { next: index, .. } => {
            next.candidate_index = index;
            return dispatch(row, next, write, lease, world, now);
        }
        // The same candidate at once; [`failed`] says what it sends.
        Decision::Continue { .. } => return dispatch(row, next, write, lease, world, now),
        Decision::Manual {
            reason: ManualReason::UnsafeEffect { reason },
        } => HoldReason::gate(reason),
        Decision::Stop { reason } => HoldReason::PolicyStop { reason },
        Decision::Manual { reason } => HoldReason::NoRecovery { reason },
    };
    next.state = RouteState::NeedsManual;
    next.manual_reason = Some(reason);
    plan(row, next, write, Effect::Nothing)
}

fn slots(row: &RouteRecord) -> Vec<CandidateSlot> {
    row.candidates
        .iter()
        .map(|c| CandidateSlot {
            enabled: c.enabled,
            name: c.name.clone(),
            policy: c.policy.clone(),
            kind: Some(c.agent.kind),
        })
        .collect()
}

/// The running attempt lost its engine (`cause`): it may have had effects,
/// so it is recorded as interrupted and the route waits for a person.
pub fn interrupted(row: &RouteRow, cause: Interruption, now: DateTime<Utc>) -> Option<Plan> {
    if transitions::after(row.state, Event::Interrupted).is_empty() {
        return None;
    }
    let mut next = base(row, now);
    next.state = RouteState::NeedsManual;
    next.owner = None;
    next.lease_until = None;
    next.manual_reason = Some(HoldReason::Interrupted {
        attempt: row.attempts,
        cause,
    });
    let write = TransitionWrite {
        result: Some(bare_result(row.attempts, AttemptOutcome::Interrupted, now)),
        probe_end: Some(ProbeEnd::Released),
        ..TransitionWrite::default()
    };
    Some(plan(row, next, write, Effect::Nothing))
}

/// A waiting route as an adopting engine took it over with `lease` (the
/// store's claim committed that): the row it then follows.
pub fn taken_over(mut row: RouteRow, lease: Lease<'_>) -> RouteRow {
    row.0.owner = Some(lease.owner.to_string());
    row.0.lease_until = Some(lease.until);
    row
}

/// How an attempt whose route had moved on (stopped, taken over) ended.
#[derive(Debug, Clone)]
pub enum Late {
    Succeeded,
    /// Classified like any failure, with its evidence marked not current.
    Failed(Box<Failure>),
    Killed,
}

/// The result of an attempt that ended after its route moved on: recorded
/// in the history, deciding nothing.
pub fn late_result(number: u32, late: Late, now: DateTime<Utc>) -> AttemptResultRecord {
    let outcome = match &late {
        Late::Succeeded => AttemptOutcome::Succeeded,
        Late::Failed(_) => AttemptOutcome::Failed,
        Late::Killed => AttemptOutcome::Killed,
    };
    let mut result = bare_result(number, outcome, now);
    result.decision = Some(Decided::MovedOn);
    if let Late::Failed(f) = late {
        let f = *f;
        result.excerpt = Some(excerpt(&f.evidence.message));
        result.classification = Some(f.classification);
        result.effect = Some(f.effect);
        result.evidence = Some(f.evidence);
    }
    result
}

/// Sanitized text cut to a one-screen excerpt.
pub fn excerpt(text: &str) -> String {
    const MAX: usize = 300;
    if text.len() <= MAX {
        return text.to_string();
    }
    let mut end = MAX;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

#[cfg(test)]
mod tests;
