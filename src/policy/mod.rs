//! Candidate recovery policy: what one dynamic candidate does, per policy
//! class, when an attempt fails effect-safely with a classified provider error.
//!
//! This module owns the policy types, their limits, normalization and the
//! versioned document they are stored in ([`document`]), the reading of the
//! old generic action maps ([`legacy`]), field-addressed validation
//! ([`validate`]) and the schedule a section implies, in words ([`schedule`]). It decides nothing about a concrete failure: that is the
//! evaluator's job.

pub mod document;
pub mod legacy;
pub mod read;
pub mod schedule;
pub mod unclassified;
pub mod validate;

pub use document::{load, CandidateEntry, DocumentSource, LoadedDocument, PolicyDocument};
pub use unclassified::{RepeatedFailure, UnclassifiedPolicy, REPEAT_THRESHOLD_RANGE};
pub use validate::{FieldError, PolicyError};

use crate::classification::PolicyClass;
use serde::{Deserialize, Serialize};

/// The only current policy document version.
pub const CURRENT_VERSION: u32 = 1;
/// Longest single retry delay, in seconds (24 h).
pub const MAX_DELAY_SECONDS: u32 = 24 * 60 * 60;
/// Allowed retry budget when retry is enabled.
pub const RETRIES_RANGE: std::ops::RangeInclusive<u32> = 1..=10;
/// Allowed initial retry interval when retry is enabled (1 s – 1 h).
pub const INITIAL_INTERVAL_RANGE: std::ops::RangeInclusive<u32> = 1..=60 * 60;
/// Allowed maximum reset wait when reset waiting is enabled (1 s – 7 days).
pub const RESET_WAIT_RANGE: std::ops::RangeInclusive<u32> = 1..=7 * 24 * 60 * 60;
/// Allowed automatic continuations per candidate and route cycle when
/// automatic continuation is enabled.
pub const CONTINUATIONS_RANGE: std::ops::RangeInclusive<u32> = 1..=5;
/// The continuation budget automatic continuation starts with when turned on.
pub const DEFAULT_CONTINUATIONS: u32 = 2;

/// A complete policy for one candidate: one section per configurable class,
/// and the opt-in exception for unclassified failures.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(deny_unknown_fields)]
pub struct CandidatePolicy {
    pub transient: ClassPolicy,
    pub hard: ClassPolicy,
    /// Off in policies stored before it existed.
    #[serde(default)]
    pub unclassified: UnclassifiedPolicy,
}

/// The pipeline for one class: optional reset wait, optional doubling
/// retries, then an explicit exhausted outcome.
#[derive(
    Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type, schemars::JsonSchema,
)]
#[serde(deny_unknown_fields)]
pub struct ClassPolicy {
    pub wait_for_reset: ResetWait,
    pub retry: Retry,
    pub on_exhausted: Exhausted,
    /// Transient section only: continue the agent's own session after a
    /// failure that followed completed tools (see
    /// `docs/decisions/2026-12-06-automatic-continuation.md`). Off, and left
    /// out of documents, unless turned on; a document without it is off.
    #[serde(default, skip_serializing_if = "AutoContinue::is_off")]
    pub auto_continue: AutoContinue,
}

/// Continue the failed attempt's own CLI session, sending a continuation
/// message and never the prompt, at most `max_continuations` times per
/// candidate and route cycle, when the gate refused recovery only because
/// the agent had worked and every tool it ran completed.
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    Serialize,
    Deserialize,
    specta::Type,
    schemars::JsonSchema,
)]
#[serde(deny_unknown_fields)]
pub struct AutoContinue {
    pub enabled: bool,
    /// The continuation budget, 1–5; 2 when a document turns the option
    /// on without one.
    #[serde(default = "default_continuations")]
    pub max_continuations: u32,
}

fn default_continuations() -> u32 {
    DEFAULT_CONTINUATIONS
}

/// Wait for a trusted provider reset instant, at most `max_wait_seconds` ahead.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type, schemars::JsonSchema,
)]
#[serde(deny_unknown_fields)]
pub struct ResetWait {
    pub enabled: bool,
    pub max_wait_seconds: u32,
}

/// Retry the same candidate `max_retries` times; the delay before retry `n`
/// (0-based) is `initial_interval_seconds × 2^n`.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type, schemars::JsonSchema,
)]
#[serde(deny_unknown_fields)]
pub struct Retry {
    pub enabled: bool,
    pub max_retries: u32,
    pub initial_interval_seconds: u32,
}

/// What happens once waiting and retrying are used up.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Exhausted {
    /// Exclude this candidate for the rest of the route cycle and go on with the next one.
    Skip,
    /// Stop the route for manual recovery.
    Stop,
}

impl Exhausted {
    pub fn as_str(self) -> &'static str {
        match self {
            Exhausted::Skip => "skip",
            Exhausted::Stop => "stop",
        }
    }

    pub fn parse(s: &str) -> Option<Exhausted> {
        [Exhausted::Skip, Exhausted::Stop]
            .into_iter()
            .find(|o| o.as_str() == s)
    }
}

impl ResetWait {
    pub const DISABLED: ResetWait = ResetWait {
        enabled: false,
        max_wait_seconds: 0,
    };

    fn normalize(self) -> ResetWait {
        if self.enabled {
            self
        } else {
            ResetWait::DISABLED
        }
    }
}

impl AutoContinue {
    pub const DISABLED: AutoContinue = AutoContinue {
        enabled: false,
        max_continuations: 0,
    };

    /// On, with the default budget.
    pub const ON: AutoContinue = AutoContinue {
        enabled: true,
        max_continuations: DEFAULT_CONTINUATIONS,
    };

    pub fn is_off(&self) -> bool {
        !self.enabled
    }

    fn normalize(self) -> AutoContinue {
        if self.enabled {
            self
        } else {
            AutoContinue::DISABLED
        }
    }
}

impl Retry {
    pub const DISABLED: Retry = Retry {
        enabled: false,
        max_retries: 0,
        initial_interval_seconds: 0,
    };

    fn normalize(self) -> Retry {
        if self.enabled {
            self
        } else {
            Retry::DISABLED
        }
    }

    /// Delay before the retry with 0-based `ordinal`, capped at 24 h.
    /// Validation already rejects budgets whose last delay would exceed the
    /// cap; the cap keeps an unvalidated policy bounded too.
    pub fn delay_seconds(&self, ordinal: u32) -> u32 {
        let doubled = u64::from(self.initial_interval_seconds) << ordinal.min(32);
        doubled.min(u64::from(MAX_DELAY_SECONDS)) as u32
    }
}

impl ClassPolicy {
    /// Waits for a reset at most `reset_wait_max_s` ahead (`None`: never),
    /// retries `(max_retries, initial_interval_s)` (`None`: never), then
    /// `on_exhausted`.
    pub fn new(
        reset_wait_max_s: Option<u32>,
        retry: Option<(u32, u32)>,
        on_exhausted: Exhausted,
    ) -> ClassPolicy {
        ClassPolicy {
            wait_for_reset: reset_wait_max_s.map_or(ResetWait::DISABLED, |max_wait_seconds| {
                ResetWait {
                    enabled: true,
                    max_wait_seconds,
                }
            }),
            retry: retry.map_or(
                Retry::DISABLED,
                |(max_retries, initial_interval_seconds)| Retry {
                    enabled: true,
                    max_retries,
                    initial_interval_seconds,
                },
            ),
            on_exhausted,
            auto_continue: AutoContinue::DISABLED,
        }
    }

    /// The same policy with disabled sections reset to their stored form.
    pub fn normalize(&self) -> ClassPolicy {
        ClassPolicy {
            wait_for_reset: self.wait_for_reset.normalize(),
            retry: self.retry.normalize(),
            on_exhausted: self.on_exhausted,
            auto_continue: self.auto_continue.normalize(),
        }
    }
}

impl CandidatePolicy {
    /// Immediate skip for both classes: the old fallback behaviour, no
    /// hidden retries or waits.
    pub fn default_for_new_candidate() -> CandidatePolicy {
        CandidatePolicy::both(ClassPolicy::new(None, None, Exhausted::Skip))
    }

    /// The same class policy for both classes.
    pub fn both(policy: ClassPolicy) -> CandidatePolicy {
        CandidatePolicy::new(policy.clone(), policy)
    }

    /// These class sections, with every unclassified failure going to a
    /// person.
    pub fn new(transient: ClassPolicy, hard: ClassPolicy) -> CandidatePolicy {
        CandidatePolicy {
            transient,
            hard,
            unclassified: UnclassifiedPolicy::OFF,
        }
    }

    pub fn section(&self, class: PolicyClass) -> &ClassPolicy {
        match class {
            PolicyClass::Transient => &self.transient,
            PolicyClass::Hard => &self.hard,
        }
    }

    pub fn section_mut(&mut self, class: PolicyClass) -> &mut ClassPolicy {
        match class {
            PolicyClass::Transient => &mut self.transient,
            PolicyClass::Hard => &mut self.hard,
        }
    }

    /// The same policy with disabled sections reset to their stored form.
    pub fn normalize(&self) -> CandidatePolicy {
        CandidatePolicy {
            transient: self.transient.normalize(),
            hard: self.hard.normalize(),
            unclassified: self.unclassified.normalize(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_candidate_skips_immediately_in_both_classes() {
        let policy = CandidatePolicy::default_for_new_candidate();
        for class in PolicyClass::ALL {
            let section = policy.section(class);
            assert!(!section.wait_for_reset.enabled, "{class:?} must not wait");
            assert!(!section.retry.enabled, "{class:?} must not retry");
            assert_eq!(section.on_exhausted, Exhausted::Skip);
        }
        assert_eq!(
            policy.unclassified,
            UnclassifiedPolicy::OFF,
            "unclassified failures go to a person unless someone opts in"
        );
    }

    #[test]
    fn normalize_zeroes_disabled_sections_and_keeps_enabled_ones() {
        let mut policy = CandidatePolicy::default_for_new_candidate();
        policy.transient.retry = Retry {
            enabled: false,
            max_retries: 7,
            initial_interval_seconds: 30,
        };
        policy.hard.wait_for_reset = ResetWait {
            enabled: true,
            max_wait_seconds: 300,
        };
        let normalized = policy.normalize();
        assert_eq!(normalized.transient.retry, Retry::DISABLED);
        assert_eq!(
            normalized.hard.wait_for_reset.max_wait_seconds, 300,
            "enabled sections are kept as configured"
        );
    }

    #[test]
    fn the_documented_limits_are_the_enforced_ones() {
        let doc = include_str!("../../docs/policy.md");
        for (field, range) in [
            ("max_retries", RETRIES_RANGE),
            ("initial_interval_seconds", INITIAL_INTERVAL_RANGE),
            ("max_wait_seconds", RESET_WAIT_RANGE),
            ("max_continuations", CONTINUATIONS_RANGE),
            ("threshold", REPEAT_THRESHOLD_RANGE),
        ] {
            let stated = format!("`{field}` {}–{}", range.start(), range.end());
            assert!(doc.contains(&stated), "docs/policy.md states {stated}");
        }
        let cap = format!("≤ {MAX_DELAY_SECONDS} s (24 h)");
        assert!(doc.contains(&cap), "docs/policy.md states the cap {cap}");
    }

    #[test]
    fn retry_delay_doubles_from_the_initial_interval() {
        let retry = Retry {
            enabled: true,
            max_retries: 3,
            initial_interval_seconds: 5,
        };
        let delays: Vec<u32> = (0..3).map(|n| retry.delay_seconds(n)).collect();
        assert_eq!(delays, vec![5, 10, 20]);
    }

    #[test]
    fn retry_delay_is_capped_at_24_hours() {
        let retry = Retry {
            enabled: true,
            max_retries: 10,
            initial_interval_seconds: 3600,
        };
        assert_eq!(retry.delay_seconds(9), MAX_DELAY_SECONDS);
        assert_eq!(
            retry.delay_seconds(u32::MAX),
            MAX_DELAY_SECONDS,
            "huge ordinals must not overflow"
        );
    }
}
