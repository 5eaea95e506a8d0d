//! The engine's one seam to the pure pipeline: evidence sanitizing, the
//! catalogue, the safety gate, policy validation and the evaluator.
//!
//! Keeping every call into those modules here means the route engine speaks
//! only its own vocabulary ([`Next`], [`PendingOutcome`]) and a change in the
//! pipeline's shape touches one file.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::classification::{Classification, PolicyClass};
use crate::evaluator;
use crate::evidence::{Evidence, RawEvidence};
use crate::policy::validate::validate_document as validate_document_fields;
use crate::policy::{
    self, CandidateEntry, ClassPolicy, Exhausted, PolicyDocument, ResetWait, Retry,
};
use crate::safety::{self, EffectContext, GateVerdict};
use crate::{catalogue, timing};

pub use crate::evaluator::{CandidateSlot, Decision, RouteCycle};
pub use crate::policy::CandidatePolicy;

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
    Wait { until: DateTime<Utc> },
    Retry { at: DateTime<Utc> },
    Dispatch { index: usize },
    Manual { reason: String },
}

pub fn sanitize(raw: RawEvidence) -> Evidence {
    Evidence::from_raw(raw)
}

pub fn classify(evidence: &Evidence) -> Classification {
    catalogue::classify(evidence, timing::machine_local_tz())
}

pub fn gate(effect: &EffectContext) -> GateVerdict {
    safety::gate(effect)
}

/// The decision and the route cycle after it.
pub fn evaluate(
    cycle: &RouteCycle,
    classification: &Classification,
    verdict: &GateVerdict,
    slots: &[CandidateSlot],
    now: DateTime<Utc>,
) -> (Decision, RouteCycle) {
    let decision = evaluator::evaluate(cycle, classification, verdict, slots, now);
    let next_cycle = cycle.apply(&decision);
    (decision, next_cycle)
}

pub fn next_step(decision: &Decision) -> Next {
    match decision {
        Decision::WaitForReset { until, .. } => Next::Wait { until: *until },
        Decision::Retry { at, .. } => Next::Retry { at: *at },
        Decision::Skip { next, .. } => Next::Dispatch {
            index: *next as usize,
        },
        Decision::Stop { reason } => Next::Manual {
            reason: reason.describe(),
        },
        Decision::Manual { reason } => Next::Manual {
            reason: reason.describe(),
        },
    }
}

pub fn new_cycle(candidate: usize) -> RouteCycle {
    RouteCycle::new(candidate as u32)
}

pub fn cycle_excludes(cycle: &RouteCycle, index: usize) -> bool {
    cycle.excluded.contains(&(index as u32))
}

/// A manual skip: exclude the current candidate for this cycle, go to `next`.
pub fn skip_to(cycle: &RouteCycle, next: usize) -> RouteCycle {
    let mut after = cycle.clone();
    after.excluded.insert(cycle.current);
    after.current = next as u32;
    after
}

/// Retries the current candidate used in `class` this cycle.
pub fn retry_ordinal(cycle: &RouteCycle, class: PolicyClass) -> u32 {
    cycle.usage_of(cycle.current, class).retries_used
}

pub fn retry_budget(policy: &CandidatePolicy, class: PolicyClass) -> u32 {
    let retry = policy.section(class).retry;
    if retry.enabled {
        retry.max_retries
    } else {
        0
    }
}

pub fn exhausted_outcome(policy: &CandidatePolicy, class: PolicyClass) -> PendingOutcome {
    match policy.section(class).on_exhausted {
        Exhausted::Skip => PendingOutcome::Skip,
        Exhausted::Stop => PendingOutcome::Stop,
    }
}

pub fn default_policy() -> CandidatePolicy {
    CandidatePolicy::default_for_new_candidate()
}

/// The stored form: disabled sections zeroed.
pub fn normalize(policy: &CandidatePolicy) -> CandidatePolicy {
    policy.normalize()
}

/// Validates `(name, agent, enabled, policy)` entries as a current-version
/// policy document; the first problem as `(field path, message)`.
pub fn validate_document(
    entries: Vec<(String, &'static str, bool, CandidatePolicy)>,
) -> Result<(), (String, String)> {
    let document = PolicyDocument {
        version: policy::CURRENT_VERSION,
        candidates: entries
            .into_iter()
            .map(|(name, agent, enabled, policy)| CandidateEntry {
                name,
                agent: agent.to_string(),
                enabled,
                policy,
            })
            .collect(),
    };
    match validate_document_fields(&document).into_iter().next() {
        Some(e) => Err((e.path, e.message)),
        None => Ok(()),
    }
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

fn build_section(spec: SectionSpec) -> ClassPolicy {
    ClassPolicy {
        wait_for_reset: ResetWait {
            enabled: spec.reset_wait_max_s.is_some(),
            max_wait_seconds: spec.reset_wait_max_s.unwrap_or(0),
        },
        retry: Retry {
            enabled: spec.retry.is_some(),
            max_retries: spec.retry.map_or(0, |r| r.0),
            initial_interval_seconds: spec.retry.map_or(0, |r| r.1),
        },
        on_exhausted: match spec.exhausted {
            PendingOutcome::Skip => Exhausted::Skip,
            PendingOutcome::Stop => Exhausted::Stop,
        },
    }
}
