//! End-to-end route flow through the engine with the simulated provider,
//! under paused tokio time.

use std::time::Duration;

use crate::common::{act_confirmed, act_on, open_engine};
use recourse::engine::{Engine, EngineError, RouteEvent, RouteSnapshot, StartRun, DEMO_PROFILE};
use recourse::route::{ManualAction, RouteState};
use tokio::sync::broadcast::Receiver;

/// An engine with the demo profile seeded.
async fn open(dir: &tempfile::TempDir) -> Engine {
    open_engine(&dir.path().join("r.db"), true).await
}

/// Subscribes to route events, then starts a run of `profile_id`.
async fn subscribe_and_start(
    engine: &Engine,
    profile_id: u32,
    prompt: &str,
) -> (Receiver<RouteEvent>, RouteSnapshot) {
    let events = engine.subscribe();
    let start = engine
        .start_run(StartRun {
            profile_id,
            prompt: prompt.into(),
            cwd: None,
        })
        .await
        .unwrap();
    (events, start)
}

/// Events for `route` until one satisfies `done`; panics after an hour of
/// (paused) time.
async fn until(
    events: &mut Receiver<RouteEvent>,
    route: u32,
    done: impl Fn(&RouteSnapshot) -> bool,
) -> Vec<RouteSnapshot> {
    let mut seen = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(3600);
    loop {
        let ev = tokio::time::timeout_at(deadline, events.recv())
            .await
            .expect("route settles within an hour")
            .expect("event stream open");
        if ev.route_id != route {
            continue;
        }
        let finished = done(&ev.snapshot);
        seen.push(ev.snapshot);
        if finished {
            return seen;
        }
    }
}

fn states(seen: &[RouteSnapshot]) -> Vec<(RouteState, u32)> {
    seen.iter().map(|s| (s.state, s.candidate_index)).collect()
}

#[tokio::test(start_paused = true)]
async fn demo_route_walks_through_a_reset_wait_a_retry_a_skip_and_the_gate_by_itself() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(&dir).await;
    let profile = engine.profile_by_name(DEMO_PROFILE).unwrap();
    assert_eq!(profile.candidates.len(), 3, "demo profile seeded");
    let (mut events, start) = subscribe_and_start(&engine, profile.id, "Fix the flaky test").await;
    assert_eq!(start.state, RouteState::Running);
    let seen = until(&mut events, start.id, |s| {
        s.state == RouteState::NeedsManual
    })
    .await;
    assert_eq!(
        states(&seen),
        vec![
            (RouteState::Running, 0),
            (RouteState::WaitingReset, 0),
            (RouteState::Running, 0),
            (RouteState::RetryScheduled, 0),
            (RouteState::Running, 0),
            (RouteState::Running, 1),
            (RouteState::NeedsManual, 1),
        ],
        "reset wait, a retry, a skip to Codex, then the gate: left alone it needs you"
    );
    let wait = &seen[1];
    let ahead = (wait.deadline.expect("a deadline") - wait.updated_at).num_seconds();
    assert!((28..=30).contains(&ahead), "reset ~30 s ahead, got {ahead}");
    let retry = &seen[3];
    assert_eq!(retry.retry.map(|r| (r.ordinal, r.max)), Some((1, 1)));
    let gate = seen.last().unwrap();
    assert!(
        gate.repeat_risk.is_some(),
        "a tool ran before the stream dropped: the gate refused recovery"
    );
    let held = gate.manual_reason.as_deref().unwrap_or_default();
    assert!(
        held.contains("a tool call or tool effect was seen before the failure"),
        "the candidate is named for running a tool before its stream drops, and the hold says \
         so (not that it wrote a line before the tool): {held}"
    );
    let codes: Vec<String> = engine
        .route_detail(start.id)
        .unwrap()
        .attempts
        .iter()
        .filter_map(|a| a.excerpt.clone())
        .collect();
    assert!(
        codes[3].starts_with("stream disconnected before completion"),
        "Codex fails in Codex's words: {codes:?}"
    );
    // The gate refused: a skip sends the prompt again, so it needs a yes.
    let refused = act_on(&engine, start.id, ManualAction::SkipNow, gate.generation)
        .await
        .unwrap_err();
    assert_eq!(
        refused.to_string(),
        "Skip now sends the prompt to an agent again and may repeat work: the safety gate \
         refused automatic recovery — a tool call or tool effect was seen before the failure; \
         confirm that you want it"
    );
    // A person confirms and skips to the last candidate, which succeeds.
    let skipped = act_confirmed(&engine, start.id, ManualAction::SkipNow, gate.generation)
        .await
        .unwrap();
    assert_eq!(skipped.candidate_index, 2);
    until(&mut events, start.id, |s| s.state == RouteState::Succeeded).await;
    let detail = engine.route_detail(start.id).unwrap();
    assert_eq!(detail.attempts.len(), 5, "five attempts dispatched");
    engine.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn stale_action_is_refused_with_the_current_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(&dir).await;
    let profile = engine.profile_by_name(DEMO_PROFILE).unwrap();
    let (mut events, start) = subscribe_and_start(&engine, profile.id, "p").await;
    let seen = until(&mut events, start.id, |s| {
        s.state == RouteState::WaitingReset
    })
    .await;
    let waiting = seen.last().unwrap().clone();
    let cancelled = act_on(
        &engine,
        start.id,
        ManualAction::CancelWait,
        waiting.generation,
    )
    .await
    .unwrap();
    assert_eq!(cancelled.state, RouteState::NeedsManual);
    let again = act_on(
        &engine,
        start.id,
        ManualAction::CancelWait,
        waiting.generation,
    )
    .await
    .expect("cancelling twice is idempotent");
    assert_eq!(again.generation, cancelled.generation, "nothing changed");
    let err = act_on(
        &engine,
        start.id,
        ManualAction::RetryNow,
        waiting.generation,
    )
    .await
    .expect_err("stale generation refused");
    assert_eq!(err.code().as_str(), "stale");
    match err {
        EngineError::Stale { current } => assert_eq!(current.generation, cancelled.generation),
        other => panic!("expected stale, got {other:?}"),
    }
    tokio::time::sleep(Duration::from_secs(120)).await;
    let after = engine.route_detail(start.id).unwrap();
    assert_eq!(
        after.snapshot.state,
        RouteState::NeedsManual,
        "cancelled timer never fired"
    );
    assert_eq!(after.attempts.len(), 1);
    engine.shutdown().await;
}

#[test]
fn engine_handle_is_cloneable_and_shareable_across_threads() {
    fn shareable<T: Clone + Send + Sync + 'static>() {}
    shareable::<Engine>();
}

#[tokio::test]
async fn a_program_that_cannot_start_is_a_local_failure_not_an_inbox_item() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open_engine(&dir.path().join("r.db"), false).await;
    let profile = engine.create_profile("Missing").unwrap();
    let mut agent = recourse::agent::AgentSpec::simulated(Vec::new());
    agent.kind = recourse::agent::AgentKind::ClaudeCode;
    agent.program = Some("recourse-test-no-such-claude".into());
    let candidate = recourse::profile::CandidateInput::new(
        "claude",
        agent,
        recourse::policy::CandidatePolicy::default_for_new_candidate(),
    );
    let profile = engine
        .save_candidates(profile.id, profile.revision, vec![candidate])
        .unwrap();
    let (mut events, start) = subscribe_and_start(&engine, profile.id, "go").await;
    let seen = until(&mut events, start.id, |s| s.state != RouteState::Running).await;
    let last = seen.last().unwrap();
    assert_eq!(last.state, RouteState::NeedsManual);
    let c = &last.last_failure.as_ref().unwrap().classification;
    assert_eq!(c.code, recourse::classification::SemanticCode::SpawnFailed);
    assert_eq!(c.rule_id.as_deref(), Some("runtime.spawn_failed.v1"));
    let detail = engine.route_detail(start.id).unwrap();
    let excerpt = detail.attempts[0].excerpt.clone().unwrap_or_default();
    assert!(
        excerpt.starts_with("cannot start recourse-test-no-such-claude: not found on PATH"),
        "the message says what is wrong: {excerpt}"
    );
    let decision = detail.attempts[0].decision.clone().unwrap_or_default();
    assert_eq!(
        Some(decision.as_str()),
        last.manual_reason.as_deref(),
        "the attempt's decision says what the route's headline says"
    );
    assert!(
        decision.starts_with("cannot start recourse-test-no-such-claude: not found on PATH")
            && decision.contains("Install the program or set the candidate's Program")
            && !decision.contains("spawn_failed"),
        "the cause and the fix lead, not the failure's class code: {decision}"
    );
    assert!(
        decision.ends_with("then retry now, or stop"),
        "the only candidate has none to skip to, so no skip is offered: {decision}"
    );
    let refused = engine
        .continuation_preview(start.id)
        .unwrap()
        .continue_refused
        .unwrap_or_default();
    assert_eq!(
        refused,
        "attempt 1's Claude Code never started, so there is no session to resume; retry or \
         hand over instead",
        "a program that never ran is not said to have reported something"
    );
    assert_eq!(
        last.last_failure
            .as_ref()
            .and_then(|f| f.decision.as_deref()),
        Some(decision.as_str()),
        "and the route's last failure says it in the same words"
    );
    assert!(
        engine.unclassified_inbox().unwrap().is_empty(),
        "a known local failure is not material for new catalogue rules"
    );
    engine.shutdown().await;
}
