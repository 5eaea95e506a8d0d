//! Every dispatch goes through here, whatever asked for it (a new route, a
//! timer, a skip, a person's retry or resume, a queued route's turn): before
//! an agent is started, the candidate's account is looked at.
//!
//! - A limit mark in force: no agent starts. The candidate's policy decides
//!   as if the failure had just happened (wait for the mark's reset within
//!   its maximum, using the cycle's reset wait; retry; skip; stop), and the
//!   history keeps a "not dispatched" line.
//! - The mark's reset has passed and another route is probing it: queued
//!   until that probe answers or fails.
//! - The reset has passed and nobody probes: this dispatch is the probe.
//! - No slot on the account or under the global maximum: queued, first in,
//!   first out.
//!
//! The plan carries the version of the marks it was made from; the store
//! commits it only while they are unchanged and, for a dispatch, only while
//! the account and the global maximum still have room, so these hold
//! across processes.

use chrono::{DateTime, Utc};

use super::{attempt_record, base, decide, follow, plan, slots, Effect, Lease, Plan, World};
use crate::account::{standing, Mark, Standing};
use crate::evaluator;
use crate::route::row::RouteRecord;
use crate::route::transitions::{self, Event};
use crate::route::{
    Decided, HoldRecord, ProbeClaim, QueueReason, Queued, RouteRow, RouteState, TransitionWrite,
};
use crate::safety::GateVerdict;

/// A queued route's turn may have come (or a new route, created queued,
/// wants its first dispatch); `None` when it does not apply, while paused,
/// or when it would stay queued for the same reason.
pub fn released(
    row: &RouteRow,
    lease: Lease<'_>,
    world: World<'_>,
    now: DateTime<Utc>,
) -> Option<Plan> {
    if transitions::after(row.state, Event::Released).is_empty() || world.paused {
        return None;
    }
    let plan = dispatch(
        row,
        base(row, now),
        TransitionWrite::default(),
        lease,
        world,
        now,
    );
    let reason = |r: &RouteRecord| r.queued.as_ref().map(|q| q.reason.clone());
    let unchanged = plan.next.state == RouteState::Queued && reason(&plan.next.0) == reason(row);
    (!unchanged).then_some(plan)
}

/// Dispatches the current candidate of `next` (taking ownership) when its
/// account lets it; while paused, a wait on it due now instead.
pub(super) fn dispatch(
    row: &RouteRow,
    mut next: RouteRecord,
    mut write: TransitionWrite,
    lease: Lease<'_>,
    world: World<'_>,
    now: DateTime<Utc>,
) -> Plan {
    next.owner = Some(lease.owner.to_string());
    next.lease_until = Some(lease.until);
    if world.paused {
        next.state = RouteState::RetryScheduled;
        next.deadline = Some(now);
        return plan(row, next, write, Effect::Arm(now));
    }
    write.world_stamp = Some(world.stamp);
    let index = next.candidate_index as usize;
    let candidate = &next.candidates[index];
    let model = candidate.agent.model.as_deref();
    let account = candidate.account.clone();
    let state = account.as_ref().and_then(|a| world.account(a));
    // A mark this very transition records (the failure before a skip to
    // another candidate on the same account) counts like a stored one.
    let fresh = write
        .mark
        .as_ref()
        .filter(|m| Some(&m.account) == account.as_ref() && m.covers(model))
        .cloned();
    let standing = match (&fresh, state) {
        (Some(m), _) => Standing::Limited(m),
        (None, Some(s)) => standing(&s.marks, model, row.id, now),
        (None, None) => Standing::Clear,
    };
    let probe = match standing {
        Standing::Limited(mark) => {
            let mark = mark.clone();
            return held(row, next, write, mark, lease, world, now);
        }
        Standing::AwaitingProbe(m) => {
            let reason = QueueReason::Probing {
                account: m.mark.account.clone(),
                probe_route: m.probe.map_or(0, |p| p.route_id),
            };
            return queue(row, next, write, reason, now);
        }
        Standing::Probe(marks) => Some(ProbeClaim {
            marks: marks.iter().map(|m| (m.id, m.probe)).collect(),
        }),
        Standing::Clear => None,
    };
    if let (Some(account), true) = (account, state.is_some_and(|s| s.full)) {
        return queue(row, next, write, QueueReason::AccountFull { account }, now);
    }
    if world.global_full {
        return queue(row, next, write, QueueReason::GlobalFull, now);
    }
    write.probe = probe;
    next.state = RouteState::Running;
    let a = attempt_record(
        next.id,
        row.attempts + 1,
        row.generation + 1,
        (next.candidate_index, &next.candidates[index]),
        lease.owner,
        now,
    );
    write.dispatch = Some(a.clone());
    plan(row, next, write, Effect::Dispatch(a))
}

/// The limit mark in force on the current candidate's account (and model),
/// if any: a dispatch now would be held by it.
pub(super) fn limit_in_force(row: &RouteRow, world: World<'_>, now: DateTime<Utc>) -> Option<Mark> {
    let candidate = row.candidates.get(row.candidate_index as usize)?;
    let state = world.account(candidate.account.as_ref()?)?;
    match standing(&state.marks, candidate.agent.model.as_deref(), row.id, now) {
        Standing::Limited(mark) => Some(mark.clone()),
        _ => None,
    }
}

/// The candidate's account is limited by `mark`: nothing is dispatched, and
/// its policy decides as if the failure had just happened (no agent ran, so
/// the safety gate allows it).
fn held(
    row: &RouteRow,
    mut next: RouteRecord,
    mut write: TransitionWrite,
    mark: Mark,
    lease: Lease<'_>,
    world: World<'_>,
    now: DateTime<Utc>,
) -> Plan {
    let index = next.candidate_index as usize;
    let classification = mark.classification();
    let decision = evaluator::evaluate(
        &next.cycle,
        &classification,
        &GateVerdict::Allowed,
        evaluator::Identical::NONE,
        &slots(&next),
        now,
    );
    let policy = next.candidates[index].policy.clone();
    let recorded = Decided::Held {
        account: mark.account.clone(),
        model: mark.model.clone(),
        until: mark.until,
        decision,
    };
    decide(&mut next, &classification, &policy, recorded, &decision);
    write.holds.push(HoldRecord {
        candidate_index: index as u32,
        candidate_name: next.candidates[index].name.clone(),
        mark,
        decision,
        at: now,
    });
    follow(row, next, write, &decision, lease, world, now)
}

/// Ready to dispatch, waiting for a slot; its place in the queue is kept
/// when it was queued already.
fn queue(
    row: &RouteRow,
    mut next: RouteRecord,
    write: TransitionWrite,
    reason: QueueReason,
    now: DateTime<Utc>,
) -> Plan {
    next.state = RouteState::Queued;
    let since = row.queued.as_ref().map_or(now, |q| q.since);
    next.queued = Some(Queued { reason, since });
    plan(row, next, write, Effect::Nothing)
}
