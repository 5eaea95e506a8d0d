//! The route state machine, pure: given a route row, an event and `now`,
//! what the next row is and which effect (dispatch, timer, kill) follows.
//!
//! No IO here. The engine commits the returned [`Plan`] with one
//! compare-and-set and performs its [`Effect`] only after the commit.

use chrono::{DateTime, Utc};

use super::transitions::{self, Event};
use super::{
    AttemptOutcome, AttemptRecord, AttemptResultRecord, HoldReason, ManualAction, NewRoute,
    RouteRow, RouteState, TransitionWrite,
};
use crate::classification::Classification;
use crate::evaluator::{self, CandidateSlot, Decision, HistoryWording, ManualReason, RouteCycle};
use crate::evidence::Evidence;
use crate::profile::{Candidate, Profile};
use crate::safety::{self, EffectContext};

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

/// Actions valid in the row's current state, in display order: the
/// [`transitions`] table's, less a skip when no candidate is left to skip to.
pub fn valid_actions(row: &RouteRow) -> Vec<ManualAction> {
    let skip = next_eligible(row).is_some();
    transitions::actions(row.state)
        .filter(|a| skip || *a != ManualAction::SkipNow)
        .collect()
}

/// Where a skip from the row's current candidate goes: the next enabled
/// candidate not excluded this cycle; `None` on the last one.
pub fn next_eligible(row: &RouteRow) -> Option<u32> {
    let enabled = row.candidates.iter().map(|c| c.enabled);
    row.cycle.next_eligible(enabled, row.candidate_index + 1)
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
    let slot = (row.candidate_index, &row.candidates[index]);
    attempt_record(
        row.id,
        row.attempts + 1,
        row.generation + 1,
        slot,
        owner,
        now,
    )
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
    }
}

/// A new route on `profile`, running its first enabled candidate; `None`
/// when the profile has no enabled candidate.
pub fn start(
    profile: &Profile,
    prompt: String,
    cwd: Option<String>,
    lease: Lease<'_>,
    now: DateTime<Utc>,
) -> Option<NewRoute> {
    let enabled = profile.candidates.iter().map(|c| c.enabled);
    let first = RouteCycle::default().next_eligible(enabled, 0)?;
    Some(NewRoute {
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

impl NewRoute {
    /// The route's first attempt (generation 1), once the store has given
    /// the route its id.
    pub fn first_attempt(&self, route_id: u32) -> AttemptRecord {
        let index = self.candidate_index as usize;
        let slot = (self.candidate_index, &self.candidates[index]);
        attempt_record(route_id, 1, 1, slot, &self.owner, self.now)
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
    if transitions::after(row.state, Event::TimerFired).is_empty() {
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
    let mut next = base(row, now);
    // A person's action ends the pending wait's schedule, except retry-now
    // during a wait: that runs the scheduled attempt early.
    if !(action == ManualAction::RetryNow && row.state.is_waiting()) {
        next.pending_outcome = None;
    }
    let write = TransitionWrite::default();
    Ok(match action {
        ManualAction::RetryNow => {
            // From a wait it only brings the scheduled attempt forward; once
            // automatic recovery has ended, a person's retry renews the
            // candidate's budget (a fresh cycle for all is stop + resume).
            if row.state == RouteState::NeedsManual {
                next.cycle = row.cycle.with_fresh_budget(row.candidate_index);
            }
            dispatch(row, next, write, lease.owner, lease.until, now)
        }
        ManualAction::SkipNow => {
            let index = next_eligible(row).ok_or(Refusal::NoCandidateLeft)?;
            next.cycle = row.cycle.skip_to(index);
            next.candidate_index = index;
            dispatch(row, next, write, lease.owner, lease.until, now)
        }
        ManualAction::CancelWait => {
            next.state = RouteState::NeedsManual;
            next.manual_reason = Some(HoldReason::WaitCancelled);
            plan(row, next, write, Effect::Nothing)
        }
        ManualAction::Stop => stop(row, next, now),
        ManualAction::Resume => {
            next.cycle = RouteCycle::new(row.candidate_index);
            dispatch(row, next, write, lease.owner, lease.until, now)
        }
    })
}

/// Cancelling a cancelled wait and stopping a stopped route change nothing.
fn already_done(row: &RouteRow, action: ManualAction) -> bool {
    match action {
        ManualAction::CancelWait => {
            row.state == RouteState::NeedsManual
                && row.manual_reason == Some(HoldReason::WaitCancelled)
        }
        ManualAction::Stop => row.state == RouteState::Stopped,
        ManualAction::RetryNow | ManualAction::SkipNow | ManualAction::Resume => false,
    }
}

fn stop(row: &RouteRow, mut next: RouteRow, now: DateTime<Utc>) -> Plan {
    next.state = RouteState::Stopped;
    next.manual_reason = Some(HoldReason::StoppedByYou);
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
        dispatch: None,
        result: Some(bare_result(number, AttemptOutcome::Succeeded, now)),
    };
    Some(plan(row, next, write, Effect::Nothing))
}

/// A failed attempt, already sanitized and classified.
#[derive(Debug, Clone)]
pub struct Failure {
    pub number: u32,
    pub evidence: Evidence,
    pub classification: Classification,
    pub effect: EffectContext,
}

/// The running attempt failed: gate, evaluate, and plan what the decision
/// says; `None` unless the route is running.
pub fn failed(
    row: &RouteRow,
    failure: Failure,
    lease: Lease<'_>,
    now: DateTime<Utc>,
) -> Option<Plan> {
    if transitions::after(row.state, Event::AttemptFailed).is_empty() {
        return None;
    }
    let index = row.candidate_index as usize;
    let verdict = safety::gate(&failure.effect);
    let decision = evaluator::evaluate(
        &row.cycle,
        &failure.classification,
        &verdict,
        &slots(row),
        now,
    );
    let policy = row.candidates[index].policy.clone();
    let mut next = base(row, now);
    next.cycle = row.cycle.apply(&decision);
    next.classification = Some(failure.classification.clone());
    next.failed_candidate = Some(row.candidate_index);
    next.policy = Some(policy.clone());
    next.decision = Some(decision.describe(&HistoryWording));
    // Pending only while this candidate waits or retries: after a skip it
    // belongs to a candidate no longer running, and after a stop by the
    // gate or policy it will never apply.
    next.pending_outcome = match decision {
        Decision::WaitForReset { .. } | Decision::Retry { .. } => failure
            .classification
            .class
            .policy_class()
            .map(|c| policy.section(c).on_exhausted),
        Decision::Skip { .. } | Decision::Stop { .. } | Decision::Manual { .. } => None,
    };
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
    Some(follow(row, next, write, &decision, lease, now))
}

/// Plans what `decision` says: wait, retry, dispatch the next candidate, or
/// hand the route to a person.
fn follow(
    row: &RouteRow,
    mut next: RouteRow,
    write: TransitionWrite,
    decision: &Decision,
    lease: Lease<'_>,
    now: DateTime<Utc>,
) -> Plan {
    let reason = match decision {
        Decision::WaitForReset { until, .. } => {
            next.state = RouteState::WaitingReset;
            next.deadline = Some(*until);
            return plan(row, next, write, Effect::Arm(*until));
        }
        Decision::Retry { at, .. } => {
            next.state = RouteState::RetryScheduled;
            next.deadline = Some(*at);
            return plan(row, next, write, Effect::Arm(*at));
        }
        Decision::Skip { next: index, .. } => {
            next.candidate_index = *index;
            return dispatch(row, next, write, lease.owner, lease.until, now);
        }
        Decision::Manual {
            reason: ManualReason::UnsafeEffect { reason },
        } => HoldReason::UnsafeEffect(*reason),
        Decision::Stop { reason } => HoldReason::Explained(reason.describe()),
        Decision::Manual { reason } => HoldReason::Explained(reason.describe()),
    };
    next.state = RouteState::NeedsManual;
    next.manual_reason = Some(reason);
    plan(row, next, write, Effect::Nothing)
}

fn slots(row: &RouteRow) -> Vec<CandidateSlot> {
    row.candidates
        .iter()
        .map(|c| CandidateSlot {
            enabled: c.enabled,
            name: c.name.clone(),
            policy: c.policy.clone(),
        })
        .collect()
}

/// Found `Running` at restart: the attempt may have had effects, so it is
/// recorded as interrupted and the route waits for a person.
pub fn interrupted(row: &RouteRow, why: &str, now: DateTime<Utc>) -> Option<Plan> {
    if transitions::after(row.state, Event::Interrupted).is_empty() {
        return None;
    }
    let mut next = base(row, now);
    next.state = RouteState::NeedsManual;
    next.owner = None;
    next.lease_until = None;
    next.manual_reason = Some(HoldReason::Explained(format!(
        "attempt {} was still running when {why}; it may have done work, so it is not replayed \
         automatically — check the workspace, then retry now, skip or stop",
        row.attempts
    )));
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
    use std::collections::BTreeSet;

    use chrono::TimeZone;

    use super::*;
    use crate::agent::{AgentSpec, SimStep};
    use crate::classification::SemanticCode;
    use crate::policy::{CandidatePolicy, ClassPolicy, Exhausted};
    use crate::safety::PromptDelivery;
    use crate::simulation::SimulatedFailure;

    fn now() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 12, 2, 12, 0, 0).unwrap()
    }

    fn candidate(id: u32, enabled: bool) -> Candidate {
        Candidate {
            id,
            name: format!("c{id}"),
            enabled,
            agent: AgentSpec::simulated(vec![SimStep::Succeed { after_ms: 1 }]),
            policy: CandidatePolicy::default_for_new_candidate(),
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
            cycle: RouteCycle::new(0),
            classification: None,
            policy: None,
            decision: None,
            failed_candidate: None,
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
        r.manual_reason = Some(HoldReason::WaitCancelled);
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
    fn retry_now_from_needs_manual_renews_only_the_current_candidates_budget() {
        let mut r = row(
            RouteState::NeedsManual,
            vec![candidate(1, true), candidate(2, true)],
        );
        r.cycle = r.cycle.apply(&crate::evaluator::Decision::Retry {
            class: crate::classification::PolicyClass::Transient,
            at: now(),
            ordinal: 1,
            max_retries: 1,
            delay_seconds: 5,
        });
        r.cycle.excluded.insert(1);
        let plan = manual(&r, ManualAction::RetryNow, 4, lease(), now()).unwrap();
        assert!(plan.next.cycle.usage.is_empty(), "retries used are cleared");
        assert_eq!(
            plan.next.cycle.excluded, r.cycle.excluded,
            "a skipped candidate stays skipped: only resume starts a new cycle"
        );
        let mut waiting = r.clone();
        waiting.state = RouteState::RetryScheduled;
        let plan = manual(&waiting, ManualAction::RetryNow, 4, lease(), now()).unwrap();
        assert_eq!(
            plan.next.cycle, r.cycle,
            "from a wait the attempt was already counted"
        );
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
        assert!(plan.next.cycle.excluded.contains(&0));
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
        c.policy = CandidatePolicy::both(ClassPolicy::new(None, Some((5, 1)), Exhausted::Skip));
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
        let classification = crate::catalogue::classify(&evidence, chrono_tz::UTC);
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
        let plan = failed(&r, failure, lease(), now()).expect("the route is running");
        assert_eq!(plan.next.state, RouteState::NeedsManual);
        assert_eq!(plan.effect, Effect::Nothing, "nothing dispatched");
        let reason = plan.next.manual_reason.unwrap();
        assert!(
            reason
                .text()
                .starts_with("not safe to recover automatically"),
            "{reason:?}"
        );
    }

    /// A failed attempt of `code`; a reset hint `reset_in_s` ahead, if any.
    fn failure_of(code: SemanticCode, reset_in_s: Option<i32>) -> Failure {
        let mut simulated = SimulatedFailure::of(code);
        simulated.reset_in_seconds = reset_in_s;
        let evidence = crate::evidence::Evidence {
            provider: crate::evidence::Provider::ClaudeCode,
            message: "failed".into(),
            truncated: false,
            phase: None,
            http_status: None,
            headers: Default::default(),
            error_type: None,
            exit_code: Some(1),
            occurred_at: now(),
            correlation: None,
        };
        Failure {
            number: 3,
            evidence,
            classification: simulated.classification(now()),
            effect: simulated.effect_context(),
        }
    }

    /// Every target of `event` from a route in `state` that the machine
    /// reaches: the failure cases between them cover each decision.
    fn machine_targets(state: RouteState, event: Event) -> BTreeSet<&'static str> {
        let waiting = CandidatePolicy {
            transient: ClassPolicy::new(None, Some((2, 5)), Exhausted::Skip),
            hard: ClassPolicy::new(Some(600), None, Exhausted::Stop),
        };
        let mut r = row(state, vec![candidate(1, true), candidate(2, true)]);
        r.candidates[0].policy = waiting;
        let reached: Vec<Option<RouteState>> = match event {
            Event::TimerFired => vec![timer_fired(&r, lease(), now()).map(|p| p.next.state)],
            Event::AttemptSucceeded => vec![succeeded(&r, 3, now()).map(|p| p.next.state)],
            Event::Interrupted => vec![interrupted(&r, "it stopped", now()).map(|p| p.next.state)],
            Event::AttemptFailed => {
                let skipping = row(state, vec![candidate(1, true), candidate(2, true)]);
                [
                    (&r, failure_of(SemanticCode::ProviderOverloaded, None)),
                    (&r, failure_of(SemanticCode::UsageLimitReached, Some(60))),
                    (&r, failure_of(SemanticCode::TaskFailed, None)),
                    (
                        &skipping,
                        failure_of(SemanticCode::ProviderOverloaded, None),
                    ),
                ]
                .into_iter()
                .map(|(r, f)| failed(r, f, lease(), now()).map(|p| p.next.state))
                .collect()
            }
            Event::Manual(action) => {
                vec![manual(&r, action, r.generation, lease(), now())
                    .ok()
                    .map(|p| p.next.state)]
            }
        };
        reached
            .into_iter()
            .flatten()
            .map(RouteState::as_str)
            .collect()
    }

    #[test]
    fn every_state_and_event_does_what_the_transition_table_says() {
        for state in RouteState::ALL {
            for event in Event::ALL {
                let table: BTreeSet<&str> = transitions::after(state, event)
                    .iter()
                    .map(|s| s.as_str())
                    .collect();
                assert_eq!(
                    machine_targets(state, event),
                    table,
                    "{event:?} from {state:?}: the machine and the table must agree, \
                     including that a refused event changes nothing"
                );
            }
        }
    }

    #[test]
    fn a_new_route_runs_its_first_enabled_candidate_and_numbers_attempts_like_any_dispatch() {
        let profile = Profile {
            id: 1,
            name: "p".into(),
            revision: 1,
            candidates: vec![candidate(1, false), candidate(2, true)],
            created_at: now(),
            updated_at: now(),
        };
        let new = start(&profile, "go".into(), None, lease(), now()).expect("one is enabled");
        assert_eq!(
            (new.candidate_index, new.cycle.current),
            (1, 1),
            "a disabled first candidate is passed over"
        );
        let first = new.first_attempt(7);
        assert_eq!((first.number, first.generation), (1, 1));
        assert_eq!(
            first.invocation_id, "r7-a1-me",
            "the same format as every later attempt"
        );
        let mut none = profile.clone();
        none.candidates[1].enabled = false;
        assert!(start(&none, "go".into(), None, lease(), now()).is_none());
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
