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
    DateTime, Datelike, Days, LocalResult, NaiveDate, NaiveDateTime, NaiveTime, TimeDelta,
    TimeZone, Utc,
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
    /// `resets 5pm (Europe/Warsaw)`.
    ClockTimeZone,
    /// `resets at 9:30 AM`, read in the machine's zone.
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

/// The machine's IANA zone, UTC when it cannot be determined. The only IO in
/// this module; pass its result to [`hint_from_text`].
pub fn machine_local_tz() -> Tz {
    iana_time_zone::get_timezone()
        .ok()
        .and_then(|name| name.parse::<Tz>().ok())
        .unwrap_or(Tz::UTC)
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
        r"(?i)\b(?:resets?|reset_at|resets_at|retry|try again|until|available)[^0-9\n]{0,16}(\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:[Zz]|[+-]\d{2}:\d{2}))",
    )
});
static CLOCK: LazyLock<Regex> = LazyLock::new(|| {
    re(concat!(
        r"(?i)\b(?:resets?|try\s+again|available(?:\s+again)?|until)\s+(?:at\s+|on\s+)?",
        r"(?:(?P<mon>jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+(?P<day>\d{1,2})(?:st|nd|rd|th)?,?\s+",
        r"(?:(?P<year>\d{4}),?\s+)?(?:at\s+)?)?",
        r"(?P<h>\d{1,2})(?::(?P<min>\d{2}))?(?:\s*(?P<ampm>[ap]\.?m\b\.?))?",
        r"(?:\s*\((?P<ptz>[^()\s]{1,40})\)|\s+(?P<tz>[A-Za-z_]+/[A-Za-z0-9_+/-]{1,40}|UTC|GMT)\b)?",
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

fn clock_time(text: &str, occurred_at: DateTime<Utc>, zone: ClockZone) -> Option<TimingHint> {
    CLOCK.captures_iter(text).find_map(|c| {
        let stated = c.name("ptz").or_else(|| c.name("tz")).map(|m| m.as_str());
        let (tz, source) = match (zone, stated) {
            (ClockZone::Stated, Some(name)) => {
                (name.parse::<Tz>().ok()?, HintSource::ClockTimeZone)
            }
            (ClockZone::Local(tz), None) => (tz, HintSource::ClockTimeLocal),
            (ClockZone::Stated, None) | (ClockZone::Local(_), Some(_)) => return None,
        };
        let time = clock_of(&c)?;
        let reset_at = match month_day(&c)? {
            Some((month, day, year)) => on_date(tz, occurred_at, time, month, day, year),
            None => next_occurrence(tz, occurred_at, time),
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

/// `Some(None)` when no date was given; `None` when the date is malformed.
fn month_day(c: &Captures<'_>) -> Option<Option<(u32, u32, Option<i32>)>> {
    let Some(mon) = c.name("mon") else {
        return Some(None);
    };
    let prefix = mon.as_str().to_ascii_lowercase();
    let month = MONTHS.iter().position(|m| *m == prefix)? as u32 + 1;
    let day: u32 = c.name("day")?.as_str().parse().ok()?;
    let year = match c.name("year") {
        Some(y) => Some(y.as_str().parse().ok()?),
        None => None,
    };
    Some(Some((month, day, year)))
}

/// Every instant the local time `naive` denotes in `tz`, earliest first. A
/// time in a spring-forward gap is moved forward by the gap (02:30 in a gap
/// 02:00→03:00 becomes 03:30), as most calendar software does.
fn local_instants(tz: Tz, naive: NaiveDateTime) -> Vec<DateTime<Utc>> {
    match tz.from_local_datetime(&naive) {
        LocalResult::Single(t) => vec![t.with_timezone(&Utc)],
        LocalResult::Ambiguous(a, b) => {
            let mut both = vec![a.with_timezone(&Utc), b.with_timezone(&Utc)];
            both.sort();
            both
        }
        LocalResult::None => naive
            .checked_add_signed(TimeDelta::hours(1))
            .and_then(|later| tz.from_local_datetime(&later).earliest())
            .map(|t| vec![t.with_timezone(&Utc)])
            .unwrap_or_default(),
    }
}

/// First instant after `occurred_at` at which the clock in `tz` shows `time`.
fn next_occurrence(tz: Tz, occurred_at: DateTime<Utc>, time: NaiveTime) -> Option<DateTime<Utc>> {
    let today = occurred_at.with_timezone(&tz).date_naive();
    (0..3u64)
        .filter_map(|offset| today.checked_add_days(Days::new(offset)))
        .flat_map(|date| local_instants(tz, date.and_time(time)))
        .find(|instant| *instant > occurred_at)
}

/// The instant of `month`/`day` at `time` in `tz`; without a year, the first
/// such date after `occurred_at`.
fn on_date(
    tz: Tz,
    occurred_at: DateTime<Utc>,
    time: NaiveTime,
    month: u32,
    day: u32,
    year: Option<i32>,
) -> Option<DateTime<Utc>> {
    let this_year = occurred_at.with_timezone(&tz).year();
    let years = match year {
        Some(y) => vec![y],
        None => vec![this_year, this_year + 1],
    };
    years
        .into_iter()
        .filter_map(|y| NaiveDate::from_ymd_opt(y, month, day))
        .flat_map(|date| local_instants(tz, date.and_time(time)))
        .find(|instant| year.is_some() || *instant > occurred_at)
}

#[cfg(test)]
mod tests;
