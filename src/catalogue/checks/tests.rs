use super::*;
use crate::catalogue::builtin;
use crate::catalogue::bundled::{builtin_fixtures, negative_corpus};
use crate::catalogue::local::LocalFile;
use crate::catalogue::propose::RuleDraft;
use crate::evidence::{Provider, RawEvidence};

fn draft(pattern: &str) -> RuleDraft {
    RuleDraft {
        id: "local.test.rule.v1".into(),
        description: "a test rule".into(),
        providers: Vec::new(),
        code: SemanticCode::ProviderUnavailable,
        priority: 78,
        pattern: pattern.into(),
        overrides: None,
    }
}

fn checks_of(draft: &RuleDraft, samples: &[Sample]) -> RuleChecks {
    let proposed = LocalFile::default()
        .with_rule(draft.to_spec(true))
        .merge(builtin())
        .unwrap();
    let rule = proposed.rules.iter().find(|r| r.id == draft.id).unwrap();
    check_rule(
        builtin(),
        &proposed,
        rule,
        samples,
        builtin_fixtures(),
        negative_corpus(),
        Tz::UTC,
    )
}

fn sample(label: &str, message: &str) -> Sample {
    Sample {
        label: label.into(),
        evidence: Evidence::from_raw(RawEvidence::new(
            Provider::Generic,
            message,
            chrono::DateTime::UNIX_EPOCH,
        )),
    }
}

#[test]
fn impact_lists_what_the_rule_now_classifies_before_and_after() {
    let samples = [
        sample("route 1 attempt 1", "the flux capacitor is out of sync"),
        sample("route 2 attempt 1", "something else entirely"),
    ];
    let checks = checks_of(&draft("flux capacitor is out of sync"), &samples);
    assert_eq!(checks.samples_checked, 2);
    assert_eq!(checks.impact.len(), 1, "only the matching sample changes");
    let change = &checks.impact[0];
    assert_eq!(change.name, "route 1 attempt 1");
    assert_eq!(change.before.class, Class::Unclassified);
    assert_eq!(change.after.class, Class::Transient);
    assert_eq!(change.after.rule_id.as_deref(), Some("local.test.rule.v1"));
    assert!(checks.broadness.is_empty(), "{:?}", checks.broadness);
    assert!(checks.changed_fixtures.is_empty());
}

#[test]
fn a_rule_that_changes_a_fixture_lists_it_and_needs_confirmation() {
    // "overloaded_error" decides many built-in fixtures at a lower priority.
    let mut d = draft(r#"type":"overloaded_error"#);
    d.code = SemanticCode::ProviderUnavailable;
    d.priority = 999;
    let checks = checks_of(&d, &[]);
    assert!(!checks.changed_fixtures.is_empty());
    let first = checks.changed_fixtures[0].name.clone();
    let reasons = checks.unconfirmed(&[]);
    assert_eq!(reasons.len(), checks.changed_fixtures.len());
    assert!(
        reasons[0].starts_with(&format!("fixture {first} changes from ")),
        "{}",
        reasons[0]
    );
    assert!(reasons[0].ends_with(": confirm it by name to save anyway"));
    let all: Vec<String> = checks
        .changed_fixtures
        .iter()
        .map(|c| c.name.clone())
        .collect();
    assert!(
        checks.unconfirmed(&all).is_empty(),
        "confirming every one clears the refusal"
    );
}

#[test]
fn a_pattern_with_little_fixed_text_is_too_broad() {
    let checks = checks_of(&draft(r"(?i)gizmo\w+"), &[]);
    assert_eq!(
        checks.broadness,
        ["the pattern of alternative 1 has only 5 characters of fixed text; at least 8, so it cannot match ordinary output by chance"]
    );
}

#[test]
fn a_pattern_matching_ordinary_output_names_the_text() {
    // Codex prints this warning on a successful run.
    let checks = checks_of(&draft("not found. Defaulting to fallback"), &[]);
    assert_eq!(checks.broadness.len(), 1, "{:?}", checks.broadness);
    assert!(
        checks.broadness[0].starts_with(
            "the rule matches ordinary text from fixtures/agents/recorded/codex-0.171.0/ok/stdout"
        ),
        "{}",
        checks.broadness[0]
    );
    assert!(checks.broadness[0].ends_with("\"not found. Defaulting to fallback\""));
}

#[test]
fn long_and_complex_patterns_are_refused() {
    let long = "a".repeat(MAX_PATTERN_CHARS + 1);
    assert_eq!(
        checks_of(&draft(&long), &[]).broadness[0],
        "the pattern of alternative 1 is 301 characters long; at most 300",
        "alternatives are counted as a person counts them"
    );
    let complex = r"gizmo jammed [a-z]{1,1000}[0-9]{1,1000}";
    assert_eq!(
        checks_of(&draft(complex), &[]).broadness[0],
        "the pattern of alternative 1 is too complex (repetitions and classes compile past 64 KiB)"
    );
}

#[test]
fn fixed_text_is_counted_through_case_folding_and_groups() {
    assert_eq!(required_literal_chars("(?i)gizmo jammed"), 12);
    assert_eq!(required_literal_chars(r"gizmo (?:a|bc) jammed"), 7);
    assert_eq!(required_literal_chars(r"ab\d+cdefgh"), 6);
    assert_eq!(required_literal_chars(r"(?:x)?abc"), 3);
    assert_eq!(required_literal_chars(r"\bflux\b capacitor"), 14);
}

#[test]
fn a_status_only_alternative_is_too_broad_but_an_error_type_is_exact() {
    assert!(checks_of(&draft("gizmo service jammed"), &[])
        .broadness
        .is_empty());
    let source = "revision = 1\n[[rule]]\nid = \"local.s.only.v1\"\ndescription = \"d\"\npriority = 78\nproviders = [\"any\"]\ncode = \"provider_unavailable\"\nconfidence = \"medium\"\nscope = \"provider\"\n[[rule.match]]\nhttp_status = [503]\n[[rule.match]]\nerror_type = [\"gizmo_jammed\"]\n";
    let proposed = LocalFile::parse(source).unwrap().merge(builtin()).unwrap();
    let rule = proposed
        .rules
        .iter()
        .find(|r| r.id == "local.s.only.v1")
        .unwrap();
    assert_eq!(
        broadness(rule, &[]),
        ["match alternative 1 checks only a status, header, exit code or phase; give it a text pattern or a provider error_type"]
    );
}

#[test]
fn progress_lines_in_negative_fixtures_do_not_count_as_matches() {
    // The built-in overload rule's own text appears on a retry line of a
    // negative fixture; the catalogue ignores it there, so the check does.
    let checks = checks_of(&draft(r#"type":"overloaded_error"#), &[]);
    assert!(
        checks
            .broadness
            .iter()
            .all(|r| !r.contains("progress_line_only")),
        "{:?}",
        checks.broadness
    );
}
