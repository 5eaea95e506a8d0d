//! Fuzzes `Evidence::from_raw` and `sanitize`: no panic, bounded output,
//! and sanitizing the result again changes nothing.
#![no_main]

use std::collections::BTreeMap;

use chrono::{TimeZone, Utc};
use libfuzzer_sys::fuzz_target;
use recourse::evidence::{sanitize, Evidence, Provider, RawEvidence, MAX_MESSAGE_BYTES};

fuzz_target!(|data: &[u8]| {
    let (header_value, message) = data.split_at(data.len().min(64));
    let raw = RawEvidence {
        provider: Provider::Generic,
        message: message.to_vec(),
        phase: None,
        http_status: Some(429),
        headers: BTreeMap::from([(
            "anthropic-ratelimit-requests-reset".to_owned(),
            String::from_utf8_lossy(header_value).into_owned(),
        )]),
        error_type: Some(String::from_utf8_lossy(header_value).into_owned()),
        exit_code: None,
        occurred_at: Utc.with_ymd_and_hms(2025, 6, 14, 17, 56, 6).unwrap(),
        correlation: None,
    };
    let evidence = Evidence::from_raw(raw);
    assert!(evidence.message.len() <= MAX_MESSAGE_BYTES);
    let text = String::from_utf8_lossy(data);
    let once = sanitize(&text);
    assert_eq!(sanitize(&once), once, "sanitize is idempotent");
});
