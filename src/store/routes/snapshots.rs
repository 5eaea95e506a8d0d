//! A route's candidate snapshot: written once, when the route is created,
//! in `route_snapshots` (migration 0010), never in the route row a
//! transition rewrites; and never with an `env` value in it.

use crate::profile::Candidate;
use crate::store::to_json;

/// The candidates as a route keeps them: every `env` variable by name, its
/// value left empty. The engine reads values from the profile when it
/// dispatches (`engine::dispatch_env`), so a key removed from a profile does
/// not live on in the routes that used it.
pub(super) fn snapshot_json(candidates: &[Candidate]) -> String {
    let kept: Vec<Candidate> = candidates
        .iter()
        .map(|c| {
            let mut c = c.clone();
            c.agent.env.values_mut().for_each(String::clear);
            c
        })
        .collect();
    to_json(&kept)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::path::Path;

    use rusqlite::{params, Connection};

    use super::super::fixtures::{commit, now, open, stopped};
    use super::*;
    use crate::agent::AgentSpec;
    use crate::evaluator::RouteCycle;
    use crate::policy::CandidatePolicy;
    use crate::route::machine;
    use crate::store::{ts, Store, MIGRATIONS};

    fn candidate(id: u32, env: &[(&str, &str)]) -> Candidate {
        let mut agent = AgentSpec::simulated(Vec::new());
        agent.env = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Candidate {
            id,
            name: format!("c{id}"),
            enabled: true,
            agent,
            policy: CandidatePolicy::default_for_new_candidate(),
            policy_revision: 1,
            account: None,
        }
    }

    /// Every file of the database at `db` (the WAL too, while it exists).
    fn file_bytes(db: &Path) -> Vec<u8> {
        let mut bytes = std::fs::read(db).unwrap();
        for suffix in ["-wal", "-journal"] {
            if let Ok(more) = std::fs::read(format!("{}{suffix}", db.display())) {
                bytes.extend(more);
            }
        }
        bytes
    }

    fn contains(haystack: &[u8], needle: &str) -> bool {
        haystack
            .windows(needle.len())
            .any(|w| w == needle.as_bytes())
    }

    #[test]
    fn a_snapshot_keeps_variable_names_never_values() {
        let kept: Vec<Candidate> = serde_json::from_str(&snapshot_json(&[
            candidate(1, &[("TZ", "Asia/Tokyo"), ("HTTPS_PROXY", "http://p:3128")]),
            candidate(2, &[]),
        ]))
        .unwrap();
        let names = |c: &Candidate| c.agent.env.clone();
        assert_eq!(
            names(&kept[0]),
            BTreeMap::from([
                ("HTTPS_PROXY".into(), String::new()),
                ("TZ".into(), String::new())
            ]),
            "which variables were set, each value left empty"
        );
        assert!(kept[1].agent.env.is_empty());
    }

    #[test]
    fn a_transition_writes_the_route_row_and_never_its_snapshot() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = open(&dir);
        let columns: Vec<String> = store
            .conn()
            .prepare("SELECT name FROM pragma_table_info('routes')")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert!(
            !columns.iter().any(|c| c == "candidates_json"),
            "the route row a transition rewrites holds no snapshot: {columns:?}"
        );
        store
            .conn()
            .execute_batch(
                "CREATE TEMP TABLE snapshot_writes (route_id INTEGER);
                 CREATE TEMP TRIGGER snapshot_updated AFTER UPDATE ON main.route_snapshots
                 BEGIN INSERT INTO snapshot_writes VALUES (new.route_id); END;",
            )
            .unwrap();
        let stopped = stopped(&mut store);
        let lease = machine::Lease {
            owner: "me",
            until: now(),
        };
        let resume = machine::manual(
            &stopped,
            // Stopped while its agent ran: the person confirms the repeat.
            crate::route::Ask::new(
                crate::route::ManualAction::Resume,
                stopped.generation,
                crate::route::Actor::App,
            )
            .accepting_repeat(),
            lease,
            machine::World::default(),
            now(),
        )
        .unwrap();
        let resumed = commit(&mut store, resume);
        assert_eq!(
            resumed.candidates, stopped.candidates,
            "read back from the snapshot"
        );
        let writes: u32 = store
            .conn()
            .query_row("SELECT COUNT(*) FROM snapshot_writes", [], |r| r.get(0))
            .unwrap();
        assert_eq!(
            writes, 0,
            "a create, a stop and a resume: the snapshot never rewritten"
        );
    }

    #[test]
    fn the_upgrade_moves_snapshots_out_of_route_rows_and_strips_their_values() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.db");
        let old = vec![
            candidate(
                1,
                &[("ANTHROPIC_BASE_URL", "https://gw.example/planted-9f2c")],
            ),
            candidate(2, &[]),
            candidate(3, &[("PLANTED_A", "planted-value-a"), ("TZ", "Asia/Tokyo")]),
        ];
        {
            let c = Connection::open(&path).unwrap();
            c.pragma_update(None, "secure_delete", "ON").unwrap();
            for (_, sql) in &MIGRATIONS[..9] {
                c.execute_batch(sql).unwrap();
            }
            c.pragma_update(None, "user_version", 9).unwrap();
            for id in [1, 2] {
                c.execute(
                    "INSERT INTO routes (id, profile_name, prompt, state, generation, \
                     candidate_index, candidates_json, cycle_json, created_at, updated_at) \
                     VALUES (?1, 'p', 'x', 'succeeded', 3, 0, ?2, ?3, ?4, ?4)",
                    params![
                        id,
                        serde_json::to_string(&old).unwrap(),
                        serde_json::to_string(&RouteCycle::new(0)).unwrap(),
                        ts(now())
                    ],
                )
                .unwrap();
            }
        }
        let store = Store::open(&path).unwrap();
        for route in store.routes().unwrap() {
            let expected: Vec<Candidate> = serde_json::from_str(&snapshot_json(&old)).unwrap();
            assert_eq!(
                route.candidates, expected,
                "route {}: the same candidates in the same order, values gone",
                route.id
            );
        }
        drop(store);
        let bytes = file_bytes(&path);
        for value in ["planted-9f2c", "planted-value-a", "Asia/Tokyo"] {
            assert!(
                !contains(&bytes, value),
                "{value} is still somewhere in the upgraded file"
            );
        }
        assert!(contains(&bytes, "PLANTED_A"), "the names are kept");
    }
}
