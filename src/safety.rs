//! The effect-safety gate: may this failure be recovered automatically at all?
//!
//! Runs before policy and cannot be overridden by it. Missing knowledge
//! counts as unsafe.

use serde::{Deserialize, Serialize};

/// Was the prompt known to reach the agent?
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum PromptDelivery {
    /// Failed before the prompt could have been delivered (spawn, connect, HTTP error before streaming).
    NotDelivered,
    /// Delivered and the failure boundary is known.
    Confirmed,
    /// We cannot tell whether the agent received and acted on it.
    Ambiguous,
}

/// What the failed attempt is known to have done before it failed. Each
/// `Option` is `None` when the adapter could not tell; unknown fails closed.
/// Unknown keys are refused: a misspelt `tool_activity_seen` in a failure
/// file would otherwise leave the fact unset without a word.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(deny_unknown_fields)]
pub struct EffectContext {
    pub prompt_delivery: Option<PromptDelivery>,
    /// Any assistant output, thinking included.
    pub assistant_output_seen: Option<bool>,
    pub tool_activity_seen: Option<bool>,
    pub partial_result_seen: Option<bool>,
    /// Evidence generation and invocation match the route's current ones.
    pub evidence_current: Option<bool>,
}

impl EffectContext {
    /// What a runner reports for a failure before the prompt went out:
    /// nothing delivered, nothing seen. Whether the evidence is current is
    /// left unknown; only the engine, which knows the route's generation,
    /// can say.
    pub fn not_delivered() -> EffectContext {
        EffectContext {
            prompt_delivery: Some(PromptDelivery::NotDelivered),
            assistant_output_seen: Some(false),
            tool_activity_seen: Some(false),
            partial_result_seen: Some(false),
            evidence_current: None,
        }
    }

    /// A failure of a program whose stream tells nothing about effects (any
    /// command) once it has started: it had the prompt and may have acted
    /// on it. `output_seen`: it printed something.
    pub fn unknown(output_seen: bool) -> EffectContext {
        EffectContext {
            prompt_delivery: Some(PromptDelivery::Ambiguous),
            assistant_output_seen: Some(output_seen),
            tool_activity_seen: None,
            partial_result_seen: None,
            evidence_current: None,
        }
    }

    /// Nothing known: what an attempt that was stopped or lost its engine
    /// leaves, which fails closed.
    pub fn nothing_known() -> EffectContext {
        EffectContext {
            prompt_delivery: None,
            assistant_output_seen: None,
            tool_activity_seen: None,
            partial_result_seen: None,
            evidence_current: None,
        }
    }

    /// A failure known to be effect-safe: nothing delivered, nothing seen,
    /// evidence current. What a simulated clean provider failure looks like.
    pub fn effect_safe() -> EffectContext {
        EffectContext {
            evidence_current: Some(true),
            ..EffectContext::not_delivered()
        }
    }

    /// What a session had done by this attempt's failure: its facts with
    /// `earlier`'s, those of the attempts whose session it continued. A
    /// continuation resumes a conversation that already holds their work,
    /// so the gate judges the session: sending the prompt afresh after a
    /// continuation that failed cleanly would still repeat what came
    /// before it. Something seen in either was seen; unknown in either and
    /// seen in neither is unknown. Currency is this attempt's evidence's.
    pub fn with_earlier(&self, earlier: &EffectContext) -> EffectContext {
        EffectContext {
            prompt_delivery: worse_delivery(self.prompt_delivery, earlier.prompt_delivery),
            assistant_output_seen: either(
                self.assistant_output_seen,
                earlier.assistant_output_seen,
            ),
            tool_activity_seen: either(self.tool_activity_seen, earlier.tool_activity_seen),
            partial_result_seen: either(self.partial_result_seen, earlier.partial_result_seen),
            evidence_current: self.evidence_current,
        }
    }
}

/// Seen in either: seen; unknown in either: unknown; else not seen.
fn either(a: Option<bool>, b: Option<bool>) -> Option<bool> {
    match (a, b) {
        (Some(true), _) | (_, Some(true)) => Some(true),
        (Some(false), Some(false)) => Some(false),
        (None, _) | (_, None) => None,
    }
}

/// The delivery the gate trusts less: unknown, then ambiguous, then confirmed.
fn worse_delivery(a: Option<PromptDelivery>, b: Option<PromptDelivery>) -> Option<PromptDelivery> {
    let rank = |d: Option<PromptDelivery>| match d {
        None => 3,
        Some(PromptDelivery::Ambiguous) => 2,
        Some(PromptDelivery::Confirmed) => 1,
        Some(PromptDelivery::NotDelivered) => 0,
    };
    if rank(a) >= rank(b) {
        a
    } else {
        b
    }
}

/// Why automatic recovery is not allowed for a failed attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum UnsafeReason {
    /// The evidence belongs to an older generation or another invocation.
    StaleEvidence,
    EvidenceCurrencyUnknown,
    AmbiguousPromptDelivery,
    PromptDeliveryUnknown,
    AssistantOutputSeen,
    AssistantOutputUnknown,
    ToolActivitySeen,
    ToolActivityUnknown,
    PartialResultSeen,
    PartialResultUnknown,
}

impl UnsafeReason {
    pub const ALL: [UnsafeReason; 10] = [
        UnsafeReason::StaleEvidence,
        UnsafeReason::EvidenceCurrencyUnknown,
        UnsafeReason::AmbiguousPromptDelivery,
        UnsafeReason::PromptDeliveryUnknown,
        UnsafeReason::AssistantOutputSeen,
        UnsafeReason::AssistantOutputUnknown,
        UnsafeReason::ToolActivitySeen,
        UnsafeReason::ToolActivityUnknown,
        UnsafeReason::PartialResultSeen,
        UnsafeReason::PartialResultUnknown,
    ];

    /// The stable code a route held for this reason is stored under.
    pub fn code(self) -> &'static str {
        use UnsafeReason::*;
        match self {
            StaleEvidence => "unsafe_effect.stale_evidence",
            EvidenceCurrencyUnknown => "unsafe_effect.evidence_currency_unknown",
            AmbiguousPromptDelivery => "unsafe_effect.ambiguous_prompt_delivery",
            PromptDeliveryUnknown => "unsafe_effect.prompt_delivery_unknown",
            AssistantOutputSeen => "unsafe_effect.assistant_output_seen",
            AssistantOutputUnknown => "unsafe_effect.assistant_output_unknown",
            ToolActivitySeen => "unsafe_effect.tool_activity_seen",
            ToolActivityUnknown => "unsafe_effect.tool_activity_unknown",
            PartialResultSeen => "unsafe_effect.partial_result_seen",
            PartialResultUnknown => "unsafe_effect.partial_result_unknown",
        }
    }

    /// One sentence a person can read.
    pub fn describe(self) -> &'static str {
        use UnsafeReason::*;
        match self {
            StaleEvidence => "the failure evidence is stale, from an older generation or another invocation",
            EvidenceCurrencyUnknown => "unknown whether the failure evidence belongs to the current generation and invocation",
            AmbiguousPromptDelivery => "prompt delivery is ambiguous; the agent may have received and acted on it",
            PromptDeliveryUnknown => "unknown whether the prompt was delivered",
            AssistantOutputSeen => "assistant output (thinking included) was seen before the failure",
            AssistantOutputUnknown => "unknown whether assistant output was seen before the failure",
            ToolActivitySeen => "a tool call or tool effect was seen before the failure",
            ToolActivityUnknown => "unknown whether a tool call or tool effect happened before the failure",
            PartialResultSeen => "a partial result was produced before the failure",
            PartialResultUnknown => "unknown whether a partial result was produced before the failure",
        }
    }
}

impl std::fmt::Display for UnsafeReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.describe())
    }
}

/// The gate's answer. No policy setting can turn `Manual` into `Allowed`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum GateVerdict {
    Allowed,
    Manual(UnsafeReason),
}

/// Decides whether automatic recovery (wait, retry, skip) is allowed.
/// Checks run in a fixed order and the first failing one is reported;
/// any unknown (`None`) fact fails closed.
pub fn gate(ctx: &EffectContext) -> GateVerdict {
    match first_unsafe_reason(ctx) {
        Some(reason) => GateVerdict::Manual(reason),
        None => GateVerdict::Allowed,
    }
}

/// Stale evidence, then the prompt's delivery, then what the agent did: a
/// thing seen before a thing unknown, and of those the one with the widest
/// reach first (a tool acts outside the conversation, a partial result is
/// work handed back, output is words). An agent that wrote a line and then
/// ran a tool is held because the tool ran: that is what a person must
/// check, and what the reason says.
fn first_unsafe_reason(ctx: &EffectContext) -> Option<UnsafeReason> {
    use UnsafeReason::*;
    let flags = [
        (
            ctx.tool_activity_seen,
            ToolActivitySeen,
            ToolActivityUnknown,
        ),
        (
            ctx.partial_result_seen,
            PartialResultSeen,
            PartialResultUnknown,
        ),
        (
            ctx.assistant_output_seen,
            AssistantOutputSeen,
            AssistantOutputUnknown,
        ),
    ];
    let seen = flags
        .iter()
        .find_map(|(seen, when_seen, _)| (*seen == Some(true)).then_some(*when_seen));
    let unknown = flags
        .iter()
        .find_map(|(seen, _, when_unknown)| seen.is_none().then_some(*when_unknown));
    evidence_reason(ctx.evidence_current)
        .or_else(|| delivery_reason(ctx.prompt_delivery))
        .or(seen)
        .or(unknown)
}

fn evidence_reason(current: Option<bool>) -> Option<UnsafeReason> {
    match current {
        Some(true) => None,
        Some(false) => Some(UnsafeReason::StaleEvidence),
        None => Some(UnsafeReason::EvidenceCurrencyUnknown),
    }
}

fn delivery_reason(delivery: Option<PromptDelivery>) -> Option<UnsafeReason> {
    match delivery {
        Some(PromptDelivery::NotDelivered | PromptDelivery::Confirmed) => None,
        Some(PromptDelivery::Ambiguous) => Some(UnsafeReason::AmbiguousPromptDelivery),
        None => Some(UnsafeReason::PromptDeliveryUnknown),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn effect_safe_context_is_allowed() {
        assert_eq!(gate(&EffectContext::effect_safe()), GateVerdict::Allowed);
        let confirmed = EffectContext {
            prompt_delivery: Some(PromptDelivery::Confirmed),
            ..EffectContext::effect_safe()
        };
        assert_eq!(
            gate(&confirmed),
            GateVerdict::Allowed,
            "a confirmed delivery with a known clean boundary is safe"
        );
    }

    #[test]
    fn each_unsafe_fact_yields_its_own_reason() {
        use UnsafeReason::*;
        let safe = EffectContext::effect_safe();
        let cases = [
            (
                EffectContext {
                    evidence_current: Some(false),
                    ..safe.clone()
                },
                StaleEvidence,
            ),
            (
                EffectContext {
                    evidence_current: None,
                    ..safe.clone()
                },
                EvidenceCurrencyUnknown,
            ),
            (
                EffectContext {
                    prompt_delivery: Some(PromptDelivery::Ambiguous),
                    ..safe.clone()
                },
                AmbiguousPromptDelivery,
            ),
            (
                EffectContext {
                    prompt_delivery: None,
                    ..safe.clone()
                },
                PromptDeliveryUnknown,
            ),
            (
                EffectContext {
                    assistant_output_seen: Some(true),
                    ..safe.clone()
                },
                AssistantOutputSeen,
            ),
            (
                EffectContext {
                    assistant_output_seen: None,
                    ..safe.clone()
                },
                AssistantOutputUnknown,
            ),
            (
                EffectContext {
                    tool_activity_seen: Some(true),
                    ..safe.clone()
                },
                ToolActivitySeen,
            ),
            (
                EffectContext {
                    tool_activity_seen: None,
                    ..safe.clone()
                },
                ToolActivityUnknown,
            ),
            (
                EffectContext {
                    partial_result_seen: Some(true),
                    ..safe.clone()
                },
                PartialResultSeen,
            ),
            (
                EffectContext {
                    partial_result_seen: None,
                    ..safe.clone()
                },
                PartialResultUnknown,
            ),
        ];
        for (ctx, reason) in cases {
            assert_eq!(gate(&ctx), GateVerdict::Manual(reason), "{ctx:?}");
        }
    }

    #[test]
    fn a_continued_session_carries_what_its_earlier_attempts_did() {
        let clean = EffectContext {
            prompt_delivery: Some(PromptDelivery::Confirmed),
            ..EffectContext::effect_safe()
        };
        let worked = EffectContext {
            assistant_output_seen: Some(true),
            tool_activity_seen: Some(true),
            ..clean.clone()
        };
        assert_eq!(
            gate(&clean.with_earlier(&worked)),
            GateVerdict::Manual(UnsafeReason::ToolActivitySeen),
            "a continuation that failed cleanly still continues work done before it"
        );
        let merged = clean.with_earlier(&EffectContext::nothing_known());
        assert_eq!(
            (merged.tool_activity_seen, merged.evidence_current),
            (None, Some(true)),
            "an earlier attempt whose effects are unknown leaves them unknown; currency is this attempt's"
        );
        assert_eq!(
            gate(&clean.with_earlier(&EffectContext::effect_safe())),
            GateVerdict::Allowed,
            "a session in which nothing happened stays safe"
        );
    }

    #[test]
    fn the_reason_given_is_what_happened_with_the_widest_reach() {
        use UnsafeReason::*;
        let delivered = EffectContext {
            prompt_delivery: Some(PromptDelivery::Confirmed),
            ..EffectContext::effect_safe()
        };
        let cases = [
            // An agent that said a line and then ran a tool: the tool is
            // what a person must check (the demo's Codex did exactly this
            // and was reported as "assistant output was seen").
            ((Some(true), Some(true), Some(false)), ToolActivitySeen),
            ((Some(true), Some(false), Some(true)), PartialResultSeen),
            // Something seen says more than something unknown.
            ((Some(true), None, None), AssistantOutputSeen),
            ((None, None, Some(true)), PartialResultSeen),
            ((None, None, None), ToolActivityUnknown),
            ((None, Some(false), Some(false)), AssistantOutputUnknown),
        ];
        for ((output, tool, partial), reason) in cases {
            let ctx = EffectContext {
                assistant_output_seen: output,
                tool_activity_seen: tool,
                partial_result_seen: partial,
                ..delivered.clone()
            };
            assert_eq!(gate(&ctx), GateVerdict::Manual(reason), "{ctx:?}");
        }
    }

    #[test]
    fn missing_evidence_fails_closed() {
        assert_eq!(
            gate(&EffectContext::nothing_known()),
            GateVerdict::Manual(UnsafeReason::EvidenceCurrencyUnknown)
        );
    }

    #[test]
    fn every_reason_reads_as_its_own_sentence() {
        use UnsafeReason::*;
        let cases = [
            (StaleEvidence, "the failure evidence is stale, from an older generation or another invocation"),
            (EvidenceCurrencyUnknown, "unknown whether the failure evidence belongs to the current generation and invocation"),
            (AmbiguousPromptDelivery, "prompt delivery is ambiguous; the agent may have received and acted on it"),
            (PromptDeliveryUnknown, "unknown whether the prompt was delivered"),
            (AssistantOutputSeen, "assistant output (thinking included) was seen before the failure"),
            (AssistantOutputUnknown, "unknown whether assistant output was seen before the failure"),
            (ToolActivitySeen, "a tool call or tool effect was seen before the failure"),
            (ToolActivityUnknown, "unknown whether a tool call or tool effect happened before the failure"),
            (PartialResultSeen, "a partial result was produced before the failure"),
            (PartialResultUnknown, "unknown whether a partial result was produced before the failure"),
        ];
        for (reason, text) in cases {
            assert_eq!(reason.to_string(), text, "{reason:?}");
        }
    }
}
