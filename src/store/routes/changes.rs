//! The route change feed: what another engine, or the UI of another
//! process, needs to notice that routes moved.

use super::{RawRoute, ROUTE_COLUMNS};
use crate::route::RouteRow;
use crate::store::{Store, StoreError};

/// Routes changed since a point in the store's change sequence.
#[derive(Debug, Clone, PartialEq)]
pub struct RouteChanges {
    /// Routes deleted, oldest deletion first (read before `rows`: an id
    /// used again after a deletion is in both).
    pub removed: Vec<u32>,
    /// The changed routes, oldest change first.
    pub rows: Vec<RouteRow>,
    /// Pass this to the next call to see only later changes.
    pub seen: ChangeSeq,
}

/// A point in the store's route change sequence. Every insert, every
/// write of a route's state, generation, owner or archive mark, and every
/// deletion moves it forward; lease renewals do not.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct ChangeSeq(i64);

/// Every route's current generation, read in one snapshot with the change
/// sequence point it reflects.
#[derive(Debug, Clone, PartialEq)]
pub struct Generations {
    /// `(route id, generation)`.
    pub routes: Vec<(u32, u32)>,
    /// The archived routes' ids.
    pub archived: Vec<u32>,
    pub seen: ChangeSeq,
}

impl Store {
    /// Routes inserted, or whose state, generation, owner or archive mark
    /// was written, and routes deleted, after `since` (by any connection),
    /// oldest change first.
    pub fn routes_changed_since(&self, since: ChangeSeq) -> Result<RouteChanges, StoreError> {
        let sql = format!(
            "SELECT {ROUTE_COLUMNS}, change_seq FROM routes \
             WHERE change_seq > ?1 ORDER BY change_seq"
        );
        let mut stmt = self.conn().prepare_cached(&sql)?;
        let mut seen = since;
        let raws = stmt
            .query_map([since.0], |r| {
                Ok((RawRoute::read(r)?, r.get::<_, i64>("change_seq")?))
            })?
            .collect::<Result<Vec<_>, _>>()?;
        let mut rows = Vec::with_capacity(raws.len());
        for (raw, seq) in raws {
            seen = seen.max(ChangeSeq(seq));
            rows.push(raw.parse()?);
        }
        let mut removed = Vec::new();
        let mut stmt = self.conn().prepare_cached(
            "SELECT route_id, change_seq FROM route_removals \
             WHERE change_seq > ?1 ORDER BY change_seq",
        )?;
        let mut found = stmt.query([since.0])?;
        while let Some(r) = found.next()? {
            removed.push(r.get(0)?);
            seen = seen.max(ChangeSeq(r.get(1)?));
        }
        Ok(RouteChanges {
            removed,
            rows,
            seen,
        })
    }

    /// Every route's generation and the change sequence point they reflect,
    /// without reading the rest of the rows.
    pub fn generations(&self) -> Result<Generations, StoreError> {
        let mut stmt = self.conn().prepare_cached(
            "SELECT id, generation, archived_at IS NOT NULL AS archived, change_seq FROM routes",
        )?;
        let removed: i64 = self.conn().query_row(
            "SELECT IFNULL(MAX(change_seq), 0) FROM route_removals",
            [],
            |r| r.get(0),
        )?;
        let mut seen = ChangeSeq(removed);
        let mut routes = Vec::new();
        let mut archived = Vec::new();
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            let id = r.get("id")?;
            routes.push((id, r.get("generation")?));
            if r.get("archived")? {
                archived.push(id);
            }
            seen = seen.max(ChangeSeq(r.get("change_seq")?));
        }
        Ok(Generations {
            routes,
            archived,
            seen,
        })
    }

    /// Changes whenever another connection commits (`PRAGMA data_version`).
    pub fn data_version(&self) -> Result<i64, StoreError> {
        Ok(self
            .conn()
            .prepare_cached("PRAGMA data_version")?
            .query_row([], |r| r.get(0))?)
    }
}

#[cfg(test)]
mod tests {
    use chrono::Duration;
    use rusqlite::{params, Connection};

    use super::super::fixtures::{commit, ids, now, open, running_route};
    use super::*;
    use crate::evaluator::RouteCycle;
    use crate::route::machine;
    use crate::store::{to_json, ts, MIGRATIONS};

    #[test]
    fn changes_since_a_mark_are_only_routes_written_after_it_by_any_connection() {
        let dir = tempfile::tempdir().unwrap();
        let mut a = open(&dir);
        let mut b = open(&dir);
        let first = running_route(&mut a, "me");
        let second = running_route(&mut a, "me");
        let mark = a.generations().unwrap();
        assert_eq!(
            mark.routes,
            vec![(first.id, 1), (second.id, 1)],
            "every route's generation"
        );
        let done = commit(&mut b, machine::succeeded(&second, 1, now()).unwrap());
        let third = running_route(&mut b, "other");
        let changes = a.routes_changed_since(mark.seen).unwrap();
        assert_eq!(
            ids(&changes.rows),
            vec![second.id, third.id],
            "the route written by the other connection, then the new one"
        );
        assert_eq!(changes.rows[0], done, "rows are read in full");
        let again = a.routes_changed_since(changes.seen).unwrap();
        assert!(again.rows.is_empty(), "nothing changed after the new mark");
        assert_eq!(again.seen, changes.seen, "an empty read keeps the mark");
    }

    #[test]
    fn archiving_and_deleting_are_changes_and_a_deletion_never_hands_its_value_on() {
        use crate::route::RouteState;
        let dir = tempfile::tempdir().unwrap();
        let mut a = open(&dir);
        let mut b = open(&dir);
        let older = running_route(&mut a, "me");
        let newer = running_route(&mut a, "me");
        commit(&mut a, machine::succeeded(&newer, 1, now()).unwrap());
        commit(&mut a, machine::succeeded(&older, 1, now()).unwrap());
        let at_rest = [RouteState::Succeeded];
        let mark = a.generations().unwrap().seen;
        assert!(b.set_archived(older.id, Some(now()), &at_rest).unwrap());
        let archived = a.routes_changed_since(mark).unwrap();
        assert_eq!(
            ids(&archived.rows),
            vec![older.id],
            "an archive mark written by another process is a change"
        );
        assert!(archived.rows[0].archived_at.is_some());
        assert_eq!(
            a.generations().unwrap().archived,
            vec![older.id],
            "and is read with the generations"
        );
        // `older` holds the highest change value: its deletion must not
        // hand that value to the next change.
        let deleted = b.delete_routes(&[older.id], &at_rest).unwrap();
        assert_eq!(deleted, vec![older.id]);
        let gone = a.routes_changed_since(archived.seen).unwrap();
        assert_eq!(gone.removed, vec![older.id], "a deletion is a change too");
        assert!(gone.rows.is_empty());
        assert!(b.set_archived(newer.id, Some(now()), &at_rest).unwrap());
        let after = a.routes_changed_since(gone.seen).unwrap();
        assert_eq!(
            ids(&after.rows),
            vec![newer.id],
            "the change after deleting the newest route is seen"
        );
        assert!(after.removed.is_empty(), "a deletion is read once");
    }

    #[test]
    fn lease_renewal_is_not_a_change_but_an_owner_change_is() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = open(&dir);
        let row = running_route(&mut store, "me");
        let mark = store.generations().unwrap().seen;
        store
            .renew_leases("me", now() + Duration::seconds(30), now())
            .unwrap();
        assert!(
            store.routes_changed_since(mark).unwrap().rows.is_empty(),
            "renewing a lease changes nothing another engine acts on"
        );
        let claim = super::super::Claim {
            id: row.id,
            expected_generation: 1,
            expected_owner: Some("me"),
        };
        let taken = store.take_ownerships(&[claim], "other", now()).unwrap();
        assert_eq!(taken, [true]);
        let changed = store.routes_changed_since(mark).unwrap();
        assert_eq!(ids(&changed.rows), vec![row.id]);
        assert_eq!(changed.rows[0].owner.as_deref(), Some("other"));
    }

    #[test]
    fn upgrade_numbers_existing_routes_as_changes_in_id_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.db");
        {
            let c = Connection::open(&path).unwrap();
            c.execute_batch(MIGRATIONS[0].1).unwrap();
            c.pragma_update(None, "user_version", 1).unwrap();
            for id in [1, 2] {
                c.execute(
                    "INSERT INTO routes (id, profile_name, prompt, state, generation, \
                     candidate_index, candidates_json, cycle_json, created_at, updated_at) \
                     VALUES (?1, 'p', 'x', 'succeeded', 3, 0, '[]', ?2, ?3, ?3)",
                    params![id, to_json(&RouteCycle::new(0)), ts(now())],
                )
                .unwrap();
            }
        }
        let mut store = open(&dir);
        let all = store.routes_changed_since(ChangeSeq::default()).unwrap();
        assert_eq!(ids(&all.rows), vec![1, 2], "existing routes in id order");
        assert_eq!(all.seen, store.generations().unwrap().seen);
        let new = running_route(&mut store, "me");
        let after = store.routes_changed_since(all.seen).unwrap();
        assert_eq!(
            ids(&after.rows),
            vec![new.id],
            "a route inserted after the upgrade comes after them"
        );
    }
}
