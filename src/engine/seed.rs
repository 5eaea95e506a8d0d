//! The demo profile seeded on first start: simulated candidates scripted so a
//! first run shows a reset wait, a skip, a retry countdown and a success with
//! no network and no API keys.

use crate::agent::{AgentSpec, SimStep};
use crate::policy::{CandidatePolicy, ClassPolicy, Exhausted};
use crate::profile::CandidateInput;

pub const DEMO_PROFILE: &str = "Demo (simulated)";

const WORK_MS: u32 = 1500;

/// Waits up to a minute for a reset, once; then skips.
fn waits_for_reset_then_skips() -> CandidatePolicy {
    CandidatePolicy::both(ClassPolicy::new(Some(60), None, Exhausted::Skip))
}

/// Retries transient failures three times from 2 s; stops on hard ones.
fn retries_then_stops() -> CandidatePolicy {
    CandidatePolicy {
        transient: ClassPolicy::new(None, Some((3, 2)), Exhausted::Skip),
        hard: ClassPolicy::new(Some(300), None, Exhausted::Stop),
    }
}

/// A simulated agent of its own named account, so the Accounts area names
/// each demo provider.
fn simulated(account: &str, script: Vec<SimStep>) -> AgentSpec {
    AgentSpec {
        account: Some(account.to_string()),
        ..AgentSpec::simulated(script)
    }
}

pub fn demo_candidates() -> Vec<CandidateInput> {
    vec![
        CandidateInput::new(
            "Claude (simulated): usage limit resets in 40 s",
            simulated(
                "Claude (simulated)",
                vec![SimStep::UsageLimit {
                    after_ms: WORK_MS,
                    resets_in_s: 40,
                }],
            ),
            waits_for_reset_then_skips(),
        ),
        CandidateInput::new(
            "Codex (simulated): 529 twice then succeed",
            simulated(
                "Codex (simulated)",
                vec![
                    SimStep::Overloaded { after_ms: WORK_MS },
                    SimStep::Overloaded { after_ms: WORK_MS },
                    SimStep::Succeed { after_ms: WORK_MS },
                ],
            ),
            retries_then_stops(),
        ),
        CandidateInput::new(
            "Gemini (simulated): tool ran then connection reset",
            simulated(
                "Gemini (simulated)",
                vec![SimStep::ToolThenReset { after_ms: WORK_MS }],
            ),
            retries_then_stops(),
        ),
    ]
}
