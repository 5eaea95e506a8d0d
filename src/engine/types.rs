//! The views the engine's public API (and so the desktop shell's IPC) hands
//! out and takes in: route snapshots and details, requests and events. The
//! domain types they are made of live in the domain modules.
//! Ids and counters are `u32` so they map to plain numbers in TypeScript.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::agent::{
    Access, AgentKind, AgentSpec, FilesChanged, Launch, Transcript, TranscriptSummary, Usage,
};
use crate::classification::{Class, PolicyClass, SemanticCode};
use crate::evidence::Evidence;
use crate::policy::{CandidatePolicy, Exhausted};
use crate::route::{AttemptOutcome, ManualAction, RouteState};

/// One entry of the agent picker: an agent kind's descriptor as the editor
/// and the CLI read it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct AgentKindInfo {
    pub kind: AgentKind,
    /// The agent name in documents and on the command line (`claude-code`).
    pub slug: String,
    pub label: String,
    pub description: String,
    /// Program run when the candidate names none (`None`: must be given).
    pub default_program: Option<String>,
    /// The variable its config dir is passed in; `None`: it has none.
    pub config_dir_variable: Option<String>,
    /// Whether a failure can be recovered by the class policy; `false`:
    /// its effects are unknown, so every failure needs a person.
    pub policy_applies: bool,
    /// Played inside Recourse from its `script`: no program, environment
    /// or config dir.
    pub scripted: bool,
    /// The access levels it can be held to (empty: it takes none).
    pub access_levels: Vec<Access>,
    /// A new candidate of this kind: its agent settings and policy.
    pub starter: CandidateTemplate,
}

/// What a new candidate starts with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct CandidateTemplate {
    pub agent: AgentSpec,
    pub policy: CandidatePolicy,
}

impl AgentKindInfo {
    pub fn of(kind: AgentKind) -> AgentKindInfo {
        let d = kind.descriptor();
        AgentKindInfo {
            kind,
            slug: d.slug.to_string(),
            label: d.label.to_string(),
            description: d.description.to_string(),
            default_program: d.default_program.map(str::to_string),
            config_dir_variable: d.config_dir_variable.map(str::to_string),
            policy_applies: d.policy_applies,
            scripted: matches!(d.launch, Launch::InProcess),
            access_levels: d
                .access
                .map(|map| {
                    Access::ALL
                        .into_iter()
                        .filter(|level| (map.flags)(*level).is_some())
                        .collect()
                })
                .unwrap_or_default(),
            starter: CandidateTemplate {
                agent: (d.starter)(),
                policy: CandidatePolicy::default_for_new_candidate(),
            },
        }
    }
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
    /// Where a skip of the current candidate goes (its name); `None` on the
    /// last eligible candidate, where a skip outcome needs a person instead.
    pub skip_to: Option<String>,
    /// Set when the safety gate refused automatic recovery: why running
    /// the failed attempt again may repeat work it already did.
    pub repeat_risk: Option<String>,
    /// Absolute UTC deadline of a pending wait or retry.
    pub deadline: Option<DateTime<Utc>>,
    pub manual_reason: Option<String>,
    /// Why it waits for a slot, while it is queued.
    pub queued: Option<String>,
    /// The account of the current candidate (its id).
    pub account: Option<String>,
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

/// Which routes the list shows, by what they need from a person.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum RouteFilter {
    /// `needs_manual`: nothing happens until a person acts.
    NeedsYou,
    /// Running, waiting for a timer the engine will fire, or queued.
    Active,
    /// Succeeded or stopped.
    Finished,
    All,
}

impl RouteFilter {
    pub const ALL: [RouteFilter; 4] = [
        RouteFilter::NeedsYou,
        RouteFilter::Active,
        RouteFilter::Finished,
        RouteFilter::All,
    ];

    /// The states the filter keeps; empty for every state.
    pub fn states(self) -> &'static [RouteState] {
        use RouteState::*;
        match self {
            RouteFilter::NeedsYou => &[NeedsManual],
            RouteFilter::Active => &[Running, WaitingReset, RetryScheduled, Queued],
            RouteFilter::Finished => &[Succeeded, Stopped],
            RouteFilter::All => &[],
        }
    }
}

/// One page of the route list: newest first, after `before` (a route id,
/// the last one of the page already shown; `None` for the first page).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct RouteQuery {
    pub filter: RouteFilter,
    /// Matches the route id, profile name or prompt text; empty for all.
    pub search: String,
    pub before: Option<u32>,
    /// Routes per page, 1 to [`RouteQuery::MAX_LIMIT`].
    pub limit: u32,
}

impl RouteQuery {
    pub const MAX_LIMIT: u32 = 500;
    /// Longer search text is refused rather than cut.
    pub const MAX_SEARCH_CHARS: usize = 200;

    /// The first `limit` routes of every state, newest first.
    pub fn all(limit: u32) -> RouteQuery {
        RouteQuery {
            filter: RouteFilter::All,
            search: String::new(),
            before: None,
            limit,
        }
    }
}

/// How many routes each filter of the list holds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct RouteCounts {
    pub needs_you: u32,
    /// Running now.
    pub running: u32,
    /// Waiting for a reset, a scheduled retry or a slot (queued).
    pub waiting: u32,
    pub finished: u32,
}

impl RouteCounts {
    /// Something only a running app carries on: a timer or an agent.
    pub fn active(&self) -> bool {
        self.waiting + self.running > 0
    }

    /// Counts from the number of routes in each state.
    pub fn of(by_state: &[(RouteState, u32)]) -> RouteCounts {
        let mut counts = RouteCounts::default();
        for &(state, n) in by_state {
            let slot = match state {
                RouteState::NeedsManual => &mut counts.needs_you,
                RouteState::Running => &mut counts.running,
                RouteState::WaitingReset | RouteState::RetryScheduled | RouteState::Queued => {
                    &mut counts.waiting
                }
                RouteState::Stopped | RouteState::Succeeded => &mut counts.finished,
            };
            *slot += n;
        }
        counts
    }
}

/// A page of the route list with the count behind each filter.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct RoutePage {
    pub routes: Vec<RouteSnapshot>,
    /// More routes match beyond this page ("Show older").
    pub more: bool,
    pub counts: RouteCounts,
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
    /// What the agent said and did, in brief; `None` for an attempt that
    /// kept none (it is running, or ran before transcripts were kept).
    pub transcript: Option<TranscriptSummary>,
}

/// A dispatch a limit mark held back: "not dispatched: work limited until
/// …", with what the candidate's policy decided instead.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct HoldView {
    pub generation: u32,
    pub candidate_index: u32,
    pub candidate_name: String,
    pub at: DateTime<Utc>,
    pub account: String,
    pub classification: ClassificationSummary,
    /// `None`: limited until cleared.
    pub until: Option<DateTime<Utc>>,
    /// The history's line: `not dispatched: work limited until …; wait for …`.
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct RouteDetail {
    pub snapshot: RouteSnapshot,
    pub attempts: Vec<AttemptView>,
    /// Tokens and cost of every attempt together.
    pub totals: Usage,
    /// Said when a route succeeded although its agent was refused tool
    /// uses: `succeeded, but the agent was refused 2 tool uses (Edit,
    /// Bash): its access is read-only`.
    pub refused_notice: Option<String>,
    /// The working directory the agents run in, as it will be used (the
    /// route's own, else the directory Recourse was started in).
    pub cwd: Option<String>,
    /// Dispatches held back by limit marks, oldest first.
    pub holds: Vec<HoldView>,
}

/// One attempt's whole transcript and the files it changed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct AttemptTranscript {
    pub route_id: u32,
    pub attempt: u32,
    pub transcript: Transcript,
    pub files: Option<FilesChanged>,
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
