//! Bad input to every `recourse` subcommand: a clear error naming the
//! argument, field or file and why, a non-zero exit code, nothing on stdout
//! and nothing written. Complements the message tests in `cli_policy.rs`,
//! `cli_classify.rs`, `engine_cli.rs` and `bad_database.rs`.

use crate::common::recourse;
use std::path::{Path, PathBuf};
use std::process::Output;

use crate::common::{seed_profile, uniform_policy};
use recourse::agent::{AgentSpec, SimStep};
use recourse::policy::Exhausted;
use recourse::profile::CandidateInput;

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn fixture(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/policy")
        .join(name)
        .display()
        .to_string()
}

/// Asserts a failed run: `code`, nothing on stdout, and stderr exactly `expected`.
fn assert_fails(args: &[&str], code: i32, expected: &str) {
    let out = recourse(args);
    assert_eq!(out.status.code(), Some(code), "{args:?}: {}", stderr(&out));
    assert!(out.stdout.is_empty(), "{args:?} printed nothing on stdout");
    assert_eq!(stderr(&out), expected, "{args:?}");
}

/// A database with one simulated profile "Quick" and one route that ended
/// needing a person (generation 2).
fn database_with_a_route(dir: &Path) -> PathBuf {
    let db = dir.join("cli.db");
    let candidate = CandidateInput::new(
        "sim",
        AgentSpec::simulated(vec![SimStep::ToolThenReset { after_ms: 10 }]),
        uniform_policy(None, None, Exhausted::Stop),
    );
    seed_profile(&db, "Quick", &[candidate]);
    let db_arg = db.display().to_string();
    let out = recourse(&[
        "run",
        "--profile",
        "Quick",
        "--prompt",
        "go",
        "--db",
        &db_arg,
    ]);
    assert_eq!(out.status.code(), Some(3), "the route needs a person");
    db
}

#[test]
fn argument_errors_name_the_argument_and_exit_2() {
    let cases: [(&[&str], &str); 9] = [
        (&["bogus"], "error: unrecognized subcommand 'bogus'"),
        (&["route", "abc"], "error: invalid value 'abc' for '<ID>': invalid digit found in string"),
        (&["route", "-5"], "error: unexpected argument '-5' found"),
        (
            &["action", "1", "stop", "--generation", "x"],
            "error: invalid value 'x' for '--generation <GENERATION>': invalid digit found in string",
        ),
        (&["action", "1", "stop"], "error: the following required arguments were not provided:"),
        (&["run", "--prompt", "go"], "error: the following required arguments were not provided:"),
        (&["policy", "check"], "error: the following required arguments were not provided:"),
        (
            &["simulate", "--policy", "p.json"],
            "error: the following required arguments were not provided:",
        ),
        (
            &["classify", "text", "--status", "abc"],
            "error: invalid value 'abc' for '--status <N>': invalid digit found in string",
        ),
    ];
    for (args, first_line) in cases {
        let out = recourse(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?} printed nothing on stdout");
        assert_eq!(
            stderr(&out).lines().next(),
            Some(first_line),
            "{args:?}: the first line says what is wrong"
        );
    }
}

#[test]
fn viewing_commands_never_create_a_database() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("typo.db");
    let db_arg = db.display().to_string();
    let missing = format!("error: no database at {db_arg}; `recourse run` creates it\n");
    assert_fails(&["route", "1", "--db", &db_arg], 1, &missing);
    assert_fails(
        &["action", "1", "stop", "--generation", "1", "--db", &db_arg],
        1,
        &missing,
    );
    let out = recourse(&["routes", "--db", &db_arg]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "no routes yet — start one with `recourse run --profile NAME --prompt TEXT`\n"
    );
    assert!(!db.exists(), "no database file was created");
}

#[test]
fn bad_ids_and_values_leave_the_database_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let db = database_with_a_route(dir.path());
    let db_arg = db.display().to_string();
    let before = std::fs::read(&db).unwrap();
    let cases: [(&[&str], &str); 6] = [
        (&["route", "99"], "error: route 99 does not exist\n"),
        (
            &["action", "99", "stop", "--generation", "1"],
            "error: route 99 does not exist\n",
        ),
        (
            &["action", "1", "resume", "--generation", "2"],
            "error: Resume is not possible while the route needs manual recovery\n",
        ),
        (
            &["run", "--profile", "Nope", "--prompt", "go"],
            "error: profile \"Nope\" does not exist; the profiles are: \"Quick\"\n",
        ),
        (
            &["run", "--profile", "Quick", "--prompt", "   "],
            "error: prompt: the prompt is empty\n",
        ),
        (
            &[
                "run",
                "--profile",
                "Quick",
                "--prompt",
                "go",
                "--cwd",
                "/nonexistent/dir",
            ],
            "error: cwd: /nonexistent/dir does not exist\n",
        ),
    ];
    for (args, expected) in cases {
        let mut args = args.to_vec();
        args.extend(["--db", &db_arg]);
        assert_fails(&args, 1, expected);
    }
    assert!(
        std::fs::read(&db).unwrap() == before,
        "refused commands wrote nothing to the database"
    );
}

#[test]
fn unreadable_policy_files_are_named_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().display().to_string();
    assert_fails(
        &["policy", "check", &folder],
        1,
        &format!("error: cannot read policy file {folder}: Is a directory (os error 21)\n"),
    );
    let binary = dir.path().join("policy.json");
    std::fs::write(&binary, b"{\"version\": 1, \xff\xfe}").unwrap();
    let binary = binary.display().to_string();
    assert_fails(
        &["policy", "normalize", &binary],
        1,
        &format!("error: cannot read policy file {binary}: stream did not contain valid UTF-8\n"),
    );
}

#[test]
fn out_of_range_and_mistyped_policy_values_name_their_path() {
    let cases = [
        (
            "invalid-too-large.json",
            "candidates[0].transient.retry.max_retries: invalid value: integer `4294967296`, expected u32",
        ),
        (
            "invalid-negative.json",
            "candidates[0].hard.wait_for_reset.max_wait_seconds: invalid value: integer `-300`, expected u32",
        ),
        (
            "invalid-fraction.json",
            "candidates[0].transient.retry.initial_interval_seconds: invalid type: floating point `2.5`, expected u32",
        ),
        (
            "invalid-version-string.json",
            "version: unsupported policy document version \"1\"; this build reads version 1",
        ),
        (
            "invalid-toml.toml",
            "document: not valid JSON: expected value at line 1 column 1",
        ),
    ];
    for (name, error) in cases {
        let path = fixture(name);
        for command in ["check", "normalize"] {
            assert_fails(
                &["policy", command, &path],
                2,
                &format!("{error}\n{path}: invalid policy document (1 error)\n"),
            );
        }
        assert_fails(
            &[
                "simulate",
                "--policy",
                &path,
                "--errors",
                &fixture("simulate/recovers.json"),
            ],
            2,
            &format!("{error}\n{path}: invalid policy document (1 error)\n"),
        );
    }
}

#[test]
fn a_failure_file_with_a_bad_start_names_the_field() {
    let errors = fixture("simulate/invalid-start.json");
    assert_fails(
        &[
            "simulate",
            "--policy",
            &fixture("valid.json"),
            "--errors",
            &errors,
        ],
        2,
        &format!(
            "start: input contains invalid characters at line 2 column 25\n\
             {errors}: invalid failure sequence\n"
        ),
    );
}

#[test]
fn a_failure_file_with_an_empty_key_names_it_quoted() {
    let dir = tempfile::tempdir().unwrap();
    let errors = dir.path().join("failures.json");
    std::fs::write(&errors, r#"{"failures": [], "": 1}"#).unwrap();
    let errors = errors.display().to_string();
    assert_fails(
        &[
            "simulate",
            "--policy",
            &fixture("valid.json"),
            "--errors",
            &errors,
        ],
        2,
        &format!(
            "[\"\"]: unknown field ``, expected `start` or `failures` at line 1 column 19\n\
             {errors}: invalid failure sequence\n"
        ),
    );
}

#[test]
fn endless_or_oversized_input_files_are_refused_at_one_mebibyte() {
    // `/dev/zero` never ends: the commands used to read it whole (11.7 GB
    // in 20 s). Now they stop one byte past the limit.
    let started = std::time::Instant::now();
    let policy = fixture("valid.json");
    let errors = fixture("simulate/recovers.json");
    let refused = |kind: &str, file: &str| {
        format!("error: cannot read {kind} file {file}: larger than 1 MiB; refusing to read it\n")
    };
    for command in ["check", "normalize"] {
        assert_fails(
            &["policy", command, "/dev/zero"],
            1,
            &refused("policy", "/dev/zero"),
        );
    }
    assert_fails(
        &["simulate", "--policy", "/dev/zero", "--errors", &errors],
        1,
        &refused("policy", "/dev/zero"),
    );
    assert_fails(
        &["simulate", "--policy", &policy, "--errors", "/dev/zero"],
        1,
        &refused("failure", "/dev/zero"),
    );
    assert!(
        started.elapsed() < std::time::Duration::from_secs(10),
        "bounded reads finish at once, took {:?}",
        started.elapsed()
    );

    // The bound is exact: a valid document padded to 1 MiB is read, one
    // byte more is refused.
    let dir = tempfile::tempdir().unwrap();
    let mut text = std::fs::read(&policy).unwrap();
    text.resize(1024 * 1024, b' ');
    let at_limit = dir.path().join("at-limit.json");
    std::fs::write(&at_limit, &text).unwrap();
    let out = recourse(&["policy", "check", &at_limit.display().to_string()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    text.push(b' ');
    let over = dir.path().join("over.json");
    std::fs::write(&over, &text).unwrap();
    let over = over.display().to_string();
    assert_fails(&["policy", "check", &over], 1, &refused("policy", &over));
}
