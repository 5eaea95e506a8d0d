//! Counting repeats for the unclassified exception
//! ([`crate::policy::UnclassifiedPolicy`]): how many identical quiet
//! unclassified failures of one candidate end with the failure being
//! decided.
//!
//! A failure is *quiet* when the catalogue left it unclassified, the safety
//! gate allows automatic recovery (no assistant output, no tool activity, no
//! partial result, prompt delivery known, evidence current) and its attempt
//! changed no file of the working directory. Identical quiet failures count
//! while they follow each other on the same candidate: any other attempt in
//! between (a success, a kill, a classified failure, another candidate's
//! attempt, a different fingerprint, a failure with output or changes)
//! starts the count again. The count is read from the route's attempts, so
//! it survives a restart; the engine and the preview both build it here.

use crate::classification::Class;
use crate::evidence::Fingerprint;
use crate::safety::GateVerdict;

/// One failed (or otherwise ended) attempt as the count sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sighting {
    candidate: u32,
    /// The fingerprint of a quiet unclassified failure; `None` for any
    /// other attempt.
    quiet: Option<Fingerprint>,
}

impl Sighting {
    /// A failed attempt of `candidate`: quiet when unclassified, allowed by
    /// the gate and without changed files (`None`: not a git repository, so
    /// nothing is known of files beyond what the gate knows).
    pub fn of(
        candidate: u32,
        class: Class,
        verdict: &GateVerdict,
        files_changed: Option<u32>,
        fingerprint: Fingerprint,
    ) -> Sighting {
        let quiet = class == Class::Unclassified
            && *verdict == GateVerdict::Allowed
            && files_changed.unwrap_or(0) == 0;
        Sighting {
            candidate,
            quiet: quiet.then_some(fingerprint),
        }
    }

    /// An attempt of `candidate` that was not a quiet unclassified failure
    /// (it succeeded, was killed or interrupted, or left no evidence).
    pub fn other(candidate: u32) -> Sighting {
        Sighting {
            candidate,
            quiet: None,
        }
    }
}

/// Identical quiet unclassified failures in a row, `current` included.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Identical(pub u32);

impl Identical {
    /// The failure being decided is not a quiet unclassified one, or no
    /// count applies (a limit mark, where no agent ran).
    pub const NONE: Identical = Identical(0);
}

/// How many identical quiet unclassified failures end with `current`,
/// counting back over `earlier` (the route's attempts before it, oldest
/// first) while each is the same candidate's and the same failure.
pub fn identical(earlier: &[Sighting], current: &Sighting) -> Identical {
    let Some(fingerprint) = &current.quiet else {
        return Identical::NONE;
    };
    let before = earlier
        .iter()
        .rev()
        .take_while(|s| s.candidate == current.candidate && s.quiet.as_ref() == Some(fingerprint))
        .count();
    Identical(u32::try_from(before).unwrap_or(u32::MAX).saturating_add(1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::safety::UnsafeReason;

    fn quiet(candidate: u32, name: &str) -> Sighting {
        Sighting::of(
            candidate,
            Class::Unclassified,
            &GateVerdict::Allowed,
            Some(0),
            Fingerprint::named(name),
        )
    }

    #[test]
    fn identical_failures_in_a_row_of_one_candidate_are_counted() {
        let earlier = [quiet(0, "a"), quiet(0, "a")];
        assert_eq!(identical(&earlier, &quiet(0, "a")), Identical(3));
        assert_eq!(identical(&[], &quiet(0, "a")), Identical(1));
    }

    #[test]
    fn different_fingerprints_do_not_add_up() {
        let earlier = [quiet(0, "a"), quiet(0, "b"), quiet(0, "a")];
        assert_eq!(
            identical(&earlier, &quiet(0, "a")),
            Identical(2),
            "the `b` between them ends the run: only the last two are identical in a row"
        );
        assert_eq!(identical(&earlier, &quiet(0, "c")), Identical(1));
    }

    #[test]
    fn another_candidate_or_any_other_attempt_in_between_starts_again() {
        let breaks = [
            quiet(1, "a"),
            Sighting::other(0),
            Sighting::of(
                0,
                Class::Transient,
                &GateVerdict::Allowed,
                None,
                Fingerprint::named("a"),
            ),
        ];
        for between in breaks {
            let earlier = [quiet(0, "a"), between.clone()];
            assert_eq!(
                identical(&earlier, &quiet(0, "a")),
                Identical(1),
                "{between:?} ends the run"
            );
        }
    }

    #[test]
    fn output_effects_or_changed_files_make_a_failure_not_count() {
        let unsafe_gate = GateVerdict::Manual(UnsafeReason::ToolActivitySeen);
        let loud = [
            Sighting::of(
                0,
                Class::Unclassified,
                &unsafe_gate,
                None,
                Fingerprint::named("a"),
            ),
            Sighting::of(
                0,
                Class::Unclassified,
                &GateVerdict::Allowed,
                Some(2),
                Fingerprint::named("a"),
            ),
        ];
        for current in &loud {
            assert_eq!(identical(&[quiet(0, "a")], current), Identical::NONE);
            assert_eq!(
                identical(std::slice::from_ref(current), &quiet(0, "a")),
                Identical(1),
                "nor does it count before another"
            );
        }
        let unknown_files = Sighting::of(
            0,
            Class::Unclassified,
            &GateVerdict::Allowed,
            None,
            Fingerprint::named("a"),
        );
        assert_eq!(
            identical(&[quiet(0, "a")], &unknown_files),
            Identical(2),
            "outside a git repository the gate's facts decide"
        );
    }
}
