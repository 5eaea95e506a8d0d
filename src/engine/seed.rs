//! The demo profile seeded on first start: simulated candidates scripted so a
//! first run shows a reset wait, a skip, a retry countdown and a success with
//! no network and no API keys.

use super::pipeline::{build_policy, PendingOutcome, SectionSpec};
use super::{AgentSpec, CandidateInput, SimStep};

pub const DEMO_PROFILE: &str = "Demo (simulated)";

const WORK_MS: u32 = 1500;

/// Waits up to a minute for a reset, once; then skips.
fn waits_for_reset_then_skips() -> super::pipeline::CandidatePolicy {
    let section = SectionSpec {
        reset_wait_max_s: Some(60),
        retry: None,
        exhausted: PendingOutcome::Skip,
    };
    build_policy(section, section)
}

/// Retries transient failures three times from 2 s; stops on hard ones.
fn retries_then_stops() -> super::pipeline::CandidatePolicy {
    build_policy(
        SectionSpec {
            reset_wait_max_s: None,
            retry: Some((3, 2)),
            exhausted: PendingOutcome::Skip,
        },
        SectionSpec {
            reset_wait_max_s: Some(300),
            retry: None,
            exhausted: PendingOutcome::Stop,
        },
    )
}

pub fn demo_candidates() -> Vec<CandidateInput> {
    vec![
        CandidateInput::new(
            "Claude (simulated): usage limit resets in 40 s",
            AgentSpec::simulated(vec![SimStep::UsageLimit {
                after_ms: WORK_MS,
                resets_in_s: 40,
            }]),
            waits_for_reset_then_skips(),
        ),
        CandidateInput::new(
            "Codex (simulated): 529 twice then succeed",
            AgentSpec::simulated(vec![
                SimStep::Overloaded { after_ms: WORK_MS },
                SimStep::Overloaded { after_ms: WORK_MS },
                SimStep::Succeed { after_ms: WORK_MS },
            ]),
            retries_then_stops(),
        ),
        CandidateInput::new(
            "Gemini (simulated): tool ran then connection reset",
            AgentSpec::simulated(vec![SimStep::ToolThenReset { after_ms: WORK_MS }]),
            retries_then_stops(),
        ),
    ]
}
