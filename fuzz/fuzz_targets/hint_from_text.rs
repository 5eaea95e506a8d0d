//! Fuzzes timing hint extraction: no panic, and every hint returned is
//! inside the trust window.
#![no_main]

use std::collections::BTreeMap;

use chrono::DateTime;
use libfuzzer_sys::fuzz_target;
use recourse::timing::{hint_from_headers, hint_from_text, is_trusted};

fuzz_target!(|data: &[u8]| {
    let Some((seed, rest)) = data.split_first_chunk::<8>() else { return };
    let seconds = i64::from_le_bytes(*seed) % 8_000_000_000;
    let Some(occurred_at) = DateTime::from_timestamp(seconds, 0) else { return };
    let text = String::from_utf8_lossy(rest);
    let zone = chrono_tz::TZ_VARIANTS[usize::from(seed[0]) % chrono_tz::TZ_VARIANTS.len()];
    if let Some(hint) = hint_from_text(&text, occurred_at, zone) {
        assert!(is_trusted(hint.reset_at, occurred_at));
    }
    let headers = BTreeMap::from([
        ("retry-after".to_owned(), text.chars().take(40).collect::<String>()),
        ("x-ratelimit-reset-tokens".to_owned(), text.chars().skip(40).take(40).collect()),
    ]);
    if let Some(hint) = hint_from_headers(&headers, occurred_at) {
        assert!(is_trusted(hint.reset_at, occurred_at));
    }
});
