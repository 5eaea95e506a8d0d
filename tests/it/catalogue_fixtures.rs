//! Runs every catalogue fixture under `fixtures/catalogue/` and reports every
//! failing case (file and differences), not just the first. It also holds
//! the suite to its size, its share of negatives, and one deciding case per rule.
//!
//! `RECOURSE_FIXTURE=claude-code/overloaded` (a path under `fixtures/catalogue/`,
//! `.toml` optional; any part of it matches) runs only the matching cases and
//! skips the whole-suite checks.

use std::fs;
use std::path::{Path, PathBuf};

use std::collections::BTreeSet;

use recourse::catalogue::{rules, Fixture, FixtureKind};

/// The fixture suite must stay at least this large.
const MIN_CASES: usize = 150;

fn fixture_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let entries =
            fs::read_dir(&dir).unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()));
        for entry in entries {
            let path = entry.expect("directory entry").path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == "toml") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// Whether `path` is picked by `RECOURSE_FIXTURE=filter`.
fn selected(root: &Path, path: &Path, filter: &str) -> bool {
    let relative = path.strip_prefix(root).unwrap_or(path).to_string_lossy();
    relative.contains(filter.trim_end_matches(".toml"))
}

#[test]
fn selecting_one_fixture_matches_its_path_without_the_extension() {
    let root = Path::new("/f");
    let file = Path::new("/f/claude-code/overloaded.toml");
    assert!(selected(root, file, "claude-code/overloaded"));
    assert!(selected(root, file, "claude-code/overloaded.toml"));
    assert!(
        !selected(root, file, "codex/overloaded"),
        "another folder is another case"
    );
}

#[test]
fn every_catalogue_fixture_passes() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/catalogue");
    let only = std::env::var("RECOURSE_FIXTURE").ok();
    let files: Vec<PathBuf> = fixture_files(&root)
        .into_iter()
        .filter(|p| only.as_deref().is_none_or(|o| selected(&root, p, o)))
        .collect();
    assert!(
        !files.is_empty(),
        "RECOURSE_FIXTURE={} matches no fixture",
        only.as_deref().unwrap_or("")
    );
    let mut failures = Vec::new();
    let mut negatives = 0;
    let mut cases = 0;
    let mut deciding_rules = BTreeSet::new();
    for path in &files {
        let name = path
            .strip_prefix(&root)
            .unwrap_or(path)
            .display()
            .to_string();
        let source = fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {name}: {e}"));
        let fixture = match Fixture::parse(&source) {
            Ok(fixture) => fixture,
            Err(e) => {
                failures.push(format!("{name}:\n    {e}"));
                continue;
            }
        };
        cases += 1;
        deciding_rules.extend(fixture.expect.rule_id.clone());
        if fixture.kind == FixtureKind::Negative {
            negatives += 1;
        }
        let problems = fixture.check();
        if !problems.is_empty() {
            failures.push(format!("{name}:\n    {}", problems.join("\n    ")));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} fixture(s) failed:\n\n{}",
        failures.len(),
        files.len(),
        failures.join("\n\n")
    );
    if only.is_some() {
        eprintln!("RECOURSE_FIXTURE: {} case(s) passed", files.len());
        return;
    }
    assert!(
        cases >= MIN_CASES,
        "only {cases} fixtures; the suite needs at least {MIN_CASES}"
    );
    assert!(
        negatives * 3 >= cases,
        "only {negatives} of {cases} fixtures are negative; at least a third must be"
    );
    let untested: Vec<&str> = rules()
        .iter()
        .map(|r| r.id.as_str())
        .filter(|id| !deciding_rules.contains(*id))
        .collect();
    assert!(
        untested.is_empty(),
        "every rule must decide at least one fixture (expect.rule_id); none for: {untested:?}"
    );
}
