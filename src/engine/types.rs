//! Every type that crosses the engine's public API (and so the desktop
//! shell's IPC): profiles, candidates, route snapshots, actions and events.
//! Ids and counters are `u32` so they map to plain numbers in TypeScript.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::classification::{Class, PolicyClass, SemanticCode};
use crate::evidence::Evidence;

use super::pipeline::{CandidatePolicy, PendingOutcome};

/// Which agent CLI a candidate runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum AgentKind {
    Simulated,
    ClaudeCode,
    Codex,
    Gemini,
    Opencode,
    Generic,
}

impl AgentKind {
    /// The agent name used in policy documents (`claude-code`).
    pub fn slug(self) -> &'static str {
        match self {
            AgentKind::Simulated => "simulated",
            AgentKind::ClaudeCode => "claude-code",
            AgentKind::Codex => "codex",
            AgentKind::Gemini => "gemini",
            AgentKind::Opencode => "opencode",
            AgentKind::Generic => "generic",
        }
    }

    pub const ALL: [AgentKind; 6] = [
        AgentKind::Simulated,
        AgentKind::ClaudeCode,
        AgentKind::Codex,
        AgentKind::Gemini,
        AgentKind::Opencode,
        AgentKind::Generic,
    ];
}

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

/// One scripted outcome of the simulated provider.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum SimStep {
    /// Finishes the task.
    Succeed { after_ms: u32 },
    /// HTTP 529 `overloaded_error` before any output.
    Overloaded { after_ms: u32 },
    /// HTTP 429 with a `retry-after` header before any output.
    RateLimited { after_ms: u32, retry_after_s: u32 },
    /// Subscription usage limit that resets `resets_in_s` after the failure.
    UsageLimit { after_ms: u32, resets_in_s: u32 },
    /// A tool ran, then the connection was reset: not safe to replay.
    ToolThenReset { after_ms: u32 },
    /// A failure text no catalogue rule knows.
    Unrecognised { after_ms: u32, message: String },
}

impl SimStep {
    pub fn after_ms(&self) -> u32 {
        match self {
            SimStep::Succeed { after_ms }
            | SimStep::Overloaded { after_ms }
            | SimStep::RateLimited { after_ms, .. }
            | SimStep::UsageLimit { after_ms, .. }
            | SimStep::ToolThenReset { after_ms }
            | SimStep::Unrecognised { after_ms, .. } => *after_ms,
        }
    }
}

/// How to launch a candidate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct AgentSpec {
    pub kind: AgentKind,
    /// Executable; defaults per kind (`claude`, `codex`, …). Required for `generic`.
    #[serde(default)]
    pub program: Option<String>,
    /// Extra arguments placed before the prompt.
    #[serde(default)]
    pub args: Vec<String>,
    #[serde(default)]
    pub model: Option<String>,
    /// Simulated provider only: attempt N of this candidate in a route plays
    /// step N (the last step repeats).
    #[serde(default)]
    pub script: Vec<SimStep>,
    /// Variables added to the agent's environment (a proxy, another
    /// account's key). Values that look like secrets are never logged.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// The CLI's own configuration directory, passed as the variable that
    /// CLI documents (`CLAUDE_CONFIG_DIR`, `CODEX_HOME`, `GEMINI_CLI_HOME`,
    /// `OPENCODE_CONFIG_DIR`).
    #[serde(default)]
    pub config_dir: Option<String>,
    /// When an attempt that has gone quiet, or runs too long, is ended.
    #[serde(default)]
    pub timeouts: AttemptTimeouts,
}

/// Attempt deadlines: the process group is killed when one passes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct AttemptTimeouts {
    /// Seconds without any output on stdout or stderr.
    pub idle_s: u32,
    /// Seconds since the attempt started.
    pub total_s: u32,
}

impl AttemptTimeouts {
    /// Inclusive bounds, checked by candidate validation.
    pub const IDLE_S: std::ops::RangeInclusive<u32> = 10..=86_400;
    pub const TOTAL_S: std::ops::RangeInclusive<u32> = 10..=604_800;
}

impl Default for AttemptTimeouts {
    /// A quarter hour of silence (a long build prints nothing through the
    /// agent's stream), four hours in all.
    fn default() -> Self {
        AttemptTimeouts {
            idle_s: 900,
            total_s: 14_400,
        }
    }
}

impl AgentSpec {
    /// A simulated-provider agent that plays `script`; no process, no network.
    pub fn simulated(script: Vec<SimStep>) -> AgentSpec {
        AgentSpec {
            kind: AgentKind::Simulated,
            program: None,
            args: Vec::new(),
            model: None,
            script,
            env: BTreeMap::new(),
            config_dir: None,
            timeouts: AttemptTimeouts::default(),
        }
    }
}

/// A candidate as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct Candidate {
    pub id: u32,
    pub name: String,
    pub enabled: bool,
    pub agent: AgentSpec,
    pub policy: CandidatePolicy,
    /// Bumped whenever the policy document changes.
    pub policy_revision: u32,
}

/// A candidate as the editor sends it; `id` is `None` for a new one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct CandidateInput {
    pub id: Option<u32>,
    pub name: String,
    pub enabled: bool,
    pub agent: AgentSpec,
    pub policy: CandidatePolicy,
}

impl CandidateInput {
    /// A new (not yet stored) enabled candidate.
    pub fn new(name: impl Into<String>, agent: AgentSpec, policy: CandidatePolicy) -> Self {
        CandidateInput {
            id: None,
            name: name.into(),
            enabled: true,
            agent,
            policy,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct Profile {
    pub id: u32,
    pub name: String,
    /// Send it back with `save_candidates`; a mismatch is a conflict.
    pub revision: u32,
    pub candidates: Vec<Candidate>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// Where a route is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum RouteState {
    /// An attempt was dispatched and has not reported back.
    Running,
    /// Waiting for a provider reset; one attempt follows at the deadline.
    WaitingReset,
    /// A retry of the same candidate is due at the deadline.
    RetryScheduled,
    /// Automatic recovery ended; a person decides.
    NeedsManual,
    /// Stopped by a person; `resume` starts a fresh cycle.
    Stopped,
    Succeeded,
}

impl RouteState {
    pub const ALL: [RouteState; 6] = [
        RouteState::Running,
        RouteState::WaitingReset,
        RouteState::RetryScheduled,
        RouteState::NeedsManual,
        RouteState::Stopped,
        RouteState::Succeeded,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            RouteState::Running => "running",
            RouteState::WaitingReset => "waiting_reset",
            RouteState::RetryScheduled => "retry_scheduled",
            RouteState::NeedsManual => "needs_manual",
            RouteState::Stopped => "stopped",
            RouteState::Succeeded => "succeeded",
        }
    }

    pub fn parse(s: &str) -> Option<RouteState> {
        RouteState::ALL.into_iter().find(|st| st.as_str() == s)
    }

    /// A timer is pending in this state.
    pub fn is_waiting(self) -> bool {
        match self {
            RouteState::WaitingReset | RouteState::RetryScheduled => true,
            RouteState::Running
            | RouteState::NeedsManual
            | RouteState::Stopped
            | RouteState::Succeeded => false,
        }
    }

    /// A timer is pending or an attempt is running: the route needs an
    /// engine that owns it.
    pub fn is_active(self) -> bool {
        match self {
            RouteState::Running | RouteState::WaitingReset | RouteState::RetryScheduled => true,
            RouteState::NeedsManual | RouteState::Stopped | RouteState::Succeeded => false,
        }
    }
}

/// What a person can do to a route.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum ManualAction {
    RetryNow,
    SkipNow,
    CancelWait,
    Stop,
    Resume,
}

impl ManualAction {
    pub const ALL: [ManualAction; 5] = [
        ManualAction::RetryNow,
        ManualAction::SkipNow,
        ManualAction::CancelWait,
        ManualAction::Stop,
        ManualAction::Resume,
    ];

    /// The CLI spelling (`retry-now`).
    pub fn as_str(self) -> &'static str {
        match self {
            ManualAction::RetryNow => "retry-now",
            ManualAction::SkipNow => "skip-now",
            ManualAction::CancelWait => "cancel-wait",
            ManualAction::Stop => "stop",
            ManualAction::Resume => "resume",
        }
    }

    pub fn parse(s: &str) -> Option<ManualAction> {
        ManualAction::ALL.into_iter().find(|a| a.as_str() == s)
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

/// Retry progress of the class that decided last.
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
    pub last_classification: Option<ClassificationSummary>,
    pub retry: Option<RetryProgress>,
    pub pending_outcome: Option<PendingOutcome>,
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

/// How an attempt ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum AttemptOutcome {
    Succeeded,
    Failed,
    /// Killed by a stop or by shutdown.
    Killed,
    /// The engine died while it ran; found at restart.
    Interrupted,
}

impl AttemptOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            AttemptOutcome::Succeeded => "succeeded",
            AttemptOutcome::Failed => "failed",
            AttemptOutcome::Killed => "killed",
            AttemptOutcome::Interrupted => "interrupted",
        }
    }

    pub fn parse(s: &str) -> Option<AttemptOutcome> {
        [
            AttemptOutcome::Succeeded,
            AttemptOutcome::Failed,
            AttemptOutcome::Killed,
            AttemptOutcome::Interrupted,
        ]
        .into_iter()
        .find(|o| o.as_str() == s)
    }
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
