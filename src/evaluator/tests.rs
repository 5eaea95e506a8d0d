//! The unclassified exception as the evaluator applies it: each failure
//! is counted by [`repeated::identical`] over the ones before it, then
//! evaluated, and its decision applied to the cycle, as the route machine
//! and the preview do.

use super::repeated::{identical, Identical, Sighting};
use super::*;
use crate::evidence::Fingerprint;
use crate::policy::{ClassPolicy, UnclassifiedPolicy};
use crate::safety::{gate, EffectContext};
use crate::simulation::SimulatedFailure;
use chrono::TimeZone;

fn t0() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 12, 4, 9, 0, 0).unwrap()
}

fn unclassified() -> Classification {
    SimulatedFailure {
        class: Some(Class::Unclassified),
        ..SimulatedFailure::of(SemanticCode::Unknown)
    }
    .classification(t0())
}

/// Candidates `a`, `b`, `c`: immediate skip for both classes, and `a` and
/// `b` with the exception at `threshold` (`None`: off, as by default).
fn candidates(threshold: Option<u32>) -> Vec<CandidateSlot> {
    ["a", "b", "c"]
        .into_iter()
        .map(|name| {
            let mut policy =
                CandidatePolicy::both(ClassPolicy::new(None, None, crate::policy::Exhausted::Skip));
            if let (Some(n), true) = (threshold, name != "c") {
                policy.unclassified = UnclassifiedPolicy::skip_after(n);
            }
            CandidateSlot {
                enabled: true,
                name: name.into(),
                policy,
                kind: None,
            }
        })
        .collect()
}

/// One route: failures come one by one, each counted over those before.
struct Route {
    cycle: RouteCycle,
    earlier: Vec<Sighting>,
    candidates: Vec<CandidateSlot>,
}

impl Route {
    fn new(candidates: Vec<CandidateSlot>) -> Route {
        Route {
            cycle: RouteCycle::new(0),
            earlier: Vec::new(),
            candidates,
        }
    }

    /// An unclassified failure of the current candidate with `effect`,
    /// `files_changed` and fingerprint `name`; its decision, applied.
    fn fails(&mut self, name: &str, effect: &EffectContext, files: Option<u32>) -> Decision {
        let verdict = gate(effect);
        let sighting = Sighting::of(
            self.cycle.current,
            Class::Unclassified,
            &verdict,
            files,
            Fingerprint::named(name),
        );
        let count = identical(&self.earlier, &sighting);
        let decision = evaluate(
            &self.cycle,
            &unclassified(),
            &verdict,
            count,
            &self.candidates,
            t0(),
        );
        self.earlier.push(sighting);
        self.cycle = self.cycle.apply(&decision);
        decision
    }

    fn quietly(&mut self, name: &str) -> Decision {
        self.fails(name, &EffectContext::effect_safe(), Some(0))
    }
}

fn held(identical: u32, threshold: u32, held: RepeatHeld) -> Decision {
    Decision::Manual {
        reason: ManualReason::RepeatedUnclassified {
            code: SemanticCode::Unknown,
            identical,
            threshold,
            held,
        },
    }
}

#[test]
fn off_by_default_every_unclassified_failure_needs_a_person() {
    let mut route = Route::new(candidates(None));
    for _ in 0..12 {
        assert_eq!(
            route.quietly("x"),
            Decision::Manual {
                reason: ManualReason::Unclassified {
                    code: SemanticCode::Unknown
                }
            },
            "the decision's rule, word for word as before the exception existed"
        );
    }
    assert_eq!(route.cycle.current, 0, "never moved on");
}

#[test]
fn below_the_threshold_each_failure_needs_a_person() {
    let mut route = Route::new(candidates(Some(3)));
    assert_eq!(route.quietly("x"), held(1, 3, RepeatHeld::BelowThreshold));
    assert_eq!(route.quietly("x"), held(2, 3, RepeatHeld::BelowThreshold));
    assert!(
        !route.cycle.repeat_skip_used && route.cycle.excluded.is_empty(),
        "nothing moved: {:?}",
        route.cycle
    );
}

#[test]
fn at_the_threshold_with_no_output_or_effects_the_route_moves_to_the_next_candidate() {
    let mut route = Route::new(candidates(Some(2)));
    route.quietly("x");
    assert_eq!(
        route.quietly("x"),
        Decision::SkipRepeated {
            excluded: 0,
            next: 1,
            identical: 2
        }
    );
    assert_eq!(route.cycle.current, 1);
    assert!(route.cycle.excluded.contains(&0), "excluded like any skip");
    assert!(route.cycle.repeat_skip_used, "the cycle's one such move");
}

#[test]
fn output_or_an_effect_sends_it_to_a_person_at_any_count() {
    let with_output = EffectContext {
        prompt_delivery: Some(crate::safety::PromptDelivery::Confirmed),
        assistant_output_seen: Some(true),
        ..EffectContext::effect_safe()
    };
    let with_tool = EffectContext {
        prompt_delivery: Some(crate::safety::PromptDelivery::Confirmed),
        tool_activity_seen: Some(true),
        ..EffectContext::effect_safe()
    };
    for (effect, reason) in [
        (with_output, UnsafeReason::AssistantOutputSeen),
        (with_tool, UnsafeReason::ToolActivitySeen),
    ] {
        let mut route = Route::new(candidates(Some(2)));
        route.quietly("x");
        assert_eq!(
            route.fails("x", &effect, Some(0)),
            Decision::Manual {
                reason: ManualReason::UnsafeEffect { reason }
            },
            "the gate comes first; no setting overrides it"
        );
        assert_eq!(
            route.quietly("x"),
            held(1, 2, RepeatHeld::BelowThreshold),
            "and the run of identical failures starts again after it"
        );
    }
    let mut route = Route::new(candidates(Some(2)));
    route.quietly("x");
    assert_eq!(
        route.fails("x", &EffectContext::effect_safe(), Some(3)),
        held(0, 2, RepeatHeld::FilesChanged),
        "changed files in the working directory are an effect too"
    );
}

#[test]
fn different_fingerprints_do_not_add_up() {
    let mut route = Route::new(candidates(Some(2)));
    assert_eq!(route.quietly("x"), held(1, 2, RepeatHeld::BelowThreshold));
    assert_eq!(route.quietly("y"), held(1, 2, RepeatHeld::BelowThreshold));
    assert_eq!(route.quietly("x"), held(1, 2, RepeatHeld::BelowThreshold));
    assert_eq!(route.cycle.current, 0);
}

#[test]
fn a_second_time_in_the_same_cycle_goes_to_a_person() {
    let mut route = Route::new(candidates(Some(2)));
    route.quietly("x");
    assert!(matches!(route.quietly("x"), Decision::SkipRepeated { .. }));
    // Candidate b is opted in too, and fails the same way twice.
    assert_eq!(route.quietly("x"), held(1, 2, RepeatHeld::BelowThreshold));
    assert_eq!(
        route.quietly("x"),
        held(2, 2, RepeatHeld::MovedOnThisCycle),
        "one move per route cycle for this reason"
    );
    assert_eq!(route.cycle.current, 1, "still on b");
    let fresh = RouteCycle::new(1);
    assert!(
        !fresh.repeat_skip_used,
        "a person's resume starts a fresh cycle, where it may move on again"
    );
}

#[test]
fn at_the_threshold_on_the_last_eligible_candidate_a_person_decides() {
    let mut slots = candidates(Some(2));
    slots[1].enabled = false;
    slots[2].enabled = false;
    let mut route = Route::new(slots);
    route.quietly("x");
    assert_eq!(route.quietly("x"), held(2, 2, RepeatHeld::NoCandidateLeft));
}

#[test]
fn a_classified_failure_ignores_the_count() {
    // Its own class section decides (here: skip at once), whatever the
    // count says.
    let slots = candidates(Some(2));
    let overloaded = SimulatedFailure::of(SemanticCode::ProviderOverloaded).classification(t0());
    let decision = evaluate(
        &RouteCycle::new(0),
        &overloaded,
        &GateVerdict::Allowed,
        Identical(9),
        &slots,
        t0(),
    );
    assert_eq!(
        decision,
        Decision::Skip {
            class: PolicyClass::Transient,
            excluded: 0,
            next: 1
        }
    );
}

#[test]
fn each_decision_of_the_exception_says_why_in_words() {
    let words = HistoryWording;
    let texts: Vec<String> = [
        held(1, 3, RepeatHeld::BelowThreshold),
        held(0, 3, RepeatHeld::FilesChanged),
        held(3, 3, RepeatHeld::MovedOnThisCycle),
        held(3, 3, RepeatHeld::NoCandidateLeft),
        Decision::SkipRepeated {
            excluded: 0,
            next: 1,
            identical: 3,
        },
    ]
    .iter()
    .map(|d| d.describe(&words))
    .collect();
    assert_eq!(
        texts,
        [
            "manual recovery: the failure is unclassified (“Not recognised”); identical failure 1 of 3 \
             with no output or effects; at 3 the route moves to the next candidate",
            "manual recovery: the failure is unclassified (“Not recognised”) and its attempt changed files \
             in the working directory, so it does not count toward moving to the next candidate",
            "manual recovery: the failure is unclassified (“Not recognised”) and repeated 3 times, but the \
             route already moved on once in this cycle for repeated unclassified failures",
            "manual recovery: the failure is unclassified (“Not recognised”) and repeated 3 times, but no \
             candidate is left to move to in this cycle",
            "unclassified failure repeated 3 times on candidate 1 with no output or effects: skip \
             to candidate 2 (once per cycle)",
        ]
    );
}

#[test]
fn only_a_below_threshold_hold_lets_a_preview_read_on_as_a_retry() {
    assert!(held(1, 3, RepeatHeld::BelowThreshold).counts_toward_repeat());
    for other in [
        held(3, 3, RepeatHeld::MovedOnThisCycle),
        held(0, 3, RepeatHeld::FilesChanged),
        held(3, 3, RepeatHeld::NoCandidateLeft),
        Decision::Manual {
            reason: ManualReason::Unclassified {
                code: SemanticCode::Unknown,
            },
        },
    ] {
        assert!(!other.counts_toward_repeat(), "{other:?}");
    }
}

#[test]
fn a_cycle_stored_before_the_exception_reads_as_not_yet_moved_on() {
    let stored = r#"{"current":1,"excluded":[0],"usage":{}}"#;
    let cycle: RouteCycle = serde_json::from_str(stored).unwrap();
    assert!(!cycle.repeat_skip_used);
    assert_eq!(cycle.current, 1);
}
