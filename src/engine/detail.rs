//! The views of one route in detail that cross IPC: its held dispatches,
//! the manual actions people took, and its timeline, beside its attempts.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::{AttemptView, ClassificationSummary, RouteSnapshot};
use crate::agent::Usage;
use crate::route::{Actor, AttemptOutcome, ManualAction, RouteState};

/// A dispatch a limit mark held back: "not dispatched: work limited until
/// …", with what the candidate's policy decided instead.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct HoldView {
    pub generation: u32,
    pub candidate_index: u32,
    pub candidate_name: String,
    pub at: DateTime<Utc>,
    /// The account's id, what `recourse accounts clear` takes.
    pub account: String,
    /// The account as the Accounts tab names it (`Claude Code
    /// (~/.claude-work)`, `work`): what a person reads.
    pub account_name: String,
    /// The route whose failed attempt the limit was learned from (this
    /// route's own id when it learned it itself).
    pub from_route: u32,
    pub classification: ClassificationSummary,
    /// `None`: limited until cleared.
    pub until: Option<DateTime<Utc>>,
    /// The history's line: `not dispatched: work limited until …; wait for …`.
    pub text: String,
}

/// A manual action in a route's history: who, when, which, what it led to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct ActionView {
    /// The route's generation after the action.
    pub generation: u32,
    pub action: ManualAction,
    pub by: Actor,
    pub at: DateTime<Utc>,
    /// The state the route was in when the person acted.
    pub from: RouteState,
    /// The attempt it started, if it did.
    pub attempt: Option<u32>,
    /// What it led to, in the history's words (`started attempt 4 on …`).
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct RouteDetail {
    pub snapshot: RouteSnapshot,
    /// The whole prompt (the snapshot has its first line), for "run again".
    pub prompt: String,
    /// The profile it ran on, while that profile exists.
    pub profile_id: Option<u32>,
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
    /// What people did to the route (retry now, stop, …), oldest first.
    pub manual_actions: Vec<ActionView>,
    /// The route drawn over time: attempts, the waits between them, marks.
    pub timeline: Vec<TimelineEntry>,
}

/// One piece of a route's timeline, in time order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TimelineEntry {
    /// An attempt from its start to its end (`None`: still running).
    Attempt {
        number: u32,
        candidate_name: String,
        start: DateTime<Utc>,
        end: Option<DateTime<Utc>>,
        outcome: Option<AttemptOutcome>,
    },
    /// Time between attempts, and why; `end` is `None` while it lasts (a
    /// pending wait ends at `due`, a person's turn has no end known).
    Gap {
        start: DateTime<Utc>,
        end: Option<DateTime<Utc>>,
        due: Option<DateTime<Utc>>,
        why: GapReason,
        label: String,
    },
    /// Something that happened at one instant (a skip, a stop).
    Mark { at: DateTime<Utc>, label: String },
}

/// Why a route was between attempts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum GapReason {
    /// Waiting for the provider's reset.
    ResetWait,
    /// A scheduled retry.
    Retry,
    /// Waiting for a person.
    Person,
}
