//! `recourse accounts`, `accounts clear` and `accounts max-running`, and the
//! "not dispatched" lines of `recourse route ID`, as a person reads them.

use std::path::Path;
use std::process::Output;

use recourse::agent::SimStep;
use recourse::policy::Exhausted;

use super::engine_accounts::on_account;
use crate::common::{recourse_on, seed_profile, uniform_policy};

fn out(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).to_string()
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).to_string()
}

/// Route 1 hits a usage window on `work` (reset in an hour) and stops;
/// route 2, on the same account, is held back by the mark and waits.
fn limited(db: &Path) {
    let mut marker = on_account(
        "marker",
        "work",
        vec![SimStep::UsageLimit {
            after_ms: 10,
            resets_in_s: 3600,
        }],
    );
    marker.policy = uniform_policy(None, None, Exhausted::Stop);
    seed_profile(db, "Marker", &[marker]);
    let run = recourse_on(db, &["run", "--profile", "Marker", "--prompt", "go"]);
    assert_eq!(run.status.code(), Some(3), "{}", err(&run));
}

#[test]
fn accounts_lists_each_account_with_its_state_mark_candidates_and_the_maximum() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    limited(&db);
    let listed = recourse_on(&db, &["accounts"]);
    assert_eq!(listed.status.code(), Some(0), "{}", err(&listed));
    let text = out(&listed);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4, "{text}");
    assert!(
        lines[0].starts_with("work | limited until ")
            && lines[0].ends_with(
                " | running 0/- | waiting: none | 24 h: 0 succeeded, 0 transient, 1 hard, 0 other"
            ),
        "{}",
        lines[0]
    );
    assert!(
        lines[1].starts_with(
            "  mark: hard usage_limit_reached [claude_code.usage_limit_epoch.v1] until "
        ) && lines[1].ends_with(" (the provider's reset), from route 1 attempt 1"),
        "{}",
        lines[1]
    );
    assert_eq!(lines[2], "  candidates: Marker / marker");
    assert_eq!(lines[3], "max running agents: no maximum (0 running)");
    let json = recourse_on(&db, &["accounts", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(v["accounts"][0]["id"], "work");
    assert_eq!(v["accounts"][0]["status"]["kind"], "limited");
    assert_eq!(v["accounts"][0]["marks"][0]["code"], "usage_limit_reached");
    assert_eq!(
        v["accounts"][0]["chart"].as_array().unwrap().len(),
        24,
        "a bar per hour of the last day"
    );
}

#[test]
fn a_held_route_says_it_was_not_dispatched_and_clear_lets_the_next_through() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    limited(&db);
    let waiting = on_account("claude", "work", vec![SimStep::Succeed { after_ms: 10 }]);
    seed_profile(&db, "Waiter", &[waiting]);
    let mut child = crate::common::spawn_run(&db, "Waiter");
    let start = std::time::Instant::now();
    let route = loop {
        let shown = recourse_on(&db, &["route", "2"]);
        if out(&shown).contains("not dispatched") {
            break out(&shown);
        }
        assert!(start.elapsed().as_secs() < 20, "route 2 is held back");
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        route.contains(
            "\n  not dispatched: claude — hard usage_limit_reached \
             [claude_code.usage_limit_epoch.v1]\n      decision: not dispatched: work limited until "
        ),
        "{route}"
    );
    let until = route
        .split("work limited until ")
        .nth(1)
        .and_then(|rest| rest.get(..24))
        .unwrap_or_default();
    assert!(
        until.contains(" 20") && until.contains(", ") && !until.contains('T'),
        "the engine's instant in the CLI's one time format (`4 Dec 2026, 17:25:03`): {until:?}"
    );
    let unknown = recourse_on(&db, &["accounts", "clear", "nobody"]);
    assert_eq!(unknown.status.code(), Some(1));
    assert_eq!(err(&unknown), "error: account \"nobody\" does not exist\n");
    let cleared = recourse_on(&db, &["accounts", "clear", "work"]);
    assert_eq!(
        out(&cleared),
        "cleared 1 limit mark on work; its routes dispatch again\n"
    );
    let run = recourse_on(&db, &["run", "--profile", "Waiter", "--prompt", "go"]);
    assert_eq!(
        run.status.code(),
        Some(0),
        "nothing holds it now: {}",
        err(&run)
    );
}

#[test]
fn max_running_is_shown_set_refused_out_of_bounds_and_turned_off() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    limited(&db);
    let shown = recourse_on(&db, &["accounts", "max-running"]);
    assert_eq!(out(&shown), "max running agents: no maximum\n");
    let zero = recourse_on(&db, &["accounts", "max-running", "0"]);
    assert_eq!(zero.status.code(), Some(1));
    assert_eq!(
        err(&zero),
        "error: max_running: must be 1 to 256 running agents (0 is too few)\n"
    );
    let word = recourse_on(&db, &["accounts", "max-running", "many"]);
    assert_eq!(word.status.code(), Some(2));
    assert!(
        err(&word).contains("\"many\": expected a number of running agents, or off"),
        "{}",
        err(&word)
    );
    let set = recourse_on(&db, &["accounts", "max-running", "3"]);
    assert_eq!(out(&set), "max running agents: 3\n");
    let off = recourse_on(&db, &["accounts", "max-running", "off"]);
    assert_eq!(out(&off), "max running agents: no maximum\n");
}
