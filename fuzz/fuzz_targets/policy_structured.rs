//! Fuzzes `policy::load` with schema-aware mutations of JSON documents (seeded from `fixtures/policy/`).
//! The checks live in `src/checks.rs`, shared with `tests/fuzz_regressions.rs`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| recourse_fuzz::checks::policy_structured(data));
