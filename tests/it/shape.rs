//! The shape the engine was reshaped into, held by reading the source:
//! only the route state machine builds route rows, plans and attempt
//! records (the store only restores what it read); an agent kind's facts
//! live in its own file; no engine file grows past 500 lines; and the UI
//! keeps no copy of a rule the backend owns. (Plans and rows are also
//! read-only by type: their fields are private to `route`.)
//!
//! Each check reads code only (comments and strings blanked) and stops at
//! a file's first `#[cfg(test)]`: tests may build whatever they test.

use std::path::{Path, PathBuf};

use crate::layers::{code_only, root, rust_files};

/// The non-test code of every library file, with its path from the root.
fn library_code() -> Vec<(String, String)> {
    rust_files(&root().join("src"))
        .into_iter()
        .map(|path| {
            let source = std::fs::read_to_string(&path).unwrap();
            let code = code_only(&source);
            let code = match code.find("#[cfg(test)]") {
                Some(at) => code[..at].to_string(),
                None => code,
            };
            (relative(&path), code)
        })
        .collect()
}

fn relative(path: &Path) -> String {
    path.strip_prefix(root())
        .unwrap_or(path)
        .display()
        .to_string()
}

/// `file:line: what` for every occurrence of `needle` in a file `allowed`
/// does not accept.
fn found_outside(
    files: &[(String, String)],
    needle: &str,
    allowed: impl Fn(&str) -> bool,
) -> Vec<String> {
    let mut out = Vec::new();
    for (file, code) in files {
        if allowed(file) {
            continue;
        }
        for (i, line) in code.lines().enumerate() {
            if line.contains(needle) {
                out.push(format!("{file}:{}: {}", i + 1, line.trim()));
            }
        }
    }
    out
}

#[test]
fn only_the_state_machine_builds_rows_plans_and_attempt_records() {
    let files = library_code();
    let in_route = |f: &str| f.starts_with("src/route/");
    let in_route_or_store = |f: &str| in_route(f) || f.starts_with("src/store/");
    let mut found = Vec::new();
    // The store restores a row from its columns; nobody else makes one.
    found.extend(found_outside(&files, "RouteRow::restore(", |f| {
        f.starts_with("src/store/")
    }));
    found.extend(found_outside(&files, "RouteRecord {", in_route_or_store));
    found.extend(found_outside(&files, "TransitionWrite {", in_route));
    found.extend(found_outside(&files, "Plan {", in_route));
    // Attempt records are made by the machine and read back by the store.
    found.extend(found_outside(&files, "AttemptRecord {", in_route_or_store));
    found.extend(found_outside(
        &files,
        "AttemptResultRecord {",
        in_route_or_store,
    ));
    assert!(
        found.is_empty(),
        "built outside route::machine:\n{}",
        found.join("\n")
    );
}

#[test]
fn an_agent_kinds_facts_live_in_its_own_file() {
    let files = library_code();
    let mut found = Vec::new();
    for variant in [
        "Simulated",
        "ClaudeCode",
        "Codex",
        "Gemini",
        "Opencode",
        "Generic",
    ] {
        // Outside `agent`, code asks the descriptor; it never matches on
        // a kind (the enum's variant list and registry are in agent/).
        found.extend(found_outside(
            &files,
            &format!("AgentKind::{variant}"),
            // The demo names the CLIs its simulated candidates fail like;
            // it decides nothing by kind.
            |f| f.starts_with("src/agent/") || f == "src/engine/seed.rs",
        ));
    }
    assert!(
        found.is_empty(),
        "agent kind facts outside src/agent/:\n{}",
        found.join("\n")
    );
}

#[test]
fn no_engine_file_is_over_500_lines() {
    let long: Vec<String> = rust_files(&root().join("src/engine"))
        .into_iter()
        .filter_map(|path| {
            let lines = std::fs::read_to_string(&path).unwrap().lines().count();
            (lines > 500).then(|| format!("{}: {lines} lines", relative(&path)))
        })
        .collect();
    assert!(
        long.is_empty(),
        "split by what it owns:\n{}",
        long.join("\n")
    );
}

/// Every `.ts` and `.svelte` file of the UI but the generated bindings.
fn ui_sources() -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut dirs = vec![root().join("ui/src")];
    while let Some(d) = dirs.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "ts" || e == "svelte")
                && !path.ends_with("bindings.ts")
            {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// A list literal of two or more of `names`, quoted: a copy of a backend
/// set (filter states, dispatching actions, a kind's list).
fn copied_lists(text: &str, names: &[&str]) -> Vec<String> {
    let quoted = |n: &&str| format!("\"{n}\"");
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let count = names
            .iter()
            .map(quoted)
            .filter(|q| line.contains(q))
            .count();
        if count >= 2 && line.contains('[') {
            out.push(format!("{}: {}", i + 1, line.trim()));
        }
    }
    out
}

#[test]
fn the_ui_keeps_no_copy_of_a_backend_rule() {
    let states = [
        "running",
        "waiting_reset",
        "retry_scheduled",
        "needs_manual",
        "stopped",
        "succeeded",
    ];
    let actions = ["retry_now", "skip_now", "cancel_wait", "stop", "resume"];
    let kinds = [
        "simulated",
        "claude_code",
        "codex",
        "gemini",
        "opencode",
        "generic",
    ];
    let mut found = Vec::new();
    for path in ui_sources() {
        let text = std::fs::read_to_string(&path).unwrap();
        let file = relative(&path);
        for hit in copied_lists(&text, &states)
            .into_iter()
            .chain(copied_lists(&text, &actions))
        {
            found.push(format!("{file}:{hit}"));
        }
        // What a kind does is its descriptor's (`policy_applies`,
        // `scripted`, `starter`), never a comparison with its name.
        for (i, line) in text.lines().enumerate() {
            for kind in kinds {
                if line.contains(&format!("kind === \"{kind}\""))
                    || line.contains(&format!("kind !== \"{kind}\""))
                {
                    found.push(format!("{file}:{}: {}", i + 1, line.trim()));
                }
            }
        }
        for words in ["Transient: ", "retry 1 of"] {
            if text.contains(words) {
                found.push(format!("{file}: policy wording {words:?}"));
            }
        }
    }
    assert!(
        found.is_empty(),
        "the UI retypes what the backend owns (export it through the bindings):\n{}",
        found.join("\n")
    );
}

#[test]
fn a_retyped_rule_in_the_ui_would_be_found() {
    let copy = r#"const FILTER_STATES = { active: ["running", "waiting_reset"] };"#;
    assert_eq!(
        copied_lists(copy, &["running", "waiting_reset"]).len(),
        1,
        "the check itself must catch a copied state list"
    );
    assert!(copied_lists(r#"if (s.state === "running") {"#, &["running", "stopped"]).is_empty());
}
