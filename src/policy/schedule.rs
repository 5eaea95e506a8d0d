//! A class policy's schedule in words, for the profile editor: written from
//! [`Retry::delay_seconds`], so the doubling and its 24 h cap have one owner
//! and the editor never works out a delay itself.

use super::{CandidatePolicy, ClassPolicy, Exhausted, Retry};

impl Retry {
    /// The delay before each retry, in order; none when retry is off.
    pub fn delays(&self) -> impl Iterator<Item = u32> + '_ {
        let count = if self.enabled { self.max_retries } else { 0 };
        (0..count).map(|ordinal| self.delay_seconds(ordinal))
    }
}

/// Budgets up to this many retries have every delay written out; larger
/// ones are summarised (the first few, then how many and the longest).
const WRITTEN_OUT: u32 = 10;

impl ClassPolicy {
    /// What this section does when every attempt fails, in order: `If the
    /// provider gives a trusted reset within 5 min, wait for it and try once
    /// more. Retry after 5 s, 10 s, 20 s, then skip to “Codex”.` `next` is the
    /// candidate a skip would go to, if there is one.
    pub fn describe_schedule(&self, next: Option<&str>) -> String {
        let wait = if self.wait_for_reset.enabled {
            format!(
                "If the provider gives a trusted reset within {}, wait for it and try once more. ",
                readable(self.wait_for_reset.max_wait_seconds)
            )
        } else {
            String::new()
        };
        let count = if self.retry.enabled {
            self.retry.max_retries
        } else {
            0
        };
        let retries = if count == 0 {
            "Then ".to_string()
        } else if count <= WRITTEN_OUT {
            let delays: Vec<String> = self.retry.delays().map(readable).collect();
            format!("Retry after {}, then ", delays.join(", "))
        } else {
            // However large the (unvalidated) budget, the text stays short.
            let first: Vec<String> = self.retry.delays().take(4).map(readable).collect();
            format!(
                "Retry after {}, … {count} retries in all, each at most {} apart, then ",
                first.join(", "),
                readable(self.retry.delay_seconds(count - 1))
            )
        };
        let outcome = match (self.on_exhausted, next) {
            (Exhausted::Stop, _) => "stop for manual recovery".to_string(),
            (Exhausted::Skip, Some(next)) => format!("skip to “{next}”"),
            (Exhausted::Skip, None) => {
                "skip (no candidate after this one: manual recovery)".to_string()
            }
        };
        format!("{wait}{retries}{outcome}.{}", self.continuation_words())
    }

    /// The sentence automatic continuation adds, when it is on.
    fn continuation_words(&self) -> String {
        let auto = self.auto_continue;
        if !auto.enabled {
            return String::new();
        }
        format!(
            " After a failure that follows work, when every tool the agent ran completed, \
             continue its own session instead of asking you (at most {} in this cycle); \
             the prompt is never sent again.",
            times(auto.max_continuations)
        )
    }
}

/// `once`, `twice`, `3 times`.
fn times(n: u32) -> String {
    match n {
        1 => "once".to_string(),
        2 => "twice".to_string(),
        n => format!("{n} times"),
    }
}

/// `5 s`, `2 min 5 s`, `4 h 19 min`, `2 d 3 h`: at most the two largest
/// units, as the editor writes durations elsewhere.
impl ClassPolicy {
    /// One clause for a candidate's one-line summary: `retry 3× from 5 s,
    /// then skip`.
    pub fn summary(&self) -> String {
        let mut parts = Vec::new();
        if self.wait_for_reset.enabled {
            parts.push(format!(
                "wait for reset ≤ {}",
                readable(self.wait_for_reset.max_wait_seconds)
            ));
        }
        if self.retry.enabled {
            parts.push(format!(
                "retry {}× from {}",
                self.retry.max_retries,
                readable(self.retry.initial_interval_seconds)
            ));
        }
        let outcome = self.on_exhausted.as_str();
        let steps = if parts.is_empty() {
            outcome.to_string()
        } else {
            format!("{}, then {outcome}", parts.join(", "))
        };
        if self.auto_continue.enabled {
            format!(
                "{steps}; after completed tools continue its session ≤ {}×",
                self.auto_continue.max_continuations
            )
        } else {
            steps
        }
    }
}

impl CandidatePolicy {
    /// The candidate's policy in one line: `Transient: retry 3× from 5 s,
    /// then skip · Hard: stop`, and the unclassified exception when it is on.
    pub fn summary(&self) -> String {
        let classes = format!(
            "Transient: {} · Hard: {}",
            self.transient.summary(),
            self.hard.summary()
        );
        match self.unclassified.summary() {
            Some(unclassified) => format!("{classes} · {unclassified}"),
            None => classes,
        }
    }
}

fn readable(seconds: u32) -> String {
    crate::timing::words::readable(u64::from(seconds))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn retrying(max_retries: u32, initial_interval_seconds: u32, on: Exhausted) -> ClassPolicy {
        ClassPolicy::new(None, Some((max_retries, initial_interval_seconds)), on)
    }

    #[test]
    fn retries_double_from_the_first_delay_then_skip_to_the_next_candidate() {
        assert_eq!(
            retrying(3, 5, Exhausted::Skip).describe_schedule(Some("Codex")),
            "Retry after 5 s, 10 s, 20 s, then skip to “Codex”."
        );
    }

    #[test]
    fn a_reset_wait_comes_first_and_stop_ends_it() {
        let section = ClassPolicy::new(Some(300), None, Exhausted::Stop);
        assert_eq!(
            section.describe_schedule(Some("Codex")),
            "If the provider gives a trusted reset within 5 min, wait for it and try once more. \
             Then stop for manual recovery.",
            "stop ignores the next candidate"
        );
    }

    #[test]
    fn a_skip_with_no_candidate_after_says_it_goes_manual() {
        assert_eq!(
            ClassPolicy::new(None, None, Exhausted::Skip).describe_schedule(None),
            "Then skip (no candidate after this one: manual recovery)."
        );
    }

    #[test]
    fn a_delay_past_24_hours_is_written_as_the_cap() {
        let delays: Vec<u32> = retrying(10, 3600, Exhausted::Skip).retry.delays().collect();
        assert_eq!(
            delays[5..],
            [86_400; 5],
            "an unvalidated budget stays bounded by the cap, as the evaluator waits"
        );
        assert!(retrying(10, 3600, Exhausted::Skip)
            .describe_schedule(None)
            .contains("16 h, 1 d, 1 d"));
    }

    #[test]
    fn a_budget_past_the_limit_is_summarised_not_written_out() {
        let text = retrying(999, 5, Exhausted::Skip).describe_schedule(Some("Codex"));
        assert_eq!(
            text,
            "Retry after 5 s, 10 s, 20 s, 40 s, … 999 retries in all, each at most 1 d apart, \
             then skip to “Codex”.",
            "999 retries (refused by the validator, but typed) must not write 999 delays"
        );
    }

    #[test]
    fn a_summary_names_each_step_then_the_outcome_per_class() {
        let mut policy = CandidatePolicy::new(
            retrying(3, 5, Exhausted::Skip),
            ClassPolicy::new(Some(18_000), None, Exhausted::Stop),
        );
        assert_eq!(
            policy.summary(),
            "Transient: retry 3× from 5 s, then skip · Hard: wait for reset ≤ 5 h, then stop"
        );
        policy.unclassified = crate::policy::UnclassifiedPolicy::skip_after(3);
        assert_eq!(
            policy.summary(),
            "Transient: retry 3× from 5 s, then skip · Hard: wait for reset ≤ 5 h, then stop \
             · Unclassified: skip once after 3 identical",
            "an opted-in exception is said; an off one leaves the line as it was"
        );
        assert_eq!(
            CandidatePolicy::default_for_new_candidate().summary(),
            "Transient: skip · Hard: skip"
        );
    }

    #[test]
    fn automatic_continuation_is_said_after_the_schedule_and_in_the_summary() {
        let mut section = retrying(3, 5, Exhausted::Skip);
        section.auto_continue = crate::policy::AutoContinue::ON;
        assert_eq!(
            section.describe_schedule(Some("Codex")),
            "Retry after 5 s, 10 s, 20 s, then skip to “Codex”. After a failure that follows \
             work, when every tool the agent ran completed, continue its own session instead \
             of asking you (at most twice in this cycle); the prompt is never sent again."
        );
        assert_eq!(
            section.summary(),
            "retry 3× from 5 s, then skip; after completed tools continue its session ≤ 2×"
        );
        section.auto_continue.max_continuations = 1;
        assert!(section
            .describe_schedule(None)
            .contains("(at most once in this cycle)"));
    }
}
