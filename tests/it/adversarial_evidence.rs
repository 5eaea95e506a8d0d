//! Stable-Rust stand-in for the fuzzers in `fuzz/`: adversarial inputs must
//! complete with bounded output. No timing assertions (speed belongs in
//! benchmarks); a pathological regression shows up as a hung test.

use std::collections::BTreeMap;

use chrono::{DateTime, TimeZone, Utc};
use proptest::prelude::*;
use recourse::evidence::{
    sanitize, Evidence, Provider, RawEvidence, MAX_FIELD_BYTES, MAX_MESSAGE_BYTES,
};
use recourse::timing::{hint_from_headers, hint_from_text};

fn occurred() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2025, 6, 14, 17, 56, 6).unwrap()
}

/// Runs an input through every entry point and checks the bounds.
fn exercise(message: Vec<u8>) -> Evidence {
    let lossy = String::from_utf8_lossy(&message).into_owned();
    let evidence = Evidence::from_raw(RawEvidence::new(Provider::Generic, message, occurred()));
    assert!(
        evidence.message.len() <= MAX_MESSAGE_BYTES,
        "message bounded, got {} bytes",
        evidence.message.len()
    );
    let _ = hint_from_text(&evidence.message, occurred(), chrono_tz::Europe::Warsaw);
    let _ = hint_from_text(&lossy, occurred(), chrono_tz::Europe::Warsaw);
    evidence
}

#[test]
fn one_mebibyte_single_line_completes_bounded() {
    let evidence = exercise(b"a".repeat(1 << 20));
    assert!(evidence.truncated, "a 1 MiB line is truncated");
}

#[test]
fn one_mebibyte_of_base64_ish_run_is_redacted_and_bounded() {
    let evidence = exercise(b"Ab3+/".repeat(220_000));
    assert!(
        !evidence.message.contains("Ab3+/Ab3+/Ab3+/Ab3+/"),
        "long runs never survive"
    );
}

#[test]
fn invalid_utf8_everywhere_completes_bounded() {
    let bytes: Vec<u8> = (0..300_000u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8 | 0x80)
        .collect();
    exercise(bytes);
}

#[test]
fn ansi_escape_storm_is_stripped() {
    let mut bytes = Vec::new();
    for i in 0..100_000 {
        bytes.extend_from_slice(format!("\x1b[{};{}m\x1b]0;t\x07\r", i % 97, i % 13).as_bytes());
    }
    bytes.extend_from_slice(b"overloaded_error");
    let evidence = exercise(bytes);
    assert!(
        !evidence.message.contains('\u{1b}'),
        "no escape byte survives"
    );
    assert!(
        evidence.message.ends_with("overloaded_error"),
        "text after the storm is kept"
    );
}

#[test]
fn unterminated_escape_swallowing_the_input_completes() {
    let mut bytes = b"\x1b]".to_vec();
    bytes.extend(b"x".repeat(500_000));
    exercise(bytes);
}

#[test]
fn deeply_nested_json_completes_bounded() {
    let depth = 200_000;
    let mut text = "{\"error\":".repeat(depth);
    text.push_str("\"retryDelay\": \"38s\"");
    text.push_str(&"}".repeat(depth));
    exercise(text.into_bytes());
}

#[test]
fn repeated_near_matches_complete() {
    let near_misses = [
        "Retrying in 18s (attempt 6/10) ",
        "resets 13pm (Europe/Warsaw) ",
        "try again in 5 quarters ",
        "limit reached|17499 ",
        "resets Feb 30, 25:99am (Mars/Base) ",
        "Bearer short ",
        "sk-ant- ",
        "https:// ",
        "/home/ ",
        "eyJhbGciOi. ",
        "api_key= ",
        "retryDelay: \"",
        "resets_at: 17 ",
        "--password ",
        "password is ",
        "DB_PASSWORD=",
        "\\\"password\\\":\\\"\\\\",
        "%22password%22%3A",
        "ghp_abcdefgh\n",
        "Bearer abcdefghijk ",
        "-----BEGIN PRIVATE KEY-----\nAAAA\n",
        "AAAA\n-----END PRIVATE KEY-----\n",
        "https:\\/\\/u:p@h\\/",
        "\\/home\\/",
    ];
    for near in near_misses {
        let text = near.repeat(100_000);
        exercise(text.as_bytes().to_vec());
        assert_eq!(
            hint_from_text(&text, occurred(), chrono_tz::UTC),
            None,
            "{near}"
        );
    }
}

#[test]
fn sanitize_on_huge_unbounded_input_completes() {
    let text =
        "user@example.com sk-ant-api03-0123456789abcdef /home/u/x https://h/p?q=1 ".repeat(20_000);
    let out = sanitize(&text);
    assert!(!out.contains("example.com"), "emails redacted throughout");
}

#[test]
fn huge_headers_are_bounded() {
    let input =
        RawEvidence::new(Provider::Generic, "429", occurred()).with_headers(BTreeMap::from([
            ("retry-after".into(), "9".repeat(1 << 20)),
            ("x-ratelimit-reset-tokens".into(), "1m".repeat(100_000)),
        ]));
    let evidence = Evidence::from_raw(input.clone());
    assert!(evidence
        .headers
        .values()
        .all(|v| v.len() <= MAX_FIELD_BYTES));
    assert_eq!(
        hint_from_headers(&input.headers, occurred()),
        None,
        "absurd values are not trusted"
    );
}

proptest! {
    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..20_000)) {
        exercise(bytes);
    }

    #[test]
    fn arbitrary_text_never_panics_in_hint_extraction(
        text in "[0-9a-zA-Z :./|()\\-\n]{0,300}",
        offset_s in -4_000_000_000i64..4_000_000_000i64,
    ) {
        let at = DateTime::from_timestamp(offset_s, 0).expect("in range");
        if let Some(hint) = hint_from_text(&text, at, chrono_tz::America::New_York) {
            prop_assert!(hint.reset_at > at, "hints are always in the future");
        }
    }

    #[test]
    fn arbitrary_headers_never_panic(
        name in "(retry-after|retry-after-ms|anthropic-ratelimit-[a-z]{1,8}-reset|x-ratelimit-reset-[a-z]{1,8})",
        value in "\\PC{0,40}",
    ) {
        let headers = BTreeMap::from([(name, value)]);
        if let Some(hint) = hint_from_headers(&headers, occurred()) {
            prop_assert!(hint.reset_at > occurred());
        }
    }
}
