//! Crash and restart: the `recourse` binary runs a long scripted route and is
//! killed with SIGKILL at chosen and random points; the database is then
//! reopened by a fresh engine. No route is lost, no attempt is dispatched
//! twice, a pending deadline keeps its time, and a route caught mid-dispatch
//! goes to manual recovery instead of being replayed.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::common::{
    open_engine, seed_profile, sigkill, spawn_run, uniform_policy, wait_for_route,
};
use chrono::{DateTime, Utc};
use recourse::agent::{AgentSpec, SimStep};
use recourse::engine::Engine;
use recourse::policy::Exhausted;
use recourse::profile::CandidateInput;
use recourse::route::RouteRow;
use recourse::route::{AttemptOutcome, RouteState};
use recourse::store::Store;

const WORK_MS: u32 = 400;

/// Two retries 1 s then 2 s apart, a skip, a ~3 s reset wait, success:
/// about 7 s end to end.
fn long_profile(path: &Path) {
    let candidates = [
        CandidateInput::new(
            "flaky",
            AgentSpec::simulated(vec![SimStep::Overloaded { after_ms: WORK_MS }]),
            uniform_policy(None, Some((2, 1)), Exhausted::Skip),
        ),
        CandidateInput::new(
            "limited",
            AgentSpec::simulated(vec![
                SimStep::UsageLimit {
                    after_ms: WORK_MS,
                    resets_in_s: 3,
                },
                SimStep::Succeed { after_ms: WORK_MS },
            ]),
            uniform_policy(Some(10), None, Exhausted::Stop),
        ),
    ];
    seed_profile(path, "Long", &candidates);
}

fn the_route(db: &Path) -> Option<RouteRow> {
    let store = Store::open(db).unwrap();
    let mut routes = store.routes().unwrap();
    assert!(routes.len() <= 1, "one route per run");
    routes.pop()
}

/// Cheap jitter without a RNG dependency.
fn jitter_ms(max: u64) -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    u64::from(nanos) % max.max(1)
}

/// Invariants of the stored history right after the crash.
fn check_history(db: &Path) -> RouteRow {
    let row = the_route(db).expect("the route survived the crash");
    let store = Store::open(db).unwrap();
    let attempts = store.attempts(row.id).unwrap();
    assert_eq!(attempts.len() as u32, row.attempts);
    for (i, a) in attempts.iter().enumerate() {
        assert_eq!(
            a.attempt.number,
            i as u32 + 1,
            "attempt numbers are contiguous"
        );
    }
    let mut ids: Vec<&str> = attempts
        .iter()
        .map(|a| a.attempt.invocation_id.as_str())
        .collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), attempts.len(), "every invocation id is unique");
    assert!(
        attempts
            .windows(2)
            .all(|w| w[0].attempt.generation < w[1].attempt.generation),
        "attempt generations strictly increase"
    );
    let last = attempts
        .last()
        .expect("the first attempt is written with the route");
    match row.state {
        RouteState::Running => assert!(last.result.is_none(), "running attempt has no result"),
        RouteState::WaitingReset | RouteState::RetryScheduled => {
            let finished = last
                .result
                .as_ref()
                .expect("a wait follows a result")
                .finished_at;
            let deadline = row.deadline.expect("a waiting route has a deadline");
            assert!(
                deadline > finished,
                "deadline lies after the failure it answers"
            );
        }
        RouteState::Queued
        | RouteState::NeedsManual
        | RouteState::Stopped
        | RouteState::Succeeded => {}
    }
    row
}

/// After the restart: a mid-dispatch route waits for a person with the
/// interrupted attempt recorded; a waiting route resumes at its deadline.
async fn check_recovery(db: &Path, crashed: &RouteRow) {
    let reopened_at: DateTime<Utc> = Utc::now();
    let engine = open_engine(db, false).await;
    match crashed.state {
        RouteState::Running => {
            let detail = engine.route_detail(crashed.id).unwrap();
            assert_eq!(detail.snapshot.state, RouteState::NeedsManual);
            let reason = detail.snapshot.manual_reason.unwrap_or_default();
            assert!(
                reason.starts_with(&format!(
                    "attempt {} was still running when its engine stopped; it may have done work, \
                     so it is not replayed automatically",
                    crashed.attempts
                )),
                "clear reason, got {reason:?}"
            );
            let last = detail.attempts.last().unwrap();
            assert_eq!(last.outcome, Some(AttemptOutcome::Interrupted));
            tokio::time::sleep(Duration::from_millis(1500)).await;
            let later = engine.route_detail(crashed.id).unwrap();
            assert_eq!(
                later.attempts.len() as u32,
                crashed.attempts,
                "never replayed"
            );
        }
        RouteState::WaitingReset | RouteState::RetryScheduled => {
            let deadline = crashed.deadline.unwrap();
            let done = wait_settled(&engine, crashed.id).await;
            assert_eq!(
                done.snapshot.state,
                RouteState::Succeeded,
                "the route completes"
            );
            let next = &done.attempts[crashed.attempts as usize];
            let due = deadline.max(reopened_at);
            let late = (next.started_at - due).num_milliseconds();
            assert!(
                next.started_at >= deadline - chrono::Duration::milliseconds(5) && late < 1000,
                "next attempt starts at the stored deadline {deadline}, not {} ({late} ms late)",
                next.started_at
            );
        }
        RouteState::Queued => unreachable!("no limit is set here, so nothing queues"),
        RouteState::NeedsManual | RouteState::Stopped | RouteState::Succeeded => {}
    }
    engine.shutdown().await;
}

async fn wait_settled(engine: &Engine, id: u32) -> recourse::engine::RouteDetail {
    let start = Instant::now();
    loop {
        let d = engine.route_detail(id).unwrap();
        if matches!(
            d.snapshot.state,
            RouteState::Succeeded | RouteState::NeedsManual
        ) {
            return d;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "route settles after restart"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn crash_when(when: impl Fn(&RouteRow) -> bool, extra_ms: u64) -> RouteRow {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("crash.db");
    long_profile(&db);
    let mut child = spawn_run(&db, "Long");
    wait_for_route(&db, &mut child, when);
    std::thread::sleep(Duration::from_millis(extra_ms));
    sigkill(&mut child);
    let crashed = check_history(&db);
    check_recovery(&db, &crashed).await;
    crashed
}

#[tokio::test]
async fn crash_mid_dispatch_goes_to_manual_recovery() {
    let crashed = crash_when(|r| r.state == RouteState::Running && r.attempts == 2, 50).await;
    assert_eq!(
        crashed.state,
        RouteState::Running,
        "killed while attempt 2 ran"
    );
}

#[tokio::test]
async fn crash_during_retry_wait_resumes_at_the_deadline() {
    let crashed = crash_when(|r| r.state == RouteState::RetryScheduled, jitter_ms(600)).await;
    assert_eq!(crashed.state, RouteState::RetryScheduled);
}

#[tokio::test]
async fn crash_during_reset_wait_resumes_at_the_deadline() {
    let crashed = crash_when(|r| r.state == RouteState::WaitingReset, jitter_ms(1500)).await;
    assert_eq!(crashed.state, RouteState::WaitingReset);
}

#[tokio::test]
async fn crash_at_random_points_loses_nothing() {
    for _ in 0..3 {
        let at = jitter_ms(6000);
        crash_when(|_| true, at).await;
    }
}
