//! Texts compiled into the binary that a local rule is checked against on a
//! machine with no copy of this repository: every built-in fixture, and a
//! negative corpus of ordinary agent output.

use std::sync::LazyLock;

use serde::Deserialize;

use super::fixture::{Fixture, FixtureKind};
use crate::evidence::{Evidence, Provider, RawEvidence, MAX_MESSAGE_BYTES};

include!(concat!(env!("OUT_DIR"), "/builtin_fixtures.rs"));

/// Recorded output of successful agent runs (`fixtures/negative-corpus/`).
const ORDINARY_OUTPUT: &str = include_str!("../../fixtures/negative-corpus/ordinary-output.toml");

/// How the corpus names a negative fixture's text: this, then its name.
pub const NEGATIVE_FIXTURE_SOURCE: &str = "built-in negative fixture ";

/// A fixture and the name it is reported by (`<provider>/<file>.toml`, or
/// `local/<file>.toml` for the user's own).
#[derive(Debug, Clone, PartialEq)]
pub struct NamedFixture {
    pub name: String,
    pub fixture: Fixture,
}

/// Evidence no local rule may match, and where its text comes from.
#[derive(Debug, Clone, PartialEq)]
pub struct CorpusText {
    pub source: String,
    pub evidence: Evidence,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CorpusFile {
    text: Vec<OrdinaryText>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OrdinaryText {
    source: String,
    text: String,
}

/// Each line of ordinary output as generic evidence, in pieces below the
/// evidence cap so that no part of a long line goes unchecked.
fn ordinary_evidence(text: &OrdinaryText) -> impl Iterator<Item = CorpusText> + '_ {
    text.text
        .lines()
        .filter(|line| !line.trim().is_empty())
        .flat_map(|line| pieces(line, MAX_MESSAGE_BYTES / 2))
        .map(|piece| CorpusText {
            source: text.source.clone(),
            evidence: Evidence::from_raw(RawEvidence::new(
                Provider::Generic,
                piece,
                chrono::DateTime::UNIX_EPOCH,
            )),
        })
}

/// `line` cut at char boundaries into pieces of at most `max` bytes.
fn pieces(line: &str, max: usize) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = line;
    while rest.len() > max {
        let cut = (0..=max)
            .rev()
            .find(|&i| rest.is_char_boundary(i))
            .unwrap_or(0);
        out.push(&rest[..cut]);
        rest = &rest[cut..];
    }
    out.push(rest);
    out
}

static FIXTURES: LazyLock<Vec<NamedFixture>> = LazyLock::new(|| {
    BUILTIN_FIXTURES
        .iter()
        .map(|(name, source)| NamedFixture {
            name: (*name).to_owned(),
            fixture: Fixture::parse(source)
                .unwrap_or_else(|e| panic!("built-in fixture {name} is invalid: {e}")),
        })
        .collect()
});

static CORPUS: LazyLock<Vec<CorpusText>> = LazyLock::new(|| {
    let ordinary: CorpusFile =
        toml::from_str(ORDINARY_OUTPUT).expect("the shipped negative corpus is valid TOML");
    let negatives = FIXTURES
        .iter()
        .filter(|f| f.fixture.kind == FixtureKind::Negative)
        .map(|f| CorpusText {
            source: format!("{NEGATIVE_FIXTURE_SOURCE}{}", f.name),
            evidence: f.fixture.evidence(),
        });
    ordinary
        .text
        .iter()
        .flat_map(ordinary_evidence)
        .collect::<Vec<_>>()
        .into_iter()
        .chain(negatives)
        .collect()
});

/// Every built-in fixture, by name.
pub fn builtin_fixtures() -> &'static [NamedFixture] {
    &FIXTURES
}

/// Ordinary agent output, then the message of every built-in negative fixture.
pub fn negative_corpus() -> &'static [CorpusText] {
    &CORPUS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_fixture_is_bundled() {
        // The suite holds itself to at least 150 cases (tests/it/catalogue_fixtures.rs).
        assert!(builtin_fixtures().len() >= 150);
        assert!(
            builtin_fixtures()
                .iter()
                .any(|f| f.name.starts_with("claude-code/")),
            "names are <provider>/<file>.toml"
        );
    }

    #[test]
    fn the_corpus_names_the_source_of_every_text() {
        let corpus = negative_corpus();
        assert!(corpus
            .iter()
            .any(|t| t.source.starts_with("fixtures/agents/recorded/codex-")));
        assert!(corpus
            .iter()
            .any(|t| t.source.starts_with(NEGATIVE_FIXTURE_SOURCE)));
        assert!(
            corpus.iter().all(|t| !t.evidence.truncated),
            "no part of a text goes unchecked"
        );
    }
}
