//! The route state machine, pure: given a route row, an event and `now`,
//! what the next row is and which effect (dispatch, timer, kill) follows.
//!
//! No IO here. The engine commits the returned [`Plan`] with one
//! compare-and-set and performs its [`Effect`] only after the commit.

use chrono::{DateTime, Utc};

use super::pipeline::{self, Next};
use super::{AttemptOutcome, ManualAction, RouteState};
use crate::classification::Classification;
use crate::evaluator::HistoryWording;
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
    next.decision = Some(decision.describe(&HistoryWording));
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
        Next::Wait { until } => {
            next.state = RouteState::WaitingReset;
            next.deadline = Some(until);
            plan(row, next, write, Effect::Arm(until))
        }
        Next::Retry { at } => {
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

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;
    use crate::engine::{AgentSpec, Candidate, SimStep};
    use crate::safety::PromptDelivery;

    fn now() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 12, 2, 12, 0, 0).unwrap()
    }

    fn candidate(id: u32, enabled: bool) -> Candidate {
        Candidate {
            id,
            name: format!("c{id}"),
            enabled,
            agent: AgentSpec::simulated(vec![SimStep::Succeed { after_ms: 1 }]),
            policy: pipeline::default_policy(),
            policy_revision: 1,
        }
    }

    fn row(state: RouteState, candidates: Vec<Candidate>) -> RouteRow {
        RouteRow {
            id: 7,
            profile_id: Some(1),
            profile_name: "p".into(),
            prompt: "do it".into(),
            cwd: None,
            state,
            generation: 4,
            candidate_index: 0,
            candidates,
            cycle: pipeline::new_cycle(0),
            classification: None,
            policy: None,
            decision: None,
            deadline: state
                .is_waiting()
                .then(|| now() + chrono::Duration::seconds(30)),
            pending_outcome: None,
            manual_reason: None,
            owner: Some("me".into()),
            lease_until: None,
            attempts: 3,
            created_at: now(),
            updated_at: now(),
        }
    }

    fn lease() -> Lease<'static> {
        Lease {
            owner: "me",
            until: now() + chrono::Duration::seconds(15),
        }
    }

    #[test]
    fn each_state_offers_its_actions_and_skip_only_with_a_next_candidate() {
        use ManualAction::*;
        let two = || vec![candidate(1, true), candidate(2, true)];
        let expected = [
            (RouteState::Running, vec![Stop]),
            (
                RouteState::WaitingReset,
                vec![RetryNow, SkipNow, CancelWait, Stop],
            ),
            (
                RouteState::RetryScheduled,
                vec![RetryNow, SkipNow, CancelWait, Stop],
            ),
            (RouteState::NeedsManual, vec![RetryNow, SkipNow, Stop]),
            (RouteState::Stopped, vec![Resume]),
            (RouteState::Succeeded, vec![]),
        ];
        for (state, actions) in expected {
            assert_eq!(valid_actions(&row(state, two())), actions, "{state:?}");
        }
        let lone = row(
            RouteState::NeedsManual,
            vec![candidate(1, true), candidate(2, false)],
        );
        assert_eq!(
            valid_actions(&lone),
            vec![RetryNow, Stop],
            "a disabled candidate is not a skip target"
        );
    }

    #[test]
    fn action_with_an_old_generation_is_stale() {
        let r = row(RouteState::RetryScheduled, vec![candidate(1, true)]);
        let refusal = manual(&r, ManualAction::RetryNow, 3, lease(), now()).unwrap_err();
        assert_eq!(refusal, Refusal::Stale);
    }

    #[test]
    fn repeated_cancel_and_stop_are_already_done_whatever_the_generation() {
        let mut r = row(RouteState::NeedsManual, vec![candidate(1, true)]);
        r.manual_reason = Some(WAIT_CANCELLED.to_string());
        let refusal = manual(&r, ManualAction::CancelWait, 1, lease(), now()).unwrap_err();
        assert_eq!(refusal, Refusal::AlreadyDone);
        let stopped = row(RouteState::Stopped, vec![candidate(1, true)]);
        let refusal = manual(&stopped, ManualAction::Stop, 1, lease(), now()).unwrap_err();
        assert_eq!(refusal, Refusal::AlreadyDone);
    }

    #[test]
    fn stopping_a_running_route_kills_and_records_the_attempt() {
        let r = row(RouteState::Running, vec![candidate(1, true)]);
        let plan = manual(&r, ManualAction::Stop, 4, lease(), now()).unwrap();
        assert_eq!(plan.effect, Effect::Kill);
        assert_eq!(plan.next.state, RouteState::Stopped);
        let result = plan
            .write
            .result
            .expect("killed attempt recorded in the same commit");
        assert_eq!((result.number, result.outcome), (3, AttemptOutcome::Killed));
    }

    #[test]
    fn retry_now_dispatches_the_next_attempt_and_clears_the_deadline() {
        let r = row(RouteState::RetryScheduled, vec![candidate(1, true)]);
        let plan = manual(&r, ManualAction::RetryNow, 4, lease(), now()).unwrap();
        let Effect::Dispatch(a) = plan.effect else {
            panic!("retry-now dispatches");
        };
        assert_eq!(
            (a.number, a.generation),
            (4, 5),
            "next attempt at the next generation"
        );
        assert_eq!(a.invocation_id, "r7-a4-me");
        assert_eq!(plan.next.deadline, None);
        assert_eq!(
            plan.next.owner.as_deref(),
            Some("me"),
            "dispatcher takes the lease"
        );
    }

    #[test]
    fn skip_now_excludes_the_current_candidate() {
        let r = row(
            RouteState::NeedsManual,
            vec![candidate(1, true), candidate(2, true)],
        );
        let plan = manual(&r, ManualAction::SkipNow, 4, lease(), now()).unwrap();
        assert_eq!(plan.next.candidate_index, 1);
        assert!(pipeline::cycle_excludes(&plan.next.cycle, 0));
        assert_eq!(
            manual(&plan.next, ManualAction::SkipNow, 4, lease(), now()).unwrap_err(),
            Refusal::NoCandidateLeft
        );
    }

    #[test]
    fn only_waiting_routes_dispatch_on_a_timer() {
        for state in RouteState::ALL {
            let r = row(state, vec![candidate(1, true)]);
            assert_eq!(
                timer_fired(&r, lease(), now()).is_some(),
                state.is_waiting(),
                "{state:?}"
            );
        }
    }

    #[test]
    fn only_running_routes_are_interrupted() {
        for state in RouteState::ALL {
            let r = row(state, vec![candidate(1, true)]);
            let plan = interrupted(&r, "its engine stopped", now());
            assert_eq!(plan.is_some(), state == RouteState::Running, "{state:?}");
        }
    }

    #[test]
    fn failure_after_tool_use_goes_to_manual_whatever_the_policy() {
        let mut c = candidate(1, true);
        c.policy = pipeline::build_policy(
            pipeline::SectionSpec {
                reset_wait_max_s: None,
                retry: Some((5, 1)),
                exhausted: pipeline::PendingOutcome::Skip,
            },
            pipeline::SectionSpec {
                reset_wait_max_s: None,
                retry: Some((5, 1)),
                exhausted: pipeline::PendingOutcome::Skip,
            },
        );
        let r = row(RouteState::Running, vec![c, candidate(2, true)]);
        let evidence = crate::evidence::Evidence {
            provider: crate::evidence::Provider::ClaudeCode,
            message: "connection reset".into(),
            truncated: false,
            phase: None,
            http_status: None,
            headers: Default::default(),
            error_type: None,
            exit_code: Some(1),
            occurred_at: now(),
            correlation: None,
        };
        let classification = pipeline::classify(&evidence);
        let failure = Failure {
            number: 3,
            evidence,
            classification,
            effect: EffectContext {
                prompt_delivery: Some(PromptDelivery::Confirmed),
                assistant_output_seen: Some(true),
                tool_activity_seen: Some(true),
                partial_result_seen: Some(false),
                evidence_current: Some(true),
            },
        };
        let plan = failed(&r, failure, lease(), now());
        assert_eq!(plan.next.state, RouteState::NeedsManual);
        assert_eq!(plan.effect, Effect::Nothing, "nothing dispatched");
        let reason = plan.next.manual_reason.unwrap();
        assert!(
            reason.starts_with("not safe to recover automatically"),
            "{reason}"
        );
    }

    #[test]
    fn excerpt_is_cut_on_a_char_boundary() {
        let text = "é".repeat(400);
        let cut = excerpt(&text);
        assert!(cut.ends_with('…'));
        assert!(cut.len() <= 300 + '…'.len_utf8());
        assert_eq!(excerpt("short"), "short");
    }
}
