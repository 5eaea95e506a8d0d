//! `recourse classify` contract: JSON Lines in, one JSON result per line out,
//! precise errors for malformed input, and the human-readable explanation.

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::common::Run;

fn classify(args: &[&str], stdin: &str) -> Run {
    let mut child = Command::new(env!("CARGO_BIN_EXE_recourse"))
        .arg("classify")
        .args(args)
        .env("TZ", "UTC")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the recourse binary starts");
    let mut input = child.stdin.take().expect("stdin is piped");
    // A writer that finds the pipe closed (the binary stopped early) is fine.
    let _ = input.write_all(stdin.as_bytes());
    drop(input);
    Run::from(child.wait_with_output().expect("the binary finishes"))
}

fn json_lines(run: &Run) -> Vec<Value> {
    run.stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("every stdout line is JSON"))
        .collect()
}

fn error_for(line: &str) -> String {
    let run = classify(&["--json"], &format!("{line}\n"));
    assert_eq!(run.code, 2, "malformed input exits 2: {}", run.stderr);
    assert_eq!(run.stdout, "", "nothing is printed for the bad line");
    run.stderr.trim_end().to_owned()
}

const OVERLOADED: &str = r#"{"provider":"claude-code","message":"API Error: 529 {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}"}"#;
const QUOTA: &str = r#"{"provider":"openai-api","message":"quota","http_status":429,"error_type":"insufficient_quota"}"#;
const UNKNOWN: &str = r#"{"provider":"generic","message":"Done. Created 3 files."}"#;

#[test]
fn json_lines_give_one_result_per_line_in_order() {
    let run = classify(&["--json"], &format!("{OVERLOADED}\n{QUOTA}\n{UNKNOWN}\n"));
    assert_eq!(run.code, 0, "{}", run.stderr);
    let results = json_lines(&run);
    let codes: Vec<&str> = results
        .iter()
        .map(|r| r["code"].as_str().unwrap())
        .collect();
    assert_eq!(codes, ["provider_overloaded", "quota_exhausted", "unknown"]);
    let classes: Vec<&str> = results
        .iter()
        .map(|r| r["class"].as_str().unwrap())
        .collect();
    assert_eq!(classes, ["transient", "hard", "unclassified"]);
    for result in &results {
        for key in [
            "code",
            "class",
            "confidence",
            "rule_id",
            "catalogue_version",
            "retry_after_s",
            "reset_at",
            "excerpt",
        ] {
            assert!(
                result.get(key).is_some(),
                "every result has {key}: {result}"
            );
        }
        assert_eq!(result["catalogue_version"], "2026.12.5");
    }
    assert_eq!(results[0]["rule_id"], "anthropic.overloaded.v1");
    assert_eq!(
        results[2]["rule_id"],
        Value::Null,
        "no rule matched the unknown line"
    );
}

#[test]
fn timing_hints_are_resolved_against_occurred_at() {
    let line = r#"{"provider":"anthropic-api","message":"{\"type\":\"error\",\"error\":{\"type\":\"rate_limit_error\",\"message\":\"slow down\"}}","http_status":429,"headers":{"retry-after":"30"},"occurred_at":"2026-01-15T12:00:00Z"}"#;
    let run = classify(&["--json"], line);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let result = &json_lines(&run)[0];
    assert_eq!(result["reset_at"], "2026-01-15T12:00:30Z");
    assert_eq!(result["retry_after_s"], 30.0);
    let no_hint = &json_lines(&classify(&["--json"], UNKNOWN))[0];
    assert_eq!(no_hint["reset_at"], Value::Null);
    assert_eq!(no_hint["retry_after_s"], Value::Null);
}

#[test]
fn excerpts_are_sanitized() {
    let line = r#"{"provider":"claude-code","message":"ANTHROPIC_API_KEY: sk-ant-api03-Zq8vTx3LmN4pQr7sWk2JhYb6FdGc9Ae1\nInvalid API key · Please run /login"}"#;
    let run = classify(&["--json"], line);
    assert!(
        !run.stdout.contains("Zq8vTx3LmN4pQr7s"),
        "the key never reaches stdout: {}",
        run.stdout
    );
    assert_eq!(json_lines(&run)[0]["code"], "auth_invalid");
}

#[test]
fn a_bad_line_stops_after_the_earlier_results_are_flushed() {
    let input = format!("{OVERLOADED}\n{{\"provider\":\"codex\",\"message\":\"x\",\"http_status\":\"abc\"}}\n{QUOTA}\n");
    let run = classify(&["--json"], &input);
    assert_eq!(run.code, 2);
    assert_eq!(
        json_lines(&run).len(),
        1,
        "only the line before the bad one is printed"
    );
    assert_eq!(
        run.stderr.trim_end(),
        r#"line 2: field "http_status": expected integer 100-599, got a string"#
    );
}

#[test]
fn blank_lines_and_null_optionals_are_accepted() {
    let line = r#"{"provider":"generic","message":"socket hang up","phase":null,"http_status":null,"headers":null,"error_type":null,"exit_code":null,"occurred_at":null}"#;
    let run = classify(&["--json"], &format!("\n   \n{line}\r\n\n"));
    assert_eq!(run.code, 0, "{}", run.stderr);
    let results = json_lines(&run);
    assert_eq!(results.len(), 1, "blank lines produce no output");
    assert_eq!(results[0]["code"], "network_reset");
}

#[test]
fn every_malformed_field_is_named() {
    let cases = [
        (
            "not json",
            "line 1: invalid JSON: expected ident at line 1 column 2",
        ),
        ("[1,2]", "line 1: expected a JSON object, got an array"),
        ("\"sk-ant\"", "line 1: expected a JSON object, got a string"),
        ("null", "line 1: expected a JSON object, got null"),
        (
            r#"{"provider":"codex","message":"m","colour":"red"}"#,
            r#"line 1: unknown field "colour" (known fields: provider, message, phase, http_status, headers, error_type, exit_code, occurred_at)"#,
        ),
        (
            r#"{"message":"m"}"#,
            r#"line 1: missing required field "provider""#,
        ),
        (
            r#"{"provider":"bard","message":"m"}"#,
            r#"line 1: field "provider": expected one of anthropic-api, claude-code, codex, openai-api, gemini, opencode, generic, simulated, got a string"#,
        ),
        (
            r#"{"provider":"codex"}"#,
            r#"line 1: missing required field "message""#,
        ),
        (
            r#"{"provider":"codex","message":42}"#,
            r#"line 1: field "message": expected a string, got a number"#,
        ),
        (
            r#"{"provider":"codex","message":"m","phase":"launch"}"#,
            r#"line 1: field "phase": expected one of spawn, connect, request, stream, exit, got a string"#,
        ),
        (
            r#"{"provider":"codex","message":"m","http_status":600}"#,
            r#"line 1: field "http_status": expected integer 100-599, got a number"#,
        ),
        (
            r#"{"provider":"codex","message":"m","headers":["retry-after"]}"#,
            r#"line 1: field "headers": expected an object of string values, got an array"#,
        ),
        (
            r#"{"provider":"codex","message":"m","headers":{"retry-after":30}}"#,
            r#"line 1: field "headers.retry-after": expected a string, got a number"#,
        ),
        (
            r#"{"provider":"codex","message":"m","error_type":false}"#,
            r#"line 1: field "error_type": expected a string, got a boolean"#,
        ),
        (
            r#"{"provider":"codex","message":"m","exit_code":1.5}"#,
            r#"line 1: field "exit_code": expected a 32-bit integer, got a number"#,
        ),
        (
            r#"{"provider":"codex","message":"m","headers":{"retry-after":{"a":1}}}"#,
            r#"line 1: field "headers.retry-after": expected a string, got an object"#,
        ),
        (
            r#"{"provider":"codex","message":"m","occurred_at":"yesterday"}"#,
            r#"line 1: field "occurred_at": expected an RFC 3339 timestamp, got a string"#,
        ),
    ];
    for (line, expected) in cases {
        assert_eq!(error_for(line), expected, "input: {line}");
    }
}

#[test]
fn an_overlong_line_is_rejected_without_reading_it_into_memory() {
    let huge = format!(
        "{{\"provider\":\"generic\",\"message\":\"{}\"}}",
        "a".repeat(1 << 20)
    );
    assert_eq!(error_for(&huge), "line 1: longer than 1048576 bytes");
}

#[test]
fn text_mode_explains_the_decision() {
    let run = classify(
        &[
            "exceeded retry limit, last status: 401 Unauthorized, request id: 9a57",
            "--provider",
            "codex",
        ],
        "",
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    for expected in [
        "code:        auth_invalid",
        "class:       hard",
        "rule:        status_text.401.v1",
        "matched:     bytes 35..51: \"401 Unauthorized\"",
        "why:         The text reports HTTP 401 Unauthorized: the credentials were rejected. The text \"401 Unauthorized\" matched; “API key or login invalid” is hard.",
        "hint:        (none trusted)",
        "  wrapped     codex.retry_limit.v1 (priority 30, provider_unavailable, text)",
    ] {
        assert!(
            run.stdout.contains(expected),
            "missing {expected:?} in:\n{}",
            run.stdout
        );
    }
}

#[test]
fn text_mode_takes_status_headers_and_time() {
    let run = classify(
        &[
            "Service Unavailable",
            "--status",
            "503",
            "--header",
            "retry-after=120",
            "--occurred-at",
            "2026-01-15T12:00:00Z",
        ],
        "",
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.contains("rule:        http.503.v1"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("hint:        retry at 15 Jan 2026, 12:02:00 (retry_after_header"),
        "{}",
        run.stdout
    );
}

#[test]
fn usage_errors_exit_2_with_a_clear_message() {
    let cases: [(&[&str], &str); 9] = [
        (&[], "error: give the evidence text, or --json to read JSON Lines on stdin"),
        (&["text", "--json"], "error: give either evidence text or --json, not both"),
        (&["text", "--provider", "bard"], "error: --provider \"bard\": expected one of anthropic-api, claude-code, codex, openai-api, gemini, opencode, generic, simulated"),
        (&["text", "--header", "retry-after"], "error: --header \"retry-after\": expected NAME=VALUE"),
        (&["text", "--status", "700"], "error: --status 700: expected integer 100-599"),
        (&["text", "--occurred-at", "noon"], "error: --occurred-at \"noon\": expected an RFC 3339 timestamp"),
        (&["text", "--phase", "launch"], "error: --phase \"launch\": expected one of spawn, connect, request, stream, exit"),
        (&["text", "--tz", "Mars/Olympus"], "error: --tz \"Mars/Olympus\" is not an IANA time zone"),
        (&["--json", "--tz", "Mars/Olympus"], "error: --tz \"Mars/Olympus\" is not an IANA time zone"),
    ];
    for (args, expected) in cases {
        let run = classify(args, "");
        assert_eq!(run.code, 2, "{args:?} exits 2");
        assert_eq!(run.stderr.trim_end(), expected, "{args:?}");
    }
}

/// A value is never echoed, whatever its size: a key pasted into the wrong
/// field must not reach stderr (or a log that captures it).
#[test]
fn errors_never_echo_the_value() {
    let key = "sk-ant-api03-Zq8vKx2LmN4pR7tW9yB1cD3fG5hJ7kL9mN1oP3qR5sT7uV9w";
    let huge = "Zq8vKx2L".repeat(100_000);
    let cases = [
        format!(r#"{{"provider":"{key}","message":"m"}}"#),
        format!(r#"{{"provider":"codex","message":"m","http_status":"{key}"}}"#),
        format!(r#"{{"provider":"codex","message":"m","phase":"{huge}"}}"#),
        format!(r#"{{"provider":"codex","message":"m","occurred_at":"{huge}"}}"#),
        format!(r#"{{"provider":"codex","message":"m","headers":{{"retry-after":["{key}"]}}}}"#),
        format!(r#"{{"provider":"codex","message":"m","exit_code":["{huge}"]}}"#),
        format!(r#"["{key}"]"#),
        format!(r#"{{"provider":"codex","message":"{key}"#),
        format!("{{\"provider\":\"codex\",\"message\":\"{key}\u{1}\"}}"),
    ];
    for line in &cases {
        let error = error_for(line);
        assert!(!error.contains("Zq8vKx2L"), "the value leaked: {error}");
        assert!(error.len() < 300, "{} bytes of stderr", error.len());
    }
}

#[test]
fn long_or_secret_field_names_are_cut_and_sanitized() {
    let long = "a".repeat(900_000);
    let shown = format!("{}…", "a".repeat(64));
    assert_eq!(
        error_for(&format!(
            r#"{{"provider":"codex","message":"m","{long}":1}}"#
        )),
        format!(
            r#"line 1: unknown field "{shown}" (known fields: provider, message, phase, http_status, headers, error_type, exit_code, occurred_at)"#
        )
    );
    assert_eq!(
        error_for(&format!(
            r#"{{"provider":"codex","message":"m","headers":{{"{long}":1}}}}"#
        )),
        format!(r#"line 1: field "headers.{shown}": expected a string, got a number"#)
    );
    let key = "sk-ant-api03-Zq8vKx2LmN4pR7tW9yB1cD3fG5hJ7kL9mN1oP3qR5sT7uV9w";
    assert_eq!(
        error_for(&format!(
            r#"{{"provider":"codex","message":"m","{key}":1}}"#
        )),
        r#"line 1: unknown field "[redacted:api_key]" (known fields: provider, message, phase, http_status, headers, error_type, exit_code, occurred_at)"#
    );
    let exactly = "b".repeat(64);
    assert_eq!(
        error_for(&format!(
            r#"{{"provider":"codex","message":"m","headers":{{"{exactly}":false}}}}"#
        )),
        format!(r#"line 1: field "headers.{exactly}": expected a string, got a boolean"#),
        "64 characters are shown whole"
    );
}

#[test]
fn usage_errors_cut_and_sanitize_what_they_echo() {
    let long = "x".repeat(100_000);
    let run = classify(&["text", "--provider", &long], "");
    assert_eq!(run.code, 2);
    assert_eq!(
        run.stderr.trim_end(),
        format!(
            "error: --provider \"{}…\": expected one of anthropic-api, claude-code, codex, openai-api, gemini, opencode, generic, simulated",
            "x".repeat(64)
        )
    );
    let run = classify(
        &[
            "text",
            "--header",
            "authorization: Bearer sk-ant-api03-Zq8vKx2LmN4pR7tW9yB1cD3f",
        ],
        "",
    );
    assert_eq!(run.code, 2);
    assert_eq!(
        run.stderr.trim_end(),
        "error: --header \"authorization: Bearer [redacted:token]\": expected NAME=VALUE"
    );
    let run = classify(&["--json", "--tz", &long], "");
    assert_eq!(run.code, 2);
    assert_eq!(
        run.stderr.trim_end(),
        format!(
            "error: --tz \"{}…\" is not an IANA time zone",
            "x".repeat(64)
        )
    );
}
