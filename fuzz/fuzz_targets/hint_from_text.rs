//! Fuzzes timing hint extraction: no panic, every hint inside the trust window.
//! The checks live in `src/checks.rs`, shared with `tests/fuzz_regressions.rs`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| recourse_fuzz::checks::hint_text(data));
