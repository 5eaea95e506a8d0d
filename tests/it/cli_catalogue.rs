//! `recourse catalogue …` and `classify` with the local overlay: the same
//! checks as the app, every refusal with its reason, exit codes, and an
//! exported patch that `git apply` takes and whose catalogue passes its fixtures.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{recourse_cmd, Run};

use recourse::catalogue::propose::propose;
use recourse::catalogue::{Catalogue, Fixture, CATALOGUE_VERSION};
use recourse::engine::overlay::{overlay_dir, Overlay, RULES_FILE};
use recourse::evidence::{Evidence, Provider, RawEvidence};

fn recourse(db: &Path, args: &[&str]) -> Run {
    let output = recourse_cmd(db, args).env("TZ", "UTC").output();
    Run::from(output.expect("the recourse binary runs"))
}

fn rule_file(dir: &Path, body: &str) -> PathBuf {
    let path = dir.join("rule.toml");
    std::fs::write(&path, body).unwrap();
    path
}

fn rule(id: &str, extra: &str, text: &str) -> String {
    format!(
        "[[rule]]\nid = \"{id}\"\ndescription = \"gizmo trouble\"\npriority = 78\nproviders = [\"any\"]\ncode = \"provider_unavailable\"\nconfidence = \"medium\"\nscope = \"provider\"\n{extra}\n[[rule.match]]\ntext = '{text}'\n"
    )
}

const GIZMO: &str = "the gizmo service jammed again";

#[test]
fn an_added_rule_acts_only_once_reviewed_and_builtin_only_ignores_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let file = rule_file(
        dir.path(),
        &rule("local.gizmo.jammed.v1", "", "gizmo service jammed"),
    );
    let added = recourse(&db, &["catalogue", "add", file.to_str().unwrap()]);
    assert_eq!(added.code, 0, "{}", added.stderr);
    assert!(
        added.stdout.contains("not reviewed: shown, never acted on"),
        "{}",
        added.stdout
    );
    let listed = recourse(&db, &["catalogue", "list"]);
    assert!(listed
        .stdout
        .starts_with(&format!("catalogue {CATALOGUE_VERSION}+local.1\n")));
    assert!(listed.stdout.contains("local.gizmo.jammed.v1  provider_unavailable (transient)  priority 78  any provider  [local, not reviewed]"), "{}", listed.stdout);

    let unreviewed = recourse(&db, &["classify", GIZMO]);
    assert!(
        unreviewed
            .stdout
            .contains("would classify as “Provider unavailable” (transient), not reviewed"),
        "{}",
        unreviewed.stdout
    );
    assert!(
        unreviewed.stdout.contains("class:       unclassified"),
        "{}",
        unreviewed.stdout
    );

    let reviewed = recourse(
        &db,
        &["catalogue", "add", "--reviewed", file.to_str().unwrap()],
    );
    assert_eq!(reviewed.code, 0, "{}", reviewed.stderr);
    let acting = recourse(&db, &["classify", GIZMO]);
    assert!(
        acting.stdout.contains("class:       transient"),
        "{}",
        acting.stdout
    );
    assert!(acting
        .stdout
        .contains(&format!("catalogue:   {CATALOGUE_VERSION}+local.2")));
    let builtin = recourse(&db, &["classify", "--builtin-only", GIZMO]);
    assert!(
        builtin.stdout.contains("class:       unclassified"),
        "{}",
        builtin.stdout
    );
    assert!(builtin
        .stdout
        .contains(&format!("catalogue:   {CATALOGUE_VERSION}\n")));

    let shown = recourse(&db, &["catalogue", "show", "local.gizmo.jammed.v1"]);
    assert!(
        shown.stdout.contains("origin:      local\n"),
        "{}",
        shown.stdout
    );
    assert!(shown.stdout.contains("pattern 0:   gizmo service jammed"));
}

#[test]
fn a_broad_rule_is_refused_with_its_reason_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let file = rule_file(dir.path(), &rule("local.broad.rule.v1", "", r"(?i)error\W"));
    let run = recourse(
        &db,
        &["catalogue", "add", "--reviewed", file.to_str().unwrap()],
    );
    assert_eq!(run.code, 2);
    assert!(run.stderr.starts_with("refused: pattern: the pattern of alternative 1 has only 5 characters of fixed text; at least 8"), "{}", run.stderr);
    assert!(
        run.stderr
            .contains("refused: pattern: the rule matches ordinary text from "),
        "{}",
        run.stderr
    );
    assert!(
        !overlay_dir(&db).join(RULES_FILE).exists(),
        "nothing half-written"
    );
}

#[test]
fn a_rule_changing_fixtures_needs_each_confirmed_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let body = rule("local.overload.other.v1", "", r#"type":"overloaded_error"#)
        .replace("priority = 78", "priority = 999");
    let file = rule_file(dir.path(), &body);
    let tested = recourse(&db, &["catalogue", "test", file.to_str().unwrap()]);
    assert_eq!(tested.code, 2, "{}", tested.stderr);
    let names: Vec<String> = tested
        .stderr
        .lines()
        .filter_map(|l| l.strip_prefix("refused: confirmed_fixtures: fixture "))
        .map(|l| l.split(' ').next().unwrap().to_owned())
        .collect();
    assert!(!names.is_empty(), "{}", tested.stderr);
    assert!(tested.stderr.contains(" changes from provider_overloaded (transient, rule anthropic.overloaded.v1) to provider_unavailable (transient, rule local.overload.other.v1): confirm it by name to save anyway"), "{}", tested.stderr);
    let mut args = vec!["catalogue", "add", "--reviewed", file.to_str().unwrap()];
    for name in &names[1..] {
        args.extend(["--confirm", name.as_str()]);
    }
    let partly = recourse(&db, &args);
    assert_eq!(partly.code, 2, "one unconfirmed fixture still refuses");
    args.extend(["--confirm", names[0].as_str()]);
    let confirmed = recourse(&db, &args);
    assert_eq!(confirmed.code, 0, "{}", confirmed.stderr);
}

#[test]
fn invalid_rules_and_unknown_ids_are_bad_input_with_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let reused = rule_file(
        dir.path(),
        &rule("anthropic.overloaded.v1", "", "gizmo service jammed"),
    );
    let run = recourse(&db, &["catalogue", "add", reused.to_str().unwrap()]);
    assert_eq!(run.code, 2);
    assert_eq!(run.stderr, "refused: id: rule anthropic.overloaded.v1 reuses the id of a built-in rule; to replace that rule say `overrides = \"anthropic.overloaded.v1\"`, otherwise choose a new id\n");
    let removed = recourse(&db, &["catalogue", "remove", "local.none.here.v1"]);
    assert_eq!(
        (removed.code, removed.stderr.as_str()),
        (2, "error: local rule local.none.here.v1 does not exist\n")
    );
    let exported = recourse(&db, &["catalogue", "export", "local.none.here.v1"]);
    assert_eq!(
        (exported.code, exported.stderr.as_str()),
        (2, "error: local rule local.none.here.v1 does not exist\n")
    );
    let shown = recourse(&db, &["catalogue", "show", "local.none.here.v1"]);
    assert_eq!(shown.code, 2);
    assert!(shown
        .stderr
        .starts_with("error: no rule local.none.here.v1 in catalogue "));
    let garbage = rule_file(dir.path(), "colour = 'red'\n");
    let run = recourse(&db, &["catalogue", "test", garbage.to_str().unwrap()]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.starts_with(&format!(
            "refused: {}: not a rules file: ",
            garbage.display()
        )),
        "{}",
        run.stderr
    );
}

#[test]
fn a_broken_local_file_is_reported_and_the_builtin_catalogue_still_classifies() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let folder = overlay_dir(&db);
    std::fs::create_dir_all(&folder).unwrap();
    let bad = format!(
        "revision = 3\n{}",
        rule("local.a.rule.v1", "", "unclosed (")
    );
    std::fs::write(folder.join(RULES_FILE), bad).unwrap();
    let run = recourse(
        &db,
        &[
            "classify",
            "API Error: 529 {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\"}}",
        ],
    );
    assert_eq!(run.code, 0, "classification goes on");
    assert!(
        run.stdout.contains("class:       transient"),
        "{}",
        run.stdout
    );
    let expected = format!(
        "warning: local catalogue {} is not used: rule local.a.rule.v1: invalid regex: ",
        folder.join(RULES_FILE).display()
    );
    assert!(run.stderr.starts_with(&expected), "{}", run.stderr);
    assert!(run
        .stderr
        .trim_end()
        .ends_with("; using the built-in catalogue"));
}

/// Copies the repository's catalogue into a fresh git work tree.
fn repository_copy(to: &Path) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    std::fs::create_dir_all(to.join("src/catalogue")).unwrap();
    std::fs::copy(
        root.join("src/catalogue/rules.toml"),
        to.join("src/catalogue/rules.toml"),
    )
    .unwrap();
    let status = Command::new("cp")
        .args(["-r"])
        .arg(root.join("fixtures"))
        .arg(to.join("fixtures"))
        .status()
        .unwrap();
    assert!(status.success());
    assert!(Command::new("git")
        .arg("init")
        .arg("-q")
        .arg(to)
        .status()
        .unwrap()
        .success());
}

fn fixture_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            fixture_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "toml") {
            out.push(path);
        }
    }
}

fn export_applies_and_passes(db: &Path, id: &str) -> Catalogue {
    let exported = recourse(db, &["catalogue", "export", id]);
    assert_eq!(exported.code, 0, "{}", exported.stderr);
    let repo = db.parent().unwrap().join("repo");
    repository_copy(&repo);
    let patch = repo.join("rule.patch");
    std::fs::write(&patch, &exported.stdout).unwrap();
    let applied = Command::new("git")
        .current_dir(&repo)
        .args(["apply", "rule.patch"])
        .output()
        .unwrap();
    assert!(
        applied.status.success(),
        "git apply: {}\n{}",
        String::from_utf8_lossy(&applied.stderr),
        exported.stdout
    );
    let patched =
        Catalogue::parse(&std::fs::read_to_string(repo.join("src/catalogue/rules.toml")).unwrap())
            .expect("the patched catalogue loads");
    let mut files = Vec::new();
    fixture_files(&repo.join("fixtures/catalogue"), &mut files);
    let failing: Vec<String> = files
        .iter()
        .filter_map(|f| {
            let problems = Fixture::parse(&std::fs::read_to_string(f).unwrap())
                .unwrap()
                .check_with(&patched);
            (!problems.is_empty()).then(|| format!("{}: {problems:?}", f.display()))
        })
        .collect();
    assert!(failing.is_empty(), "{failing:#?}");
    patched
}

#[test]
fn an_exported_rule_is_a_patch_git_applies_and_its_catalogue_passes_every_fixture() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let evidence = Evidence::from_raw(RawEvidence::new(Provider::Codex, GIZMO, chrono::Utc::now()));
    let mut draft = propose(&evidence, |_| false);
    draft.code = recourse::classification::SemanticCode::ProviderUnavailable;
    let mut overlay = Overlay::open(overlay_dir(&db));
    overlay
        .save(
            &draft.to_spec(true),
            Some(("test evidence", &evidence)),
            &[],
            &[],
            chrono_tz::Tz::UTC,
        )
        .unwrap();
    let patched = export_applies_and_passes(&db, &draft.id);
    assert!(
        patched.rules.iter().any(|r| r.id == draft.id),
        "the rule is added upstream"
    );
    assert!(
        dir.path()
            .join("repo/fixtures/catalogue/codex")
            .read_dir()
            .unwrap()
            .any(|e| e
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with("local-codex-")),
        "its fixture comes along"
    );
}

#[test]
fn an_exported_override_replaces_the_builtin_block() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let body = rule("anthropic.overloaded.v1", "overrides = \"anthropic.overloaded.v1\"\n[[rule.match]]\nerror_type = [\"overloaded_error\"]", r"\btype\W{1,8}overloaded_error\b|Repeated 529 Overloaded errors|gizmo service jammed")
        .replace("code = \"provider_unavailable\"", "code = \"provider_overloaded\"")
        .replace("priority = 78", "priority = 80");
    let file = rule_file(dir.path(), &body);
    let added = recourse(
        &db,
        &["catalogue", "add", "--reviewed", file.to_str().unwrap()],
    );
    assert_eq!(added.code, 0, "{}", added.stderr);
    let listed = recourse(&db, &["catalogue", "list"]);
    assert!(
        listed
            .stdout
            .contains("[local, overrides anthropic.overloaded.v1]"),
        "{}",
        listed.stdout
    );
    let patched = export_applies_and_passes(&db, "anthropic.overloaded.v1");
    assert_eq!(
        patched.rules.len(),
        recourse::catalogue::builtin().rules.len(),
        "replaced, not added"
    );
}

#[test]
fn simulate_classifies_text_failures_with_local_rules_unless_builtin_only() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let file = rule_file(
        dir.path(),
        &rule("local.gizmo.jammed.v1", "", "gizmo service jammed"),
    );
    assert_eq!(
        recourse(
            &db,
            &["catalogue", "add", "--reviewed", file.to_str().unwrap()]
        )
        .code,
        0
    );
    let failures = dir.path().join("failures.json");
    std::fs::write(
        &failures,
        format!(r#"{{"start": "2026-03-01T12:00:00Z", "failures": [{{"text": "{GIZMO}", "provider": "codex"}}]}}"#),
    )
    .unwrap();
    let policy = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/policy/valid.json");
    let args = |extra: &[&'static str]| {
        let mut a = vec![
            "simulate",
            "--policy",
            policy.to_str().unwrap(),
            "--errors",
            failures.to_str().unwrap(),
        ]
        .into_iter()
        .map(str::to_owned)
        .collect::<Vec<_>>();
        a.extend(extra.iter().map(|s| (*s).to_owned()));
        a
    };
    let run = |extra: &[&'static str]| {
        let owned = args(extra);
        let refs: Vec<&str> = owned.iter().map(String::as_str).collect();
        recourse(&db, &refs)
    };
    let local = run(&[]);
    assert_eq!(local.code, 0, "{}", local.stderr);
    assert!(
        local
            .stdout
            .contains("transient    provider_unavailable     -> transient retry 1 of 3"),
        "{}",
        local.stdout
    );
    let builtin = run(&["--builtin-only"]);
    assert!(
        builtin.stdout.contains("unclassified unknown"),
        "{}",
        builtin.stdout
    );
    assert!(
        builtin.stdout.contains("-> manual recovery"),
        "{}",
        builtin.stdout
    );

    std::fs::write(&failures, r#"{"failures": [{"text": "x", "colour": 1}]}"#).unwrap();
    let bad = run(&[]);
    assert_eq!(bad.code, 2);
    assert!(
        bad.stderr.starts_with("failures[0]: unknown field \"colour\" in a text failure (known fields: text, provider, http_status, effect, session)\n"),
        "{}",
        bad.stderr
    );
}

#[test]
fn stats_count_rules_fixtures_and_the_corpus_and_include_local_ones() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let before = recourse(&db, &["catalogue", "stats", "--json"]);
    assert_eq!(before.code, 0, "{}", before.stderr);
    let stats: serde_json::Value = serde_json::from_str(&before.stdout).unwrap();
    assert_eq!(stats["version"], CATALOGUE_VERSION);
    assert_eq!(stats["rules"]["local"], 0);
    let fixtures = stats["fixtures"]["total"].as_u64().unwrap();
    assert!(fixtures >= 600, "{fixtures}");
    let by_source = &stats["fixtures"]["by_source_kind"];
    assert!(
        by_source["issue_tracker"].as_u64().unwrap() >= 300,
        "{by_source}"
    );
    assert!(stats["negative_corpus"]["total"].as_u64().unwrap() >= 200);

    let file = rule_file(
        dir.path(),
        &rule("local.gizmo.jammed.v1", "", "gizmo service jammed"),
    );
    let added = recourse(&db, &["catalogue", "add", file.to_str().unwrap()]);
    assert_eq!(added.code, 0, "{}", added.stderr);
    let after = recourse(&db, &["catalogue", "stats"]);
    assert_eq!(after.code, 0, "{}", after.stderr);
    let rules = stats["rules"]["total"].as_u64().unwrap() + 1;
    assert!(
        after
            .stdout
            .contains(&format!("rules: {rules} ({} built-in, 1 local)", rules - 1)),
        "{}",
        after.stdout
    );
    assert!(
        after.stdout.contains("negative corpus: "),
        "{}",
        after.stdout
    );
}
