//! Where a route is, what a person can do to it, and how an attempt ended.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use crate::evaluator::ManualReason;
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

/// Why a route waits for a person (`NeedsManual` or `Stopped`).
///
/// The manual actions' own reasons are variants, so the machine can tell a
/// cancelled wait from any other manual state without comparing sentences.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HoldReason {
    /// A person cancelled the pending wait or retry.
    WaitCancelled,
    /// A person stopped the route.
    StoppedByYou,
    /// The effect-safety gate refused automatic recovery: the failed
    /// attempt may have done work, so running it again may repeat it.
    UnsafeEffect(UnsafeReason),
    /// Why automatic recovery ended, in words: the evaluator's decision, or
    /// an attempt found interrupted.
    Explained(String),
}

impl HoldReason {
    const WAIT_CANCELLED: &'static str =
        "wait cancelled by you; retry now, skip to the next candidate, or stop";
    const STOPPED_BY_YOU: &'static str = "stopped by you";

    /// The reason in words: what the route view shows.
    pub fn text(&self) -> Cow<'_, str> {
        match self {
            HoldReason::WaitCancelled => Cow::Borrowed(Self::WAIT_CANCELLED),
            HoldReason::StoppedByYou => Cow::Borrowed(Self::STOPPED_BY_YOU),
            HoldReason::UnsafeEffect(reason) => {
                Cow::Owned(ManualReason::UnsafeEffect { reason: *reason }.describe())
            }
            HoldReason::Explained(text) => Cow::Borrowed(text),
        }
    }

    /// The stable code a reason the machine or the UI acts on is stored
    /// under; `None` for one that is only words. Codes never change: stored
    /// rows are read back by them, whatever the words become.
    pub fn code(&self) -> Option<&'static str> {
        match self {
            HoldReason::WaitCancelled => Some("wait_cancelled"),
            HoldReason::StoppedByYou => Some("stopped_by_you"),
            HoldReason::UnsafeEffect(reason) => Some(reason.code()),
            HoldReason::Explained(_) => None,
        }
    }

    /// The reason a stored code stands for; the inverse of
    /// [`HoldReason::code`]. `None` for a code this build does not know.
    pub fn from_code(code: &str) -> Option<HoldReason> {
        [HoldReason::WaitCancelled, HoldReason::StoppedByYou]
            .into_iter()
            .chain(UnsafeReason::ALL.map(HoldReason::UnsafeEffect))
            .find(|reason| reason.code() == Some(code))
    }
}

#[cfg(test)]
mod tests {
    use super::HoldReason;
    use crate::safety::UnsafeReason;

    #[test]
    fn coded_hold_reasons_read_back_from_their_code() {
        let unsafe_effects = UnsafeReason::ALL.map(HoldReason::UnsafeEffect);
        for reason in [HoldReason::WaitCancelled, HoldReason::StoppedByYou]
            .into_iter()
            .chain(unsafe_effects)
        {
            let code = reason
                .code()
                .expect("a reason the machine acts on has a code");
            assert_eq!(HoldReason::from_code(code), Some(reason));
        }
    }

    #[test]
    fn an_explained_reason_has_no_code_even_with_a_variants_words() {
        let lookalike = HoldReason::Explained(HoldReason::WaitCancelled.text().to_string());
        assert_eq!(
            lookalike.code(),
            None,
            "words that read like a cancelled wait are still only words"
        );
        assert_eq!(HoldReason::from_code("cancelled"), None, "unknown code");
    }
}
