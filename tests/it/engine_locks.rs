//! A write lock held by another process for longer than SQLite's busy
//! timeout (5 s) must not lose work: a timer that came due while the lock
//! was held still fires once the lock is gone, and an attempt that reported
//! while it was held still has its report recorded. The lock is a real
//! `BEGIN IMMEDIATE` transaction on another connection to the same file.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::common::{open_engine, seed_profile, spawn_run, uniform_policy};
use recourse::agent::{AgentSpec, SimStep};
use recourse::engine::StartRun;
use recourse::policy::Exhausted;
use recourse::profile::CandidateInput;
use recourse::route::RouteRow;
use recourse::route::{AttemptOutcome, RouteState};
use recourse::store::{Store, BUSY_TIMEOUT};

/// Longer than two busy timeouts: a commit waiting on the lock gives up
/// even when it first waited for the engine's store behind a lease renewal
/// that was itself waiting out the busy timeout.
const HOLD: Duration = Duration::from_millis(2 * BUSY_TIMEOUT.as_millis() as u64 + 2500);

/// Holds the database's write lock from another connection for `hold`,
/// on a thread of its own; returns once the lock is taken.
fn hold_write_lock(db: &Path, hold: Duration) -> std::thread::JoinHandle<()> {
    let conn = rusqlite::Connection::open(db).unwrap();
    conn.busy_timeout(Duration::from_secs(10)).unwrap();
    conn.execute_batch("BEGIN IMMEDIATE").unwrap();
    std::thread::spawn(move || {
        std::thread::sleep(hold);
        conn.execute_batch("COMMIT").unwrap();
    })
}

/// Reads the route on a read-only connection of its own, which another
/// process's write lock does not block.
fn read(viewer: &Store, id: u32) -> RouteRow {
    viewer.route(id).unwrap().unwrap()
}

async fn wait_until(
    viewer: &Store,
    id: u32,
    within: Duration,
    what: &str,
    when: impl Fn(&RouteRow) -> bool,
) -> RouteRow {
    let start = Instant::now();
    loop {
        let row = read(viewer, id);
        if when(&row) {
            return row;
        }
        assert!(
            start.elapsed() < within,
            "{what} within {within:?}; route is {} at generation {}",
            row.state.as_str(),
            row.generation
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn profile(db: &Path, script: Vec<SimStep>) {
    let candidate = CandidateInput::new(
        "sim",
        AgentSpec::simulated(script),
        uniform_policy(None, Some((1, 1)), Exhausted::Stop),
    );
    seed_profile(db, "Locked", &[candidate]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timer_that_came_due_under_a_long_write_lock_still_fires() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("locks.db");
    profile(
        &db,
        vec![
            SimStep::Overloaded { after_ms: 10 },
            SimStep::Succeed { after_ms: 10 },
        ],
    );
    let engine = open_engine(&db, false).await;
    let viewer = Store::open_read_only(&db).unwrap();
    let p = engine.profile_by_name("Locked").unwrap();
    let s = engine
        .start_run(StartRun {
            profile_id: p.id,
            prompt: "go".into(),
            cwd: None,
        })
        .await
        .unwrap();
    let waiting = wait_until(
        &viewer,
        s.id,
        Duration::from_secs(5),
        "a retry is scheduled",
        |r| r.state == RouteState::RetryScheduled,
    )
    .await;
    let deadline = waiting.deadline.unwrap();
    // The retry is due in about 1 s; the lock outlasts it by the busy timeout.
    let holder = hold_write_lock(&db, HOLD);
    holder.join().unwrap();
    let released = Instant::now();
    let done = wait_until(
        &viewer,
        s.id,
        Duration::from_secs(10),
        "the retry runs after the lock is released",
        |r| r.state == RouteState::Succeeded,
    )
    .await;
    assert!(
        released.elapsed() < Duration::from_secs(8),
        "not long after the release"
    );
    assert_eq!(done.attempts, 2, "one retry, dispatched once");
    assert!(chrono::Utc::now() > deadline);
    engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_report_made_under_a_long_write_lock_is_recorded_after_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("locks.db");
    profile(
        &db,
        vec![
            SimStep::Overloaded { after_ms: 1000 },
            SimStep::Succeed { after_ms: 10 },
        ],
    );
    let engine = open_engine(&db, false).await;
    let viewer = Store::open_read_only(&db).unwrap();
    let p = engine.profile_by_name("Locked").unwrap();
    let s = engine
        .start_run(StartRun {
            profile_id: p.id,
            prompt: "go".into(),
            cwd: None,
        })
        .await
        .unwrap();
    assert_eq!(s.state, RouteState::Running);
    // The attempt reports after 1 s, while the lock is held.
    let holder = hold_write_lock(&db, HOLD);
    holder.join().unwrap();
    let done = wait_until(
        &viewer,
        s.id,
        Duration::from_secs(10),
        "the report is recorded and the retry runs",
        |r| r.state == RouteState::Succeeded,
    )
    .await;
    assert_eq!(done.attempts, 2);
    let attempts = viewer.attempts(s.id).unwrap();
    let outcomes: Vec<_> = attempts
        .iter()
        .map(|a| a.result.as_ref().map(|r| r.outcome))
        .collect();
    assert_eq!(
        outcomes,
        vec![
            Some(AttemptOutcome::Failed),
            Some(AttemptOutcome::Succeeded)
        ],
        "the failure reported under the lock is in the history"
    );
    engine.shutdown().await;
}

/// `recourse run` itself: the lock is held across its retry's deadline, and
/// it still follows the route to the end and exits.
#[test]
fn recourse_run_returns_after_a_long_write_lock_across_its_deadline() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("locks.db");
    profile(
        &db,
        vec![
            SimStep::Overloaded { after_ms: 10 },
            SimStep::Succeed { after_ms: 10 },
        ],
    );
    let mut child = spawn_run(&db, "Locked");
    let start = Instant::now();
    let viewer = loop {
        if let Ok(v) = Store::open_read_only(&db) {
            if v.route(1)
                .ok()
                .flatten()
                .is_some_and(|r| r.state == RouteState::RetryScheduled)
            {
                break v;
            }
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "the retry is scheduled"
        );
        std::thread::sleep(Duration::from_millis(5));
    };
    hold_write_lock(&db, HOLD).join().unwrap();
    let released = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if released.elapsed() > Duration::from_secs(10) {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!(
                "recourse run did not return; route is {}",
                read(&viewer, 1).state.as_str()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(0));
    let mut printed = String::new();
    // Transitions are progress, on stderr.
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut printed).unwrap();
    let last = printed
        .lines()
        .rfind(|l| l.starts_with("route "))
        .unwrap_or_default()
        .to_string();
    assert!(last.starts_with("route 1 succeeded "), "{printed}");
}
