//! Ownership leases: which engine drives each active route, its heartbeat
//! renewals, and the compare-and-set takeover of routes another engine left.

use chrono::{DateTime, Utc};
use rusqlite::{params, TransactionBehavior};

use super::opt_ts;
use crate::route::{RouteRow, RouteState};
use crate::store::{ts, Store, StoreError};

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
    /// Routes with a pending timer or a running attempt whose owner is not
    /// `owner` (or that have none), newest first: the candidates for
    /// adoption. Finished routes are not read at all.
    pub fn active_routes_not_owned_by(&self, owner: &str) -> Result<Vec<RouteRow>, StoreError> {
        let rest = format!("WHERE {} AND owner IS NOT ?1 ORDER BY id DESC", active());
        self.select_routes(&rest, [owner])
    }

    /// Routes with a pending timer or a running attempt owned by `owner`:
    /// what its heartbeat checks for overdue deadlines and lost reports.
    pub fn active_routes_owned_by(&self, owner: &str) -> Result<Vec<RouteRow>, StoreError> {
        let rest = format!("WHERE {} AND owner = ?1 ORDER BY id", active());
        self.select_routes(&rest, [owner])
    }

    /// `(id, owner, lease_until)` of every route with a pending timer or a
    /// running attempt, newest first, without reading the rest of the rows.
    #[allow(clippy::type_complexity)]
    pub fn active_owners(
        &self,
    ) -> Result<Vec<(u32, Option<String>, Option<DateTime<Utc>>)>, StoreError> {
        let sql = format!(
            "SELECT id, owner, lease_until FROM routes WHERE {} ORDER BY id DESC",
            active()
        );
        let mut stmt = self.conn().prepare_cached(&sql)?;
        let raws = stmt
            .query_map([], |r| {
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

    /// Extends every lease `owner` holds.
    pub fn renew_leases(&self, owner: &str, until: DateTime<Utc>) -> Result<(), StoreError> {
        self.conn()
            .prepare_cached("UPDATE routes SET lease_until = ?2 WHERE owner = ?1")?
            .execute(params![owner, ts(until)])?;
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

    /// Gives up ownership of routes that need no owner any more.
    pub fn release_ownership(&self, owner: &str) -> Result<(), StoreError> {
        self.conn().execute(
            "UPDATE routes SET owner = NULL, lease_until = NULL WHERE owner = ?1",
            [owner],
        )?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use chrono::Duration;

    use super::super::fixtures::{commit, ids, now, open, running_route};
    use super::*;
    use crate::route::machine;

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
        let found = store.active_routes_not_owned_by("me").unwrap();
        assert_eq!(
            ids(&found),
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
}
