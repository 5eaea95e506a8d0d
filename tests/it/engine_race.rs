//! Racing actors on one route: a timer firing, an agent report and two
//! people clicking, each on its own database connection and thread, all
//! planned from the same snapshot. Over thousands of rounds exactly one
//! commits; every loser gets the winner's row back; no attempt is
//! dispatched twice.

use std::path::Path;
use std::sync::{Arc, Barrier};

use crate::common::uniform_policy;
use chrono::{Duration, Utc};
use recourse::agent::{AgentSpec, SimStep};
use recourse::catalogue;
use recourse::evidence::{Evidence, Provider, RawEvidence};
use recourse::policy::Exhausted;
use recourse::profile::CandidateInput;
use recourse::route::machine::{self, Effect, Failure, Lease, Plan, World};
use recourse::route::{AttemptInput, ManualAction, RouteRow, RouteState};
use recourse::safety::EffectContext;
use recourse::store::{Cas, Store};
use recourse::timing::machine_local_tz;

const ROUNDS: usize = 2000;

fn candidate(name: &str) -> CandidateInput {
    CandidateInput::new(
        name,
        AgentSpec::simulated(vec![SimStep::Overloaded { after_ms: 1 }]),
        uniform_policy(Some(600), Some((3, 1)), Exhausted::Skip),
    )
}

fn new_route(store: &mut Store, profile_id: u32) -> RouteRow {
    let profile = store.get_profile(profile_id).unwrap().unwrap();
    let now = Utc::now();
    let lease = Lease {
        owner: "racer",
        until: now + Duration::seconds(60),
    };
    let new = machine::start(&profile, "race".into(), None, lease, World::default(), now).unwrap();
    let created = store
        .create_route(&new, |row| {
            machine::released(row, lease, World::default(), now)
        })
        .unwrap();
    let Cas::Won(row) = created else {
        panic!("nothing else writes");
    };
    row
}

/// A transient failure before delivery: the evaluator schedules a retry.
fn overloaded(row: &RouteRow) -> Failure {
    let raw = RawEvidence::new(
        Provider::AnthropicApi,
        r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
        Utc::now(),
    )
    .with_http_status(529)
    .with_error_type(Some("overloaded_error".into()));
    let evidence = Evidence::from_raw(raw);
    Failure {
        number: row.attempts,
        classification: catalogue::classify(&evidence, machine_local_tz()),
        evidence,
        effect: EffectContext::effect_safe(),
        session: Default::default(),
        files_changed: None,
        earlier: Vec::new(),
    }
}

/// What each actor would do, seen from the same snapshot. `None`: the
/// actor has nothing valid to do in this state and stays out.
fn plans(row: &RouteRow, round: usize) -> Vec<Option<Plan>> {
    let now = Utc::now();
    let lease = Lease {
        owner: "racer",
        until: now + Duration::seconds(60),
    };
    let timer = machine::timer_fired(row, lease, World::default(), now);
    // The machine itself refuses a report unless the route is running.
    let agent = if round % 5 == 0 {
        machine::succeeded(row, row.attempts, now)
    } else {
        machine::failed(row, overloaded(row), lease, World::default(), now)
    };
    let valid = machine::valid_actions(row);
    let click = |pick: usize| {
        let action = *valid.get(pick % valid.len().max(1))?;
        let ask = recourse::route::Ask::new(action, row.generation, recourse::route::Actor::App)
            .accepting_repeat();
        // A hand-over sends what the engine found; the race is the same.
        if action == ManualAction::Handover {
            let input = AttemptInput::Handover {
                from_attempt: row.attempts,
                package: "PACKAGE".into(),
            };
            let world = World::default();
            return machine::manual_continuation(row, input, ask, lease, world, now).ok();
        }
        machine::manual(row, ask, lease, World::default(), now).ok()
    };
    vec![timer, agent, click(round), click(round + 1)]
}

fn open(path: &Path) -> Store {
    Store::open(path).expect("store opens")
}

#[test]
fn timer_agent_and_manual_actions_racing_have_exactly_one_winner() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("race.db");
    let mut setup = open(&path);
    let profile = setup.create_profile("race", Utc::now()).unwrap();
    setup
        .save_candidates(
            profile,
            1,
            &crate::common::with_accounts(&setup, &[candidate("a"), candidate("b")]),
            Utc::now(),
        )
        .unwrap()
        .unwrap();
    let mut row = new_route(&mut setup, profile);
    let mut stores: Vec<Store> = (0..4).map(|_| open(&path)).collect();
    let mut contested = 0;
    for round in 0..ROUNDS {
        if matches!(row.state, RouteState::Succeeded) {
            row = new_route(&mut setup, profile);
        }
        let plans = plans(&row, round);
        let competing = plans.iter().filter(|p| p.is_some()).count();
        assert!(
            competing >= 1,
            "round {round}: someone can act in {:?}",
            row.state
        );
        contested += usize::from(competing > 1);
        let attempts_before = row.attempts;
        let dispatches: Vec<bool> = plans
            .iter()
            .map(|p| {
                p.as_ref()
                    .is_some_and(|p| matches!(p.effect(), Effect::Dispatch(_)))
            })
            .collect();
        let results = race(&mut stores, plans);
        let winners: Vec<usize> = (0..results.len())
            .filter(|i| matches!(results[*i], Some(Cas::Won(_))))
            .collect();
        assert_eq!(
            winners.len(),
            1,
            "round {round}: exactly one winner of {competing}"
        );
        let winner = match &results[winners[0]] {
            Some(Cas::Won(r)) => r.clone(),
            Some(Cas::Lost(_) | Cas::WorldChanged(_)) | None => {
                unreachable!("winner index points at a win")
            }
        };
        assert_eq!(
            winner.generation,
            row.generation + 1,
            "one generation per transition"
        );
        for (i, r) in results.iter().enumerate() {
            if let Some(Cas::Lost(current)) = r {
                assert_eq!(
                    current, &winner,
                    "round {round}: loser {i} sees the winner's row"
                );
            }
        }
        let expected_attempts = attempts_before + u32::from(dispatches[winners[0]]);
        assert_eq!(
            winner.attempts, expected_attempts,
            "round {round}: at most one dispatch"
        );
        row = winner;
    }
    assert!(
        contested > ROUNDS / 2,
        "most rounds were contested ({contested})"
    );
    let final_row = setup.route(row.id).unwrap().unwrap();
    let attempts = setup.attempts(row.id).unwrap();
    assert_eq!(attempts.len() as u32, final_row.attempts);
    let mut gens: Vec<u32> = attempts.iter().map(|a| a.attempt.generation).collect();
    gens.dedup();
    assert_eq!(
        gens.len(),
        attempts.len(),
        "no two attempts share a generation"
    );
}

/// Runs every plan on its own thread and connection, released together.
fn race(stores: &mut [Store], plans: Vec<Option<Plan>>) -> Vec<Option<Cas>> {
    let barrier = Arc::new(Barrier::new(plans.len()));
    std::thread::scope(|s| {
        let handles: Vec<_> = stores
            .iter_mut()
            .zip(plans)
            .map(|(store, plan)| {
                let barrier = Arc::clone(&barrier);
                s.spawn(move || {
                    barrier.wait();
                    plan.map(|p| store.commit_transition(&p).expect("store writes"))
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

#[test]
fn stale_click_loses_to_a_transition_it_did_not_see() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("stale.db");
    let mut store = open(&path);
    let profile = store.create_profile("p", Utc::now()).unwrap();
    store
        .save_candidates(
            profile,
            1,
            &crate::common::with_accounts(&store, &[candidate("a"), candidate("b")]),
            Utc::now(),
        )
        .unwrap()
        .unwrap();
    let row = new_route(&mut store, profile);
    let now = Utc::now();
    let lease = Lease {
        owner: "racer",
        until: now + Duration::seconds(60),
    };
    let stop = machine::manual(
        &row,
        recourse::route::Ask::new(
            ManualAction::Stop,
            row.generation,
            recourse::route::Actor::App,
        )
        .accepting_repeat(),
        lease,
        World::default(),
        now,
    )
    .unwrap();
    let report = machine::failed(&row, overloaded(&row), lease, World::default(), now).unwrap();
    let Cas::Won(won) = store.commit_transition(&report).unwrap() else {
        panic!("the report commits first");
    };
    let Cas::Lost(lost) = store.commit_transition(&stop).unwrap() else {
        panic!("the stop planned from the old row loses");
    };
    assert_eq!(lost, won, "the loser gets the current row");
    assert_eq!(lost.state, RouteState::RetryScheduled);
}
