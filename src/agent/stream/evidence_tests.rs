//! Structured evidence first: what each adapter hands the catalogue is the
//! CLI's error channel (Claude's error `result`, Codex's `turn.failed` /
//! `error` events, Gemini CLI's error result or its "Error when talking to
//! Gemini API" block, OpenCode's `error` event). The model's own prose, even
//! when it quotes a provider error word for word, never becomes evidence, and
//! stderr lines beside the error block are context, not the verdict.

use chrono::Utc;

use super::*;
use crate::agent::AgentKind;
use crate::catalogue::classify;
use crate::classification::{Class, Classification, SemanticCode};
use crate::evidence::Evidence;

fn exit(code: i32, stderr: &str) -> Exit {
    Exit {
        code: Some(code),
        stderr_tail: stderr.as_bytes().to_vec(),
        stdout_seen: true,
        occurred_at: Utc::now(),
    }
}

fn finish(kind: AgentKind, lines: &[&str], exit: Exit) -> (String, Classification) {
    let mut adapter = for_kind(kind);
    for line in lines {
        adapter.on_stdout_line(line);
    }
    let Finished::Failed { raw, .. } = adapter.finish(exit) else {
        panic!("{kind:?}: a failure was expected");
    };
    let evidence = Evidence::from_raw(raw);
    let c = classify(&evidence, chrono_tz::UTC);
    (evidence.message, c)
}

/// What a model wrote when asked about rate limits: provider wording, quoted.
const PROSE: &str = "You've hit your usage limit · resets 3pm (Europe/Berlin). Rate limit exceeded: try again in 20s.";

#[test]
fn claude_answer_text_is_not_evidence_even_when_it_quotes_a_limit() {
    let answer = format!(
        r#"{{"type":"assistant","message":{{"model":"claude-opus-5-5","content":[{{"type":"text","text":"{PROSE}"}}]}}}}"#
    );
    // The process failed after a result that is no error: its `result` is
    // the model's answer, so the (empty) stderr tail is the evidence.
    let result =
        format!(r#"{{"type":"result","subtype":"success","is_error":false,"result":"{PROSE}"}}"#);
    let (message, c) = finish(
        AgentKind::ClaudeCode,
        &[r#"{"type":"system","subtype":"init"}"#, &answer, &result],
        exit(1, ""),
    );
    assert!(!message.contains("usage limit"), "{message}");
    assert_eq!(c.class, Class::Unclassified, "{c:?}");

    // With an error result the CLI's error decides, not the answer before it.
    let (message, c) = finish(
        AgentKind::ClaudeCode,
        &[
            &answer,
            r#"{"type":"result","subtype":"success","is_error":true,"result":"API Error: 500 Internal server error.","api_error_status":500}"#,
        ],
        exit(1, "telemetry: Rate limit exceeded: flush retried\n"),
    );
    assert!(!message.contains("usage limit"), "{message}");
    assert_eq!(c.code, SemanticCode::ProviderInternalError, "{c:?}");
}

#[test]
fn codex_agent_message_is_not_evidence_turn_failed_is() {
    let agent = format!(
        r#"{{"type":"item.completed","item":{{"id":"item_1","type":"agent_message","text":"{PROSE}"}}}}"#
    );
    let (message, c) = finish(
        AgentKind::Codex,
        &[
            r#"{"type":"turn.started"}"#,
            &agent,
            r#"{"type":"turn.failed","error":{"message":"stream disconnected before completion: error sending request for url (https://api.openai.com/v1/responses)"}}"#,
        ],
        exit(1, ""),
    );
    assert!(!message.contains("usage limit"), "{message}");
    assert_eq!(c.class, Class::Transient, "{c:?}");
    assert_ne!(c.code, SemanticCode::UsageLimitReached, "{c:?}");
}

#[test]
fn opencode_text_is_not_evidence() {
    let text = format!(r#"{{"type":"text","part":{{"type":"text","text":"{PROSE}"}}}}"#);
    let (message, c) = finish(
        AgentKind::Opencode,
        &[
            r#"{"type":"step_start","part":{"type":"step-start"}}"#,
            &text,
        ],
        exit(1, ""),
    );
    assert!(!message.contains("usage limit"), "{message}");
    assert_eq!(c.class, Class::Unclassified, "{c:?}");
}

#[test]
fn gemini_text_is_not_evidence() {
    let text = format!(r#"{{"type":"message","role":"assistant","content":"{PROSE}"}}"#);
    let (message, c) = finish(AgentKind::Gemini, &[&text], exit(1, ""));
    assert!(!message.contains("usage limit"), "{message}");
    assert_eq!(c.class, Class::Unclassified, "{c:?}");
}

/// Gemini CLI 0.61.0's stderr for a per-minute quota (recorded), with a
/// line from an MCP server before it that quotes another failure.
const GEMINI_RATE_LIMITED: &str =
    include_str!("../../../fixtures/agents/recorded/gemini-0.61.0/rate_limited/stderr");

#[test]
fn gemini_without_a_result_classifies_only_its_api_error_block() {
    let stderr = format!(
        "[MCP error] github: You've hit your usage limit · resets 3pm\n{GEMINI_RATE_LIMITED}"
    );
    let (message, c) = finish(AgentKind::Gemini, &[], exit(1, &stderr));
    assert!(
        message.starts_with("Error when talking to Gemini API"),
        "{message}"
    );
    assert!(message.contains("Suggested retry after 12s."), "{message}");
    assert!(!message.contains("usage limit"), "{message}");
    assert!(!message.contains("Attempt 1 failed"), "{message}");
    assert_eq!(c.code, SemanticCode::RateLimited, "{c:?}");

    // A warning after the block's stack is other output.
    let (message, _) = finish(
        AgentKind::Gemini,
        &[],
        exit(
            1,
            "Error when talking to Gemini API Full report available at: /tmp/r.json ModelNotFoundError: models/x is not found\n    at classifyGoogleError (file:///a.js:1:1) {\n  status: 404\n}\nFlushing log events to Clearcut failed: rate limit exceeded\n",
        ),
    );
    assert!(message.ends_with('}'), "{message}");
    assert!(!message.contains("Clearcut"), "{message}");

    // No block: the whole tail is what there is.
    let (message, _) = finish(AgentKind::Gemini, &[], exit(1, "fetch failed\n"));
    assert_eq!(message.trim(), "fetch failed");
}

#[test]
fn gemini_with_a_result_reads_status_and_class_from_the_block() {
    let mut adapter = for_kind(AgentKind::Gemini);
    adapter.on_stdout_line(
        r#"{"type":"result","status":"error","error":{"type":"unknown","message":"[API Error: You have exhausted your daily quota on this model.]"},"stats":{"tool_calls":0}}"#,
    );
    let stderr = "Attempt 1 failed with status 503. Retrying with backoff... _ApiError: {}\n    at throwErrorIfNotOK (file:///a.js:1:1) {\n  status: 503\n}\nError when talking to Gemini API Full report available at: /tmp/r.json TerminalQuotaError: You have exhausted your daily quota on this model.\n    at classifyGoogleError (file:///a.js:1:1) {\n  status: 429\n}\n";
    let Finished::Failed { raw, .. } = adapter.finish(exit(1, stderr)) else {
        panic!("a failure was expected");
    };
    assert_eq!(raw.http_status, Some(429));
    assert_eq!(raw.error_type.as_deref(), Some("TerminalQuotaError"));
}
