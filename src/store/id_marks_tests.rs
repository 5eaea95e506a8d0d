//! Profile and candidate ids are never given again (migration 0017): a
//! route reads its candidates by id, and the app keeps its default profile
//! by id.

use chrono::{DateTime, Utc};
use rusqlite::Connection;

use super::profiles::CandidateWrite;
use super::{Store, MIGRATIONS};
use crate::account::AccountId;
use crate::agent::AgentSpec;
use crate::policy::CandidatePolicy;
use crate::profile::CandidateInput;

fn now() -> DateTime<Utc> {
    "2026-12-07T12:00:00Z".parse().unwrap()
}

fn write(name: &str, id: Option<u32>) -> CandidateWrite {
    let mut input = CandidateInput::new(
        name,
        AgentSpec::simulated(Vec::new()),
        CandidatePolicy::default_for_new_candidate(),
    );
    input.id = id;
    (input, AccountId::parse("work").unwrap())
}

fn candidate_ids(store: &Store, profile: u32) -> Vec<u32> {
    let p = store.get_profile(profile).unwrap().unwrap();
    p.candidates.iter().map(|c| c.id).collect()
}

#[test]
fn a_removed_candidates_id_goes_to_no_later_candidate_of_any_profile() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("r.db")).unwrap();
    let a = store.create_profile("a", now()).unwrap();
    let writes = [write("one", None), write("two", None)];
    store
        .save_candidates(a, 1, &writes, now())
        .unwrap()
        .unwrap();
    let [one, two] = candidate_ids(&store, a)[..] else {
        panic!("two candidates")
    };
    store
        .save_candidates(a, 2, &[write("one", Some(one))], now())
        .unwrap()
        .unwrap();
    let b = store
        .create_profile_with_candidates("b", &[write("stranger", None)], now())
        .unwrap()
        .unwrap();
    let stranger = candidate_ids(&store, b)[0];
    assert!(
        stranger > two,
        "a route still running on “two” reads its policy by id {two}: \
         the new candidate must not take it (got {stranger})"
    );
}

#[test]
fn a_deleted_profiles_id_goes_to_no_later_profile_even_after_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("r.db")).unwrap();
    let first = store.create_profile("first", now()).unwrap();
    assert!(store.delete_profile(first).unwrap());
    let second = store.create_profile("second", now()).unwrap();
    assert!(
        second > first,
        "the settings' default profile is kept by id"
    );
    assert!(store.delete_profile(second).unwrap());
    drop(store);
    let store = Store::open(&dir.path().join("r.db")).unwrap();
    let third = store.create_profile("third", now()).unwrap();
    assert!(third > second, "the mark is in the file, not the process");
}

#[test]
fn an_upgrade_starts_the_marks_past_every_id_routes_and_attempts_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.db");
    {
        let c = Connection::open(&path).unwrap();
        for (_, sql) in &MIGRATIONS[..16] {
            c.execute_batch(sql).unwrap();
        }
        c.pragma_update(None, "user_version", 16).unwrap();
        // Profile 1 kept, with candidate 2; candidates 5 and 7 are gone,
        // but a route's snapshot and its attempt recorded them.
        c.execute_batch(
            "INSERT INTO profiles (id, name, created_at, updated_at) VALUES (1, 'p', 't', 't');
             INSERT INTO candidates (id, profile_id, position, name, enabled, agent_json, policy_json)
                 VALUES (2, 1, 0, 'c', 1, '{}', '{}');
             INSERT INTO routes (id, profile_id, profile_name, prompt, state, generation,
                 candidate_index, cycle_json, created_at, updated_at)
                 VALUES (1, NULL, 'gone', 'x', 'stopped', 1, 0, '{}', 't', 't');
             INSERT INTO route_snapshots (route_id, candidates_json) VALUES (1, '[{\"id\": 5}]');
             INSERT INTO attempts (route_id, number, generation, candidate_index, candidate_id,
                 candidate_name, invocation_id, started_at) VALUES (1, 1, 1, 0, 7, 'c', 'i', 't');
             UPDATE routes SET profile_id = NULL;",
        )
        .unwrap();
        c.execute("UPDATE route_ids SET last = 1", []).unwrap();
    }
    let mut store = Store::open(&path).unwrap();
    let b = store
        .create_profile_with_candidates("b", &[write("c", None)], now())
        .unwrap()
        .unwrap();
    assert_eq!(b, 2, "profile 1 is the largest id on record");
    assert_eq!(
        candidate_ids(&store, b),
        [8],
        "candidate 7 is gone, but an attempt recorded it"
    );
}
