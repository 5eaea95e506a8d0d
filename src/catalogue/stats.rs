//! What the catalogue holds, counted (`recourse catalogue stats`): rules by
//! class and origin, fixtures by kind, expected class, family (the semantic
//! code) and kind of source, and the size of the negative corpus every local
//! rule is checked against.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use regex::Regex;
use serde::Serialize;

use super::bundled::{CorpusText, NamedFixture};
use super::{Catalogue, Origin};

/// Where a fixture's text comes from, read from its `source`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SourceKind {
    /// A real CLI run recorded against the loopback mock
    /// (`fixtures/agents/recorded/…`).
    Recording,
    /// A public issue, pull request or discussion thread
    /// (`https://github.com/o/r/issues/N`, `o/r#N`).
    IssueTracker,
    /// A public repository's source or tests (`…/blob/…`, `o/r path/file`).
    SourceCode,
    /// Provider or tool documentation and other public pages.
    Documentation,
    /// Written for Recourse (ordinary output, a false-positive check).
    Constructed,
}

impl SourceKind {
    pub fn as_str(self) -> &'static str {
        match self {
            SourceKind::Recording => "recording",
            SourceKind::IssueTracker => "issue_tracker",
            SourceKind::SourceCode => "source_code",
            SourceKind::Documentation => "documentation",
            SourceKind::Constructed => "constructed",
        }
    }

    /// The kind of `source`: its first reference decides (a recording that
    /// also names the docs its wording follows is a recording).
    pub fn of(source: &str) -> SourceKind {
        let source = source.trim();
        if source.starts_with("fixtures/agents/recorded/") {
            SourceKind::Recording
        } else if ISSUE.is_match(source) {
            SourceKind::IssueTracker
        } else if CODE.is_match(source) {
            SourceKind::SourceCode
        } else if source.starts_with("http://") || source.starts_with("https://") {
            SourceKind::Documentation
        } else {
            SourceKind::Constructed
        }
    }
}

static ISSUE: LazyLock<Regex> = LazyLock::new(|| {
    crate::ascii_regex::compile(
        r"^(?:https?://(?:www\.)?(?:github|gitlab)\.com/[\w.-]+/[\w.-]+(?:/-)?/(?:issues|pull|pulls|merge_requests|discussions)/\d|[\w.-]+/[\w.-]+#\d)",
    )
    .expect("issue source pattern is valid")
});

static CODE: LazyLock<Regex> = LazyLock::new(|| {
    crate::ascii_regex::compile(
        r"^(?:https?://(?:www\.)?github\.com/[\w.-]+/[\w.-]+/(?:blob|tree|commit)/|[\w.-]+/[\w.-]+ [\w.-]+/)",
    )
    .expect("code source pattern is valid")
});

/// The counts, in the order `recourse catalogue stats` prints them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CatalogueStats {
    pub version: String,
    pub rules: RuleStats,
    pub fixtures: FixtureStats,
    pub negative_corpus: CorpusStats,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RuleStats {
    pub total: usize,
    pub builtin: usize,
    pub local: usize,
    /// By the class of the code each rule decides.
    pub by_class: BTreeMap<String, usize>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FixtureStats {
    pub total: usize,
    pub by_kind: BTreeMap<String, usize>,
    /// By the class each case expects (`unclassified` for lookalikes).
    pub by_class: BTreeMap<String, usize>,
    /// By the code each case expects: one family per semantic code.
    pub by_code: BTreeMap<String, usize>,
    pub by_source_kind: BTreeMap<String, usize>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CorpusStats {
    /// Every text a local rule may not match.
    pub total: usize,
    /// Lines of recorded ordinary agent output.
    pub ordinary_output: usize,
    /// Messages of negative fixtures (lookalikes, agent prose, tool output).
    pub negative_fixtures: usize,
}

impl CatalogueStats {
    /// Counts `catalogue`'s rules, `fixtures` and the `corpus`.
    pub fn of(
        catalogue: &Catalogue,
        fixtures: &[NamedFixture],
        corpus: &[CorpusText],
    ) -> CatalogueStats {
        let mut rules = RuleStats {
            total: catalogue.rules.len(),
            builtin: 0,
            local: 0,
            by_class: BTreeMap::new(),
        };
        for rule in &catalogue.rules {
            match rule.origin {
                Origin::Builtin => rules.builtin += 1,
                _ => rules.local += 1,
            }
            *rules
                .by_class
                .entry(rule.class().as_str().to_owned())
                .or_default() += 1;
        }
        let mut stats = FixtureStats {
            total: fixtures.len(),
            by_kind: BTreeMap::new(),
            by_class: BTreeMap::new(),
            by_code: BTreeMap::new(),
            by_source_kind: BTreeMap::new(),
        };
        for f in fixtures.iter().map(|f| &f.fixture) {
            let kind = serde_json::to_value(f.kind)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default();
            *stats.by_kind.entry(kind).or_default() += 1;
            *stats
                .by_class
                .entry(f.expect.class.as_str().to_owned())
                .or_default() += 1;
            *stats
                .by_code
                .entry(f.expect.code.as_str().to_owned())
                .or_default() += 1;
            *stats
                .by_source_kind
                .entry(SourceKind::of(&f.source).as_str().to_owned())
                .or_default() += 1;
        }
        let negative_fixtures = corpus
            .iter()
            .filter(|t| {
                t.source
                    .starts_with(super::bundled::NEGATIVE_FIXTURE_SOURCE)
            })
            .count();
        CatalogueStats {
            version: catalogue.version.clone(),
            rules,
            fixtures: stats,
            negative_corpus: CorpusStats {
                total: corpus.len(),
                ordinary_output: corpus.len() - negative_fixtures,
                negative_fixtures,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn source_kinds_are_read_from_the_first_reference() {
        for (source, kind) in [
            (
                "https://github.com/anthropics/claude-code/issues/4248",
                SourceKind::IssueTracker,
            ),
            (
                "https://github.com/openai/codex/pull/1201 (the fix)",
                SourceKind::IssueTracker,
            ),
            ("BerriAI/litellm#9035", SourceKind::IssueTracker),
            (
                "kdlbs/kandev apps/backend/internal/agent/runtime/routingerr/overloaded_test.go (x)",
                SourceKind::SourceCode,
            ),
            (
                "https://github.com/anthropics/anthropic-sdk-python/blob/main/src/anthropic/_base_client.py",
                SourceKind::SourceCode,
            ),
            (
                "https://docs.anthropic.com/en/api/errors",
                SourceKind::Documentation,
            ),
            (
                "fixtures/agents/recorded/claude-2.1.332/quota_day; wording of https://docs.anthropic.com/en/api/rate-limits",
                SourceKind::Recording,
            ),
            (
                "synthetic agent summary (issue 13 part 2)",
                SourceKind::Constructed,
            ),
        ] {
            assert_eq!(SourceKind::of(source), kind, "{source}");
        }
    }

    #[test]
    fn the_builtin_counts_add_up() {
        let catalogue = super::super::builtin();
        let fixtures = super::super::bundled::builtin_fixtures();
        let corpus = super::super::bundled::negative_corpus();
        let stats = CatalogueStats::of(catalogue, fixtures, corpus);
        assert_eq!(stats.rules.local, 0);
        assert_eq!(stats.rules.total, stats.rules.builtin);
        for counts in [
            &stats.fixtures.by_kind,
            &stats.fixtures.by_class,
            &stats.fixtures.by_code,
            &stats.fixtures.by_source_kind,
        ] {
            assert_eq!(counts.values().sum::<usize>(), fixtures.len());
        }
        assert_eq!(
            stats.negative_corpus.negative_fixtures,
            stats.fixtures.by_kind["negative"]
        );
        assert!(stats.negative_corpus.ordinary_output > 0);
    }
}
