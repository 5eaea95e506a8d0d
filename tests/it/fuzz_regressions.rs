//! Replays every input kept under `fuzz/regressions/<target>/` through the
//! very checks its fuzz target runs (`fuzz/src/checks.rs`, included below),
//! so a fixed crash stays fixed on stable Rust without libFuzzer.

#[path = "../../fuzz/src/checks.rs"]
mod checks;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

fn regressions_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/regressions")
}

/// The files of one target's folder, sorted by name.
fn inputs(target: &str) -> Vec<PathBuf> {
    let dir = regressions_dir().join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{} cannot be read: {e}", dir.display()))
        .map(|entry| entry.expect("directory entry").path())
        .filter(|path| path.is_file())
        .collect();
    files.sort();
    files
}

/// Runs `check` on every kept input of `target`, naming each one that fails.
fn replay(target: &str) {
    let (_, check) = checks::TARGETS
        .into_iter()
        .find(|(name, _)| *name == target)
        .expect("a known target");
    let files = inputs(target);
    assert!(
        !files.is_empty(),
        "{target} needs at least one kept input, so the replay exercises it"
    );
    let failed: Vec<String> = files
        .iter()
        .filter(|file| {
            let data = std::fs::read(file).expect("regression input reads");
            catch_unwind(AssertUnwindSafe(|| check(&data))).is_err()
        })
        .map(|file| file.display().to_string())
        .collect();
    assert!(failed.is_empty(), "{target} fails on: {failed:?}");
}

#[test]
fn evidence_from_raw_regressions_pass() {
    replay("evidence_from_raw");
}

#[test]
fn hint_from_text_regressions_pass() {
    replay("hint_from_text");
}

#[test]
fn sanitize_regressions_pass() {
    replay("sanitize");
}

#[test]
fn policy_document_regressions_pass() {
    replay("policy_document");
}

#[test]
fn policy_structured_regressions_pass() {
    replay("policy_structured");
}

#[test]
fn every_regressions_folder_belongs_to_a_target() {
    let known: Vec<&str> = checks::TARGETS.iter().map(|(name, _)| *name).collect();
    for entry in std::fs::read_dir(regressions_dir()).expect("fuzz/regressions exists") {
        let name = entry.expect("directory entry").file_name();
        let name = name.to_string_lossy();
        assert!(
            known.contains(&name.as_ref()),
            "fuzz/regressions/{name} is not a fuzz target ({known:?}); its inputs would never be replayed"
        );
    }
}
