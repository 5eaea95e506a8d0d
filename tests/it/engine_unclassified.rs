//! The unclassified exception end to end: the simulated provider fails the
//! same unknown way (the texts differ only in request id and time), a person
//! retries, the engine restarts in between, and at the candidate's threshold
//! the route moves to the next candidate; a different failure in between
//! starts the count again.

use std::path::Path;

use crate::common::{act_on, open_engine, uniform_policy, until_state};
use recourse::agent::{AgentSpec, SimStep};
use recourse::engine::{Engine, RouteSnapshot, StartRun};
use recourse::policy::{CandidatePolicy, Exhausted, UnclassifiedPolicy};
use recourse::profile::CandidateInput;
use recourse::route::{ManualAction, RouteState};

/// Immediate skip for both classes, and the exception at `threshold`.
fn opted_in(threshold: u32) -> CandidatePolicy {
    let mut policy = uniform_policy(None, None, Exhausted::Skip);
    policy.unclassified = UnclassifiedPolicy::skip_after(threshold);
    policy
}

/// A failure no catalogue rule knows, as one run prints it: its request id
/// and times are the run's own.
fn crash(run: u32) -> SimStep {
    SimStep::Unrecognised {
        after_ms: 10,
        message: format!(
            "2026-12-06T09:0{run}:17.{run}42Z helper exited unexpectedly \
             (request req_{run:0>24}, pid 4{run}210, at 09:0{run}:17)"
        ),
    }
}

fn other() -> SimStep {
    SimStep::Unrecognised {
        after_ms: 10,
        message: "the gizmo tray is not seated".into(),
    }
}

async fn profile_with(engine: &Engine, first: Vec<SimStep>, threshold: u32) -> u32 {
    let candidates = vec![
        CandidateInput::new("odd", AgentSpec::simulated(first), opted_in(threshold)),
        CandidateInput::new(
            "next",
            AgentSpec::simulated(vec![SimStep::Succeed { after_ms: 10 }]),
            CandidatePolicy::default_for_new_candidate(),
        ),
    ];
    let p = engine.create_profile("P").unwrap();
    engine
        .save_candidates(p.id, p.revision, candidates)
        .unwrap()
        .id
}

async fn start(engine: &Engine, profile_id: u32) -> RouteSnapshot {
    engine
        .start_run(StartRun {
            profile_id,
            prompt: "work".into(),
            cwd: None,
        })
        .await
        .unwrap()
}

/// A person's retry-now, then the route once it needs a person again or
/// has finished.
async fn retry(engine: &Engine, s: &RouteSnapshot) -> RouteSnapshot {
    act_on(engine, s.id, ManualAction::RetryNow, s.generation)
        .await
        .unwrap();
    crate::common::until_route(engine, s.id, "ended its attempt", |r| {
        matches!(r.state, RouteState::NeedsManual | RouteState::Succeeded)
    })
    .await
}

fn reason(s: &RouteSnapshot) -> String {
    s.manual_reason.clone().unwrap_or_default()
}

async fn reopen(engine: Engine, db: &Path) -> Engine {
    engine.shutdown().await;
    open_engine(db, false).await
}

#[tokio::test(start_paused = true)]
async fn a_route_moves_on_at_the_third_identical_failure_counted_across_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let engine = open_engine(&db, false).await;
    let profile = profile_with(&engine, vec![crash(1), crash(2), crash(3)], 3).await;
    let s = start(&engine, profile).await;

    let first = until_state(&engine, s.id, RouteState::NeedsManual).await;
    assert_eq!(
        reason(&first),
        "the failure is unclassified (“Not recognised”); identical failure 1 of 3 with no output or \
         effects; at 3 the route moves to the next candidate"
    );
    let second = retry(&engine, &first).await;
    assert_eq!(second.state, RouteState::NeedsManual);
    assert!(
        reason(&second).contains("identical failure 2 of 3"),
        "another request id and time, the same failure: {}",
        reason(&second)
    );

    // The count is read back from the stored attempts, not kept in memory.
    let engine = reopen(engine, &db).await;
    let second = engine.route_detail(s.id).unwrap().snapshot;
    let done = retry(&engine, &second).await;
    assert_eq!(done.state, RouteState::Succeeded, "{}", reason(&done));
    assert_eq!(done.candidate_name, "next");
    let detail = engine.route_detail(s.id).unwrap();
    let decisions: Vec<String> = detail
        .attempts
        .iter()
        .map(|a| a.decision.clone().unwrap_or_default())
        .collect();
    assert_eq!(detail.attempts.len(), 4, "three on odd, one on next");
    assert_eq!(
        decisions[2],
        "unclassified failure repeated 3 times on candidate 1 with no output or effects: skip \
         to candidate 2 (once per cycle)"
    );
    assert!(
        detail.attempts[..3].iter().all(|a| a.in_inbox),
        "each stays an unclassified failure in the catalogue's inbox"
    );
    engine.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn a_different_failure_in_between_starts_the_count_again() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open_engine(&dir.path().join("r.db"), false).await;
    let script = vec![crash(1), other(), crash(2), crash(3)];
    let profile = profile_with(&engine, script, 2).await;
    let s = start(&engine, profile).await;
    let mut now = until_state(&engine, s.id, RouteState::NeedsManual).await;
    for expected in [1, 1] {
        assert!(
            reason(&now).contains(&format!("identical failure {expected} of 2")),
            "{}",
            reason(&now)
        );
        now = retry(&engine, &now).await;
    }
    assert!(
        reason(&now).contains("identical failure 1 of 2"),
        "the first crash is behind the other failure: {}",
        reason(&now)
    );
    let done = retry(&engine, &now).await;
    assert_eq!(
        (done.state, done.candidate_name.as_str()),
        (RouteState::Succeeded, "next"),
        "two in a row move it on"
    );
    engine.shutdown().await;
}
