//! Timing hints: when a provider says the failure will go away.
//!
//! Owns extraction and validation of reset hints from structured headers
//! ([`hint_from_headers`]) and from sanitized text ([`hint_from_text`]). Pure
//! and deterministic: the failure instant and the zone for zone-less clock
//! times are arguments; only [`machine_local_tz`] looks at the machine.
//!
//! A hint is trusted only if `occurred_at < reset_at <= occurred_at +
//! MAX_TRUSTED_HINT`. Anything else (a reset in the past, `retry-after: 0`, a
//! year away, an unknown zone name) yields `None`: the catalogue then reports
//! no timing rather than a guess.
//!
//! Progress lines such as `Retrying in 18s (attempt 6/10)` describe the
//! agent's own retry loop, not a provider reset: they never yield a hint.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use chrono::{
    DateTime, Datelike, Days, FixedOffset, LocalResult, NaiveDate, NaiveDateTime, NaiveTime,
    TimeDelta, TimeZone, Utc,
};
use chrono_tz::Tz;
use regex::{Captures, Regex};
use serde::{Deserialize, Serialize};

use crate::classification::Span;

/// Farthest a trusted reset may lie after `occurred_at`.
///
/// 30 days: the longest real windows (weekly subscription limits such as
/// Codex's "try again in 5 days 22 hours", Claude's "resets Sep 15 at 7pm")
/// are about a week and monthly quotas about a month. The policy's own
/// maximum reset wait (≤ 7 days) decides whether to wait; this bound only
/// rejects values that are almost certainly misparsed (wrong year, epoch in
/// milliseconds) so they cannot reach the evaluator or the UI.
pub const MAX_TRUSTED_HINT: TimeDelta = TimeDelta::days(30);

/// Which extractor produced a hint; shown in explanations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum HintSource {
    /// `retry-after: <seconds>`.
    RetryAfterHeader,
    /// `retry-after: <HTTP-date>`.
    HttpDate,
    /// `retry-after-ms: <milliseconds>`.
    RetryAfterMsHeader,
    /// `anthropic-ratelimit-*-reset: <RFC 3339 | epoch seconds>`.
    AnthropicResetHeader,
    /// `x-ratelimit-reset-*: <Go duration>` (OpenAI style, `6m0s`).
    RateLimitResetHeader,
    /// `…limit reached|1749924000`.
    EpochSuffix,
    /// `"resets_at": 1775317531`.
    EpochField,
    /// An RFC 3339 instant after a reset/retry keyword.
    Rfc3339,
    /// `resets 5pm (Europe/Warsaw)`, `resets at 10:57 PM GMT-3`.
    ClockTimeZone,
    /// `resets at 9:30 AM`, read in the zone the agent ran in.
    ClockTimeLocal,
    /// `"retryDelay": "38s"` (Google `RetryInfo`).
    RetryDelayField,
    /// `"resets_in_seconds": 602705`.
    ResetsInField,
    /// `try again in 4hr 19min`.
    Relative,
}

impl HintSource {
    pub fn as_str(self) -> &'static str {
        match self {
            HintSource::RetryAfterHeader => "retry_after_header",
            HintSource::HttpDate => "http_date",
            HintSource::RetryAfterMsHeader => "retry_after_ms_header",
            HintSource::AnthropicResetHeader => "anthropic_reset_header",
            HintSource::RateLimitResetHeader => "rate_limit_reset_header",
            HintSource::EpochSuffix => "epoch_suffix",
            HintSource::EpochField => "epoch_field",
            HintSource::Rfc3339 => "rfc3339",
            HintSource::ClockTimeZone => "clock_time_zone",
            HintSource::ClockTimeLocal => "clock_time_local",
            HintSource::RetryDelayField => "retry_delay_field",
            HintSource::ResetsInField => "resets_in_field",
            HintSource::Relative => "relative",
        }
    }
}

/// A validated reset hint.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct TimingHint {
    /// Absolute reset instant (relative hints resolved against `occurred_at`).
    pub reset_at: DateTime<Utc>,
    /// The relative delay as given, for relative sources only.
    pub retry_after_s: Option<f64>,
    pub source: HintSource,
    /// Byte span of the text the hint came from; `None` for headers.
    pub span: Option<Span>,
}

/// The machine's IANA zone (`/etc/localtime`), UTC when it cannot be
/// determined. With [`agent_local_tz`], the only IO in this module; pass its
/// result to [`hint_from_text`].
pub fn machine_local_tz() -> Tz {
    iana_time_zone::get_timezone()
        .ok()
        .and_then(|name| name.parse::<Tz>().ok())
        .unwrap_or(Tz::UTC)
}

/// The zone an agent ran in, for clock times it printed without one
/// (Codex's "try again at 5:30 PM" is in its own `TZ`): the `TZ` in the
/// candidate's `env`, else this process's `TZ` (the agent inherits it),
/// else the machine's zone.
pub fn agent_local_tz(candidate_env: Option<&BTreeMap<String, String>>) -> Tz {
    let inherited = std::env::var("TZ").ok();
    zone_of_tz_var(
        candidate_env
            .and_then(|env| env.get("TZ"))
            .map(String::as_str),
    )
    .or_else(|| zone_of_tz_var(inherited.as_deref()))
    .unwrap_or_else(machine_local_tz)
}

/// The zone a `TZ` value names: an IANA name, optionally `:`-prefixed as
/// POSIX allows. Set but empty, or a zone this build does not know, reads
/// as UTC, which is what the C library and Node fall back to, so the agent
/// printed its clock times in UTC too. Unset: `None`.
pub fn zone_of_tz_var(value: Option<&str>) -> Option<Tz> {
    let name = value?.trim();
    let name = name.strip_prefix(':').unwrap_or(name);
    Some(name.parse::<Tz>().unwrap_or(Tz::UTC))
}

/// `true` when `reset_at` is a trustworthy future instant for `occurred_at`.
pub fn is_trusted(reset_at: DateTime<Utc>, occurred_at: DateTime<Utc>) -> bool {
    let within_bound = occurred_at
        .checked_add_signed(MAX_TRUSTED_HINT)
        .is_none_or(|limit| reset_at <= limit);
    occurred_at < reset_at && within_bound
}

fn absolute(
    reset_at: DateTime<Utc>,
    occurred_at: DateTime<Utc>,
    source: HintSource,
    span: Option<Span>,
) -> Option<TimingHint> {
    is_trusted(reset_at, occurred_at).then_some(TimingHint {
        reset_at,
        retry_after_s: None,
        source,
        span,
    })
}

fn relative(
    seconds: f64,
    occurred_at: DateTime<Utc>,
    source: HintSource,
    span: Option<Span>,
) -> Option<TimingHint> {
    let max_seconds = MAX_TRUSTED_HINT.num_seconds() as f64;
    if !(seconds.is_finite() && seconds > 0.0 && seconds <= max_seconds) {
        return None;
    }
    let delta = TimeDelta::milliseconds((seconds * 1000.0).round() as i64);
    let reset_at = occurred_at.checked_add_signed(delta)?;
    is_trusted(reset_at, occurred_at).then_some(TimingHint {
        reset_at,
        retry_after_s: Some(seconds),
        source,
        span,
    })
}

// ---------------------------------------------------------------- headers

/// The trusted hint carried by response headers, if any.
///
/// Precedence: `retry-after-ms`, `retry-after` (delta seconds or HTTP-date),
/// `anthropic-ratelimit-*-reset` (RFC 3339), `x-ratelimit-reset-*` (Go
/// durations such as `6m0s`, `1s`, `20ms`). Among several `*-reset` buckets,
/// those whose `*-remaining` is `0` are preferred; of those the latest reset
/// wins (by then every exhausted bucket has refilled). Names are matched
/// case-insensitively.
pub fn hint_from_headers(
    headers: &BTreeMap<String, String>,
    occurred_at: DateTime<Utc>,
) -> Option<TimingHint> {
    let lower: BTreeMap<String, &str> = headers
        .iter()
        .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim()))
        .collect();
    retry_after_ms(&lower, occurred_at)
        .or_else(|| retry_after(&lower, occurred_at))
        .or_else(|| bucket_reset(&lower, occurred_at, "anthropic-ratelimit-", anthropic_reset))
        .or_else(|| bucket_reset(&lower, occurred_at, "x-ratelimit-", openai_reset))
}

fn retry_after_ms(
    headers: &BTreeMap<String, &str>,
    occurred_at: DateTime<Utc>,
) -> Option<TimingHint> {
    let millis: f64 = headers.get("retry-after-ms")?.parse().ok()?;
    relative(
        millis / 1000.0,
        occurred_at,
        HintSource::RetryAfterMsHeader,
        None,
    )
}

fn retry_after(headers: &BTreeMap<String, &str>, occurred_at: DateTime<Utc>) -> Option<TimingHint> {
    let value = headers.get("retry-after")?;
    if let Ok(seconds) = value.parse::<f64>() {
        return relative(seconds, occurred_at, HintSource::RetryAfterHeader, None);
    }
    let date = DateTime::parse_from_rfc2822(value).ok()?;
    absolute(
        date.with_timezone(&Utc),
        occurred_at,
        HintSource::HttpDate,
        None,
    )
}

/// RFC 3339 (`anthropic-ratelimit-requests-reset`) or epoch seconds
/// (`anthropic-ratelimit-unified-reset`).
fn anthropic_reset(value: &str, occurred_at: DateTime<Utc>) -> Option<TimingHint> {
    let reset_at = match value.parse::<i64>() {
        Ok(epoch) => DateTime::from_timestamp(epoch, 0)?,
        Err(_) => DateTime::parse_from_rfc3339(value)
            .ok()?
            .with_timezone(&Utc),
    };
    absolute(
        reset_at,
        occurred_at,
        HintSource::AnthropicResetHeader,
        None,
    )
}

fn openai_reset(value: &str, occurred_at: DateTime<Utc>) -> Option<TimingHint> {
    let seconds = parse_duration(value)
        .filter(|d| d.end == value.len())?
        .seconds;
    relative(seconds, occurred_at, HintSource::RateLimitResetHeader, None)
}

/// Bucket names are taken from `<prefix><bucket>-reset` (Anthropic) or
/// `<prefix>reset-<bucket>` (OpenAI); exhaustion from the matching
/// `remaining` header.
fn bucket_reset(
    headers: &BTreeMap<String, &str>,
    occurred_at: DateTime<Utc>,
    prefix: &str,
    parse: fn(&str, DateTime<Utc>) -> Option<TimingHint>,
) -> Option<TimingHint> {
    let mut valid: Vec<(bool, TimingHint)> = Vec::new();
    for (name, value) in headers.range(prefix.to_owned()..) {
        let Some(rest) = name.strip_prefix(prefix) else {
            break;
        };
        let remaining_name = if let Some(bucket) = rest.strip_suffix("-reset") {
            format!("{prefix}{bucket}-remaining")
        } else if let Some(bucket) = rest.strip_prefix("reset-") {
            format!("{prefix}remaining-{bucket}")
        } else {
            continue;
        };
        let exhausted = headers
            .get(&remaining_name)
            .is_some_and(|r| r.parse() == Ok(0u64));
        if let Some(hint) = parse(value, occurred_at) {
            valid.push((exhausted, hint));
        }
    }
    let any_exhausted = valid.iter().any(|(exhausted, _)| *exhausted);
    valid
        .into_iter()
        .filter(|(exhausted, _)| *exhausted || !any_exhausted)
        .map(|(_, hint)| hint)
        .max_by_key(|hint| hint.reset_at)
}

// ---------------------------------------------------------------- durations

/// A duration parsed from the start of some text.
#[derive(Debug, Clone, Copy, PartialEq)]
struct ParsedDuration {
    seconds: f64,
    /// Byte offset just past the last unit consumed.
    end: usize,
}

const MAX_DURATION_PARTS: usize = 8;
const MAX_NUMBER_BYTES: usize = 16;

fn unit_seconds(unit: &str) -> Option<f64> {
    let seconds = match unit.to_ascii_lowercase().as_str() {
        "d" | "day" | "days" => 86_400.0,
        "h" | "hr" | "hrs" | "hour" | "hours" => 3_600.0,
        "m" | "min" | "mins" | "minute" | "minutes" => 60.0,
        "s" | "sec" | "secs" | "second" | "seconds" => 1.0,
        "ms" | "millisecond" | "milliseconds" => 0.001,
        _ => return None,
    };
    Some(seconds)
}

/// Parses `4hr 19min`, `2 days 3 hours`, `6m0s`, `12.5s`, `1 hour and 30
/// minutes` from the start of `text`. Stops at the first token that is not a
/// `<number><unit>` pair; `None` when not even one pair was read.
fn parse_duration(text: &str) -> Option<ParsedDuration> {
    let bytes = text.as_bytes();
    let mut pos = 0;
    let mut parsed: Option<ParsedDuration> = None;
    for _ in 0..MAX_DURATION_PARTS {
        let start = skip_separators(text, pos);
        let Some((seconds, end)) = duration_part(bytes, start) else {
            break;
        };
        let total = parsed.map_or(0.0, |p| p.seconds) + seconds;
        parsed = Some(ParsedDuration {
            seconds: total,
            end,
        });
        pos = end;
    }
    parsed
}

fn skip_separators(text: &str, mut pos: usize) -> usize {
    loop {
        let rest = &text[pos..];
        let trimmed = rest.trim_start_matches([' ', '\t', '\n', ',']);
        let after_and = trimmed.strip_prefix("and ").unwrap_or(trimmed);
        if after_and.len() == rest.len() {
            return pos;
        }
        pos += rest.len() - after_and.len();
    }
}

/// One `<number>[ ]<unit>` pair starting at `start`.
fn duration_part(bytes: &[u8], start: usize) -> Option<(f64, usize)> {
    let number_end = scan(bytes, start, |b| b.is_ascii_digit() || b == b'.');
    if number_end == start || number_end - start > MAX_NUMBER_BYTES {
        return None;
    }
    let number: f64 = std::str::from_utf8(&bytes[start..number_end])
        .ok()?
        .parse()
        .ok()?;
    let unit_start = scan(bytes, number_end, |b| b.is_ascii_whitespace());
    let unit_end = scan(bytes, unit_start, |b| b.is_ascii_alphabetic());
    let unit = std::str::from_utf8(&bytes[unit_start..unit_end]).ok()?;
    Some((number * unit_seconds(unit)?, unit_end))
}

fn scan(bytes: &[u8], from: usize, accept: impl Fn(u8) -> bool) -> usize {
    bytes[from..]
        .iter()
        .position(|&b| !accept(b))
        .map_or(bytes.len(), |offset| from + offset)
}

// ---------------------------------------------------------------- text

/// The trusted hint stated in `text`, if any.
///
/// Extractors run in order of precision and the first trusted hint wins:
/// epoch after `|` (Claude Code), epoch fields, RFC 3339 after a reset
/// keyword, clock time with an IANA zone (optionally with a month and day),
/// Google `retryDelay`, `resets_in_seconds`, relative phrases after a
/// retry/reset keyword, and last a zone-less clock time read in `local_tz`
/// (next occurrence after `occurred_at`). Within one extractor the earliest
/// occurrence in the text that validates wins.
pub fn hint_from_text(text: &str, occurred_at: DateTime<Utc>, local_tz: Tz) -> Option<TimingHint> {
    let extractors: [&dyn Fn() -> Option<TimingHint>; 8] = [
        &|| epoch_suffix(text, occurred_at),
        &|| epoch_field(text, occurred_at),
        &|| rfc3339(text, occurred_at),
        &|| clock_time(text, occurred_at, ClockZone::Stated),
        &|| retry_delay_field(text, occurred_at),
        &|| resets_in_field(text, occurred_at),
        &|| relative_phrase(text, occurred_at),
        &|| clock_time(text, occurred_at, ClockZone::Local(local_tz)),
    ];
    extractors.iter().find_map(|extract| extract())
}

fn re(pattern: &str) -> Regex {
    crate::ascii_regex::compile(pattern).expect("timing patterns are valid")
}

static EPOCH_SUFFIX: LazyLock<Regex> = LazyLock::new(|| re(r"\|(\d{10})\b"));
static EPOCH_FIELD: LazyLock<Regex> = LazyLock::new(|| {
    re(r#"(?i)\b(?:resets?_?at|reset_time|x-ratelimit-reset)["']?\s*[:=]\s*["']?(\d{10})\b"#)
});
static RFC3339: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b(?:resets?|reset_at|resets_at|quotaResetTimeStamp|retry|try again|until|available)[^0-9\n]{0,16}(\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:[Zz]|[+-]\d{2}:\d{2}))",
    )
});
static CLOCK: LazyLock<Regex> = LazyLock::new(|| {
    re(concat!(
        r"(?i)\b(?:resets?|try\s+again|available(?:\s+again)?|until|regain\s+access)\s+(?:at\s+|on\s+)?",
        r"(?:(?P<iso>\d{4}-\d{2}-\d{2})\s+(?:at\s+)?",
        r"|(?P<mon>jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+(?P<day>\d{1,2})(?:st|nd|rd|th)?,?\s+",
        r"(?:(?P<year>\d{4}),?\s+)?(?:at\s+)?)?",
        r"(?P<h>\d{1,2})(?::(?P<min>\d{2}))?(?:\s*(?P<ampm>[ap]\.?m\b\.?))?",
        r"(?:\s*\((?P<ptz>[^()\s]{1,40})\)",
        r"|\s+(?P<tz>[A-Za-z_]+/[A-Za-z0-9_+/-]{1,40}|(?:UTC|GMT)(?:[+-]\d{1,2}(?::?\d{2})?)?\b|[+-]\d{2}:\d{2}\b))?",
    ))
});
/// Also inside an escaped JSON string (`\"retryDelay\": \"49s\"`), as Gemini
/// CLI and gateways relay Google's error body.
static RETRY_DELAY: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r#"\\{0,3}["']?retryDelay\\{0,3}["']?\s*:\s*\\{0,3}["'](\d{1,12}(?:\.\d{1,9})?)s\\{0,3}["']"#,
    )
});
static RESETS_IN: LazyLock<Regex> =
    LazyLock::new(|| re(r#"["']?resets_in_seconds["']?\s*[:=]\s*(\d{1,12}(?:\.\d{1,9})?)\b"#));
static RELATIVE_LEAD: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b(?P<lead>try\s+again|retrying|retry|resets?|available(?:\s+again)?|wait(?:\s+for)?)\s+(?:(?:in|after)\s+)?\d",
    )
});
static PROGRESS_TAIL: LazyLock<Regex> = LazyLock::new(|| re(r"(?i)^[\s.,]*\(?\s*attempt\b"));

fn span(start: usize, end: usize) -> Option<Span> {
    Some(Span {
        start: u32::try_from(start).ok()?,
        end: u32::try_from(end).ok()?,
    })
}

fn whole_span(c: &Captures<'_>) -> Option<Span> {
    let m = c.get(0)?;
    span(m.start(), m.end())
}

fn epoch_suffix(text: &str, occurred_at: DateTime<Utc>) -> Option<TimingHint> {
    epoch_matches(&EPOCH_SUFFIX, text, occurred_at, HintSource::EpochSuffix)
}

fn epoch_field(text: &str, occurred_at: DateTime<Utc>) -> Option<TimingHint> {
    epoch_matches(&EPOCH_FIELD, text, occurred_at, HintSource::EpochField)
}

fn epoch_matches(
    pattern: &Regex,
    text: &str,
    occurred_at: DateTime<Utc>,
    source: HintSource,
) -> Option<TimingHint> {
    pattern.captures_iter(text).find_map(|c| {
        let seconds: i64 = c[1].parse().ok()?;
        let reset_at = DateTime::from_timestamp(seconds, 0)?;
        absolute(reset_at, occurred_at, source, whole_span(&c))
    })
}

fn rfc3339(text: &str, occurred_at: DateTime<Utc>) -> Option<TimingHint> {
    RFC3339.captures_iter(text).find_map(|c| {
        let stamp = c[1].replace([' ', 't'], "T");
        let reset_at = DateTime::parse_from_rfc3339(&stamp)
            .ok()?
            .with_timezone(&Utc);
        let m = c.get(1)?;
        absolute(
            reset_at,
            occurred_at,
            HintSource::Rfc3339,
            span(m.start(), m.end()),
        )
    })
}

fn retry_delay_field(text: &str, occurred_at: DateTime<Utc>) -> Option<TimingHint> {
    seconds_matches(&RETRY_DELAY, text, occurred_at, HintSource::RetryDelayField)
}

fn resets_in_field(text: &str, occurred_at: DateTime<Utc>) -> Option<TimingHint> {
    seconds_matches(&RESETS_IN, text, occurred_at, HintSource::ResetsInField)
}

fn seconds_matches(
    pattern: &Regex,
    text: &str,
    occurred_at: DateTime<Utc>,
    source: HintSource,
) -> Option<TimingHint> {
    pattern.captures_iter(text).find_map(|c| {
        let seconds: f64 = c[1].parse().ok()?;
        relative(seconds, occurred_at, source, whole_span(&c))
    })
}

/// `try again in …`, `retry after …`, `resets in …`, `wait …`. A `Retrying
/// in …` lead or a following `(attempt n/m)` marks the agent's own progress
/// line, which is never a hint.
fn relative_phrase(text: &str, occurred_at: DateTime<Utc>) -> Option<TimingHint> {
    RELATIVE_LEAD.captures_iter(text).find_map(|c| {
        let whole = c.get(0)?;
        if c["lead"].eq_ignore_ascii_case("retrying") {
            return None;
        }
        let digits_at = whole.end() - 1;
        let duration = parse_duration(&text[digits_at..])?;
        let end = digits_at + duration.end;
        if PROGRESS_TAIL.is_match(&text[end..]) {
            return None;
        }
        relative(
            duration.seconds,
            occurred_at,
            HintSource::Relative,
            span(whole.start(), end),
        )
    })
}

/// Which zone a clock time is read in.
#[derive(Debug, Clone, Copy)]
enum ClockZone {
    /// Only clock times that name their zone.
    Stated,
    /// Only clock times without a zone, read in the given zone.
    Local(Tz),
}

/// A zone a clock time names: an IANA zone, or a fixed offset written as
/// `GMT-3`, `UTC+5:30` or `-04:30`.
#[derive(Debug, Clone, Copy)]
enum StatedZone {
    Named(Tz),
    Offset(FixedOffset),
}

/// Farthest offset from UTC any zone uses (UTC+14, Line Islands).
const MAX_OFFSET_MINUTES: i32 = 14 * 60;

impl StatedZone {
    /// `None` for a name that is neither a known zone nor a valid offset:
    /// the hint is refused rather than read in a guessed zone.
    fn parse(name: &str) -> Option<StatedZone> {
        let upper = name.to_ascii_uppercase();
        let offset = upper
            .strip_prefix("GMT")
            .or_else(|| upper.strip_prefix("UTC"))
            .unwrap_or(&upper);
        if offset.starts_with(['+', '-']) {
            return parse_offset(offset).map(StatedZone::Offset);
        }
        name.parse::<Tz>().ok().map(StatedZone::Named)
    }
}

/// `-3`, `+05:30`, `-0430`: hours up to 14, minutes below 60, at most
/// UTC±14:00.
fn parse_offset(text: &str) -> Option<FixedOffset> {
    let (sign, digits) = match text.split_at(1) {
        ("+", rest) => (1, rest),
        ("-", rest) => (-1, rest),
        _ => return None,
    };
    let (hours, minutes) = match digits.split_once(':') {
        Some((h, m)) => (h, m),
        None if digits.len() > 2 => digits.split_at(digits.len() - 2),
        None => (digits, "0"),
    };
    let hours: i32 = hours.parse().ok()?;
    let minutes: i32 = minutes.parse().ok()?;
    let total = hours * 60 + minutes;
    if minutes >= 60 || total > MAX_OFFSET_MINUTES {
        return None;
    }
    FixedOffset::east_opt(sign * total * 60)
}

fn clock_time(text: &str, occurred_at: DateTime<Utc>, zone: ClockZone) -> Option<TimingHint> {
    CLOCK.captures_iter(text).find_map(|c| {
        let stated = c.name("ptz").or_else(|| c.name("tz")).map(|m| m.as_str());
        let (zone, source) = match (zone, stated) {
            (ClockZone::Stated, Some(name)) => {
                (StatedZone::parse(name)?, HintSource::ClockTimeZone)
            }
            (ClockZone::Local(tz), None) => (StatedZone::Named(tz), HintSource::ClockTimeLocal),
            (ClockZone::Stated, None) | (ClockZone::Local(_), Some(_)) => return None,
        };
        let time = clock_of(&c)?;
        let date = date_of(&c)?;
        let reset_at = match zone {
            StatedZone::Named(tz) => reset_instant(&tz, occurred_at, time, date),
            StatedZone::Offset(offset) => reset_instant(&offset, occurred_at, time, date),
        }?;
        absolute(reset_at, occurred_at, source, whole_span(&c))
    })
}

/// The wall-clock time: needs am/pm or minutes (`5pm`, `9:30 AM`, `17:00`).
fn clock_of(c: &Captures<'_>) -> Option<NaiveTime> {
    let hour: u32 = c["h"].parse().ok()?;
    let minute: u32 = c.name("min").map_or(Some(0), |m| m.as_str().parse().ok())?;
    let hour = match c.name("ampm").map(|m| m.as_str().to_ascii_lowercase()) {
        Some(ampm) if (1..=12).contains(&hour) => {
            (hour % 12) + if ampm.starts_with('p') { 12 } else { 0 }
        }
        Some(_) => return None,
        None if c.name("min").is_some() => hour,
        None => return None,
    };
    NaiveTime::from_hms_opt(hour, minute, 0)
}

const MONTHS: [&str; 12] = [
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
];

/// The date a clock time names, if any.
#[derive(Debug, Clone, Copy)]
enum ClockDate {
    /// No date: the next time the clock shows that time.
    Next,
    /// A month and day, without a year: the next such date.
    MonthDay(u32, u32),
    /// A full date.
    Full(NaiveDate),
}

/// `None` when the date is malformed (`Feb 30`, `2026-13-01`).
fn date_of(c: &Captures<'_>) -> Option<ClockDate> {
    if let Some(iso) = c.name("iso") {
        return NaiveDate::parse_from_str(iso.as_str(), "%Y-%m-%d")
            .ok()
            .map(ClockDate::Full);
    }
    let Some(mon) = c.name("mon") else {
        return Some(ClockDate::Next);
    };
    let prefix = mon.as_str().to_ascii_lowercase();
    let month = MONTHS.iter().position(|m| *m == prefix)? as u32 + 1;
    let day: u32 = c.name("day")?.as_str().parse().ok()?;
    match c.name("year") {
        Some(y) => {
            NaiveDate::from_ymd_opt(y.as_str().parse().ok()?, month, day).map(ClockDate::Full)
        }
        None => Some(ClockDate::MonthDay(month, day)),
    }
}

/// The one future instant the wall-clock `naive` denotes in `zone`, if it is
/// unambiguous. A wall time in a spring-forward gap denotes no instant (the
/// provider cannot have printed it from a real one: the zone or the text is
/// not what we think), and one repeated by a fall-back denotes two: both are
/// refused rather than guessed, whatever the gap's length (30 minutes on Lord
/// Howe, 2 hours on Troll). `Some(None)`: the wall time has passed.
fn future_instant<Z: TimeZone>(
    zone: &Z,
    naive: NaiveDateTime,
    occurred_at: DateTime<Utc>,
) -> Option<Option<DateTime<Utc>>> {
    let future = |t: DateTime<Z>| Some(t.with_timezone(&Utc)).filter(|t| *t > occurred_at);
    match zone.from_local_datetime(&naive) {
        LocalResult::Single(t) => Some(future(t)),
        LocalResult::Ambiguous(a, b) => match (future(a), future(b)) {
            (Some(_), Some(_)) => None,
            (first, second) => Some(first.or(second)),
        },
        LocalResult::None => {
            let passed = naive <= occurred_at.with_timezone(zone).naive_local();
            passed.then_some(None)
        }
    }
}

/// The reset instant of `time` on `date` in `zone`: the first such wall
/// time after `occurred_at` (the next day's when today's has passed; the
/// next year's for a month and day that have passed), or `None` when that
/// wall time is not one unambiguous instant.
fn reset_instant<Z: TimeZone>(
    zone: &Z,
    occurred_at: DateTime<Utc>,
    time: NaiveTime,
    date: ClockDate,
) -> Option<DateTime<Utc>> {
    let local_today = occurred_at.with_timezone(zone).date_naive();
    let candidates: Vec<NaiveDate> = match date {
        ClockDate::Full(day) => vec![day],
        ClockDate::Next => (0..3u64)
            .filter_map(|offset| local_today.checked_add_days(Days::new(offset)))
            .collect(),
        ClockDate::MonthDay(month, day) => [local_today.year(), local_today.year() + 1]
            .into_iter()
            .filter_map(|year| NaiveDate::from_ymd_opt(year, month, day))
            .collect(),
    };
    for day in candidates {
        if let Some(instant) = future_instant(zone, day.and_time(time), occurred_at)? {
            return Some(instant);
        }
    }
    None
}

pub mod words;

#[cfg(test)]
mod tests;
