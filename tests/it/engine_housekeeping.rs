//! Route housekeeping and the route views issue 30 asked for, through the
//! real engine, store and binary: archive and delete with their history,
//! retention, the stopped filter, the timeline, the working directory on
//! every route, a program that cannot start, the reset still ahead after a
//! cancelled wait, and the "any command" preview agreeing with a real run.

use std::time::Duration;

use crate::common::{
    act_confirmed, act_on, open_engine, recourse_on, seed_profile, uniform_policy,
};
use recourse::agent::{AgentKind, AgentSpec, SimStep};
use recourse::engine::{
    Engine, GapReason, Retention, RouteFilter, RouteQuery, RouteSnapshot, StartRun, TimelineEntry,
};
use recourse::evaluator::CandidateSlot;
use recourse::policy::{CandidatePolicy, ClassPolicy, Exhausted};
use recourse::profile::CandidateInput;
use recourse::route::{ManualAction, RouteState};
use recourse::simulation::{preview, SimulatedFailure};

/// An engine on a database in `dir` holding profile `name` of `candidates`.
async fn engine_with(dir: &tempfile::TempDir, name: &str, candidates: &[CandidateInput]) -> Engine {
    let db = dir.path().join("h.db");
    seed_profile(&db, name, candidates);
    open_engine(&db, false).await
}

/// An engine whose profile "ok" has one simulated candidate that succeeds
/// after `after_ms`.
async fn one_candidate(dir: &tempfile::TempDir, after_ms: u32) -> Engine {
    let sim = simulated(
        "sim",
        vec![SimStep::Succeed { after_ms }],
        uniform_policy(None, None, Exhausted::Skip),
    );
    engine_with(dir, "ok", &[sim]).await
}

fn simulated(name: &str, script: Vec<SimStep>, policy: CandidatePolicy) -> CandidateInput {
    CandidateInput::new(name, AgentSpec::simulated(script), policy)
}

async fn start(engine: &Engine, profile: &str, cwd: Option<&str>) -> RouteSnapshot {
    let id = engine.profile_by_name(profile).unwrap().id;
    engine
        .start_run(StartRun {
            profile_id: id,
            prompt: "tidy the build\nand the tests".into(),
            cwd: cwd.map(str::to_string),
        })
        .await
        .unwrap()
}

/// Waits (paused time) until route `id` satisfies `done`.
async fn until(engine: &Engine, id: u32, done: impl Fn(&RouteSnapshot) -> bool) -> RouteSnapshot {
    for _ in 0..36_000 {
        let s = engine.route_detail(id).unwrap().snapshot;
        if done(&s) {
            return s;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("route {id} never got there");
}

fn ids(engine: &Engine, filter: RouteFilter) -> Vec<u32> {
    let query = RouteQuery {
        filter,
        ..RouteQuery::all(100)
    };
    engine
        .list_routes(&query)
        .unwrap()
        .routes
        .iter()
        .map(|s| s.id)
        .collect()
}

#[tokio::test(start_paused = true)]
async fn a_stopped_route_is_its_own_filter_and_archiving_moves_it_out_of_the_lists() {
    let dir = tempfile::tempdir().unwrap();
    let engine = one_candidate(&dir, 60_000).await;
    let route = start(&engine, "ok", None).await;
    let stopped = act_on(&engine, route.id, ManualAction::Stop, route.generation)
        .await
        .unwrap();
    assert_eq!(stopped.state, RouteState::Stopped);
    assert_eq!(ids(&engine, RouteFilter::Stopped), [route.id]);
    assert_eq!(
        ids(&engine, RouteFilter::Finished),
        Vec::<u32>::new(),
        "stopped by a person is not finished"
    );
    let counts = engine.route_counts().unwrap();
    assert_eq!((counts.stopped, counts.finished, counts.all), (1, 0, 1));

    let archived = engine.archive_route(route.id, true).unwrap();
    assert!(archived.archived_at.is_some());
    assert_eq!(ids(&engine, RouteFilter::All), Vec::<u32>::new());
    assert_eq!(ids(&engine, RouteFilter::Archived), [route.id]);
    assert_eq!(engine.route_counts().unwrap().archived, 1);
    // Resuming it is a transition: it is back in the lists, never hidden
    // while it works.
    let resumed = act_confirmed(&engine, route.id, ManualAction::Resume, archived.generation)
        .await
        .unwrap();
    assert_eq!(resumed.archived_at, None);
    assert_eq!(ids(&engine, RouteFilter::Active), [route.id]);
    let err = engine.archive_route(route.id, true).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "route {} is running: only a route that neither runs nor waits can be archived; stop it first",
            route.id
        )
    );
    engine.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn deleting_removes_a_route_with_its_history_and_refuses_a_working_one() {
    let dir = tempfile::tempdir().unwrap();
    let engine = one_candidate(&dir, 10).await;
    let done = start(&engine, "ok", None).await;
    until(&engine, done.id, |s| s.state == RouteState::Succeeded).await;
    let busy = start(&engine, "ok", None).await;
    let err = engine.delete_routes(&[done.id, busy.id]).unwrap_err();
    assert!(err.to_string().contains("is running"), "{err}");
    assert!(
        engine.route_detail(done.id).is_ok(),
        "nothing deleted when one of them works"
    );
    assert_eq!(engine.delete_routes(&[done.id]).unwrap(), [done.id]);
    assert!(engine.route_detail(done.id).is_err());
    engine.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn retention_keeps_recent_routes_and_those_that_need_you() {
    let dir = tempfile::tempdir().unwrap();
    let engine = one_candidate(&dir, 10).await;
    let done = start(&engine, "ok", None).await;
    until(&engine, done.id, |s| s.state == RouteState::Succeeded).await;
    let keep = Retention {
        details_days: Some(1),
        routes_days: Some(2),
    };
    assert_eq!(
        engine.prune(keep).unwrap().routes_deleted,
        0,
        "a fresh route is kept"
    );
    tokio::time::sleep(Duration::from_secs(3 * 86_400)).await;
    let pruned = engine.prune(keep).unwrap();
    assert_eq!(pruned.routes_deleted, 1);
    assert!(engine.route_detail(done.id).is_err());
    engine.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn a_route_records_where_it_runs_even_when_no_directory_was_given() {
    let dir = tempfile::tempdir().unwrap();
    let engine = one_candidate(&dir, 10).await;
    let given = start(&engine, "ok", dir.path().to_str()).await;
    assert_eq!(given.cwd.as_deref(), dir.path().to_str());
    let implicit = start(&engine, "ok", None).await;
    assert_eq!(
        implicit.cwd,
        Some(std::env::current_dir().unwrap().display().to_string()),
        "the directory a run without one uses, recorded and shown"
    );
    engine.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn the_timeline_draws_attempts_the_waits_between_them_and_the_skip() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    seed_profile(
        &db,
        "flow",
        &[
            simulated(
                "first",
                vec![
                    SimStep::UsageLimit {
                        after_ms: 100,
                        resets_in_s: 20,
                    },
                    SimStep::Overloaded { after_ms: 100 },
                ],
                CandidatePolicy::new(
                    ClassPolicy::new(None, Some((1, 5)), Exhausted::Skip),
                    ClassPolicy::new(Some(60), None, Exhausted::Skip),
                ),
            ),
            simulated(
                "second",
                vec![SimStep::Succeed { after_ms: 100 }],
                uniform_policy(None, None, Exhausted::Skip),
            ),
        ],
    );
    let engine = open_engine(&db, false).await;
    let route = start(&engine, "flow", None).await;
    let waiting = until(&engine, route.id, |s| s.state == RouteState::WaitingReset).await;
    let pending = engine.route_detail(route.id).unwrap().timeline;
    assert!(
        matches!(
            pending.last(),
            Some(TimelineEntry::Gap { end: None, due: Some(due), why: GapReason::ResetWait, .. })
                if Some(*due) == waiting.deadline
        ),
        "a pending wait ends at its deadline: {pending:?}"
    );
    until(&engine, route.id, |s| s.state == RouteState::Succeeded).await;
    let timeline = engine.route_detail(route.id).unwrap().timeline;
    let shape: Vec<String> = timeline
        .iter()
        .map(|e| match e {
            TimelineEntry::Attempt {
                number, outcome, ..
            } => format!(
                "attempt {number} {}",
                outcome.map_or("running", |o| o.as_str())
            ),
            TimelineEntry::Gap { why, label, .. } => format!("{why:?}: {label}"),
            TimelineEntry::Mark { label, .. } => format!("mark: {label}"),
        })
        .collect();
    assert_eq!(
        shape,
        [
            "attempt 1 failed",
            "ResetWait: waiting for the provider's reset",
            "attempt 2 failed",
            "Retry: retry 1 of 1 after 5 s",
            "attempt 3 failed",
            "mark: skipped to second",
            "attempt 4 succeeded",
        ]
    );
    engine.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn after_a_cancelled_wait_the_reset_still_ahead_is_shown() {
    let dir = tempfile::tempdir().unwrap();
    let engine = engine_with(
        &dir,
        "limit",
        &[simulated(
            "sim",
            vec![SimStep::UsageLimit {
                after_ms: 10,
                resets_in_s: 600,
            }],
            uniform_policy(Some(3600), None, Exhausted::Stop),
        )],
    )
    .await;
    let route = start(&engine, "limit", None).await;
    let waiting = until(&engine, route.id, |s| s.state == RouteState::WaitingReset).await;
    let cancelled = act_on(
        &engine,
        route.id,
        ManualAction::CancelWait,
        waiting.generation,
    )
    .await
    .unwrap();
    assert_eq!(cancelled.state, RouteState::NeedsManual);
    assert_eq!(cancelled.deadline, None, "no wait runs any more");
    assert_eq!(
        cancelled.provider_reset_at, waiting.deadline,
        "but the provider's reset is still known, so a retry is not pushed"
    );
    engine.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn a_program_that_cannot_start_leads_with_the_cause_and_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let mut agent = AgentSpec::default_for(AgentKind::ClaudeCode);
    agent.program = Some("recourse-no-such-program".into());
    let engine = engine_with(
        &dir,
        "missing",
        &[CandidateInput::new(
            "claude",
            agent,
            uniform_policy(None, Some((3, 5)), Exhausted::Skip),
        )],
    )
    .await;
    let route = start(&engine, "missing", None).await;
    let held = until(&engine, route.id, |s| s.state == RouteState::NeedsManual).await;
    assert!(held.cannot_start);
    let reason = held.manual_reason.unwrap();
    assert!(
        reason.starts_with("cannot start recourse-no-such-program: not found on PATH"),
        "the cause first: {reason}"
    );
    assert!(
        reason.contains("set the candidate's Program"),
        "then the fix: {reason}"
    );
    engine.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn an_any_command_candidate_previews_what_its_real_run_does() {
    let dir = tempfile::tempdir().unwrap();
    let skip = uniform_policy(None, Some((2, 1)), Exhausted::Skip);
    let mut command = AgentSpec::default_for(AgentKind::Generic);
    command.program = Some("sh".into());
    command.args = vec![
        "-c".into(),
        "echo 'overloaded_error: Overloaded' >&2; exit 1".into(),
    ];
    let engine = engine_with(
        &dir,
        "script",
        &[
            CandidateInput::new("script", command, skip.clone()),
            simulated(
                "next",
                vec![SimStep::Succeed { after_ms: 10 }],
                skip.clone(),
            ),
        ],
    )
    .await;
    let route = start(&engine, "script", None).await;
    let real = until(&engine, route.id, |s| s.state != RouteState::Running).await;
    assert_eq!(
        real.state,
        RouteState::NeedsManual,
        "a real run stops for a person"
    );
    let slot = |name: &str, kind| CandidateSlot {
        name: name.into(),
        enabled: true,
        policy: skip.clone(),
        kind: Some(kind),
    };
    let steps = preview(
        &[
            slot("script", AgentKind::Generic),
            slot("next", AgentKind::Simulated),
        ],
        &[SimulatedFailure::of(
            recourse::classification::SemanticCode::ProviderOverloaded,
        )],
        chrono::Utc::now(),
    )
    .steps;
    assert!(
        !steps[0].step.decision.is_automatic(),
        "the preview says the same: {}",
        steps[0].text
    );
    engine.shutdown().await;
}

#[test]
fn the_cli_archives_deletes_only_when_confirmed_and_prunes() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    seed_profile(
        &db,
        "ok",
        &[simulated(
            "sim",
            vec![SimStep::Succeed { after_ms: 10 }],
            uniform_policy(None, None, Exhausted::Skip),
        )],
    );
    let run = recourse_on(&db, &["run", "--profile", "ok", "--prompt", "go"]);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let text = |o: &std::process::Output| {
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stdout).into_owned(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let archived = recourse_on(&db, &["routes", "archive", "1"]);
    assert_eq!(
        text(&archived),
        (
            Some(0),
            "route 1 (succeeded): archived\n".into(),
            String::new()
        )
    );
    let listed = recourse_on(&db, &["routes"]);
    assert!(
        text(&listed).1.contains("| archived"),
        "{:?}",
        text(&listed)
    );
    // No terminal to ask on: nothing is deleted without --yes.
    let refused = recourse_on(&db, &["routes", "delete", "1"]);
    let (code, _, err) = text(&refused);
    assert_eq!(code, Some(2));
    assert_eq!(
        err,
        "error: nothing deleted: standard input is not a terminal to ask on; add --yes to delete\n"
    );
    assert!(text(&recourse_on(&db, &["route", "1"]))
        .1
        .starts_with("route 1 "));
    let deleted = recourse_on(&db, &["routes", "delete", "1", "--yes"]);
    assert_eq!(
        text(&deleted),
        (Some(0), "route 1: deleted\n".into(), String::new())
    );
    let gone = recourse_on(&db, &["route", "1"]);
    assert_eq!(text(&gone).2, "error: route 1 does not exist\n");
    let pruned = recourse_on(
        &db,
        &["routes", "prune", "--routes-older-than", "30", "--yes"],
    );
    assert_eq!(
        text(&pruned),
        (
            Some(0),
            "deleted 0 routes; removed 0 attempt detail rows\n".into(),
            String::new()
        )
    );
    let nothing = recourse_on(&db, &["routes", "prune", "--yes"]);
    assert_eq!(text(&nothing).0, Some(2), "prune needs to be told what");
}

/// The next event of route `id` on `events`, within 5 s.
async fn next_of(
    events: &mut tokio::sync::broadcast::Receiver<recourse::engine::RouteEvent>,
    id: u32,
) -> RouteSnapshot {
    let wait = async {
        loop {
            let e = events.recv().await.expect("event stream open");
            if e.route_id == id {
                return e.snapshot;
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(5), wait)
        .await
        .expect("published within 5 s")
}

#[tokio::test]
async fn an_archive_and_a_delete_made_by_another_process_reach_this_engines_window() {
    let dir = tempfile::tempdir().unwrap();
    let app = one_candidate(&dir, 10).await;
    let s = start(&app, "ok", None).await;
    until(&app, s.id, |s| s.state == RouteState::Succeeded).await;
    let mut events = app.subscribe();
    let mut removals = app.subscribe_removals();
    // `recourse routes archive` / `delete`: another engine on the same file.
    let cli = open_engine(&dir.path().join("h.db"), false).await;
    cli.archive_route(s.id, true).unwrap();
    let archived = next_of(&mut events, s.id).await;
    assert!(
        archived.archived_at.is_some(),
        "an archive mark moves no generation, yet the window hears of it"
    );
    cli.archive_route(s.id, false).unwrap();
    let back = next_of(&mut events, s.id).await;
    assert_eq!(back.archived_at, None, "and of it being brought back");
    cli.delete_routes(&[s.id]).unwrap();
    let gone = tokio::time::timeout(Duration::from_secs(5), removals.recv())
        .await
        .expect("the deletion is noticed within 5 s")
        .unwrap();
    assert_eq!(gone, vec![s.id]);
    cli.shutdown().await;
    app.shutdown().await;
}
