//! The state machine, case by case, and against the transition table.
use std::collections::BTreeSet;

use chrono::TimeZone;

use super::*;
use crate::agent::{AgentSpec, SimStep};
use crate::classification::SemanticCode;
use crate::policy::{CandidatePolicy, ClassPolicy, Exhausted};
use crate::route::RouteRecord;
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
    RouteRow(RouteRecord {
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
        archived_at: None,
    })
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
    let refusal = manual(
        &r,
        ManualAction::RetryNow,
        3,
        lease(),
        World::default(),
        now(),
    )
    .unwrap_err();
    assert_eq!(refusal, Refusal::Stale);
}

#[test]
fn repeated_cancel_and_stop_are_already_done_whatever_the_generation() {
    let mut r = row(RouteState::NeedsManual, vec![candidate(1, true)]);
    r.0.manual_reason = Some(HoldReason::WaitCancelled);
    let refusal = manual(
        &r,
        ManualAction::CancelWait,
        1,
        lease(),
        World::default(),
        now(),
    )
    .unwrap_err();
    assert_eq!(refusal, Refusal::AlreadyDone);
    let stopped = row(RouteState::Stopped, vec![candidate(1, true)]);
    let refusal = manual(
        &stopped,
        ManualAction::Stop,
        1,
        lease(),
        World::default(),
        now(),
    )
    .unwrap_err();
    assert_eq!(refusal, Refusal::AlreadyDone);
}

#[test]
fn stopping_a_running_route_kills_and_records_the_attempt() {
    let r = row(RouteState::Running, vec![candidate(1, true)]);
    let plan = manual(&r, ManualAction::Stop, 4, lease(), World::default(), now()).unwrap();
    assert_eq!(*plan.effect(), Effect::Kill);
    assert_eq!(plan.next().state, RouteState::Stopped);
    let result = plan
        .write()
        .result()
        .cloned()
        .expect("killed attempt recorded in the same commit");
    assert_eq!((result.number, result.outcome), (3, AttemptOutcome::Killed));
}

#[test]
fn retry_now_from_needs_manual_renews_only_the_current_candidates_budget() {
    let mut r = row(
        RouteState::NeedsManual,
        vec![candidate(1, true), candidate(2, true)],
    );
    r.0.cycle = r.cycle.apply(&crate::evaluator::Decision::Retry {
        class: crate::classification::PolicyClass::Transient,
        at: now(),
        ordinal: 1,
        max_retries: 1,
        delay_seconds: 5,
    });
    r.0.cycle.excluded.insert(1);
    let plan = manual(
        &r,
        ManualAction::RetryNow,
        4,
        lease(),
        World::default(),
        now(),
    )
    .unwrap();
    assert!(
        plan.next().cycle.usage.is_empty(),
        "retries used are cleared"
    );
    assert_eq!(
        plan.next().cycle.excluded,
        r.cycle.excluded,
        "a skipped candidate stays skipped: only resume starts a new cycle"
    );
    let mut waiting = r.clone();
    waiting.0.state = RouteState::RetryScheduled;
    let plan = manual(
        &waiting,
        ManualAction::RetryNow,
        4,
        lease(),
        World::default(),
        now(),
    )
    .unwrap();
    assert_eq!(
        plan.next().cycle,
        r.cycle,
        "from a wait the attempt was already counted"
    );
}

#[test]
fn retry_now_dispatches_the_next_attempt_and_clears_the_deadline() {
    let r = row(RouteState::RetryScheduled, vec![candidate(1, true)]);
    let plan = manual(
        &r,
        ManualAction::RetryNow,
        4,
        lease(),
        World::default(),
        now(),
    )
    .unwrap();
    let Effect::Dispatch(a) = plan.effect().clone() else {
        panic!("retry-now dispatches");
    };
    assert_eq!(
        (a.number, a.generation),
        (4, 5),
        "next attempt at the next generation"
    );
    assert_eq!(a.invocation_id, "r7-a4-me");
    assert_eq!(plan.next().deadline, None);
    assert_eq!(
        plan.next().owner.as_deref(),
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
    let plan = manual(
        &r,
        ManualAction::SkipNow,
        4,
        lease(),
        World::default(),
        now(),
    )
    .unwrap();
    assert_eq!(plan.next().candidate_index, 1);
    assert!(plan.next().cycle.excluded.contains(&0));
    assert_eq!(
        manual(
            plan.next(),
            ManualAction::SkipNow,
            4,
            lease(),
            World::default(),
            now()
        )
        .unwrap_err(),
        Refusal::NoCandidateLeft
    );
}

#[test]
fn only_waiting_routes_dispatch_on_a_timer() {
    for state in RouteState::ALL {
        let r = row(state, vec![candidate(1, true)]);
        assert_eq!(
            timer_fired(&r, lease(), World::default(), now()).is_some(),
            state.is_waiting(),
            "{state:?}"
        );
    }
}

#[test]
fn only_running_routes_are_interrupted() {
    for state in RouteState::ALL {
        let r = row(state, vec![candidate(1, true)]);
        let plan = interrupted(&r, Interruption::EngineStopped, now());
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
    let plan = failed(&r, failure, lease(), World::default(), now()).expect("the route is running");
    assert_eq!(plan.next().state, RouteState::NeedsManual);
    assert_eq!(*plan.effect(), Effect::Nothing, "nothing dispatched");
    let reason = plan.next().manual_reason.clone().unwrap();
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
    r.0.candidates[0].policy = waiting;
    let reached: Vec<Option<RouteState>> = match event {
        Event::TimerFired => {
            vec![timer_fired(&r, lease(), World::default(), now()).map(|p| p.next.state)]
        }
        Event::AttemptSucceeded => vec![succeeded(&r, 3, now()).map(|p| p.next.state)],
        Event::Interrupted => {
            vec![interrupted(&r, Interruption::EngineStopped, now()).map(|p| p.next.state)]
        }
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
            .map(|(r, f)| failed(r, f, lease(), World::default(), now()).map(|p| p.next.state))
            .collect()
        }
        Event::Manual(action) => {
            vec![
                manual(&r, action, r.generation, lease(), World::default(), now())
                    .ok()
                    .map(|p| p.next.state),
            ]
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
    let new = start(
        &profile,
        "go".into(),
        None,
        lease(),
        World::default(),
        now(),
    )
    .expect("one is enabled");
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
    assert!(start(&none, "go".into(), None, lease(), World::default(), now()).is_err());
}

#[test]
fn excerpt_is_cut_on_a_char_boundary() {
    let text = "é".repeat(400);
    let cut = excerpt(&text);
    assert!(cut.ends_with('…'));
    assert!(cut.len() <= 300 + '…'.len_utf8());
    assert_eq!(excerpt("short"), "short");
}
