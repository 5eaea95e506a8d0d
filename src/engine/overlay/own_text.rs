//! Whether a proposed rule decides the text it is made from, and if not,
//! the true reason: its own pattern misses the text, or it matches but
//! another rule that matches too wins (see `crate::catalogue::select`).
//! A rule that never decides its own text could not be proved by the
//! fixture saved with it, so either reason refuses the save.

use crate::catalogue::{Catalogue, MatchOutcome, MatchReport, Origin};
use crate::evidence::Evidence;

/// Why rule `id` of `merged` would not decide `evidence`; `None` when it
/// would, or when it only ties with a rule of another class and its own
/// class is not `class_known` (its code not chosen yet: the tie may not be).
pub(super) fn refusal(
    merged: &Catalogue,
    id: &str,
    evidence: &Evidence,
    tz: chrono_tz::Tz,
    class_known: bool,
) -> Option<String> {
    let explained = merged.explain(evidence, tz);
    let Some(own) = explained.matches.iter().find(|m| m.rule_id == id) else {
        return Some("the rule does not match the text it is made from".to_owned());
    };
    let other = |outcome: MatchOutcome| {
        explained
            .matches
            .iter()
            .find(|m| m.rule_id != id && m.outcome == outcome)
    };
    match own.outcome {
        MatchOutcome::Selected => None,
        MatchOutcome::Conflicting if !class_known => None,
        MatchOutcome::Conflicting => Some(match other(MatchOutcome::Conflicting) {
            Some(tie) => format!(
                "the rule matches the text, but so does {} at the same priority ({}) with another class, so neither decides it: give this rule another priority",
                name(merged, tie),
                tie.priority
            ),
            None => "the rule matches the text, but ties with another rule of another class, so neither decides it".to_owned(),
        }),
        MatchOutcome::Outranked | MatchOutcome::Wrapped => {
            let Some(winner) = other(MatchOutcome::Selected) else {
                return Some("the rule matches the text, but another rule decides it".to_owned());
            };
            Some(outranked(merged, own, winner))
        }
    }
}

/// The rule matches, but `winner` decides the text instead of `own`.
fn outranked(merged: &Catalogue, own: &MatchReport, winner: &MatchReport) -> String {
    let why = if own.outcome == MatchOutcome::Wrapped {
        "which matches a cause inside the wrapper this rule matches".to_owned()
    } else if winner.priority > own.priority {
        format!("at a higher priority ({})", winner.priority)
    } else if winner.structured && !own.structured {
        format!(
            "at the same priority ({}), on structured fields",
            winner.priority
        )
    } else {
        format!(
            "at the same priority ({}), and it comes first",
            winner.priority
        )
    };
    let local = merged
        .rules
        .iter()
        .any(|r| r.id == winner.rule_id && matches!(r.origin, Origin::Local { .. }));
    let way_out = if local {
        "remove or change that local rule"
    } else {
        "make this rule replace it"
    };
    format!(
        "{} already matches this text {why}, so this rule would never decide it: give this rule a priority above {}, or {way_out}",
        name(merged, winner),
        winner.priority
    )
}

/// A rule named by its description, its id after it.
fn name(merged: &Catalogue, report: &MatchReport) -> String {
    match merged.rules.iter().find(|r| r.id == report.rule_id) {
        Some(rule) => format!("rule “{}” ({})", rule.description.trim(), rule.id),
        None => format!("rule {}", report.rule_id),
    }
}
