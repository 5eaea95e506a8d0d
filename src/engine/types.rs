//! The views the engine's public API (and so the desktop shell's IPC) hands
//! out and takes in: route snapshots and details, requests and events. The
//! domain types they are made of live in the domain modules.
//! Ids and counters are `u32` so they map to plain numbers in TypeScript.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::agent::{
    Access, AgentKind, AgentSpec, FilesChanged, Launch, Transcript, TranscriptSummary,
};
use crate::classification::{Class, PolicyClass, SemanticCode};
use crate::evidence::Evidence;
use crate::policy::{AutoContinue, CandidatePolicy, ClassPolicy, Exhausted, UnclassifiedPolicy};
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
    /// Whether it resumes its own sessions: Continue, a continuation
    /// message and automatic continuation apply to it.
    pub resumes: bool,
    /// A new candidate of this kind in the editor: its agent settings and
    /// the policy fitted to how the kind fails.
    pub starter: CandidateTemplate,
    /// Why that starter policy fits the kind, shown beside it.
    pub starter_why: String,
    /// What a section's reset wait, retry or automatic continuation starts
    /// with when a person switches it on (the hard wait is the kind's usage
    /// window), and the unclassified exception's threshold.
    pub switch_on: CandidatePolicy,
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
            resumes: d.resume.is_some(),
            starter: CandidateTemplate {
                agent: (d.starter)(),
                policy: (d.starter_policy)(),
            },
            starter_why: d.starter_why.to_string(),
            switch_on: CandidatePolicy {
                transient: ClassPolicy {
                    auto_continue: AutoContinue::ON,
                    ..ClassPolicy::new(Some(300), Some((3, 10)), Exhausted::Skip)
                },
                hard: ClassPolicy::new(Some(d.hard_wait_s), Some((2, 60)), Exhausted::Skip),
                unclassified: UnclassifiedPolicy::suggested(),
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
    /// The pending retry's number in this cycle for the current candidate
    /// (counted when it is scheduled, so while it waits it is "retry N of
    /// max").
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
    /// The trusted reset instant the current candidate's last failure
    /// gave, kept after its wait was cancelled: until then a retry of it
    /// will most likely fail again.
    pub provider_reset_at: Option<DateTime<Utc>>,
    pub manual_reason: Option<String>,
    /// The agent's program could not be started: a retry fails the same way
    /// until the program or working directory is fixed.
    pub cannot_start: bool,
    /// Why it waits for a slot, while it is queued.
    pub queued: Option<String>,
    /// The account of the current candidate (its id).
    pub account: Option<String>,
    pub prompt_excerpt: String,
    /// The directory the agent runs in; `None` only for a route started
    /// before directories were recorded (it ran where Recourse was started).
    pub cwd: Option<String>,
    /// When a person archived it; archived routes are listed apart.
    pub archived_at: Option<DateTime<Utc>>,
    /// Number of attempts dispatched so far.
    pub attempts: u32,
    /// Engine instance that runs this route's timers and processes.
    pub owner: Option<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// Actions valid now, in display order.
    pub actions: Vec<ManualAction>,
    /// Every other action, with why it is not possible now: what the
    /// engine would answer a request for it (its greyed button says so).
    pub unavailable: Vec<UnavailableAction>,
}

/// An action a route does not offer now, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct UnavailableAction {
    pub action: ManualAction,
    pub why: String,
}

/// Which routes the list shows, by what they need from a person.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum RouteFilter {
    /// `needs_manual`: nothing happens until a person acts.
    NeedsYou,
    /// Running, waiting for a timer the engine will fire, or queued.
    Active,
    /// Stopped by a person: not finished (resume or archive it).
    Stopped,
    /// Succeeded.
    Finished,
    /// Archived by a person, whatever their state.
    Archived,
    /// Every route not archived.
    All,
}

impl RouteFilter {
    pub const ALL: [RouteFilter; 6] = [
        RouteFilter::NeedsYou,
        RouteFilter::Active,
        RouteFilter::Stopped,
        RouteFilter::Finished,
        RouteFilter::Archived,
        RouteFilter::All,
    ];

    /// The states the filter keeps; empty for every state.
    pub fn states(self) -> &'static [RouteState] {
        use RouteState::*;
        match self {
            RouteFilter::NeedsYou => &[NeedsManual],
            RouteFilter::Active => &[Running, WaitingReset, RetryScheduled, Queued],
            RouteFilter::Stopped => &[Stopped],
            RouteFilter::Finished => &[Succeeded],
            RouteFilter::Archived | RouteFilter::All => &[],
        }
    }

    /// Whether the filter lists archived routes (and only those).
    pub fn archived(self) -> bool {
        match self {
            RouteFilter::Archived => true,
            RouteFilter::NeedsYou
            | RouteFilter::Active
            | RouteFilter::Stopped
            | RouteFilter::Finished
            | RouteFilter::All => false,
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

/// How many routes each filter of the list holds: one field per
/// [`RouteFilter`], by its name, plus the parts of `active`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct RouteCounts {
    pub needs_you: u32,
    /// Running or waiting.
    pub active: u32,
    /// Running now.
    pub running: u32,
    /// Waiting for a reset, a scheduled retry or a slot (queued).
    pub waiting: u32,
    pub stopped: u32,
    /// Succeeded.
    pub finished: u32,
    pub archived: u32,
    /// Every route not archived.
    pub all: u32,
}

impl RouteCounts {
    /// Something only a running app carries on: a timer or an agent.
    pub fn active(&self) -> bool {
        self.waiting + self.running > 0
    }

    /// Counts from the number of listed (not archived) routes in each
    /// state, and the number archived.
    pub fn of(by_state: &[(RouteState, u32)], archived: u32) -> RouteCounts {
        let mut counts = RouteCounts {
            archived,
            ..RouteCounts::default()
        };
        for &(state, n) in by_state {
            let slot = match state {
                RouteState::NeedsManual => &mut counts.needs_you,
                RouteState::Running => &mut counts.running,
                RouteState::WaitingReset | RouteState::RetryScheduled | RouteState::Queued => {
                    &mut counts.waiting
                }
                RouteState::Stopped => &mut counts.stopped,
                RouteState::Succeeded => &mut counts.finished,
            };
            *slot += n;
            counts.all += n;
        }
        counts.active = counts.running + counts.waiting;
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
    /// The program's exit code, when it exited with one.
    pub exit_code: Option<i32>,
    /// No catalogue rule recognised its failure: it is in the catalogue's
    /// inbox, where a rule can be made from it.
    pub in_inbox: bool,
    /// What the agent said and did, in brief; `None` for an attempt that
    /// kept none (it is running, or ran before transcripts were kept).
    pub transcript: Option<TranscriptSummary>,
    /// What it sent: the prompt, a continuation of an earlier attempt's
    /// session, or a hand-over with its package.
    pub input: crate::route::AttemptInput,
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

/// How long finished routes are kept (the app's retention setting); each
/// `None` keeps them for good.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct Retention {
    /// Days after which a succeeded or stopped route loses the bulky
    /// details of its attempts (transcripts, processes); its history stays.
    pub details_days: Option<u32>,
    /// Days after which a succeeded or stopped route is deleted with its
    /// history.
    pub routes_days: Option<u32>,
}

/// What housekeeping removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct Pruned {
    pub detail_rows: u32,
    pub routes_deleted: u32,
}

/// Where an agent would run, checked before a run starts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct WorkdirCheck {
    /// The directory, absolute; for an empty field, the one used instead.
    pub path: String,
    /// Why a run would be refused there (not a directory); `None`: usable.
    pub problem: Option<String>,
    /// What to know before running there (not a git repository).
    pub warning: Option<String>,
    /// The repository it belongs to, when it is in one.
    pub git_root: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct ActionRequest {
    pub route_id: u32,
    pub action: ManualAction,
    pub expected_generation: u32,
    /// The person was told the route's `repeat_risk` and still wants this
    /// action, which sends work again: without it such an action is refused.
    pub confirm_repeat: bool,
    /// Continue only: the message to send in the resumed session, in place
    /// of the candidate's (or the default one).
    #[serde(default)]
    pub message: Option<String>,
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
