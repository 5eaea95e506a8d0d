//! Where a route is, what a person can do to it, and how an attempt ended.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use super::RepeatRisk;
use crate::evaluator::{ManualReason, NotContinued, StopReason};
use crate::safety::UnsafeReason;

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
    /// Ready to dispatch, waiting for a slot: its account or the global
    /// maximum runs as many agents as allowed, or its account's limit has
    /// reset and another route is trying it. First in, first out.
    Queued,
    /// Automatic recovery ended; a person decides.
    NeedsManual,
    /// Stopped by a person; `resume` starts a fresh cycle.
    Stopped,
    Succeeded,
}

impl RouteState {
    pub const ALL: [RouteState; 7] = [
        RouteState::Running,
        RouteState::WaitingReset,
        RouteState::RetryScheduled,
        RouteState::Queued,
        RouteState::NeedsManual,
        RouteState::Stopped,
        RouteState::Succeeded,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            RouteState::Running => "running",
            RouteState::WaitingReset => "waiting_reset",
            RouteState::RetryScheduled => "retry_scheduled",
            RouteState::Queued => "queued",
            RouteState::NeedsManual => "needs_manual",
            RouteState::Stopped => "stopped",
            RouteState::Succeeded => "succeeded",
        }
    }

    pub fn parse(s: &str) -> Option<RouteState> {
        RouteState::ALL.into_iter().find(|st| st.as_str() == s)
    }

    /// The state in words, lower-case: the app's badge (capitalised) and
    /// announcements, and the CLI's route lines, all say it this way.
    pub fn words(self) -> &'static str {
        match self {
            RouteState::Running => "running",
            RouteState::WaitingReset => "waiting for provider reset",
            RouteState::RetryScheduled => "retry scheduled",
            RouteState::Queued => "queued",
            RouteState::NeedsManual => "needs manual recovery",
            RouteState::Stopped => "stopped",
            RouteState::Succeeded => "succeeded",
        }
    }

    /// The state as a sentence says it after "the route" ("the route needs
    /// manual recovery"), in the words of [`RouteState::words`].
    pub fn after_the_route(self) -> &'static str {
        match self {
            RouteState::Running => "is running",
            RouteState::WaitingReset => "is waiting for provider reset",
            RouteState::RetryScheduled => "has a retry scheduled",
            RouteState::Queued => "is queued for a free slot",
            RouteState::NeedsManual => "needs manual recovery",
            RouteState::Stopped => "is stopped",
            RouteState::Succeeded => "has succeeded",
        }
    }

    /// A timer is pending in this state.
    pub fn is_waiting(self) -> bool {
        match self {
            RouteState::WaitingReset | RouteState::RetryScheduled => true,
            RouteState::Running
            | RouteState::Queued
            | RouteState::NeedsManual
            | RouteState::Stopped
            | RouteState::Succeeded => false,
        }
    }

    /// A timer is pending, an attempt is running or a dispatch waits for
    /// its slot: the route needs an engine that owns it.
    pub fn is_active(self) -> bool {
        match self {
            RouteState::Running
            | RouteState::WaitingReset
            | RouteState::RetryScheduled
            | RouteState::Queued => true,
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
    /// Resumes the last attempt's own CLI session with a continuation
    /// message, never the original prompt.
    Continue,
    /// Skips to the next candidate with the original prompt and a bounded
    /// package of what the last attempt said and did.
    Handover,
}

impl ManualAction {
    pub const ALL: [ManualAction; 7] = [
        ManualAction::RetryNow,
        ManualAction::SkipNow,
        ManualAction::CancelWait,
        ManualAction::Stop,
        ManualAction::Resume,
        ManualAction::Continue,
        ManualAction::Handover,
    ];

    /// What the action does, for `recourse action --help` and the app's
    /// action hints: one text, so both say the same.
    pub fn help(self) -> &'static str {
        match self {
            ManualAction::RetryNow => {
                "Run the current candidate again now, as one more attempt in the same cycle: \
                 the retries and reset wait it used are not renewed, so if it fails, what its \
                 policy says to do when recovery is used up (skip or stop) applies."
            }
            ManualAction::SkipNow => "Leave this candidate and run the next one.",
            ManualAction::CancelWait => "Stop waiting; the route waits for you instead.",
            ManualAction::Stop => {
                "End the route (a running agent is stopped); Resume starts a fresh cycle."
            }
            ManualAction::Resume => {
                "Send the prompt to the current candidate again, in a fresh cycle: its retries \
                 and reset wait renewed, skipped candidates eligible again."
            }
            ManualAction::Continue => {
                "Resume the last attempt's own session with a message asking the agent to check \
                 the current state and finish; the prompt is not sent again."
            }
            ManualAction::Handover => {
                "Run the next candidate with the prompt and what the last attempt said, ran and \
                 changed, as reference data (shown before it is sent)."
            }
        }
    }

    /// What the action sends to an agent, as a question about repeating
    /// work words it ("continue resumes …"); `None` for actions that start
    /// no agent.
    pub fn what_it_sends(self) -> Option<&'static str> {
        match self {
            ManualAction::RetryNow | ManualAction::SkipNow | ManualAction::Resume => {
                Some("sends the prompt to an agent again")
            }
            ManualAction::Continue => Some("resumes the agent's session to go on with the work"),
            ManualAction::Handover => {
                Some("starts the next candidate on the prompt with what the last attempt did")
            }
            ManualAction::CancelWait | ManualAction::Stop => None,
        }
    }

    /// The action's name in words, as the app's button and the engine's
    /// sentences say it ("Retry now"); `as_str` is what a command takes.
    pub fn label(self) -> &'static str {
        match self {
            ManualAction::RetryNow => "Retry now",
            ManualAction::SkipNow => "Skip now",
            ManualAction::CancelWait => "Cancel wait",
            ManualAction::Stop => "Stop",
            ManualAction::Resume => "Resume",
            ManualAction::Continue => "Continue",
            ManualAction::Handover => "Skip with context",
        }
    }

    /// The CLI spelling (`retry-now`).
    pub fn as_str(self) -> &'static str {
        match self {
            ManualAction::RetryNow => "retry-now",
            ManualAction::SkipNow => "skip-now",
            ManualAction::CancelWait => "cancel-wait",
            ManualAction::Stop => "stop",
            ManualAction::Resume => "resume",
            ManualAction::Continue => "continue",
            ManualAction::Handover => "handover",
        }
    }

    pub fn parse(s: &str) -> Option<ManualAction> {
        ManualAction::ALL.into_iter().find(|a| a.as_str() == s)
    }
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

/// Why a route waits for a person (`NeedsManual` or `Stopped`), coded: the
/// machine, the views and the UI act on the variant, never on its words.
/// Stored as JSON (`routes.manual_reason_json`); rows from before it read
/// back by their code or, with none, as [`HoldReason::Legacy`] words.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum HoldReason {
    /// A person cancelled the pending wait or retry.
    WaitCancelled,
    /// A person stopped the route; `risk` says why sending work again may
    /// repeat work (its agent was stopped while it ran, or the hold it was
    /// stopped from had one). Rows from before it read back without one.
    StoppedByYou {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        risk: Option<RepeatRisk>,
    },
    /// The effect-safety gate refused automatic recovery: the failed
    /// attempt may have done work, so running it again may repeat it.
    /// `not_continued` says why a candidate that opted into automatic
    /// continuation did not continue its session instead.
    UnsafeEffect {
        reason: UnsafeReason,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        not_continued: Option<NotContinued>,
    },
    /// Recovery is used up and the candidate's policy says stop.
    PolicyStop { reason: StopReason },
    /// No automatic recovery is possible (unclassified, low confidence, no
    /// candidate left to skip to); a spawn failure is one, by its code.
    NoRecovery { reason: ManualReason },
    /// The agent's program could not be started (not installed, not
    /// executable, a missing working directory): `cause` says which, in
    /// the runner's words; retrying cannot help until it is fixed.
    CannotStart { cause: String },
    /// The running attempt was found without its engine.
    Interrupted { attempt: u32, cause: Interruption },
    /// The words of a row stored before reasons were coded.
    Legacy { text: String },
}

/// How a running attempt lost its engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Interruption {
    /// The engine that ran it is gone (found at adoption).
    EngineStopped,
    /// Its own engine has no attempt task or report for it.
    EngineLostTrack,
    /// Recourse shut down while it ran.
    ShutDown,
}

impl Interruption {
    fn when(self) -> &'static str {
        match self {
            Interruption::EngineStopped => "its engine stopped",
            Interruption::EngineLostTrack => "its engine lost track of it",
            Interruption::ShutDown => "Recourse was shut down",
        }
    }
}

impl HoldReason {
    const WAIT_CANCELLED: &'static str =
        "wait cancelled by you; retry now, skip to the next candidate, or stop";
    const STOPPED_BY_YOU: &'static str = "stopped by you";

    /// [`HoldReason::text`] with the way on as the route now has it: the
    /// candidate Skip now would run (`next`) by name, or, when none is
    /// left, no skip offered at all.
    pub fn text_then(&self, next: Option<&str>) -> Cow<'_, str> {
        let then = match next {
            Some(name) => format!("retry now, skip to “{name}”, or stop"),
            None => "retry now, or stop".to_string(),
        };
        match self {
            HoldReason::WaitCancelled => Cow::Owned(format!("wait cancelled by you; {then}")),
            HoldReason::CannotStart { cause } => Cow::Owned(Self::cannot_start(cause, &then)),
            other => other.text(),
        }
    }

    fn cannot_start(cause: &str, then: &str) -> String {
        format!(
            "{cause}. Install the program or set the candidate's Program to its full path \
             (Profiles), or fix the working directory; then {then}"
        )
    }

    /// The reason in words: what the route view shows.
    pub fn text(&self) -> Cow<'_, str> {
        match self {
            HoldReason::WaitCancelled => Cow::Borrowed(Self::WAIT_CANCELLED),
            HoldReason::StoppedByYou { .. } => Cow::Borrowed(Self::STOPPED_BY_YOU),
            HoldReason::UnsafeEffect {
                reason,
                not_continued,
            } => {
                let gate = ManualReason::UnsafeEffect { reason: *reason }.describe();
                Cow::Owned(match not_continued {
                    Some(why) => {
                        format!("{gate}; not continued automatically, as {}", why.describe())
                    }
                    None => gate,
                })
            }
            HoldReason::PolicyStop { reason } => Cow::Owned(reason.describe()),
            HoldReason::NoRecovery { reason } => Cow::Owned(reason.describe()),
            HoldReason::CannotStart { cause } => Cow::Owned(Self::cannot_start(
                cause,
                "retry now, or skip to the next candidate",
            )),
            HoldReason::Interrupted { attempt, cause } => Cow::Owned(format!(
                "attempt {attempt} was still running when {}; it may have done work, so it is \
                 not replayed automatically — check the workspace, then retry now, skip or stop",
                cause.when()
            )),
            HoldReason::Legacy { text } => Cow::Borrowed(text),
        }
    }

    /// The gate's refusal alone.
    pub fn gate(reason: UnsafeReason) -> HoldReason {
        HoldReason::UnsafeEffect {
            reason,
            not_continued: None,
        }
    }

    /// The reason a code stored before reasons were JSON stands for; `None`
    /// for a code this build does not know.
    pub fn from_code(code: &str) -> Option<HoldReason> {
        match code {
            "wait_cancelled" => Some(HoldReason::WaitCancelled),
            "stopped_by_you" => Some(HoldReason::StoppedByYou { risk: None }),
            _ => UnsafeReason::ALL
                .into_iter()
                .find(|r| r.code() == code)
                .map(HoldReason::gate),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_way_on_names_the_next_candidate_or_offers_no_skip_on_the_last() {
        let cannot = HoldReason::CannotStart {
            cause: "cannot start claude: not found on PATH".into(),
        };
        assert!(cannot
            .text_then(Some("Codex"))
            .ends_with("fix the working directory; then retry now, skip to “Codex”, or stop"));
        let last = cannot.text_then(None);
        assert!(
            last.ends_with("fix the working directory; then retry now, or stop"),
            "{last}"
        );
        assert!(
            !last.contains("skip"),
            "no skip is offered on the last candidate: {last}"
        );
        assert_eq!(
            HoldReason::WaitCancelled.text_then(None),
            "wait cancelled by you; retry now, or stop"
        );
        assert_eq!(
            HoldReason::WaitCancelled.text_then(Some("Gemini")),
            "wait cancelled by you; retry now, skip to “Gemini”, or stop"
        );
        let gate = HoldReason::gate(UnsafeReason::ALL[0]);
        assert_eq!(
            gate.text_then(None),
            gate.text(),
            "other reasons offer no way on"
        );
    }

    #[test]
    fn codes_stored_before_json_read_back_as_their_reason() {
        assert_eq!(
            HoldReason::from_code("wait_cancelled"),
            Some(HoldReason::WaitCancelled)
        );
        assert_eq!(
            HoldReason::from_code("stopped_by_you"),
            Some(HoldReason::StoppedByYou { risk: None })
        );
        for reason in UnsafeReason::ALL {
            assert_eq!(
                HoldReason::from_code(reason.code()),
                Some(HoldReason::gate(reason))
            );
        }
        assert_eq!(HoldReason::from_code("cancelled"), None, "unknown code");
    }

    #[test]
    fn every_reason_reads_back_from_its_json() {
        let reasons = [
            HoldReason::WaitCancelled,
            HoldReason::StoppedByYou { risk: None },
            HoldReason::StoppedByYou {
                risk: Some(super::super::RepeatRisk::StoppedWhileRunning { attempt: 2 }),
            },
            HoldReason::gate(UnsafeReason::ToolActivitySeen),
            HoldReason::UnsafeEffect {
                reason: UnsafeReason::ToolActivitySeen,
                not_continued: Some(NotContinued::Tools {
                    tools: crate::evaluator::ToolCalls::Refused,
                }),
            },
            HoldReason::PolicyStop {
                reason: StopReason::ExhaustedWithStop {
                    class: crate::classification::PolicyClass::Hard,
                },
            },
            HoldReason::NoRecovery {
                reason: ManualReason::Unclassified {
                    code: crate::classification::SemanticCode::SpawnFailed,
                },
            },
            HoldReason::CannotStart {
                cause: "cannot start claude: not found on PATH".into(),
            },
            HoldReason::Interrupted {
                attempt: 3,
                cause: Interruption::EngineStopped,
            },
            HoldReason::Legacy {
                text: "stopped by policy".into(),
            },
        ];
        for reason in reasons {
            let json = serde_json::to_string(&reason).unwrap();
            assert_eq!(
                serde_json::from_str::<HoldReason>(&json).unwrap(),
                reason,
                "{json}"
            );
        }
    }
}
