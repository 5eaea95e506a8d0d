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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classification::SemanticCode;
    use crate::evaluator::CandidateSlot;
    use crate::simulation::{preview, SimulatedFailure};
    use chrono::TimeZone;

    #[test]
    fn the_demo_preview_names_each_candidate_once_in_quotes_and_reads_as_a_sentence() {
        // The demo's names hold parentheses and colons of their own: bare,
        // "skip X for Y" could not be read.
        let slots: Vec<CandidateSlot> = demo_candidates()
            .iter()
            .map(|c| CandidateSlot {
                enabled: c.enabled,
                name: c.name.clone(),
                policy: c.policy.clone(),
                kind: Some(c.agent.kind),
            })
            .collect();
        let start = chrono::Utc.with_ymd_and_hms(2026, 3, 1, 12, 0, 0).unwrap();
        let failures = vec![SimulatedFailure::of(SemanticCode::ProviderOverloaded); 12];
        let texts: Vec<String> = preview(&slots, &failures, start)
            .steps
            .into_iter()
            .map(|s| s.text)
            .collect();
        let skips: Vec<&str> = texts
            .iter()
            .map(String::as_str)
            .filter(|t| t.contains("skip"))
            .collect();
        assert_eq!(
            skips,
            [
                "“Claude Code (simulated): usage limit, then \
                 overloaded” used up its transient retries and wait; skipping to “Codex (simulated): a tool ran, then the stream dropped”",
                "“Codex (simulated): a tool ran, then the stream \
                 dropped” used up its transient retries and wait; skipping to “Gemini CLI (simulated): succeeds”",
                "manual recovery: the transient policy says skip, but no candidate is left to skip \
                 to in this cycle",
            ],
            "each name whole in quotes; no “skip X for Y”"
        );
    }
}
