//! The CLI's one date and time format: the app's (`dateTime` in
//! ui/src/lib/format.ts), local time shaped `4 Dec 2026, 17:25:03`, so a
//! time reads the same in a terminal as in the window. Machine output
//! (`--json`) keeps RFC 3339.

use std::borrow::Cow;
use std::sync::LazyLock;

use chrono::{DateTime, Local, TimeZone, Utc};
use regex::Regex;

/// `at` in this machine's zone (`TZ`, else `/etc/localtime`).
pub fn date_time(at: DateTime<Utc>) -> String {
    date_time_in(at, &Local)
}

/// `at` in `zone`, shaped as the app shows a time.
pub fn date_time_in<Z: TimeZone>(at: DateTime<Utc>, zone: &Z) -> String
where
    Z::Offset: std::fmt::Display,
{
    at.with_timezone(zone)
        .format("%-d %b %Y, %H:%M:%S")
        .to_string()
}

/// An RFC 3339 instant as the engine writes one into its texts
/// (`2026-12-04T17:25:03Z`); the app's `readableTimes` matches the same.
static INSTANT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)")
        .expect("a valid pattern")
});

/// Engine text (a decision, a reason, an error) with every instant in it
/// written by [`date_time`], as the app's `readableTimes` does.
pub fn readable_times(text: &str) -> Cow<'_, str> {
    readable_times_in(text, &Local)
}

fn readable_times_in<'t, Z: TimeZone>(text: &'t str, zone: &Z) -> Cow<'t, str>
where
    Z::Offset: std::fmt::Display,
{
    INSTANT.replace_all(text, |found: &regex::Captures<'_>| {
        match DateTime::parse_from_rfc3339(&found[0]) {
            Ok(at) => date_time_in(at.with_timezone(&Utc), zone),
            // Shaped like an instant but not one (a 25th hour): as written.
            Err(_) => found[0].to_string(),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::FixedOffset;

    fn utc(text: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(text).unwrap().into()
    }

    #[test]
    fn a_time_reads_in_the_local_zone_shaped_as_the_app_shows_it() {
        let tokyo = FixedOffset::east_opt(9 * 3600).unwrap();
        assert_eq!(
            date_time_in(utc("2026-12-04T17:25:03Z"), &tokyo),
            "5 Dec 2026, 02:25:03",
            "the local date and time, not UTC's"
        );
        assert_eq!(
            date_time_in(utc("2026-03-01T09:05:00Z"), &Utc),
            "1 Mar 2026, 09:05:00",
            "no leading zero on the day, as the app's `4 Dec 2026`"
        );
    }

    #[test]
    fn instants_in_engine_text_are_written_as_local_times() {
        let berlin = FixedOffset::east_opt(3600).unwrap();
        assert_eq!(
            readable_times_in(
                "waiting for the provider's reset until 2026-12-04T17:25:03Z, then \
                 2026-12-04T18:00:00.500+02:00",
                &berlin
            ),
            "waiting for the provider's reset until 4 Dec 2026, 18:25:03, then \
             4 Dec 2026, 17:00:00"
        );
        assert_eq!(
            readable_times_in("not a time: 2026-12-04T25:99:00Z", &berlin),
            "not a time: 2026-12-04T25:99:00Z",
            "what only looks like an instant stays as written"
        );
    }
}
