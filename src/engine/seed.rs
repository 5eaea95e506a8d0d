//! The demo profile seeded on first start: simulated candidates, each
//! failing in the words of the CLI it is named after, scripted so that a
//! run left alone walks through what Recourse is for: a trusted reset wait,
//! a retry countdown, a skip to the next candidate, and the safety gate
//! handing the route to you (Skip now then finishes it on the third
//! candidate). No network and no API keys.

use crate::agent::{AgentKind, AgentSpec, SimStep};
use crate::policy::{CandidatePolicy, ClassPolicy, Exhausted};
use crate::profile::CandidateInput;

pub const DEMO_PROFILE: &str = "Demo (simulated)";

const WORK_MS: u32 = 1500;

/// A simulated candidate failing as `like` does, on an account of its own
/// named after it, so the Accounts area names each demo provider.
fn simulating(like: AgentKind, script: Vec<SimStep>) -> AgentSpec {
    AgentSpec {
        simulates: Some(like),
        account: Some(format!("{} (simulated)", like.descriptor().label)),
        ..AgentSpec::simulated(script)
    }
}

/// Waits up to 2 min for a usage window to reset; retries a transient
/// failure once after 3 s; then skips.
fn waits_then_retries_then_skips() -> CandidatePolicy {
    CandidatePolicy::new(
        ClassPolicy::new(None, Some((1, 3)), Exhausted::Skip),
        ClassPolicy::new(Some(120), None, Exhausted::Skip),
    )
}

/// Retries transient failures three times from 2 s, then skips: the gate
/// overrides it when a tool already ran.
fn retries_then_skips() -> CandidatePolicy {
    CandidatePolicy::both(ClassPolicy::new(None, Some((3, 2)), Exhausted::Skip))
}

pub fn demo_candidates() -> Vec<CandidateInput> {
    vec![
        CandidateInput::new(
            "Claude Code (simulated): usage limit, then overloaded",
            simulating(
                AgentKind::ClaudeCode,
                vec![
                    SimStep::UsageLimit {
                        after_ms: WORK_MS,
                        resets_in_s: 30,
                    },
                    SimStep::Overloaded { after_ms: WORK_MS },
                ],
            ),
            waits_then_retries_then_skips(),
        ),
        CandidateInput::new(
            "Codex (simulated): a tool ran, then the stream dropped",
            simulating(
                AgentKind::Codex,
                vec![SimStep::ToolThenReset { after_ms: WORK_MS }],
            ),
            retries_then_skips(),
        ),
        CandidateInput::new(
            "Gemini CLI (simulated): succeeds",
            simulating(
                AgentKind::Gemini,
                vec![SimStep::Succeed { after_ms: WORK_MS }],
            ),
            retries_then_skips(),
        ),
    ]
}
