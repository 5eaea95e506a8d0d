//! A route's durable state and the attempt records a transition writes: what
//! the state machine plans and the store persists.

use chrono::{DateTime, Utc};

use super::{AttemptOutcome, HoldReason, RouteState};
use crate::classification::Classification;
use crate::evaluator::RouteCycle;
use crate::evidence::Evidence;
use crate::policy::{CandidatePolicy, Exhausted};
use crate::profile::Candidate;
use crate::safety::EffectContext;

/// A route's durable state, as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct RouteRow {
    pub id: u32,
    pub profile_id: Option<u32>,
    pub profile_name: String,
    pub prompt: String,
    pub cwd: Option<String>,
    pub state: RouteState,
    pub generation: u32,
    pub candidate_index: u32,
    /// Snapshot taken at start; policies are refreshed by id at each decision.
    pub candidates: Vec<Candidate>,
    pub cycle: RouteCycle,
    pub classification: Option<Classification>,
    pub policy: Option<CandidatePolicy>,
    pub decision: Option<String>,
    /// The candidate whose failed attempt `classification`, `policy` and
    /// `decision` describe: after a skip, not the current one. Read from
    /// the attempt history, never written.
    pub failed_candidate: Option<u32>,
    pub deadline: Option<DateTime<Utc>>,
    pub pending_outcome: Option<Exhausted>,
    /// Why a person is needed, while the route is `NeedsManual` or `Stopped`.
    pub manual_reason: Option<HoldReason>,
    pub owner: Option<String>,
    pub lease_until: Option<DateTime<Utc>>,
    /// Attempts dispatched so far.
    pub attempts: u32,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// The first row of a route.
#[derive(Debug, Clone)]
pub struct NewRoute {
    pub profile_id: u32,
    pub profile_name: String,
    pub prompt: String,
    pub cwd: Option<String>,
    pub candidates: Vec<Candidate>,
    pub cycle: RouteCycle,
    pub candidate_index: u32,
    pub owner: String,
    pub lease_until: DateTime<Utc>,
    pub now: DateTime<Utc>,
}

/// An attempt about to be dispatched; written in the dispatching transition.
#[derive(Debug, Clone, PartialEq)]
pub struct AttemptRecord {
    pub number: u32,
    pub generation: u32,
    pub candidate_index: u32,
    pub candidate_id: u32,
    pub candidate_name: String,
    pub invocation_id: String,
    pub started_at: DateTime<Utc>,
}

/// How an attempt ended and what was decided about it.
#[derive(Debug, Clone, PartialEq)]
pub struct AttemptResultRecord {
    pub number: u32,
    pub finished_at: DateTime<Utc>,
    pub outcome: AttemptOutcome,
    pub classification: Option<Classification>,
    pub effect: Option<EffectContext>,
    pub policy_revision: Option<u32>,
    pub policy: Option<CandidatePolicy>,
    pub decision: Option<String>,
    pub evidence: Option<Evidence>,
    pub excerpt: Option<String>,
}

/// Everything one transition writes besides the route row.
#[derive(Debug, Clone, Default)]
pub struct TransitionWrite {
    pub dispatch: Option<AttemptRecord>,
    pub result: Option<AttemptResultRecord>,
}
