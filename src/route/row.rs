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

use super::{ActionRecord, AttemptOutcome, HoldReason, RouteState};
use crate::account::{AccountId, AccountNames, Mark, Probe};
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
    /// Why and since when it waits for a slot, while it is `Queued`.
    pub queued: Option<Queued>,
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

    /// The account of the current candidate, if it has one.
    pub fn account(&self) -> Option<&AccountId> {
        self.candidates
            .get(self.candidate_index as usize)
            .and_then(|c| c.account.as_ref())
    }
}

/// A route's place in the queue: why it waits for a slot, and since when
/// (first in, first out; kept when only the reason changes).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Queued {
    pub reason: QueueReason,
    pub since: DateTime<Utc>,
}

/// Why a route ready to dispatch waits.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum QueueReason {
    /// Its account runs as many agents as its limit allows, or older
    /// routes wait for it.
    AccountFull { account: AccountId },
    /// The global maximum of running agents is reached.
    GlobalFull,
    /// Its account's limit has reset and another route is trying it: this
    /// one goes once that probe answers, or the limit is marked again.
    Probing {
        account: AccountId,
        probe_route: u32,
    },
}

impl QueueReason {
    /// The reason in words, for the route view, the account by its name in
    /// `names`.
    pub fn text(&self, names: &AccountNames) -> String {
        match self {
            QueueReason::AccountFull { account } => format!(
                "queued: {} runs as many agents as its limit allows; it starts when one ends",
                names.of(account)
            ),
            QueueReason::GlobalFull => {
                "queued: the maximum of running agents is reached; it starts when one ends"
                    .to_string()
            }
            QueueReason::Probing {
                account,
                probe_route,
            } => format!(
                "queued: the limit of {} has reset and route {probe_route} is trying it; \
                 this one starts once that answers",
                names.of(account)
            ),
        }
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
    /// Not dispatched: the candidate's account was limited, and its policy
    /// decided as if the failure had just happened.
    Held {
        account: AccountId,
        model: Option<String>,
        until: Option<DateTime<Utc>>,
        decision: Decision,
    },
    /// The words of a row stored before decisions were typed (migration
    /// 0006); read, never written.
    #[serde(skip)]
    Words(String),
}

impl Decided {
    /// The decision in the attempt history's words, an account by its name
    /// in `names`.
    pub fn text(&self, names: &AccountNames) -> Cow<'_, str> {
        match self {
            Decided::Typed(d) => Cow::Owned(d.describe(&HistoryWording)),
            Decided::MovedOn => Cow::Borrowed("none: the route had already moved on"),
            Decided::Held {
                account,
                model,
                until,
                decision,
            } => Cow::Owned(format!(
                "not dispatched: {}; {}",
                crate::account::mark::limited_until(&names.of(account), model.as_deref(), *until),
                decision.describe(&HistoryWording)
            )),
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
    /// The account the candidate ran as.
    pub account: Option<AccountId>,
    /// What it sends: the prompt, a continuation, or a handover.
    pub input: super::AttemptInput,
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

/// A dispatch a limit mark held back: a "not dispatched" line of the
/// route's history, with the mark and what the policy decided.
#[derive(Debug, Clone, PartialEq)]
pub struct HoldRecord {
    pub candidate_index: u32,
    pub candidate_name: String,
    pub mark: Mark,
    pub decision: Decision,
    pub at: DateTime<Utc>,
}

/// The marks a dispatch takes as their probe, each with the probe it saw
/// on it (one that is gone, or none).
#[derive(Debug, Clone, PartialEq)]
pub struct ProbeClaim {
    pub marks: Vec<(u32, Option<Probe>)>,
}

/// What becomes of the marks a running attempt probes when it ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProbeEnd {
    /// It succeeded: the limit has lifted, its marks are cleared.
    Answered,
    /// It ended otherwise: another route may probe (a new mark from its
    /// failure replaces the old one on its scope).
    Released,
}

/// Everything one transition writes besides the route row.
#[derive(Debug, Clone, Default)]
pub struct TransitionWrite {
    pub(super) dispatch: Option<AttemptRecord>,
    pub(super) result: Option<AttemptResultRecord>,
    pub(super) mark: Option<Mark>,
    pub(super) holds: Vec<HoldRecord>,
    pub(super) probe: Option<ProbeClaim>,
    pub(super) probe_end: Option<ProbeEnd>,
    pub(super) world_stamp: Option<u64>,
    /// The person's action that caused this transition, for the history.
    pub(super) action: Option<ActionRecord>,
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

    /// The limit mark the ended attempt's failure makes on its account.
    pub fn mark(&self) -> Option<&Mark> {
        self.mark.as_ref()
    }

    /// Dispatches limit marks held back in this transition.
    pub fn holds(&self) -> &[HoldRecord] {
        &self.holds
    }

    /// The marks this dispatch probes.
    pub fn probe(&self) -> Option<&ProbeClaim> {
        self.probe.as_ref()
    }

    /// What becomes of the marks the ended attempt probed.
    pub fn probe_end(&self) -> Option<ProbeEnd> {
        self.probe_end
    }

    /// The manual action this transition records in the route's history.
    pub fn action(&self) -> Option<&ActionRecord> {
        self.action.as_ref()
    }

    /// The version of the limit marks this plan was made from, when it
    /// consulted them: it commits only while they are unchanged and, when
    /// it dispatches, while its account and the global maximum have room.
    pub fn world_stamp(&self) -> Option<u64> {
        self.world_stamp
    }
}
