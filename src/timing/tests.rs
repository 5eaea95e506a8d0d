use super::*;

use chrono_tz::Tz;

fn at(rfc3339: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(rfc3339)
        .expect("test instant is valid RFC 3339")
        .with_timezone(&Utc)
}

fn text_hint(text: &str, occurred: &str) -> Option<TimingHint> {
    hint_from_text(text, at(occurred), Tz::UTC)
}

fn reset_of(text: &str, occurred: &str, local_tz: Tz) -> Option<(DateTime<Utc>, HintSource)> {
    hint_from_text(text, at(occurred), local_tz).map(|h| (h.reset_at, h.source))
}

fn headers(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

// ------------------------------------------------------------ epoch

#[test]
fn claude_code_epoch_suffix_is_the_reset_instant() {
    let text = "Claude AI usage limit reached|1749924000";
    let hint = text_hint(text, "2025-06-14T17:56:06Z").expect("epoch hint");
    assert_eq!(hint.reset_at, at("2025-06-14T18:00:00Z"));
    assert_eq!(hint.source, HintSource::EpochSuffix);
    assert_eq!(
        hint.retry_after_s, None,
        "absolute hints carry no relative delay"
    );
    let span = hint.span.expect("text hints carry a span");
    assert_eq!(&text[span.start as usize..span.end as usize], "|1749924000");
}

#[test]
fn epoch_in_the_past_is_not_trusted() {
    let text = "Claude AI usage limit reached|1749924000";
    assert_eq!(text_hint(text, "2025-06-14T22:00:00Z"), None);
}

#[test]
fn epoch_equal_to_occurred_at_is_not_trusted() {
    let text = "Claude AI usage limit reached|1749924000";
    assert_eq!(
        text_hint(text, "2025-06-14T18:00:00Z"),
        None,
        "reset must be strictly after"
    );
}

#[test]
fn epoch_more_than_thirty_days_away_is_not_trusted() {
    let text = "Claude AI usage limit reached|1749924000";
    assert_eq!(text_hint(text, "2025-05-14T17:59:59Z"), None);
    assert!(
        text_hint(text, "2025-05-15T18:00:00Z").is_some(),
        "exactly 30 days is trusted"
    );
}

#[test]
fn codex_backend_resets_at_field_beats_resets_in_seconds() {
    let text = r#"{"error":{"type":"usage_limit_reached","message":"The usage limit has been reached","plan_type":"free","resets_at":1775317531,"resets_in_seconds":602705}}"#;
    let occurred = DateTime::from_timestamp(1775317531 - 602705, 0).expect("in range");
    let hint = hint_from_text(text, occurred, Tz::UTC).expect("field hint");
    assert_eq!(hint.source, HintSource::EpochField);
    assert_eq!(
        hint.reset_at,
        DateTime::from_timestamp(1775317531, 0).expect("in range")
    );
}

#[test]
fn resets_in_seconds_field_alone_is_relative() {
    let text = r#"{"resets_in_seconds": 602705}"#;
    let hint = text_hint(text, "2026-03-28T12:00:00Z").expect("relative field");
    assert_eq!(hint.source, HintSource::ResetsInField);
    assert_eq!(hint.retry_after_s, Some(602705.0));
}

// ------------------------------------------------------------ RFC 3339

#[test]
fn rfc3339_after_reset_keyword_is_a_hint() {
    let hint = text_hint(
        "rate limit resets at 2025-06-14T18:30:00Z",
        "2025-06-14T18:00:00Z",
    )
    .expect("rfc3339 hint");
    assert_eq!(hint.reset_at, at("2025-06-14T18:30:00Z"));
    assert_eq!(hint.source, HintSource::Rfc3339);
}

#[test]
fn rfc3339_with_offset_is_converted_to_utc() {
    let (reset, _) = reset_of(
        "retry after 2025-06-14 20:30:00+02:00",
        "2025-06-14T18:00:00Z",
        Tz::UTC,
    )
    .expect("offset timestamp");
    assert_eq!(reset, at("2025-06-14T18:30:00Z"));
}

#[test]
fn bare_log_timestamp_is_not_a_reset_hint() {
    let text = r#"{"error":"Error: 429","timestamp":"2025-06-14T18:30:00.833Z"}"#;
    assert_eq!(text_hint(text, "2025-06-14T18:00:00Z"), None);
}

// ------------------------------------------------------------ clock time with zone

#[test]
fn claude_clock_time_with_zone_resolves_in_that_zone() {
    let text = "Claude usage limit reached. Your limit will reset at 5pm (Europe/Warsaw).";
    let hint = text_hint(text, "2025-08-19T14:08:25Z").expect("zoned clock hint");
    assert_eq!(
        hint.reset_at,
        at("2025-08-19T15:00:00Z"),
        "17:00 CEST is 15:00 UTC"
    );
    assert_eq!(hint.source, HintSource::ClockTimeZone);
}

#[test]
fn zoned_clock_time_ignores_the_local_zone() {
    let text = "You've hit your limit · resets 5:30am (America/New_York)";
    let (reset, source) =
        reset_of(text, "2025-11-03T12:00:00Z", chrono_tz::Asia::Tokyo).expect("zoned hint");
    assert_eq!(reset, at("2025-11-04T10:30:00Z"), "05:30 EST next morning");
    assert_eq!(source, HintSource::ClockTimeZone);
}

#[test]
fn twenty_four_hour_clock_with_bare_zone_name() {
    let (reset, _) = reset_of(
        "limit will reset at 17:00 Europe/Warsaw",
        "2025-01-10T08:00:00Z",
        Tz::UTC,
    )
    .expect("24h clock");
    assert_eq!(reset, at("2025-01-10T16:00:00Z"), "17:00 CET is 16:00 UTC");
}

#[test]
fn session_limit_banner_with_minutes_and_zone() {
    let (reset, _) = reset_of(
        "You've hit your session limit · resets 8:30pm (Asia/Tokyo)",
        "2026-07-13T06:00:00Z",
        Tz::UTC,
    )
    .expect("session banner");
    assert_eq!(reset, at("2026-07-13T11:30:00Z"));
}

#[test]
fn etc_gmt_zone_uses_posix_sign_convention() {
    let (reset, _) = reset_of(
        "Your limit will reset at 1pm (Etc/GMT+5).",
        "2025-06-14T17:56:06Z",
        Tz::UTC,
    )
    .expect("Etc zone");
    assert_eq!(reset, at("2025-06-14T18:00:00Z"), "Etc/GMT+5 is UTC-5");
}

#[test]
fn unknown_zone_name_yields_no_hint_rather_than_a_guess() {
    let text = "Your limit will reset at 5pm (Mars/Olympus_Mons).";
    assert_eq!(
        hint_from_text(text, at("2025-06-14T10:00:00Z"), chrono_tz::Europe::Warsaw),
        None
    );
}

#[test]
fn clock_time_already_passed_today_means_tomorrow() {
    let (reset, _) =
        reset_of("resets 10am (Asia/Seoul)", "2025-12-01T04:32:07Z", Tz::UTC).expect("next day");
    assert_eq!(
        reset,
        at("2025-12-02T01:00:00Z"),
        "13:32 KST is after 10am, so next day 10am"
    );
}

#[test]
fn month_day_and_zone_resolve_to_that_date() {
    let (reset, _) = reset_of(
        "Current week (Sonnet only) Resets Jan 12, 10:59am (America/New_York)",
        "2026-01-07T14:12:38Z",
        Tz::UTC,
    )
    .expect("dated clock");
    assert_eq!(reset, at("2026-01-12T15:59:00Z"));
}

#[test]
fn midnight_and_noon_am_pm() {
    let (midnight, _) = reset_of(
        "limit will reset at 12am (UTC)",
        "2025-07-15T20:00:00Z",
        Tz::UTC,
    )
    .expect("12am");
    assert_eq!(midnight, at("2025-07-16T00:00:00Z"));
    let (noon, _) = reset_of(
        "limit will reset at 12pm (UTC)",
        "2025-07-15T08:00:00Z",
        Tz::UTC,
    )
    .expect("12pm");
    assert_eq!(noon, at("2025-07-15T12:00:00Z"));
}

#[test]
fn impossible_clock_times_yield_no_hint() {
    for text in [
        "resets 13pm (UTC)",
        "resets 25:00 (UTC)",
        "resets 10:75 (UTC)",
        "resets 0am (UTC)",
    ] {
        assert_eq!(text_hint(text, "2025-07-15T08:00:00Z"), None, "{text}");
    }
}

// ------------------------------------------------------------ DST

#[test]
fn nonexistent_spring_forward_time_moves_past_the_gap() {
    // Europe/Warsaw 2025-03-30: 02:00 CET jumps to 03:00 CEST.
    let (reset, _) = reset_of(
        "resets 2:30am (Europe/Warsaw)",
        "2025-03-30T00:10:00Z",
        Tz::UTC,
    )
    .expect("gap time still resolves");
    assert_eq!(
        reset,
        at("2025-03-30T01:30:00Z"),
        "02:30 in the gap is read as 03:30 CEST"
    );
}

#[test]
fn ambiguous_fall_back_time_takes_the_first_future_occurrence() {
    // Europe/Warsaw 2025-10-26: 03:00 CEST falls back to 02:00 CET; 02:30 happens twice.
    let (first, _) = reset_of(
        "resets 2:30am (Europe/Warsaw)",
        "2025-10-26T00:10:00Z",
        Tz::UTC,
    )
    .expect("ambiguous time");
    assert_eq!(first, at("2025-10-26T00:30:00Z"), "02:30 CEST comes first");
    let (second, _) = reset_of(
        "resets 2:30am (Europe/Warsaw)",
        "2025-10-26T00:45:00Z",
        Tz::UTC,
    )
    .expect("second occurrence");
    assert_eq!(
        second,
        at("2025-10-26T01:30:00Z"),
        "after 02:30 CEST, 02:30 CET is next"
    );
}

#[test]
fn clock_time_across_the_dst_change_uses_the_new_offset() {
    let (reset, _) = reset_of(
        "resets 5pm (Europe/Warsaw)",
        "2025-03-29T20:00:00Z",
        Tz::UTC,
    )
    .expect("across DST");
    assert_eq!(
        reset,
        at("2025-03-30T15:00:00Z"),
        "17:00 CEST on the day summer time starts"
    );
}

#[test]
fn local_clock_time_in_a_dst_gap_does_not_panic() {
    let hint = reset_of(
        "resets at 2:15am",
        "2025-03-30T00:30:00Z",
        chrono_tz::Europe::Warsaw,
    )
    .expect("local gap time");
    assert_eq!(
        hint,
        (at("2025-03-30T01:15:00Z"), HintSource::ClockTimeLocal)
    );
}

// ------------------------------------------------------------ clock time without zone

#[test]
fn local_clock_time_uses_the_given_zone() {
    let (reset, source) = reset_of(
        "You've hit your limit for Claude messages. Limits will reset at 9:30 AM.",
        "2026-07-22T00:00:00Z",
        chrono_tz::Asia::Kolkata,
    )
    .expect("local clock");
    assert_eq!(reset, at("2026-07-22T04:00:00Z"), "09:30 IST is 04:00 UTC");
    assert_eq!(source, HintSource::ClockTimeLocal);
}

#[test]
fn local_clock_time_passed_today_means_tomorrow() {
    let (reset, _) = reset_of(
        "Claude usage limit reached. Your limit will reset at 12am.",
        "2025-07-15T10:00:00Z",
        Tz::UTC,
    )
    .expect("next midnight");
    assert_eq!(reset, at("2025-07-16T00:00:00Z"));
}

#[test]
fn month_day_without_zone_or_year_is_the_next_such_date() {
    let (reset, _) = reset_of(
        "You've hit your weekly limit · resets Sep 15 at 7pm",
        "2026-09-08T10:00:00Z",
        chrono_tz::America::Chicago,
    )
    .expect("dated local clock");
    assert_eq!(reset, at("2026-09-16T00:00:00Z"), "19:00 CDT");
}

#[test]
fn codex_try_again_at_full_date_is_read_locally() {
    let (reset, source) = reset_of(
        "You've hit your usage limit. Upgrade to Plus to continue using Codex (https://chatgpt.com/[path]), or try again at Jul 5th, 2026 8:19 PM.",
        "2026-06-10T12:00:00Z",
        Tz::UTC,
    )
    .expect("dated codex hint");
    assert_eq!(reset, at("2026-07-05T20:19:00Z"));
    assert_eq!(source, HintSource::ClockTimeLocal);
}

#[test]
fn explicit_year_in_the_past_is_not_moved_forward() {
    let text = "try again at Jan 5th, 2025 8:19 PM.";
    assert_eq!(text_hint(text, "2026-01-01T00:00:00Z"), None);
}

// ------------------------------------------------------------ relative

fn relative_seconds(text: &str) -> Option<f64> {
    let hint = text_hint(text, "2025-09-03T12:00:00Z")?;
    assert_eq!(hint.source, HintSource::Relative, "{text}");
    Some(hint.retry_after_s.expect("relative hints keep their delay"))
}

#[test]
fn relative_phrases_from_real_tools() {
    let cases: [(&str, f64); 10] = [
        ("resets in 4hr 19min", 4.0 * 3600.0 + 19.0 * 60.0),
        (
            "You've hit your usage limit. Try again in 3 days 1 hour 4 minutes.",
            3.0 * 86400.0 + 3600.0 + 240.0,
        ),
        ("Please retry in 12.5s.", 12.5),
        ("retry after 30 seconds", 30.0),
        ("Rate limit reached. Try again in 6m0s.", 360.0),
        ("usage resets in 1 hour 30 minutes", 5400.0),
        ("try again in 2 days 3 hours", 2.0 * 86400.0 + 3.0 * 3600.0),
        (
            "or try again in 5 days 22 hours 11\nminutes.",
            5.0 * 86400.0 + 22.0 * 3600.0 + 660.0,
        ),
        ("Please try again in 20ms.", 0.02),
        ("please wait 1 hour and 5 minutes", 3900.0),
    ];
    for (text, expected) in cases {
        assert_eq!(relative_seconds(text), Some(expected), "{text}");
    }
}

#[test]
fn relative_hint_resolves_against_occurred_at() {
    let hint = text_hint("try again in 4hr 19min", "2025-09-03T12:00:00Z").expect("relative");
    assert_eq!(hint.reset_at, at("2025-09-03T16:19:00Z"));
}

#[test]
fn progress_lines_are_not_reset_hints() {
    for text in [
        "Retrying in 18s (attempt 6/10)",
        "⎿ API Error (529 Overloaded) · Retrying in 18 seconds… (attempt 6/10)",
        "retry in 5s (attempt 2/5)",
        "Retrying in 2m",
    ] {
        assert_eq!(text_hint(text, "2025-09-03T12:00:00Z"), None, "{text}");
    }
}

#[test]
fn a_real_hint_after_a_progress_line_is_still_found() {
    let text = "Retrying in 18s (attempt 6/10)\nerror: usage limit reached, try again in 4 minutes";
    assert_eq!(relative_seconds(text), Some(240.0));
}

#[test]
fn numbers_without_time_units_are_not_durations() {
    for text in [
        "retry 3 times",
        "try again in 5",
        "resets in 4 quarters",
        "wait 10",
    ] {
        assert_eq!(text_hint(text, "2025-09-03T12:00:00Z"), None, "{text}");
    }
}

#[test]
fn relative_hint_beyond_thirty_days_is_not_trusted() {
    assert_eq!(
        text_hint("try again in 31 days", "2025-09-03T12:00:00Z"),
        None
    );
    assert_eq!(
        text_hint("try again in 0 seconds", "2025-09-03T12:00:00Z"),
        None,
        "not in the future"
    );
}

#[test]
fn gemini_retry_delay_field() {
    let text = r#"{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"38s"}]}}"#;
    let hint = text_hint(text, "2025-09-03T12:00:00Z").expect("retryDelay");
    assert_eq!(hint.source, HintSource::RetryDelayField);
    assert_eq!(hint.retry_after_s, Some(38.0));
    let fractional = r#"'retryDelay': '45.837906927s'"#;
    let hint = text_hint(fractional, "2025-09-03T12:00:00Z").expect("fractional retryDelay");
    assert_eq!(hint.retry_after_s, Some(45.837906927));
}

#[test]
fn gemini_retry_delay_inside_an_escaped_json_string_is_a_hint() {
    // Gemini CLI and gateways relay the Google error body as a JSON string
    // inside their own JSON, so every quote arrives as \".
    let text = r#"{"error":{"message":"{\n  \"error\": {\n    \"code\": 429,\n    \"details\": [{\"@type\": \"type.googleapis.com/google.rpc.RetryInfo\", \"retryDelay\": \"49s\"}]}}"}}"#;
    let hint = text_hint(text, "2025-09-03T12:00:00Z").expect("escaped retryDelay");
    assert_eq!(hint.source, HintSource::RetryDelayField);
    assert_eq!(hint.retry_after_s, Some(49.0));
}

#[test]
fn epoch_suffix_wins_over_clock_text_in_the_same_message() {
    let text = "Claude usage limit reached. Your limit will reset at 5pm (Europe/Warsaw).\nClaude AI usage limit reached|1749924000";
    let hint = text_hint(text, "2025-06-14T17:56:06Z").expect("hint");
    assert_eq!(hint.source, HintSource::EpochSuffix);
}

#[test]
fn text_without_timing_yields_none() {
    for text in [
        "",
        "Error: 529 {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}",
        "stream disconnected before completion",
        "resets",
    ] {
        assert_eq!(text_hint(text, "2025-09-03T12:00:00Z"), None, "{text}");
    }
}

// ------------------------------------------------------------ headers

#[test]
fn retry_after_seconds_header() {
    let hint = hint_from_headers(
        &headers(&[("retry-after", "30")]),
        at("2025-09-03T12:00:00Z"),
    )
    .expect("retry-after");
    assert_eq!(hint.source, HintSource::RetryAfterHeader);
    assert_eq!(hint.retry_after_s, Some(30.0));
    assert_eq!(hint.reset_at, at("2025-09-03T12:00:30Z"));
    assert_eq!(hint.span, None, "header hints have no text span");
}

#[test]
fn header_names_are_case_insensitive() {
    let hint = hint_from_headers(
        &headers(&[("Retry-After", " 12 ")]),
        at("2025-09-03T12:00:00Z"),
    );
    assert_eq!(hint.map(|h| h.retry_after_s), Some(Some(12.0)));
}

#[test]
fn retry_after_http_date_header() {
    let hint = hint_from_headers(
        &headers(&[("retry-after", "Wed, 21 Oct 2015 07:28:00 GMT")]),
        at("2015-10-21T07:27:00Z"),
    )
    .expect("http-date");
    assert_eq!(hint.source, HintSource::HttpDate);
    assert_eq!(hint.reset_at, at("2015-10-21T07:28:00Z"));
    assert_eq!(hint.retry_after_s, None);
}

#[test]
fn retry_after_ms_takes_precedence() {
    let hint = hint_from_headers(
        &headers(&[("retry-after", "2"), ("retry-after-ms", "1500")]),
        at("2025-09-03T12:00:00Z"),
    )
    .expect("ms");
    assert_eq!(hint.source, HintSource::RetryAfterMsHeader);
    assert_eq!(hint.retry_after_s, Some(1.5));
}

#[test]
fn untrusted_retry_after_values_yield_none() {
    for value in ["0", "-5", "soon", "86400000", "NaN", "inf", ""] {
        let hint = hint_from_headers(
            &headers(&[("retry-after", value)]),
            at("2025-09-03T12:00:00Z"),
        );
        assert_eq!(hint, None, "retry-after: {value:?}");
    }
}

#[test]
fn anthropic_reset_of_the_exhausted_bucket_wins() {
    let hint = hint_from_headers(
        &headers(&[
            ("anthropic-ratelimit-requests-remaining", "12"),
            ("anthropic-ratelimit-requests-reset", "2025-09-03T12:00:05Z"),
            ("anthropic-ratelimit-output-tokens-remaining", "0"),
            (
                "anthropic-ratelimit-output-tokens-reset",
                "2025-09-03T12:00:40Z",
            ),
            ("anthropic-ratelimit-input-tokens-remaining", "0"),
            (
                "anthropic-ratelimit-input-tokens-reset",
                "2025-09-03T12:00:20Z",
            ),
        ]),
        at("2025-09-03T12:00:00Z"),
    )
    .expect("anthropic reset");
    assert_eq!(hint.source, HintSource::AnthropicResetHeader);
    assert_eq!(
        hint.reset_at,
        at("2025-09-03T12:00:40Z"),
        "latest of the exhausted buckets"
    );
}

#[test]
fn anthropic_reset_without_remaining_info_takes_the_latest() {
    let hint = hint_from_headers(
        &headers(&[
            ("anthropic-ratelimit-requests-reset", "2025-09-03T12:00:05Z"),
            ("anthropic-ratelimit-tokens-reset", "2025-09-03T12:01:00Z"),
            ("anthropic-ratelimit-unified-reset", "garbage"),
        ]),
        at("2025-09-03T12:00:00Z"),
    )
    .expect("anthropic reset");
    assert_eq!(hint.reset_at, at("2025-09-03T12:01:00Z"));
}

#[test]
fn anthropic_unified_reset_in_epoch_seconds() {
    let hint = hint_from_headers(
        &headers(&[("anthropic-ratelimit-unified-reset", "1749924000")]),
        at("2025-06-14T17:00:00Z"),
    )
    .expect("epoch reset header");
    assert_eq!(hint.reset_at, at("2025-06-14T18:00:00Z"));
}

#[test]
fn retry_after_beats_anthropic_reset_headers() {
    let hint = hint_from_headers(
        &headers(&[
            ("retry-after", "7"),
            ("anthropic-ratelimit-requests-reset", "2025-09-03T12:01:00Z"),
        ]),
        at("2025-09-03T12:00:00Z"),
    )
    .expect("hint");
    assert_eq!(hint.source, HintSource::RetryAfterHeader);
}

#[test]
fn openai_reset_durations() {
    let hint = hint_from_headers(
        &headers(&[
            ("x-ratelimit-remaining-requests", "59"),
            ("x-ratelimit-reset-requests", "1s"),
            ("x-ratelimit-remaining-tokens", "0"),
            ("x-ratelimit-reset-tokens", "6m0s"),
        ]),
        at("2025-09-03T12:00:00Z"),
    )
    .expect("openai reset");
    assert_eq!(hint.source, HintSource::RateLimitResetHeader);
    assert_eq!(
        hint.retry_after_s,
        Some(360.0),
        "the exhausted token bucket decides"
    );
}

#[test]
fn openai_millisecond_and_fractional_durations() {
    for (value, seconds) in [("20ms", 0.02), ("8.64s", 8.64), ("1h2m3s", 3723.0)] {
        let hint = hint_from_headers(
            &headers(&[("x-ratelimit-reset-requests", value)]),
            at("2025-09-03T12:00:00Z"),
        );
        assert_eq!(
            hint.map(|h| h.retry_after_s),
            Some(Some(seconds)),
            "{value}"
        );
    }
}

#[test]
fn openai_duration_with_trailing_garbage_is_rejected() {
    let hint = hint_from_headers(
        &headers(&[("x-ratelimit-reset-requests", "6m0sx")]),
        at("2025-09-03T12:00:00Z"),
    );
    assert_eq!(hint, None);
}

#[test]
fn no_timing_headers_yields_none() {
    let hint = hint_from_headers(
        &headers(&[("x-should-retry", "true"), ("content-type", "json")]),
        at("2025-09-03T12:00:00Z"),
    );
    assert_eq!(hint, None);
}

#[test]
fn trust_window_is_exclusive_below_and_inclusive_above() {
    let now = at("2025-09-03T12:00:00Z");
    assert!(!is_trusted(now, now), "equal instant is not in the future");
    assert!(
        is_trusted(now + MAX_TRUSTED_HINT, now),
        "the bound itself is trusted"
    );
    assert!(!is_trusted(
        now + MAX_TRUSTED_HINT + TimeDelta::seconds(1),
        now
    ));
}

#[test]
fn hint_sources_have_distinct_names() {
    let all = [
        HintSource::RetryAfterHeader,
        HintSource::HttpDate,
        HintSource::RetryAfterMsHeader,
        HintSource::AnthropicResetHeader,
        HintSource::RateLimitResetHeader,
        HintSource::EpochSuffix,
        HintSource::EpochField,
        HintSource::Rfc3339,
        HintSource::ClockTimeZone,
        HintSource::ClockTimeLocal,
        HintSource::RetryDelayField,
        HintSource::ResetsInField,
        HintSource::Relative,
    ];
    for source in all {
        let json = serde_json::to_string(&source).expect("serializes");
        assert_eq!(
            json,
            format!("\"{}\"", source.as_str()),
            "serde name and as_str agree"
        );
    }
}
