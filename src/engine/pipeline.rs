//! The engine's one seam to the pure pipeline: evidence sanitizing, the
//! catalogue, the safety gate, policy validation and the evaluator.
//!
//! Keeping every call into those modules here means the route engine speaks
//! only its own vocabulary ([`Next`], [`PendingOutcome`]) and a change in the
//! pipeline's shape touches one file.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::classification::{Classification, PolicyClass};
use crate::evidence::{Evidence, RawEvidence};
use crate::safety::EffectContext;

use super::shim;
pub use super::shim::{CandidatePolicy, CandidateSlot, Decision, GateVerdict, RouteCycle};

/// What a class does once its waits and retries are used up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum PendingOutcome {
    Skip,
    Stop,
}

impl PendingOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            PendingOutcome::Skip => "skip",
            PendingOutcome::Stop => "stop",
        }
    }

    pub fn parse(s: &str) -> Option<PendingOutcome> {
        [PendingOutcome::Skip, PendingOutcome::Stop]
            .into_iter()
            .find(|o| o.as_str() == s)
    }
}

/// What the route engine has to do with a decision.
#[derive(Debug, Clone, PartialEq)]
pub enum Next {
    Wait {
        class: PolicyClass,
        until: DateTime<Utc>,
    },
    Retry {
        class: PolicyClass,
        at: DateTime<Utc>,
    },
    Dispatch {
        index: usize,
    },
    Manual {
        reason: String,
    },
}

pub fn sanitize(raw: RawEvidence) -> Evidence {
    shim::from_raw(raw)
}

pub fn classify(evidence: &Evidence) -> Classification {
    shim::classify(evidence, shim::machine_local_tz())
}

pub fn gate(effect: &EffectContext) -> GateVerdict {
    shim::gate(effect)
}

pub fn evaluate(
    cycle: &RouteCycle,
    classification: &Classification,
    verdict: &GateVerdict,
    slots: &[CandidateSlot],
    now: DateTime<Utc>,
) -> (Decision, RouteCycle) {
    let decision = shim::evaluate(cycle, classification, verdict, slots, now);
    let next_cycle = cycle.apply(&decision);
    (decision, next_cycle)
}

pub fn next_step(decision: &Decision) -> Next {
    match decision {
        Decision::WaitForReset { class, until } => Next::Wait {
            class: *class,
            until: *until,
        },
        Decision::Retry { class, at, .. } => Next::Retry {
            class: *class,
            at: *at,
        },
        Decision::Skip {
            next: Some(index), ..
        } => Next::Dispatch { index: *index },
        Decision::Skip { next: None, .. } => Next::Manual {
            reason: "every candidate was skipped; none is left to try".to_string(),
        },
        Decision::Stop { reason } => Next::Manual {
            reason: format!("stopped by policy: {reason}"),
        },
        Decision::Manual { reason } => Next::Manual {
            reason: reason.clone(),
        },
    }
}

pub fn new_cycle(candidate: usize) -> RouteCycle {
    RouteCycle::new(candidate)
}

pub fn cycle_candidate(cycle: &RouteCycle) -> usize {
    cycle.candidate
}

pub fn cycle_excludes(cycle: &RouteCycle, index: usize) -> bool {
    cycle.excluded.contains(&index)
}

/// A manual skip is the evaluator's skip, chosen by a person.
pub fn skip_to(cycle: &RouteCycle, next: usize) -> RouteCycle {
    cycle.apply(&Decision::Skip {
        excluded: cycle.candidate,
        next: Some(next),
    })
}

pub fn retry_ordinal(cycle: &RouteCycle, class: PolicyClass) -> u32 {
    cycle.retry_ordinals.get(&class).copied().unwrap_or(0)
}

pub fn retry_budget(policy: &CandidatePolicy, class: PolicyClass) -> u32 {
    let section = policy.class(class);
    if section.retry.enabled {
        section.retry.max_retries
    } else {
        0
    }
}

pub fn exhausted_outcome(policy: &CandidatePolicy, class: PolicyClass) -> PendingOutcome {
    match policy.class(class).exhausted {
        shim::ExhaustedOutcome::Skip => PendingOutcome::Skip,
        shim::ExhaustedOutcome::Stop => PendingOutcome::Stop,
    }
}

pub fn default_policy() -> CandidatePolicy {
    CandidatePolicy::default_for_new_candidate()
}

/// `Err((field path below the candidate, message))`.
pub fn validate_policy(policy: &CandidatePolicy) -> Result<(), (String, String)> {
    policy.validate()
}

/// A compact description of one class section, for building policies in code
/// (the demo profile, tests).
#[derive(Debug, Clone, Copy)]
pub struct SectionSpec {
    pub reset_wait_max_s: Option<u32>,
    /// `(max_retries, initial_interval_s)`
    pub retry: Option<(u32, u32)>,
    pub exhausted: PendingOutcome,
}

pub fn build_policy(transient: SectionSpec, hard: SectionSpec) -> CandidatePolicy {
    CandidatePolicy {
        transient: build_section(transient),
        hard: build_section(hard),
    }
}

fn build_section(spec: SectionSpec) -> shim::ClassPolicy {
    shim::ClassPolicy {
        reset_wait: shim::ResetWait {
            enabled: spec.reset_wait_max_s.is_some(),
            max_wait_s: spec.reset_wait_max_s.unwrap_or(0),
        },
        retry: shim::RetryPolicy {
            enabled: spec.retry.is_some(),
            max_retries: spec.retry.map_or(0, |r| r.0),
            initial_interval_s: spec.retry.map_or(0, |r| r.1),
        },
        exhausted: match spec.exhausted {
            PendingOutcome::Skip => shim::ExhaustedOutcome::Skip,
            PendingOutcome::Stop => shim::ExhaustedOutcome::Stop,
        },
    }
}

/// The decision in words, for the attempt history.
pub fn describe(decision: &Decision) -> String {
    let at = |t: &DateTime<Utc>| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    match decision {
        Decision::WaitForReset { class, until } => {
            format!("wait for the {} reset until {}", class.as_str(), at(until))
        }
        Decision::Retry {
            class,
            at: when,
            ordinal,
        } => {
            format!("{} retry {} at {}", class.as_str(), ordinal, at(when))
        }
        Decision::Skip {
            excluded,
            next: Some(n),
        } => format!("skip candidate {} for candidate {}", excluded + 1, n + 1),
        Decision::Skip {
            excluded,
            next: None,
        } => format!("skip candidate {}; none left", excluded + 1),
        Decision::Stop { reason } => format!("stop: {reason}"),
        Decision::Manual { reason } => format!("manual recovery: {reason}"),
    }
}
