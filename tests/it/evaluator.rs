//! The decision's scenario table and properties of the evaluator, driven
//! through the public API exactly as the route engine uses it.

use chrono::{DateTime, Duration, TimeZone, Utc};
use proptest::prelude::*;
use recourse::classification::{
    Class, Classification, Confidence, PolicyClass, Scope, SemanticCode,
};
use recourse::evaluator::{
    evaluate, evaluate_failure, CandidateSlot, Decision, HistoryWording, Identical, ManualReason,
    RouteCycle, SessionFacts, StopReason, ToolCalls,
};
use recourse::policy::{
    AutoContinue, CandidatePolicy, ClassPolicy, Exhausted, ResetWait, Retry, UnclassifiedPolicy,
};
use recourse::safety::{gate, EffectContext, GateVerdict, PromptDelivery, UnsafeReason};
use recourse::simulation::{simulate, SimulatedFailure, TimelineWording};

fn t0() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, 1, 12, 0, 0).unwrap()
}

fn secs(n: i64) -> Duration {
    Duration::seconds(n)
}

fn slot(name: &str, policy: CandidatePolicy) -> CandidateSlot {
    CandidateSlot {
        enabled: true,
        name: name.into(),
        policy,
        kind: None,
    }
}

fn failure(code: SemanticCode, reset_at: Option<DateTime<Utc>>) -> Classification {
    Classification {
        code,
        class: code.class(),
        confidence: Confidence::High,
        scope: Scope::Unknown,
        rule_id: Some("test.rule.v1".into()),
        catalogue_version: "test".into(),
        retry_after_s: None,
        reset_at,
        matched: None,
        explanation: "test failure".into(),
    }
}

const TRANSIENT: SemanticCode = SemanticCode::ProviderOverloaded;
const HARD: SemanticCode = SemanticCode::UsageLimitReached;

/// Evaluates one safe failure at `now` and applies the decision.
fn step(
    cycle: &RouteCycle,
    candidates: &[CandidateSlot],
    classification: &Classification,
    now: DateTime<Utc>,
) -> (Decision, RouteCycle) {
    let decision = evaluate(
        cycle,
        classification,
        &GateVerdict::Allowed,
        Identical::NONE,
        candidates,
        now,
    );
    (decision, cycle.apply(&decision))
}

/// The first failure of a fresh route on candidate 0, at `t0`.
fn first_step(
    candidates: &[CandidateSlot],
    classification: &Classification,
) -> (Decision, RouteCycle) {
    step(&RouteCycle::new(0), candidates, classification, t0())
}

#[test]
fn three_retries_from_five_seconds_wait_5_10_20_then_skip() {
    let policy = CandidatePolicy::both(ClassPolicy::new(None, Some((3, 5)), Exhausted::Skip));
    let candidates = [slot("a", policy.clone()), slot("b", policy)];
    let mut cycle = RouteCycle::start(&candidates).unwrap();
    let mut now = t0();
    let mut delays = Vec::new();
    let outcome = loop {
        let (decision, next) = step(&cycle, &candidates, &failure(TRANSIENT, None), now);
        cycle = next;
        match decision {
            Decision::Retry {
                at,
                delay_seconds,
                ordinal,
                ..
            } => {
                assert_eq!(
                    at - now,
                    secs(delay_seconds.into()),
                    "retry is scheduled delay after now"
                );
                assert_eq!(ordinal as usize, delays.len() + 1, "ordinals count from 1");
                delays.push(delay_seconds);
                now = at;
            }
            other => break other,
        }
    };
    assert_eq!(delays, vec![5, 10, 20]);
    assert_eq!(
        outcome,
        Decision::Skip {
            class: PolicyClass::Transient,
            excluded: 0,
            next: 1
        }
    );
    assert_eq!(
        cycle.current, 1,
        "skip moves the route to the next candidate"
    );
    assert!(
        cycle.excluded.contains(&0),
        "the skipped candidate is excluded for the cycle"
    );
}

#[test]
fn three_retries_then_stop_stops() {
    let policy = CandidatePolicy::both(ClassPolicy::new(None, Some((3, 5)), Exhausted::Stop));
    let candidates = [slot("a", policy.clone()), slot("b", policy)];
    let mut cycle = RouteCycle::new(0);
    for _ in 0..3 {
        let (decision, next) = step(&cycle, &candidates, &failure(TRANSIENT, None), t0());
        assert!(matches!(decision, Decision::Retry { .. }), "{decision:?}");
        cycle = next;
    }
    let (decision, _) = step(&cycle, &candidates, &failure(TRANSIENT, None), t0());
    assert_eq!(
        decision,
        Decision::Stop {
            reason: StopReason::ExhaustedWithStop {
                class: PolicyClass::Transient
            }
        }
    );
}

#[test]
fn trusted_reset_within_max_waits_then_retries_once_with_budget_untouched() {
    let hard = ClassPolicy::new(Some(300), Some((1, 5)), Exhausted::Stop);
    let policy = CandidatePolicy {
        hard,
        ..CandidatePolicy::default_for_new_candidate()
    };
    let candidates = [slot("a", policy)];
    let reset = t0() + secs(60);
    let (wait, cycle) = first_step(&candidates, &failure(HARD, Some(reset)));
    assert_eq!(
        wait,
        Decision::WaitForReset {
            class: PolicyClass::Hard,
            until: reset
        }
    );
    assert_eq!(
        cycle.usage_of(0, PolicyClass::Hard).retries_used,
        0,
        "the reset wait and its attempt do not consume retry budget"
    );
    // The post-wait attempt fails again, with a fresh reset hint.
    let (retry, cycle) = step(
        &cycle,
        &candidates,
        &failure(HARD, Some(reset + secs(60))),
        reset,
    );
    assert_eq!(
        retry,
        Decision::Retry {
            class: PolicyClass::Hard,
            at: reset + secs(5),
            ordinal: 1,
            max_retries: 1,
            delay_seconds: 5
        },
        "reset wait is once per candidate+class per cycle; the full retry budget is left"
    );
    let (outcome, _) = step(&cycle, &candidates, &failure(HARD, None), reset + secs(5));
    assert!(matches!(outcome, Decision::Stop { .. }), "{outcome:?}");
}

#[test]
fn reset_beyond_max_wait_is_not_shortened() {
    let policy = CandidatePolicy::both(ClassPolicy::new(Some(300), Some((2, 5)), Exhausted::Stop));
    let candidates = [slot("a", policy)];
    let reset = t0() + Duration::hours(6);
    let (decision, _) = first_step(&candidates, &failure(HARD, Some(reset)));
    assert!(
        matches!(
            decision,
            Decision::Retry {
                ordinal: 1,
                delay_seconds: 5,
                ..
            }
        ),
        "a reset 6 h away with a 5 min maximum is ignored, not waited for 5 min: {decision:?}"
    );
}

#[test]
fn reset_at_exactly_the_max_is_waited_for() {
    let policy = CandidatePolicy::both(ClassPolicy::new(Some(300), None, Exhausted::Stop));
    let reset = t0() + secs(300);
    let (decision, _) = first_step(&[slot("a", policy)], &failure(HARD, Some(reset)));
    assert_eq!(
        decision,
        Decision::WaitForReset {
            class: PolicyClass::Hard,
            until: reset
        }
    );
}

#[test]
fn reset_in_the_past_or_now_is_not_waited_for() {
    let policy = CandidatePolicy::both(ClassPolicy::new(Some(300), None, Exhausted::Stop));
    let candidates = [slot("a", policy)];
    for reset in [t0() - secs(1), t0()] {
        let (decision, _) = first_step(&candidates, &failure(HARD, Some(reset)));
        assert!(
            matches!(decision, Decision::Stop { .. }),
            "{reset}: {decision:?}"
        );
    }
}

#[test]
fn reset_wait_never_refunds_budget_already_used() {
    let policy = CandidatePolicy::both(ClassPolicy::new(Some(300), Some((2, 5)), Exhausted::Stop));
    let candidates = [slot("a", policy)];
    let (first, cycle) = first_step(&candidates, &failure(HARD, None));
    assert!(
        matches!(first, Decision::Retry { ordinal: 1, .. }),
        "{first:?}"
    );
    let (wait, cycle) = step(
        &cycle,
        &candidates,
        &failure(HARD, Some(t0() + secs(65))),
        t0() + secs(5),
    );
    assert!(matches!(wait, Decision::WaitForReset { .. }), "{wait:?}");
    let (second, _) = step(&cycle, &candidates, &failure(HARD, None), t0() + secs(65));
    assert!(
        matches!(
            second,
            Decision::Retry {
                ordinal: 2,
                delay_seconds: 10,
                ..
            }
        ),
        "the retry after the wait continues the budget: {second:?}"
    );
}

#[test]
fn hard_with_no_wait_and_no_retry_and_stop_stops_without_trying_another_candidate() {
    let hard = ClassPolicy::new(None, None, Exhausted::Stop);
    let policy = CandidatePolicy {
        hard,
        ..CandidatePolicy::default_for_new_candidate()
    };
    let candidates = [
        slot("a", policy),
        slot("b", CandidatePolicy::default_for_new_candidate()),
    ];
    let (decision, cycle) = first_step(&candidates, &failure(HARD, None));
    assert_eq!(
        decision,
        Decision::Stop {
            reason: StopReason::ExhaustedWithStop {
                class: PolicyClass::Hard
            }
        }
    );
    assert_eq!(cycle, RouteCycle::new(0), "stop neither moves nor excludes");
}

#[test]
fn unknown_text_goes_to_manual_even_with_retry_and_skip_policy() {
    let policy = CandidatePolicy::both(ClassPolicy::new(Some(300), Some((3, 5)), Exhausted::Skip));
    let candidates = [slot("a", policy.clone()), slot("b", policy)];
    let unknown = failure(SemanticCode::Unknown, Some(t0() + secs(10)));
    let (decision, _) = first_step(&candidates, &unknown);
    assert_eq!(
        decision,
        Decision::Manual {
            reason: ManualReason::Unclassified {
                code: SemanticCode::Unknown
            }
        }
    );
}

#[test]
fn low_confidence_goes_to_manual() {
    let policy = CandidatePolicy::both(ClassPolicy::new(None, Some((3, 5)), Exhausted::Skip));
    let mut unsure = failure(TRANSIENT, None);
    unsure.confidence = Confidence::Low;
    let (decision, _) = first_step(&[slot("a", policy)], &unsure);
    assert_eq!(
        decision,
        Decision::Manual {
            reason: ManualReason::LowConfidence { code: TRANSIENT }
        }
    );
}

#[test]
fn failure_after_tool_activity_goes_to_manual_even_with_retry_and_skip_policy() {
    let policy = CandidatePolicy::both(ClassPolicy::new(Some(300), Some((3, 5)), Exhausted::Skip));
    let candidates = [slot("a", policy.clone()), slot("b", policy)];
    let effect = EffectContext {
        tool_activity_seen: Some(true),
        ..EffectContext::effect_safe()
    };
    let verdict = gate(&effect);
    let decision = evaluate(
        &RouteCycle::new(0),
        &failure(TRANSIENT, None),
        &verdict,
        Identical::NONE,
        &candidates,
        t0(),
    );
    assert_eq!(
        decision,
        Decision::Manual {
            reason: ManualReason::UnsafeEffect {
                reason: UnsafeReason::ToolActivitySeen
            }
        }
    );
}

#[test]
fn retry_ordinals_are_per_class() {
    let policy = CandidatePolicy::both(ClassPolicy::new(None, Some((2, 5)), Exhausted::Stop));
    let candidates = [slot("a", policy)];
    let (t1, cycle) = first_step(&candidates, &failure(TRANSIENT, None));
    let (h1, cycle) = step(&cycle, &candidates, &failure(HARD, None), t0());
    let (t2, cycle) = step(&cycle, &candidates, &failure(TRANSIENT, None), t0());
    assert!(
        matches!(
            t1,
            Decision::Retry {
                class: PolicyClass::Transient,
                ordinal: 1,
                ..
            }
        ),
        "{t1:?}"
    );
    assert!(
        matches!(
            h1,
            Decision::Retry {
                class: PolicyClass::Hard,
                ordinal: 1,
                delay_seconds: 5,
                ..
            }
        ),
        "a hard failure starts its own ordinal: {h1:?}"
    );
    assert!(
        matches!(
            t2,
            Decision::Retry {
                class: PolicyClass::Transient,
                ordinal: 2,
                delay_seconds: 10,
                ..
            }
        ),
        "{t2:?}"
    );
    let (t3, _) = step(&cycle, &candidates, &failure(TRANSIENT, None), t0());
    assert!(
        matches!(t3, Decision::Stop { .. }),
        "transient budget is used up: {t3:?}"
    );
}

#[test]
fn next_candidate_starts_with_fresh_ordinals_and_reset_wait() {
    let policy = CandidatePolicy::both(ClassPolicy::new(Some(300), Some((1, 5)), Exhausted::Skip));
    let candidates = [slot("a", policy.clone()), slot("b", policy)];
    let mut cycle = RouteCycle::new(0);
    let reset = Some(t0() + secs(30));
    for expected in ["wait_for_reset", "retry", "skip", "wait_for_reset", "retry"] {
        let (decision, next) = step(&cycle, &candidates, &failure(TRANSIENT, reset), t0());
        let kind = serde_json::to_value(decision).unwrap()["kind"]
            .as_str()
            .unwrap()
            .to_string();
        assert_eq!(
            kind, expected,
            "on candidate {}: {decision:?}",
            cycle.current
        );
        cycle = next;
    }
    assert!(
        matches!(
            step(&cycle, &candidates, &failure(TRANSIENT, reset), t0()).0,
            Decision::Manual {
                reason: ManualReason::NoEligibleCandidate {
                    class: PolicyClass::Transient
                }
            }
        ),
        "the last candidate has nobody to skip to"
    );
}

#[test]
fn skip_with_no_candidate_left_goes_to_manual() {
    let candidates = [slot("only", CandidatePolicy::default_for_new_candidate())];
    let (decision, _) = first_step(&candidates, &failure(HARD, None));
    assert_eq!(
        decision,
        Decision::Manual {
            reason: ManualReason::NoEligibleCandidate {
                class: PolicyClass::Hard
            }
        }
    );
}

#[test]
fn disabled_and_excluded_candidates_are_passed_over() {
    let skip = CandidatePolicy::default_for_new_candidate();
    let mut candidates = vec![
        slot("a", skip.clone()),
        slot("b", skip.clone()),
        slot("c", skip.clone()),
        slot("d", skip),
    ];
    candidates[1].enabled = false;
    let mut cycle = RouteCycle::new(0);
    cycle.excluded.insert(2);
    let (decision, _) = step(&cycle, &candidates, &failure(TRANSIENT, None), t0());
    assert_eq!(
        decision,
        Decision::Skip {
            class: PolicyClass::Transient,
            excluded: 0,
            next: 3
        }
    );
    candidates[0].enabled = false;
    assert_eq!(
        RouteCycle::start(&candidates).map(|c| c.current),
        Some(2),
        "a route starts at its first enabled candidate"
    );
}

#[test]
fn cycle_pointing_past_the_candidates_goes_to_manual() {
    let candidates = [slot("a", CandidatePolicy::default_for_new_candidate())];
    let (decision, _) = step(
        &RouteCycle::new(4),
        &candidates,
        &failure(TRANSIENT, None),
        t0(),
    );
    assert_eq!(
        decision,
        Decision::Manual {
            reason: ManualReason::CandidateOutOfRange { index: 4, count: 1 }
        }
    );
}

#[test]
fn applying_the_same_retry_twice_does_not_use_budget_twice() {
    let policy = CandidatePolicy::both(ClassPolicy::new(None, Some((3, 5)), Exhausted::Stop));
    let (decision, cycle) = first_step(&[slot("a", policy)], &failure(TRANSIENT, None));
    assert_eq!(
        cycle.apply(&decision),
        cycle,
        "apply is idempotent for a persisted decision"
    );
}

#[test]
fn decisions_and_cycles_have_a_stable_json_shape() {
    let retry = Decision::Retry {
        class: PolicyClass::Transient,
        at: t0(),
        ordinal: 1,
        max_retries: 3,
        delay_seconds: 5,
    };
    assert_eq!(
        serde_json::to_string(&retry).unwrap(),
        r#"{"kind":"retry","class":"transient","at":"2026-03-01T12:00:00Z","ordinal":1,"max_retries":3,"delay_seconds":5}"#
    );
    let manual = Decision::Manual {
        reason: ManualReason::UnsafeEffect {
            reason: UnsafeReason::AssistantOutputSeen,
        },
    };
    assert_eq!(
        serde_json::to_string(&manual).unwrap(),
        r#"{"kind":"manual","reason":{"kind":"unsafe_effect","reason":"assistant_output_seen"}}"#
    );
    let skip_repeated = Decision::SkipRepeated {
        excluded: 0,
        next: 2,
        identical: 3,
    };
    assert_eq!(
        serde_json::to_string(&skip_repeated).unwrap(),
        r#"{"kind":"skip_repeated","excluded":0,"next":2,"identical":3}"#
    );
    let below = Decision::Manual {
        reason: ManualReason::RepeatedUnclassified {
            code: SemanticCode::Unknown,
            identical: 1,
            threshold: 3,
            held: recourse::evaluator::RepeatHeld::BelowThreshold,
        },
    };
    assert_eq!(
        serde_json::to_string(&below).unwrap(),
        r#"{"kind":"manual","reason":{"kind":"repeated_unclassified","code":"unknown","identical":1,"threshold":3,"held":"below_threshold"}}"#
    );
    let policy = CandidatePolicy::both(ClassPolicy::new(Some(60), Some((2, 5)), Exhausted::Skip));
    let candidates = [slot("a", policy.clone()), slot("b", policy)];
    let (_, cycle) = first_step(&candidates, &failure(HARD, None));
    let json = serde_json::to_string(&cycle).unwrap();
    assert_eq!(
        json,
        r#"{"current":0,"excluded":[],"usage":{"0":{"transient":{"retries_used":0,"reset_wait_used":false,"continuations_used":0},"hard":{"retries_used":1,"reset_wait_used":false,"continuations_used":0}}},"repeat_skip_used":false}"#
    );
    let continued = Decision::Continue {
        class: PolicyClass::Transient,
        ordinal: 1,
        max_continuations: 2,
    };
    assert_eq!(
        serde_json::to_string(&continued).unwrap(),
        r#"{"kind":"continue","class":"transient","ordinal":1,"max_continuations":2}"#
    );
    assert_eq!(
        serde_json::from_str::<RouteCycle>(&json).unwrap(),
        cycle,
        "round trip"
    );
}

#[test]
fn every_reason_reads_as_a_sentence() {
    use PolicyClass::*;
    let cases = [
        (
            ManualReason::UnsafeEffect { reason: UnsafeReason::AmbiguousPromptDelivery }.describe(),
            "not safe to recover automatically — prompt delivery is ambiguous; the agent may have received and acted on it",
        ),
        (
            ManualReason::Unclassified { code: SemanticCode::Unknown }.describe(),
            "no catalogue rule recognised the failure",
        ),
        (
            ManualReason::Unclassified { code: SemanticCode::TaskFailed }.describe(),
            "the failure is unclassified (“The task itself failed”), outside provider policy",
        ),
        (
            ManualReason::LowConfidence { code: SemanticCode::RateLimited }.describe(),
            "the classification “Rate limited (too many requests)” has low confidence",
        ),
        (
            ManualReason::NoEligibleCandidate { class: Transient }.describe(),
            "the transient policy says skip, but no candidate is left to skip to in this cycle",
        ),
        (
            ManualReason::CandidateOutOfRange { index: 4, count: 2 }.describe(),
            "the route cycle points at candidate 4, but the route has 2 candidates",
        ),
        (
            StopReason::ExhaustedWithStop { class: Hard }.describe(),
            "hard retries and wait are used up and the candidate's policy says stop",
        ),
    ];
    for (text, expected) in cases {
        assert_eq!(text, expected);
    }
}

/// One decision of each kind, at `t0() + 70 s` where an instant is involved.
fn one_of_each_decision() -> [Decision; 5] {
    [
        Decision::WaitForReset {
            class: PolicyClass::Hard,
            until: t0() + secs(70),
        },
        Decision::Retry {
            class: PolicyClass::Transient,
            at: t0() + secs(70),
            ordinal: 2,
            max_retries: 3,
            delay_seconds: 10,
        },
        Decision::Skip {
            class: PolicyClass::Transient,
            excluded: 0,
            next: 1,
        },
        Decision::Stop {
            reason: StopReason::ExhaustedWithStop {
                class: PolicyClass::Hard,
            },
        },
        Decision::Manual {
            reason: ManualReason::Unclassified {
                code: SemanticCode::Unknown,
            },
        },
    ]
}

#[test]
fn history_names_absolute_instants_and_candidates_by_position() {
    let texts = one_of_each_decision().map(|d| d.describe(&HistoryWording));
    assert_eq!(
        texts,
        [
            "wait for the hard reset until 2026-03-01T12:01:10Z",
            "transient retry 2 of 3 in 10 s, at 2026-03-01T12:01:10Z",
            "candidate 1 used up its transient retries and wait; skipping to candidate 2",
            "stop: hard retries and wait are used up and the candidate's policy says stop",
            "manual recovery: no catalogue rule recognised the failure",
        ],
        "the attempt history keeps these words: tests and old rows read them"
    );
}

#[test]
fn timeline_says_the_same_with_offsets_from_its_start_and_candidate_names() {
    let policy = CandidatePolicy::default_for_new_candidate();
    let slots = [slot("opus", policy.clone()), slot("gemini", policy)];
    let words = TimelineWording {
        start: t0(),
        candidates: &slots,
    };
    let texts = one_of_each_decision().map(|d| d.describe(&words));
    assert_eq!(
        texts,
        [
            "wait for the hard reset until +1 min 10 s",
            "transient retry 2 of 3 in 10 s, at +1 min 10 s",
            "“opus” used up its transient retries and wait; skipping to “gemini”",
            "stop: hard retries and wait are used up and the candidate's policy says stop",
            "manual recovery: no catalogue rule recognised the failure",
        ]
    );
}

// ---- properties ----

fn arb_class_policy() -> impl Strategy<Value = ClassPolicy> {
    // Deliberately not validated: the evaluator must stay bounded anyway.
    (
        (any::<bool>(), 1u32..=604_800),
        (any::<bool>(), 0u32..=10, 0u32..=3600),
        any::<bool>(),
        (any::<bool>(), 0u32..=7),
    )
        .prop_map(
            |(
                (wait, max_wait_seconds),
                (retry, max_retries, initial),
                skip,
                (continues, max_continuations),
            )| ClassPolicy {
                wait_for_reset: ResetWait {
                    enabled: wait,
                    max_wait_seconds,
                },
                retry: Retry {
                    enabled: retry,
                    max_retries,
                    initial_interval_seconds: initial,
                },
                on_exhausted: if skip {
                    Exhausted::Skip
                } else {
                    Exhausted::Stop
                },
                auto_continue: AutoContinue {
                    enabled: continues,
                    max_continuations,
                },
            },
        )
}

fn arb_candidates() -> impl Strategy<Value = Vec<CandidateSlot>> {
    prop::collection::vec(
        (any::<bool>(), arb_class_policy(), arb_class_policy()),
        1..=4,
    )
    .prop_map(|slots| {
        slots
            .into_iter()
            .enumerate()
            .map(|(i, (enabled, transient, hard))| CandidateSlot {
                enabled,
                name: format!("c{i}"),
                policy: CandidatePolicy::new(transient, hard),
                kind: None,
            })
            .collect()
    })
}

fn arb_safe_failure() -> impl Strategy<Value = SimulatedFailure> {
    (
        prop::sample::select(vec![
            TRANSIENT,
            HARD,
            SemanticCode::RateLimited,
            SemanticCode::QuotaExhausted,
        ]),
        prop::option::of(-60i32..=700_000),
    )
        .prop_map(|(code, reset)| SimulatedFailure {
            reset_in_seconds: reset,
            ..SimulatedFailure::of(code)
        })
}

fn attempt_bound(candidates: &[CandidateSlot]) -> usize {
    candidates
        .iter()
        .flat_map(|slot| {
            PolicyClass::ALL.map(|class| slot.policy.section(class).retry.max_retries as usize + 2)
        })
        .sum()
}

fn arb_unsafe_effect() -> impl Strategy<Value = EffectContext> {
    let flag = prop::option::of(any::<bool>());
    let delivery = prop::option::of(prop::sample::select(vec![
        PromptDelivery::NotDelivered,
        PromptDelivery::Confirmed,
        PromptDelivery::Ambiguous,
    ]));
    (delivery, flag.clone(), flag.clone(), flag.clone(), flag)
        .prop_map(
            |(prompt_delivery, assistant, tool, partial, current)| EffectContext {
                prompt_delivery,
                assistant_output_seen: assistant,
                tool_activity_seen: tool,
                partial_result_seen: partial,
                evidence_current: current,
            },
        )
        .prop_filter("must not be effect-safe", |ctx| {
            gate(ctx) != GateVerdict::Allowed
        })
}

proptest! {
    #[test]
    fn no_failure_sequence_yields_unbounded_attempts(
        candidates in arb_candidates(),
        failures in prop::collection::vec(arb_safe_failure(), 100),
    ) {
        let steps = simulate(&candidates, &failures, t0());
        let automatic = steps.iter().filter(|s| s.decision.is_automatic()).count();
        let bound = attempt_bound(&candidates);
        prop_assert!(automatic <= bound, "{automatic} automatic decisions > bound {bound}");
        if failures.len() > bound {
            if let Some(last) = steps.last() {
                prop_assert!(!last.decision.is_automatic(), "recovery must end: {:?}", last.decision);
            }
        }
    }

    #[test]
    fn delays_never_exceed_24_hours_or_the_configured_max_wait(
        candidates in arb_candidates(),
        failures in prop::collection::vec(arb_safe_failure(), 1..60),
    ) {
        for step in simulate(&candidates, &failures, t0()) {
            let policy = &candidates[step.candidate as usize].policy;
            match step.decision {
                Decision::Retry { at, delay_seconds, .. } => {
                    prop_assert!(delay_seconds <= 86_400, "delay {delay_seconds}s");
                    prop_assert_eq!(at - step.at, secs(delay_seconds.into()));
                }
                Decision::WaitForReset { class, until } => {
                    let max = policy.section(class).wait_for_reset.max_wait_seconds;
                    prop_assert!(until > step.at, "a wait is always into the future");
                    prop_assert!(until - step.at <= secs(max.into()), "wait beyond max {max}s");
                }
                Decision::Continue { .. }
                | Decision::Skip { .. }
                | Decision::SkipRepeated { .. }
                | Decision::Stop { .. }
                | Decision::Manual { .. } => {}
            }
        }
    }

    #[test]
    fn unsafe_effects_never_yield_automatic_action(
        candidates in arb_candidates(),
        effect in arb_unsafe_effect(),
        failure in arb_safe_failure(),
        current in 0u32..4,
    ) {
        let classification = failure.classification(t0());
        let decision = evaluate(&RouteCycle::new(current), &classification, &gate(&effect), Identical::NONE, &candidates, t0());
        prop_assert!(matches!(decision, Decision::Manual { reason: ManualReason::UnsafeEffect { .. } }), "{:?}", decision);
    }

    /// On candidates that did not opt in to the unclassified exception
    /// (`arb_candidates` never does).
    #[test]
    fn unclassified_or_low_confidence_never_yields_automatic_action(
        candidates in arb_candidates(),
        code in prop::sample::select(SemanticCode::ALL.to_vec()),
        forced_unclassified in any::<bool>(),
        confidence in prop::sample::select(vec![Confidence::Low, Confidence::Medium, Confidence::High]),
        reset in prop::option::of(1i32..=600),
    ) {
        let failure = SimulatedFailure {
            class: forced_unclassified.then_some(Class::Unclassified),
            confidence,
            reset_in_seconds: reset,
            ..SimulatedFailure::of(code)
        };
        let classification = failure.classification(t0());
        let doubtful = classification.class == Class::Unclassified || confidence == Confidence::Low;
        let decision = evaluate(&RouteCycle::new(0), &classification, &GateVerdict::Allowed, Identical::NONE, &candidates, t0());
        if doubtful {
            prop_assert!(!decision.is_automatic(), "{:?}", decision);
            prop_assert!(matches!(decision, Decision::Manual { .. }), "{:?}", decision);
        }
    }

    /// Opted in or not, an unclassified failure never waits or retries: it
    /// moves on only as the exception, at the threshold of the candidate it
    /// leaves, after that many identical failures in a row on it, and at
    /// most once in a cycle.
    #[test]
    fn unclassified_failures_move_on_only_at_the_threshold_and_once_per_cycle(
        candidates in arb_candidates(),
        thresholds in prop::collection::vec(prop::option::of(2u32..=10), 4),
        fingerprints in prop::collection::vec(0u8..3, 1..40),
    ) {
        let candidates: Vec<CandidateSlot> = candidates
            .into_iter()
            .zip(thresholds)
            .map(|(mut slot, threshold)| {
                if let Some(n) = threshold {
                    slot.policy.unclassified = UnclassifiedPolicy::skip_after(n);
                }
                slot
            })
            .collect();
        let failures: Vec<SimulatedFailure> = fingerprints
            .iter()
            .map(|f| SimulatedFailure {
                class: Some(Class::Unclassified),
                fingerprint: Some(format!("f{f}")),
                ..SimulatedFailure::of(SemanticCode::Unknown)
            })
            .collect();
        let steps = simulate(&candidates, &failures, t0());
        let mut moves = 0;
        for (i, step) in steps.iter().enumerate() {
            match step.decision {
                Decision::SkipRepeated { excluded, identical, .. } => {
                    moves += 1;
                    let threshold = candidates[excluded as usize]
                        .policy
                        .unclassified
                        .repeated_failure
                        .threshold();
                    prop_assert_eq!(threshold, Some(identical), "moves exactly at the threshold");
                    let run = &steps[i + 1 - identical as usize..=i];
                    let same = |s: &&recourse::simulation::TimelineStep| {
                        s.candidate == excluded
                            && failures[s.failure as usize].fingerprint
                                == failures[step.failure as usize].fingerprint
                    };
                    prop_assert!(run.iter().all(|s| same(&s)), "{:?}", run);
                }
                Decision::Manual { .. } => {}
                other => prop_assert!(false, "an unclassified failure never {:?}", other),
            }
        }
        prop_assert!(moves <= 1, "one move per cycle, got {}", moves);
    }
}

// ---- automatic continuation ----

fn arb_session() -> impl Strategy<Value = SessionFacts> {
    (
        any::<bool>(),
        prop::sample::select(vec![
            ToolCalls::Completed,
            ToolCalls::Pending,
            ToolCalls::Failed,
            ToolCalls::Refused,
            ToolCalls::Unknown,
        ]),
    )
        .prop_map(|(resumable, tools)| SessionFacts { resumable, tools })
}

fn arb_effect() -> impl Strategy<Value = EffectContext> {
    prop_oneof![Just(EffectContext::effect_safe()), arb_unsafe_effect()]
}

fn arb_cycle() -> impl Strategy<Value = RouteCycle> {
    (0u32..4, 0u32..8).prop_map(|(current, used)| {
        let cycle = RouteCycle::new(current);
        if used == 0 {
            return cycle;
        }
        cycle.apply(&Decision::Continue {
            class: PolicyClass::Transient,
            ordinal: used,
            max_continuations: used,
        })
    })
}

proptest! {
    #[test]
    fn automatic_continuation_changes_only_a_gate_refusal_and_only_with_every_piece_of_evidence(
        candidates in arb_candidates(),
        cycle in arb_cycle(),
        effect in arb_effect(),
        failure in arb_safe_failure(),
        session in arb_session(),
    ) {
        let classification = failure.classification(t0());
        let verdict = gate(&effect);
        let before = evaluate(&cycle, &classification, &verdict, Identical::NONE, &candidates, t0());
        let decision = evaluate_failure(&cycle, &classification, &verdict, Identical::NONE, &session, &candidates, t0());
        if decision == before {
            return Ok(());
        }
        let Decision::Continue { ordinal, max_continuations, .. } = decision else {
            return Err(TestCaseError::fail(format!("only a continuation replaces {before:?}: {decision:?}")));
        };
        let slot = &candidates[cycle.current as usize];
        let auto = slot.policy.transient.auto_continue;
        prop_assert!(matches!(before, Decision::Manual { reason: ManualReason::UnsafeEffect { .. } }), "{before:?}");
        prop_assert!(auto.enabled, "never without the option");
        prop_assert_eq!(classification.class, Class::Transient);
        prop_assert_eq!(effect.evidence_current, Some(true));
        prop_assert!(session.resumable);
        prop_assert_eq!(session.tools, ToolCalls::Completed);
        prop_assert!(ordinal <= max_continuations && max_continuations == auto.max_continuations);
        let used = cycle.usage_of(cycle.current, PolicyClass::Transient).continuations_used;
        prop_assert_eq!(ordinal, used + 1, "the budget is counted, never renewed");
    }

    #[test]
    fn with_the_option_off_the_decision_is_the_gate_and_policy_as_before(
        candidates in arb_candidates(),
        cycle in arb_cycle(),
        effect in arb_effect(),
        failure in arb_safe_failure(),
        session in arb_session(),
    ) {
        let off: Vec<CandidateSlot> = candidates
            .into_iter()
            .map(|mut slot| {
                slot.policy.transient.auto_continue = AutoContinue::DISABLED;
                slot
            })
            .collect();
        let classification = failure.classification(t0());
        let verdict = gate(&effect);
        prop_assert_eq!(
            evaluate_failure(&cycle, &classification, &verdict, Identical::NONE, &session, &off, t0()),
            evaluate(&cycle, &classification, &verdict, Identical::NONE, &off, t0())
        );
    }

    #[test]
    fn a_session_is_continued_at_most_its_budget_in_a_cycle(
        candidates in arb_candidates(),
        effect in arb_unsafe_effect(),
        failures in 1usize..12,
    ) {
        let effect = EffectContext { evidence_current: Some(true), ..effect };
        prop_assume!(gate(&effect) != GateVerdict::Allowed, "the agent worked");
        let after_work = SimulatedFailure {
            effect: Some(effect),
            session: Some(SessionFacts { resumable: true, tools: ToolCalls::Completed }),
            ..SimulatedFailure::of(TRANSIENT)
        };
        let steps = simulate(&candidates, &vec![after_work; failures], t0());
        let continued = steps.iter().filter(|s| matches!(s.decision, Decision::Continue { .. })).count();
        if let Some(first) = steps.first() {
            let budget = candidates[first.candidate as usize].policy.transient.auto_continue;
            let most = if budget.enabled { budget.max_continuations as usize } else { 0 };
            prop_assert!(continued <= most, "{continued} continuations, budget {most}");
            prop_assert!(
                steps.iter().all(|s| matches!(s.decision, Decision::Continue { .. } | Decision::Manual { .. })),
                "after work, only a continuation or a person: {steps:?}"
            );
        }
    }
}
