//! Accounts across processes sharing one database, each a real `recourse
//! run`: a mark recorded in one process stops every other from dispatching
//! to its account; after the reset exactly one of 8 racing processes
//! probes; a probe whose process is killed holds nobody back; the global
//! maximum and `max_concurrent` hold across processes.
//!
//! What happened, in commit order, is read from a log the test adds to the
//! database: triggers on attempts, attempt results and limit marks append
//! to it inside each committing transaction, so its order is the order in
//! which SQLite serialized the writers.

use std::path::Path;
use std::process::{Child, Output};
use std::time::{Duration, Instant};

use recourse::agent::SimStep;
use recourse::policy::Exhausted;
use recourse::profile::CandidateInput;
use recourse::route::RouteState;
use recourse::store::Store;

use super::engine_accounts::on_account;
use crate::common::{seed_profile, spawn_run, uniform_policy};

const LOG: &str = "
CREATE TABLE test_log (seq INTEGER PRIMARY KEY, what TEXT NOT NULL, route INTEGER, account TEXT);
CREATE TRIGGER test_log_dispatch AFTER INSERT ON attempts BEGIN
  INSERT INTO test_log (what, route, account) VALUES ('dispatch', NEW.route_id, NEW.account);
END;
CREATE TRIGGER test_log_result AFTER INSERT ON attempt_results BEGIN
  INSERT INTO test_log (what, route, account)
  SELECT 'result ' || NEW.outcome, route_id, account FROM attempts WHERE id = NEW.attempt_id;
END;
CREATE TRIGGER test_log_mark AFTER INSERT ON limit_marks BEGIN
  INSERT INTO test_log (what, account) VALUES ('mark', NEW.account);
END;
CREATE TRIGGER test_log_remark AFTER UPDATE OF mark_json ON limit_marks BEGIN
  INSERT INTO test_log (what, account) VALUES ('mark', NEW.account);
END;
";

/// One line of the commit-order log.
#[derive(Debug, Clone, PartialEq)]
struct Logged {
    seq: i64,
    what: String,
    route: Option<u32>,
    account: Option<String>,
}

/// A database with its schema and the commit-order log.
fn database(dir: &Path) -> std::path::PathBuf {
    let db = dir.join("r.db");
    drop(Store::open(&db).unwrap());
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch(LOG).unwrap();
    db
}

fn log(db: &Path) -> Vec<Logged> {
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut stmt = conn
        .prepare("SELECT seq, what, route, account FROM test_log ORDER BY seq")
        .unwrap();
    stmt.query_map([], |r| {
        Ok(Logged {
            seq: r.get(0)?,
            what: r.get(1)?,
            route: r.get(2)?,
            account: r.get(3)?,
        })
    })
    .unwrap()
    .collect::<Result<_, _>>()
    .unwrap()
}

fn finish(children: Vec<Child>) -> Vec<Output> {
    children
        .into_iter()
        .map(|c| c.wait_with_output().expect("recourse run ends"))
        .collect()
}

fn state(db: &Path, id: u32) -> Option<RouteState> {
    Some(Store::open_read_only(db).ok()?.route(id).ok()??.state)
}

/// A usage window on `work` that resets in `resets_in_s`; its route stops.
fn marker(resets_in_s: u32, after_ms: u32) -> CandidateInput {
    let mut c = on_account(
        "marker",
        "work",
        vec![SimStep::UsageLimit {
            after_ms,
            resets_in_s,
        }],
    );
    c.policy = uniform_policy(None, None, Exhausted::Stop);
    c
}

/// A candidate on `work` that succeeds after `after_ms`, skipping to one on
/// another account when `work` is limited.
fn starter_with_fallback() -> Vec<CandidateInput> {
    let mut first = on_account("work", "work", vec![SimStep::Succeed { after_ms: 30 }]);
    first.policy = uniform_policy(None, None, Exhausted::Skip);
    let spare = on_account("spare", "spare", vec![SimStep::Succeed { after_ms: 10 }]);
    vec![first, spare]
}

#[test]
fn a_mark_one_process_records_stops_every_process_dispatching_to_its_account() {
    let dir = tempfile::tempdir().unwrap();
    let db = database(dir.path());
    for round in 0..10u32 {
        seed_profile(&db, &format!("Marker {round}"), &[marker(3600, round * 7)]);
    }
    seed_profile(&db, "Starter", &starter_with_fallback());
    let mut held = 0;
    let mut before_the_mark = 0;
    for round in 0..10u32 {
        Store::open(&db)
            .unwrap()
            .clear_marks(&recourse::account::AccountId::parse("work").unwrap())
            .unwrap();
        let from = log(&db).last().map_or(0, |l| l.seq);
        // Three race the marker; two more start once it is done, so every
        // round also has routes that certainly come after the mark.
        let mut children = vec![spawn_run(&db, &format!("Marker {round}"))];
        children.extend((0..3).map(|_| spawn_run(&db, "Starter")));
        let mut marker = children.remove(0);
        assert_eq!(marker.wait().unwrap().code(), Some(3), "the marker stops");
        children.extend((0..2).map(|_| spawn_run(&db, "Starter")));
        let outputs = finish(children);
        for out in &outputs {
            assert_eq!(
                out.status.code(),
                Some(0),
                "a starter succeeds on work before the mark or on spare after it: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let round_log: Vec<Logged> = log(&db).into_iter().filter(|l| l.seq > from).collect();
        let mark = round_log
            .iter()
            .find(|l| l.what == "mark")
            .expect("the marker's failure marked work")
            .seq;
        let late: Vec<&Logged> = round_log
            .iter()
            .filter(|l| {
                l.seq > mark && l.what == "dispatch" && l.account.as_deref() == Some("work")
            })
            .collect();
        assert!(
            late.is_empty(),
            "round {round}: dispatched to work after its mark committed: {late:?}"
        );
        // Less the marker's own dispatch.
        before_the_mark += round_log
            .iter()
            .filter(|l| {
                l.seq < mark && l.what == "dispatch" && l.account.as_deref() == Some("work")
            })
            .count()
            .saturating_sub(1);
        held += round_log
            .iter()
            .filter(|l| {
                l.seq > mark && l.what == "dispatch" && l.account.as_deref() == Some("spare")
            })
            .count();
    }
    assert!(
        held >= 20,
        "the starters that came after a mark went to the spare account ({held} did, \
         {before_the_mark} dispatched to work before the mark)"
    );
}

#[test]
fn after_the_reset_exactly_one_of_eight_racing_processes_probes() {
    let dir = tempfile::tempdir().unwrap();
    let db = database(dir.path());
    seed_profile(&db, "Marker", &[marker(8, 10)]);
    seed_profile(
        &db,
        "Waiter",
        &[on_account(
            "work",
            "work",
            vec![SimStep::Succeed { after_ms: 1500 }],
        )],
    );
    let out = finish(vec![spawn_run(&db, "Marker")]);
    assert_eq!(out[0].status.code(), Some(3));
    let waiters: Vec<Child> = (0..8).map(|_| spawn_run(&db, "Waiter")).collect();
    let outputs = finish(waiters);
    for out in &outputs {
        assert_eq!(
            out.status.code(),
            Some(0),
            "every waiter succeeds in the end: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let entries = log(&db);
    let dispatches: Vec<&Logged> = entries
        .iter()
        .filter(|l| l.what == "dispatch" && l.route != Some(1))
        .collect();
    assert_eq!(dispatches.len(), 8, "each waiter ran once: {entries:#?}");
    let probe = dispatches[0];
    let answer = entries
        .iter()
        .find(|l| l.what == "result succeeded" && l.route == probe.route)
        .expect("the probe succeeded");
    let during: Vec<&&Logged> = dispatches
        .iter()
        .filter(|l| l.seq > probe.seq && l.seq < answer.seq)
        .collect();
    assert!(
        during.is_empty(),
        "nothing else reached the provider while route {:?} probed: {during:?}",
        probe.route
    );
}

#[test]
fn a_probe_whose_process_was_killed_holds_nobody_back() {
    let dir = tempfile::tempdir().unwrap();
    let db = database(dir.path());
    seed_profile(&db, "Marker", &[marker(3, 10)]);
    seed_profile(
        &db,
        "Slow",
        &[on_account(
            "work",
            "work",
            vec![SimStep::Succeed { after_ms: 600_000 }],
        )],
    );
    seed_profile(
        &db,
        "Quick",
        &[on_account(
            "work",
            "work",
            vec![SimStep::Succeed { after_ms: 10 }],
        )],
    );
    finish(vec![spawn_run(&db, "Marker")]);
    let mut probe = spawn_run(&db, "Slow");
    let started = Instant::now();
    while state(&db, 2) != Some(RouteState::Running) {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the probe runs"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let quick = spawn_run(&db, "Quick");
    while state(&db, 3) != Some(RouteState::Queued) {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the next route waits for the probe"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    probe.kill().unwrap();
    probe.wait().unwrap();
    let out = quick.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "with its probe's process gone it probes itself and succeeds: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        state(&db, 2),
        Some(RouteState::Running),
        "the crashed probe's route is left for recover, untouched"
    );
}

#[test]
fn the_global_maximum_and_max_concurrent_hold_across_processes() {
    let dir = tempfile::tempdir().unwrap();
    let db = database(dir.path());
    let out = crate::common::recourse_on(&db, &["accounts", "max-running", "2"]);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "max running agents: 2\n"
    );
    let busy = on_account("busy", "a", vec![SimStep::Succeed { after_ms: 700 }]);
    seed_profile(&db, "Busy", &[busy]);
    let mut single = on_account("single", "b", vec![SimStep::Succeed { after_ms: 700 }]);
    single.agent.max_concurrent = Some(1);
    seed_profile(&db, "Single", &[single]);
    let mut children: Vec<Child> = (0..4).map(|_| spawn_run(&db, "Busy")).collect();
    children.extend((0..3).map(|_| spawn_run(&db, "Single")));
    for out in finish(children) {
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let (mut all, mut on_b, mut most, mut most_b) = (0i32, 0i32, 0, 0);
    for l in log(&db) {
        let step = match l.what.as_str() {
            "dispatch" => 1,
            w if w.starts_with("result") => -1,
            _ => 0,
        };
        all += step;
        if l.account.as_deref() == Some("b") {
            on_b += step;
        }
        most = most.max(all);
        most_b = most_b.max(on_b);
    }
    assert_eq!(
        most, 2,
        "never more than the global maximum, and it was reached"
    );
    assert_eq!(most_b, 1, "account b's max_concurrent of 1 held");
}
