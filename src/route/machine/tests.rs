//! The state machine, case by case, and against the transition table.
use std::collections::BTreeSet;

use chrono::TimeZone;

use super::*;
use crate::account::{AccountNames, AccountState, Mark, MarkState, StoredMark};
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
        account: None,
    }
}

/// A candidate whose CLI can resume its sessions.
fn resuming(id: u32) -> Candidate {
    let mut c = candidate(id, true);
    let kind = crate::agent::AgentKind::ALL
        .into_iter()
        .find(|k| k.descriptor().resume.is_some())
        .expect("some kind resumes its sessions");
    c.agent = AgentSpec::default_for(kind);
    c
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
        queued: None,
        owner: Some("me".into()),
        lease_until: None,
        attempts: 3,
        created_at: now(),
        updated_at: now(),
        archived_at: None,
    })
}

/// A person's `action` from the app, as seen at `generation`.
fn ask(action: ManualAction, generation: u32) -> Ask {
    Ask::new(action, generation, crate::route::Actor::App)
}

/// `action` from the app at `generation`, in a clear world, now.
fn act(r: &RouteRow, action: ManualAction, generation: u32) -> Result<Plan, Refusal> {
    manual(r, ask(action, generation), lease(), World::default(), now())
}

/// As [`act`], the person having accepted that it may repeat work.
fn act_accepting(r: &RouteRow, action: ManualAction, generation: u32) -> Result<Plan, Refusal> {
    let asked = ask(action, generation).accepting_repeat();
    manual(r, asked, lease(), World::default(), now())
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
    let two = || vec![resuming(1), resuming(2)];
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
        (
            RouteState::NeedsManual,
            vec![RetryNow, SkipNow, Stop, Continue, Handover],
        ),
        (RouteState::Stopped, vec![Resume, Continue, Handover]),
        (RouteState::Succeeded, vec![]),
    ];
    for (state, actions) in expected {
        assert_eq!(valid_actions(&row(state, two())), actions, "{state:?}");
    }
    let lone = row(
        RouteState::NeedsManual,
        vec![resuming(1), candidate(2, false)],
    );
    assert_eq!(
        valid_actions(&lone),
        vec![RetryNow, Stop, Continue],
        "a disabled candidate is not a skip or hand-over target"
    );
    let simulated = row(RouteState::Stopped, vec![candidate(1, true)]);
    assert_eq!(
        valid_actions(&simulated),
        vec![Resume],
        "a kind that cannot resume a session is not offered Continue"
    );
}

#[test]
fn every_action_a_route_does_not_offer_says_why_as_the_engine_refuses_it() {
    use ManualAction::*;
    for state in RouteState::ALL {
        for candidates in [
            vec![resuming(1), resuming(2)],
            vec![candidate(1, true), candidate(2, false)],
        ] {
            let r = row(state, candidates);
            let offered = valid_actions(&r);
            let why = unavailable(&r);
            for action in ManualAction::ALL {
                let reason = why.iter().find(|(a, _)| *a == action);
                assert_eq!(
                    reason.is_some(),
                    !offered.contains(&action),
                    "{state:?} {action:?}: an action is offered or says why not, never both"
                );
                if reason.is_some() {
                    assert!(
                        act(&r, action, r.generation).is_err(),
                        "{state:?} {action:?}: the engine refuses what the window greys out"
                    );
                }
            }
        }
    }
    let why_not = |r: &RouteRow, action| {
        unavailable(r)
            .into_iter()
            .find(|(a, _)| *a == action)
            .map(|(_, why)| why)
    };
    let running = row(RouteState::Running, vec![resuming(1), resuming(2)]);
    assert_eq!(
        why_not(&running, Continue).as_deref(),
        Some("not possible while the route is running")
    );
    let waiting = row(RouteState::RetryScheduled, vec![resuming(1), resuming(2)]);
    assert_eq!(
        why_not(&waiting, Resume).as_deref(),
        Some("not possible while the route has a retry scheduled"),
        "the state in the app's words (its badge: “Retry scheduled”)"
    );
    let lone = row(
        RouteState::NeedsManual,
        vec![resuming(1), candidate(2, false)],
    );
    assert_eq!(
        why_not(&lone, SkipNow).as_deref(),
        Some("no candidate is left to skip to in this cycle")
    );
    let simulated = row(RouteState::Stopped, vec![candidate(1, true)]);
    assert!(
        why_not(&simulated, Continue).is_some_and(|w| w.contains("cannot resume a session")
            && !w.contains("not possible")
            && !w.to_lowercase().contains("continue")),
        "the kind's own reason, as the engine answers it, not naming the action its label already names"
    );
    assert_eq!(
        why_not(&running, CancelWait).as_deref(),
        Some("there is no wait to cancel: the route is running"),
        "says what is missing, not a bare “not possible”"
    );
    assert_eq!(
        why_not(&simulated, Stop).as_deref(),
        Some("the route is stopped already")
    );
}

#[test]
fn action_with_an_old_generation_is_stale() {
    let r = row(RouteState::RetryScheduled, vec![candidate(1, true)]);
    let refusal = act(&r, ManualAction::RetryNow, 3).unwrap_err();
    assert_eq!(refusal, Refusal::Stale);
}

#[test]
fn repeated_cancel_and_stop_are_already_done_whatever_the_generation() {
    let mut r = row(RouteState::NeedsManual, vec![candidate(1, true)]);
    r.0.manual_reason = Some(HoldReason::WaitCancelled);
    let refusal = act(&r, ManualAction::CancelWait, 1).unwrap_err();
    assert_eq!(refusal, Refusal::AlreadyDone);
    let stopped = row(RouteState::Stopped, vec![candidate(1, true)]);
    let refusal = act(&stopped, ManualAction::Stop, 1).unwrap_err();
    assert_eq!(refusal, Refusal::AlreadyDone);
}

#[test]
fn stopping_a_running_route_kills_and_records_the_attempt() {
    let r = row(RouteState::Running, vec![candidate(1, true)]);
    let plan = act(&r, ManualAction::Stop, 4).unwrap();
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
fn retry_now_from_needs_manual_is_one_more_attempt_in_the_same_cycle() {
    use crate::classification::PolicyClass;
    let mut c = candidate(1, true);
    // One transient retry, a reset wait, then stop.
    c.policy = CandidatePolicy::both(ClassPolicy::new(Some(600), Some((1, 5)), Exhausted::Stop));
    let mut r = row(RouteState::NeedsManual, vec![c, candidate(2, true)]);
    r.0.cycle = r
        .cycle
        .apply(&crate::evaluator::Decision::Retry {
            class: PolicyClass::Transient,
            at: now(),
            ordinal: 1,
            max_retries: 1,
            delay_seconds: 5,
        })
        .apply(&crate::evaluator::Decision::WaitForReset {
            class: PolicyClass::Transient,
            until: now(),
        });
    r.0.cycle.excluded.insert(1);
    let plan = act(&r, ManualAction::RetryNow, 4).unwrap();
    assert_eq!(
        plan.next().cycle,
        r.cycle,
        "retries and the reset wait used stay used, and a skipped candidate stays skipped: \
         only resume starts a new cycle"
    );
    assert!(matches!(plan.effect(), Effect::Dispatch(_)), "it runs now");
    // The person's attempt fails the same way: the budget is spent, so the
    // candidate's exhausted outcome applies at once, no new round of retries.
    let running = RouteRow(RouteRecord {
        state: RouteState::Running,
        generation: 5,
        attempts: 4,
        ..plan.next().0.clone()
    });
    let mut failure = failure_of(SemanticCode::ProviderOverloaded, Some(60));
    failure.number = 4;
    let after = failed(&running, failure, lease(), World::default(), now()).unwrap();
    assert_eq!(
        after.next().state,
        RouteState::NeedsManual,
        "neither a retry nor a second reset wait: the policy says stop"
    );
    assert_eq!(
        after
            .next()
            .decision
            .as_ref()
            .unwrap()
            .text(&AccountNames::default()),
        "stop: transient retries and wait are used up and the candidate's policy says stop"
    );

    let mut waiting = r.clone();
    waiting.0.state = RouteState::RetryScheduled;
    let plan = act(&waiting, ManualAction::RetryNow, 4).unwrap();
    assert_eq!(
        plan.next().cycle,
        r.cycle,
        "from a wait the attempt was already counted"
    );
}

#[test]
fn the_thresholdth_identical_quiet_unclassified_failure_dispatches_the_next_candidate() {
    let mut opted_in = candidate(1, true);
    opted_in.policy.unclassified = crate::policy::UnclassifiedPolicy::skip_after(2);
    let r = row(RouteState::Running, vec![opted_in, candidate(2, true)]);
    let unknown = |number: u32| {
        let mut f = failure_of(SemanticCode::Unknown, None);
        f.number = number;
        f.evidence.message = format!("agent exited: request req_{number:0>20} at 12:0{number}:00");
        f.files_changed = Some(0);
        f
    };
    // Attempt 2 failed the same way, as its stored result reads back.
    let earlier = unknown(2);
    let stored = AttemptResultRecord {
        number: 2,
        finished_at: now(),
        outcome: AttemptOutcome::Failed,
        classification: Some(earlier.classification.clone()),
        effect: Some(earlier.effect.clone()),
        policy_revision: Some(1),
        policy: None,
        decision: None,
        evidence: Some(earlier.evidence.clone()),
        excerpt: None,
    };
    let attempt = attempt_record(7, 2, 3, (0, &r.candidates[0]), "me", now());
    let mut failure = unknown(3);
    failure.earlier = vec![earlier_sighting(&attempt, Some(&stored), Some(0))];
    let plan = failed(&r, failure.clone(), lease(), World::default(), now()).unwrap();
    let Effect::Dispatch(next) = plan.effect() else {
        panic!("dispatched: {:?}", plan.effect());
    };
    assert_eq!(next.candidate_index, 1, "the next candidate runs at once");
    assert!(plan.next().cycle.repeat_skip_used);
    assert!(matches!(
        plan.write().result().and_then(|r| r.decision.clone()),
        Some(Decided::Typed(Decision::SkipRepeated { identical: 2, .. }))
    ));
    // Had attempt 2 changed files, it would not count.
    failure.earlier = vec![earlier_sighting(&attempt, Some(&stored), Some(1))];
    let plan = failed(&r, failure, lease(), World::default(), now()).unwrap();
    assert_eq!(plan.next().state, RouteState::NeedsManual);
    assert_eq!(
        plan.next().manual_reason.as_ref().unwrap().text(),
        "the failure is unclassified (“Not recognised”); identical failure 1 of 2 with no output or \
         effects; at 2 the route moves to the next candidate"
    );
}

#[test]
fn retry_now_from_needs_manual_keeps_the_budget_left_for_a_later_failure() {
    let mut c = candidate(1, true);
    c.policy = CandidatePolicy::both(ClassPolicy::new(None, Some((2, 5)), Exhausted::Stop));
    let mut r = row(RouteState::NeedsManual, vec![c]);
    r.0.cycle = r.cycle.apply(&crate::evaluator::Decision::Retry {
        class: crate::classification::PolicyClass::Transient,
        at: now(),
        ordinal: 1,
        max_retries: 2,
        delay_seconds: 5,
    });
    let plan = act(&r, ManualAction::RetryNow, 4).unwrap();
    let running = RouteRow(RouteRecord {
        state: RouteState::Running,
        ..plan.next().0.clone()
    });
    let after = failed(
        &running,
        failure_of(SemanticCode::ProviderOverloaded, None),
        lease(),
        World::default(),
        now(),
    )
    .unwrap();
    assert_eq!(
        after
            .next()
            .decision
            .as_ref()
            .unwrap()
            .text(&AccountNames::default()),
        "transient retry 2 of 2 in 10 s, at 2026-12-02T12:00:10Z",
        "the retry left in the cycle is the next one, not the first of a renewed budget"
    );
}

#[test]
fn retry_now_dispatches_the_next_attempt_and_clears_the_deadline() {
    let r = row(RouteState::RetryScheduled, vec![candidate(1, true)]);
    let plan = act(&r, ManualAction::RetryNow, 4).unwrap();
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
    let plan = act(&r, ManualAction::SkipNow, 4).unwrap();
    assert_eq!(plan.next().candidate_index, 1);
    assert!(plan.next().cycle.excluded.contains(&0));
    assert_eq!(
        act(plan.next(), ManualAction::SkipNow, 4).unwrap_err(),
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
        session: Session::default(),
        files_changed: None,
        earlier: Vec::new(),
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
    let mut classification = simulated.classification(now());
    // As a catalogue rule for the code would say.
    classification.scope = code.scope();
    Failure {
        number: 3,
        evidence,
        classification,
        effect: simulated.effect_context(),
        session: Session::default(),
        files_changed: None,
        earlier: Vec::new(),
    }
}

/// What a continue or hand-over of attempt 1 sends.
fn sends(action: ManualAction) -> AttemptInput {
    match action {
        ManualAction::Continue => AttemptInput::Continue {
            of_attempt: 1,
            session_id: "s-1".into(),
            message: "go on".into(),
            automatic: false,
        },
        _ => AttemptInput::Handover {
            from_attempt: 1,
            package: "PACKAGE".into(),
        },
    }
}

/// Every target of `event` from a route in `state` that the machine
/// reaches: the failure cases between them cover each decision, and each is
/// tried in every world (clear, full, limited three ways) so a dispatch
/// reaches each of its ends.
fn machine_targets(state: RouteState, event: Event) -> BTreeSet<&'static str> {
    let waiting = CandidatePolicy::new(
        ClassPolicy::new(None, Some((2, 5)), Exhausted::Skip),
        ClassPolicy::new(Some(600), None, Exhausted::Stop),
    );
    let on_account = |mut c: Candidate| {
        c.policy = waiting.clone();
        c.account = Some(acct());
        c
    };
    let r = row(
        state,
        vec![on_account(resuming(1)), on_account(resuming(2))],
    );
    let skipping = row(
        state,
        vec![candidate(1, true), on_account(candidate(2, true))],
    );
    let worlds = [
        vec![],
        vec![account_state(vec![], true)],
        vec![account_state(
            vec![limit(SemanticCode::UsageLimitReached, Some(60), true)],
            false,
        )],
        vec![account_state(
            vec![limit(SemanticCode::RateLimited, Some(30), false)],
            false,
        )],
        vec![account_state(
            vec![limit(SemanticCode::AuthInvalid, None, false)],
            false,
        )],
    ];
    let mut reached: Vec<Option<RouteState>> = Vec::new();
    for accounts in &worlds {
        let world = World {
            accounts,
            ..World::default()
        };
        match event {
            Event::TimerFired => {
                reached.push(timer_fired(&r, lease(), world, now()).map(|p| p.next.state))
            }
            Event::AttemptSucceeded => reached.push(succeeded(&r, 3, now()).map(|p| p.next.state)),
            Event::Interrupted => reached
                .push(interrupted(&r, Interruption::EngineStopped, now()).map(|p| p.next.state)),
            Event::Released => {
                reached.push(released(&r, lease(), world, now()).map(|p| p.next.state))
            }
            Event::AttemptFailed => reached.extend(
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
                .map(|(r, f)| failed(r, f, lease(), world, now()).map(|p| p.next.state)),
            ),
            Event::Manual(action @ (ManualAction::Continue | ManualAction::Handover)) => reached
                .push(
                    manual_continuation(
                        &r,
                        sends(action),
                        ask(action, r.generation),
                        lease(),
                        world,
                        now(),
                    )
                    .ok()
                    .map(|p| p.next.state),
                ),
            Event::Manual(action) => reached.push(
                manual(&r, ask(action, r.generation), lease(), world, now())
                    .ok()
                    .map(|p| p.next.state),
            ),
        }
    }
    reached
        .into_iter()
        .flatten()
        .map(RouteState::as_str)
        .collect()
}

fn acct() -> crate::account::AccountId {
    crate::account::AccountId::parse("work").unwrap()
}

/// A mark of `code` on account `work`: until `until_s` from now (`None`:
/// until cleared), its reset trusted or a default hold.
fn limit(code: SemanticCode, until_s: Option<i64>, trusted: bool) -> MarkState {
    MarkState {
        mark: StoredMark {
            id: 1,
            mark: Mark {
                account: acct(),
                model: None,
                code,
                class: code.class().policy_class().unwrap(),
                confidence: crate::classification::Confidence::High,
                rule_id: Some("test.rule.v1".into()),
                catalogue_version: "test".into(),
                until: until_s.map(|s| now() + chrono::Duration::seconds(s)),
                trusted,
                streak: 1,
                route_id: 1,
                attempt: 1,
                created_at: now(),
            },
            probe: None,
        },
        probe_live: false,
    }
}

fn account_state(marks: Vec<MarkState>, full: bool) -> AccountState {
    AccountState {
        account: acct(),
        marks,
        full,
    }
}

/// Account `work` in a usage window whose trusted reset is 2 minutes away.
fn usage_window() -> [AccountState; 1] {
    [account_state(
        vec![limit(SemanticCode::UsageLimitReached, Some(120), true)],
        false,
    )]
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
    // As the store creates it: queued at generation 0, then released.
    let mut inserted = row(RouteState::Queued, new.candidates.clone());
    inserted.0.generation = 0;
    inserted.0.attempts = 0;
    inserted.0.candidate_index = new.candidate_index;
    inserted.0.cycle = new.cycle.clone();
    let plan = released(&inserted, lease(), World::default(), now()).expect("it dispatches");
    let Effect::Dispatch(first) = plan.effect().clone() else {
        panic!("nothing limits it: it runs");
    };
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

/// A route whose candidates both run on account `work` under `policy`.
/// The account `work` (see [`acct`]) under a name as the Accounts tab
/// gives a derived one.
fn named() -> AccountNames {
    AccountNames::new([(acct(), "Sim (~/.sim-work)".to_string())].into())
}

fn on_work(state: RouteState, policy: CandidatePolicy) -> RouteRow {
    let mut candidates = vec![candidate(1, true), candidate(2, true)];
    for c in &mut candidates {
        c.account = Some(acct());
        c.policy = policy.clone();
    }
    row(state, candidates)
}

fn wait_then_stop() -> CandidatePolicy {
    CandidatePolicy::both(ClassPolicy::new(Some(600), None, Exhausted::Stop))
}

#[test]
fn a_limited_account_is_not_dispatched_and_its_policy_decides_as_if_it_had_failed() {
    let r = on_work(RouteState::RetryScheduled, wait_then_stop());
    let accounts = usage_window();
    let world = World {
        accounts: &accounts,
        ..World::default()
    };
    let plan = timer_fired(&r, lease(), world, now()).expect("a wait came due");
    let until = now() + chrono::Duration::seconds(120);
    assert_eq!(plan.write().dispatch(), None, "no agent is started");
    assert_eq!(
        (plan.next().state, plan.next().deadline),
        (RouteState::WaitingReset, Some(until)),
        "the hard policy waits for the mark's trusted reset"
    );
    assert!(
        plan.next()
            .cycle
            .usage_of(0, crate::classification::PolicyClass::Hard)
            .reset_wait_used,
        "that uses the cycle's reset wait, as a failure would"
    );
    let decided = plan.next().decision.as_ref().unwrap();
    assert_eq!(
        decided.text(&named()),
        "not dispatched: Sim (~/.sim-work) limited until 2026-12-02T12:02:00Z; wait for the hard \
         reset until 2026-12-02T12:02:00Z",
        "the account by the name the Accounts tab gives it, not its id"
    );
    let holds = plan.write().holds();
    assert_eq!(holds.len(), 1, "the history keeps a not-dispatched line");
    assert_eq!(holds[0].candidate_index, 0);
}

#[test]
fn retry_now_on_a_limited_account_is_refused_rather_than_decided_by_the_policy() {
    let mut r = on_work(RouteState::NeedsManual, wait_then_stop());
    r.0.manual_reason = Some(HoldReason::WaitCancelled);
    let accounts = usage_window();
    let world = World {
        accounts: &accounts,
        ..World::default()
    };
    let refused = manual(
        &r,
        ask(ManualAction::RetryNow, r.generation),
        lease(),
        world,
        now(),
    );
    let name = &r.candidates[0].name;
    let refusal = refused.unwrap_err();
    assert!(
        matches!(refusal, Refusal::Limited { .. }),
        "the person asked for this candidate now; its policy would skip or stop instead: \
         {refusal:?}"
    );
    assert_eq!(
        refusal.why(&named()).unwrap(),
        format!(
            "{name} would not start now: Sim (~/.sim-work) limited until 2026-12-02T12:02:00Z; \
             skip now, wait for it, or clear the limit in Accounts if it has lifted"
        ),
        "the account by its name, not its id"
    );
    let skipped = manual(
        &r,
        ask(ManualAction::SkipNow, r.generation),
        lease(),
        world,
        now(),
    )
    .expect("skip now is still the person's to choose");
    assert_eq!(skipped.next().candidate_index, 1);
    let later = now() + chrono::Duration::seconds(121);
    let plan = manual(
        &r,
        ask(ManualAction::RetryNow, r.generation),
        lease(),
        world,
        later,
    )
    .expect("after the reset the retry is the account's probe");
    assert!(plan.write().dispatch().is_some(), "it starts the agent");
}

#[test]
fn a_mark_after_the_cycles_reset_wait_is_decided_by_the_rest_of_the_policy() {
    let mut r = on_work(RouteState::RetryScheduled, wait_then_stop());
    r.0.cycle = r.cycle.apply(&crate::evaluator::Decision::WaitForReset {
        class: crate::classification::PolicyClass::Hard,
        until: now(),
    });
    let accounts = usage_window();
    let world = World {
        accounts: &accounts,
        ..World::default()
    };
    let plan = timer_fired(&r, lease(), world, now()).unwrap();
    assert_eq!(
        plan.next().state,
        RouteState::NeedsManual,
        "the one reset wait of the cycle is used: the policy says stop"
    );
}

#[test]
fn a_failure_marks_its_account_and_the_skip_to_a_candidate_on_it_is_held() {
    let r = on_work(
        RouteState::Running,
        CandidatePolicy::default_for_new_candidate(),
    );
    let plan = failed(
        &r,
        failure_of(SemanticCode::UsageLimitReached, Some(60)),
        lease(),
        World::default(),
        now(),
    )
    .unwrap();
    let mark = plan.write().mark().expect("an account window makes a mark");
    assert_eq!(
        (mark.account.as_str(), mark.until, mark.trusted),
        ("work", Some(now() + chrono::Duration::seconds(60)), true)
    );
    assert_eq!(
        plan.write().dispatch(),
        None,
        "the next candidate runs on the same account, limited by the new mark"
    );
    assert_eq!(plan.write().holds().len(), 1);
    assert_eq!(plan.next().state, RouteState::NeedsManual, "nothing left");
}

#[test]
fn unknown_evidence_makes_no_mark() {
    let r = on_work(RouteState::Running, wait_then_stop());
    for code in [SemanticCode::Unknown, SemanticCode::TaskFailed] {
        let plan = failed(
            &r,
            failure_of(code, Some(60)),
            lease(),
            World::default(),
            now(),
        );
        assert_eq!(plan.unwrap().write().mark(), None, "{code:?}");
    }
}

#[test]
fn the_gate_still_decides_the_failed_route_when_its_failure_marks_the_account() {
    let r = on_work(RouteState::Running, wait_then_stop());
    let mut f = failure_of(SemanticCode::UsageLimitReached, Some(60));
    f.effect.tool_activity_seen = Some(true);
    let plan = failed(&r, f, lease(), World::default(), now()).unwrap();
    assert_eq!(
        plan.next().state,
        RouteState::NeedsManual,
        "a tool ran: not replayed"
    );
    assert!(
        plan.write().mark().is_some(),
        "the account is limited all the same: other routes must not hit it"
    );
}

#[test]
fn after_the_reset_one_dispatch_probes_and_the_others_queue_for_it() {
    let r = on_work(RouteState::WaitingReset, wait_then_stop());
    let reset = [account_state(
        vec![limit(SemanticCode::UsageLimitReached, Some(-1), true)],
        false,
    )];
    let world = World {
        accounts: &reset,
        ..World::default()
    };
    let plan = timer_fired(&r, lease(), world, now()).unwrap();
    assert_eq!(plan.next().state, RouteState::Running);
    assert_eq!(
        plan.write().probe().map(|p| p.marks.clone()),
        Some(vec![(1, None)]),
        "the first dispatch after the reset is its probe"
    );
    let mut probed = limit(SemanticCode::UsageLimitReached, Some(-1), true);
    probed.mark.probe = Some(crate::account::Probe {
        route_id: 3,
        generation: 9,
    });
    probed.probe_live = true;
    let probing = [account_state(vec![probed], false)];
    let world = World {
        accounts: &probing,
        ..World::default()
    };
    let plan = timer_fired(&r, lease(), world, now()).unwrap();
    assert_eq!(plan.next().state, RouteState::Queued);
    assert_eq!(plan.write().dispatch(), None);
    assert_eq!(
        plan.next().queued.as_ref().unwrap().reason.text(&named()),
        "queued: the limit of Sim (~/.sim-work) has reset and route 3 is trying it; this one \
         starts once that answers",
        "the account by its name, not its id"
    );
}

#[test]
fn a_full_account_queues_and_its_turn_keeps_the_place() {
    let r = on_work(RouteState::RetryScheduled, wait_then_stop());
    let full = [account_state(vec![], true)];
    let world = World {
        accounts: &full,
        ..World::default()
    };
    let plan = timer_fired(&r, lease(), world, now()).unwrap();
    let queued = plan.next().clone();
    assert_eq!(queued.state, RouteState::Queued);
    assert_eq!(queued.queued.as_ref().unwrap().since, now());
    let mut queued = queued;
    queued.0.generation += 1;
    assert!(
        released(&queued, lease(), world, now()).is_none(),
        "still full: nothing changes"
    );
    let later = now() + chrono::Duration::seconds(5);
    let global = World {
        global_full: true,
        ..World::default()
    };
    let requeued = released(&queued, lease(), global, later).expect("another reason");
    assert_eq!(
        requeued.next().queued.as_ref().unwrap().since,
        now(),
        "first in, first out: the place is kept"
    );
    let run = released(&queued, lease(), World::default(), later).expect("room now");
    assert_eq!(run.next().state, RouteState::Running);
    assert_eq!(run.next().queued, None);
    let paused = World {
        paused: true,
        ..World::default()
    };
    assert!(released(&queued, lease(), paused, later).is_none());
}

#[test]
fn a_success_clears_what_its_attempt_probed_and_any_other_end_releases_it() {
    let r = on_work(RouteState::Running, wait_then_stop());
    assert_eq!(
        succeeded(&r, 3, now()).unwrap().write().probe_end(),
        Some(ProbeEnd::Answered)
    );
    let failed = failed(
        &r,
        failure_of(SemanticCode::ProviderOverloaded, None),
        lease(),
        World::default(),
        now(),
    );
    assert_eq!(
        failed.unwrap().write().probe_end(),
        Some(ProbeEnd::Released)
    );
    let stopped = act(&r, ManualAction::Stop, 4);
    assert_eq!(
        stopped.unwrap().write().probe_end(),
        Some(ProbeEnd::Released)
    );
    let interrupted = interrupted(&r, Interruption::EngineStopped, now());
    assert_eq!(
        interrupted.unwrap().write().probe_end(),
        Some(ProbeEnd::Released)
    );
}

#[test]
fn sending_work_again_after_the_gate_or_a_stop_mid_run_needs_the_persons_yes() {
    use crate::safety::UnsafeReason;
    let two = || vec![candidate(1, true), candidate(2, true)];
    let mut gated = row(RouteState::NeedsManual, two());
    gated.0.manual_reason = Some(HoldReason::gate(UnsafeReason::ToolActivitySeen));
    let running = row(RouteState::Running, two());
    let stopped = act(&running, ManualAction::Stop, 4).unwrap();
    let stopped = RouteRow(RouteRecord {
        generation: 5,
        ..stopped.next().0.clone()
    });
    let mut gated_then_stopped = act(&gated, ManualAction::Stop, 4).unwrap().next().clone();
    gated_then_stopped.0.generation = 5;
    let cases = [
        (&gated, ManualAction::RetryNow, 4, "the gate refused"),
        (&gated, ManualAction::SkipNow, 4, "the gate refused"),
        (&stopped, ManualAction::Resume, 5, "stopped mid-run"),
        (
            &gated_then_stopped,
            ManualAction::Resume,
            5,
            "stop then resume",
        ),
    ];
    for (r, action, generation, why) in cases {
        let refusal = act(r, action, generation);
        assert!(
            matches!(refusal, Err(Refusal::RepeatRisk(_))),
            "{action:?} after {why} asks first: {refusal:?}"
        );
        let plan = act_accepting(r, action, generation).unwrap();
        let record = plan.write().action().expect("recorded");
        assert!(
            record.accepted.is_some(),
            "the history says the person accepted it ({why})"
        );
        assert_eq!(record.dispatched(), Some(4), "it started attempt 4");
    }
    assert_eq!(
        repeat_risk(&stopped),
        Some(RepeatRisk::StoppedWhileRunning { attempt: 3 })
    );
    assert_eq!(
        repeat_risk(&gated_then_stopped),
        repeat_risk(&gated),
        "a stop keeps the gate's reason"
    );
    // Actions that send nothing again never ask.
    assert!(act(&gated, ManualAction::Stop, 4).is_ok());
    let quiet = row(RouteState::RetryScheduled, two());
    let stopped_quietly = act(&quiet, ManualAction::Stop, 4).unwrap();
    assert_eq!(
        repeat_risk(stopped_quietly.next()),
        None,
        "stopped while nothing ran: resume need not ask"
    );
}

#[test]
fn every_manual_action_plans_its_history_entry_with_who_and_what_it_led_to() {
    let two = || vec![candidate(1, true), candidate(2, true)];
    let waiting = row(RouteState::WaitingReset, two());
    let by_cli = |action| Ask::new(action, 4, crate::route::Actor::Cli);
    let cancel = manual(
        &waiting,
        by_cli(ManualAction::CancelWait),
        lease(),
        World::default(),
        now(),
    )
    .unwrap();
    let record = cancel.write().action().unwrap();
    assert_eq!(
        (record.action, record.by, record.at, record.from),
        (
            ManualAction::CancelWait,
            crate::route::Actor::Cli,
            now(),
            RouteState::WaitingReset
        )
    );
    assert_eq!(
        record.led_to,
        LedTo::WaitCancelled {
            was: RouteState::WaitingReset,
            deadline: waiting.deadline
        }
    );
    let stop = manual(
        &row(RouteState::Running, two()),
        by_cli(ManualAction::Stop),
        lease(),
        World::default(),
        now(),
    )
    .unwrap();
    assert_eq!(
        stop.write().action().unwrap().led_to,
        LedTo::Stopped { killed: Some(3) },
        "the stop names the attempt whose agent it stopped"
    );
    let skip = manual(
        &waiting,
        by_cli(ManualAction::SkipNow),
        lease(),
        World {
            global_full: true,
            ..World::default()
        },
        now(),
    )
    .unwrap();
    assert_eq!(
        skip.write().action().unwrap().led_to,
        LedTo::NotDispatched {
            state: RouteState::Queued,
            candidate_index: 1,
            candidate_name: "c2".into()
        },
        "no slot: the skip queued the next candidate instead of starting it"
    );
    assert!(
        timer_fired(&waiting, lease(), World::default(), now())
            .unwrap()
            .write()
            .action()
            .is_none(),
        "only a person's action is recorded as one"
    );
}

#[test]
fn continue_dispatches_the_same_candidate_with_its_session_and_keeps_the_cycle() {
    let r = row(RouteState::NeedsManual, vec![resuming(1), resuming(2)]);
    let input = sends(ManualAction::Continue);
    let plan = manual_continuation(
        &r,
        input.clone(),
        ask(ManualAction::Continue, r.generation),
        lease(),
        World::default(),
        now(),
    )
    .unwrap();
    let Effect::Dispatch(attempt) = plan.effect() else {
        panic!("a continue starts an agent: {:?}", plan.effect());
    };
    assert_eq!(attempt.input, input, "the launch resumes the session");
    assert_eq!(
        plan.write().dispatch().map(|a| &a.input),
        Some(&input),
        "and the stored attempt says it continues attempt 1"
    );
    assert_eq!(attempt.candidate_index, 0, "the same candidate");
    assert_eq!(
        plan.next().cycle,
        r.cycle,
        "one more attempt in the same cycle: no budget is renewed by a continue"
    );
}

#[test]
fn handover_dispatches_the_next_candidate_with_the_package() {
    let r = row(
        RouteState::Stopped,
        vec![candidate(1, true), candidate(2, true)],
    );
    let input = sends(ManualAction::Handover);
    let plan = manual_continuation(
        &r,
        input.clone(),
        ask(ManualAction::Handover, r.generation),
        lease(),
        World::default(),
        now(),
    )
    .unwrap();
    let Effect::Dispatch(attempt) = plan.effect() else {
        panic!("a hand-over starts an agent");
    };
    assert_eq!(attempt.candidate_index, 1, "the next candidate");
    assert_eq!(attempt.input, input);
    assert_eq!(
        plan.next().cycle,
        r.cycle.skip_to(1),
        "the first is skipped"
    );
}

#[test]
fn a_continuation_that_cannot_start_now_is_refused_not_queued_as_the_plain_prompt() {
    let mut first = resuming(1);
    first.account = Some(acct());
    let r = row(RouteState::NeedsManual, vec![first, candidate(2, true)]);
    let accounts = [account_state(vec![], true)];
    let world = World {
        accounts: &accounts,
        ..World::default()
    };
    let refused = manual_continuation(
        &r,
        sends(ManualAction::Continue),
        ask(ManualAction::Continue, r.generation),
        lease(),
        world,
        now(),
    )
    .unwrap_err();
    assert!(matches!(refused, Refusal::NotStarted { .. }), "{refused:?}");
    let why = refused.why(&named()).unwrap();
    assert!(
        why.starts_with("no agent would start now (queued: Sim (~/.sim-work) runs as many"),
        "the account by its name, not its id, and not the action's name, which the window \
         already shows as the label before it: {why}"
    );
    assert!(
        matches!(
            manual(
                &r,
                ask(ManualAction::Continue, r.generation),
                lease(),
                World::default(),
                now()
            ),
            Err(Refusal::Unavailable(_))
        ),
        "without a session to resume, continue sends nothing (never the prompt)"
    );
}

#[test]
fn continuing_or_handing_over_after_the_gate_needs_the_persons_yes_too() {
    use crate::safety::UnsafeReason;
    let mut gated = row(RouteState::NeedsManual, vec![resuming(1), resuming(2)]);
    gated.0.manual_reason = Some(HoldReason::gate(UnsafeReason::ToolActivitySeen));
    for action in [ManualAction::Continue, ManualAction::Handover] {
        let send = |asked: Ask| {
            manual_continuation(
                &gated,
                sends(action),
                asked,
                lease(),
                World::default(),
                now(),
            )
        };
        let refused = send(ask(action, gated.generation));
        assert!(
            matches!(refused, Err(Refusal::RepeatRisk(_))),
            "{action:?} may still repeat what the agent did, so it asks first: {refused:?}"
        );
        let plan = send(ask(action, gated.generation).accepting_repeat()).unwrap();
        assert!(
            plan.write().action().expect("recorded").accepted.is_some(),
            "{action:?}: the history says the person accepted the risk"
        );
    }
}

/// Attempt 3's transient failure after its agent wrote and ran a tool; its
/// session `session` resumable (or none), its tool calls as `tools`.
fn after_tools(code: SemanticCode, session: Option<&str>, tools: ToolCalls) -> Failure {
    let mut f = failure_of(code, None);
    f.effect = EffectContext {
        prompt_delivery: Some(PromptDelivery::Confirmed),
        assistant_output_seen: Some(true),
        tool_activity_seen: Some(true),
        partial_result_seen: Some(false),
        evidence_current: Some(true),
    };
    f.session = Session {
        resumable: session.map(str::to_string),
        tools,
        earlier: None,
    };
    f
}

/// A running route on two resuming candidates that retry transient
/// failures twice, the first with automatic continuation as `auto`.
fn continuing(auto: crate::policy::AutoContinue) -> RouteRow {
    let mut first = resuming(1);
    first.policy = CandidatePolicy::both(ClassPolicy::new(None, Some((2, 5)), Exhausted::Skip));
    first.policy.transient.auto_continue = auto;
    row(RouteState::Running, vec![first, resuming(2)])
}

/// What a plan decided, in the parts the option could change.
fn outcome(plan: &Plan) -> (RouteState, Option<HoldReason>, RouteCycle, Effect) {
    let next = plan.next();
    (
        next.state,
        next.manual_reason.clone(),
        next.cycle.clone(),
        plan.effect().clone(),
    )
}

#[test]
fn a_transient_failure_after_completed_tools_continues_the_same_session_at_once() {
    use crate::policy::AutoContinue;
    let r = continuing(AutoContinue::ON);
    let failure = after_tools(
        SemanticCode::NetworkReset,
        Some("s-3"),
        ToolCalls::Completed,
    );
    let plan = failed(&r, failure, lease(), World::default(), now()).unwrap();
    let Effect::Dispatch(attempt) = plan.effect() else {
        panic!("an agent starts at once: {:?}", plan.effect());
    };
    let continued = AttemptInput::Continue {
        of_attempt: 3,
        session_id: "s-3".into(),
        message: crate::route::DEFAULT_CONTINUE_MESSAGE.into(),
        automatic: true,
    };
    assert_eq!(attempt.input, continued, "the session, never the prompt");
    assert_eq!(
        plan.write().dispatch().map(|a| &a.input),
        Some(&continued),
        "stored with the attempt"
    );
    assert_eq!(
        (attempt.number, attempt.candidate_index),
        (4, 0),
        "the same candidate"
    );
    assert_eq!(plan.next().state, RouteState::Running);
    assert_eq!(plan.next().manual_reason, None, "nobody is asked");
    assert_eq!(
        plan.next()
            .cycle
            .usage_of(0, crate::classification::PolicyClass::Transient),
        crate::evaluator::ClassUsage {
            retries_used: 0,
            reset_wait_used: false,
            continuations_used: 1
        },
        "one continuation of the budget, no retry"
    );
    let decided = plan.write().result().and_then(|r| r.decision.clone());
    assert_eq!(
        decided,
        Some(Decided::Typed(Decision::Continue {
            class: crate::classification::PolicyClass::Transient,
            ordinal: 1,
            max_continuations: 2
        })),
        "the attempt's history says why the next one continues it"
    );
}

#[test]
fn an_automatic_continuation_sends_the_candidates_own_message() {
    let mut r = continuing(crate::policy::AutoContinue::ON);
    r.0.candidates[0].agent.continue_message = Some("Check git status, then finish.".into());
    let failure = after_tools(
        SemanticCode::NetworkReset,
        Some("s-3"),
        ToolCalls::Completed,
    );
    let plan = failed(&r, failure, lease(), World::default(), now()).unwrap();
    let Some(AttemptInput::Continue { message, .. }) = plan.write().dispatch().map(|a| &a.input)
    else {
        panic!("{:?}", plan.effect());
    };
    assert_eq!(message, "Check git status, then finish.");
}

#[test]
fn without_every_piece_of_evidence_the_gate_decides_exactly_as_with_the_option_off() {
    use crate::policy::AutoContinue;
    use ToolCalls::*;
    let on = continuing(AutoContinue::ON);
    let mut spent = on.clone();
    spent.0.cycle = spent.cycle.apply(&Decision::Continue {
        class: crate::classification::PolicyClass::Transient,
        ordinal: 2,
        max_continuations: 2,
    });
    let network = SemanticCode::NetworkReset;
    let refused_because = |tools| NotContinued::Tools { tools };
    let cases = [
        (
            "pending tool",
            &on,
            after_tools(network, Some("s-3"), Pending),
            refused_because(Pending),
        ),
        (
            "refused tool",
            &on,
            after_tools(network, Some("s-3"), Refused),
            refused_because(Refused),
        ),
        (
            "failed tool",
            &on,
            after_tools(network, Some("s-3"), Failed),
            refused_because(Failed),
        ),
        (
            "unknown tools",
            &on,
            after_tools(network, Some("s-3"), Unknown),
            refused_because(Unknown),
        ),
        (
            "no session",
            &on,
            after_tools(network, None, Completed),
            NotContinued::NoSession,
        ),
        (
            "budget spent",
            &spent,
            after_tools(network, Some("s-3"), Completed),
            NotContinued::BudgetSpent {
                max_continuations: 2,
            },
        ),
        (
            "hard failure",
            &on,
            after_tools(SemanticCode::UsageLimitReached, Some("s-3"), Completed),
            NotContinued::NotTransient,
        ),
    ];
    for (case, r, failure, why) in cases {
        let plan = failed(r, failure.clone(), lease(), World::default(), now()).unwrap();
        let mut off = r.clone();
        off.0.candidates[0].policy.transient.auto_continue = AutoContinue::DISABLED;
        let before = failed(&off, failure, lease(), World::default(), now()).unwrap();
        let Some(HoldReason::UnsafeEffect {
            reason,
            not_continued,
        }) = plan.next().manual_reason.clone()
        else {
            panic!(
                "{case}: the gate hands it to a person: {:?}",
                plan.next().manual_reason
            );
        };
        assert_eq!(not_continued, Some(why), "{case}: the person reads why");
        let mut gate_alone = outcome(&plan);
        gate_alone.1 = Some(HoldReason::gate(reason));
        assert_eq!(gate_alone, outcome(&before), "{case}: otherwise the same");
        assert_eq!(
            before.next().manual_reason,
            Some(HoldReason::gate(reason)),
            "{case}: with the option off nothing is said about it"
        );
    }
}

#[test]
fn a_held_routes_reason_says_why_its_session_was_not_continued() {
    let held = HoldReason::UnsafeEffect {
        reason: crate::safety::UnsafeReason::ToolActivitySeen,
        not_continued: Some(NotContinued::Tools {
            tools: ToolCalls::Refused,
        }),
    };
    assert_eq!(
        held.text(),
        "not safe to recover automatically — a tool call or tool effect was seen before the \
         failure; not continued automatically, as a tool call was refused"
    );
}

#[test]
fn a_continuation_that_would_not_start_at_once_leaves_the_route_to_the_gate() {
    let mut r = continuing(crate::policy::AutoContinue::ON);
    r.0.candidates[0].account = Some(acct());
    let full = [account_state(vec![], true)];
    let worlds = [
        (
            "account full",
            World {
                accounts: &full,
                ..World::default()
            },
        ),
        (
            "dispatches paused",
            World {
                paused: true,
                ..World::default()
            },
        ),
    ];
    for (case, world) in worlds {
        let failure = after_tools(
            SemanticCode::NetworkReset,
            Some("s-3"),
            ToolCalls::Completed,
        );
        let plan = failed(&r, failure, lease(), world, now()).unwrap();
        assert_eq!(
            plan.next().state,
            RouteState::NeedsManual,
            "{case}: queued or held, it would later go out as the plain prompt"
        );
        assert_eq!(*plan.effect(), Effect::Nothing, "{case}");
        assert!(
            matches!(
                plan.next().manual_reason,
                Some(HoldReason::UnsafeEffect {
                    not_continued: Some(NotContinued::NotAtOnce),
                    ..
                })
            ),
            "{case}: the person reads why: {:?}",
            plan.next().manual_reason
        );
        assert_eq!(
            plan.next()
                .cycle
                .usage_of(0, crate::classification::PolicyClass::Transient)
                .continuations_used,
            0,
            "{case}: no continuation was spent"
        );
    }
}

#[test]
fn a_continuation_that_failed_cleanly_is_judged_with_what_its_session_did_before() {
    // The option off: a person's Continue failed before any output.
    let r = continuing(crate::policy::AutoContinue::DISABLED);
    let mut failure = failure_of(SemanticCode::ProviderOverloaded, None);
    let clean = failed(&r, failure.clone(), lease(), World::default(), now()).unwrap();
    assert_eq!(
        clean.next().state,
        RouteState::RetryScheduled,
        "on its own the failure is effect-safe"
    );
    failure.session.earlier =
        Some(after_tools(SemanticCode::NetworkReset, None, ToolCalls::Completed).effect);
    let plan = failed(&r, failure, lease(), World::default(), now()).unwrap();
    assert_eq!(
        plan.next().state,
        RouteState::NeedsManual,
        "a retry would send the prompt afresh after the session's earlier work"
    );
    assert_eq!(
        plan.write()
            .result()
            .and_then(|r| r.effect.as_ref())
            .and_then(|e| e.tool_activity_seen),
        Some(false),
        "the attempt's own effects are stored as it had them"
    );
}

#[test]
fn continue_on_a_kind_that_cannot_resume_says_so_rather_than_blaming_the_state() {
    let r = row(
        RouteState::NeedsManual,
        vec![candidate(1, true), candidate(2, true)],
    );
    let kind = r.candidates[0].agent.kind.descriptor();
    assert!(
        kind.resume.is_none(),
        "the simulated provider resumes nothing"
    );
    assert_eq!(
        admit(&r, ManualAction::Continue, r.generation, World::default()),
        Err(Refusal::Unavailable(format!(
            "{} candidates cannot resume a session; retry now or skip to the next candidate \
             instead",
            kind.label
        )))
    );
    let running = row(RouteState::Running, vec![resuming(1)]);
    assert!(
        matches!(
            admit(
                &running,
                ManualAction::Continue,
                running.generation,
                World::default()
            ),
            Err(Refusal::NotValid { .. })
        ),
        "where the state offers no Continue, the state is the reason"
    );
}

#[test]
fn a_dispatch_that_would_start_no_agent_says_where_it_leaves_the_route_in_words() {
    let next = row(RouteState::NeedsManual, vec![candidate(1, true)]);
    let why = Refusal::NotStarted {
        next: Box::new(next),
    }
    .why(&named());
    assert_eq!(
        why.as_deref(),
        Some(
            "no agent would start now (after it the route needs manual recovery); nothing was \
             sent, try again when one can start"
        ),
        "the state in the app's words, not its code name"
    );
}

#[test]
fn a_refusal_says_each_state_in_the_words_of_its_label() {
    for state in RouteState::ALL {
        assert!(
            state.after_the_route().ends_with(state.words())
                || state
                    .after_the_route()
                    .contains(&format!("{} ", state.words())),
            "“the route {}” says {state:?} as its label does (“{}”), so the app's badge and \
             its refusals agree",
            state.after_the_route(),
            state.words()
        );
    }
}
