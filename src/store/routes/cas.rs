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

/// Writes `plan` inside `tx`; on anything but [`Applied::Done`] the caller
/// drops the transaction, so nothing of it is kept.
pub(super) fn apply(tx: &rusqlite::Transaction<'_>, plan: &Plan) -> Result<Applied, StoreError> {
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
    tx: &rusqlite::Transaction<'_>,
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
