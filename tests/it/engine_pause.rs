//! Pausing new dispatches (`Engine::set_paused`): no agent starts while
//! paused, running attempts finish, and what came due dispatches on resume.
//! Under paused tokio time.

use std::time::Duration;

use crate::common::{
    act_on, engine_profile, open_engine, start_route as start, uniform_policy, until_state,
};
use recourse::agent::{AgentSpec, SimStep};
use recourse::engine::{Engine, EngineError};
use recourse::policy::Exhausted;
use recourse::profile::CandidateInput;
use recourse::route::{ManualAction, RouteState};

async fn engine_with(dir: &tempfile::TempDir, candidates: Vec<CandidateInput>) -> (Engine, u32) {
    let engine = open_engine(&dir.path().join("r.db"), false).await;
    let p = engine_profile(&engine, "p", candidates);
    (engine, p)
}

fn sim(name: &str, script: Vec<SimStep>, retry: Option<(u32, u32)>) -> CandidateInput {
    CandidateInput::new(
        name,
        AgentSpec::simulated(script),
        uniform_policy(None, retry, Exhausted::Skip),
    )
}

#[tokio::test(start_paused = true)]
async fn a_wait_that_comes_due_while_paused_stays_due_and_dispatches_on_resume() {
    let dir = tempfile::tempdir().unwrap();
    let script = vec![
        SimStep::Overloaded { after_ms: 10 },
        SimStep::Succeed { after_ms: 10 },
    ];
    let (engine, profile) = engine_with(&dir, vec![sim("a", script, Some((1, 2)))]).await;
    let route = start(&engine, profile).await.unwrap();
    let waiting = until_state(&engine, route.id, RouteState::RetryScheduled).await;
    engine.set_paused(true);
    assert!(engine.is_paused());
    // Well past the 2 s deadline: nothing is dispatched.
    tokio::time::sleep(Duration::from_secs(120)).await;
    let held = engine.route_detail(route.id).unwrap();
    assert_eq!(held.snapshot.state, RouteState::RetryScheduled, "still due");
    assert_eq!(held.attempts.len(), 1, "no attempt while paused");
    assert_eq!(held.snapshot.generation, waiting.generation);
    // A person cannot start an agent either; stopping still works.
    let refused = act_on(
        &engine,
        route.id,
        ManualAction::RetryNow,
        waiting.generation,
    )
    .await;
    assert!(
        matches!(&refused, Err(EngineError::Conflict(m)) if m == "new dispatches are paused, so \
            “Retry now” would not start an agent; resume dispatches first"),
        "the action named as its button is, not by its command spelling: {refused:?}"
    );
    let refused = start(&engine, profile).await;
    assert!(
        matches!(refused, Err(EngineError::Conflict(_))),
        "{refused:?}"
    );

    engine.set_paused(false);
    let done = until_state(&engine, route.id, RouteState::Succeeded).await;
    assert_eq!(done.attempts, 2, "the held wait dispatched once on resume");
    engine.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn a_running_attempt_finishes_while_paused_and_a_skip_waits_for_resume() {
    let dir = tempfile::tempdir().unwrap();
    let (engine, profile) = engine_with(
        &dir,
        vec![
            sim("first", vec![SimStep::Overloaded { after_ms: 5_000 }], None),
            sim("second", vec![SimStep::Succeed { after_ms: 10 }], None),
        ],
    )
    .await;
    let route = start(&engine, profile).await.unwrap();
    assert_eq!(route.state, RouteState::Running);
    engine.set_paused(true);
    // The first candidate's attempt runs to its end (a 529, no retries:
    // skip). The skip is recorded as a wait on the second candidate, due now.
    let held = until_state(&engine, route.id, RouteState::RetryScheduled).await;
    assert_eq!(held.candidate_index, 1, "the decision (skip) was recorded");
    assert_eq!(held.attempts, 1, "the second candidate did not start");
    assert_eq!(held.deadline, Some(held.updated_at), "due at once");
    let detail = engine.route_detail(route.id).unwrap();
    assert!(
        detail.attempts[0].outcome.is_some(),
        "the attempt's result is stored"
    );
    tokio::time::sleep(Duration::from_secs(60)).await;
    assert_eq!(engine.route_detail(route.id).unwrap().attempts.len(), 1);

    engine.set_paused(false);
    let done = until_state(&engine, route.id, RouteState::Succeeded).await;
    assert_eq!((done.candidate_index, done.attempts), (1, 2));
    engine.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn stop_and_cancel_wait_still_work_while_paused() {
    let dir = tempfile::tempdir().unwrap();
    let script = vec![SimStep::Overloaded { after_ms: 10 }];
    let (engine, profile) = engine_with(&dir, vec![sim("a", script, Some((3, 60)))]).await;
    let route = start(&engine, profile).await.unwrap();
    let waiting = until_state(&engine, route.id, RouteState::RetryScheduled).await;
    engine.set_paused(true);
    let cancelled = act_on(
        &engine,
        route.id,
        ManualAction::CancelWait,
        waiting.generation,
    )
    .await
    .unwrap();
    assert_eq!(cancelled.state, RouteState::NeedsManual);
    let stopped = act_on(&engine, route.id, ManualAction::Stop, cancelled.generation)
        .await
        .unwrap();
    assert_eq!(stopped.state, RouteState::Stopped);
    let refused = act_on(&engine, route.id, ManualAction::Resume, stopped.generation).await;
    assert!(
        matches!(refused, Err(EngineError::Conflict(_))),
        "{refused:?}"
    );
    engine.set_paused(false);
    let resumed = act_on(&engine, route.id, ManualAction::Resume, stopped.generation)
        .await
        .unwrap();
    assert_eq!(resumed.state, RouteState::Running);
    engine.shutdown().await;
}
