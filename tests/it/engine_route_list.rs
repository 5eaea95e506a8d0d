//! The route list the app shows: filtered, searched and paged in SQL, with
//! the count behind each filter, and bad queries refused by field.

use std::time::Duration;

use crate::common::{open_engine, uniform_policy};
use recourse::agent::{AgentSpec, SimStep};
use recourse::engine::{Engine, RouteFilter, RouteQuery, StartRun};
use recourse::policy::Exhausted;
use recourse::profile::CandidateInput;
use recourse::route::RouteState;

/// A profile `name` whose one candidate plays `script`.
fn profile(engine: &Engine, name: &str, script: Vec<SimStep>) -> u32 {
    let p = engine.create_profile(name).unwrap();
    let candidate = CandidateInput::new(
        "sim",
        AgentSpec::simulated(script),
        uniform_policy(None, None, Exhausted::Stop),
    );
    engine
        .save_candidates(p.id, p.revision, vec![candidate])
        .unwrap()
        .id
}

async fn start(engine: &Engine, profile_id: u32, prompt: &str) -> u32 {
    let run = StartRun {
        profile_id,
        prompt: prompt.into(),
        cwd: None,
    };
    engine.start_run(run).await.unwrap().id
}

async fn settle(engine: &Engine, id: u32, state: RouteState) {
    for _ in 0..2000 {
        if engine.route_detail(id).unwrap().snapshot.state == state {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("route {id} never reached {state:?}");
}

fn ids(engine: &Engine, filter: RouteFilter, search: &str) -> Vec<u32> {
    let query = RouteQuery {
        filter,
        search: search.into(),
        before: None,
        limit: 50,
    };
    let page = engine.list_routes(&query).unwrap();
    page.routes.iter().map(|r| r.id).collect()
}

/// Routes 1–3 succeed (Alpha), 4–5 need you (Beta: a tool ran before the
/// failure, so the gate refuses), 6 keeps running (Gamma).
async fn six_routes(engine: &Engine) {
    let alpha = profile(engine, "Alpha", vec![SimStep::Succeed { after_ms: 10 }]);
    let beta = profile(
        engine,
        "Beta",
        vec![SimStep::ToolThenReset { after_ms: 10 }],
    );
    let gamma = profile(
        engine,
        "Gamma",
        vec![SimStep::Succeed {
            after_ms: 3_600_000,
        }],
    );
    for prompt in ["fix half% of tests", "fix the parser", "write docs"] {
        let id = start(engine, alpha, prompt).await;
        settle(engine, id, RouteState::Succeeded).await;
    }
    for prompt in ["deploy_now", "tidy up"] {
        let id = start(engine, beta, prompt).await;
        settle(engine, id, RouteState::NeedsManual).await;
    }
    start(engine, gamma, "a long job").await;
}

#[tokio::test(start_paused = true)]
async fn each_filter_keeps_the_routes_in_its_states_newest_first_with_counts() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open_engine(&dir.path().join("l.db"), false).await;
    six_routes(&engine).await;
    assert_eq!(ids(&engine, RouteFilter::NeedsYou, ""), [5, 4]);
    assert_eq!(ids(&engine, RouteFilter::Active, ""), [6]);
    assert_eq!(ids(&engine, RouteFilter::Finished, ""), [3, 2, 1]);
    assert_eq!(ids(&engine, RouteFilter::All, ""), [6, 5, 4, 3, 2, 1]);
    let counts = engine.route_counts().unwrap();
    assert_eq!(
        (
            counts.needs_you,
            counts.running,
            counts.waiting,
            counts.finished
        ),
        (2, 1, 0, 3)
    );
    engine.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn search_matches_id_profile_or_prompt_and_treats_wildcards_as_text() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open_engine(&dir.path().join("l.db"), false).await;
    six_routes(&engine).await;
    assert_eq!(
        ids(&engine, RouteFilter::All, "PARSER"),
        [2],
        "case ignored"
    );
    assert_eq!(
        ids(&engine, RouteFilter::All, "beta"),
        [5, 4],
        "profile name"
    );
    assert_eq!(ids(&engine, RouteFilter::All, "6"), [6], "the route id");
    assert_eq!(ids(&engine, RouteFilter::All, "#6"), [6], "an id as shown");
    assert_eq!(
        ids(&engine, RouteFilter::All, "%"),
        [1],
        "% is a character to find, not LIKE's any-text"
    );
    assert_eq!(
        ids(&engine, RouteFilter::All, "_"),
        [4],
        "_ is a character to find, not LIKE's any-character"
    );
    assert_eq!(
        ids(&engine, RouteFilter::Finished, "fix"),
        [2, 1],
        "search and filter together"
    );
    assert!(ids(&engine, RouteFilter::NeedsYou, "fix").is_empty());
    engine.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn show_older_continues_after_the_last_route_shown_until_none_is_left() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open_engine(&dir.path().join("l.db"), false).await;
    six_routes(&engine).await;
    let mut query = RouteQuery::all(4);
    let first = engine.list_routes(&query).unwrap();
    let first_ids: Vec<u32> = first.routes.iter().map(|r| r.id).collect();
    assert_eq!((first_ids, first.more), (vec![6, 5, 4, 3], true));
    query.before = Some(3);
    let second = engine.list_routes(&query).unwrap();
    let second_ids: Vec<u32> = second.routes.iter().map(|r| r.id).collect();
    assert_eq!(
        (second_ids, second.more),
        (vec![2, 1], false),
        "the last page says nothing older is left"
    );
    engine.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn a_bad_page_size_or_search_is_refused_at_its_field() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open_engine(&dir.path().join("l.db"), false).await;
    let err = engine.list_routes(&RouteQuery::all(0)).unwrap_err();
    assert_eq!(err.code().as_str(), "validation");
    assert_eq!(
        err.to_string(),
        "limit: must be 1 to 500 routes per page (0 is too few)"
    );
    let long = RouteQuery {
        search: "x".repeat(201),
        ..RouteQuery::all(10)
    };
    let err = engine.list_routes(&long).unwrap_err();
    assert_eq!(
        err.to_string(),
        "search: must be at most 200 characters (201 is too many)"
    );
    engine.shutdown().await;
}
