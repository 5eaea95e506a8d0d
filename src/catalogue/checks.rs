//! The checks a local rule passes before it is saved, shared by the app and
//! the CLI. Pure: the caller gathers the samples (inbox items, past
//! attempts) and fixtures; these functions only classify and compare.
//!
//! - **Impact**: which samples the rule would now classify, before → after.
//! - **Regression**: every built-in and local fixture keeps its result; a
//!   changed one is listed and blocks the save until confirmed by name.
//! - **Broadness**: every alternative has a bounded text pattern with a
//!   long enough fixed part, matching no text of the negative corpus.

use chrono_tz::Tz;
use regex_syntax::hir::{Class as HirClass, Hir, HirKind};
use serde::Serialize;

use super::bundled::{CorpusText, NamedFixture};
use super::schema::{Catalogue, Rule};
use crate::classification::{Class, Classification, SemanticCode};
use crate::evidence::{Evidence, Provider, RawEvidence};

/// Longest text pattern a local rule may have, in characters.
pub const MAX_PATTERN_CHARS: usize = 300;
/// Fewest characters of fixed text every match of a pattern must contain.
pub const MIN_LITERAL_CHARS: usize = 8;
/// Compiled size a local pattern may take (the regex crate's size limit).
const MAX_COMPILED_BYTES: usize = 1 << 16;
/// Matched corpus text quoted in a refusal is cut to this many characters.
const QUOTE_CHARS: usize = 60;

/// A classification reduced to what the checks compare.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
pub struct Verdict {
    pub code: SemanticCode,
    pub class: Class,
    pub rule_id: Option<String>,
}

impl Verdict {
    fn of(c: &Classification) -> Verdict {
        Verdict {
            code: c.code,
            class: c.class,
            rule_id: c.rule_id.clone(),
        }
    }
}

/// Evidence the rule is tried on, and how it is named in the report.
#[derive(Debug, Clone)]
pub struct Sample {
    pub label: String,
    pub evidence: Evidence,
}

/// One sample or fixture whose result the rule changes.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct Change {
    pub name: String,
    pub before: Verdict,
    pub after: Verdict,
}

/// The three checks of one proposed rule.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct RuleChecks {
    /// Inbox items and past attempts the rule would classify differently.
    pub impact: Vec<Change>,
    pub samples_checked: u32,
    /// Fixtures whose result changes; each must be confirmed by name.
    pub changed_fixtures: Vec<Change>,
    pub fixtures_checked: u32,
    /// Why the rule is unbounded or too broad; empty when it is neither.
    pub broadness: Vec<String>,
}

impl RuleChecks {
    /// A reason for each changed fixture not among the `confirmed` names.
    pub fn unconfirmed(&self, confirmed: &[String]) -> Vec<String> {
        self.changed_fixtures
            .iter()
            .filter(|change| !confirmed.contains(&change.name))
            .map(|change| {
                format!(
                    "fixture {} changes from {} to {}: confirm it by name to save anyway",
                    change.name,
                    describe(&change.before),
                    describe(&change.after)
                )
            })
            .collect()
    }
}

/// `rate_limited (transient, rule x.y.v1)` / `unknown (unclassified, no rule)`.
pub fn describe(v: &Verdict) -> String {
    format!(
        "{} ({}, {})",
        v.code.as_str(),
        v.class.as_str(),
        v.rule_id
            .as_deref()
            .map_or_else(|| "no rule".to_owned(), |id| format!("rule {id}"))
    )
}

/// Runs the three checks of `rule` (already merged into `proposed`)
/// against `current`, the catalogue in use now.
pub fn check_rule(
    current: &Catalogue,
    proposed: &Catalogue,
    rule: &Rule,
    samples: &[Sample],
    fixtures: &[NamedFixture],
    corpus: &[CorpusText],
    tz: Tz,
) -> RuleChecks {
    let impact = samples
        .iter()
        .filter_map(|s| change(&s.label, current, proposed, &s.evidence, tz))
        .collect();
    let changed_fixtures = fixtures
        .iter()
        .filter_map(|f| {
            let tz = f.fixture.local_tz().unwrap_or(Tz::UTC);
            change(&f.name, current, proposed, &f.fixture.evidence(), tz)
        })
        .collect();
    RuleChecks {
        impact,
        samples_checked: count(samples.len()),
        changed_fixtures,
        fixtures_checked: count(fixtures.len()),
        broadness: broadness(rule, corpus),
    }
}

fn change(
    name: &str,
    current: &Catalogue,
    proposed: &Catalogue,
    evidence: &Evidence,
    tz: Tz,
) -> Option<Change> {
    let before = Verdict::of(&current.classify(evidence, tz));
    let after = Verdict::of(&proposed.classify(evidence, tz));
    (before != after).then(|| Change {
        name: name.to_owned(),
        before,
        after,
    })
}

fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// Every reason `rule` is unbounded or too broad.
pub fn broadness(rule: &Rule, corpus: &[CorpusText]) -> Vec<String> {
    let mut reasons = Vec::new();
    for (index, matcher) in rule.matchers.iter().enumerate() {
        let Some(regex) = &matcher.text else {
            reasons.push(format!(
                "match alternative {index} has no text pattern: a local rule must name the text it recognises, not only a status, type or exit code"
            ));
            continue;
        };
        let pattern = regex.as_str();
        let written = matcher.text_pattern().unwrap_or(pattern);
        let chars = written.chars().count();
        if chars > MAX_PATTERN_CHARS {
            reasons.push(format!(
                "the pattern of alternative {index} is {chars} characters long; at most {MAX_PATTERN_CHARS}"
            ));
            continue;
        }
        if regex::RegexBuilder::new(pattern)
            .size_limit(MAX_COMPILED_BYTES)
            .build()
            .is_err()
        {
            reasons.push(format!(
                "the pattern of alternative {index} is too complex (repetitions and classes compile past {} KiB)",
                MAX_COMPILED_BYTES / 1024
            ));
            continue;
        }
        let fixed = required_literal_chars(pattern);
        if fixed < MIN_LITERAL_CHARS {
            reasons.push(format!(
                "the pattern of alternative {index} has only {fixed} characters of fixed text; at least {MIN_LITERAL_CHARS}, so it cannot match ordinary output by chance"
            ));
        }
        if let Some((source, quote)) = corpus_hit(regex, corpus) {
            reasons.push(format!(
                "the pattern of alternative {index} matches ordinary text from {source}: \"{quote}\""
            ));
        }
    }
    reasons
}

/// The first corpus text the pattern matches, as the rules would see it
/// (sanitized), with the matched part quoted.
fn corpus_hit<'c>(regex: &regex::Regex, corpus: &'c [CorpusText]) -> Option<(&'c str, String)> {
    corpus.iter().find_map(|text| {
        let at = chrono::DateTime::UNIX_EPOCH;
        let evidence =
            Evidence::from_raw(RawEvidence::new(Provider::Generic, text.text.clone(), at));
        let found = regex.find(&evidence.message)?;
        let quote: String = found
            .as_str()
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .take(QUOTE_CHARS)
            .collect();
        Some((text.source.as_str(), quote))
    })
}

/// The longest run of fixed characters every match of `pattern` contains
/// (0 when it does not parse: the compiled rule already did, so never).
fn required_literal_chars(pattern: &str) -> usize {
    regex_syntax::parse(pattern).map_or(0, |hir| Runs::of(&hir).best)
}

/// Fixed text at the start, at the end and anywhere in what a part matches.
#[derive(Debug, Clone, Copy)]
struct Runs {
    /// `Some(n)`: the part always matches the same `n` characters.
    whole: Option<usize>,
    prefix: usize,
    suffix: usize,
    best: usize,
}

impl Runs {
    const NONE: Runs = Runs {
        whole: None,
        prefix: 0,
        suffix: 0,
        best: 0,
    };

    fn fixed(n: usize) -> Runs {
        Runs {
            whole: Some(n),
            prefix: n,
            suffix: n,
            best: n,
        }
    }

    fn of(hir: &Hir) -> Runs {
        match hir.kind() {
            HirKind::Empty | HirKind::Look(_) => Runs::fixed(0),
            HirKind::Literal(lit) => Runs::fixed(String::from_utf8_lossy(&lit.0).chars().count()),
            HirKind::Class(class) if one_letter(class) => Runs::fixed(1),
            HirKind::Class(_) => Runs::NONE,
            HirKind::Capture(capture) => Runs::of(&capture.sub),
            HirKind::Repetition(rep) if rep.min == 0 => Runs::NONE,
            HirKind::Repetition(rep) if rep.max == Some(1) => Runs::of(&rep.sub),
            HirKind::Repetition(rep) => Runs {
                whole: None,
                ..Runs::of(&rep.sub)
            },
            HirKind::Alternation(branches) => Runs {
                best: branches.iter().map(|b| Runs::of(b).best).min().unwrap_or(0),
                ..Runs::NONE
            },
            HirKind::Concat(parts) => concat(&parts.iter().map(Runs::of).collect::<Vec<_>>()),
        }
    }
}

fn concat(parts: &[Runs]) -> Runs {
    let mut best = 0;
    let mut running = 0;
    let mut prefix = None;
    for part in parts {
        match part.whole {
            Some(n) => running += n,
            None => {
                let through = running + part.prefix;
                prefix.get_or_insert(through);
                best = best.max(through).max(part.best);
                running = part.suffix;
            }
        }
    }
    best = best.max(running);
    let all_fixed = parts.iter().all(|p| p.whole.is_some());
    Runs {
        whole: all_fixed.then_some(running),
        prefix: prefix.unwrap_or(running),
        suffix: running,
        best,
    }
}

/// A class that stands for one letter in any case (`(?i)k` is `[Kk\u{212A}]`).
fn one_letter(class: &HirClass) -> bool {
    let chars: Vec<char> = match class {
        HirClass::Unicode(c) => c
            .ranges()
            .iter()
            .flat_map(|r| r.start()..=r.end())
            .take(5)
            .collect(),
        HirClass::Bytes(c) => c
            .ranges()
            .iter()
            .flat_map(|r| r.start()..=r.end())
            .take(5)
            .map(char::from)
            .collect(),
    };
    let folded = |c: &char| -> String { c.to_uppercase().flat_map(char::to_lowercase).collect() };
    chars.len() <= 4
        && chars
            .first()
            .is_some_and(|first| chars.iter().all(|c| folded(c) == folded(first)))
}

#[cfg(test)]
mod tests;
