//! Fuzzes `Evidence::from_raw`: no panic, bounded message.
//! The checks live in `src/checks.rs`, shared with `tests/fuzz_regressions.rs`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| recourse_fuzz::checks::evidence_from_raw(data));
