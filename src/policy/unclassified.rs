//! The opt-in exception for unclassified failures, in its own section of a
//! candidate's policy (`unclassified`), apart from the two class sections.
//!
//! Unclassified failures go to a person (the decision). A person may opt a
//! candidate in to one exception: after `threshold` identical unclassified
//! failures of that candidate in a row, each with no output and no effects,
//! the route moves once to the next candidate instead of waiting again
//! (`docs/decisions/2026-12-repeated-unclassified-failures.md`). Off unless set; a
//! document or stored policy without the section reads as off.

use serde::{Deserialize, Serialize};

/// Allowed threshold when the exception is on: one failure is never enough
/// to call a failure repeated, and past ten a person has long been asked.
pub const REPEAT_THRESHOLD_RANGE: std::ops::RangeInclusive<u32> = 2..=10;

/// What a candidate does about unclassified failures beyond handing them to
/// a person.
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
pub struct UnclassifiedPolicy {
    /// Move on once after this many identical unclassified failures with no
    /// output and no effects; off unless enabled.
    pub repeated_failure: RepeatedFailure,
}

/// The repeated-failure exception: `threshold` (2–10 when enabled)
/// identical unclassified failures in a row.
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
pub struct RepeatedFailure {
    pub enabled: bool,
    pub threshold: u32,
}

impl RepeatedFailure {
    pub const DISABLED: RepeatedFailure = RepeatedFailure {
        enabled: false,
        threshold: 0,
    };

    /// The threshold in force: `None` when the exception is off.
    pub fn threshold(self) -> Option<u32> {
        self.enabled.then_some(self.threshold)
    }
}

impl UnclassifiedPolicy {
    /// Every unclassified failure goes to a person: the decision's rule, and
    /// what a candidate has unless a person opts in.
    pub const OFF: UnclassifiedPolicy = UnclassifiedPolicy {
        repeated_failure: RepeatedFailure::DISABLED,
    };

    /// What the editor starts with when a person switches the exception on:
    /// three identical failures, so two still reach a person first.
    pub fn suggested() -> UnclassifiedPolicy {
        UnclassifiedPolicy::skip_after(3)
    }

    /// Move on once after `threshold` identical failures.
    pub fn skip_after(threshold: u32) -> UnclassifiedPolicy {
        UnclassifiedPolicy {
            repeated_failure: RepeatedFailure {
                enabled: true,
                threshold,
            },
        }
    }

    /// The same policy with a disabled exception in its stored form.
    pub fn normalize(self) -> UnclassifiedPolicy {
        if self.repeated_failure.enabled {
            self
        } else {
            UnclassifiedPolicy::OFF
        }
    }

    /// One clause for a candidate's one-line summary; `None` when off, so
    /// the summary of a candidate that never opted in reads as before.
    pub fn summary(self) -> Option<String> {
        self.repeated_failure
            .threshold()
            .map(|n| format!("Unclassified: skip once after {n} identical"))
    }

    /// What the section does, in the editor's words; `next` is the
    /// candidate a skip would go to, if there is one.
    pub fn describe(self, next: Option<&str>) -> String {
        let Some(n) = self.repeated_failure.threshold() else {
            return "Every unclassified failure waits for you.".to_string();
        };
        let to = match next {
            Some(next) => format!("skip to “{next}”"),
            None => "skip (no candidate after this one: you decide)".to_string(),
        };
        format!(
            "The first {} identical unclassified failures with no output or effects each wait for \
             you; at the {}, {to}, once per route cycle. Any output, tool activity or changed \
             file means it waits for you.",
            n - 1,
            ordinal(n)
        )
    }
}

fn ordinal(n: u32) -> String {
    let suffix = match (n % 10, n % 100) {
        (1, 11) | (2, 12) | (3, 13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn off_is_the_default_and_the_stored_form_of_a_disabled_exception() {
        assert_eq!(UnclassifiedPolicy::default(), UnclassifiedPolicy::OFF);
        let typed_then_switched_off = UnclassifiedPolicy {
            repeated_failure: RepeatedFailure {
                enabled: false,
                threshold: 4,
            },
        };
        assert_eq!(
            typed_then_switched_off.normalize(),
            UnclassifiedPolicy::OFF,
            "a disabled section is stored normalized, like the class sections"
        );
        assert_eq!(
            UnclassifiedPolicy::skip_after(3).normalize(),
            UnclassifiedPolicy::skip_after(3)
        );
    }

    #[test]
    fn the_words_say_how_many_wait_for_a_person_and_where_the_skip_goes() {
        assert_eq!(
            UnclassifiedPolicy::skip_after(3).describe(Some("Codex")),
            "The first 2 identical unclassified failures with no output or effects each wait for \
             you; at the 3rd, skip to “Codex”, once per route cycle. Any output, tool activity or \
             changed file means it waits for you."
        );
        assert!(UnclassifiedPolicy::skip_after(2)
            .describe(None)
            .contains("at the 2nd, skip (no candidate after this one: you decide)"));
        assert_eq!(
            UnclassifiedPolicy::OFF.describe(Some("Codex")),
            "Every unclassified failure waits for you."
        );
        assert_eq!(UnclassifiedPolicy::OFF.summary(), None);
        assert_eq!(
            UnclassifiedPolicy::skip_after(10).summary().as_deref(),
            Some("Unclassified: skip once after 10 identical")
        );
    }
}
