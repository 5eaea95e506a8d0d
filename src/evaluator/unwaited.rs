//! Why a decision did not wait for the provider's own reset time, so a
//! preview that retries in 3 s after "retry after 12 s" says why.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::{CandidateSlot, Decision, RouteCycle, Wording};
use crate::classification::PolicyClass;

/// A trusted provider reset the decision passed over, and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct UnwaitedReset {
    pub class: PolicyClass,
    pub at: DateTime<Utc>,
    pub why: NotWaited,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum NotWaited {
    /// The class's reset wait is off.
    Off,
    /// The class's one reset wait of this route cycle was used.
    Used,
    /// Further away than the longest wait.
    TooFar { max_wait_seconds: u32 },
}

impl UnwaitedReset {
    /// `the provider's reset at +12 s is not waited for, as the transient reset wait is off`.
    pub fn describe(&self, words: &impl Wording) -> String {
        let class = self.class.as_str();
        let why = match self.why {
            NotWaited::Off => format!("the {class} reset wait is off"),
            NotWaited::Used => {
                format!("the {class} reset wait was used once already in this cycle")
            }
            NotWaited::TooFar { max_wait_seconds } => format!(
                "it is further away than the longest {class} wait ({})",
                words.delay(max_wait_seconds)
            ),
        };
        format!(
            "the provider's reset at {} is not waited for, as {why}",
            words.instant(self.at)
        )
    }
}

/// The provider reset `decision` did not wait for: a future `reset_at`
/// before which the candidate is retried.
pub fn unwaited_reset(
    cycle: &RouteCycle,
    decision: &Decision,
    reset_at: Option<DateTime<Utc>>,
    candidates: &[CandidateSlot],
    now: DateTime<Utc>,
) -> Option<UnwaitedReset> {
    let at = reset_at.filter(|at| *at > now)?;
    // A skip or stop already says the waits are used up; a retry sooner
    // than the provider said is what surprises.
    let Decision::Retry { class, .. } = decision else {
        return None;
    };
    let class = *class;
    let wait = candidates
        .get(cycle.current as usize)?
        .policy
        .section(class)
        .wait_for_reset;
    let why = if !wait.enabled {
        NotWaited::Off
    } else if cycle.usage_of(cycle.current, class).reset_wait_used {
        NotWaited::Used
    } else {
        NotWaited::TooFar {
            max_wait_seconds: wait.max_wait_seconds,
        }
    };
    Some(UnwaitedReset { class, at, why })
}
