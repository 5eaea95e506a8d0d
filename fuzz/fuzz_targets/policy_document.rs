//! Fuzzes `policy::load` on arbitrary bytes: a valid normalized round-tripping document, or errors with paths.
//! The checks live in `src/checks.rs`, shared with `tests/fuzz_regressions.rs`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| recourse_fuzz::checks::policy_document(data));
