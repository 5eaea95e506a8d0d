//! Behaviour of selection, hints and export, on small synthetic catalogues
//! where the rule set is part of the test, and on the built-in catalogue.

use chrono::{DateTime, TimeDelta, Utc};
use chrono_tz::Tz;

use super::*;
use crate::classification::{Class, Confidence, SemanticCode};
use crate::evidence::{Evidence, Provider, RawEvidence};

fn at() -> DateTime<Utc> {
    "2026-01-15T12:00:00Z".parse().expect("valid instant")
}

fn evidence(message: &str) -> Evidence {
    evidence_with(message, None, &[])
}

fn evidence_with(message: &str, status: Option<u16>, headers: &[(&str, &str)]) -> Evidence {
    let headers = headers
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    Evidence::from_raw(
        RawEvidence::new(Provider::Generic, message, at())
            .with_http_status(status)
            .with_headers(headers),
    )
}

/// A catalogue of `rules`, each `(id, priority, code, confidence, scope, role, match)`.
fn catalogue(rules: &[(&str, u16, &str, &str, &str, &str, &str)]) -> Catalogue {
    let mut source = String::from("version = \"2026.1.1\"\n");
    for (id, priority, code, confidence, scope, role, matcher) in rules {
        source.push_str(&format!(
            "[[rule]]\nid = \"{id}\"\ndescription = \"{id}\"\npriority = {priority}\nproviders = [\"any\"]\ncode = \"{code}\"\nconfidence = \"{confidence}\"\nscope = \"{scope}\"\nrole = \"{role}\"\n[[rule.match]]\n{matcher}\n"
        ));
    }
    Catalogue::parse(&source).expect("test catalogue is valid")
}

#[test]
fn builtin_catalogue_is_valid_and_carries_its_version() {
    let parsed = Catalogue::parse(RULES_TOML).expect("rules.toml validates");
    assert_eq!(
        parsed.version, CATALOGUE_VERSION,
        "rules.toml and the constant agree"
    );
    assert_eq!(rules().len(), parsed.rules.len());
    let unknown = classify(&evidence("nothing to see"), Tz::UTC);
    assert_eq!(
        unknown.catalogue_version, CATALOGUE_VERSION,
        "even unknown results are stamped"
    );
}

#[test]
fn class_always_comes_from_the_code_table_unless_confidence_is_low() {
    for text in [
        "API Error: Repeated 529 Overloaded errors",
        "Credit balance is too low",
        "exceeded retry limit",
    ] {
        let result = classify(&evidence(text), Tz::UTC);
        let expected = match result.confidence {
            Confidence::Low => Class::Unclassified,
            Confidence::Medium | Confidence::High => result.code.class(),
        };
        assert_eq!(result.class, expected, "{text}");
    }
}

#[test]
fn equal_priority_with_different_classes_is_an_unclassified_conflict() {
    let c = catalogue(&[
        (
            "t.throttle.v1",
            50,
            "rate_limited",
            "high",
            "account",
            "cause",
            "text = 'alpha'",
        ),
        (
            "t.quota.v1",
            50,
            "quota_exhausted",
            "high",
            "account",
            "cause",
            "text = 'beta'",
        ),
    ]);
    let result = c.classify(&evidence("alpha then beta"), Tz::UTC);
    assert_eq!(result.code, SemanticCode::Unknown);
    assert_eq!(result.class, Class::Unclassified);
    assert_eq!(result.rule_id, None, "no single rule decided");
    // The synthetic rules' descriptions are their ids.
    assert!(
        result
            .explanation
            .contains("“t.throttle.v1” (Rate limited (too many requests), transient)")
            && result
                .explanation
                .contains("“t.quota.v1” (Quota used up, hard)"),
        "the explanation names both rules and their codes in words: {}",
        result.explanation
    );
}

#[test]
fn equal_priority_with_the_same_class_takes_the_first_rule_in_the_catalogue() {
    let c = catalogue(&[
        (
            "t.first.v1",
            50,
            "provider_overloaded",
            "high",
            "provider",
            "cause",
            "text = 'beta'",
        ),
        (
            "t.second.v1",
            50,
            "rate_limited",
            "high",
            "account",
            "cause",
            "text = 'alpha'",
        ),
    ]);
    let result = c.classify(&evidence("alpha beta"), Tz::UTC);
    assert_eq!(
        result.rule_id.as_deref(),
        Some("t.first.v1"),
        "catalogue order, not text order"
    );
    assert_eq!(result.class, Class::Transient);
}

#[test]
fn higher_priority_wins_over_earlier_text() {
    let c = catalogue(&[
        (
            "t.low.v1",
            10,
            "rate_limited",
            "high",
            "account",
            "cause",
            "text = 'alpha'",
        ),
        (
            "t.high.v1",
            90,
            "usage_limit_reached",
            "high",
            "account",
            "cause",
            "text = 'beta'",
        ),
    ]);
    let result = c.classify(&evidence("alpha beta"), Tz::UTC);
    assert_eq!(result.rule_id.as_deref(), Some("t.high.v1"));
    assert_eq!(result.class, Class::Hard);
}

#[test]
fn structured_match_beats_text_match_at_equal_priority() {
    let c = catalogue(&[
        (
            "t.text.v1",
            50,
            "usage_limit_reached",
            "high",
            "account",
            "cause",
            "text = 'alpha'",
        ),
        (
            "t.status.v1",
            50,
            "rate_limited",
            "high",
            "account",
            "cause",
            "http_status = [429]",
        ),
    ]);
    let result = c.classify(&evidence_with("alpha", Some(429), &[]), Tz::UTC);
    assert_eq!(
        result.rule_id.as_deref(),
        Some("t.status.v1"),
        "structured evidence beats prose"
    );
}

#[test]
fn a_cause_inside_a_wrapper_wins_but_a_cause_before_it_does_not_unwrap_it() {
    let c = catalogue(&[
        (
            "t.wrapper.v1",
            60,
            "provider_unavailable",
            "medium",
            "provider",
            "wrapper",
            "text = 'gave up'",
        ),
        (
            "t.cause.v1",
            40,
            "auth_invalid",
            "high",
            "account",
            "cause",
            "text = '401'",
        ),
    ]);
    let inner = c.classify(&evidence("gave up, last status: 401"), Tz::UTC);
    assert_eq!(
        inner.rule_id.as_deref(),
        Some("t.cause.v1"),
        "innermost cause wins despite lower priority"
    );
    let before = c.classify(&evidence("401 earlier; later we gave up"), Tz::UTC);
    assert_eq!(
        before.rule_id.as_deref(),
        Some("t.wrapper.v1"),
        "a cause outside the wrapper leaves it to priority"
    );
}

#[test]
fn a_low_confidence_match_keeps_its_code_but_is_unclassified() {
    let c = catalogue(&[(
        "t.vague.v1",
        50,
        "provider_unavailable",
        "low",
        "provider",
        "cause",
        "text = 'hmm'",
    )]);
    let result = c.classify(
        &evidence_with("hmm", None, &[("retry-after", "30")]),
        Tz::UTC,
    );
    assert_eq!(result.code, SemanticCode::ProviderUnavailable);
    assert_eq!(result.class, Class::Unclassified);
    assert_eq!(
        result.reset_at, None,
        "no hint is attached to unactionable results"
    );
}

#[test]
fn header_hint_is_preferred_to_a_hint_in_the_text() {
    let result = classify(
        &evidence_with(
            "429 Too Many Requests: try again in 5 minutes",
            Some(429),
            &[("retry-after", "10")],
        ),
        Tz::UTC,
    );
    assert_eq!(result.rule_id.as_deref(), Some("status_text.429.v1"));
    assert_eq!(
        result.reset_at,
        Some(at() + TimeDelta::seconds(10)),
        "headers first, then text"
    );
}

#[test]
fn text_hint_is_read_from_the_matched_line_on() {
    let text = "earlier: try again in 2 minutes\nYou've hit your usage limit. Upgrade to Pro or try again in 3 days 1 hour.";
    let mut e = evidence(text);
    e.provider = Provider::Codex;
    let result = classify(&e, Tz::UTC);
    assert_eq!(result.code, SemanticCode::UsageLimitReached);
    assert_eq!(
        result.reset_at,
        Some(at() + TimeDelta::days(3) + TimeDelta::hours(1)),
        "the hint after the match, not the earlier unrelated one"
    );
}

#[test]
fn provider_scoped_rules_do_not_fire_for_other_tools() {
    let mut e = evidence("Selected model is at capacity. Please try a different model.");
    e.provider = Provider::ClaudeCode;
    assert_eq!(
        classify(&e, Tz::UTC).code,
        SemanticCode::Unknown,
        "a Codex text from another tool is not trusted"
    );
    e.provider = Provider::Codex;
    assert_eq!(classify(&e, Tz::UTC).code, SemanticCode::ModelCapacity);
}

#[test]
fn classification_is_deterministic() {
    let e = evidence("litellm.RateLimitError: AnthropicException - {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\"}}");
    assert_eq!(classify(&e, Tz::UTC), classify(&e, Tz::UTC));
}

#[test]
fn the_explanation_leads_with_the_rules_words_not_its_id_or_priority() {
    let e =
        evidence("API Error: 529 {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\"}}");
    let result = classify(&e, Tz::UTC);
    let id = result.rule_id.clone().expect("a rule decided");
    let rule = builtin()
        .rules
        .iter()
        .find(|r| r.id == id)
        .expect("the rule is built in");
    let description = crate::profile::words::capitalized(&rule.description);
    assert!(
        result
            .explanation
            .starts_with(&format!("{description}. The text \"")),
        "a person reads what the rule is about first: {}",
        result.explanation
    );
    assert!(
        result
            .explanation
            .contains(&format!("“{}” is transient", result.code.words())),
        "the code in words: {}",
        result.explanation
    );
    // The id and priority are in the classification and the list of matches.
    assert!(
        !result.explanation.contains(&id) && !result.explanation.contains("priority"),
        "{}",
        result.explanation
    );
}

#[test]
fn explain_reports_every_match_and_its_fate() {
    let e = evidence("exceeded retry limit, last status: 401 Unauthorized");
    let explanation = explain(&e, Tz::UTC);
    let fates: Vec<(&str, MatchOutcome)> = explanation
        .matches
        .iter()
        .map(|m| (m.rule_id.as_str(), m.outcome))
        .collect();
    assert_eq!(
        fates,
        vec![
            ("status_text.401.v1", MatchOutcome::Selected),
            ("codex.retry_limit.v1", MatchOutcome::Wrapped),
        ]
    );
}

#[test]
fn excerpt_starts_at_the_matched_line_and_is_bounded() {
    let long_tail = "x".repeat(3000);
    let text = format!("noise line\nAPI Error: Repeated 529 Overloaded errors {long_tail}");
    let e = evidence(&text);
    let result = classify(&e, Tz::UTC);
    let shown = excerpt(&e, result.matched);
    assert!(
        shown.starts_with("API Error: Repeated 529"),
        "starts at the matched line: {shown:.40}"
    );
    assert!(
        shown.len() <= EXCERPT_MAX_BYTES,
        "bounded to {EXCERPT_MAX_BYTES} bytes"
    );
}

#[test]
fn exported_fixture_parses_and_reproduces_the_classification() {
    let e = evidence(
        "Authorization: Bearer sk-ant-api03-secretsecretsecret1234\nSomething odd happened",
    );
    let result = classify(&e, Tz::UTC);
    let exported = fixture_from_evidence(&e, &result);
    assert!(
        !exported.contains("secretsecretsecret"),
        "only sanitized text is exported"
    );
    let fixture = Fixture::parse(&exported).expect("the export follows the fixture schema");
    assert_eq!(
        fixture.kind,
        FixtureKind::Negative,
        "unclassified evidence exports as a negative case"
    );
    assert_eq!(
        fixture.check(),
        Vec::<String>::new(),
        "the exported case passes as exported"
    );
}

#[test]
fn fixture_checks_report_every_difference() {
    let source = r#"
description = "deliberately wrong"
source = "test"
kind = "positive"
[input]
provider = "generic"
message = "Credit balance is too low"
[expect]
code = "rate_limited"
class = "transient"
rule_id = "some.other.v1"
"#;
    let problems = Fixture::parse(source).expect("valid schema").check();
    let fields: Vec<&str> = problems
        .iter()
        .filter_map(|p| p.split(':').next())
        .collect();
    assert_eq!(
        fields,
        vec!["code", "class", "rule_id", "explanation"],
        "{problems:?}"
    );
}

#[test]
fn fixture_kind_must_agree_with_its_expectation() {
    let problems = problems_of("negative", "credit_balance_low", "hard", "");
    assert_eq!(
        problems,
        vec!["kind = negative needs expect.class = unclassified".to_owned()]
    );
}

#[test]
fn fixture_schema_errors_are_reported() {
    let unknown_field = "description = \"x\"\nsource = \"y\"\nkind = \"positive\"\ncolour = \"red\"\n[input]\nprovider = \"generic\"\nmessage = \"m\"\n[expect]\ncode = \"unknown\"\nclass = \"unclassified\"\n";
    let error = Fixture::parse(unknown_field)
        .expect_err("unknown fields are rejected")
        .to_string();
    assert!(
        error.starts_with("fixture does not follow the schema:") && error.contains("colour"),
        "{error}"
    );
    let bad_zone = unknown_field.replace("colour = \"red\"\n", "").replace(
        "message = \"m\"",
        "message = \"m\"\nlocal_tz = \"Mars/Olympus\"",
    );
    let error = Fixture::parse(&bad_zone)
        .expect_err("unknown zones are rejected")
        .to_string();
    assert_eq!(
        error,
        "input.local_tz \"Mars/Olympus\" is not an IANA time zone"
    );
}

#[test]
fn redaction_checks_catch_a_secret_missing_from_the_input() {
    let problems = problems_of(
        "redaction",
        "credit_balance_low",
        "hard",
        "excerpt_must_not_contain = [\"sk-ant-nothere\"]\n",
    );
    assert_eq!(
        problems,
        vec!["excerpt_must_not_contain \"sk-ant-nothere\" is not in input.message, so the case proves nothing".to_owned()]
    );
}

fn problems_of(kind: &str, code: &str, class: &str, extra: &str) -> Vec<String> {
    let source = format!(
        "description = \"d\"\nsource = \"s\"\nkind = \"{kind}\"\n[input]\nprovider = \"generic\"\nmessage = \"Credit balance is too low\"\n[expect]\ncode = \"{code}\"\nclass = \"{class}\"\n{extra}"
    );
    Fixture::parse(&source).expect("valid schema").check()
}

#[test]
fn every_fixture_consistency_message_is_reachable() {
    assert_eq!(
        problems_of(
            "positive",
            "unknown",
            "unclassified",
            "rule_id = \"none\"\n"
        )[0],
        "kind = positive needs an actionable expect.class (transient or hard)"
    );
    assert_eq!(
        problems_of("redaction", "credit_balance_low", "hard", "")[0],
        "kind = redaction needs expect.excerpt_must_not_contain"
    );
    assert_eq!(
        problems_of("correlation", "credit_balance_low", "transient", "")[0],
        "expect.class transient contradicts expect.code credit_balance_low (class hard)"
    );
}

#[test]
fn a_secret_the_sanitizer_misses_is_reported_as_a_leak() {
    let problems = problems_of(
        "redaction",
        "credit_balance_low",
        "hard",
        "excerpt_must_not_contain = [\"balance\"]\n",
    );
    assert_eq!(
        problems,
        vec![
            "secret \"balance\" leaked into the excerpt".to_owned(),
            "secret \"balance\" leaked into the sanitized message".to_owned(),
            "secret \"balance\" leaked into the classification".to_owned(),
        ],
        "a plain word is not redacted, so the check must fire in every place"
    );
}

// ─── Throttle or quota: the short-throttle bound ─────────────────────────────

fn gemini(message: &str) -> Evidence {
    let mut e = evidence_with(message, Some(429), &[]);
    e.provider = Provider::Gemini;
    e
}

/// Gemini's free-tier 429 as clients print it when the QuotaFailure details
/// are cut off: the quota sentence and RESOURCE_EXHAUSTED tie at equal
/// priority (continuedev/continue#10719, shortened).
fn gemini_free_tier_429(retry: &str) -> String {
    format!(
        "{{\"error\":{{\"message\":\"{{\\n  \\\"error\\\": {{\\n    \\\"code\\\": 429,\\n    \\\"message\\\": \\\"You exceeded your current quota, please check your plan and billing details. {retry}\\\",\\n    \\\"status\\\": \\\"RESOURCE_EXHAUSTED\\\"\\n  }}\\n}}\\n\"}}}}"
    )
}

#[test]
fn a_429_whose_retry_after_is_a_week_away_is_a_quota_not_a_throttle() {
    let result = classify(
        &evidence_with("Too Many Requests", Some(429), &[("retry-after", "604800")]),
        Tz::UTC,
    );
    assert_eq!(
        result.code,
        SemanticCode::QuotaExhausted,
        "{}",
        result.explanation
    );
    assert_eq!(result.class, Class::Hard);
    assert_eq!(
        result.rule_id.as_deref(),
        Some("http.429.v1"),
        "the rule that matched is still named"
    );
    assert_eq!(
        result.reset_at,
        Some(at() + TimeDelta::days(7)),
        "the reset is kept for the hard policy's reset wait"
    );
    assert!(
        result.explanation.contains("15-minute"),
        "the explanation names the bound: {}",
        result.explanation
    );
}

#[test]
fn a_reset_at_the_short_throttle_bound_is_still_a_throttle() {
    let at_bound = classify(
        &evidence_with("Too Many Requests", Some(429), &[("retry-after", "900")]),
        Tz::UTC,
    );
    assert_eq!(
        at_bound.code,
        SemanticCode::RateLimited,
        "15 min is inside the bound"
    );
    let past_bound = classify(
        &evidence_with("Too Many Requests", Some(429), &[("retry-after", "901")]),
        Tz::UTC,
    );
    assert_eq!(
        past_bound.code,
        SemanticCode::QuotaExhausted,
        "one second past it is not"
    );
}

#[test]
fn the_bound_is_measured_from_occurred_at_not_from_the_clock() {
    let occurred: DateTime<Utc> = "2020-03-01T00:00:00Z".parse().expect("valid instant");
    let at_time = |date: &str| {
        let mut e = evidence_with("Too Many Requests", Some(429), &[("retry-after", date)]);
        e.occurred_at = occurred;
        classify(&e, Tz::UTC)
    };
    // Both dates are years in the past for any clock: only occurred_at can
    // make them hints at all.
    let short = at_time("Sun, 01 Mar 2020 00:10:00 GMT");
    assert_eq!(short.code, SemanticCode::RateLimited);
    assert_eq!(short.reset_at, Some(occurred + TimeDelta::minutes(10)));
    let long = at_time("Sun, 01 Mar 2020 05:00:00 GMT");
    assert_eq!(long.code, SemanticCode::QuotaExhausted);
}

#[test]
fn a_long_wait_in_the_text_of_a_throttle_makes_it_a_quota() {
    let mut e = evidence(
        "Rate limit reached for gpt-4o in organization org-abc on tokens per min (TPM): Limit 30000, Used 30000, Requested 1. Please try again in 4h19m12s.",
    );
    e.provider = Provider::OpenaiApi;
    let result = classify(&e, Tz::UTC);
    assert_eq!(
        result.code,
        SemanticCode::QuotaExhausted,
        "a per-minute name with a four-hour wait is a window: {}",
        result.explanation
    );
}

#[test]
fn a_per_minute_throttle_with_a_short_wait_stays_transient() {
    let mut e = evidence(
        "Rate limit reached for default-gpt-3.5-turbo in organization org-x on requests per min. Limit: 3 / min. Please try again in 20s.",
    );
    e.provider = Provider::OpenaiApi;
    let result = classify(&e, Tz::UTC);
    assert_eq!(result.code, SemanticCode::RateLimited);
    assert_eq!(result.retry_after_s, Some(20.0));
}

#[test]
fn a_per_day_window_named_in_words_is_a_quota_even_with_a_short_wait() {
    let mut e = evidence(
        "Rate limit reached for default-gpt-3.5-turbo in organization org-x on requests per day. Limit: 200 / day. Please try again in 7m12s.",
    );
    e.provider = Provider::OpenaiApi;
    let result = classify(&e, Tz::UTC);
    assert_eq!(
        result.code,
        SemanticCode::QuotaExhausted,
        "{}",
        result.explanation
    );
    assert_eq!(result.rule_id.as_deref(), Some("quota.daily_window.v1"));
}

#[test]
fn a_gemini_quota_and_throttle_tie_is_settled_by_a_short_retry_hint() {
    let result = classify(
        &gemini(&gemini_free_tier_429("Please retry in 33.736914924s.")),
        Tz::UTC,
    );
    assert_eq!(
        result.code,
        SemanticCode::RateLimited,
        "{}",
        result.explanation
    );
    assert_eq!(result.class, Class::Transient);
    assert_eq!(
        result.rule_id.as_deref(),
        Some("gemini.resource_exhausted.v1")
    );
    assert_eq!(result.retry_after_s, Some(33.736914924));
    let outweighed = builtin()
        .rules
        .iter()
        .find(|r| r.id == "quota.exceeded_current_quota.v1")
        .expect("the rule is built in");
    assert!(
        result
            .explanation
            .contains(&format!("tied with “{}”", outweighed.description)),
        "the explanation names the rule the hint outweighed, in its words: {}",
        result.explanation
    );
}

#[test]
fn a_gemini_quota_and_throttle_tie_with_a_reset_past_the_bound_is_a_quota() {
    let result = classify(
        &gemini(&gemini_free_tier_429("Please retry in 3h.")),
        Tz::UTC,
    );
    assert_eq!(
        result.code,
        SemanticCode::QuotaExhausted,
        "{}",
        result.explanation
    );
    assert_eq!(result.class, Class::Hard);
    assert_eq!(result.reset_at, Some(at() + TimeDelta::hours(3)));
}

#[test]
fn a_gemini_quota_and_throttle_tie_without_a_hint_stays_unclassified() {
    let result = classify(&gemini(&gemini_free_tier_429("")), Tz::UTC);
    assert_eq!(
        result.class,
        Class::Unclassified,
        "nothing tells the window apart, so it fails closed"
    );
}

#[test]
fn a_long_hint_never_turns_a_non_throttle_into_a_quota() {
    let result = classify(
        &evidence_with(
            "503 Service Unavailable",
            Some(503),
            &[("retry-after", "7200")],
        ),
        Tz::UTC,
    );
    assert_eq!(
        result.code,
        SemanticCode::ProviderUnavailable,
        "the bound separates throttles from quotas only"
    );
}
