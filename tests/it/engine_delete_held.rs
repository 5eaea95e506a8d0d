//! Deleting a route a limit mark held back, by a person or by retention:
//! its dispatch holds go with it (their append-only trigger lets them go
//! only inside the deleting transaction, migration 0013), and the holds,
//! attempts and mark of every other route on the account stay.

use std::path::{Path, PathBuf};
use std::time::Duration;

use recourse::agent::SimStep;
use recourse::engine::{AccountStatus, Engine, Retention, RouteDetail};
use recourse::route::{ManualAction, RouteState};

use crate::common::{act_on, engine_profile, open_engine, start_route};
use crate::engine_accounts::on_account;

/// Three routes on account "work": `first` hit its usage window (reset in
/// an hour) and waits for it; `held` and `kept` were held back by the mark
/// it left, each with one dispatch hold. `held` is then stopped by a person.
struct Held {
    engine: Engine,
    db: PathBuf,
    first: u32,
    held: u32,
    kept: u32,
}

async fn held_routes(dir: &tempfile::TempDir) -> Held {
    let db = dir.path().join("h.db");
    let engine = open_engine(&db, false).await;
    let limit = SimStep::UsageLimit {
        after_ms: 10,
        resets_in_s: 3600,
    };
    let ok = SimStep::Succeed { after_ms: 100 };
    let hits = engine_profile(
        &engine,
        "Hits",
        vec![on_account("claude", "work", vec![limit, ok.clone()])],
    );
    let later = engine_profile(
        &engine,
        "Later",
        vec![on_account("claude too", "work", vec![ok])],
    );
    let first = start_route(&engine, hits).await.unwrap().id;
    until(&engine, first, RouteState::WaitingReset).await;
    let held = start_route(&engine, later).await.unwrap().id;
    let kept = start_route(&engine, later).await.unwrap().id;
    for id in [held, kept] {
        let d = engine.route_detail(id).unwrap();
        assert_eq!(
            (d.snapshot.state, d.holds.len(), d.attempts.len()),
            (RouteState::WaitingReset, 1, 0),
            "route {id} was held back by the mark, nothing dispatched"
        );
    }
    let generation = engine.route_detail(held).unwrap().snapshot.generation;
    let stopped = act_on(&engine, held, ManualAction::Stop, generation)
        .await
        .unwrap();
    assert_eq!(stopped.state, RouteState::Stopped);
    Held {
        engine,
        db,
        first,
        held,
        kept,
    }
}

/// Waits (paused time) until route `id` is in `state`.
async fn until(engine: &Engine, id: u32, state: RouteState) -> RouteDetail {
    for _ in 0..72_000 {
        let d = engine.route_detail(id).unwrap();
        if d.snapshot.state == state {
            return d;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("route {id} never got to {state:?}");
}

/// Rows of `table` about route `id`, read from the file itself: the
/// engine no longer shows a deleted route.
fn rows(db: &Path, table: &str, id: u32) -> u32 {
    rusqlite::Connection::open(db)
        .unwrap()
        .query_row(
            &format!("SELECT COUNT(*) FROM {table} WHERE route_id = ?1"),
            [id],
            |r| r.get(0),
        )
        .unwrap()
}

/// What `held`'s deletion must leave of the other two routes.
fn others_untouched(h: &Held, kept_state: RouteState) {
    assert_eq!(rows(&h.db, "dispatch_holds", h.held), 0, "its hold went");
    assert_eq!(rows(&h.db, "manual_actions", h.held), 0, "its stop went");
    let kept = h.engine.route_detail(h.kept).unwrap();
    assert_eq!(kept.snapshot.state, kept_state);
    assert_eq!(kept.holds.len(), 1, "the other held route keeps its hold");
    assert_eq!(rows(&h.db, "dispatch_holds", h.kept), 1);
    let first = h.engine.route_detail(h.first).unwrap();
    assert!(
        !first.attempts.is_empty(),
        "the route that hit the limit keeps its attempts"
    );
}

#[tokio::test(start_paused = true)]
async fn deleting_a_route_a_mark_held_back_removes_its_holds_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let h = held_routes(&dir).await;
    assert_eq!(h.engine.delete_routes(&[h.held]).unwrap(), [h.held]);
    assert!(h.engine.route_detail(h.held).is_err(), "the route is gone");
    others_untouched(&h, RouteState::WaitingReset);
    let work = h.engine.accounts().unwrap();
    assert!(
        matches!(work.accounts[0].status, AccountStatus::Limited { .. }),
        "the mark stays: only a person's clear or its probe's answer removes it"
    );
    assert_eq!(work.accounts[0].waiting, vec![h.first, h.kept]);
    let refused = rusqlite::Connection::open(&h.db)
        .unwrap()
        .execute("DELETE FROM dispatch_holds WHERE route_id = ?1", [h.kept])
        .expect_err("outside a route's deletion its holds stay append-only");
    assert!(refused.to_string().contains("append-only"), "{refused}");
    h.engine.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn retention_deletes_a_held_route_with_its_holds_and_keeps_newer_ones() {
    let dir = tempfile::tempdir().unwrap();
    let h = held_routes(&dir).await;
    // At the reset `first` probes and succeeds, then `kept` runs: both
    // change an hour after `held` was stopped.
    until(&h.engine, h.kept, RouteState::Succeeded).await;
    tokio::time::sleep(Duration::from_secs(2 * 86_400 - 1800)).await;
    let keep = Retention {
        details_days: None,
        routes_days: Some(2),
    };
    assert_eq!(
        h.engine.prune(keep).unwrap().routes_deleted,
        1,
        "only the route stopped more than two days ago"
    );
    assert!(h.engine.route_detail(h.held).is_err(), "the route is gone");
    others_untouched(&h, RouteState::Succeeded);
    h.engine.shutdown().await;
}
