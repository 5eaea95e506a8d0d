//! A route's durable state and the attempt records a transition writes: what
//! the state machine plans and the store persists.
//!
//! A [`RouteRow`] is read everywhere but made only here: the state machine
//! builds each changed row, and the store restores one from its columns
//! ([`RouteRow::restore`], which `tests/it/layers.rs` allows in the store
//! only). The same goes for [`TransitionWrite`] and the attempt records.

use std::borrow::Cow;
use std::ops::Deref;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::{AttemptOutcome, HoldReason, RouteState};
use crate::classification::Classification;
use crate::evaluator::{Decision, HistoryWording, RouteCycle};
use crate::evidence::Evidence;
use crate::policy::{CandidatePolicy, Exhausted};
use crate::profile::Candidate;
use crate::safety::EffectContext;

/// What a route's stored row holds. Read it through a [`RouteRow`].
#[derive(Debug, Clone, PartialEq)]
pub struct RouteRecord {
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
    pub decision: Option<Decided>,
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
    /// When a person archived the route (at rest only); any transition
    /// clears it, so an archived route never hides work going on.
    pub archived_at: Option<DateTime<Utc>>,
}

/// A route's durable state, as stored: its fields are read through `Deref`,
/// and only [`super::machine`] makes a changed one.
#[derive(Debug, Clone, PartialEq)]
pub struct RouteRow(pub(super) RouteRecord);

impl Deref for RouteRow {
    type Target = RouteRecord;

    fn deref(&self) -> &RouteRecord {
        &self.0
    }
}

impl RouteRow {
    /// A row as the store read it back from its columns.
    pub fn restore(record: RouteRecord) -> RouteRow {
        RouteRow(record)
    }
}

/// What was decided about a failed attempt, as stored (`decision_json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decided {
    /// The evaluator's decision.
    Typed(Decision),
    /// Nothing: the attempt ended after its route had moved on.
    MovedOn,
    /// The words of a row stored before decisions were typed (migration
    /// 0006); read, never written.
    #[serde(skip)]
    Words(String),
}

impl Decided {
    /// The decision in the attempt history's words.
    pub fn text(&self) -> Cow<'_, str> {
        match self {
            Decided::Typed(d) => Cow::Owned(d.describe(&HistoryWording)),
            Decided::MovedOn => Cow::Borrowed("none: the route had already moved on"),
            Decided::Words(words) => Cow::Borrowed(words),
        }
    }
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
    pub decision: Option<Decided>,
    pub evidence: Option<Evidence>,
    pub excerpt: Option<String>,
}

/// Everything one transition writes besides the route row.
#[derive(Debug, Clone, Default)]
pub struct TransitionWrite {
    pub(super) dispatch: Option<AttemptRecord>,
    pub(super) result: Option<AttemptResultRecord>,
}

impl TransitionWrite {
    /// The attempt this transition dispatches.
    pub fn dispatch(&self) -> Option<&AttemptRecord> {
        self.dispatch.as_ref()
    }

    /// The result of the attempt this transition ends.
    pub fn result(&self) -> Option<&AttemptResultRecord> {
        self.result.as_ref()
    }
}
