//! Turning a selection into a [`Classification`] with a sentence a person can
//! read, plus the per-rule report the CLI and UI show.

use chrono_tz::Tz;
use serde::Serialize;

use super::effective_class;
use super::hints::{hint_for, line_start};
use super::matcher::{ProgressLines, RuleMatch};
use super::schema::{Catalogue, Rule};
use super::select::{MatchOutcome, Selection};
use super::window::{self, Settlement, Window, SHORT_THROTTLE_MAX};
use crate::classification::{Class, Classification, Confidence, Scope, SemanticCode, Span};
use crate::evidence::Evidence;
use crate::profile::words::capitalized;
use crate::timing::TimingHint;

/// Excerpts shown to people are cut to this many bytes.
pub const EXCERPT_MAX_BYTES: usize = 512;

/// Matched text quoted in an explanation is cut to this many bytes.
const QUOTE_MAX_BYTES: usize = 80;

/// A classification together with how it was reached.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct Explanation {
    pub classification: Classification,
    /// Every rule that matched, best first, with what happened to it.
    pub matches: Vec<MatchReport>,
    /// Progress lines ("Retrying in 5s (attempt 2/10)") whose text was ignored.
    pub progress_lines_ignored: u32,
    /// The trusted timing hint attached to the classification, if any.
    pub hint: Option<TimingHint>,
}

/// One rule that matched the evidence.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct MatchReport {
    pub rule_id: String,
    pub priority: u16,
    pub code: SemanticCode,
    pub class: Class,
    pub structured: bool,
    pub span: Option<Span>,
    pub outcome: MatchOutcome,
}

pub(crate) fn build(
    catalogue: &Catalogue,
    evidence: &Evidence,
    selection: &Selection<'_>,
    settlement: Option<&Settlement>,
    progress: &ProgressLines,
    local_tz: Tz,
) -> Explanation {
    let matches = selection
        .ranked
        .iter()
        .map(|(m, outcome)| MatchReport {
            rule_id: m.rule.id.clone(),
            priority: m.rule.priority,
            code: m.rule.code,
            class: m.rule.class(),
            structured: m.structured,
            span: m.span,
            outcome: *outcome,
        })
        .collect();
    let (classification, hint) = match selection.winner() {
        Some(winner) => selected(catalogue, evidence, winner, settlement, local_tz),
        None => (unselected(catalogue, &selection.conflicting()), None),
    };
    Explanation {
        classification,
        matches,
        progress_lines_ignored: u32::try_from(progress.count()).unwrap_or(u32::MAX),
        hint,
    }
}

fn selected(
    catalogue: &Catalogue,
    evidence: &Evidence,
    winner: &RuleMatch<'_>,
    settlement: Option<&Settlement>,
    local_tz: Tz,
) -> (Classification, Option<TimingHint>) {
    let rule = winner.rule;
    let hint = match effective_class(rule) {
        Class::Transient | Class::Hard => settlement
            .map(|s| s.hint.clone())
            .or_else(|| hint_for(rule, evidence, winner.span, local_tz)),
        Class::Unclassified => None,
    };
    let window = hint.as_ref().map(|h| Window::of(h, evidence.occurred_at));
    let code = window::code_for(rule.code, window);
    let (class, scope) = if code == rule.code {
        (effective_class(rule), rule.scope)
    } else {
        (code.class(), Scope::Account)
    };
    let verdict = Verdict {
        code,
        class,
        hint: hint.as_ref(),
        settlement,
    };
    let explanation = selected_sentence(evidence, winner, &verdict);
    let classification = Classification {
        code,
        class,
        confidence: rule.confidence,
        scope,
        rule_id: Some(rule.id.clone()),
        catalogue_version: catalogue.version.clone(),
        retry_after_s: hint.as_ref().and_then(|h| h.retry_after_s),
        reset_at: hint.as_ref().map(|h| h.reset_at),
        matched: winner.span,
        explanation,
    };
    (classification, hint)
}

fn unselected(catalogue: &Catalogue, conflicting: &[&RuleMatch<'_>]) -> Classification {
    let explanation = if conflicting.is_empty() {
        "No catalogue rule matched this evidence; unknown failures are not recovered automatically."
            .to_owned()
    } else {
        conflict_sentence(conflicting)
    };
    Classification {
        code: SemanticCode::Unknown,
        class: Class::Unclassified,
        confidence: Confidence::Low,
        scope: Scope::Unknown,
        rule_id: None,
        catalogue_version: catalogue.version.clone(),
        retry_after_s: None,
        reset_at: None,
        matched: None,
        explanation,
    }
}

/// What was decided for the selected rule, for its sentence.
struct Verdict<'a> {
    /// The rule's code, or `quota_exhausted` for a throttle with a long reset.
    code: SemanticCode,
    class: Class,
    hint: Option<&'a TimingHint>,
    settlement: Option<&'a Settlement>,
}

/// The decision in words: the rule's description first, then what matched
/// and the code in words. The rule's id and priority are not repeated here:
/// the classification and the list of matches carry them (the app's Engine
/// details, `recourse classify`'s rule line).
fn selected_sentence(evidence: &Evidence, winner: &RuleMatch<'_>, verdict: &Verdict<'_>) -> String {
    let rule = winner.rule;
    let (class, hint) = (verdict.class, verdict.hint);
    let evidence_part = match winner.span {
        Some(span) => format!("The text \"{}\" matched", quote(&evidence.message, span)),
        None => "Structured fields (status, error type, headers or exit code) matched".to_owned(),
    };
    let settled_part = verdict.settlement.map_or_else(String::new, |s| {
        format!(
            "; it tied with {} of the other class, and the provider's reset {} away is {} the {}-minute short-throttle bound",
            s.rivals.iter().map(|r| quoted(r)).collect::<Vec<_>>().join(" and "),
            window::distance(&s.hint, evidence.occurred_at),
            s.window.phrase(),
            SHORT_THROTTLE_MAX.num_minutes()
        )
    });
    let verdict = if verdict.code != rule.code {
        format!(
            "but the provider's reset is {} away, beyond the {}-minute short-throttle bound, so this is a quota window: {} is {}",
            hint.map_or_else(String::new, |h| window::distance(h, evidence.occurred_at)),
            SHORT_THROTTLE_MAX.num_minutes(),
            code_words(verdict.code),
            class.as_str()
        )
    } else {
        rule_verdict(rule, class)
    };
    let hint_part = hint.map_or_else(String::new, |h| {
        format!(
            "; the provider's hint ({}) says retry at {}",
            h.source.as_str(),
            h.reset_at
                .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
        )
    });
    format!(
        "{}. {}{}; {}{}.",
        capitalized(rule.description.trim_end_matches('.')),
        evidence_part,
        settled_part,
        verdict,
        hint_part
    )
}

/// A code as a person reads it, quoted so it stands apart mid-sentence: its
/// stored name is in the classification (and the UI's Engine details).
fn code_words(code: SemanticCode) -> String {
    quoted(code.words())
}

fn quoted(text: &str) -> String {
    format!("“{text}”")
}

/// The verdict for a rule's own code at the class it got.
fn rule_verdict(rule: &Rule, class: Class) -> String {
    if rule.unreviewed() && class == Class::Unclassified {
        return format!(
            "this local rule would classify as {} ({}), not reviewed, so it is not acted on until a person reviews it",
            code_words(rule.code),
            rule.code.class().as_str()
        );
    }
    match (class, rule.code.class()) {
        (Class::Unclassified, Class::Transient | Class::Hard) => format!(
            "the rule's confidence is low, so {} is not acted on automatically",
            code_words(rule.code)
        ),
        (Class::Unclassified, Class::Unclassified) => format!(
            "{} is outside provider recovery and needs a person",
            code_words(rule.code)
        ),
        (class, _) => format!("{} is {}", code_words(rule.code), class.as_str()),
    }
}

/// The tied rules by their descriptions and codes in words; their ids and
/// priority are in the list of matching rules.
fn conflict_sentence(conflicting: &[&RuleMatch<'_>]) -> String {
    let names: Vec<String> = conflicting
        .iter()
        .map(|m| {
            format!(
                "{} ({}, {})",
                quoted(&m.rule.description),
                m.rule.code.words(),
                m.rule.class().as_str()
            )
        })
        .collect();
    format!(
        "Rules {} matched at equal priority with different classes; conflicting evidence is not recovered automatically.",
        names.join(" and "),
    )
}

/// The matched text, on one line and bounded.
fn quote(message: &str, span: Span) -> String {
    let text = &message[span.start as usize..span.end as usize];
    let cut = &text[..floor_boundary(text, QUOTE_MAX_BYTES)];
    let flat: String = cut
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if cut.len() < text.len() {
        format!("{flat}…")
    } else {
        flat
    }
}

/// A short, sanitized piece of the evidence to show a person: from the start
/// of the matched line (or of the message) on, at most [`EXCERPT_MAX_BYTES`].
pub fn excerpt(evidence: &Evidence, matched: Option<Span>) -> String {
    let message = evidence.message.as_str();
    let start = matched.map_or(0, |s| line_start(message, s.start as usize));
    let rest = &message[start..];
    rest[..floor_boundary(rest, EXCERPT_MAX_BYTES)]
        .trim_end()
        .to_owned()
}

/// Largest char boundary of `text` that is `<= max`.
fn floor_boundary(text: &str, max: usize) -> usize {
    if text.len() <= max {
        return text.len();
    }
    (0..=max)
        .rev()
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(0)
}
