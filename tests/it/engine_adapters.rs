//! What each adapter reads from the real CLIs' output, on their recordings
//! (fixtures/agents/recorded/, replayed by fixtures/agents/replay.py): the
//! structured status, error type, headers and effects the CLI printed.
//! The route outcome of every recording is tests/it/agents_replay.rs.

use crate::common::replay_agent;
use recourse::agent::{AgentKind, AgentSpec};
use recourse::clock::Clock;
use recourse::evidence::{Phase, RawEvidence};
use recourse::runner::{run, Launch, RunReport};
use recourse::safety::{EffectContext, PromptDelivery};
use tokio_util::sync::CancellationToken;

async fn attempt(kind: AgentKind, recording: &str) -> RunReport {
    let launch = Launch {
        agent: replay_agent(kind, recording),
        prompt: "Reply with the single word done.".into(),
        cwd: None,
        step: 0,
        clock: Clock::start(),
        spawned: None,
        progress: None,
        answered: None,
        resume: None,
    };
    run(launch, CancellationToken::new()).await.report
}

fn failure(report: RunReport) -> (RawEvidence, EffectContext) {
    match report {
        RunReport::Failed { raw, effect } => (raw, effect),
        other => panic!("expected a failure, got {other:?}"),
    }
}

fn text(raw: &RawEvidence) -> String {
    String::from_utf8_lossy(&raw.message).to_string()
}

fn confirmed_without_effects() -> EffectContext {
    EffectContext {
        prompt_delivery: Some(PromptDelivery::Confirmed),
        ..EffectContext::not_delivered()
    }
}

#[tokio::test]
async fn claude_synthetic_api_error_message_is_evidence_not_assistant_output() {
    let (raw, effect) = failure(attempt(AgentKind::ClaudeCode, "claude/overloaded").await);
    assert_eq!(
        effect,
        confirmed_without_effects(),
        "the `<synthetic>` assistant event is the CLI's own error text"
    );
    assert_eq!(
        raw.http_status,
        Some(529),
        "from the result's api_error_status"
    );
    assert_eq!(raw.error_type.as_deref(), Some("overloaded_error"));
    assert!(text(&raw).starts_with("API Error: 529 Overloaded"));
    assert_eq!(raw.phase, Some(Phase::Request));
}

#[tokio::test]
async fn claude_rejected_usage_window_carries_its_reset_as_headers() {
    let (raw, _) = failure(attempt(AgentKind::ClaudeCode, "claude/usage_limit").await);
    assert_eq!(
        raw.headers
            .get("anthropic-ratelimit-unified-status")
            .map(String::as_str),
        Some("rejected")
    );
    let reset: i64 = raw.headers["anthropic-ratelimit-unified-reset"]
        .parse()
        .unwrap();
    let in_s = reset - chrono::Utc::now().timestamp();
    assert!(
        (590..=600).contains(&in_s),
        "rate_limit_event resetsAt, replayed 600 s ahead: {in_s}"
    );
    assert_eq!(
        raw.headers["anthropic-ratelimit-unified-representative-claim"],
        "five_hour"
    );
}

#[tokio::test]
async fn claude_tool_use_before_the_failure_is_tool_activity() {
    let (_, effect) = failure(attempt(AgentKind::ClaudeCode, "claude/tool_then_error").await);
    assert_eq!(effect.tool_activity_seen, Some(true));
    assert_eq!(
        effect.assistant_output_seen,
        Some(false),
        "a tool_use block alone is not text"
    );
}

#[tokio::test]
async fn codex_retry_notices_are_not_the_evidence() {
    let (raw, effect) = failure(attempt(AgentKind::Codex, "codex/overloaded").await);
    assert!(
        text(&raw).starts_with("unexpected status 503 Service Unavailable"),
        "the terminal turn.failed message, not `Reconnecting... 1/1 (…)`: {}",
        text(&raw)
    );
    assert_eq!(
        raw.http_status,
        Some(503),
        "read from `unexpected status 503`"
    );
    assert_eq!(
        effect,
        confirmed_without_effects(),
        "the CLI's `error` item warning is no effect"
    );
}

#[tokio::test]
async fn codex_command_execution_is_tool_activity() {
    let (_, effect) = failure(attempt(AgentKind::Codex, "codex/tool_then_error").await);
    assert_eq!(effect.tool_activity_seen, Some(true));
}

#[tokio::test]
async fn gemini_error_class_and_status_come_from_stderr() {
    let (raw, effect) = failure(attempt(AgentKind::Gemini, "gemini/rate_limited").await);
    assert_eq!(raw.error_type.as_deref(), Some("RetryableQuotaError"));
    assert_eq!(raw.http_status, Some(429));
    assert!(
        !text(&raw).contains("256-color"),
        "the terminal warning is not the evidence: {}",
        text(&raw)
    );
    assert_eq!(effect, confirmed_without_effects());
}

#[tokio::test]
async fn gemini_provider_json_inside_the_message_gives_status_and_grpc_code() {
    let (raw, _) = failure(attempt(AgentKind::Gemini, "gemini/server_error").await);
    assert_eq!(raw.http_status, Some(500));
    assert_eq!(raw.error_type.as_deref(), Some("INTERNAL"));
}

#[tokio::test]
async fn gemini_partial_answer_is_assistant_output() {
    let (_, effect) = failure(attempt(AgentKind::Gemini, "gemini/cut_stream").await);
    assert_eq!(effect.assistant_output_seen, Some(true));
}

#[tokio::test]
async fn opencode_error_event_keeps_status_headers_and_provider_type() {
    let (raw, effect) = failure(attempt(AgentKind::Opencode, "opencode/rate_limited").await);
    assert_eq!(raw.http_status, Some(429), "data.statusCode");
    assert_eq!(
        raw.error_type.as_deref(),
        Some("rate_limit_error"),
        "the type inside data.responseBody"
    );
    assert_eq!(
        raw.headers.get("retry-after").map(String::as_str),
        Some("12")
    );
    assert!(raw
        .headers
        .contains_key("anthropic-ratelimit-requests-reset"));
    assert_eq!(
        effect,
        EffectContext::not_delivered(),
        "the error came before any step started"
    );
}

#[tokio::test]
async fn opencode_tool_use_then_error_is_tool_activity() {
    let (_, effect) = failure(attempt(AgentKind::Opencode, "opencode/tool_then_error").await);
    assert_eq!(effect.tool_activity_seen, Some(true));
}

#[tokio::test]
async fn every_cli_success_is_success() {
    for (kind, recording) in [
        (AgentKind::ClaudeCode, "claude/ok"),
        (AgentKind::Codex, "codex/ok"),
        (AgentKind::Gemini, "gemini/ok"),
        (AgentKind::Opencode, "opencode/ok"),
    ] {
        assert_eq!(
            attempt(kind, recording).await,
            RunReport::Succeeded,
            "{recording}"
        );
    }
}

#[tokio::test]
async fn a_command_line_other_than_the_recorded_one_is_refused_by_the_replayer() {
    let mut agent = replay_agent(AgentKind::Codex, "codex/ok");
    agent.args = vec!["--full-auto".into()];
    let launch = Launch {
        agent,
        prompt: "p".into(),
        cwd: None,
        step: 0,
        clock: Clock::start(),
        spawned: None,
        progress: None,
        answered: None,
        resume: None,
    };
    let (raw, _) = failure(run(launch, CancellationToken::new()).await.report);
    assert_eq!(raw.exit_code, Some(97));
    assert!(
        text(&raw).contains("differ from the recording"),
        "a drifted command line cannot pass as the recorded one: {}",
        text(&raw)
    );
}

/// Fail closed, through the engine: each CLI's recorded 503 with one line
/// the adapter does not know added after the stream started. The policy
/// retries transient failures, so a retry would mean the unknown line was
/// taken for "no effects".
mod unknown_after_start {
    use super::*;
    use crate::common::{open_engine, uniform_policy};
    use recourse::engine::{RouteSnapshot, StartRun};
    use recourse::policy::Exhausted;
    use recourse::profile::CandidateInput;
    use recourse::route::RouteState;
    use std::path::Path;

    /// `recording` (`codex/unavailable`) copied into `dir` with `extra`
    /// lines inserted after stdout line `after` (0: before the first).
    fn altered(
        dir: &Path,
        kind: AgentKind,
        recording: &str,
        after: usize,
        extra: &[&str],
    ) -> AgentSpec {
        let mut agent = replay_agent(kind, recording);
        let source = std::path::PathBuf::from(&agent.env["RECOURSE_REPLAY"]);
        let target = dir.join(recording.replace('/', "-"));
        std::fs::create_dir_all(&target).unwrap();
        for file in ["meta.json", "stderr"] {
            std::fs::copy(source.join(file), target.join(file)).unwrap();
        }
        let stdout = std::fs::read_to_string(source.join("stdout")).unwrap();
        let mut lines: Vec<&str> = stdout.lines().collect();
        lines.splice(after..after, extra.iter().copied());
        std::fs::write(target.join("stdout"), lines.join("\n") + "\n").unwrap();
        agent
            .env
            .insert("RECOURSE_REPLAY".into(), target.display().to_string());
        agent
    }

    /// Runs one route of `agent` under a retrying policy until it rests.
    async fn route_of(dir: &Path, agent: AgentSpec) -> (RouteSnapshot, u32) {
        let engine = open_engine(&dir.join("r.db"), false).await;
        let policy = uniform_policy(None, Some((2, 1)), Exhausted::Stop);
        let p = engine.create_profile("P").unwrap();
        let p = engine
            .save_candidates(
                p.id,
                p.revision,
                vec![CandidateInput::new("cli", agent, policy)],
            )
            .unwrap();
        let s = engine
            .start_run(StartRun {
                profile_id: p.id,
                prompt: "Reply with the single word done.".into(),
                cwd: None,
            })
            .await
            .unwrap();
        for _ in 0..1000 {
            let detail = engine.route_detail(s.id).unwrap();
            if detail.snapshot.state != RouteState::Running {
                engine.shutdown().await;
                return (detail.snapshot, detail.attempts.len() as u32);
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        panic!("the route never left running");
    }

    /// (kind, recording, line to insert after, the inserted lines)
    const CASES: [(AgentKind, &str, usize, &[&str]); 5] = [
        (
            AgentKind::ClaudeCode,
            "claude/unavailable",
            1,
            &[r#"{"type":"workflow_step","step":1}"#],
        ),
        (
            AgentKind::Codex,
            "codex/unavailable",
            3,
            &[r#"{"type":"item.completed","item":{"id":"item_1","type":"collab_agent_call"}}"#],
        ),
        (
            AgentKind::Gemini,
            "gemini/unavailable",
            2,
            &[r#"{"type":"file_edit","path":"a.rs"}"#],
        ),
        (
            AgentKind::Opencode,
            "opencode/unavailable",
            0,
            &[
                r#"{"type":"step_start","part":{"type":"step-start"}}"#,
                r#"{"type":"patch","part":{}}"#,
            ],
        ),
        (
            AgentKind::Codex,
            "codex/unavailable",
            3,
            &[
                r#"{"type":"item.completed","item":{"id":"item_1","type":"todo_list","items":[{"text":"fix","completed":false}]}}"#,
            ],
        ),
    ];

    #[tokio::test]
    async fn the_unaltered_recordings_are_retried() {
        // The control: without the added line each 503 is retried, so the
        // manual outcome below is the added line's doing.
        for (kind, recording, after, extra) in CASES {
            let dir = tempfile::tempdir().unwrap();
            // OpenCode's recorded error came before any step: keep the
            // step_start so the prompt counts as delivered in both runs.
            let kept: Vec<&str> = extra
                .iter()
                .copied()
                .filter(|l| l.contains("step_start"))
                .collect();
            let agent = altered(dir.path(), kind, recording, after, &kept);
            let (s, attempts) = route_of(dir.path(), agent).await;
            assert_eq!(
                s.state,
                RouteState::RetryScheduled,
                "{recording}: {:?}",
                s.manual_reason
            );
            assert_eq!(attempts, 1, "{recording}");
        }
    }

    #[tokio::test]
    async fn an_unknown_event_or_item_after_start_then_a_503_needs_a_person() {
        for (kind, recording, after, extra) in CASES {
            let dir = tempfile::tempdir().unwrap();
            let agent = altered(dir.path(), kind, recording, after, extra);
            let (s, attempts) = route_of(dir.path(), agent).await;
            assert_eq!(
                s.state,
                RouteState::NeedsManual,
                "{recording} + {extra:?}: what the line stood for is unknown, so it may have had effects"
            );
            assert_eq!(attempts, 1, "{recording}: never retried");
            let reason = s.manual_reason.unwrap_or_default();
            let expected = if extra[extra.len() - 1].contains("todo_list") {
                "assistant output (thinking included) was seen before the failure"
            } else {
                "unknown whether a tool call or tool effect happened before the failure"
            };
            assert!(reason.contains(expected), "{recording}: {reason}");
        }
    }

    #[tokio::test]
    async fn a_generic_command_that_printed_anything_then_a_503_needs_a_person() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("agent.sh");
        std::fs::write(
            &script,
            "#!/bin/sh\necho 'working on it'\necho 'HTTP 503 Service Unavailable' >&2\nexit 1\n",
        )
        .unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        let mut agent = AgentSpec::simulated(Vec::new());
        agent.kind = AgentKind::Generic;
        agent.program = Some(script.display().to_string());
        let (s, attempts) = route_of(dir.path(), agent).await;
        assert_eq!(
            s.state,
            RouteState::NeedsManual,
            "a command's effects are never known"
        );
        assert_eq!(attempts, 1);
    }
}
