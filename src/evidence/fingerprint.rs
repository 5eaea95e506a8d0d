//! The fingerprint of a failure: what two failures must share to count as
//! the same failure for the repeated-unclassified exception
//! (`policy::unclassified`).
//!
//! It is read from the sanitized evidence only, so it can be computed again
//! from any stored attempt: the provider, phase, HTTP status, provider error
//! type and exit code, and the sanitized message with what differs between
//! two runs of one failure written as placeholders. The sanitizer has already
//! replaced keys, tokens, long opaque runs (UUIDs, hashes) and home paths
//! with fixed markers; this adds what it keeps on purpose: timestamps and
//! clock times (`<time>`), request ids and other hex ids (`<id>`), numbers of
//! five digits or more (`<n>`: epoch seconds, process ids, ports, byte
//! counts), the size in a truncation marker, and runs of white space. Short
//! numbers stay, so `exit status 1` and `exit status 2`, or HTTP 500 and 503,
//! are different failures. Headers, the instant and the correlation are left
//! out: they differ on every attempt.

use std::sync::LazyLock;

use regex::Regex;
use sha2::{Digest, Sha256};

use super::Evidence;

/// Identifies a failure across attempts; equal fingerprints are the same
/// failure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fingerprint(String);

impl Fingerprint {
    /// A fingerprint given by name, for failures that have no evidence (a
    /// simulated failure sequence names its own).
    pub fn named(name: &str) -> Fingerprint {
        Fingerprint(format!("named:{name}"))
    }

    /// 16 hex digits for evidence, `named:…` for a named one.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

fn re(pattern: &str) -> Regex {
    crate::ascii_regex::compile(pattern).expect("fingerprint patterns are valid")
}

static TRUNCATED: LazyLock<Regex> = LazyLock::new(|| re(r"\[truncated: \d+ bytes omitted\]"));
/// A date, with a time and a zone or offset when they follow.
static DATE_TIME: LazyLock<Regex> = LazyLock::new(|| {
    re(concat!(
        r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{1,2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?",
        r"(?:\s?(?:Z|UTC|GMT|[+-]\d{2}:?\d{2}))?)?\b"
    ))
});
static CLOCK: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)\b\d{1,2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:\s?[ap]m)?\b"));
static REQUEST_ID: LazyLock<Regex> = LazyLock::new(|| re(r"\breq_[A-Za-z0-9]{8,}"));
static HEX_RUN: LazyLock<Regex> = LazyLock::new(|| re(r"(?i)\b(?:0x)?[0-9a-f]{8,}\b"));
static LONG_NUMBER: LazyLock<Regex> = LazyLock::new(|| re(r"\b\d{5,}\b"));
static SPACE: LazyLock<Regex> = LazyLock::new(|| re(r"\s+"));

const TIME: &str = "<time>";
const ID: &str = "<id>";

/// The message with what varies between runs of one failure replaced: a
/// date-time before a bare clock time, ids before the long numbers inside
/// them.
pub fn normalized_message(message: &str) -> String {
    let text = TRUNCATED.replace_all(message, "[truncated]");
    let text = DATE_TIME.replace_all(&text, TIME);
    let text = CLOCK.replace_all(&text, TIME);
    let text = REQUEST_ID.replace_all(&text, ID);
    // Eight hex digits or more, letters and digits mixed, is an id; an
    // all-letter run is a word (`deadbeef`), an all-digit one a number.
    let text = HEX_RUN.replace_all(&text, |c: &regex::Captures<'_>| {
        let run = &c[0];
        let mixed = run.bytes().any(|b| b.is_ascii_digit())
            && run.bytes().any(|b| matches!(b, b'a'..=b'f' | b'A'..=b'F'));
        if mixed {
            ID.to_string()
        } else {
            run.to_string()
        }
    });
    let text = LONG_NUMBER.replace_all(&text, "<n>");
    SPACE.replace_all(text.trim(), " ").into_owned()
}

impl Evidence {
    /// This failure's fingerprint (see the module documentation).
    pub fn fingerprint(&self) -> Fingerprint {
        let mut hash = Sha256::new();
        let fields = [
            self.provider.as_str().to_string(),
            self.phase.map_or("", |p| p.as_str()).to_string(),
            self.http_status.map_or(String::new(), |s| s.to_string()),
            self.error_type.clone().unwrap_or_default(),
            self.exit_code.map_or(String::new(), |c| c.to_string()),
            normalized_message(&self.message),
        ];
        for field in fields {
            // Length-prefixed, so no two field lists hash alike.
            hash.update((field.len() as u64).to_le_bytes());
            hash.update(field.as_bytes());
        }
        let digest = hash.finalize();
        Fingerprint(digest[..8].iter().map(|b| format!("{b:02x}")).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::{Correlation, Phase, Provider, RawEvidence};
    use chrono::{TimeZone, Utc};
    use std::collections::BTreeMap;

    fn evidence(message: &str, second: u32) -> Evidence {
        let at = Utc.with_ymd_and_hms(2026, 12, 4, 9, 0, second).unwrap();
        let mut raw = RawEvidence::new(Provider::Codex, message, at)
            .with_phase(Phase::Exit)
            .with_exit_code(1);
        raw.correlation = Some(Correlation {
            route_id: "7".into(),
            generation: second,
            attempt: second,
            invocation_id: format!("r7-a{second}-x"),
        });
        raw.headers = BTreeMap::from([("retry-after".to_string(), second.to_string())]);
        Evidence::from_raw(raw)
    }

    #[test]
    fn two_runs_of_one_failure_share_a_fingerprint_across_times_and_ids() {
        // Two runs of the same failure differ in every run-specific part:
        // an ISO time, a clock time, a request id, a UUID, an epoch, a pid,
        // a hex id, a key, a home path, and the attempt's own instant,
        // correlation and headers.
        let first = evidence(
            "2026-12-04T09:00:01.120Z ERROR codex_core: turn aborted at 09:00:01 \
             (request req_011CV4xYAbCdEfGh12345678, trace 0b7c3f1e-8d2a-4c71-9f0e-1a2b3c4d5e6f) \
             epoch 1796374801 pid 48211 session 9f3a77c1d2e4 key sk-proj-AAAAAAAAAAAAAAAAAAAAAA \
             in /home/alice/work/app",
            1,
        );
        let second = evidence(
            "2026-12-04T09:14:57.003Z  ERROR codex_core: turn aborted at 9:14:57 \
             (request req_011CV4zQQwErTyUi87654321, trace 7e1d2c3b-4a59-4687-b0c1-d2e3f4a5b6c7) \
             epoch 1796375697 pid 50377 session 04aa91be7f10 key sk-proj-BBBBBBBBBBBBBBBBBBBBBB \
             in /home/bob/code/other",
            57,
        );
        assert_eq!(
            first.fingerprint(),
            second.fingerprint(),
            "{:?}\n{:?}",
            normalized_message(&first.message),
            normalized_message(&second.message)
        );
    }

    #[test]
    fn a_different_failure_has_a_different_fingerprint() {
        let base = evidence("fatal: exit status 1 from the agent's helper", 1);
        for other in [
            evidence("fatal: exit status 2 from the agent's helper", 1),
            evidence("fatal: exit status 1 from the agent's wrapper", 1),
        ] {
            assert_ne!(base.fingerprint(), other.fingerprint(), "{}", other.message);
        }
        let mut status = base.clone();
        status.http_status = Some(500);
        assert_ne!(
            base.fingerprint(),
            status.fingerprint(),
            "structured fields are part of it"
        );
        let mut exit = base.clone();
        exit.exit_code = Some(2);
        assert_ne!(base.fingerprint(), exit.fingerprint());
        let mut provider = base.clone();
        provider.provider = Provider::Gemini;
        assert_ne!(base.fingerprint(), provider.fingerprint());
    }

    #[test]
    fn short_numbers_and_words_are_kept() {
        assert_eq!(
            normalized_message("HTTP 503 after 3 tries: cafe e5 0x1f deadbeef   done"),
            "HTTP 503 after 3 tries: cafe e5 0x1f deadbeef done",
            "status codes, counts and short hex-looking words are what the failure is"
        );
        assert_eq!(
            normalized_message("[truncated: 1234 bytes omitted] at 5:07 PM on 2026-12-04"),
            "[truncated] at <time> on <time>"
        );
        assert_eq!(
            normalized_message("id 3fa85f64 then 0x7ffd5e8a1c20 then 98765"),
            "id <id> then <id> then <n>"
        );
    }

    #[test]
    fn a_fingerprint_is_sixteen_hex_digits_and_a_named_one_says_so() {
        let fp = evidence("boom", 1).fingerprint();
        assert_eq!(fp.as_str().len(), 16);
        assert!(fp.as_str().bytes().all(|b| b.is_ascii_hexdigit()));
        assert_eq!(Fingerprint::named("a").as_str(), "named:a");
        assert_ne!(Fingerprint::named("a"), Fingerprint::named("b"));
    }
}
