//! Route housekeeping: archiving a route at rest, deleting routes with their
//! whole history, and pruning the bulky details of old attempts first.
//!
//! Deletion is generic over the schema: the rows that depend on a route
//! (its attempts, and whatever refers to them: results, processes,
//! transcripts, …) are found through SQLite's foreign keys, so a table a
//! later migration adds with a `REFERENCES attempts(id)` is removed with its
//! route without this file knowing its name. The append-only triggers let
//! a route's history go only while its id is in `route_purges`, which is
//! written and emptied inside the deleting transaction (migration 0009).

use chrono::{DateTime, Utc};
use rusqlite::{params, params_from_iter, Transaction, TransactionBehavior};

use crate::route::RouteState;
use crate::store::{ts, Store, StoreError};

/// Which routes a list or a count is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RouteScope {
    /// Routes not archived: every everyday list and count.
    Listed,
    /// Archived routes only.
    Archived,
}

impl RouteScope {
    /// Its SQL condition on `routes` (fixed words, never input).
    pub(super) fn condition(self) -> &'static str {
        match self {
            RouteScope::Listed => "archived_at IS NULL",
            RouteScope::Archived => "archived_at IS NOT NULL",
        }
    }
}

/// What a prune removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PruneCount {
    /// Detail rows of attempts (transcripts, processes, …) removed, their
    /// history kept.
    pub detail_rows: u32,
    /// Routes deleted with their history.
    pub routes_deleted: u32,
}

/// The tables that are a route's history itself: deleting a route removes
/// them, pruning details keeps them.
const HISTORY: &[&str] = &["routes", "attempts", "attempt_results"];

/// How deep a chain of `REFERENCES` is followed; the schema has two levels.
const MAX_DEPTH: usize = 4;

impl Store {
    /// Sets or clears the archive mark of route `id` when it is in one of
    /// `at_rest`; false when it is not (it moved meanwhile, or is gone).
    pub fn set_archived(
        &self,
        id: u32,
        at: Option<DateTime<Utc>>,
        at_rest: &[RouteState],
    ) -> Result<bool, StoreError> {
        let sql = format!(
            "UPDATE routes SET archived_at = ?2 WHERE id = ?1 AND state IN ({})",
            state_list(at_rest)
        );
        Ok(self.conn().execute(&sql, params![id, at.map(ts)])? == 1)
    }

    /// Deletes each route of `ids` that is in one of `at_rest`, with every
    /// row that depends on it, in one transaction; the ids deleted.
    pub fn delete_routes(
        &mut self,
        ids: &[u32],
        at_rest: &[RouteState],
    ) -> Result<Vec<u32>, StoreError> {
        let tx = self
            .conn_mut()
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let deleted = purge(&tx, ids, at_rest)?;
        tx.commit()?;
        Ok(deleted)
    }

    /// Retention, in one transaction: routes in `at_rest` not changed since
    /// `details_before` lose their attempts' detail rows (everything but the
    /// history), and those not changed since `routes_before` are deleted.
    pub fn prune(
        &mut self,
        at_rest: &[RouteState],
        details_before: Option<DateTime<Utc>>,
        routes_before: Option<DateTime<Utc>>,
    ) -> Result<PruneCount, StoreError> {
        let tx = self
            .conn_mut()
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let mut count = PruneCount::default();
        if let Some(before) = details_before {
            let ids = idle_routes(&tx, at_rest, before)?;
            let selection = format!("route_id IN ({})", id_list(&ids));
            for (child, from, to) in referencing(&tx, "attempts")? {
                if HISTORY.contains(&child.as_str()) {
                    continue;
                }
                let rows =
                    format!("\"{from}\" IN (SELECT \"{to}\" FROM attempts WHERE {selection})");
                count.detail_rows += delete_tree(&tx, &child, &rows, 1)? as u32;
            }
        }
        if let Some(before) = routes_before {
            let ids = idle_routes(&tx, at_rest, before)?;
            count.routes_deleted = purge(&tx, &ids, at_rest)?.len() as u32;
        }
        tx.commit()?;
        Ok(count)
    }
}

/// Deletes the routes of `ids` in `at_rest` and all that depends on them.
fn purge(
    tx: &Transaction<'_>,
    ids: &[u32],
    at_rest: &[RouteState],
) -> Result<Vec<u32>, StoreError> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let sql = format!(
        "SELECT id FROM routes WHERE id IN ({}) AND state IN ({}) ORDER BY id",
        id_list(ids),
        state_list(at_rest)
    );
    let found: Vec<u32> = tx
        .prepare(&sql)?
        .query_map([], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    if found.is_empty() {
        return Ok(found);
    }
    let mut mark = tx.prepare_cached("INSERT INTO route_purges (route_id) VALUES (?1)")?;
    for id in &found {
        mark.execute([id])?;
    }
    delete_tree(tx, "routes", &format!("id IN ({})", id_list(&found)), 0)?;
    tx.execute(
        &format!(
            "DELETE FROM route_purges WHERE route_id IN ({})",
            id_list(&found)
        ),
        [],
    )?;
    Ok(found)
}

/// Deletes the rows of `table` matching `rows` (an SQL condition), after
/// the rows of every table that refers to them; the rows deleted from
/// `table` itself.
fn delete_tree(
    tx: &Transaction<'_>,
    table: &str,
    rows: &str,
    depth: usize,
) -> Result<usize, StoreError> {
    if depth < MAX_DEPTH {
        for (child, from, to) in referencing(tx, table)? {
            if child == table {
                continue;
            }
            let child_rows =
                format!("\"{from}\" IN (SELECT \"{to}\" FROM \"{table}\" WHERE {rows})");
            delete_tree(tx, &child, &child_rows, depth + 1)?;
        }
    }
    Ok(tx.execute(&format!("DELETE FROM \"{table}\" WHERE {rows}"), [])?)
}

/// Every table with a foreign key to `table`: (table, its column, the
/// referenced column). Names come from the schema, never from input.
fn referencing(
    tx: &Transaction<'_>,
    table: &str,
) -> Result<Vec<(String, String, String)>, StoreError> {
    let mut stmt = tx.prepare_cached(
        "SELECT m.name, f.\"from\", f.\"to\" FROM sqlite_master m \
         JOIN pragma_foreign_key_list(m.name) f \
         WHERE m.type = 'table' AND f.\"table\" = ?1 ORDER BY m.name",
    )?;
    let rows = stmt
        .query_map([table], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                // No column named: the parent's primary key.
                r.get::<_, Option<String>>(2)?
                    .unwrap_or_else(|| "rowid".into()),
            ))
        })?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(rows)
}

/// Routes in `at_rest` last changed before `before`.
fn idle_routes(
    tx: &Transaction<'_>,
    at_rest: &[RouteState],
    before: DateTime<Utc>,
) -> Result<Vec<u32>, StoreError> {
    let sql = format!(
        "SELECT id FROM routes WHERE state IN ({}) AND updated_at < ?1 ORDER BY id",
        state_list(at_rest)
    );
    let ids = tx
        .prepare(&sql)?
        .query_map(params_from_iter([ts(before)]), |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    Ok(ids)
}

/// `'succeeded', 'stopped'`: fixed words from `RouteState::as_str`.
fn state_list(states: &[RouteState]) -> String {
    let words: Vec<String> = states.iter().map(|s| format!("'{}'", s.as_str())).collect();
    if words.is_empty() {
        "NULL".into()
    } else {
        words.join(", ")
    }
}

/// `1, 2, 3`: numbers only.
fn id_list(ids: &[u32]) -> String {
    let words: Vec<String> = ids.iter().map(u32::to_string).collect();
    if words.is_empty() {
        "NULL".into()
    } else {
        words.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::{self, now, open, running_route};
    use super::*;

    fn stopped(store: &mut Store) -> u32 {
        fixtures::stopped(store).id
    }

    fn count(store: &Store, table: &str) -> u32 {
        store
            .conn()
            .query_row(&format!("SELECT COUNT(*) FROM {table}"), [], |r| r.get(0))
            .unwrap()
    }

    const AT_REST: &[RouteState] = &[RouteState::Stopped, RouteState::Succeeded];

    #[test]
    fn deleting_a_route_removes_every_row_that_refers_to_it_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = open(&dir);
        let gone = stopped(&mut store);
        let kept = stopped(&mut store);
        store.set_attempt_process(gone, 1, 4242, 7).unwrap();
        // A table a later migration might add, known to no code here.
        store
            .conn()
            .execute_batch(
                "CREATE TABLE attempt_notes (attempt_id INTEGER NOT NULL REFERENCES attempts(id), \
                 note TEXT); INSERT INTO attempt_notes SELECT id, 'x' FROM attempts;",
            )
            .unwrap();
        assert_eq!(store.delete_routes(&[gone], AT_REST).unwrap(), [gone]);
        assert!(store.route(gone).unwrap().is_none());
        assert!(
            store.route(kept).unwrap().is_some(),
            "the other route stays"
        );
        assert_eq!(
            count(&store, "attempts"),
            1,
            "only the kept route's attempt"
        );
        assert_eq!(count(&store, "attempt_results"), 1);
        assert_eq!(count(&store, "attempt_processes"), 0);
        assert_eq!(
            count(&store, "attempt_notes"),
            1,
            "found through its foreign key, by no name"
        );
        assert_eq!(
            count(&store, "route_purges"),
            0,
            "the marks go with the transaction"
        );
    }

    #[test]
    fn history_stays_append_only_outside_a_deletion_and_active_routes_are_never_deleted() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = open(&dir);
        let running = running_route(&mut store, "me").id;
        assert_eq!(
            store.delete_routes(&[running], AT_REST).unwrap(),
            Vec::<u32>::new(),
            "a running route is not at rest"
        );
        let err = store
            .conn()
            .execute("DELETE FROM attempts WHERE route_id = ?1", [running])
            .expect_err("a plain delete is still refused");
        assert!(err.to_string().contains("append-only"), "{err}");
    }

    #[test]
    fn pruning_drops_details_before_routes_and_spares_recent_and_unsettled_ones() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = open(&dir);
        let old = stopped(&mut store);
        store.set_attempt_process(old, 1, 4242, 7).unwrap();
        let day = chrono::Duration::days(1);
        let count_now = store
            .prune(AT_REST, Some(now() + day), None)
            .expect("details pruned");
        assert_eq!(count_now.detail_rows, 1);
        assert_eq!(count_now.routes_deleted, 0);
        assert_eq!(count(&store, "attempt_processes"), 0, "a detail row");
        assert_eq!(count(&store, "attempt_results"), 1, "the history stays");
        let none = store.prune(AT_REST, None, Some(now() - day)).unwrap();
        assert_eq!(none.routes_deleted, 0, "changed after the cut-off");
        let needs_you = store.prune(&[RouteState::NeedsManual], None, Some(now() + day));
        assert_eq!(
            needs_you.unwrap().routes_deleted,
            0,
            "not in the states given"
        );
        let all = store.prune(AT_REST, None, Some(now() + day)).unwrap();
        assert_eq!(all.routes_deleted, 1);
        assert_eq!(count(&store, "attempts"), 0);
    }

    #[test]
    fn archiving_needs_a_route_at_rest() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = open(&dir);
        let running = running_route(&mut store, "me").id;
        assert!(!store.set_archived(running, Some(now()), AT_REST).unwrap());
        let id = stopped(&mut store);
        assert!(store.set_archived(id, Some(now()), AT_REST).unwrap());
        assert_eq!(store.route(id).unwrap().unwrap().archived_at, Some(now()));
        let listed = store.state_counts(RouteScope::Listed).unwrap();
        assert_eq!(
            listed,
            [(RouteState::Running, 1)],
            "the archived one is left out"
        );
        let archived = store.state_counts(RouteScope::Archived).unwrap();
        assert_eq!(archived, [(RouteState::Stopped, 1)]);
    }

    #[test]
    fn a_deleted_routes_number_is_never_given_again_after_a_delete_a_reopen_or_a_prune() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = open(&dir);
        let kept = stopped(&mut store);
        let newest = stopped(&mut store);
        store.delete_routes(&[newest], AT_REST).unwrap();
        let next = stopped(&mut store);
        assert_eq!(
            next,
            newest + 1,
            "the newest route was deleted: its number stays its own"
        );
        store.delete_routes(&[next], AT_REST).unwrap();
        drop(store);
        let mut store = open(&dir);
        let reopened = stopped(&mut store);
        assert_eq!(
            reopened,
            next + 1,
            "the mark is in the file, not the process"
        );
        let day = chrono::Duration::days(1);
        assert_eq!(
            store
                .prune(AT_REST, None, Some(now() + day))
                .unwrap()
                .routes_deleted,
            2,
            "retention deletes every route, the newest too"
        );
        assert!(store.route(kept).unwrap().is_none());
        assert_eq!(stopped(&mut store), reopened + 1, "an empty table too");
    }

    #[test]
    fn an_insert_that_would_reuse_a_number_is_refused_whoever_makes_it() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = open(&dir);
        let newest = stopped(&mut store);
        store.delete_routes(&[newest], AT_REST).unwrap();
        let err = store
            .conn()
            .execute(
                "INSERT INTO routes (profile_name, prompt, state, generation, candidate_index, \
                 cycle_json, created_at, updated_at) \
                 VALUES ('p', 'x', 'stopped', 1, 0, '{}', 't', 't')",
                [],
            )
            .expect_err("SQLite's own choice would be the deleted route's number");
        assert!(err.to_string().contains("never reused"), "{err}");
    }
}

#[cfg(test)]
mod upgrade_tests {
    use rusqlite::{params, Connection};

    use super::super::fixtures::{now, open, stopped};
    use super::*;
    use crate::evaluator::RouteCycle;
    use crate::store::{to_json, MIGRATIONS};

    /// A database as schema version 15 left it: routes 1 to 3 with an
    /// attempt and a manual action each, then route 3 (the newest) deleted.
    fn version_15(path: &std::path::Path) {
        let c = Connection::open(path).unwrap();
        for (_, sql) in &MIGRATIONS[..15] {
            c.execute_batch(sql).unwrap();
        }
        c.pragma_update(None, "user_version", 15).unwrap();
        c.pragma_update(None, "foreign_keys", "ON").unwrap();
        c.execute(
            "INSERT INTO profiles (id, name, created_at, updated_at) VALUES (1, 'p', ?1, ?1)",
            [ts(now())],
        )
        .unwrap();
        for id in 1..=3u32 {
            c.execute(
                "INSERT INTO routes (id, profile_id, profile_name, prompt, state, generation, \
                 candidate_index, cycle_json, created_at, updated_at) \
                 VALUES (?1, 1, 'p', ?2, 'stopped', 2, 0, ?3, ?4, ?4)",
                params![
                    id,
                    format!("task {id}"),
                    to_json(&RouteCycle::new(0)),
                    ts(now())
                ],
            )
            .unwrap();
            c.execute(
                "INSERT INTO route_snapshots (route_id, candidates_json) VALUES (?1, '[]')",
                [id],
            )
            .unwrap();
            c.execute(
                "INSERT INTO attempts (route_id, number, generation, candidate_index, \
                 candidate_id, candidate_name, invocation_id, started_at) \
                 VALUES (?1, 1, 1, 0, 1, 'c', ?2, ?3)",
                params![id, format!("inv-{id}"), ts(now())],
            )
            .unwrap();
            c.execute(
                "INSERT INTO attempt_results (attempt_id, finished_at, outcome) \
                 VALUES (last_insert_rowid(), ?1, 'killed')",
                [ts(now())],
            )
            .unwrap();
            c.execute(
                "INSERT INTO manual_actions (route_id, generation, action, actor, at, record_json) \
                 VALUES (?1, 2, 'stop', 'app', ?2, '{}')",
                params![id, ts(now())],
            )
            .unwrap();
        }
        // Deleted as that build deleted: marked in `route_purges`, history
        // first, the mark gone again in the same transaction.
        c.execute_batch(
            "BEGIN;
             INSERT INTO route_purges (route_id) VALUES (3);
             DELETE FROM manual_actions WHERE route_id = 3;
             DELETE FROM attempt_results WHERE attempt_id IN
                 (SELECT id FROM attempts WHERE route_id = 3);
             DELETE FROM attempts WHERE route_id = 3;
             DELETE FROM route_snapshots WHERE route_id = 3;
             DELETE FROM routes WHERE id = 3;
             DELETE FROM route_purges;
             COMMIT;",
        )
        .unwrap();
    }

    #[test]
    fn an_upgraded_database_keeps_its_routes_and_history_and_never_reuses_a_deleted_number() {
        let dir = tempfile::tempdir().unwrap();
        version_15(&dir.path().join("r.db"));
        let mut store = open(&dir);
        let mut routes: Vec<(u32, String)> = store
            .routes()
            .unwrap()
            .into_iter()
            .map(|r| (r.id, r.prompt.clone()))
            .collect();
        routes.sort();
        assert_eq!(
            routes,
            [(1, "task 1".to_string()), (2, "task 2".to_string())],
            "every route kept, with its own number"
        );
        for id in [1, 2] {
            let attempts = store.attempts(id).unwrap();
            assert_eq!(attempts.len(), 1, "route {id}'s history is kept");
            assert!(attempts[0].result.is_some(), "with its result");
        }
        let actions: u32 = store
            .conn()
            .query_row("SELECT COUNT(*) FROM manual_actions", [], |r| r.get(0))
            .unwrap();
        assert_eq!(actions, 2);
        assert_eq!(
            stopped(&mut store).id,
            4,
            "route 3 was deleted before the upgrade; its deletion on record keeps its number"
        );
        let history = store.delete_routes(&[1], &[RouteState::Stopped]).unwrap();
        assert_eq!(history, [1], "the upgraded routes delete as before");
    }
}
