//! Policy decisions per second: the pure evaluator on its own, a whole route
//! cycle of decisions, and a decision the way the engine makes one (parse
//! each candidate's stored policy JSON, gate, evaluate, apply).
//!
//! Run: `cargo bench --bench evaluate` (about 25 s). Figures go in BENCHMARKS.md.

use std::hint::black_box;
use std::time::Duration;

use chrono::{DateTime, TimeZone, Utc};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

use recourse::classification::{Classification, Confidence, Scope, SemanticCode};
use recourse::evaluator::{evaluate, CandidateSlot, Decision, Identical, RouteCycle};
use recourse::policy::document;
use recourse::safety::{gate, EffectContext, GateVerdict};

/// The committed example profile: three candidates, one disabled, waits,
/// retries, skip and stop.
const POLICY: &str = include_str!("../fixtures/policy/valid.json");

fn now() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, 1, 12, 0, 0).unwrap()
}

fn candidates(json: &str) -> Vec<CandidateSlot> {
    let loaded = document::load(json).expect("the example policy is valid");
    loaded
        .document
        .candidates
        .iter()
        .map(CandidateSlot::from)
        .collect()
}

fn failure(code: SemanticCode, reset_at: Option<DateTime<Utc>>) -> Classification {
    Classification {
        code,
        class: code.class(),
        confidence: Confidence::High,
        scope: Scope::Unknown,
        rule_id: Some("bench.rule.v1".into()),
        catalogue_version: "bench".into(),
        retry_after_s: None,
        reset_at,
        matched: None,
        explanation: "bench failure".into(),
    }
}

/// The cycle after candidate 0 has used its reset wait and every retry of
/// the transient class, so the next transient failure skips.
fn exhausted_cycle(candidates: &[CandidateSlot], overloaded: &Classification) -> RouteCycle {
    let mut cycle = RouteCycle::start(candidates).expect("an enabled candidate");
    let mut at = now();
    loop {
        let decision = evaluate(
            &cycle,
            overloaded,
            &GateVerdict::Allowed,
            Identical::NONE,
            candidates,
            at,
        );
        if matches!(decision, Decision::Skip { .. }) {
            return cycle;
        }
        cycle = cycle.apply(&decision);
        at = decision
            .next_attempt_at(at)
            .expect("automatic until the skip");
    }
}

/// Runs decisions from a fresh cycle until recovery leaves automatic mode;
/// returns how many decisions that took.
fn whole_cycle(candidates: &[CandidateSlot], overloaded: &Classification) -> u64 {
    let mut cycle = RouteCycle::start(candidates).expect("an enabled candidate");
    let mut at = now();
    let mut decisions = 0;
    loop {
        let decision = evaluate(
            &cycle,
            overloaded,
            &GateVerdict::Allowed,
            Identical::NONE,
            candidates,
            at,
        );
        decisions += 1;
        match decision.next_attempt_at(at) {
            Some(next) => at = next,
            None => return decisions,
        }
        cycle = cycle.apply(&decision);
    }
}

fn group<'c>(
    c: &'c mut Criterion,
    name: &str,
    per_iteration: u64,
) -> criterion::BenchmarkGroup<'c, criterion::measurement::WallTime> {
    let mut group = c.benchmark_group(name);
    group
        .throughput(Throughput::Elements(per_iteration))
        .sample_size(50)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    group
}

fn bench(c: &mut Criterion) {
    let slots = candidates(POLICY);
    let overloaded = failure(SemanticCode::ProviderOverloaded, None);
    let usage_limit = failure(
        SemanticCode::UsageLimitReached,
        Some(now() + chrono::Duration::seconds(120)),
    );
    let fresh = RouteCycle::start(&slots).expect("an enabled candidate");
    let exhausted = exhausted_cycle(&slots, &overloaded);
    let allowed = GateVerdict::Allowed;
    let output_seen = gate(&EffectContext {
        assistant_output_seen: Some(true),
        ..EffectContext::effect_safe()
    });

    let mut decide = group(c, "evaluate", 1);
    let cases: [(&str, &RouteCycle, &Classification, &GateVerdict); 4] = [
        ("retry", &fresh, &overloaded, &allowed),
        ("wait_for_reset", &fresh, &usage_limit, &allowed),
        ("skip_past_disabled", &exhausted, &overloaded, &allowed),
        ("manual_unsafe_effect", &fresh, &overloaded, &output_seen),
    ];
    for (name, cycle, classification, verdict) in cases {
        decide.bench_function(name, |b| {
            b.iter(|| {
                evaluate(
                    black_box(cycle),
                    black_box(classification),
                    black_box(verdict),
                    Identical::NONE,
                    black_box(&slots),
                    now(),
                )
            })
        });
    }
    decide.finish();

    let decisions = whole_cycle(&slots, &overloaded);
    let mut cycle = group(c, "route_cycle", decisions);
    cycle.bench_function("transient_failures_until_stop", |b| {
        b.iter(|| whole_cycle(black_box(&slots), black_box(&overloaded)))
    });
    cycle.finish();

    // What the engine does per failed attempt after its SQL read: every
    // candidate's policy is parsed from its stored JSON at each decision, so
    // an edit applies to the next one. The read itself is in the engine bench.
    let stored: Vec<(bool, String, String)> = slots
        .iter()
        .map(|s| {
            let json = serde_json::to_string(&s.policy).expect("a policy serializes");
            (s.enabled, s.name.clone(), json)
        })
        .collect();
    let effects = EffectContext::effect_safe();
    let mut engine_step = group(c, "engine_decision", 1);
    engine_step.bench_function("parse_policies_gate_evaluate_apply", |b| {
        b.iter(|| {
            let slots: Vec<CandidateSlot> = black_box(&stored)
                .iter()
                .map(|(enabled, name, json)| CandidateSlot {
                    enabled: *enabled,
                    name: name.clone(),
                    policy: serde_json::from_str(json).expect("a stored policy parses"),
                    kind: None,
                })
                .collect();
            let verdict = gate(black_box(&effects));
            let decision = evaluate(
                &fresh,
                &overloaded,
                &verdict,
                Identical::NONE,
                &slots,
                now(),
            );
            fresh.apply(&decision)
        })
    });
    engine_step.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
