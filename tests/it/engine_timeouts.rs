//! Attempt deadlines through the engine, with real processes: an agent that
//! printed anything (a Codex `thread.started`, a Gemini `init`, a warning on
//! stderr) and then went quiet past its idle deadline may have been acting on
//! the prompt, so the route needs a person, under a policy that retries; one
//! that printed nothing is `attempt_timed_out`, transient, and goes by the
//! transient policy (here: retried).
//!
//! The profile is seeded straight into the store so the idle deadline can be
//! 1 s (the editor's minimum is 10 s).

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;

use recourse::agent::{AgentKind, AgentSpec, AttemptTimeouts};
use recourse::classification::{Class, SemanticCode};
use recourse::engine::{RouteDetail, StartRun};
use recourse::policy::Exhausted;
use recourse::profile::CandidateInput;
use recourse::route::RouteState;

use crate::common::{open_engine, seed_profile, uniform_policy};

/// An agent of `kind` whose program is `script` (it ignores the kind's own
/// arguments), ended by a 1 s idle deadline.
fn quiet_agent(dir: &Path, kind: AgentKind, script: &str) -> AgentSpec {
    let file = dir.join("agent.sh");
    std::fs::write(&file, format!("#!/bin/sh\n{script}\nexec sleep 60\n")).unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut agent = AgentSpec::simulated(Vec::new());
    agent.kind = kind;
    agent.program = Some(file.display().to_string());
    agent.timeouts = AttemptTimeouts {
        idle_s: 1,
        total_s: 30,
    };
    agent
}

/// One route of `agent` under a policy that retries both classes (after a
/// minute, so the test sees the schedule, not the retry), until it rests.
async fn route_of(dir: &Path, agent: AgentSpec) -> RouteDetail {
    let db = dir.join("t.db");
    let policy = uniform_policy(None, Some((2, 60)), Exhausted::Stop);
    seed_profile(&db, "P", &[CandidateInput::new("cli", agent, policy)]);
    let engine = open_engine(&db, false).await;
    let profile = engine.profile_by_name("P").unwrap();
    let started = engine
        .start_run(StartRun {
            profile_id: profile.id,
            prompt: "Reply with the single word done.".into(),
            cwd: None,
        })
        .await
        .unwrap();
    for _ in 0..1500 {
        let detail = engine.route_detail(started.id).unwrap();
        if detail.snapshot.state != RouteState::Running {
            engine.shutdown().await;
            return detail;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the route never left running");
}

fn timed_out_code(detail: &RouteDetail) -> (SemanticCode, Class, String) {
    let attempt = &detail.attempts[0];
    let c = attempt
        .classification
        .as_ref()
        .expect("a deadline is classified by the runner");
    (c.code, c.class, attempt.excerpt.clone().unwrap_or_default())
}

#[tokio::test]
async fn an_agent_that_printed_only_its_start_line_then_went_quiet_needs_a_person() {
    for (kind, first_line) in [
        (
            AgentKind::Codex,
            r#"{"type":"thread.started","thread_id":"0199a213-81c0-7800-8aa1-bbab2a035a53"}"#,
        ),
        (
            AgentKind::Gemini,
            r#"{"type":"init","timestamp":"2026-12-03T13:00:00.000Z","session_id":"s","model":"gemini-2.5-pro"}"#,
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let agent = quiet_agent(dir.path(), kind, &format!("echo '{first_line}'"));
        let detail = route_of(dir.path(), agent).await;
        assert_eq!(
            detail.snapshot.state,
            RouteState::NeedsManual,
            "{kind:?}: it had the prompt and was cut off at no known boundary: never replayed"
        );
        assert_eq!(detail.attempts.len(), 1, "{kind:?}: not retried");
        let reason = detail.snapshot.manual_reason.clone().unwrap_or_default();
        assert!(
            reason.contains("prompt delivery is ambiguous"),
            "{kind:?}: {reason}"
        );
        let (code, _, excerpt) = timed_out_code(&detail);
        assert_eq!(code, SemanticCode::AttemptTimedOut, "{kind:?}");
        assert!(
            excerpt.contains("after it had produced output"),
            "{kind:?}: the evidence says output came first: {excerpt}"
        );
    }
}

#[tokio::test]
async fn an_agent_that_wrote_only_to_stderr_then_went_quiet_needs_a_person() {
    let dir = tempfile::tempdir().unwrap();
    let agent = quiet_agent(
        dir.path(),
        AgentKind::ClaudeCode,
        "echo 'connecting to the provider...' >&2",
    );
    let detail = route_of(dir.path(), agent).await;
    assert_eq!(
        detail.snapshot.state,
        RouteState::NeedsManual,
        "output on stderr is output: the agent was running with the prompt"
    );
    let (_, _, excerpt) = timed_out_code(&detail);
    assert!(excerpt.contains("connecting to the provider"), "{excerpt}");
}

#[tokio::test]
async fn an_agent_that_printed_nothing_before_its_idle_deadline_is_retried_as_transient() {
    for kind in [AgentKind::Codex, AgentKind::ClaudeCode] {
        let dir = tempfile::tempdir().unwrap();
        let agent = quiet_agent(dir.path(), kind, ":");
        let detail = route_of(dir.path(), agent).await;
        let (code, class, excerpt) = timed_out_code(&detail);
        assert_eq!(
            (code, class),
            (SemanticCode::AttemptTimedOut, Class::Transient)
        );
        assert_eq!(
            detail.snapshot.state,
            RouteState::RetryScheduled,
            "{kind:?}: nothing was printed, so nothing was delivered: the transient policy applies ({:?})",
            detail.snapshot.manual_reason
        );
        assert!(
            excerpt.contains("before it produced any output"),
            "{kind:?}: {excerpt}"
        );
    }
}
