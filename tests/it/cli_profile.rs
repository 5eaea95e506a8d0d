//! `recourse profile …` through the binary: a profile created, exported,
//! edited in `$EDITOR`, imported on a fresh database and run without the
//! app; refusals that write nothing; the revision guard against an edit made
//! meanwhile elsewhere; `run` on an unknown profile; a closed pipe.

use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

use crate::common::{recourse_cmd, recourse_on};
use recourse::profile::document::load;
use recourse::profile::words;
use recourse::store::Store;

/// `recourse ARGS --db DB` with `env` added and no `$VISUAL` (it would
/// win over the test's `$EDITOR`).
fn recourse_env(db: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = recourse_cmd(db, args);
    command.envs(env.iter().copied()).env_remove("VISUAL");
    command.output().expect("recourse runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).to_string()
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/profiles")
        .join(name)
}

fn ok(out: &Output) -> String {
    assert_eq!(
        out.status.code(),
        Some(0),
        "stdout: {}\nstderr: {}",
        text(&out.stdout),
        text(&out.stderr)
    );
    text(&out.stdout)
}

fn profile_names(db: &Path) -> Vec<String> {
    Store::open_read_only(db)
        .unwrap()
        .list_profiles()
        .unwrap()
        .into_iter()
        .map(|p| p.name)
        .collect()
}

/// Writes an `$EDITOR` script that runs `body` with the file as `$1`.
fn editor(dir: &Path, name: &str, body: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\nset -e\n{body}\n")).unwrap();
    let mut perms = std::fs::metadata(&path).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&path, perms).unwrap();
    path.display().to_string()
}

#[test]
fn a_profile_is_created_exported_edited_imported_on_a_fresh_database_and_run() {
    let dir = tempfile::tempdir().unwrap();
    let first = dir.path().join("first.db");
    let out = recourse_on(
        &first,
        &["profile", "create", "Work", "--agent", "simulated"],
    );
    assert!(
        ok(&out).contains("created profile \"Work\" with one candidate, \"Simulated provider\"")
    );

    // Edit: a second simulated candidate that fails once, then succeeds,
    // goes first, with a retry of the transient class.
    let edit = editor(
        dir.path(),
        "edit.sh",
        r#"python3 - "$1" <<'PY'
import json, sys
p = sys.argv[1]
doc = json.load(open(p))
c = json.loads(json.dumps(doc["candidates"][0]))
c["name"] = "flaky"
c["agent"]["script"] = [{"outcome": "overloaded", "after_ms": 20}, {"outcome": "succeed", "after_ms": 20}]
c["transient"]["retry"] = {"enabled": True, "max_retries": 2, "initial_interval_seconds": 1}
doc["candidates"].insert(0, c)
json.dump(doc, open(p, "w"), indent=2)
PY"#,
    );
    let out = recourse_env(&first, &["profile", "edit", "Work"], &[("EDITOR", &edit)]);
    let said = ok(&out);
    assert!(
        said.contains("saved profile \"Work\" (revision 2)"),
        "{said}"
    );
    assert!(
        said.contains("Candidate “flaky”: added (Simulated provider at position 1)"),
        "the saved edit lists its changes: {said}"
    );

    let file = dir.path().join("work.json");
    ok(&recourse_on(
        &first,
        &["profile", "export", "Work", file.to_str().unwrap()],
    ));
    let exported = std::fs::read_to_string(&file).unwrap();
    assert!(
        !exported.contains("\"program\"") && !exported.contains("\"env\""),
        "defaults are left out of the file: {exported}"
    );

    let fresh = dir.path().join("fresh.db");
    let said = ok(&recourse_on(
        &fresh,
        &["profile", "import", file.to_str().unwrap()],
    ));
    assert!(said.starts_with("created profile \"Work\":"), "{said}");
    assert_eq!(
        profile_names(&fresh),
        vec!["Work"],
        "an import seeds no demo profile"
    );
    let out = recourse_on(&fresh, &["run", "--profile", "Work", "--prompt", "go"]);
    assert_eq!(ok(&out), "(simulated) The task is done.\n", "the answer");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("candidate 1/2 flaky"), "{said}");
    assert!(said.contains("succeeded"), "{said}");

    // The same document exported from the fresh database is the same file.
    let again = ok(&recourse_on(&fresh, &["profile", "export", "Work"]));
    assert_eq!(again, exported, "export → import → export is stable");

    // `-` is standard output, as `import -` reads standard input: no file named "-".
    let out = recourse_cmd(&fresh, &["profile", "export", "Work", "-"])
        .current_dir(dir.path())
        .output()
        .expect("recourse runs");
    assert_eq!(ok(&out), exported, "the document on standard output");
    assert!(
        !dir.path().join("-").exists(),
        "no file literally named “-” was written"
    );
}

#[test]
fn every_policy_shape_and_agent_kind_round_trips_through_a_database() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("round.db");
    let example = fixture("example.json");
    ok(&recourse_on(
        &db,
        &["profile", "import", example.to_str().unwrap()],
    ));
    let exported = ok(&recourse_on(&db, &["profile", "export", "Daily driver"]));
    let original = load(&std::fs::read_to_string(&example).unwrap()).unwrap();
    let back = load(&exported).unwrap();
    assert_eq!(back.document, original.document);
    let kinds: std::collections::HashSet<_> = back
        .document
        .candidates
        .iter()
        .map(|c| c.agent.kind)
        .collect();
    assert_eq!(
        kinds.len(),
        recourse::agent::AgentKind::ALL.len(),
        "the example covers every agent kind"
    );
    let said = ok(&recourse_on(
        &db,
        &["profile", "import", example.to_str().unwrap(), "--replace"],
    ));
    assert!(
        said.contains("already matches") && said.contains("nothing to do"),
        "{said}"
    );
}

#[test]
fn the_unclassified_exception_round_trips_through_a_database_and_is_shown() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("unclassified.db");
    let example = fixture("example.json");
    ok(&recourse_on(
        &db,
        &["profile", "import", example.to_str().unwrap()],
    ));
    let exported = load(&ok(&recourse_on(
        &db,
        &["profile", "export", "Daily driver"],
    )))
    .unwrap();
    let opus = &exported.document.candidates[0];
    assert_eq!(
        opus.unclassified,
        recourse::policy::UnclassifiedPolicy::skip_after(3),
        "stored and exported as written"
    );
    assert!(
        !exported.document.candidates[1]
            .unclassified
            .repeated_failure
            .enabled,
        "a candidate whose document leaves the section out has it off"
    );
    let shown = ok(&recourse_on(&db, &["profile", "show", "Daily driver"]));
    assert!(
        shown.contains(
            "   unclassified: The first 2 identical unclassified failures with no output or \
             effects each wait for you; at the 3rd, skip to “codex”, once per route cycle."
        ),
        "{shown}"
    );
}

#[test]
fn a_legacy_document_is_imported_normalized() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("legacy.db");
    let out = recourse_on(
        &db,
        &[
            "profile",
            "import",
            fixture("legacy.json").to_str().unwrap(),
        ],
    );
    ok(&out);
    assert!(
        text(&out.stderr).contains("old generic action maps; they were normalized"),
        "{}",
        text(&out.stderr)
    );
    let doc = load(&ok(&recourse_on(
        &db,
        &["profile", "show", "Old routing", "--json"],
    )))
    .unwrap();
    let gpt = &doc.document.candidates[1];
    assert_eq!(gpt.agent.model.as_deref(), Some("gpt-5"));
    assert_eq!(
        (
            gpt.transient.retry.max_retries,
            gpt.transient.retry.initial_interval_seconds
        ),
        (1, 5),
        "retry_same is one retry after 5 s"
    );
}

#[test]
fn damaged_newer_and_oversized_documents_are_refused_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("none.db");
    let damaged = dir.path().join("damaged.json");
    std::fs::write(&damaged, "{\"version\": 1, \"name\": \"X\", \"candi").unwrap();
    let big = dir.path().join("big.json");
    std::fs::write(&big, vec![b' '; 1024 * 1024 + 1]).unwrap();
    let cases = [
        (
            damaged,
            "  The file is not valid JSON at line 1, column 34: the file ends inside a text value \
             (a closing \" is missing)\n",
        ),
        (
            fixture("invalid-newer-version.json"),
            "  Version: 2 is newer than this build reads (1); update Recourse to import it (at version)",
        ),
        (big, "larger than 1 MiB; refusing to read it"),
    ];
    for (file, expected) in cases {
        let out = recourse_on(&db, &["profile", "import", file.to_str().unwrap()]);
        assert_ne!(out.status.code(), Some(0), "{}", file.display());
        assert!(
            text(&out.stderr).contains(expected),
            "{}: {}",
            file.display(),
            text(&out.stderr)
        );
        assert!(!db.exists(), "a refused import creates no database");
    }
    // On an existing database, the refusal leaves the profiles as they were.
    ok(&recourse_on(&db, &["profile", "create", "Kept"]));
    let out = recourse_on(
        &db,
        &[
            "profile",
            "import",
            fixture("invalid-values.json").to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    let said = text(&out.stderr);
    assert!(said.contains("5 problems; nothing was written"), "{said}");
    assert_eq!(profile_names(&db), vec!["Kept"]);
}

/// A document wrong in several places is refused with each of them, in
/// words, each once: not only the first serde met.
#[test]
fn an_import_is_refused_with_every_wrong_word_and_value() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("several.db");
    let file = fixture("invalid-several-words.json");
    let out = recourse_on(&db, &["profile", "import", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let said = text(&out.stderr);
    assert!(said.contains("7 problems; nothing was written"), "{said}");
    let names = ["opus".to_string(), "mine".to_string()];
    let later = "“later” is not one of skip, stop";
    for path in [
        "candidates[0].transient.on_exhausted",
        "candidates[1].hard.on_exhausted",
    ] {
        let line = format!(
            "  {}: {later} (at {path})\n",
            words::field_words(path, &names)
        );
        assert_eq!(said.matches(&line).count(), 1, "{line}in {said}");
    }
    for (start, path) in [
        ("Candidate 1 “opus” › Agent: “modle” is not a field Recourse knows here", "candidates[0].agent"),
        ("Candidate 1 “opus” › Idle timeout: expected a whole number, 0 or more, found the text “soon”", "candidates[0].agent.timeouts.idle_s"),
        ("Candidate 1 “opus” › Hard › Retries: must be 1–10 when enabled (11 is too many)", "candidates[0].hard.retry.max_retries"),
        ("Candidate 2 “mine” › Agent kind: “cursor” is not an agent kind Recourse knows", "candidates[1].agent.kind"),
        ("Candidate 2 “mine” › Hard › Wait for a trusted provider reset: expected true or false, found the text “yes”", "candidates[1].hard.wait_for_reset.enabled"),
    ] {
        let line = said
            .lines()
            .find(|l| l.starts_with(&format!("  {start}")))
            .unwrap_or_else(|| panic!("{start}: {said}"));
        assert!(line.ends_with(&format!("(at {path})")), "{line}");
    }
    assert!(!db.exists(), "a refused import creates no database");
}

/// The database is never read as a document nor written over by an export,
/// by any of its names: reading it would close a descriptor of it in a
/// process that holds it open (dropping that process's SQLite locks), and
/// an export would replace it.
#[test]
fn the_database_is_neither_imported_nor_exported_over() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("recourse.db");
    ok(&recourse_on(&db, &["profile", "create", "Kept"]));
    let alias = dir.path().join("another-name.json");
    std::os::unix::fs::symlink(&db, &alias).unwrap();
    let before = std::fs::read(&db).unwrap();
    for file in [&db, &alias] {
        let path = file.to_str().unwrap();
        let out = recourse_on(&db, &["profile", "import", path]);
        assert_ne!(out.status.code(), Some(0), "{path}");
        assert!(
            text(&out.stderr).contains(&format!(
                "cannot read {path}: it is Recourse's own database, not a profile document"
            )),
            "{}",
            text(&out.stderr)
        );
        let out = recourse_on(&db, &["profile", "export", "Kept", path]);
        assert_ne!(out.status.code(), Some(0), "{path}");
        assert!(
            text(&out.stderr).contains(&format!(
                "cannot write {path}: it is Recourse's own database, not a profile document"
            )),
            "{}",
            text(&out.stderr)
        );
    }
    assert_eq!(
        std::fs::read(&db).unwrap(),
        before,
        "the database file is untouched"
    );
    assert_eq!(profile_names(&db), vec!["Kept"]);
}

/// A key passed as an argument is masked in the change list the way the
/// debug log masks it (one rule for arguments), never printed in clear.
#[test]
fn a_secret_argument_is_masked_in_the_change_list() {
    const KEY: &str = "sk-ant-api03-Zq7XbR2mK9pLw4TnV8cY1dF6hJ3sG5aE0uIoPzQxWvBnMkLjHgFdSa";
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("args.db");
    let example = fixture("example.json");
    ok(&recourse_on(
        &db,
        &["profile", "import", example.to_str().unwrap()],
    ));
    let changed = dir.path().join("changed.json");
    let edited = std::fs::read_to_string(&example).unwrap().replacen(
        "\"args\": [\"--sandbox\"]",
        &format!("\"args\": [\"--sandbox\", \"--api-key\", \"{KEY}\"]"),
        1,
    );
    assert!(
        edited.contains(KEY),
        "the fixture has gemini's args to change"
    );
    std::fs::write(&changed, edited).unwrap();
    for extra in [&["--dry-run"][..], &[]] {
        let mut args = vec!["profile", "import", changed.to_str().unwrap(), "--replace"];
        args.extend_from_slice(extra);
        let said = ok(&recourse_on(&db, &args));
        assert!(!said.contains(KEY), "the key is printed in clear: {said}");
        assert!(!said.contains("sk-ant"), "not even its start: {said}");
        let line = said
            .lines()
            .find(|l| l.contains("Extra arguments"))
            .unwrap_or_else(|| panic!("the argument change is listed: {said}"));
        assert!(
            line.starts_with("  Candidate “gemini” › Extra arguments: [\"--sandbox\"] → (masked) --sandbox --api-key "),
            "before as it was, after masked: {line}"
        );
    }
}

#[test]
fn an_existing_name_needs_replace_and_the_changes_are_listed() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("replace.db");
    let example = fixture("example.json");
    ok(&recourse_on(
        &db,
        &["profile", "import", example.to_str().unwrap()],
    ));
    let changed = dir.path().join("changed.json");
    let edited = std::fs::read_to_string(&example)
        .unwrap()
        .replacen("\"max_retries\": 3", "\"max_retries\": 5", 1)
        .replace("\"threshold\": 3", "\"threshold\": 5")
        .replace("http://127.0.0.1:3128", "http://127.0.0.1:8080");
    std::fs::write(&changed, edited).unwrap();

    let out = recourse_on(&db, &["profile", "import", changed.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("a profile named “Daily driver” already exists; `--replace`"),
        "{}",
        text(&out.stderr)
    );

    let dry = ok(&recourse_on(
        &db,
        &[
            "profile",
            "import",
            changed.to_str().unwrap(),
            "--replace",
            "--dry-run",
        ],
    ));
    assert!(
        dry.contains("would replace profile \"Daily driver\":"),
        "{dry}"
    );
    assert!(
        dry.contains("  Candidate “opus” › Transient › Retries: 3 → 5\n"),
        "each change in the words the app shows, not the document's path: {dry}"
    );
    assert!(
        dry.contains("  Candidate “opus” › Unclassified › Identical failures: 3 → 5\n"),
        "{dry}"
    );
    assert!(
        dry.contains(
            "  Candidate “opus” › Environment variable HTTPS_PROXY: (hidden) → (hidden)\n"
        ),
        "an environment value is never printed: {dry}"
    );
    assert!(!dry.contains("8080"), "{dry}");

    let said = ok(&recourse_on(
        &db,
        &["profile", "import", changed.to_str().unwrap(), "--replace"],
    ));
    assert!(
        said.starts_with("replaced profile \"Daily driver\":"),
        "{said}"
    );
    let shown = ok(&recourse_on(&db, &["profile", "show", "Daily driver"]));
    assert!(
        shown.contains(
            "transient: Retry after 5 s, 10 s, 20 s, 40 s, 1 min 20 s, then skip to “codex”."
        ),
        "{shown}"
    );
}

#[test]
fn an_edit_made_elsewhere_meanwhile_is_not_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("guard.db");
    let example = fixture("example.json");
    ok(&recourse_on(
        &db,
        &["profile", "import", example.to_str().unwrap()],
    ));
    let other = dir.path().join("other.json");
    let text_other = std::fs::read_to_string(&example).unwrap().replacen(
        "\"max_retries\": 3",
        "\"max_retries\": 4",
        1,
    );
    std::fs::write(&other, text_other).unwrap();
    // While the editor is open, another command saves the same profile.
    let edit = editor(
        dir.path(),
        "race.sh",
        &format!(
            "{bin} profile import {other} --replace --db {db} >/dev/null\n\
             sed -i 's/\"max_retries\": 2/\"max_retries\": 9/' \"$1\"",
            bin = env!("CARGO_BIN_EXE_recourse"),
            other = other.display(),
            db = db.display()
        ),
    );
    let out = recourse_env(
        &db,
        &["profile", "edit", "Daily driver"],
        &[("EDITOR", &edit)],
    );
    assert_eq!(out.status.code(), Some(1));
    let said = text(&out.stderr);
    assert!(
        said.contains("could not be saved: the profile was changed elsewhere"),
        "{said}"
    );
    let kept = said
        .split("your edit is kept at ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .expect("the message names the kept file");
    assert!(
        std::fs::read_to_string(kept)
            .unwrap()
            .contains("\"max_retries\": 9"),
        "the edit is kept, not lost"
    );
    let shown = load(&ok(&recourse_on(
        &db,
        &["profile", "show", "Daily driver", "--json"],
    )))
    .unwrap();
    assert_eq!(
        shown.document.candidates[0].transient.retry.max_retries, 4,
        "the other save stands"
    );
    let _ = std::fs::remove_file(kept);
}

#[test]
fn an_invalid_edit_is_kept_and_nothing_is_saved() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("invalid.db");
    ok(&recourse_on(
        &db,
        &["profile", "create", "Work", "--agent", "codex"],
    ));
    let edit = editor(
        dir.path(),
        "bad.sh",
        r#"sed -i 's/"on_exhausted": "skip"/"on_exhausted": "later"/' "$1""#,
    );
    let out = recourse_env(&db, &["profile", "edit", "Work"], &[("EDITOR", &edit)]);
    assert_eq!(out.status.code(), Some(1));
    let said = text(&out.stderr);
    assert!(
        said.contains(
            "› Hard › When recovery is used up: “later” is not one of skip, stop \
             (at candidates[0].hard.on_exhausted)"
        ),
        "{said}"
    );
    assert!(
        said.contains("nothing was saved; your edit is kept at "),
        "{said}"
    );
    let revision = Store::open_read_only(&db).unwrap().list_profiles().unwrap()[0].revision;
    assert_eq!(revision, 1, "the profile was not written");
    let unchanged = editor(dir.path(), "same.sh", "true");
    let said = ok(&recourse_env(
        &db,
        &["profile", "edit", "Work"],
        &[("EDITOR", &unchanged)],
    ));
    assert!(said.contains("no changes"), "{said}");
}

#[test]
fn run_on_an_unknown_profile_lists_the_profiles_and_creates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("missing.db");
    let out = recourse_on(&db, &["run", "--profile", "Wrok", "--prompt", "go"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr)
            .contains("profile \"Wrok\" does not exist, and there are no profiles yet"),
        "{}",
        text(&out.stderr)
    );
    assert!(!db.exists(), "no database is created for a mistyped name");

    ok(&recourse_on(&db, &["profile", "create", "Work"]));
    ok(&recourse_on(&db, &["profile", "create", "Home"]));
    let before = std::fs::read(&db).unwrap();
    let out = recourse_on(&db, &["run", "--profile", "Wrok", "--prompt", "go"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr)
            .contains("profile \"Wrok\" does not exist; the profiles are: \"Home\", \"Work\""),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(std::fs::read(&db).unwrap(), before, "nothing was written");
    assert_eq!(
        profile_names(&db),
        vec!["Home", "Work"],
        "no demo profile was seeded"
    );
}

#[test]
fn rename_duplicate_delete_and_list() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("ops.db");
    ok(&recourse_on(
        &db,
        &["profile", "create", "A", "--agent", "gemini"],
    ));
    ok(&recourse_on(&db, &["profile", "duplicate", "A", "B"]));
    ok(&recourse_on(&db, &["profile", "rename", "A", "C"]));
    let out = recourse_on(&db, &["profile", "rename", "B", "C"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("error: a profile named “C” already exists\n"),
        "{}",
        text(&out.stderr)
    );
    let listed = ok(&recourse_on(&db, &["profile", "list"]));
    assert_eq!(
        listed, "B  (1 candidate: Gemini CLI)\nC  (1 candidate: Gemini CLI)\n",
        "the candidate --agent made is named by its kind's label"
    );
    ok(&recourse_on(&db, &["profile", "delete", "C"]));
    let json: serde_json::Value =
        serde_json::from_str(&ok(&recourse_on(&db, &["profile", "list", "--json"]))).unwrap();
    assert_eq!(json.as_array().unwrap().len(), 1);
    assert_eq!(json[0]["name"], "B");
    let out = recourse_on(&db, &["profile", "show", "C"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("profile \"C\" does not exist; the profiles are: \"B\""),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn listing_into_a_closed_pipe_does_not_panic() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("pipe.db");
    let example = fixture("example.json");
    ok(&recourse_on(
        &db,
        &["profile", "import", example.to_str().unwrap()],
    ));
    for args in [
        &["routes"][..],
        &["profile", "show", "Daily driver"][..],
        &["profile", "export", "Daily driver"][..],
        &["profile", "list"][..],
    ] {
        let mut child = recourse_cmd(&db, args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Close the reading end before the command writes, as `| head -0` would.
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let said = text(&out.stderr);
        assert!(!said.contains("panicked"), "{args:?}: {said}");
        assert!(!said.contains("Broken pipe"), "{args:?}: {said}");
    }
}

/// A document never carries a secret value, whether the keyring or the
/// database file keeps it: export, `show --json` and the editor's file
/// write `[masked]`, which keeps the stored value when the document is
/// imported over its profile and is refused where there is none to keep.
#[test]
fn a_document_never_carries_a_secret_and_a_masked_one_keeps_the_stored_value() {
    const KEY: &str = "sk-ant-api03-Zq7XbR2mK9pLw4TnV8cY1dF6hJ3sG5aE0uIoPzQxWvBnMkLjHgFdSa";
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("keys.db");
    let off = [("RECOURSE_KEYRING", "off")];
    let with_key = std::fs::read_to_string(fixture("example.json"))
        .unwrap()
        .replacen(
            "\"HTTPS_PROXY\": \"http://127.0.0.1:3128\"",
            &format!(
                "\"HTTPS_PROXY\": \"http://127.0.0.1:3128\", \"ANTHROPIC_API_KEY\": \"{KEY}\""
            ),
            1,
        );
    let file = dir.path().join("with-key.json");
    std::fs::write(&file, &with_key).unwrap();
    ok(&recourse_env(
        &db,
        &["profile", "import", file.to_str().unwrap()],
        &off,
    ));

    let exported = ok(&recourse_env(
        &db,
        &["profile", "export", "Daily driver"],
        &off,
    ));
    let shown = ok(&recourse_env(
        &db,
        &["profile", "show", "Daily driver", "--json"],
        &off,
    ));
    let seen_by_editor = dir.path().join("seen-by-editor.json");
    let edit = dir.path().join("editor.sh");
    std::fs::write(
        &edit,
        format!("#!/bin/sh\ncp \"$1\" {}\n", seen_by_editor.display()),
    )
    .unwrap();
    std::fs::set_permissions(&edit, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    ok(&recourse_env(
        &db,
        &["profile", "edit", "Daily driver"],
        &[
            ("RECOURSE_KEYRING", "off"),
            ("EDITOR", edit.to_str().unwrap()),
        ],
    ));
    let edited = std::fs::read_to_string(&seen_by_editor).unwrap();
    for (what, text) in [
        ("export", &exported),
        ("show --json", &shown),
        ("the editor's file", &edited),
    ] {
        assert!(!text.contains(KEY), "{what} carries the key: {text}");
        assert!(
            text.contains("\"ANTHROPIC_API_KEY\": \"[masked]\"")
                && text.contains("\"HTTPS_PROXY\": \"http://127.0.0.1:3128\""),
            "{what}: the secret is masked, the plain value kept: {text}"
        );
    }

    let back = dir.path().join("exported.json");
    std::fs::write(&back, &exported).unwrap();
    let said = ok(&recourse_env(
        &db,
        &["profile", "import", back.to_str().unwrap(), "--replace"],
        &off,
    ));
    assert!(
        said.contains("already matches"),
        "the stored key is kept: {said}"
    );
    let stored = Store::open(&db)
        .unwrap()
        .profile_by_name("Daily driver")
        .unwrap()
        .unwrap();
    assert_eq!(stored.candidates[0].agent.env["ANTHROPIC_API_KEY"], KEY);

    let fresh = dir.path().join("fresh.db");
    let out = recourse_env(&fresh, &["profile", "import", back.to_str().unwrap()], &off);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains(
            "› Environment variable ANTHROPIC_API_KEY: [masked] stands for a secret an exported \
             document leaves out, and this profile has no value of its own to keep; type the value \
             (at candidates[0].agent.env.ANTHROPIC_API_KEY)"
        ),
        "{}",
        text(&out.stderr)
    );

    let pointed = with_key.replace(KEY, "recourse-keyring:0123456789abcdef0123456789abcdef");
    std::fs::write(&file, pointed).unwrap();
    let out = recourse_env(
        &db,
        &["profile", "import", file.to_str().unwrap(), "--replace"],
        &off,
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains(
            "› Environment variable ANTHROPIC_API_KEY: refers to a keyring entry this candidate \
             does not have; type the value (at candidates[0].agent.env.ANTHROPIC_API_KEY)"
        ),
        "a document cannot point a candidate at a keyring entry: {}",
        text(&out.stderr)
    );
}

/// What `recourse profile import` prints about `document`, on a fresh database.
fn refusal_of(document: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("p.json");
    std::fs::write(&file, document).unwrap();
    let out = recourse_on(
        &dir.path().join("r.db"),
        &["profile", "import", file.to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(2));
    text(&out.stderr)
}

/// A one-candidate document, "opus", with `agent` and `hard_outcome` as given.
fn one_candidate(agent: &str, hard_retries: &str, hard_outcome: &str) -> String {
    format!(
        r#"{{"version": 1, "name": "P", "candidates": [{{"name": "opus", "agent": {agent},
            "transient": {{"wait_for_reset": {{"enabled": false, "max_wait_seconds": 0}},
                "retry": {{"enabled": false, "max_retries": 0, "initial_interval_seconds": 0}},
                "on_exhausted": "skip"}},
            "hard": {{"wait_for_reset": {{"enabled": false, "max_wait_seconds": 0}},
                "retry": {{"enabled": true, "max_retries": {hard_retries}, "initial_interval_seconds": 5}}
                {hard_outcome}}}}}]}}"#
    )
}

#[test]
fn a_refused_import_names_the_candidate_the_field_and_why_in_words_then_the_path() {
    let kind = recourse::agent::AgentKind::ALL[1].descriptor();
    let agent = format!("\"{}\"", kind.slug);
    let said = refusal_of(&one_candidate(
        r#"{"kind": "foo"}"#,
        "1",
        r#", "on_exhausted": "stop""#,
    ));
    assert!(
        said.contains("  Candidate 1 “opus” › Agent kind: “foo” is not an agent kind Recourse knows; it knows ")
            && said.contains(&format!("({})", kind.label))
            && said.ends_with(" (at candidates[0].agent.kind)\n"),
        "an unknown variant: {said}"
    );
    assert!(
        refusal_of(&one_candidate(&agent, "1", "")).contains(
            "  Candidate 1 “opus” › Hard › When recovery is used up: missing; the document \
             must give it (at candidates[0].hard.on_exhausted)\n"
        ),
        "a missing field, at that field"
    );
    assert!(
        refusal_of(&one_candidate(
            &agent,
            "\"three\"",
            r#", "on_exhausted": "stop""#
        ))
        .contains(
            "  Candidate 1 “opus” › Hard › Retries: expected a whole number, 0 or more, found the \
             text “three” (at candidates[0].hard.retry.max_retries)\n"
        ),
        "a wrong type"
    );
    assert!(
        refusal_of("{\"version\": 1,\n \"name\": \"X\",\n}").contains(
            "  The file is not valid JSON at line 3, column 1: a comma before a closing bracket \
             is not allowed\n"
        ),
        "a syntax error, with where in the file"
    );
}

#[test]
fn a_candidate_created_from_the_command_line_is_named_by_its_kind_label() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("label.db");
    // Any kind whose label is not its slug tells the two apart.
    let kind = recourse::agent::AgentKind::ALL
        .iter()
        .map(|k| k.descriptor())
        .find(|d| d.label != d.slug)
        .expect("a kind with a label of its own");
    let said = ok(&recourse_on(
        &db,
        &["profile", "create", "Work", "--agent", kind.slug],
    ));
    assert!(
        said.contains(&format!(
            "created profile \"Work\" with one candidate, {:?};",
            kind.label
        )),
        "{said}"
    );
    let shown = ok(&recourse_on(&db, &["profile", "show", "Work"]));
    assert!(
        shown.contains(&format!("1. {} — {}", kind.label, kind.slug)),
        "named as the app names a new candidate, not by the kind's id: {shown}"
    );
}

#[test]
fn a_candidate_created_from_the_command_line_starts_from_its_kinds_starter_policy() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("starter.db");
    for kind in recourse::agent::AgentKind::ALL {
        let info = recourse::engine::AgentKindInfo::of(kind);
        let name = format!("From {}", info.slug);
        let said = ok(&recourse_on(
            &db,
            &["profile", "create", &name, "--agent", &info.slug],
        ));
        let exported = ok(&recourse_on(&db, &["profile", "export", &name]));
        let doc = load(&exported).unwrap().document;
        let c = &doc.candidates[0];
        let policy = recourse::policy::CandidatePolicy {
            transient: c.transient.clone(),
            hard: c.hard.clone(),
            unclassified: c.unclassified,
        };
        assert_eq!(
            policy, info.starter.policy,
            "{}: the app's add-candidate path gives this kind its starter policy; \
             the command line gives the same, not an immediate skip",
            info.slug
        );
        // The app shows why beside a new candidate whose policy applies.
        assert_eq!(
            said.contains(&info.starter_why),
            info.policy_applies,
            "{}: the starter's why is said when the app shows it: {said}",
            info.slug
        );
    }
}
