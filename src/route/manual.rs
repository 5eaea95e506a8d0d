//! A person's manual actions: who asked ([`Actor`]), the request the state
//! machine reads ([`Ask`]), the entry each action leaves in the route's
//! history ([`ActionRecord`], written in the same transaction as the
//! transition it causes), and the one rule for when sending work again may
//! repeat what an agent already did ([`RepeatRisk`]).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::{HoldReason, ManualAction, RouteState};
use crate::safety::UnsafeReason;

/// Who asked for a manual action.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum Actor {
    /// The desktop app.
    App,
    /// `recourse action` on the command line.
    Cli,
}

impl Actor {
    pub fn as_str(self) -> &'static str {
        match self {
            Actor::App => "app",
            Actor::Cli => "cli",
        }
    }

    /// `from the app`, `from the command line`.
    pub fn words(self) -> &'static str {
        match self {
            Actor::App => "from the app",
            Actor::Cli => "from the command line",
        }
    }
}

/// A person's request for `action` on a route as they saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ask {
    pub action: ManualAction,
    /// The generation the person saw; any other is refused as stale.
    pub expected_generation: u32,
    pub by: Actor,
    /// The person was told the route's [`RepeatRisk`] and still wants an
    /// action that sends work again. Without it such an action is refused.
    pub accepts_repeat: bool,
}

impl Ask {
    /// `action` as seen at `expected_generation`, by `by`, no repeat risk
    /// accepted.
    pub fn new(action: ManualAction, expected_generation: u32, by: Actor) -> Ask {
        Ask {
            action,
            expected_generation,
            by,
            accepts_repeat: false,
        }
    }

    /// The same request, the person having accepted that it may repeat work.
    pub fn accepting_repeat(self) -> Ask {
        Ask {
            accepts_repeat: true,
            ..self
        }
    }
}

/// Why sending work again (retry, skip, resume) may repeat what an agent
/// already did. The one rule the app's question, the CLI's `--yes` and the
/// state machine's refusal all read ([`HoldReason::repeat_risk`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum RepeatRisk {
    /// The safety gate refused automatic recovery of the failed attempt.
    Gate { reason: UnsafeReason },
    /// A person stopped attempt `attempt` while its agent ran: it may have
    /// run tools or written output before it was killed.
    StoppedWhileRunning { attempt: u32 },
    /// Attempt `attempt` was still running when its engine went away.
    Interrupted { attempt: u32 },
}

impl RepeatRisk {
    /// Why, in words: "attempt 3 was stopped while its agent ran, …".
    pub fn text(&self) -> String {
        match self {
            RepeatRisk::Gate { reason } => format!(
                "the safety gate refused automatic recovery — {}",
                reason.describe()
            ),
            RepeatRisk::StoppedWhileRunning { attempt } => format!(
                "attempt {attempt} was stopped while its agent ran, so it may already have run \
                 tools or changed files"
            ),
            RepeatRisk::Interrupted { attempt } => format!(
                "attempt {attempt} was still running when its engine went away, so it may \
                 already have run tools or changed files"
            ),
        }
    }
}

impl HoldReason {
    /// Why sending work again from this hold may repeat work; `None` when
    /// the failure was safe to replay (or nothing ran).
    pub fn repeat_risk(&self) -> Option<RepeatRisk> {
        match self {
            HoldReason::UnsafeEffect { reason, .. } => Some(RepeatRisk::Gate { reason: *reason }),
            HoldReason::Interrupted { attempt, .. } => {
                Some(RepeatRisk::Interrupted { attempt: *attempt })
            }
            HoldReason::StoppedByYou { risk } => risk.clone(),
            HoldReason::WaitCancelled
            | HoldReason::PolicyStop { .. }
            | HoldReason::NoRecovery { .. }
            | HoldReason::CannotStart { .. }
            | HoldReason::Legacy { .. } => None,
        }
    }
}

/// What a manual action led to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum LedTo {
    /// It started attempt `attempt` on candidate `candidate_index`.
    Dispatched {
        attempt: u32,
        candidate_index: u32,
        candidate_name: String,
    },
    /// No agent started: a limit mark, a full account or a pause held the
    /// dispatch, and the route went to `state` instead.
    NotDispatched {
        state: RouteState,
        candidate_index: u32,
        candidate_name: String,
    },
    /// The pending wait, retry or place in the queue (`was`, due at
    /// `deadline`) was cancelled; the route waits for a person.
    WaitCancelled {
        was: RouteState,
        deadline: Option<DateTime<Utc>>,
    },
    /// The route stopped; `killed` is the attempt whose agent was stopped.
    Stopped { killed: Option<u32> },
}

/// One manual action in a route's history.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ActionRecord {
    pub action: ManualAction,
    pub by: Actor,
    pub at: DateTime<Utc>,
    /// The state the route was in when the person acted.
    pub from: RouteState,
    pub led_to: LedTo,
    /// The risk of repeating work the person accepted, when there was one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accepted: Option<RepeatRisk>,
}

impl ActionRecord {
    /// What it led to, in the history's words (absolute RFC 3339 instants,
    /// as the attempt history writes decisions).
    pub fn text(&self) -> String {
        let led = match &self.led_to {
            LedTo::Dispatched {
                attempt,
                candidate_index,
                candidate_name,
            } => format!(
                "started attempt {attempt} on {candidate_name} (candidate {})",
                candidate_index + 1
            ),
            LedTo::NotDispatched {
                state,
                candidate_index,
                candidate_name,
            } => format!(
                "no agent started on {candidate_name} (candidate {}): the route {}",
                candidate_index + 1,
                state.after_the_route()
            ),
            LedTo::WaitCancelled { was, deadline } => {
                let what = match was {
                    RouteState::WaitingReset => "the wait for the provider's reset",
                    RouteState::Queued => "the place in the queue",
                    _ => "the scheduled retry",
                };
                match deadline {
                    Some(at) => format!(
                        "cancelled {what} due {}; the route waits for you",
                        at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
                    ),
                    None => format!("cancelled {what}; the route waits for you"),
                }
            }
            LedTo::Stopped { killed: Some(n) } => {
                format!("stopped the route and the agent of attempt {n}")
            }
            LedTo::Stopped { killed: None } => "stopped the route".to_string(),
        };
        match &self.accepted {
            Some(risk) => format!(
                "{led}, after you confirmed it may repeat work ({})",
                risk.text()
            ),
            None => led,
        }
    }

    /// The attempt it started, if it did.
    pub fn dispatched(&self) -> Option<u32> {
        match self.led_to {
            LedTo::Dispatched { attempt, .. } => Some(attempt),
            LedTo::NotDispatched { .. } | LedTo::WaitCancelled { .. } | LedTo::Stopped { .. } => {
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn at() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 12, 2, 12, 0, 0).unwrap()
    }

    #[test]
    fn every_record_reads_back_from_its_json_and_says_what_it_led_to() {
        let records = [
            (
                ActionRecord {
                    action: ManualAction::RetryNow,
                    by: Actor::App,
                    at: at(),
                    from: RouteState::NeedsManual,
                    led_to: LedTo::Dispatched {
                        attempt: 4,
                        candidate_index: 0,
                        candidate_name: "Claude".into(),
                    },
                    accepted: Some(RepeatRisk::StoppedWhileRunning { attempt: 3 }),
                },
                "started attempt 4 on Claude (candidate 1), after you confirmed it may repeat \
                 work (attempt 3 was stopped while its agent ran, so it may already have run \
                 tools or changed files)",
            ),
            (
                ActionRecord {
                    action: ManualAction::CancelWait,
                    by: Actor::Cli,
                    at: at(),
                    from: RouteState::WaitingReset,
                    led_to: LedTo::WaitCancelled {
                        was: RouteState::WaitingReset,
                        deadline: Some(at()),
                    },
                    accepted: None,
                },
                "cancelled the wait for the provider's reset due 2026-12-02T12:00:00Z; the route \
                 waits for you",
            ),
            (
                ActionRecord {
                    action: ManualAction::Stop,
                    by: Actor::App,
                    at: at(),
                    from: RouteState::Running,
                    led_to: LedTo::Stopped { killed: Some(3) },
                    accepted: None,
                },
                "stopped the route and the agent of attempt 3",
            ),
            (
                ActionRecord {
                    action: ManualAction::SkipNow,
                    by: Actor::Cli,
                    at: at(),
                    from: RouteState::Queued,
                    led_to: LedTo::NotDispatched {
                        state: RouteState::Queued,
                        candidate_index: 1,
                        candidate_name: "Codex".into(),
                    },
                    accepted: None,
                },
                "no agent started on Codex (candidate 2): the route is queued for a free slot",
            ),
        ];
        for (record, text) in records {
            let json = serde_json::to_string(&record).unwrap();
            let back: ActionRecord = serde_json::from_str(&json).unwrap();
            assert_eq!(back, record, "{json}");
            assert_eq!(record.text(), text);
        }
    }

    #[test]
    fn only_holds_after_work_may_have_been_done_carry_a_repeat_risk() {
        let gate = HoldReason::gate(UnsafeReason::ToolActivitySeen);
        assert_eq!(
            gate.repeat_risk(),
            Some(RepeatRisk::Gate {
                reason: UnsafeReason::ToolActivitySeen
            })
        );
        let stopped = HoldReason::StoppedByYou {
            risk: Some(RepeatRisk::StoppedWhileRunning { attempt: 2 }),
        };
        assert!(stopped.repeat_risk().is_some(), "stopped while it ran");
        assert_eq!(
            HoldReason::StoppedByYou { risk: None }.repeat_risk(),
            None,
            "stopped while nothing ran"
        );
        assert_eq!(HoldReason::WaitCancelled.repeat_risk(), None);
    }
}
