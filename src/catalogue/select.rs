//! Choosing one result when several rules match.
//!
//! Order of decision, each step deterministic:
//! 1. A wrapper match (envelope such as "exceeded retry limit" or a bare HTTP
//!    status) is dropped when a cause matches inside it — at or after the
//!    wrapper's position, or anywhere if the wrapper has no text position. The
//!    innermost cause wins.
//! 2. The highest explicit priority wins.
//! 3. At equal priority a structured match beats a text-only one.
//! 4. Still tied with a different class: a conflict, which is unclassified.
//!    Still tied with the same class: the rule listed first in the catalogue.

use std::cmp::Reverse;

use super::matcher::RuleMatch;
use super::schema::Role;
use crate::classification::Span;

/// What happened to one matching rule during selection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum MatchOutcome {
    /// This rule decided the result.
    Selected,
    /// A wrapper dropped because a cause matched inside it.
    Wrapped,
    /// Lost on priority, structure or catalogue order.
    Outranked,
    /// Tied with a rule of a different class: nothing was selected.
    Conflicting,
}

/// The verdict of selection over all matches.
#[derive(Debug)]
pub(crate) struct Selection<'r> {
    /// Every match with its outcome, best first.
    pub ranked: Vec<(RuleMatch<'r>, MatchOutcome)>,
}

impl<'r> Selection<'r> {
    pub(crate) fn winner(&self) -> Option<&RuleMatch<'r>> {
        self.ranked
            .iter()
            .find(|(_, outcome)| *outcome == MatchOutcome::Selected)
            .map(|(m, _)| m)
    }

    pub(crate) fn conflicting(&self) -> Vec<&RuleMatch<'r>> {
        self.ranked
            .iter()
            .filter(|(_, outcome)| *outcome == MatchOutcome::Conflicting)
            .map(|(m, _)| m)
            .collect()
    }
}

pub(crate) fn select(matches: Vec<RuleMatch<'_>>) -> Selection<'_> {
    let (mut live, wrapped) = split_wrapped(matches);
    live.sort_by_key(|m| (Reverse(m.rule.priority), Reverse(m.structured), m.index));
    let mut ranked = rank(&live);
    ranked.extend(wrapped.into_iter().map(|m| (m, MatchOutcome::Wrapped)));
    Selection { ranked }
}

/// Separates wrappers that have a cause inside them from everything else.
fn split_wrapped(matches: Vec<RuleMatch<'_>>) -> (Vec<RuleMatch<'_>>, Vec<RuleMatch<'_>>) {
    let causes: Vec<Option<Span>> = matches
        .iter()
        .filter(|m| m.rule.role == Role::Cause)
        .map(|m| m.span)
        .collect();
    matches
        .into_iter()
        .partition(|m| !(m.rule.role == Role::Wrapper && causes.iter().any(|c| inside(*c, m.span))))
}

/// Outcomes for matches already sorted best first.
fn rank<'r>(live: &[RuleMatch<'r>]) -> Vec<(RuleMatch<'r>, MatchOutcome)> {
    let Some(top) = live.first() else {
        return Vec::new();
    };
    let tied =
        |m: &RuleMatch<'_>| m.rule.priority == top.rule.priority && m.structured == top.structured;
    let conflict = live
        .iter()
        .filter(|m| tied(m))
        .any(|m| m.rule.class() != top.rule.class());
    live.iter()
        .map(|m| {
            let outcome = match (conflict, tied(m), m.index == top.index) {
                (true, true, _) => MatchOutcome::Conflicting,
                (false, _, true) => MatchOutcome::Selected,
                _ => MatchOutcome::Outranked,
            };
            (*m, outcome)
        })
        .collect()
}

/// Whether a cause at `cause` lies inside a wrapper at `wrapper`.
fn inside(cause: Option<Span>, wrapper: Option<Span>) -> bool {
    match (cause, wrapper) {
        (_, None) | (None, Some(_)) => true,
        (Some(c), Some(w)) => c.start >= w.start,
    }
}
