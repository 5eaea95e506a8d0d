//! The views the engine's public API (and so the desktop shell's IPC) hands
//! out and takes in: route snapshots and details, requests and events. The
//! domain types they are made of live in the domain modules.
//! Ids and counters are `u32` so they map to plain numbers in TypeScript.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::agent::{AgentKind, AttemptTimeouts};
use crate::classification::{Class, PolicyClass, SemanticCode};
use crate::evidence::Evidence;
use crate::policy::Exhausted;
use crate::route::{AttemptOutcome, ManualAction, RouteState};

/// One entry of the agent picker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct AgentKindInfo {
    pub kind: AgentKind,
    pub label: String,
    pub description: String,
    /// Program run when the candidate names none (`None`: must be given).
    pub default_program: Option<String>,
    /// Deadlines a new candidate of this kind starts with.
    pub default_timeouts: AttemptTimeouts,
    /// The variable its config dir is passed in; `None`: it has none.
    pub config_dir_variable: Option<String>,
}

/// The parts of a classification the route view shows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct ClassificationSummary {
    pub code: SemanticCode,
    pub class: Class,
    pub rule_id: Option<String>,
    pub catalogue_version: String,
}

/// The route's most recent failed attempt and what was decided about it.
/// After a skip it belongs to an earlier candidate than the current one, so
/// it is kept apart from the facts about the current candidate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct LastFailure {
    pub candidate_index: u32,
    pub candidate_name: String,
    pub classification: ClassificationSummary,
    /// The decision taken, in words (`transient retry 1 of 3 in 5 s, at …`).
    pub decision: Option<String>,
}

/// Retry progress of the current candidate in the class of its last failure.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct RetryProgress {
    pub class: PolicyClass,
    /// Retries used so far in this cycle for the current candidate.
    pub ordinal: u32,
    pub max: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct RouteSnapshot {
    pub id: u32,
    pub profile_name: String,
    pub state: RouteState,
    pub generation: u32,
    pub candidate_index: u32,
    pub candidate_name: String,
    pub candidate_count: u32,
    /// The last failure, whichever candidate it was.
    pub last_failure: Option<LastFailure>,
    /// The current candidate's retries; `None` until it has failed.
    pub retry: Option<RetryProgress>,
    /// What follows once the current candidate's pending wait or retry is
    /// used up; `None` when nothing is pending.
    pub pending_outcome: Option<Exhausted>,
    /// Absolute UTC deadline of a pending wait or retry.
    pub deadline: Option<DateTime<Utc>>,
    pub manual_reason: Option<String>,
    pub prompt_excerpt: String,
    /// Number of attempts dispatched so far.
    pub attempts: u32,
    /// Engine instance that runs this route's timers and processes.
    pub owner: Option<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// Actions valid now, in display order.
    pub actions: Vec<ManualAction>,
}

/// One attempt of a route, with what was decided about it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct AttemptView {
    pub number: u32,
    pub generation: u32,
    pub candidate_index: u32,
    pub candidate_name: String,
    pub invocation_id: String,
    pub started_at: DateTime<Utc>,
    pub finished_at: Option<DateTime<Utc>>,
    /// `None` while it runs.
    pub outcome: Option<AttemptOutcome>,
    pub classification: Option<ClassificationSummary>,
    /// The decision taken, in words (`retry 2 at …`).
    pub decision: Option<String>,
    pub policy_revision: Option<u32>,
    /// Sanitized evidence excerpt.
    pub excerpt: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct RouteDetail {
    pub snapshot: RouteSnapshot,
    pub attempts: Vec<AttemptView>,
}

/// Evidence that no catalogue rule classified, for growing the catalogue.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct InboxItem {
    pub route_id: u32,
    pub attempt: u32,
    pub candidate_name: String,
    pub code: SemanticCode,
    pub catalogue_version: String,
    /// What the catalogue in force decides for this evidence today, when a
    /// rule now matches it (a local rule made from it, say).
    pub now: Option<ClassificationSummary>,
    pub evidence: Evidence,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct StartRun {
    pub profile_id: u32,
    pub prompt: String,
    pub cwd: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct ActionRequest {
    pub route_id: u32,
    pub action: ManualAction,
    pub expected_generation: u32,
}

/// Published after every committed transition. Drop an event whose
/// generation is not above the last one seen for its route.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct RouteEvent {
    pub route_id: u32,
    pub generation: u32,
    pub snapshot: RouteSnapshot,
}

/// Settings of [`super::Engine::open`].
#[derive(Debug, Clone)]
pub struct EngineOptions {
    /// Seed the demo profile when the database has no profile at all.
    pub seed_demo: bool,
    /// Take over routes whose owning process is gone (the desktop app: yes;
    /// a one-shot CLI command: no).
    pub adopt_orphans: bool,
    /// How long an ownership lease lasts without a heartbeat.
    pub lease: std::time::Duration,
}

impl Default for EngineOptions {
    fn default() -> Self {
        EngineOptions {
            seed_demo: true,
            adopt_orphans: true,
            lease: std::time::Duration::from_secs(15),
        }
    }
}
