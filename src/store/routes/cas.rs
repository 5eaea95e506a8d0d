//! The compare-and-set that is the only way a route's state changes, with
//! the attempt rows the same transition writes.

use rusqlite::{params, TransactionBehavior};

use super::attempts::{insert_attempt, insert_result};
use super::{decided_columns, read_route};
use crate::policy::Exhausted;
use crate::route::machine::Plan;
use crate::route::{RouteRow, RouteState};
use crate::store::{to_json, ts, Store, StoreError};

/// The result of a compare-and-set.
#[derive(Debug, Clone, PartialEq)]
pub enum Cas {
    /// Committed; the row as stored now.
    Won(RouteRow),
    /// Another actor changed the route first; the row as it is now.
    Lost(RouteRow),
}

impl Store {
    /// Compare-and-set: writes the plan's next row (with generation + 1)
    /// and its attempt rows only if the route is still at the plan's
    /// expected generation and state.
    pub fn commit_transition(&mut self, plan: &Plan) -> Result<Cas, StoreError> {
        let (next, write) = (plan.next(), plan.write());
        let tx = self
            .conn_mut()
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let changed = update_route(&tx, plan.expected_generation(), plan.expected_state(), next)?;
        if changed == 0 {
            drop(tx);
            let current = self.route(next.id)?.ok_or(StoreError::Malformed {
                what: "route",
                detail: format!("route {} does not exist", next.id),
            })?;
            return Ok(Cas::Lost(current));
        }
        if let Some(a) = write.dispatch() {
            insert_attempt(&tx, next.id, a)?;
        }
        if let Some(r) = write.result() {
            insert_result(&tx, next.id, r)?;
        }
        // Read back inside the transaction: the row as committed, without
        // opening another read.
        let stored = read_route(&tx, next.id)?;
        tx.commit()?;
        let stored = stored.ok_or(StoreError::Malformed {
            what: "route",
            detail: format!("route {} vanished after commit", next.id),
        })?;
        Ok(Cas::Won(stored))
    }
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
         archived_at = NULL \
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
            next.manual_reason.as_ref().map(to_json)
        ])?)
}
