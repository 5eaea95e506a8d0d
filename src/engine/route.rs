//! The route state machine, pure: given a route row, an event and `now`,
//! what the next row is and which effect (dispatch, timer, kill) follows.
//!
//! No IO here. The engine commits the returned [`Plan`] with one
//! compare-and-set and performs its [`Effect`] only after the commit.

use chrono::{DateTime, Utc};

use super::pipeline::{self, Next};
use super::{AttemptOutcome, ManualAction, RouteState};
use crate::classification::Classification;
use crate::evidence::Evidence;
use crate::safety::EffectContext;
use crate::store::{AttemptRecord, AttemptResultRecord, RouteRow, TransitionWrite};

/// Shown when a person cancels a wait; also marks a cancel as already done.
pub const WAIT_CANCELLED: &str =
    "wait cancelled by you; retry now, skip to the next candidate, or stop";

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

/// A transition ready to commit.
#[derive(Debug, Clone)]
pub struct Plan {
    pub expected_state: RouteState,
    pub expected_generation: u32,
    pub next: RouteRow,
    pub write: TransitionWrite,
    pub effect: Effect,
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
}

/// Actions valid in the row's current state, in display order.
pub fn valid_actions(row: &RouteRow) -> Vec<ManualAction> {
    let skip = next_eligible(row).is_some();
    let mut actions = match row.state {
        RouteState::Running => vec![ManualAction::Stop],
        RouteState::WaitingReset | RouteState::RetryScheduled => vec![
            ManualAction::RetryNow,
            ManualAction::SkipNow,
            ManualAction::CancelWait,
            ManualAction::Stop,
        ],
        RouteState::NeedsManual => vec![
            ManualAction::RetryNow,
            ManualAction::SkipNow,
            ManualAction::Stop,
        ],
        RouteState::Stopped => vec![ManualAction::Resume],
        RouteState::Succeeded => Vec::new(),
    };
    if !skip {
        actions.retain(|a| *a != ManualAction::SkipNow);
    }
    actions
}

/// First enabled candidate after the current one not excluded this cycle.
pub fn next_eligible(row: &RouteRow) -> Option<usize> {
    let current = row.candidate_index as usize;
    (current + 1..row.candidates.len())
        .find(|i| row.candidates[*i].enabled && !pipeline::cycle_excludes(&row.cycle, *i))
}

fn base(row: &RouteRow, now: DateTime<Utc>) -> RouteRow {
    RouteRow {
        deadline: None,
        manual_reason: None,
        updated_at: now,
        ..row.clone()
    }
}

fn plan(row: &RouteRow, next: RouteRow, write: TransitionWrite, effect: Effect) -> Plan {
    Plan {
        expected_state: row.state,
        expected_generation: row.generation,
        next,
        write,
        effect,
    }
}

/// A new attempt of the row's current candidate, at the next generation.
fn attempt(row: &RouteRow, owner: &str, now: DateTime<Utc>) -> AttemptRecord {
    let index = row.candidate_index as usize;
    let number = row.attempts + 1;
    AttemptRecord {
        number,
        generation: row.generation + 1,
        candidate_index: row.candidate_index,
        candidate_id: row.candidates[index].id,
        candidate_name: row.candidates[index].name.clone(),
        invocation_id: format!("r{}-a{}-{}", row.id, number, owner),
        started_at: now,
    }
}

/// Dispatches the current candidate of `next` (taking ownership).
fn dispatch(
    row: &RouteRow,
    mut next: RouteRow,
    mut write: TransitionWrite,
    owner: &str,
    lease_until: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Plan {
    next.state = RouteState::Running;
    next.owner = Some(owner.to_string());
    next.lease_until = Some(lease_until);
    let a = attempt(&next, owner, now);
    write.dispatch = Some(a.clone());
    plan(row, next, write, Effect::Dispatch(a))
}

/// Ownership handed over with a transition.
#[derive(Debug, Clone, Copy)]
pub struct Lease<'a> {
    pub owner: &'a str,
    pub until: DateTime<Utc>,
}

/// A pending wait or retry came due.
pub fn timer_fired(row: &RouteRow, lease: Lease<'_>, now: DateTime<Utc>) -> Option<Plan> {
    if !row.state.is_waiting() {
        return None;
    }
    let next = base(row, now);
    Some(dispatch(
        row,
        next,
        TransitionWrite::default(),
        lease.owner,
        lease.until,
        now,
    ))
}

/// A person asked for `action` at `expected_generation`.
pub fn manual(
    row: &RouteRow,
    action: ManualAction,
    expected_generation: u32,
    lease: Lease<'_>,
    now: DateTime<Utc>,
) -> Result<Plan, Refusal> {
    if already_done(row, action) {
        return Err(Refusal::AlreadyDone);
    }
    if row.generation != expected_generation {
        return Err(Refusal::Stale);
    }
    if !valid_actions(row).contains(&action) {
        if action == ManualAction::SkipNow && next_eligible(row).is_none() {
            return Err(Refusal::NoCandidateLeft);
        }
        return Err(Refusal::NotValid {
            action,
            state: row.state,
        });
    }
    let next = base(row, now);
    let write = TransitionWrite::default();
    Ok(match action {
        ManualAction::RetryNow => dispatch(row, next, write, lease.owner, lease.until, now),
        ManualAction::SkipNow => {
            let index = next_eligible(row).ok_or(Refusal::NoCandidateLeft)?;
            let mut next = next;
            next.cycle = pipeline::skip_to(&row.cycle, index);
            next.candidate_index = index as u32;
            dispatch(row, next, write, lease.owner, lease.until, now)
        }
        ManualAction::CancelWait => {
            let mut next = next;
            next.state = RouteState::NeedsManual;
            next.manual_reason = Some(WAIT_CANCELLED.to_string());
            plan(row, next, write, Effect::Nothing)
        }
        ManualAction::Stop => stop(row, next, now),
        ManualAction::Resume => {
            let mut next = next;
            next.cycle = pipeline::new_cycle(row.candidate_index as usize);
            next.pending_outcome = None;
            dispatch(row, next, write, lease.owner, lease.until, now)
        }
    })
}

/// Cancelling a cancelled wait and stopping a stopped route change nothing.
fn already_done(row: &RouteRow, action: ManualAction) -> bool {
    match action {
        ManualAction::CancelWait => {
            row.state == RouteState::NeedsManual
                && row.manual_reason.as_deref() == Some(WAIT_CANCELLED)
        }
        ManualAction::Stop => row.state == RouteState::Stopped,
        ManualAction::RetryNow | ManualAction::SkipNow | ManualAction::Resume => false,
    }
}

fn stop(row: &RouteRow, mut next: RouteRow, now: DateTime<Utc>) -> Plan {
    next.state = RouteState::Stopped;
    next.manual_reason = Some("stopped by you".to_string());
    let mut write = TransitionWrite::default();
    let effect = if row.state == RouteState::Running {
        write.result = Some(bare_result(row.attempts, AttemptOutcome::Killed, now));
        Effect::Kill
    } else {
        Effect::Nothing
    };
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

/// The running attempt succeeded.
pub fn succeeded(row: &RouteRow, number: u32, now: DateTime<Utc>) -> Plan {
    let mut next = base(row, now);
    next.state = RouteState::Succeeded;
    next.owner = None;
    next.lease_until = None;
    next.pending_outcome = None;
    let write = TransitionWrite {
        dispatch: None,
        result: Some(bare_result(number, AttemptOutcome::Succeeded, now)),
    };
    plan(row, next, write, Effect::Nothing)
}

/// A failed attempt, already sanitized and classified.
#[derive(Debug, Clone)]
pub struct Failure {
    pub number: u32,
    pub evidence: Evidence,
    pub classification: Classification,
    pub effect: EffectContext,
}

/// The running attempt failed: gate, evaluate, and plan what the decision says.
pub fn failed(row: &RouteRow, failure: Failure, lease: Lease<'_>, now: DateTime<Utc>) -> Plan {
    let index = row.candidate_index as usize;
    let slots = slots(row);
    let verdict = pipeline::gate(&failure.effect);
    let (decision, cycle) =
        pipeline::evaluate(&row.cycle, &failure.classification, &verdict, &slots, now);
    let policy = row.candidates[index].policy.clone();
    let mut next = base(row, now);
    next.cycle = cycle;
    next.classification = Some(failure.classification.clone());
    next.policy = Some(policy.clone());
    next.decision = Some(pipeline::describe(&decision));
    next.pending_outcome = failure
        .classification
        .class
        .policy_class()
        .map(|c| pipeline::exhausted_outcome(&policy, c));
    let write = TransitionWrite {
        dispatch: None,
        result: Some(AttemptResultRecord {
            number: failure.number,
            finished_at: now,
            outcome: AttemptOutcome::Failed,
            excerpt: Some(excerpt(&failure.evidence.message)),
            classification: Some(failure.classification),
            effect: Some(failure.effect),
            policy_revision: Some(row.candidates[index].policy_revision),
            policy: Some(policy),
            decision: next.decision.clone(),
            evidence: Some(failure.evidence),
        }),
    };
    follow(row, next, write, pipeline::next_step(&decision), lease, now)
}

fn follow(
    row: &RouteRow,
    mut next: RouteRow,
    write: TransitionWrite,
    step: Next,
    lease: Lease<'_>,
    now: DateTime<Utc>,
) -> Plan {
    match step {
        Next::Wait { until, .. } => {
            next.state = RouteState::WaitingReset;
            next.deadline = Some(until);
            plan(row, next, write, Effect::Arm(until))
        }
        Next::Retry { at, .. } => {
            next.state = RouteState::RetryScheduled;
            next.deadline = Some(at);
            plan(row, next, write, Effect::Arm(at))
        }
        Next::Dispatch { index } => {
            next.candidate_index = index as u32;
            dispatch(row, next, write, lease.owner, lease.until, now)
        }
        Next::Manual { reason } => {
            next.state = RouteState::NeedsManual;
            next.manual_reason = Some(reason);
            plan(row, next, write, Effect::Nothing)
        }
    }
}

fn slots(row: &RouteRow) -> Vec<pipeline::CandidateSlot> {
    row.candidates
        .iter()
        .map(|c| pipeline::CandidateSlot {
            enabled: c.enabled,
            name: c.name.clone(),
            policy: c.policy.clone(),
        })
        .collect()
}

/// Found `Running` at restart: the attempt may have had effects, so it is
/// recorded as interrupted and the route waits for a person.
pub fn interrupted(row: &RouteRow, why: &str, now: DateTime<Utc>) -> Option<Plan> {
    if row.state != RouteState::Running {
        return None;
    }
    let mut next = base(row, now);
    next.state = RouteState::NeedsManual;
    next.owner = None;
    next.lease_until = None;
    next.manual_reason = Some(format!(
        "attempt {} was still running when {why}; it may have done work, so it is not replayed \
         automatically — check the workspace, then retry now, skip or stop",
        row.attempts
    ));
    let write = TransitionWrite {
        dispatch: None,
        result: Some(bare_result(row.attempts, AttemptOutcome::Interrupted, now)),
    };
    Some(plan(row, next, write, Effect::Nothing))
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
