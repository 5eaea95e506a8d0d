//! Adapters against the fake agents in `fixtures/agents/`, which print the
//! real stream formats of each CLI.

mod common;

use common::fake_agent;
use recourse::engine::{AgentKind, AgentSpec, Clock};
use recourse::evidence::{Phase, Provider};
use recourse::runner::{run, Launch, RunReport};
use recourse::safety::{EffectContext, PromptDelivery};
use tokio_util::sync::CancellationToken;

fn fake(kind: AgentKind) -> AgentSpec {
    let script = match kind {
        AgentKind::ClaudeCode => "claude-code.sh",
        AgentKind::Codex => "codex.sh",
        AgentKind::Gemini => "gemini.sh",
        AgentKind::Opencode => "opencode.sh",
        AgentKind::Generic => "generic.sh",
        AgentKind::Simulated => unreachable!("the simulated provider has no process"),
    };
    fake_agent(kind, script)
}

async fn attempt(kind: AgentKind, scenario: &str) -> RunReport {
    let launch = Launch {
        agent: fake(kind),
        prompt: format!("Fix the build. scenario:{scenario}"),
        cwd: None,
        step: 0,
        clock: Clock::start(),
    };
    run(launch, CancellationToken::new()).await
}

fn failure(report: RunReport) -> (recourse::evidence::RawEvidence, EffectContext) {
    match report {
        RunReport::Failed { raw, effect } => (raw, effect),
        other => panic!("expected a failure, got {other:?}"),
    }
}

fn text(raw: &recourse::evidence::RawEvidence) -> String {
    String::from_utf8_lossy(&raw.message).to_string()
}

fn effect(delivery: PromptDelivery, assistant: bool, tool: Option<bool>) -> EffectContext {
    EffectContext {
        prompt_delivery: Some(delivery),
        assistant_output_seen: Some(assistant),
        tool_activity_seen: tool,
        partial_result_seen: Some(false),
        evidence_current: None,
    }
}

#[tokio::test]
async fn claude_success_result_is_success() {
    assert_eq!(
        attempt(AgentKind::ClaudeCode, "success").await,
        RunReport::Succeeded
    );
}

#[tokio::test]
async fn claude_api_error_result_is_confirmed_delivery_without_effects() {
    let (raw, eff) = failure(attempt(AgentKind::ClaudeCode, "overloaded").await);
    assert_eq!(raw.provider, Provider::ClaudeCode);
    assert_eq!(
        raw.http_status,
        Some(529),
        "status parsed from `API Error: 529`"
    );
    assert!(
        text(&raw).contains("overloaded_error"),
        "result text is the evidence"
    );
    assert_eq!(eff, effect(PromptDelivery::Confirmed, false, Some(false)));
}

#[tokio::test]
async fn claude_tool_use_then_cut_stream_is_ambiguous_with_effects() {
    let (raw, eff) = failure(attempt(AgentKind::ClaudeCode, "tool_then_reset").await);
    assert_eq!(raw.phase, Some(Phase::Stream));
    assert!(
        text(&raw).contains("ECONNRESET"),
        "stderr tail is the evidence"
    );
    assert_eq!(raw.exit_code, Some(1));
    assert_eq!(
        eff,
        effect(PromptDelivery::Ambiguous, true, Some(true)),
        "thinking counts as assistant output; tool_use and tool_result as tool activity"
    );
}

#[tokio::test]
async fn claude_failing_before_any_event_did_not_get_the_prompt() {
    let (raw, eff) = failure(attempt(AgentKind::ClaudeCode, "not_found").await);
    assert_eq!(raw.phase, Some(Phase::Connect));
    assert_eq!(
        eff,
        effect(PromptDelivery::NotDelivered, false, Some(false))
    );
}

#[tokio::test]
async fn codex_turn_failed_after_retry_progress_uses_the_terminal_error() {
    let (raw, eff) = failure(attempt(AgentKind::Codex, "rate_limited").await);
    assert_eq!(
        text(&raw),
        "exceeded retry limit, last status: 429 Too Many Requests",
        "progress lines (`Reconnecting... 1/5`) are not the evidence"
    );
    assert_eq!(eff, effect(PromptDelivery::Confirmed, false, Some(false)));
}

#[tokio::test]
async fn codex_command_execution_is_tool_activity() {
    let (_, eff) = failure(attempt(AgentKind::Codex, "tool_then_fail").await);
    assert_eq!(eff.tool_activity_seen, Some(true));
}

#[tokio::test]
async fn codex_completed_turn_is_success() {
    assert_eq!(
        attempt(AgentKind::Codex, "success").await,
        RunReport::Succeeded
    );
}

#[tokio::test]
async fn gemini_json_error_carries_type_and_code() {
    let (raw, eff) = failure(attempt(AgentKind::Gemini, "quota").await);
    assert_eq!(raw.http_status, Some(429));
    assert_eq!(raw.error_type.as_deref(), Some("ApiError"));
    assert!(text(&raw).starts_with("Quota exceeded"));
    assert_eq!(eff, effect(PromptDelivery::Confirmed, false, Some(false)));
}

#[tokio::test]
async fn gemini_text_error_has_unknown_effects() {
    let (raw, eff) = failure(attempt(AgentKind::Gemini, "text_error").await);
    assert!(text(&raw).contains("503 Service Unavailable"));
    assert_eq!(eff.prompt_delivery, Some(PromptDelivery::Ambiguous));
    assert_eq!(
        eff.tool_activity_seen, None,
        "unknown, so the gate fails closed"
    );
}

#[tokio::test]
async fn gemini_json_response_is_success() {
    assert_eq!(
        attempt(AgentKind::Gemini, "success").await,
        RunReport::Succeeded
    );
}

#[tokio::test]
async fn opencode_error_event_before_any_step_was_not_delivered() {
    let (raw, eff) = failure(attempt(AgentKind::Opencode, "overloaded").await);
    assert_eq!(raw.error_type.as_deref(), Some("APIError"));
    assert_eq!(text(&raw), "Overloaded");
    assert_eq!(
        eff,
        effect(PromptDelivery::NotDelivered, false, Some(false))
    );
}

#[tokio::test]
async fn opencode_tool_use_then_error_is_tool_activity() {
    let (_, eff) = failure(attempt(AgentKind::Opencode, "tool_then_error").await);
    assert_eq!(eff, effect(PromptDelivery::Confirmed, false, Some(true)));
}

#[tokio::test]
async fn opencode_steps_and_text_are_success() {
    assert_eq!(
        attempt(AgentKind::Opencode, "success").await,
        RunReport::Succeeded
    );
}

#[tokio::test]
async fn generic_failure_is_exit_code_and_stderr_tail_with_unknown_effects() {
    let (raw, eff) = failure(attempt(AgentKind::Generic, "fail").await);
    assert_eq!(raw.exit_code, Some(3));
    assert_eq!(text(&raw), "fatal: upstream returned 502 Bad Gateway\n");
    assert_eq!(eff.prompt_delivery, Some(PromptDelivery::Ambiguous));
    assert_eq!(
        eff.assistant_output_seen,
        Some(true),
        "it printed to stdout"
    );
    assert_eq!(eff.tool_activity_seen, None);
}

#[tokio::test]
async fn generic_exit_zero_is_success() {
    assert_eq!(
        attempt(AgentKind::Generic, "success").await,
        RunReport::Succeeded
    );
}

#[tokio::test]
async fn missing_program_fails_at_spawn_before_delivery() {
    let mut agent = fake(AgentKind::Codex);
    agent.program = Some("/nonexistent/codex".to_string());
    let launch = Launch {
        agent,
        prompt: "p".into(),
        cwd: None,
        step: 0,
        clock: Clock::start(),
    };
    let (raw, eff) = failure(run(launch, CancellationToken::new()).await);
    assert_eq!(raw.phase, Some(Phase::Spawn));
    assert!(text(&raw).starts_with("cannot start /nonexistent/codex: "));
    assert_eq!(eff.prompt_delivery, Some(PromptDelivery::NotDelivered));
}

#[tokio::test]
async fn cancelled_attempt_is_killed_and_reaped() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("pid");
    let launch = Launch {
        agent: fake(AgentKind::ClaudeCode),
        prompt: format!("scenario:hang pidfile:{}", pidfile.display()),
        cwd: None,
        step: 0,
        clock: Clock::start(),
    };
    let cancel = CancellationToken::new();
    let task = tokio::spawn(run(launch, cancel.clone()));
    let child_file = dir.path().join("pid.child");
    let pid = loop {
        if let (Ok(s), true) = (std::fs::read_to_string(&pidfile), child_file.exists()) {
            if let Ok(pid) = s.trim().parse::<u32>() {
                break pid;
            }
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    };
    let tool_pid = std::fs::read_to_string(&child_file)
        .unwrap()
        .trim()
        .to_string();
    cancel.cancel();
    assert_eq!(task.await.unwrap(), RunReport::Killed);
    assert!(
        !std::path::Path::new(&format!("/proc/{pid}")).exists(),
        "agent process {pid} is gone (killed and reaped, no zombie)"
    );
    // The orphaned tool is reaped by init, maybe later: dead or a zombie.
    for _ in 0..50 {
        if !running(&tool_pid) {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    panic!("the agent's tool subprocess {tool_pid} survived the kill");
}

/// Exists and is not a zombie.
fn running(pid: &str) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    let state = stat
        .rsplit(')')
        .next()
        .and_then(|rest| rest.split_whitespace().next());
    state != Some("Z")
}
