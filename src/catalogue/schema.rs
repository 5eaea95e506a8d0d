//! The rule schema: the strict TOML format of `rules.toml`, its validation, and
//! the compiled [`Rule`] the matcher runs.
//!
//! Parsing and validation happen once (the built-in catalogue is compiled in
//! and checked by a test), so a bad rule is a build-time failure, never a
//! surprise at classification time.

use std::collections::BTreeSet;

use regex::Regex;
use serde::{Deserialize, Serialize};

use super::prefilter::TextPrefilter;

use crate::classification::{Class, Confidence, Scope, SemanticCode};
use crate::evidence::{Phase, Provider};

/// Highest priority a rule may have.
pub const MAX_PRIORITY: u16 = 1000;

/// Why a catalogue source was rejected.
#[derive(Debug, thiserror::Error)]
pub enum CatalogueError {
    #[error("catalogue does not follow the rule schema: {0}")]
    Syntax(#[from] toml::de::Error),
    #[error("catalogue version {0:?} is not of the form YYYY.MM.N")]
    BadVersion(String),
    #[error("rule id {0:?} is not of the form area.name.vN (lowercase, digits, _)")]
    BadId(String),
    #[error("rule id {0:?} is used more than once")]
    DuplicateId(String),
    #[error("rule {rule}: description is empty")]
    EmptyDescription { rule: String },
    #[error("rule {rule}: unknown semantic code {code:?}")]
    UnknownCode { rule: String, code: String },
    #[error("rule {rule}: unknown provider {provider:?} (use a provider id or \"any\")")]
    UnknownProvider { rule: String, provider: String },
    #[error("rule {rule}: providers list is empty")]
    NoProviders { rule: String },
    #[error("rule {rule}: priority {priority} is outside 0-{MAX_PRIORITY}")]
    BadPriority { rule: String, priority: i64 },
    #[error("rule {rule}: has no [[rule.match]] alternative")]
    NoMatchers { rule: String },
    /// `number` counts the rule's alternatives as a person does: from 1.
    #[error("rule {rule}: match alternative {number} has no condition")]
    EmptyMatcher { rule: String, number: usize },
    #[error("rule {rule}: HTTP status {status} is outside 100-599")]
    BadHttpStatus { rule: String, status: i64 },
    #[error("rule {rule}: invalid regex: {source}")]
    BadRegex {
        rule: String,
        #[source]
        source: regex::Error,
    },
    #[error("rule {rule}: scope {scope:?} does not fit code {code} (out-of-scope codes need scope out_of_scope, provider codes need a provider scope)")]
    ScopeMismatch {
        rule: String,
        code: &'static str,
        scope: Scope,
    },
    #[error("the rules' text patterns are too large to scan together: {0}")]
    Prefilter(#[source] regex::Error),
    #[error("rule {rule}: timing hints are only allowed on transient/hard rules with medium or high confidence")]
    TimingNotActionable { rule: String },
    #[error("rule {rule}: `{field}` belongs in the local catalogue, not the built-in one")]
    LocalOnlyField { rule: String, field: &'static str },
}

/// Where a rule comes from: the built-in catalogue, or the user's local file.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Origin {
    #[default]
    Builtin,
    Local {
        /// The built-in rule this one replaces, said explicitly.
        overrides: Option<String>,
        /// Until a person has reviewed it, the rule is shown but fails closed.
        reviewed: bool,
    },
}

/// Which tools' output a rule understands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProviderScope {
    Any,
    Only(Vec<Provider>),
}

/// Whether a rule names a cause or only an envelope around one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// The rule recognises the failure itself.
    #[default]
    Cause,
    /// The rule recognises a wrapper ("exceeded retry limit", a gateway
    /// envelope, a bare HTTP status); any cause found inside it wins.
    Wrapper,
}

/// Where a rule may take a timing hint from; headers are always tried first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TimingSources {
    pub headers: bool,
    pub text: bool,
}

/// One alternative of a rule: every condition it states must hold.
#[derive(Debug, Clone)]
pub struct Matcher {
    pub http_status: Vec<u16>,
    /// Lowercased; compared case-insensitively with `Evidence::error_type`.
    pub error_type: Vec<String>,
    /// Lowercased header names that must all be present.
    pub header_present: Vec<String>,
    pub exit_code: Vec<i32>,
    pub phase: Vec<Phase>,
    pub text: Option<Regex>,
}

impl Matcher {
    /// True when the alternative checks a structured field, not only text.
    pub fn is_structured(&self) -> bool {
        !(self.http_status.is_empty()
            && self.error_type.is_empty()
            && self.header_present.is_empty()
            && self.exit_code.is_empty()
            && self.phase.is_empty())
    }

    /// The text pattern as written in the catalogue.
    pub fn text_pattern(&self) -> Option<&str> {
        self.text.as_ref().map(Regex::as_str)
    }
}

/// A validated, compiled catalogue rule.
#[derive(Debug, Clone)]
pub struct Rule {
    pub id: String,
    pub description: String,
    pub priority: u16,
    pub providers: ProviderScope,
    pub code: SemanticCode,
    pub confidence: Confidence,
    pub scope: Scope,
    pub role: Role,
    pub timing: TimingSources,
    pub matchers: Vec<Matcher>,
    pub origin: Origin,
}

impl Rule {
    /// A local rule nobody has reviewed yet: shown, never acted on.
    pub fn unreviewed(&self) -> bool {
        matches!(
            self.origin,
            Origin::Local {
                reviewed: false,
                ..
            }
        )
    }

    /// The class this rule's code maps to (before any confidence downgrade).
    pub fn class(&self) -> Class {
        self.code.class()
    }

    /// Whether evidence from `provider` is matched against this rule.
    /// `generic` and `simulated` evidence has no known tool, so every rule applies.
    pub fn applies_to(&self, provider: Provider) -> bool {
        match &self.providers {
            ProviderScope::Any => true,
            ProviderScope::Only(list) => provider.sees_every_rule() || list.contains(&provider),
        }
    }
}

/// A parsed and validated catalogue.
#[derive(Debug, Clone)]
pub struct Catalogue {
    pub version: String,
    pub rules: Vec<Rule>,
    pub(crate) prefilter: TextPrefilter,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CatalogueSpec {
    version: String,
    #[serde(default)]
    rule: Vec<RuleSpec>,
}

/// One rule as written in a catalogue file (built-in or local), before
/// validation. The local file adds `overrides` and `reviewed`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RuleSpec {
    pub id: String,
    pub description: String,
    pub priority: i64,
    pub providers: Vec<String>,
    pub code: String,
    pub confidence: Confidence,
    pub scope: Scope,
    #[serde(default, skip_serializing_if = "is_cause")]
    pub role: Role,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub timing: Vec<TimingSourceSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overrides: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reviewed: Option<bool>,
    #[serde(rename = "match", default)]
    pub matchers: Vec<MatcherSpec>,
}

fn is_cause(role: &Role) -> bool {
    *role == Role::Cause
}

#[derive(Debug, Deserialize, Serialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum TimingSourceSpec {
    Headers,
    Text,
}

/// One `[[rule.match]]` alternative as written.
#[derive(Debug, Clone, PartialEq, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct MatcherSpec {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub http_status: Vec<i64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub error_type: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub header_present: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exit_code: Vec<i32>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub phase: Vec<Phase>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}

impl Catalogue {
    /// Parses and validates a catalogue source (the format of `rules.toml`).
    pub fn parse(source: &str) -> Result<Catalogue, CatalogueError> {
        let spec: CatalogueSpec = toml::from_str(source)?;
        if !valid_version(&spec.version) {
            return Err(CatalogueError::BadVersion(spec.version));
        }
        let mut seen = BTreeSet::new();
        let mut rules = Vec::with_capacity(spec.rule.len());
        for rule_spec in spec.rule {
            if !seen.insert(rule_spec.id.clone()) {
                return Err(CatalogueError::DuplicateId(rule_spec.id));
            }
            let local_field = match (&rule_spec.overrides, &rule_spec.reviewed) {
                (Some(_), _) => Some("overrides"),
                (None, Some(_)) => Some("reviewed"),
                (None, None) => None,
            };
            if let Some(field) = local_field {
                return Err(CatalogueError::LocalOnlyField {
                    rule: rule_spec.id,
                    field,
                });
            }
            rules.push(compile_rule(rule_spec, Origin::Builtin)?);
        }
        Catalogue::assemble(spec.version, rules)
    }

    /// A catalogue of already validated rules, in order.
    pub(crate) fn assemble(version: String, rules: Vec<Rule>) -> Result<Catalogue, CatalogueError> {
        let prefilter = TextPrefilter::build(&rules).map_err(CatalogueError::Prefilter)?;
        Ok(Catalogue {
            version,
            rules,
            prefilter,
        })
    }
}

fn valid_version(version: &str) -> bool {
    let parts: Vec<&str> = version.split('.').collect();
    parts.len() == 3
        && parts[0].len() == 4
        && (1..=2).contains(&parts[1].len())
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

fn valid_id(id: &str) -> bool {
    let parts: Vec<&str> = id.split('.').collect();
    let word = |p: &&str| {
        !p.is_empty()
            && p.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
    };
    let version_ok = parts.last().is_some_and(|v| {
        v.len() > 1 && v.starts_with('v') && v[1..].bytes().all(|b| b.is_ascii_digit())
    });
    parts.len() >= 3 && version_ok && parts[..parts.len() - 1].iter().all(word)
}

/// Validates one rule as written and compiles it.
pub(crate) fn compile_rule(spec: RuleSpec, origin: Origin) -> Result<Rule, CatalogueError> {
    let id = spec.id;
    if !valid_id(&id) {
        return Err(CatalogueError::BadId(id));
    }
    if spec.description.trim().is_empty() {
        return Err(CatalogueError::EmptyDescription { rule: id });
    }
    let code = SemanticCode::parse(&spec.code).ok_or_else(|| CatalogueError::UnknownCode {
        rule: id.clone(),
        code: spec.code.clone(),
    })?;
    let priority = u16::try_from(spec.priority)
        .ok()
        .filter(|p| *p <= MAX_PRIORITY)
        .ok_or(CatalogueError::BadPriority {
            rule: id.clone(),
            priority: spec.priority,
        })?;
    if !scope_fits(code, spec.scope) {
        return Err(CatalogueError::ScopeMismatch {
            rule: id,
            code: code.as_str(),
            scope: spec.scope,
        });
    }
    let providers = compile_providers(&id, &spec.providers)?;
    let timing = compile_timing(&id, &spec.timing, code, spec.confidence)?;
    if spec.matchers.is_empty() {
        return Err(CatalogueError::NoMatchers { rule: id });
    }
    let matchers = spec
        .matchers
        .into_iter()
        .enumerate()
        .map(|(index, m)| compile_matcher(&id, index, m))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Rule {
        id,
        description: spec.description,
        priority,
        providers,
        code,
        confidence: spec.confidence,
        scope: spec.scope,
        role: spec.role,
        timing,
        matchers,
        origin,
    })
}

/// Out-of-scope codes live in scope `out_of_scope`; provider codes never do;
/// `unknown` is what "no rule matched" means, so no rule may assign it.
fn scope_fits(code: SemanticCode, scope: Scope) -> bool {
    let provider_scope = match scope {
        Scope::Network | Scope::Provider | Scope::Model | Scope::Account => true,
        Scope::OutOfScope | Scope::Unknown => false,
    };
    match code.class() {
        Class::Transient | Class::Hard => provider_scope,
        Class::Unclassified => code != SemanticCode::Unknown && scope == Scope::OutOfScope,
    }
}

fn compile_providers(rule: &str, names: &[String]) -> Result<ProviderScope, CatalogueError> {
    if names.is_empty() {
        return Err(CatalogueError::NoProviders {
            rule: rule.to_owned(),
        });
    }
    if names.iter().any(|n| n == "any") {
        return Ok(ProviderScope::Any);
    }
    names
        .iter()
        .map(|name| {
            serde_json::from_value::<Provider>(serde_json::Value::String(name.clone())).map_err(
                |_| CatalogueError::UnknownProvider {
                    rule: rule.to_owned(),
                    provider: name.clone(),
                },
            )
        })
        .collect::<Result<Vec<_>, _>>()
        .map(ProviderScope::Only)
}

fn compile_timing(
    rule: &str,
    sources: &[TimingSourceSpec],
    code: SemanticCode,
    confidence: Confidence,
) -> Result<TimingSources, CatalogueError> {
    let mut timing = TimingSources::default();
    for source in sources {
        match source {
            TimingSourceSpec::Headers => timing.headers = true,
            TimingSourceSpec::Text => timing.text = true,
        }
    }
    let actionable = code.class() != Class::Unclassified && confidence != Confidence::Low;
    if (timing.headers || timing.text) && !actionable {
        return Err(CatalogueError::TimingNotActionable {
            rule: rule.to_owned(),
        });
    }
    Ok(timing)
}

fn compile_matcher(rule: &str, index: usize, spec: MatcherSpec) -> Result<Matcher, CatalogueError> {
    let http_status = spec
        .http_status
        .iter()
        .map(|&status| {
            u16::try_from(status)
                .ok()
                .filter(|s| crate::evidence::HTTP_STATUS_RANGE.contains(s))
                .ok_or(CatalogueError::BadHttpStatus {
                    rule: rule.to_owned(),
                    status,
                })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let text = spec
        .text
        .map(|pattern| {
            crate::ascii_regex::compile(&pattern).map_err(|source| CatalogueError::BadRegex {
                rule: rule.to_owned(),
                source,
            })
        })
        .transpose()?;
    let matcher = Matcher {
        http_status,
        error_type: lowercase(spec.error_type),
        header_present: lowercase(spec.header_present),
        exit_code: spec.exit_code,
        phase: spec.phase,
        text,
    };
    if !matcher.is_structured() && matcher.text.is_none() {
        return Err(CatalogueError::EmptyMatcher {
            rule: rule.to_owned(),
            number: index + 1,
        });
    }
    Ok(matcher)
}

fn lowercase(values: Vec<String>) -> Vec<String> {
    values.into_iter().map(|v| v.to_ascii_lowercase()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = "version = \"2026.12.1\"\n";

    fn one_rule(body: &str) -> String {
        format!("{HEADER}[[rule]]\n{body}")
    }

    fn rule_with(overrides: &[(&str, &str)], matcher: &str) -> String {
        let mut fields = vec![
            ("id", "\"test.rule.v1\""),
            ("description", "\"a test rule\""),
            ("priority", "50"),
            ("providers", "[\"any\"]"),
            ("code", "\"rate_limited\""),
            ("confidence", "\"high\""),
            ("scope", "\"account\""),
        ];
        for (key, value) in overrides {
            match fields.iter_mut().find(|(k, _)| k == key) {
                Some(field) => field.1 = value,
                None => fields.push((key, value)),
            }
        }
        let body: String = fields.iter().map(|(k, v)| format!("{k} = {v}\n")).collect();
        one_rule(&format!("{body}{matcher}"))
    }

    const TEXT_MATCH: &str = "[[rule.match]]\ntext = 'slow down'\n";

    fn error_of(source: &str) -> String {
        Catalogue::parse(source)
            .expect_err("the catalogue must be rejected")
            .to_string()
    }

    #[test]
    fn a_minimal_rule_parses() {
        let catalogue = Catalogue::parse(&rule_with(&[], TEXT_MATCH)).expect("valid rule");
        assert_eq!(catalogue.rules.len(), 1);
        assert_eq!(
            catalogue.rules[0].role,
            Role::Cause,
            "role defaults to cause"
        );
    }

    #[test]
    fn duplicate_ids_are_rejected() {
        let rule = rule_with(&[], TEXT_MATCH);
        let twice = format!(
            "{rule}[[rule]]\n{}",
            rule.trim_start_matches(HEADER)
                .trim_start_matches("[[rule]]\n")
        );
        assert_eq!(
            error_of(&twice),
            "rule id \"test.rule.v1\" is used more than once"
        );
    }

    #[test]
    fn unknown_codes_are_rejected() {
        let source = rule_with(&[("code", "\"provider_exploded\"")], TEXT_MATCH);
        assert_eq!(
            error_of(&source),
            "rule test.rule.v1: unknown semantic code \"provider_exploded\""
        );
    }

    #[test]
    fn bad_regexes_are_rejected() {
        let source = rule_with(&[], "[[rule.match]]\ntext = 'unclosed ('\n");
        assert!(
            error_of(&source).starts_with("rule test.rule.v1: invalid regex: "),
            "regex errors name the rule"
        );
    }

    #[test]
    fn bad_priorities_are_rejected() {
        for priority in ["-1", "1001"] {
            let source = rule_with(&[("priority", priority)], TEXT_MATCH);
            assert_eq!(
                error_of(&source),
                format!("rule test.rule.v1: priority {priority} is outside 0-1000")
            );
        }
    }

    #[test]
    fn unknown_fields_are_rejected() {
        let source = rule_with(&[("colour", "\"red\"")], TEXT_MATCH);
        let message = error_of(&source);
        assert!(
            message.starts_with("catalogue does not follow the rule schema:")
                && message.contains("colour"),
            "unknown field is named: {message}"
        );
    }

    #[test]
    fn malformed_ids_and_versions_are_rejected() {
        assert_eq!(
            error_of(&rule_with(&[("id", "\"Anthropic-Overloaded\"")], TEXT_MATCH)),
            "rule id \"Anthropic-Overloaded\" is not of the form area.name.vN (lowercase, digits, _)"
        );
        let source = rule_with(&[], TEXT_MATCH).replace("2026.12.1", "latest");
        assert_eq!(
            error_of(&source),
            "catalogue version \"latest\" is not of the form YYYY.MM.N"
        );
    }

    #[test]
    fn every_remaining_validation_error_names_the_rule() {
        let cases = [
            (
                rule_with(&[("description", "\" \"")], TEXT_MATCH),
                "rule test.rule.v1: description is empty",
            ),
            (
                rule_with(&[("providers", "[\"bard\"]")], TEXT_MATCH),
                "rule test.rule.v1: unknown provider \"bard\" (use a provider id or \"any\")",
            ),
            (
                rule_with(&[("providers", "[]")], TEXT_MATCH),
                "rule test.rule.v1: providers list is empty",
            ),
            (
                rule_with(&[], ""),
                "rule test.rule.v1: has no [[rule.match]] alternative",
            ),
            (
                rule_with(&[], "[[rule.match]]\n"),
                "rule test.rule.v1: match alternative 1 has no condition",
            ),
            (
                rule_with(&[], "[[rule.match]]\nhttp_status = [999]\n"),
                "rule test.rule.v1: HTTP status 999 is outside 100-599",
            ),
            (
                rule_with(&[("scope", "\"out_of_scope\"")], TEXT_MATCH),
                "rule test.rule.v1: scope OutOfScope does not fit code rate_limited (out-of-scope codes need scope out_of_scope, provider codes need a provider scope)",
            ),
            (
                rule_with(&[("code", "\"unknown\""), ("scope", "\"unknown\"")], TEXT_MATCH),
                "rule test.rule.v1: scope Unknown does not fit code unknown (out-of-scope codes need scope out_of_scope, provider codes need a provider scope)",
            ),
            (
                rule_with(&[("confidence", "\"low\""), ("timing", "[\"headers\"]")], TEXT_MATCH),
                "rule test.rule.v1: timing hints are only allowed on transient/hard rules with medium or high confidence",
            ),
        ];
        for (source, expected) in cases {
            assert_eq!(error_of(&source), expected);
        }
    }

    #[test]
    fn ascii_classes_keep_the_meaning_of_rule_patterns() {
        let source = rule_with(
            &[],
            "[[rule.match]]\ntext = 'type\\W{1,8}overloaded_error\\b'\n",
        );
        let rule = &Catalogue::parse(&source).expect("valid").rules[0];
        let regex = rule.matchers[0].text.as_ref().expect("text");
        assert!(regex.is_match(r#"{"type":"overloaded_error"}"#));
        assert!(
            !regex.is_match(r#"{"type":"overloaded_errors"}"#),
            "the ASCII boundary still ends the word"
        );
    }

    #[test]
    fn provider_scoped_rules_apply_to_generic_evidence() {
        let source = rule_with(&[("providers", "[\"codex\"]")], TEXT_MATCH);
        let rule = &Catalogue::parse(&source).expect("valid").rules[0];
        assert!(rule.applies_to(Provider::Codex));
        assert!(
            rule.applies_to(Provider::Generic),
            "generic evidence sees every rule"
        );
        assert!(
            !rule.applies_to(Provider::ClaudeCode),
            "other tools are out of scope"
        );
    }
}
