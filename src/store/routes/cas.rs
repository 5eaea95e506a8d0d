//! The compare-and-set that is the only way a route's state changes, with
//! everything the same transition writes: attempt rows, the limit mark a
//! failure makes, dispatches held back, the probe a dispatch claims, and the
//! person's action that caused it.

use rusqlite::{params, TransactionBehavior};

use super::actions::insert_action;
use super::attempts::{insert_attempt, insert_result};
use super::{decided_columns, read_route};
use crate::policy::Exhausted;
use crate::route::machine::Plan;
use crate::route::{RouteRow, RouteState};
use crate::store::{accounts, to_json, ts, Store, StoreError};

/// The result of a compare-and-set.
#[derive(Debug, Clone, PartialEq)]
pub enum Cas {
    /// Committed; the row as stored now.
    Won(RouteRow),
    /// Another actor changed the route first; the row as it is now.
    Lost(RouteRow),
    /// The route is as planned, but what the plan was made from is not: a
    /// limit mark changed, or the slot its dispatch counted on was taken
    /// (by another process). Nothing was written; plan again from the
    /// world as it is now. The row as it is now.
    WorldChanged(RouteRow),
}

/// What [`apply`] did inside its caller's transaction.
pub(super) enum Applied {
    Done,
    /// The route moved: nothing written.
    Moved,
    /// The plan's world moved: drop the transaction.
    WorldChanged,
}

impl Store {
    /// Compare-and-set: writes the plan's next row (with generation + 1)
    /// and everything the transition writes, only if the route is still at
    /// the plan's expected generation and state and, for a plan made from
    /// the limit marks, they and the slots it counted on still hold.
    pub fn commit_transition(&mut self, plan: &Plan) -> Result<Cas, StoreError> {
        let id = plan.next().id;
        let tx = self
            .conn_mut()
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let applied = apply(&tx, plan)?;
        if let Applied::Done = applied {
            // Read back inside the transaction: the row as committed,
            // without opening another read.
            let stored = read_route(&tx, id)?;
            tx.commit()?;
            let stored = stored.ok_or(StoreError::Malformed {
                what: "route",
                detail: format!("route {id} vanished after commit"),
            })?;
            return Ok(Cas::Won(stored));
        }
        drop(tx);
        let current = self.route(id)?.ok_or(StoreError::Malformed {
            what: "route",
            detail: format!("route {id} does not exist"),
        })?;
        Ok(match applied {
            Applied::WorldChanged => Cas::WorldChanged(current),
            Applied::Done | Applied::Moved => Cas::Lost(current),
        })
    }
}

/// Transitions of many routes committed in one transaction: a burst of
/// due timers, or the queued routes one freed slot or answered probe
/// releases. Each is still its own compare-and-set (in a savepoint), so a
/// plan that lost or whose world moved leaves nothing, and the others
/// commit; reads through [`Batch::store`] see the batch's earlier writes,
/// so the next plan counts the slots they took. Made by
/// [`Store::in_one_transaction`].
pub struct Batch<'a> {
    store: &'a Store,
}

impl Batch<'_> {
    /// The store, to read from inside the transaction.
    pub fn store(&self) -> &Store {
        self.store
    }

    /// [`Store::commit_transition`] inside the batch's transaction.
    pub fn commit_transition(&self, plan: &Plan) -> Result<Cas, StoreError> {
        let conn = self.store.conn();
        let id = plan.next().id;
        conn.execute_batch("SAVEPOINT plan")?;
        let applied = match apply(conn, plan) {
            Ok(applied) => applied,
            Err(e) => {
                conn.execute_batch("ROLLBACK TO plan; RELEASE plan")?;
                return Err(e);
            }
        };
        if !matches!(applied, Applied::Done) {
            conn.execute_batch("ROLLBACK TO plan")?;
        }
        conn.execute_batch("RELEASE plan")?;
        let stored = read_route(conn, id)?.ok_or(StoreError::Malformed {
            what: "route",
            detail: format!("route {id} does not exist"),
        })?;
        Ok(match applied {
            Applied::Done => Cas::Won(stored),
            Applied::Moved => Cas::Lost(stored),
            Applied::WorldChanged => Cas::WorldChanged(stored),
        })
    }
}

/// Rolls back the transaction [`Store::in_one_transaction`] opened unless
/// it committed (an error or a panic in its body).
struct Open<'a> {
    conn: &'a rusqlite::Connection,
    done: bool,
}

impl Drop for Open<'_> {
    fn drop(&mut self) {
        if !self.done {
            if let Err(e) = self.conn.execute_batch("ROLLBACK") {
                tracing::error!("rolling back a batch of transitions failed: {e}");
            }
        }
    }
}

impl Store {
    /// Runs `body` in one immediate transaction, committed when it returns
    /// `Ok` and rolled back otherwise: one commit (one WAL append, one
    /// lock) for every transition of a burst instead of one each.
    pub fn in_one_transaction<T, E: From<StoreError>>(
        &mut self,
        body: impl FnOnce(&Batch<'_>) -> Result<T, E>,
    ) -> Result<T, E> {
        let conn = self.conn();
        conn.execute_batch("BEGIN IMMEDIATE")
            .map_err(StoreError::from)?;
        let mut open = Open { conn, done: false };
        let out = body(&Batch { store: self })?;
        conn.execute_batch("COMMIT").map_err(StoreError::from)?;
        open.done = true;
        Ok(out)
    }
}

/// Writes `plan` inside `tx`; on anything but [`Applied::Done`] the caller
/// drops the transaction, so nothing of it is kept.
pub(super) fn apply(tx: &rusqlite::Connection, plan: &Plan) -> Result<Applied, StoreError> {
    let (next, write) = (plan.next(), plan.write());
    if let Some(stamp) = write.world_stamp() {
        if accounts::version(tx)? != stamp {
            return Ok(Applied::WorldChanged);
        }
    }
    let changed = update_route(tx, plan.expected_generation(), plan.expected_state(), next)?;
    if changed == 0 {
        return Ok(Applied::Moved);
    }
    let generation = plan.expected_generation() + 1;
    if write.world_stamp().is_some()
        && next.state == RouteState::Running
        && !accounts::has_room(tx, next.id, next.account())?
    {
        return Ok(Applied::WorldChanged);
    }
    if let Some(end) = write.probe_end() {
        accounts::end_probe(tx, next.id, plan.expected_generation(), end)?;
    }
    if let Some(mark) = write.mark() {
        accounts::record_mark(tx, mark)?;
    }
    for hold in write.holds() {
        accounts::insert_hold(tx, next.id, generation, hold)?;
    }
    if let Some(claim) = write.probe() {
        if !accounts::claim_probe(tx, next.id, generation, claim)? {
            return Ok(Applied::WorldChanged);
        }
    }
    if let Some(a) = write.dispatch() {
        insert_attempt(tx, next.id, a)?;
    }
    if let Some(r) = write.result() {
        insert_result(tx, next.id, r)?;
    }
    if let Some(action) = write.action() {
        insert_action(tx, next.id, generation, action)?;
    }
    Ok(Applied::Done)
}

fn update_route(
    tx: &rusqlite::Connection,
    expected_generation: u32,
    expected_state: RouteState,
    next: &RouteRow,
) -> Result<usize, StoreError> {
    let (decision_json, decision) = decided_columns(next.decision.as_ref());
    Ok(tx.prepare_cached(
        "UPDATE routes SET state = ?4, generation = ?2 + 1, candidate_index = ?5, cycle_json = ?6, \
         classification_json = ?7, policy_json = ?8, decision = ?9, decision_json = ?16, \
         deadline = ?10, pending_outcome = ?11, manual_reason = ?12, manual_reason_code = NULL, \
         manual_reason_json = ?17, owner = ?13, lease_until = ?14, updated_at = ?15, \
         account = ?18, queued_json = ?19, queued_at = ?20, archived_at = NULL \
         WHERE id = ?1 AND generation = ?2 AND state = ?3",
    )?
    .execute(params![
            next.id,
            expected_generation,
            expected_state.as_str(),
            next.state.as_str(),
            next.candidate_index,
            to_json(&next.cycle),
            next.classification.as_ref().map(to_json),
            next.policy.as_ref().map(to_json),
            decision,
            next.deadline.map(ts),
            next.pending_outcome.map(Exhausted::as_str),
            next.manual_reason.as_ref().map(|r| r.text()),
            next.owner,
            next.lease_until.map(ts),
            ts(next.updated_at),
            decision_json,
            next.manual_reason.as_ref().map(to_json),
            next.account().map(|a| a.as_str()),
            next.queued.as_ref().map(to_json),
            next.queued.as_ref().map(|q| ts(q.since))
        ])?)
}

#[cfg(test)]
mod batch_tests {
    use super::super::fixtures::{now, open, running_route};
    use super::*;
    use crate::route::machine;
    use crate::route::ManualAction;

    fn stop(row: &RouteRow) -> Plan {
        let lease = machine::Lease {
            owner: "me",
            until: now(),
        };
        machine::manual(
            row,
            crate::route::Ask::new(ManualAction::Stop, row.generation, crate::route::Actor::App),
            lease,
            machine::World::default(),
            now(),
        )
        .unwrap()
    }

    #[test]
    fn a_batch_commits_every_plan_that_holds_and_nothing_of_one_that_lost() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = open(&dir);
        let rows: Vec<RouteRow> = (0..3).map(|_| running_route(&mut store, "me")).collect();
        // Route 2 moves on before the batch: its plan is stale.
        let stale = stop(&rows[1]);
        store.commit_transition(&stop(&rows[1])).unwrap();
        let outcomes = store
            .in_one_transaction(|batch| {
                [stop(&rows[0]), stale, stop(&rows[2])]
                    .iter()
                    .map(|plan| batch.commit_transition(plan))
                    .collect::<Result<Vec<_>, StoreError>>()
            })
            .unwrap();
        assert!(matches!(outcomes[0], Cas::Won(_)), "{:?}", outcomes[0]);
        assert!(
            matches!(&outcomes[1], Cas::Lost(now) if now.generation == rows[1].generation + 1),
            "the stale plan lost to the stop before it: {:?}",
            outcomes[1]
        );
        assert!(matches!(outcomes[2], Cas::Won(_)), "{:?}", outcomes[2]);
        for row in &rows {
            let now = store.route(row.id).unwrap().unwrap();
            assert_eq!(
                (now.state, now.generation),
                (RouteState::Stopped, row.generation + 1),
                "route {}: stopped once, by whichever plan held",
                row.id
            );
            assert_eq!(
                store.attempts(row.id).unwrap().len(),
                1,
                "route {}: one attempt, one result; the lost plan wrote none",
                row.id
            );
        }
    }

    #[test]
    fn a_batch_whose_body_fails_keeps_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = open(&dir);
        let rows: Vec<RouteRow> = (0..2).map(|_| running_route(&mut store, "me")).collect();
        let failed = store.in_one_transaction(|batch| {
            batch.commit_transition(&stop(&rows[0]))?;
            Err::<(), _>(StoreError::Malformed {
                what: "test",
                detail: "the body failed after one commit".into(),
            })
        });
        assert!(failed.is_err());
        let first = store.route(rows[0].id).unwrap().unwrap();
        assert_eq!(
            (first.state, first.generation),
            (RouteState::Running, rows[0].generation),
            "the transition committed inside the failed batch was rolled back"
        );
        // The connection is usable again: no transaction was left open.
        store.commit_transition(&stop(&rows[1])).unwrap();
    }
}
