//! Ownership leases: which engine drives each active route, its heartbeat
//! renewals, and the compare-and-set takeover of routes another engine left.

use chrono::{DateTime, Utc};
use rusqlite::{params, TransactionBehavior};

use super::opt_ts;
use crate::route::RouteState;
use crate::store::{ts, Store, StoreError};

/// SQL for the lease of a row of `routes`: the later of the route's own
/// `lease_until` (written by its last transition or takeover) and its
/// owner's heartbeat row in `engine_leases` (migration 0014); NULL when
/// neither is there. Timestamps are fixed-width RFC 3339, so text order is
/// time order.
macro_rules! lease_until_sql {
    () => {
        "NULLIF(MAX(COALESCE(routes.lease_until, ''), COALESCE((SELECT l.lease_until \
         FROM engine_leases l WHERE l.owner = routes.owner), '')), '')"
    };
}
pub(crate) use lease_until_sql;

/// A route its engine's heartbeat checks, as far as it needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OwnedRoute {
    pub id: u32,
    pub generation: u32,
    pub state: RouteState,
    pub deadline: Option<DateTime<Utc>>,
}

/// A route an engine means to take over, as it saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Claim<'a> {
    pub id: u32,
    pub expected_generation: u32,
    pub expected_owner: Option<&'a str>,
}

/// `state IN (…)` over the states in which a route has a pending timer or a
/// running attempt: the routes that need an owner.
fn active() -> String {
    let states: Vec<String> = RouteState::ALL
        .into_iter()
        .filter(|s| s.is_active())
        .map(|s| format!("'{}'", s.as_str()))
        .collect();
    format!("state IN ({})", states.join(", "))
}

impl Store {
    /// The routes with a pending timer or a running attempt owned by
    /// `owner`, by id, with only what its heartbeat checks (state,
    /// generation, deadline): read every lease period, so no whole rows.
    pub fn active_routes_owned_by(&self, owner: &str) -> Result<Vec<OwnedRoute>, StoreError> {
        let sql = format!(
            "SELECT id, generation, state, deadline FROM routes WHERE {} AND owner = ?1 ORDER BY id",
            active()
        );
        let mut stmt = self.conn().prepare_cached(&sql)?;
        let raws = stmt
            .query_map([owner], |r| {
                Ok((
                    r.get::<_, u32>(0)?,
                    r.get::<_, u32>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, Option<String>>(3)?,
                ))
            })?
            .collect::<Result<Vec<_>, _>>()?;
        raws.into_iter()
            .map(|(id, generation, state, deadline)| {
                Ok(OwnedRoute {
                    id,
                    generation,
                    state: RouteState::parse(&state).ok_or(StoreError::Malformed {
                        what: "route state",
                        detail: state,
                    })?,
                    deadline: opt_ts(deadline)?,
                })
            })
            .collect()
    }

    /// `(id, owner, lease_until)` of every route with a pending timer or a
    /// running attempt whose owner is not `except` (every one, for `None`),
    /// newest first, without reading the rest of the rows.
    #[allow(clippy::type_complexity)]
    pub fn active_owners(
        &self,
        except: Option<&str>,
    ) -> Result<Vec<(u32, Option<String>, Option<DateTime<Utc>>)>, StoreError> {
        let sql = format!(
            "SELECT id, owner, {} AS lease_until FROM routes WHERE {} \
             AND (?1 IS NULL OR owner IS NOT ?1) ORDER BY id DESC",
            lease_until_sql!(),
            active()
        );
        let mut stmt = self.conn().prepare_cached(&sql)?;
        let raws = stmt
            .query_map([except], |r| {
                Ok((
                    r.get::<_, u32>("id")?,
                    r.get::<_, Option<String>>("owner")?,
                    r.get::<_, Option<String>>("lease_until")?,
                ))
            })?
            .collect::<Result<Vec<_>, _>>()?;
        raws.into_iter()
            .map(|(id, owner, lease)| Ok((id, owner, opt_ts(lease)?)))
            .collect()
    }

    /// Extends every lease `owner` holds: one row, however many routes it
    /// owns. Rows of other owners whose lease ran out before `now` go (a
    /// route of theirs then counts its own lease, which ran out no later).
    pub fn renew_leases(
        &self,
        owner: &str,
        until: DateTime<Utc>,
        now: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        let tx = rusqlite::Transaction::new_unchecked(self.conn(), TransactionBehavior::Immediate)?;
        tx.prepare_cached(
            "INSERT INTO engine_leases (owner, lease_until) VALUES (?1, ?2) \
             ON CONFLICT (owner) DO UPDATE SET lease_until = excluded.lease_until",
        )?
        .execute(params![owner, ts(until)])?;
        tx.prepare_cached("DELETE FROM engine_leases WHERE lease_until < ?1 AND owner != ?2")?
            .execute(params![ts(now), owner])?;
        tx.commit()?;
        Ok(())
    }

    /// Takes ownership of each route still at its claim's owner and
    /// generation, in one transaction (one
    /// commit for a whole restart's adoptions); one answer per claim, in
    /// order. Each claim is still its own compare-and-set.
    pub fn take_ownerships(
        &self,
        claims: &[Claim<'_>],
        owner: &str,
        until: DateTime<Utc>,
    ) -> Result<Vec<bool>, StoreError> {
        let tx = rusqlite::Transaction::new_unchecked(self.conn(), TransactionBehavior::Immediate)?;
        let until = ts(until);
        let mut taken = Vec::with_capacity(claims.len());
        {
            let mut stmt = tx.prepare_cached(
                "UPDATE routes SET owner = ?4, lease_until = ?5 \
                 WHERE id = ?1 AND generation = ?2 AND owner IS ?3",
            )?;
            for c in claims {
                let n = stmt.execute(params![
                    c.id,
                    c.expected_generation,
                    c.expected_owner,
                    owner,
                    until
                ])?;
                taken.push(n == 1);
            }
        }
        tx.commit()?;
        Ok(taken)
    }

    /// Gives up ownership of routes that need no owner any more, and the
    /// owner's lease.
    pub fn release_ownership(&self, owner: &str) -> Result<(), StoreError> {
        let tx = rusqlite::Transaction::new_unchecked(self.conn(), TransactionBehavior::Immediate)?;
        tx.execute(
            "UPDATE routes SET owner = NULL, lease_until = NULL WHERE owner = ?1",
            [owner],
        )?;
        tx.execute("DELETE FROM engine_leases WHERE owner = ?1", [owner])?;
        tx.commit()?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use chrono::Duration;

    use super::super::fixtures::{commit, now, open, running_route};
    use super::*;
    use crate::route::{machine, RouteRow};

    #[test]
    fn routes_need_an_owner_while_running_or_waiting() {
        assert_eq!(
            active(),
            "state IN ('running', 'waiting_reset', 'retry_scheduled', 'queued')",
            "a route stopped, succeeded or waiting for a person has no timer, agent or turn \
             in the queue to keep"
        );
    }

    #[test]
    fn adoption_candidates_are_active_routes_of_other_owners_newest_first() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = open(&dir);
        let _mine = running_route(&mut store, "me");
        let theirs = running_route(&mut store, "other");
        let finished = running_route(&mut store, "other");
        commit(&mut store, machine::succeeded(&finished, 1, now()).unwrap());
        let unowned = running_route(&mut store, "other");
        store.release_ownership("other").unwrap();
        let found: Vec<u32> = store
            .active_owners(Some("me"))
            .unwrap()
            .iter()
            .map(|(id, _, _)| *id)
            .collect();
        assert_eq!(
            found,
            vec![unowned.id, theirs.id],
            "own and finished routes are left out; a route with no owner is included"
        );
    }

    #[test]
    fn batch_takeover_takes_only_routes_still_as_claimed() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = open(&dir);
        let a = running_route(&mut store, "gone");
        let b = running_route(&mut store, "gone");
        let c = running_route(&mut store, "gone");
        let claim = |row: &RouteRow, generation| Claim {
            id: row.id,
            expected_generation: generation,
            expected_owner: Some("gone"),
        };
        let taken = store
            .take_ownerships(
                &[claim(&a, 1), claim(&b, 2), claim(&c, 1)],
                "me",
                now() + Duration::seconds(15),
            )
            .unwrap();
        assert_eq!(
            taken,
            vec![true, false, true],
            "a claim made at another generation is refused"
        );
        let owners: Vec<Option<String>> = [a.id, b.id, c.id]
            .iter()
            .map(|id| store.route(*id).unwrap().unwrap().owner.clone())
            .collect();
        assert_eq!(
            owners,
            vec![Some("me".into()), Some("gone".into()), Some("me".into())]
        );
    }

    /// `routes.lease_until` as stored, and the lease a read of the route gives.
    fn leases(store: &Store, id: u32) -> (Option<String>, Option<DateTime<Utc>>) {
        let stored = store
            .conn()
            .query_row("SELECT lease_until FROM routes WHERE id = ?1", [id], |r| {
                r.get(0)
            })
            .unwrap();
        (stored, store.route(id).unwrap().unwrap().lease_until)
    }

    #[test]
    fn a_renewal_writes_the_owners_row_and_every_route_it_owns_reads_it() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = open(&dir);
        let a = running_route(&mut store, "me");
        let b = running_route(&mut store, "me");
        let theirs = running_route(&mut store, "other");
        let until = now() + Duration::seconds(60);
        store.renew_leases("me", until, now()).unwrap();
        for row in [&a, &b] {
            assert_eq!(
                leases(&store, row.id),
                (Some(ts(row.lease_until.unwrap())), Some(until)),
                "route {}: its row is not rewritten, its lease is its owner's",
                row.id
            );
        }
        assert_eq!(
            leases(&store, theirs.id).1,
            theirs.lease_until,
            "another owner's route keeps its own lease"
        );
        let owners = store.active_owners(None).unwrap();
        assert!(
            owners.contains(&(a.id, Some("me".into()), Some(until))),
            "the orphan check reads the same lease: {owners:?}"
        );
    }

    #[test]
    fn a_lease_that_ran_out_is_dropped_and_the_routes_own_counts_again() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = open(&dir);
        let row = running_route(&mut store, "gone");
        let own = row.lease_until.unwrap();
        let later = now() + Duration::seconds(600);
        store.renew_leases("gone", later, now()).unwrap();
        assert_eq!(leases(&store, row.id).1, Some(later));
        // Another engine renews after "gone"'s lease ran out: its row goes.
        let after = later + Duration::seconds(1);
        store
            .renew_leases("me", after + Duration::seconds(15), after)
            .unwrap();
        let owners: String = store
            .conn()
            .query_row("SELECT group_concat(owner) FROM engine_leases", [], |r| {
                r.get(0)
            })
            .unwrap();
        assert_eq!(owners, "me", "only the live owner's row is left");
        assert_eq!(
            leases(&store, row.id).1,
            Some(own),
            "the route's own lease, which ran out no later than its owner's"
        );
        store.release_ownership("me").unwrap();
        let left: u32 = store
            .conn()
            .query_row("SELECT COUNT(*) FROM engine_leases", [], |r| r.get(0))
            .unwrap();
        assert_eq!(left, 0, "a released owner leaves no lease");
    }
}
