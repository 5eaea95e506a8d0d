//! The built-in simulated provider: plays one [`SimStep`] per attempt with
//! the evidence a real provider would give, no process and no network.
//! Evidence is labelled `simulated`; the catalogue matches it against every
//! provider's rules, so each step classifies as the real failure would.

use std::collections::BTreeMap;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::{Launch, RunReport};
use crate::agent::kinds::{usage_limit_words, SimulatedWords};
use crate::agent::{SimStep, ToolStatus, Transcript};
use crate::evidence::{Phase, Provider, RawEvidence};
use crate::safety::{EffectContext, PromptDelivery};

pub(super) async fn run(launch: &Launch, cancel: CancellationToken) -> (RunReport, Transcript) {
    let Some(step) = step_for(&launch.agent.script, launch.step) else {
        return (RunReport::Succeeded, transcript(None));
    };
    let work = Duration::from_millis(u64::from(step.after_ms()));
    tokio::select! {
        () = cancel.cancelled() => (RunReport::Killed, Transcript::default()),
        () = tokio::time::sleep(work) => (report(step, launch), transcript(Some(step))),
    }
}

/// What the simulated agent says it did: an answer when it succeeds, the
/// tool that ran before a reset. Its words say they are simulated.
fn transcript(step: Option<&SimStep>) -> Transcript {
    let mut t = Transcript::default();
    t.model("simulated");
    match step {
        None | Some(SimStep::Succeed { .. }) => {
            t.say("(simulated) The task is done.", false);
            t.answer("(simulated) The task is done.");
        }
        Some(SimStep::ToolThenReset { .. }) => {
            t.say("(simulated) Let me look at the files first.", false);
            let input = serde_json::json!({"command": "ls (simulated)"});
            t.tool("sim-1", "Bash", Some(&input), ToolStatus::Completed);
        }
        Some(
            SimStep::Overloaded { .. }
            | SimStep::RateLimited { .. }
            | SimStep::UsageLimit { .. }
            | SimStep::Unrecognised { .. },
        ) => {}
    }
    t
}

/// Attempt N plays step N; the last step repeats. An empty script succeeds.
fn step_for(script: &[SimStep], step: u32) -> Option<&SimStep> {
    script.get(step as usize).or(script.last())
}

fn report(step: &SimStep, launch: &Launch) -> RunReport {
    let now = launch.clock.now();
    let evidence = |message: String| {
        RawEvidence::new(Provider::Simulated, message, now)
            .with_phase(Phase::Request)
            .with_exit_code(1)
    };
    let like = launch.agent.simulates;
    let words = SimulatedWords::of(like);
    let (raw, effect) = match step {
        SimStep::Succeed { .. } => return RunReport::Succeeded,
        SimStep::Overloaded { .. } => (
            evidence(words.overloaded.to_string())
                .with_http_status(words.overloaded_status)
                .with_error_type(words.overloaded_type.map(str::to_string)),
            EffectContext::not_delivered(),
        ),
        SimStep::RateLimited { retry_after_s, .. } => (
            evidence(
                words
                    .rate_limited
                    .replace("{s}", &retry_after_s.to_string()),
            )
            .with_http_status(429)
            .with_error_type(words.rate_limited_type.map(str::to_string))
            .with_headers(BTreeMap::from([(
                "retry-after".to_string(),
                retry_after_s.to_string(),
            )])),
            EffectContext::not_delivered(),
        ),
        SimStep::UsageLimit { resets_in_s, .. } => (
            evidence(usage_limit_words(like, now, *resets_in_s)),
            EffectContext::not_delivered(),
        ),
        SimStep::ToolThenReset { .. } => (
            evidence(words.connection_reset.to_string()).with_phase(Phase::Stream),
            after_tool_use(),
        ),
        SimStep::Unrecognised { message, .. } => {
            (evidence(message.clone()), EffectContext::not_delivered())
        }
    };
    RunReport::Failed { raw, effect }
}

fn after_tool_use() -> EffectContext {
    EffectContext {
        prompt_delivery: Some(PromptDelivery::Confirmed),
        assistant_output_seen: Some(true),
        tool_activity_seen: Some(true),
        partial_result_seen: Some(false),
        evidence_current: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::{AgentKind, AgentSpec};
    use crate::classification::SemanticCode;
    use crate::clock::Clock;
    use crate::evidence::Evidence;

    fn play(
        step: SimStep,
    ) -> (
        SemanticCode,
        Option<chrono::DateTime<chrono::Utc>>,
        EffectContext,
    ) {
        play_like(None, step)
    }

    fn play_like(
        like: Option<AgentKind>,
        step: SimStep,
    ) -> (
        SemanticCode,
        Option<chrono::DateTime<chrono::Utc>>,
        EffectContext,
    ) {
        let launch = Launch {
            agent: AgentSpec {
                simulates: like,
                ..AgentSpec::simulated(vec![step.clone()])
            },
            prompt: "p".into(),
            cwd: None,
            step: 0,
            clock: Clock::start(),
            spawned: None,
            progress: None,
            answered: None,
            resume: None,
        };
        match report(&step, &launch) {
            RunReport::Failed { raw, effect } => {
                let c = crate::catalogue::classify(&Evidence::from_raw(raw), chrono_tz::UTC);
                (c.code, c.reset_at, effect)
            }
            other => panic!("{step:?} fails, got {other:?}"),
        }
    }

    #[test]
    fn scripted_failures_classify_as_the_real_ones_would() {
        let (code, _, effect) = play(SimStep::Overloaded { after_ms: 0 });
        assert_eq!(code, SemanticCode::ProviderOverloaded);
        assert_eq!(effect, EffectContext::not_delivered());
        let (code, _, _) = play(SimStep::RateLimited {
            after_ms: 0,
            retry_after_s: 12,
        });
        assert_eq!(code, SemanticCode::RateLimited);
        let (code, reset_at, _) = play(SimStep::UsageLimit {
            after_ms: 0,
            resets_in_s: 40,
        });
        assert_eq!(code, SemanticCode::UsageLimitReached);
        assert!(reset_at.is_some(), "the reset instant is trusted");
        let (code, _, effect) = play(SimStep::ToolThenReset { after_ms: 0 });
        assert_eq!(code, SemanticCode::NetworkReset);
        assert_eq!(effect.tool_activity_seen, Some(true), "not safe to replay");
        let (code, _, _) = play(SimStep::Unrecognised {
            after_ms: 0,
            message: "the flux capacitor is out of sync".into(),
        });
        assert_eq!(code, SemanticCode::Unknown);
    }

    #[test]
    fn each_cli_s_words_classify_as_that_cli_s_failure_would() {
        for like in [AgentKind::Codex, AgentKind::Gemini, AgentKind::Opencode] {
            let at = |step| play_like(Some(like), step);
            let (code, _, _) = at(SimStep::Overloaded { after_ms: 0 });
            assert_eq!(
                code.class(),
                crate::classification::Class::Transient,
                "{like:?}: {code:?}"
            );
            let (code, _, _) = at(SimStep::RateLimited {
                after_ms: 0,
                retry_after_s: 12,
            });
            assert_eq!(code, SemanticCode::RateLimited, "{like:?}");
            let (code, reset_at, _) = at(SimStep::UsageLimit {
                after_ms: 0,
                resets_in_s: 40,
            });
            assert_eq!(code, SemanticCode::UsageLimitReached, "{like:?}");
            let reset = reset_at.unwrap_or_else(|| panic!("{like:?}: a trusted reset"));
            let ahead = (reset - chrono::Utc::now()).num_seconds();
            assert!(
                (30..=120).contains(&ahead),
                "{like:?}: reset {ahead} s ahead"
            );
            let (code, _, effect) = at(SimStep::ToolThenReset { after_ms: 0 });
            assert_eq!(
                code.class(),
                crate::classification::Class::Transient,
                "{like:?}: {code:?}"
            );
            assert_eq!(effect.tool_activity_seen, Some(true), "{like:?}");
        }
    }

    #[test]
    fn last_step_repeats_and_empty_script_succeeds() {
        let script = vec![
            SimStep::Overloaded { after_ms: 1 },
            SimStep::Succeed { after_ms: 1 },
        ];
        assert_eq!(step_for(&script, 0), Some(&script[0]));
        assert_eq!(step_for(&script, 5), Some(&script[1]), "last step repeats");
        assert_eq!(step_for(&[], 0), None);
    }
}
