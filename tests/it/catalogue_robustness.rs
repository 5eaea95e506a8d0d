//! Adversarial input never panics the classifier, every reported span is a
//! valid slice of the sanitized message, and the result always honours the
//! code → class table. (Throughput is measured in benches/classify.rs.)

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use proptest::prelude::*;

use recourse::catalogue::{classify, excerpt, EXCERPT_MAX_BYTES};
use recourse::classification::{Class, Classification, Confidence};
use recourse::evidence::{Evidence, Provider, RawEvidence, MAX_MESSAGE_BYTES};

const PROVIDERS: [Provider; 8] = Provider::ALL;

/// Pieces of real error texts, so generated input actually hits rules.
const FRAGMENTS: [&str; 16] = [
    "\"type\":\"overloaded_error\"",
    "Claude AI usage limit reached|1749924000",
    "You've hit your usage limit. try again in 3 days 1 hour",
    "exceeded retry limit, last status: ",
    "401 Unauthorized",
    "429 Too Many Requests",
    "Retrying in 18 seconds… (attempt 6/10)",
    "quotaId': 'GenerateRequestsPerDayPerProjectPerModel",
    "RESOURCE_EXHAUSTED",
    "Provider returned error",
    "stream disconnected before completion: ",
    "read ECONNRESET",
    "\u{1b}[31m",
    "resets 5pm (Europe/Warsaw)",
    "sk-ant-api03-AAAAAAAAAAAAAAAAAAAAAAAA",
    "{\"error\":{\"message\":\"{\\\"error\\\":",
];

fn at() -> DateTime<Utc> {
    "2026-01-15T12:00:00Z".parse().expect("valid instant")
}

fn assert_well_formed(evidence: &Evidence, result: &Classification) {
    if let Some(span) = result.matched {
        let (start, end) = (span.start as usize, span.end as usize);
        assert!(
            start <= end && end <= evidence.message.len(),
            "span inside the message"
        );
        assert!(
            evidence.message.is_char_boundary(start) && evidence.message.is_char_boundary(end),
            "span on char boundaries"
        );
    }
    let expected = match result.confidence {
        Confidence::Low => Class::Unclassified,
        Confidence::Medium | Confidence::High => result.code.class(),
    };
    assert_eq!(result.class, expected, "class follows the code table");
    if result.class == Class::Unclassified {
        assert_eq!(result.reset_at, None, "no hints on unactionable results");
    }
    assert!(excerpt(evidence, result.matched).len() <= EXCERPT_MAX_BYTES);
}

fn check(raw: RawEvidence) {
    let evidence = Evidence::from_raw(raw);
    let result = classify(&evidence, Tz::Europe__Warsaw);
    assert_well_formed(&evidence, &result);
}

proptest! {
    #[test]
    fn arbitrary_bytes_never_panic(
        provider in prop::sample::select(PROVIDERS.to_vec()),
        bytes in prop::collection::vec(any::<u8>(), 0..6000),
        status in prop::option::of(100u16..600),
        retry_after in prop::option::of(".{0,20}"),
    ) {
        let headers = retry_after.map(|v| BTreeMap::from([("retry-after".to_owned(), v)])).unwrap_or_default();
        check(RawEvidence::new(provider, bytes, at()).with_http_status(status).with_headers(headers));
    }

    #[test]
    fn shuffled_real_fragments_never_panic(
        provider in prop::sample::select(PROVIDERS.to_vec()),
        parts in prop::collection::vec((prop::sample::select(FRAGMENTS.to_vec()), "[ \n:{}\"\\\\|·⎿]{0,3}"), 0..40),
    ) {
        let text: String = parts.iter().map(|(f, sep)| format!("{f}{sep}")).collect();
        check(RawEvidence::new(provider, text, at()));
    }
}

#[test]
fn huge_repetitive_input_is_bounded_before_matching() {
    let huge = "overloaded_error ".repeat(1 << 20);
    let evidence = Evidence::from_raw(RawEvidence::new(Provider::Generic, huge, at()));
    assert!(
        evidence.message.len() <= MAX_MESSAGE_BYTES,
        "the matcher only ever sees bounded text"
    );
    assert_well_formed(&evidence, &classify(&evidence, Tz::UTC));
}

#[test]
fn deeply_nested_json_is_just_text() {
    let nested = format!(
        "{}\"type\":\"overloaded_error\"{}",
        "{\"error\":".repeat(2000),
        "}".repeat(2000)
    );
    let evidence = Evidence::from_raw(RawEvidence::new(Provider::Generic, nested, at()));
    assert_well_formed(&evidence, &classify(&evidence, Tz::UTC));
}

#[test]
fn invalid_utf8_and_terminal_escapes_are_tolerated() {
    let mut bytes = b"\x1b[1;31mAPI Error: 529 {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\"}}\x1b[0m ".to_vec();
    bytes.extend_from_slice(&[0xff, 0xfe, 0xc3, 0x28, b'\n']);
    let evidence = Evidence::from_raw(RawEvidence::new(Provider::ClaudeCode, bytes, at()));
    let result = classify(&evidence, Tz::UTC);
    assert_well_formed(&evidence, &result);
    assert_eq!(
        result.code.as_str(),
        "provider_overloaded",
        "escapes do not hide the error"
    );
}
