//! Catalogue fixtures: one readable TOML case per file under
//! `fixtures/catalogue/<provider>/<name>.toml`, the strict schema they follow,
//! the check that runs one case, and the export of live evidence as a new case.
//!
//! Schema (unknown fields are errors):
//!
//! ```toml
//! description = "what this case shows"
//! source = "https://… (where the text was published)"
//! kind = "positive"            # positive | negative | correlation | redaction
//! [input]
//! provider = "claude-code"     # as in Evidence
//! message = "…"
//! phase = "stream"             # optional
//! http_status = 529            # optional
//! error_type = "overloaded_error"  # optional
//! exit_code = 1                # optional
//! occurred_at = "2026-01-15T12:00:00Z"  # optional, default DEFAULT_OCCURRED_AT
//! local_tz = "Europe/Warsaw"   # optional, default UTC: the zone for clock times without one
//! [input.headers]              # optional
//! retry-after = "30"
//! [expect]
//! code = "provider_overloaded"
//! class = "transient"
//! rule_id = "anthropic.overloaded.v1"   # optional; "none" = no rule may match
//! reset_at = "2026-01-15T12:00:30Z"     # optional, checked when given
//! retry_after_s = 30.0                  # optional, checked when given
//! no_reset = true                       # optional: no reset may be trusted (refused hints)
//! excerpt_must_not_contain = ["sk-ant-…"]  # redaction cases
//! message_must_keep = ["req_…"]         # optional: text sanitizing must keep (request ids)
//! ```

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use serde::{Deserialize, Serialize};

use super::excerpt;
use crate::classification::{Class, Classification, SemanticCode};
use crate::evidence::{Evidence, Phase, Provider, RawEvidence};

/// `occurred_at` of a fixture that does not give one, so cases are reproducible.
pub const DEFAULT_OCCURRED_AT: &str = "2026-01-15T12:00:00Z";

/// `rule_id` value meaning "no rule may decide this case".
pub const NO_RULE: &str = "none";

/// What a fixture demonstrates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FixtureKind {
    /// Recognised and actionable: the class is transient or hard.
    Positive,
    /// Must not be actionable: the class is unclassified.
    Negative,
    /// Several signals in one piece of evidence; the expected one wins.
    Correlation,
    /// A secret in the input never reaches the output.
    Redaction,
}

/// One catalogue case.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fixture {
    pub description: String,
    pub source: String,
    pub kind: FixtureKind,
    pub input: FixtureInput,
    pub expect: FixtureExpect,
}

/// The evidence of a case, before sanitizing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FixtureInput {
    pub provider: Provider,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<Phase>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_status: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub occurred_at: Option<DateTime<Utc>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local_tz: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
}

/// The expected classification of a case.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FixtureExpect {
    pub code: SemanticCode,
    pub class: Class,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reset_at: Option<DateTime<Utc>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after_s: Option<f64>,
    /// The text names a reset that must be refused (ambiguous, in a DST gap,
    /// an unknown zone): no reset may come out.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_reset: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub excerpt_must_not_contain: Vec<String>,
    /// Text of the input that must survive sanitizing (a request id support
    /// asks for, an error name a rule needs).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub message_must_keep: Vec<String>,
}

/// Why a fixture file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum FixtureError {
    #[error("fixture does not follow the schema: {0}")]
    Syntax(#[from] toml::de::Error),
    #[error("input.local_tz {0:?} is not an IANA time zone")]
    BadTimeZone(String),
}

impl Fixture {
    /// Parses one fixture file.
    pub fn parse(source: &str) -> Result<Fixture, FixtureError> {
        let fixture: Fixture = toml::from_str(source)?;
        fixture.local_tz()?;
        Ok(fixture)
    }

    /// The zone for clock times printed without one.
    pub fn local_tz(&self) -> Result<Tz, FixtureError> {
        match &self.input.local_tz {
            None => Ok(Tz::UTC),
            Some(name) => name
                .parse::<Tz>()
                .map_err(|_| FixtureError::BadTimeZone(name.clone())),
        }
    }

    /// The sanitized evidence this case describes.
    pub fn evidence(&self) -> Evidence {
        let occurred_at = self.input.occurred_at.unwrap_or_else(|| {
            DEFAULT_OCCURRED_AT
                .parse()
                .expect("DEFAULT_OCCURRED_AT is RFC 3339")
        });
        Evidence::from_raw(
            RawEvidence::new(self.input.provider, self.input.message.clone(), occurred_at)
                .with_phase(self.input.phase)
                .with_http_status(self.input.http_status)
                .with_headers(self.input.headers.clone())
                .with_error_type(self.input.error_type.clone())
                .with_exit_code(self.input.exit_code),
        )
    }

    /// Runs the case with the built-in catalogue; every difference from the
    /// expectation, or an empty list when the case passes.
    pub fn check(&self) -> Vec<String> {
        self.check_with(super::builtin())
    }

    /// Runs the case with `catalogue` (built-in plus a local overlay).
    pub fn check_with(&self, catalogue: &super::Catalogue) -> Vec<String> {
        let tz = match self.local_tz() {
            Ok(tz) => tz,
            Err(e) => return vec![e.to_string()],
        };
        let evidence = self.evidence();
        let got = catalogue.explain(&evidence, tz).classification;
        let mut problems = self.kind_problems();
        problems.extend(self.result_problems(&got));
        problems.extend(self.redaction_problems(&evidence, &got));
        problems
    }

    /// A case whose kind contradicts its expectation proves nothing.
    fn kind_problems(&self) -> Vec<String> {
        let expect = &self.expect;
        let problem = match self.kind {
            FixtureKind::Positive if expect.class == Class::Unclassified => {
                Some("kind = positive needs an actionable expect.class (transient or hard)")
            }
            FixtureKind::Negative if expect.class != Class::Unclassified => {
                Some("kind = negative needs expect.class = unclassified")
            }
            FixtureKind::Redaction if expect.excerpt_must_not_contain.is_empty() => {
                Some("kind = redaction needs expect.excerpt_must_not_contain")
            }
            FixtureKind::Positive
            | FixtureKind::Negative
            | FixtureKind::Correlation
            | FixtureKind::Redaction => None,
        };
        let mut problems: Vec<String> = problem.map(str::to_owned).into_iter().collect();
        if expect.code.class() != expect.class && expect.class != Class::Unclassified {
            problems.push(format!(
                "expect.class {} contradicts expect.code {} (class {})",
                expect.class.as_str(),
                expect.code.as_str(),
                expect.code.class().as_str()
            ));
        }
        problems
    }

    fn result_problems(&self, got: &Classification) -> Vec<String> {
        let expect = &self.expect;
        let mut problems = Vec::new();
        if got.code != expect.code {
            problems.push(diff("code", expect.code.as_str(), got.code.as_str()));
        }
        if got.class != expect.class {
            problems.push(diff("class", expect.class.as_str(), got.class.as_str()));
        }
        if let Some(want) = &expect.rule_id {
            let have = got.rule_id.as_deref().unwrap_or(NO_RULE);
            if have != want {
                problems.push(diff("rule_id", want, have));
            }
        }
        if let Some(want) = expect.reset_at {
            if got.reset_at != Some(want) {
                problems.push(diff(
                    "reset_at",
                    &want.to_rfc3339(),
                    &format!("{:?}", got.reset_at),
                ));
            }
        }
        if let Some(want) = expect.retry_after_s {
            let close = got
                .retry_after_s
                .is_some_and(|have| (have - want).abs() < 1e-6);
            if !close {
                problems.push(diff(
                    "retry_after_s",
                    &want.to_string(),
                    &format!("{:?}", got.retry_after_s),
                ));
            }
        }
        if expect.no_reset && (got.reset_at.is_some() || got.retry_after_s.is_some()) {
            problems.push(diff(
                "reset",
                "none (no_reset = true)",
                &format!("{:?}", got.reset_at),
            ));
        }
        if !problems.is_empty() {
            problems.push(format!("explanation: {}", got.explanation));
        }
        problems
    }

    fn redaction_problems(&self, evidence: &Evidence, got: &Classification) -> Vec<String> {
        let shown = excerpt(evidence, got.matched);
        let json = serde_json::to_string(got).unwrap_or_default();
        let mut problems = Vec::new();
        for kept in &self.expect.message_must_keep {
            if !evidence.message.contains(kept.as_str()) {
                problems.push(format!("message_must_keep {kept:?} was lost in sanitizing"));
            }
        }
        for secret in &self.expect.excerpt_must_not_contain {
            if !self.input.message.contains(secret.as_str()) {
                problems.push(format!("excerpt_must_not_contain {secret:?} is not in input.message, so the case proves nothing"));
            }
            let leaks = [
                ("excerpt", shown.contains(secret.as_str())),
                (
                    "sanitized message",
                    evidence.message.contains(secret.as_str()),
                ),
                ("classification", json.contains(secret.as_str())),
            ];
            for (place, leaked) in leaks {
                if leaked {
                    problems.push(format!("secret {secret:?} leaked into the {place}"));
                }
            }
        }
        problems
    }
}

fn diff(field: &str, want: &str, have: &str) -> String {
    format!("{field}: expected {want}, got {have}")
}

/// A fixture file for `evidence` as currently classified, for the UI's
/// "export unclassified evidence as fixture" action. Only sanitized text is
/// written; the description and source are left for a person to fill in, and
/// so are `reset_at`/`retry_after_s` (a clock time without a zone depends on
/// the zone the case is run in, which the evidence does not record).
pub fn fixture_from_evidence(evidence: &Evidence, classification: &Classification) -> String {
    let mut expected = classification.clone();
    expected.rule_id = Some(expected.rule_id.unwrap_or_else(|| NO_RULE.to_owned()));
    Fixture::recorded(
        evidence,
        &expected,
        "Exported from Recourse: describe this failure, then set the expected result",
        "exported evidence: replace with the public source of this text",
    )
    .to_toml()
}

impl Fixture {
    /// A fixture that expects `evidence` (sanitized) to classify as
    /// `classification`: positive for a class, negative for unclassified.
    /// No timing expectations: a clock time without a zone depends on the
    /// zone the case is run in, which the evidence does not record.
    pub fn recorded(
        evidence: &Evidence,
        classification: &Classification,
        description: &str,
        source: &str,
    ) -> Fixture {
        let kind = match classification.class {
            Class::Transient | Class::Hard => FixtureKind::Positive,
            Class::Unclassified => FixtureKind::Negative,
        };
        Fixture {
            description: description.to_owned(),
            source: source.to_owned(),
            kind,
            input: FixtureInput {
                provider: evidence.provider,
                message: evidence.message.clone(),
                phase: evidence.phase,
                http_status: evidence.http_status,
                error_type: evidence.error_type.clone(),
                exit_code: evidence.exit_code,
                occurred_at: Some(evidence.occurred_at),
                local_tz: None,
                headers: evidence.headers.clone(),
            },
            expect: FixtureExpect {
                code: classification.code,
                class: classification.class,
                rule_id: classification.rule_id.clone(),
                reset_at: None,
                retry_after_s: None,
                no_reset: false,
                excerpt_must_not_contain: Vec::new(),
                message_must_keep: Vec::new(),
            },
        }
    }

    /// The fixture as a file's text.
    pub fn to_toml(&self) -> String {
        toml::to_string(self).expect("a fixture of strings, numbers and instants always serializes")
    }
}
