//! The checks a local rule passes before it is saved, shared by the app and
//! the CLI. Pure: the caller gathers the samples (inbox items, past
//! attempts) and fixtures; these functions only classify and compare.
//!
//! - **Impact**: which samples the rule would now classify, before → after.
//! - **Regression**: every built-in and local fixture keeps its result; a
//!   changed one is listed and blocks the save until confirmed by name.
//! - **Broadness**: every alternative has a bounded text pattern with a
//!   long enough fixed part, matching no text of the negative corpus.

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use regex_syntax::hir::{Class as HirClass, Hir, HirKind};
use serde::Serialize;

use super::bundled::{CorpusText, NamedFixture};
use super::schema::{Catalogue, Rule};
use crate::classification::{Class, Classification, SemanticCode};
use crate::evidence::Evidence;

/// Longest text pattern a local rule may have, in characters.
pub const MAX_PATTERN_CHARS: usize = 300;
/// Fewest characters of fixed text every match of a pattern must contain.
pub const MIN_LITERAL_CHARS: usize = 8;
/// Compiled size a local pattern may take (the regex crate's size limit).
const MAX_COMPILED_BYTES: usize = 1 << 16;
/// Matched corpus text quoted in a refusal is cut to this many characters.
const QUOTE_CHARS: usize = 60;

/// A classification reduced to what the checks compare: what a fixture
/// can expect.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct Verdict {
    pub code: SemanticCode,
    pub class: Class,
    pub rule_id: Option<String>,
    pub reset_at: Option<DateTime<Utc>>,
}

impl Verdict {
    fn of(c: &Classification) -> Verdict {
        Verdict {
            code: c.code,
            class: c.class,
            rule_id: c.rule_id.clone(),
            reset_at: c.reset_at,
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

/// `rate_limited (transient, rule x.y.v1)` / `unknown (unclassified, no
/// rule)`, with `, reset …` when the provider gave one.
pub fn describe(v: &Verdict) -> String {
    let reset = v.reset_at.map_or_else(String::new, |at| {
        format!(
            ", reset {}",
            at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
        )
    });
    format!(
        "{} ({}, {}{reset})",
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
    // Alternatives are numbered as a person counts them in the file: from 1.
    for (number, matcher) in (1..).zip(&rule.matchers) {
        match &matcher.text {
            None if matcher.error_type.is_empty() => reasons.push(format!(
                "match alternative {number} checks only a status, header, exit code or phase; give it a text pattern or a provider error_type"
            )),
            None => {}
            Some(regex) => reasons.extend(pattern_problem(number, regex.as_str())),
        }
    }
    if let Some((source, quote)) = corpus_hit(rule, corpus) {
        reasons.push(format!(
            "the rule matches ordinary text from {source}: {quote}"
        ));
    }
    reasons
}

/// Why the text pattern of alternative `number` (counted from 1) is
/// unbounded, if it is.
fn pattern_problem(number: usize, pattern: &str) -> Option<String> {
    let chars = pattern.chars().count();
    if chars > MAX_PATTERN_CHARS {
        return Some(format!(
            "the pattern of alternative {number} is {chars} characters long; at most {MAX_PATTERN_CHARS}"
        ));
    }
    let compiles = regex::RegexBuilder::new(pattern)
        .size_limit(MAX_COMPILED_BYTES)
        .build()
        .is_ok();
    if !compiles {
        return Some(format!(
            "the pattern of alternative {number} is too complex (repetitions and classes compile past {} KiB)",
            MAX_COMPILED_BYTES / 1024
        ));
    }
    let fixed = required_literal_chars(pattern);
    (fixed < MIN_LITERAL_CHARS).then(|| format!(
        "the pattern of alternative {number} has only {fixed} characters of fixed text; at least {MIN_LITERAL_CHARS}, so it cannot match ordinary output by chance"
    ))
}

/// The first corpus evidence `rule` matches (as the catalogue matches:
/// sanitized, progress lines ignored), with the matched part quoted.
fn corpus_hit<'c>(rule: &Rule, corpus: &'c [CorpusText]) -> Option<(&'c str, String)> {
    let alone = Catalogue::assemble("0.0.0".to_owned(), vec![rule.clone()]).ok()?;
    corpus.iter().find_map(|text| {
        let explanation = alone.explain(&text.evidence, Tz::UTC);
        let found = explanation.matches.first()?;
        let quote = match found.span {
            None => "its structured fields".to_owned(),
            Some(span) => {
                let matched = &text.evidence.message[span.start as usize..span.end as usize];
                let flat: String = matched
                    .chars()
                    .map(|c| if c.is_control() { ' ' } else { c })
                    .take(QUOTE_CHARS)
                    .collect();
                format!("\"{flat}\"")
            }
        };
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
