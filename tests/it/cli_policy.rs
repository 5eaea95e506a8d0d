//! `recourse policy check|normalize` and `recourse simulate` end to end,
//! against the readable fixtures under `fixtures/policy/`.

use crate::common::recourse;
use serde_json::Value;
use std::path::PathBuf;
use std::process::Output;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/policy")
        .join(name)
}

fn check(name: &str) -> Output {
    recourse(&["policy", "check", fixture(name).to_str().unwrap()])
}

/// `recourse policy normalize` of fixture `name`.
fn normalize(name: &str) -> Output {
    recourse(&["policy", "normalize", fixture(name).to_str().unwrap()])
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).unwrap()
}

fn stderr_lines(output: &Output) -> Vec<String> {
    String::from_utf8(output.stderr.clone())
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

/// Asserts exit code 2 and exactly `expected` error lines, then the summary.
fn assert_invalid(name: &str, expected: &[&str]) {
    let output = check(name);
    assert_eq!(output.status.code(), Some(2), "{name} must be rejected");
    let lines = stderr_lines(&output);
    let (summary, errors) = lines.split_last().expect("a summary line");
    assert_eq!(
        errors, expected,
        "every error of {name}, each with its path"
    );
    let plural = if expected.len() == 1 { "" } else { "s" };
    assert!(
        summary.ends_with(&format!(
            "{name}: invalid policy document ({} error{plural})",
            expected.len()
        )),
        "{summary}"
    );
}

/// Like [`assert_invalid`] for messages serde words itself: only the start is ours.
fn assert_invalid_starting(name: &str, expected_start: &str) {
    let output = check(name);
    assert_eq!(output.status.code(), Some(2), "{name} must be rejected");
    let lines = stderr_lines(&output);
    assert_eq!(lines.len(), 2, "one error and the summary: {lines:?}");
    assert!(lines[0].starts_with(expected_start), "{}", lines[0]);
}

#[test]
fn valid_document_checks_ok() {
    let output = check("valid.json");
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(stdout(&output), "ok: 3 candidates (version 1)\n");
}

#[test]
fn legacy_document_checks_ok_and_says_so() {
    let output = check("legacy.json");
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(
        stdout(&output),
        "ok: 5 candidates (legacy document, normalizes to version 1)\n"
    );
}

#[test]
fn every_limit_error_is_listed_with_its_path() {
    assert_invalid(
        "invalid-limits.json",
        &[
            "candidates[0].transient.wait_for_reset.max_wait_seconds: must be at least 1 s (0 s is too short)",
            "candidates[0].transient.retry.max_retries: must be 1–10 when enabled (0 is too few)",
            "candidates[0].transient.retry.initial_interval_seconds: must be at least 1 s (0 s is too short)",
            "candidates[0].hard.wait_for_reset.max_wait_seconds: must be at most 7 d (7 d 1 s is too long)",
            "candidates[0].hard.retry.max_retries: must be 1–10 when enabled (11 is too many)",
            "candidates[0].hard.retry.initial_interval_seconds: must be at most 1 h (1 h 1 s is too long)",
            "candidates[1].transient.retry: the last retry would wait 21 d 8 h (the first delay, 1 h, doubled 9 times), longer than the 1 d limit; use fewer retries or a shorter first delay",
        ],
    );
}

#[test]
fn automatic_continuation_errors_name_the_budget_the_class_and_the_kind() {
    assert_invalid(
        "invalid-continuations.json",
        &[
            "candidates[0].transient.auto_continue.max_continuations: must be 1–5 continuations when enabled (6 is too many)",
            "candidates[0].hard.auto_continue.enabled: automatic continuation applies to transient failures only; a hard failure needs its reset or a person",
            "candidates[1].transient.auto_continue.enabled: Simulated provider candidates cannot resume a session, so they cannot continue one automatically; turn it off, or choose a CLI that resumes its sessions",
        ],
    );
}

#[test]
fn a_document_without_automatic_continuation_reads_as_off_and_stays_without_it() {
    let output = normalize("valid.json");
    assert_eq!(output.status.code(), Some(0));
    let normalized: Value = serde_json::from_str(&stdout(&output)).unwrap();
    for candidate in normalized["candidates"].as_array().unwrap() {
        for class in ["transient", "hard"] {
            assert!(
                candidate[class].get("auto_continue").is_none(),
                "off is left out, so a document keeps its form: {candidate}"
            );
        }
    }
    let on = normalize("continues.json");
    let normalized: Value = serde_json::from_str(&stdout(&on)).unwrap();
    assert_eq!(
        normalized["candidates"][0]["transient"]["auto_continue"],
        serde_json::json!({"enabled": true, "max_continuations": 2}),
        "on is kept with its budget"
    );
}

#[test]
fn name_and_agent_errors_are_listed() {
    assert_invalid(
        "invalid-names.json",
        &[
            "candidates[0].agent: must not be empty",
            "candidates[1].name: must not be empty",
            "candidates[2].name: duplicate candidate name \"opus\" (also candidates[0])",
        ],
    );
    assert_invalid(
        "invalid-empty.json",
        &["candidates: must list at least one candidate"],
    );
}

#[test]
fn unknown_or_missing_version_is_an_error() {
    assert_invalid(
        "invalid-version.json",
        &["version: unsupported policy document version 2; this build reads version 1"],
    );
    assert_invalid(
        "invalid-missing-version.json",
        &["version: missing; a current policy document starts with \"version\": 1"],
    );
}

#[test]
fn shape_errors_name_the_offending_field() {
    assert_invalid_starting(
        "invalid-unknown-field.json",
        "candidates[0].hard.retry.jitter: unknown field `jitter`",
    );
    assert_invalid_starting(
        "invalid-wrong-type.json",
        "candidates[0].transient.retry.max_retries: invalid type: string \"three\"",
    );
    assert_invalid_starting(
        "invalid-missing-section.json",
        "candidates[0]: missing field `hard`",
    );
    assert_invalid_starting(
        "legacy-bad-action.json",
        "candidates[0].on_error: unknown variant `retry_forever`",
    );
}

/// serde stops at the first wrong field; the check goes on to list every
/// one, each once, and the limits of what it could read as written.
#[test]
fn every_shape_error_is_listed_not_only_the_first() {
    let output = check("invalid-several-shapes.json");
    assert_eq!(output.status.code(), Some(2));
    let lines = stderr_lines(&output);
    let starts = [
        "candidates[0].hard.retry.jitter: unknown field `jitter`",
        "candidates[0].transient.on_exhausted: unknown variant `later`",
        "candidates[0].transient.retry.max_retries: invalid type: string \"three\"",
        "candidates[0].hard.wait_for_reset.max_wait_seconds: must be at least 1 s (0 s is too short)",
        "candidates[1].hard.on_exhausted: unknown variant `later`",
    ];
    assert_eq!(
        lines.len(),
        starts.len() + 1,
        "each problem once: {lines:#?}"
    );
    for (line, start) in lines.iter().zip(starts) {
        assert!(line.starts_with(start), "{start}: {lines:#?}");
    }
    assert!(
        lines[starts.len()]
            .ends_with("invalid-several-shapes.json: invalid policy document (5 errors)"),
        "{lines:#?}"
    );
}

#[test]
fn non_json_and_non_object_documents_are_rejected() {
    assert_invalid_starting("invalid-syntax.json", "document: not valid JSON: ");
    assert_invalid(
        "invalid-not-object.json",
        &["document: expected a JSON object"],
    );
}

#[test]
fn a_key_given_twice_is_an_error_naming_it_not_last_one_wins() {
    assert_invalid(
        "legacy-duplicate-rule.json",
        &["candidates[0].rules.rate_limited: duplicate key `rate_limited`; each key may appear only once"],
    );
    assert_invalid(
        "invalid-duplicate-section.json",
        &["candidates[0].transient: duplicate key `transient`; each key may appear only once"],
    );
    let output = recourse(&[
        "simulate",
        "--policy",
        fixture("legacy-duplicate-rule.json").to_str().unwrap(),
        "--errors",
        fixture("simulate/recovers.json").to_str().unwrap(),
    ]);
    assert_eq!(
        output.status.code(),
        Some(2),
        "simulate reads policy as check does"
    );
    assert_eq!(
        stderr_lines(&output)[0],
        "candidates[0].rules.rate_limited: duplicate key `rate_limited`; each key may appear only once"
    );
}

#[test]
fn legacy_conflicting_rules_in_one_class_are_an_error() {
    assert_invalid(
        "legacy-conflict.json",
        &["candidates[0].rules: conflicting rules for the transient class: provider_overloaded → try_next, rate_limited → retry_same; codes of one class must share one action"],
    );
}

#[test]
fn legacy_unknown_and_unclassified_codes_are_errors() {
    assert_invalid(
        "legacy-bad-codes.json",
        &[
            "candidates[1].rules.invalid_request: code \"invalid_request\" is outside provider policy (unclassified), so a rule cannot apply to it",
            "candidates[1].rules.provider_exploded: unknown semantic code \"provider_exploded\"",
        ],
    );
}

#[test]
fn unreadable_file_exits_1_naming_it() {
    let output = recourse(&["policy", "check", "/nonexistent/policy.json"]);
    assert_eq!(output.status.code(), Some(1));
    let lines = stderr_lines(&output);
    assert!(
        lines[0].starts_with("error: cannot read policy file /nonexistent/policy.json"),
        "{lines:?}"
    );
}

#[test]
fn legacy_normalizes_exactly_as_the_decision_says() {
    let output = normalize("legacy.json");
    assert_eq!(output.status.code(), Some(0));
    let expected = std::fs::read_to_string(fixture("legacy.normalized.json")).unwrap();
    assert_eq!(
        stdout(&output),
        expected,
        "see fixtures/policy/legacy.normalized.json"
    );
}

#[test]
fn normalize_zeroes_disabled_sections_and_is_idempotent() {
    let output = normalize("valid.json");
    assert_eq!(output.status.code(), Some(0));
    let normalized: Value = serde_json::from_str(&stdout(&output)).unwrap();
    let hard_retry = &normalized["candidates"][0]["hard"]["retry"];
    assert_eq!(
        hard_retry,
        &serde_json::json!({"enabled": false, "max_retries": 0, "initial_interval_seconds": 0}),
        "the disabled retry's 4 × 60 s is dropped"
    );
    let dir = tempfile::tempdir().unwrap();
    let once = dir.path().join("once.json");
    std::fs::write(&once, stdout(&output)).unwrap();
    let twice = recourse(&["policy", "normalize", once.to_str().unwrap()]);
    assert_eq!(
        stdout(&twice),
        stdout(&output),
        "normalizing twice changes nothing"
    );
}

#[test]
fn normalize_of_an_invalid_document_lists_errors_and_prints_nothing() {
    let output = normalize("legacy-conflict.json");
    assert_eq!(output.status.code(), Some(2));
    assert!(output.stdout.is_empty(), "no partial document on stdout");
}

fn simulate(errors: &str, extra: &[&str]) -> Output {
    simulate_with("valid.json", errors, extra)
}

/// `recourse simulate` of policy fixture `policy` on failure fixture
/// `simulate/errors`, with `extra` arguments, in UTC: the start is printed
/// in local time, and the fixtures hold it in UTC.
fn simulate_with(policy: &str, errors: &str, extra: &[&str]) -> Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_recourse"))
        .args(["simulate", "--policy"])
        .arg(fixture(policy))
        .arg("--errors")
        .arg(fixture(&format!("simulate/{errors}")))
        .args(extra)
        .env("TZ", "UTC")
        .output()
        .unwrap()
}

#[test]
fn simulate_prints_retries_then_skip_then_stop() {
    let output = simulate("retries-then-skip.json", &[]);
    assert_eq!(output.status.code(), Some(0));
    let expected =
        std::fs::read_to_string(fixture("simulate/retries-then-skip.expected.txt")).unwrap();
    assert_eq!(stdout(&output), expected, "see the .expected.txt fixture");
}

#[test]
fn simulate_json_is_the_timeline_of_decisions() {
    let output = simulate("retries-then-skip.json", &["--json"]);
    assert_eq!(output.status.code(), Some(0));
    let steps: Vec<Value> = serde_json::from_str(&stdout(&output)).unwrap();
    let kinds: Vec<&str> = steps
        .iter()
        .map(|s| s["decision"]["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        ["retry", "retry", "retry", "skip", "retry", "retry", "stop"]
    );
    assert_eq!(
        steps[3]["decision"]["next"], 2,
        "the disabled gpt is passed over"
    );
    assert_eq!(steps[6]["at"], "2026-03-01T12:01:05Z");
}

fn simulate_on(policy: &str, errors: &str) -> String {
    let output = simulate_with(policy, errors, &[]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    stdout(&output)
}

#[test]
fn simulate_continues_the_session_after_completed_tools_until_the_budget_is_spent() {
    let expected = std::fs::read_to_string(fixture("simulate/continues.expected.txt")).unwrap();
    assert_eq!(
        simulate_on("continues.json", "continues.json"),
        expected,
        "see the .expected.txt fixture: the second failure, clean on its own, follows work \
         done earlier in its session, so it is continued too, never retried afresh"
    );
}

#[test]
fn simulate_says_why_a_session_is_not_continued() {
    let text = simulate_on("continues.json", "pending-tool.json");
    assert!(
        text.lines().nth(1).unwrap().ends_with(
            "-> manual recovery: not safe to recover automatically — a tool call or tool effect \
             was seen before the failure; not continued automatically, as a tool call had not \
             finished"
        ),
        "{text}"
    );
    let off = simulate("pending-tool.json", &[]);
    assert!(
        !stdout(&off).contains("not continued"),
        "where the option is off nothing is said of it: {}",
        stdout(&off)
    );
}

#[test]
fn simulate_waits_for_a_near_reset_and_ignores_a_far_one() {
    let text = stdout(&simulate("reset-wait.json", &[]));
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[1].ends_with("-> wait for the hard reset until +1 min"),
        "{}",
        lines[1]
    );
    assert!(
        lines[2].ends_with("-> “opus” used up its hard retries and wait; skipping to “gemini”"),
        "a second reset wait for the same class is not allowed: {}",
        lines[2]
    );
    assert!(
        lines[3].ends_with(
            "-> transient retry 1 of 2 in 10 s, at +1 min 10 s; the provider's reset at \
             +6 h 1 min is not waited for, as the transient reset wait is off"
        ),
        "a 6 h reset is not waited for, and the line says why: {}",
        lines[3]
    );
    assert_eq!(
        lines[4],
        "end: no more failures; the attempt at +1 min 10 s on “gemini” is assumed to succeed"
    );
}

#[test]
fn simulate_stops_for_manual_recovery_after_tool_activity() {
    let text = stdout(&simulate("tool-activity.json", &[]));
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[2].ends_with("-> manual recovery: not safe to recover automatically — a tool call or tool effect was seen before the failure"),
        "{}",
        lines[2]
    );
    assert_eq!(
        lines[3],
        "end: the route left automatic recovery; 2 later failures were not used"
    );
}

#[test]
fn simulate_sends_unknown_text_to_manual() {
    let text = stdout(&simulate("unknown-text.json", &[]));
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[1].ends_with("-> manual recovery: no catalogue rule recognised the failure"),
        "{}",
        lines[1]
    );
    assert_eq!(lines[2], "end: the route left automatic recovery");
}

#[test]
fn simulate_says_where_repeated_unclassified_failures_move_on() {
    // Texts that differ only in request id, pid and time are one failure;
    // another text in between starts the count again; the route moves on
    // once, and the second candidate's repeat goes to a person.
    let output = recourse(&[
        "simulate",
        "--policy",
        fixture("unclassified-repeats.json").to_str().unwrap(),
        "--errors",
        fixture("simulate/unclassified-repeats.json")
            .to_str()
            .unwrap(),
        "--builtin-only",
    ]);
    assert_eq!(output.status.code(), Some(0));
    let expected =
        std::fs::read_to_string(fixture("simulate/unclassified-repeats.expected.txt")).unwrap();
    assert_eq!(stdout(&output), expected, "see the .expected.txt fixture");
}

#[test]
fn simulate_rejects_an_invalid_failure_file_with_the_path() {
    let output = simulate("invalid-failures.json", &[]);
    assert_eq!(output.status.code(), Some(2));
    let lines = stderr_lines(&output);
    assert!(
        lines[0].starts_with("failures[1].code: unknown variant `provider_exploded`"),
        "{}",
        lines[0]
    );
    assert!(
        lines[1].ends_with("invalid-failures.json: invalid failure sequence"),
        "{}",
        lines[1]
    );
}

#[test]
fn simulate_refuses_a_class_the_code_cannot_have() {
    let output = simulate("impossible-class.json", &[]);
    assert_eq!(
        output.status.code(),
        Some(2),
        "an unknown failure is never transient"
    );
    assert!(
        output.stdout.is_empty(),
        "no timeline of an impossible failure"
    );
    assert_eq!(
        stderr_lines(&output),
        [
            "failures[1].class: `transient` contradicts code `unknown`, whose class is unclassified; a class may only be overridden to `unclassified` (low-confidence, stale or conflicting evidence)".to_string(),
            format!("{}: invalid failure sequence", fixture("simulate/impossible-class.json").display()),
        ]
    );
}

#[test]
fn simulate_refuses_an_unknown_key_in_effect() {
    let output = simulate("effect-typo.json", &[]);
    assert_eq!(
        output.status.code(),
        Some(2),
        "a typo must not read as an effect-safe attempt"
    );
    let lines = stderr_lines(&output);
    assert!(
        lines[0]
            .starts_with("failures[0].effect.tool_actvity_seen: unknown field `tool_actvity_seen`"),
        "{}",
        lines[0]
    );
}

#[test]
fn simulate_rejects_an_invalid_policy_like_check_does() {
    let output = recourse(&[
        "simulate",
        "--policy",
        fixture("invalid-version.json").to_str().unwrap(),
        "--errors",
        fixture("simulate/recovers.json").to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        stderr_lines(&output)[0],
        "version: unsupported policy document version 2; this build reads version 1"
    );
}

#[test]
fn simulate_needs_an_enabled_candidate() {
    let dir = tempfile::tempdir().unwrap();
    let policy = dir.path().join("all-disabled.json");
    let legacy = r#"{"candidates": [{"name": "a", "agent": "codex", "enabled": false}]}"#;
    std::fs::write(&policy, legacy).unwrap();
    let output = recourse(&[
        "simulate",
        "--policy",
        policy.to_str().unwrap(),
        "--errors",
        fixture("simulate/recovers.json").to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr_lines(&output)[0].ends_with("all-disabled.json: no enabled candidate to simulate"),
        "{:?}",
        stderr_lines(&output)
    );
}

#[test]
fn simulate_with_no_failures_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let errors = dir.path().join("none.json");
    std::fs::write(
        &errors,
        r#"{"start": "2026-03-01T12:00:00Z", "failures": []}"#,
    )
    .unwrap();
    // Nine hours east of UTC (a POSIX zone: no time zone database needed).
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_recourse"))
        .args(["simulate", "--policy"])
        .arg(fixture("valid.json"))
        .arg("--errors")
        .arg(&errors)
        .env("TZ", "JST-9")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(
        stdout(&output),
        "start 1 Mar 2026, 21:00:00\nno failures given\n",
        "the start in local time, shaped as the app shows a time"
    );
}

#[test]
fn simulate_with_an_unreadable_failure_file_exits_1_naming_it() {
    let output = recourse(&[
        "simulate",
        "--policy",
        fixture("valid.json").to_str().unwrap(),
        "--errors",
        "/nonexistent/failures.json",
    ]);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr_lines(&output)[0]
            .starts_with("error: cannot read failure file /nonexistent/failures.json"),
        "{:?}",
        stderr_lines(&output)
    );
}
