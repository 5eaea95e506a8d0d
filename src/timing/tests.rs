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
fn a_clock_time_in_a_spring_forward_gap_is_refused() {
    // Europe/Warsaw 2025-03-30: 02:00 CET jumps to 03:00 CEST; 02:30 never happens.
    assert_eq!(
        reset_of(
            "resets 2:30am (Europe/Warsaw)",
            "2025-03-30T00:10:00Z",
            Tz::UTC
        ),
        None,
        "no instant shows 02:30: the hint is refused, not moved"
    );
}

#[test]
fn a_gap_that_has_passed_rolls_to_the_next_day() {
    // After the gap, the next 02:30 is the following day's.
    let (reset, _) = reset_of(
        "resets 2:30am (Europe/Warsaw)",
        "2025-03-30T10:00:00Z",
        Tz::UTC,
    )
    .expect("next day's 02:30 exists");
    assert_eq!(reset, at("2025-03-31T00:30:00Z"));
}

#[test]
fn gaps_that_are_not_an_hour_long_are_refused_too() {
    // Lord Howe springs forward 30 minutes (02:00 → 02:30 on 2025-10-05);
    // Troll two hours (01:00 UTC → 03:00 local on 2025-03-30).
    assert_eq!(
        reset_of(
            "resets 2:15am (Australia/Lord_Howe)",
            "2025-10-04T14:00:00Z",
            Tz::UTC
        ),
        None
    );
    assert_eq!(
        reset_of(
            "resets 2:00am (Antarctica/Troll)",
            "2025-03-29T23:00:00Z",
            Tz::UTC
        ),
        None
    );
    let (after, _) = reset_of(
        "resets 2:45am (Australia/Lord_Howe)",
        "2025-10-04T14:00:00Z",
        Tz::UTC,
    )
    .expect("02:45 exists after the 30-minute gap");
    assert_eq!(
        after,
        at("2025-10-04T15:45:00Z"),
        "02:45 at UTC+11 is 15:45 UTC"
    );
}

#[test]
fn a_wall_time_repeated_by_fall_back_is_refused_while_both_are_ahead() {
    // Europe/Warsaw 2025-10-26: 03:00 CEST falls back to 02:00 CET; 02:30 happens twice.
    assert_eq!(
        reset_of(
            "resets 2:30am (Europe/Warsaw)",
            "2025-10-26T00:10:00Z",
            Tz::UTC
        ),
        None,
        "02:30 CEST or 02:30 CET: which one the provider meant is unknown"
    );
    let (second, _) = reset_of(
        "resets 2:30am (Europe/Warsaw)",
        "2025-10-26T00:45:00Z",
        Tz::UTC,
    )
    .expect("only one 02:30 is still ahead");
    assert_eq!(
        second,
        at("2025-10-26T01:30:00Z"),
        "after 02:30 CEST, 02:30 CET is the only one left"
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
fn local_clock_time_in_a_dst_gap_is_refused() {
    assert_eq!(
        reset_of(
            "resets at 2:15am",
            "2025-03-30T00:30:00Z",
            chrono_tz::Europe::Warsaw
        ),
        None
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

// ------------------------------------------------------------ stated offsets and dates

#[test]
fn gmt_offset_is_read_as_that_offset_not_as_gmt() {
    // Gemini CLI 0.33 (gemini-cli#22643): 10:57 PM at UTC-3 is 01:57 UTC.
    let (reset, source) = reset_of(
        "Usage limit reached for gemini-3-flash-preview. Access resets at 10:57 PM GMT-3.",
        "2026-03-16T21:00:00Z",
        Tz::UTC,
    )
    .expect("offset clock");
    assert_eq!(reset, at("2026-03-17T01:57:00Z"));
    assert_eq!(source, HintSource::ClockTimeZone);
}

#[test]
fn numeric_and_half_hour_offsets() {
    for (text, want) in [
        (
            "try again at Sep 27th, 2026 3:09 PM -04:30",
            "2026-09-27T19:39:00Z",
        ),
        ("resets at 9:15 UTC+5:30", "2026-09-21T03:45:00Z"),
        ("resets at 11pm GMT+1", "2026-09-21T22:00:00Z"),
    ] {
        let (reset, _) = reset_of(text, "2026-09-21T00:00:00Z", Tz::UTC).expect(text);
        assert_eq!(reset, at(want), "{text}");
    }
}

#[test]
fn offsets_beyond_fourteen_hours_are_refused() {
    for text in [
        "try again at Sep 27th, 2026 3:09 PM +15:00",
        "try again at Sep 27th, 2026 3:09 PM +14:01",
        "resets at 9pm GMT-3:75",
    ] {
        assert_eq!(text_hint(text, "2026-08-01T00:00:00Z"), None, "{text}");
    }
}

#[test]
fn iso_date_at_clock_time_in_utc() {
    // Anthropic's spend limit (claude-code#2127), wrapped by the terminal.
    let (reset, source) = reset_of(
        "You will regain access on 2025-07-01 at\n    00:00 UTC.",
        "2025-06-16T01:47:32Z",
        Tz::UTC,
    )
    .expect("ISO date");
    assert_eq!(reset, at("2025-07-01T00:00:00Z"));
    assert_eq!(source, HintSource::ClockTimeZone);
}

#[test]
fn an_absolute_instant_wins_over_relative_delays_in_the_same_body() {
    // Cloud Code's QUOTA_EXHAUSTED body (decolua/9router#789) names the
    // reset three ways; the timestamp is exact, the delays are rounded.
    let text = r#""message": "You have exhausted your capacity on this model. Your quota will reset after 25h20m26s.", "quotaResetDelay": "25h20m26.179915352s", "quotaResetTimeStamp": "2026-04-28T09:06:26Z" } }, { "@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "91226.179915352s" }"#;
    let hint = text_hint(text, "2026-04-27T07:46:00Z").expect("timestamp");
    assert_eq!(hint.reset_at, at("2026-04-28T09:06:26Z"));
    assert_eq!(hint.source, HintSource::Rfc3339);
}

#[test]
fn the_zone_of_a_tz_variable() {
    assert_eq!(
        zone_of_tz_var(Some("Asia/Tokyo")),
        Some(chrono_tz::Asia::Tokyo)
    );
    assert_eq!(
        zone_of_tz_var(Some(":America/Los_Angeles")),
        Some(chrono_tz::America::Los_Angeles),
        "POSIX allows a leading colon"
    );
    assert_eq!(
        zone_of_tz_var(Some("")),
        Some(Tz::UTC),
        "set but empty is UTC for libc"
    );
    assert_eq!(
        zone_of_tz_var(Some("Mars/Olympus")),
        Some(Tz::UTC),
        "an unknown zone makes the agent print UTC, so it is read as UTC"
    );
    assert_eq!(zone_of_tz_var(None), None, "unset: ask the next source");
}

#[test]
fn the_candidates_tz_decides_the_zone_of_its_clock_times() {
    let env: BTreeMap<String, String> = [("TZ".to_string(), "Asia/Tokyo".to_string())].into();
    let tz = agent_local_tz(Some(&env));
    assert_eq!(tz, chrono_tz::Asia::Tokyo);
    let (reset, _) = reset_of(
        "You've hit your usage limit. try again at 5:30 PM.",
        "2026-02-10T00:00:00Z",
        tz,
    )
    .expect("local clock");
    assert_eq!(
        reset,
        at("2026-02-10T08:30:00Z"),
        "17:30 in Tokyo, not in the machine's zone"
    );
}

// ------------------------------------------------------------ DST oracle
//
// The zone-aware reader is checked against an oracle that never converts
// local time to UTC: it steps through UTC in 15-minute steps (every offset
// and every transition in use is a multiple of 15 minutes) and reads the
// wall clock. Quick in the test command; the dense sweep is
// `cargo test --release --lib timing::tests::dst_oracle_dense -- --ignored`.

/// Zones with unusual transitions: 30-minute (Lord Howe) and 2-hour (Troll)
/// gaps, negative DST (Dublin), midnight changes (Havana), half- and
/// quarter-hour offsets, southern hemisphere, and zones without DST.
const ORACLE_ZONES: [Tz; 21] = [
    chrono_tz::Europe::Warsaw,
    chrono_tz::Europe::London,
    chrono_tz::Europe::Dublin,
    chrono_tz::Europe::Helsinki,
    chrono_tz::America::New_York,
    chrono_tz::America::Los_Angeles,
    chrono_tz::America::St_Johns,
    chrono_tz::America::Havana,
    chrono_tz::America::Santiago,
    chrono_tz::America::Sao_Paulo,
    chrono_tz::America::Nuuk,
    chrono_tz::Australia::Sydney,
    chrono_tz::Australia::Adelaide,
    chrono_tz::Australia::Lord_Howe,
    chrono_tz::Pacific::Auckland,
    chrono_tz::Pacific::Chatham,
    chrono_tz::Antarctica::Troll,
    chrono_tz::Asia::Kathmandu,
    chrono_tz::Asia::Kolkata,
    chrono_tz::Africa::Casablanca,
    chrono_tz::Asia::Tehran,
];

const STEP: TimeDelta = TimeDelta::minutes(15);

fn wall(tz: Tz, t: DateTime<Utc>) -> NaiveDateTime {
    t.with_timezone(&tz).naive_local()
}

/// UTC instants in 2025–2026 where `tz`'s offset changes.
fn transitions(tz: Tz) -> Vec<DateTime<Utc>> {
    let mut t = at("2025-01-01T00:00:00Z");
    let end = at("2027-01-01T00:00:00Z");
    let offset = |t: DateTime<Utc>| wall(tz, t) - t.naive_utc();
    let mut found = Vec::new();
    while t < end {
        let next = t + STEP;
        if offset(next) != offset(t) {
            found.push(next);
        }
        t = next;
    }
    found
}

/// Every UTC step within a day of the wall time `target` that shows it.
fn instants_showing(tz: Tz, target: NaiveDateTime) -> Vec<DateTime<Utc>> {
    let guess = target.and_utc();
    let mut t = guess - TimeDelta::hours(30);
    let mut hits = Vec::new();
    while t <= guess + TimeDelta::hours(30) {
        if wall(tz, t) == target {
            hits.push(t);
        }
        t += STEP;
    }
    hits
}

/// What "resets HH:MM (zone)" seen at `occurred_at` must give: the first
/// day whose wall time is still ahead decides; no instant there (a gap) or
/// two ahead (a fold) refuses the hint.
fn oracle(tz: Tz, occurred_at: DateTime<Utc>, time: NaiveTime) -> Option<DateTime<Utc>> {
    let today = wall(tz, occurred_at).date();
    for offset in 0..3 {
        let target = (today + Days::new(offset)).and_time(time);
        let hits = instants_showing(tz, target);
        let ahead: Vec<_> = hits.iter().filter(|t| **t > occurred_at).collect();
        match (hits.len(), ahead.len()) {
            (0, _) if target > wall(tz, occurred_at) => return None,
            (_, 1) => return Some(*ahead[0]),
            (_, 0) => continue,
            _ => return None,
        }
    }
    None
}

/// Runs the reader against the oracle for clock times `times` around each
/// transition of each zone, seen at `occurred` offsets from it; returns the
/// number of cases and the disagreements.
fn run_oracle(times: &[NaiveTime], occurred: &[TimeDelta]) -> (usize, Vec<String>) {
    let mut cases = 0;
    let mut wrong = Vec::new();
    for tz in ORACLE_ZONES {
        for transition in transitions(tz) {
            for before in occurred {
                let occurred_at = transition + *before;
                for time in times {
                    cases += 1;
                    let text = format!("resets {} ({})", time.format("%H:%M"), tz.name());
                    let got = hint_from_text(&text, occurred_at, Tz::UTC).map(|h| h.reset_at);
                    let want = oracle(tz, occurred_at, *time);
                    if got != want {
                        wrong.push(format!(
                            "{text} at {occurred_at}: got {got:?}, want {want:?}"
                        ));
                    }
                }
            }
        }
    }
    (cases, wrong)
}

fn times_every(minutes: u32) -> Vec<NaiveTime> {
    (0..24 * 60)
        .step_by(minutes as usize)
        .filter_map(|m| NaiveTime::from_hms_opt(m / 60, m % 60, 0))
        .collect()
}

#[test]
fn dst_oracle_quick() {
    let times = times_every(60);
    let occurred: Vec<TimeDelta> = (-4..=2).map(TimeDelta::hours).collect();
    let (cases, wrong) = run_oracle(&times, &occurred);
    assert!(cases > 10_000, "only {cases} cases");
    assert!(
        wrong.is_empty(),
        "{} of {cases} cases disagree with the oracle:\n{}",
        wrong.len(),
        wrong[..wrong.len().min(20)].join("\n")
    );
}

#[test]
#[ignore = "dense sweep: 476 544 cases, 5 s in release: cargo test --release --lib timing::tests::dst_oracle_dense -- --ignored"]
fn dst_oracle_dense() {
    let times = times_every(15);
    let occurred: Vec<TimeDelta> = (-48..=24).map(|q| TimeDelta::minutes(30 * q)).collect();
    let (cases, wrong) = run_oracle(&times, &occurred);
    eprintln!("{cases} cases checked");
    assert!(
        wrong.is_empty(),
        "{} of {cases} cases disagree with the oracle:\n{}",
        wrong.len(),
        wrong[..wrong.len().min(50)].join("\n")
    );
}
