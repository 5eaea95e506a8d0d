//! Automatic continuation, the amendment in
//! `docs/decisions/2026-12-06-automatic-continuation.md`: after a transient
//! failure the safety gate refused to recover from (the agent had already
//! worked), the candidate may continue the attempt's own CLI session with a
//! continuation message instead of handing the route to a person. That is
//! not a replay: the prompt is not sent again, and the agent resumes the
//! conversation that holds what it did.
//!
//! Only when the evidence leaves nothing half-done: the failure is a
//! confident transient one with current evidence, the session can be
//! resumed, every tool call the attempt made completed, and the
//! candidate's continuation budget for this route cycle is not spent.
//! Pure: the engine gathers the evidence into [`SessionFacts`]; nothing
//! here reads a file or the clock.

use serde::{Deserialize, Serialize};

use super::{evaluate, CandidateSlot, Decision, Identical, ManualReason, RouteCycle};
use crate::agent::{Entry, ToolStatus, Transcript};
use crate::classification::{Class, Classification, Confidence, PolicyClass};
use crate::safety::{EffectContext, GateVerdict, UnsafeReason};
use chrono::{DateTime, Utc};

/// How the tool calls of a failed attempt ended, as far as Recourse knows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum ToolCalls {
    /// Every tool call completed (or none was made).
    Completed,
    /// A call had started and had not reported back when the attempt failed.
    Pending,
    /// A call failed part-way.
    Failed,
    /// A call was refused (access level, the CLI's permissions).
    Refused,
    /// Not known: the stream had something the adapter could not read, the
    /// transcript left calls out of its middle, or none was kept.
    #[default]
    Unknown,
}

impl ToolCalls {
    /// From the attempt's transcript and effect context: what its adapter
    /// saw. Anything it could not tell counts as unknown.
    pub fn of(transcript: Option<&Transcript>, effect: &EffectContext) -> ToolCalls {
        let Some(seen) = effect.tool_activity_seen else {
            return ToolCalls::Unknown;
        };
        let Some(transcript) = transcript else {
            return if seen {
                ToolCalls::Unknown
            } else {
                ToolCalls::Completed
            };
        };
        if transcript.elided.entries > 0 {
            return ToolCalls::Unknown;
        }
        let statuses: Vec<ToolStatus> = transcript
            .entries
            .iter()
            .filter_map(|e| match e {
                Entry::Tool { status, .. } => Some(*status),
                Entry::Assistant { .. } | Entry::Output { .. } | Entry::Elided { .. } => None,
            })
            .collect();
        if seen && statuses.is_empty() {
            // Tool activity the transcript does not show.
            return ToolCalls::Unknown;
        }
        [
            (ToolStatus::Started, ToolCalls::Pending),
            (ToolStatus::Failed, ToolCalls::Failed),
            (ToolStatus::Refused, ToolCalls::Refused),
        ]
        .into_iter()
        .find(|(status, _)| statuses.contains(status))
        .map_or(ToolCalls::Completed, |(_, calls)| calls)
    }
}

/// What the engine found about a failed attempt's session: the evidence
/// automatic continuation needs. Absent facts are the safe ones: no
/// session, tool calls unknown.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(deny_unknown_fields)]
pub struct SessionFacts {
    /// The attempt's CLI reported a session id, its kind resumes sessions,
    /// and the session's files are still where the CLI keeps them.
    #[serde(default)]
    pub resumable: bool,
    #[serde(default)]
    pub tools: ToolCalls,
}

/// Why automatic continuation did not answer a gate refusal, for the
/// preview, `recourse simulate` and a route the gate holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum NotContinued {
    /// The candidate has not opted in.
    Off,
    /// The failure is not a confident transient one.
    NotTransient,
    /// The evidence is stale or its currency unknown.
    EvidenceNotCurrent,
    /// No session that can be resumed.
    NoSession,
    /// Not every tool call completed.
    Tools { tools: ToolCalls },
    /// The candidate's budget for this route cycle is used.
    BudgetSpent { max_continuations: u32 },
    /// Allowed, but the agent could not start at once (its account limited
    /// or full, or dispatches paused): queued, it would have been sent the
    /// plain prompt.
    NotAtOnce,
}

impl NotContinued {
    pub fn describe(&self) -> String {
        match self {
            NotContinued::Off => "automatic continuation is off".to_string(),
            NotContinued::NotTransient => {
                "only a confident transient failure is continued".to_string()
            }
            NotContinued::EvidenceNotCurrent => "the failure's evidence is not current".to_string(),
            NotContinued::NoSession => {
                "there is no session to resume (no session id, or its files are gone)".to_string()
            }
            NotContinued::Tools { tools } => match tools {
                ToolCalls::Completed => "every tool call completed".to_string(),
                ToolCalls::Pending => "a tool call had not finished".to_string(),
                ToolCalls::Failed => "a tool call failed".to_string(),
                ToolCalls::Refused => "a tool call was refused".to_string(),
                ToolCalls::Unknown => "whether every tool call completed is unknown".to_string(),
            },
            NotContinued::BudgetSpent { max_continuations } => format!(
                "its {max_continuations} automatic continuation{} in this cycle {} used",
                if *max_continuations == 1 { "" } else { "s" },
                if *max_continuations == 1 { "is" } else { "are" }
            ),
            NotContinued::NotAtOnce => "the agent could not start at once (its account is \
                                        limited or full, or dispatches are paused)"
                .to_string(),
        }
    }
}

/// Decides what follows a failed attempt of `cycle.current`: [`evaluate`]'s
/// decision, except that a gate refusal becomes an automatic continuation
/// where [`continuation`] allows one. Pure.
pub fn evaluate_failure(
    cycle: &RouteCycle,
    classification: &Classification,
    gate: &GateVerdict,
    identical: Identical,
    session: &SessionFacts,
    candidates: &[CandidateSlot],
    now: DateTime<Utc>,
) -> Decision {
    let decision = evaluate(cycle, classification, gate, identical, candidates, now);
    match decision {
        Decision::Manual {
            reason: ManualReason::UnsafeEffect { .. },
        } => continuation(cycle, classification, gate, session, candidates).unwrap_or(decision),
        Decision::WaitForReset { .. }
        | Decision::Retry { .. }
        | Decision::Continue { .. }
        | Decision::Skip { .. }
        | Decision::SkipRepeated { .. }
        | Decision::Stop { .. }
        | Decision::Manual { .. } => decision,
    }
}

/// The automatic continuation of `cycle.current`'s session after a failure
/// the gate refused, or why there is none.
pub fn continuation(
    cycle: &RouteCycle,
    classification: &Classification,
    gate: &GateVerdict,
    session: &SessionFacts,
    candidates: &[CandidateSlot],
) -> Result<Decision, NotContinued> {
    let Some(slot) = candidates.get(cycle.current as usize) else {
        return Err(NotContinued::Off);
    };
    let auto = slot.policy.transient.auto_continue;
    if !auto.enabled {
        return Err(NotContinued::Off);
    }
    if let GateVerdict::Manual(
        UnsafeReason::StaleEvidence | UnsafeReason::EvidenceCurrencyUnknown,
    ) = gate
    {
        return Err(NotContinued::EvidenceNotCurrent);
    }
    let confident = matches!(
        classification.confidence,
        Confidence::Medium | Confidence::High
    );
    if classification.class != Class::Transient || !confident {
        return Err(NotContinued::NotTransient);
    }
    let resumes = slot
        .kind
        .is_none_or(|kind| kind.descriptor().resume.is_some());
    if !session.resumable || !resumes {
        return Err(NotContinued::NoSession);
    }
    if session.tools != ToolCalls::Completed {
        return Err(NotContinued::Tools {
            tools: session.tools,
        });
    }
    let class = PolicyClass::Transient;
    let used = cycle.usage_of(cycle.current, class).continuations_used;
    if used >= auto.max_continuations {
        return Err(NotContinued::BudgetSpent {
            max_continuations: auto.max_continuations,
        });
    }
    Ok(Decision::Continue {
        class,
        ordinal: used + 1,
        max_continuations: auto.max_continuations,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::AgentKind;
    use crate::classification::SemanticCode;
    use crate::policy::{AutoContinue, CandidatePolicy, ClassPolicy, Exhausted};
    use crate::safety::{gate, PromptDelivery};
    use crate::simulation::SimulatedFailure;
    use chrono::TimeZone;

    fn now() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 12, 6, 9, 0, 0).unwrap()
    }

    /// A Claude Code candidate that retries transient failures twice, with
    /// automatic continuation set as `auto`.
    fn slots(auto: AutoContinue) -> Vec<CandidateSlot> {
        let mut policy =
            CandidatePolicy::both(ClassPolicy::new(None, Some((2, 5)), Exhausted::Skip));
        policy.transient.auto_continue = auto;
        let slot = |name: &str| CandidateSlot {
            enabled: true,
            name: name.into(),
            policy: policy.clone(),
            kind: Some(AgentKind::ClaudeCode),
        };
        vec![slot("claude"), slot("codex")]
    }

    /// The agent wrote and ran a tool, then the stream dropped.
    fn worked() -> EffectContext {
        EffectContext {
            prompt_delivery: Some(PromptDelivery::Confirmed),
            assistant_output_seen: Some(true),
            tool_activity_seen: Some(true),
            ..EffectContext::effect_safe()
        }
    }

    fn completed() -> SessionFacts {
        SessionFacts {
            resumable: true,
            tools: ToolCalls::Completed,
        }
    }

    fn dropped() -> Classification {
        SimulatedFailure::of(SemanticCode::NetworkReset).classification(now())
    }

    fn decide(
        cycle: &RouteCycle,
        classification: &Classification,
        effect: &EffectContext,
        session: SessionFacts,
        slots: &[CandidateSlot],
    ) -> Decision {
        evaluate_failure(
            cycle,
            classification,
            &gate(effect),
            Identical::NONE,
            &session,
            slots,
            now(),
        )
    }

    /// What the gate and policy decide without automatic continuation.
    fn gated(classification: &Classification, effect: &EffectContext) -> Decision {
        let slots = slots(AutoContinue::DISABLED);
        evaluate(
            &RouteCycle::new(0),
            classification,
            &gate(effect),
            Identical::NONE,
            &slots,
            now(),
        )
    }

    #[test]
    fn a_transient_failure_after_completed_tools_continues_the_session() {
        let on = slots(AutoContinue::ON);
        let first = decide(&RouteCycle::new(0), &dropped(), &worked(), completed(), &on);
        assert_eq!(
            first,
            Decision::Continue {
                class: PolicyClass::Transient,
                ordinal: 1,
                max_continuations: 2
            }
        );
        assert_eq!(first.next_attempt_at(now()), Some(now()), "at once");
        let cycle = RouteCycle::new(0).apply(&first);
        assert_eq!(
            cycle.usage_of(0, PolicyClass::Transient).continuations_used,
            1,
            "counted against the candidate's budget in this cycle"
        );
        assert_eq!(
            cycle.usage_of(0, PolicyClass::Transient).retries_used,
            0,
            "a continuation spends no retry"
        );
        let second = decide(&cycle, &dropped(), &worked(), completed(), &on);
        assert!(
            matches!(second, Decision::Continue { ordinal: 2, .. }),
            "{second:?}"
        );
    }

    #[test]
    fn anything_short_of_the_evidence_goes_to_the_gate_as_before() {
        let on = slots(AutoContinue::ON);
        let spent = RouteCycle::new(0).apply(&Decision::Continue {
            class: PolicyClass::Transient,
            ordinal: 2,
            max_continuations: 2,
        });
        let mut stale = worked();
        stale.evidence_current = Some(false);
        let mut low = dropped();
        low.confidence = crate::classification::Confidence::Low;
        let unclassified = SimulatedFailure::of(SemanticCode::Unknown).classification(now());
        let hard = SimulatedFailure::of(SemanticCode::UsageLimitReached).classification(now());
        let tools = |tools| SessionFacts {
            resumable: true,
            tools,
        };
        let cases: [(
            &str,
            RouteCycle,
            Classification,
            EffectContext,
            SessionFacts,
            NotContinued,
        ); 10] = [
            (
                "pending tool",
                RouteCycle::new(0),
                dropped(),
                worked(),
                tools(ToolCalls::Pending),
                NotContinued::Tools {
                    tools: ToolCalls::Pending,
                },
            ),
            (
                "refused tool",
                RouteCycle::new(0),
                dropped(),
                worked(),
                tools(ToolCalls::Refused),
                NotContinued::Tools {
                    tools: ToolCalls::Refused,
                },
            ),
            (
                "failed tool",
                RouteCycle::new(0),
                dropped(),
                worked(),
                tools(ToolCalls::Failed),
                NotContinued::Tools {
                    tools: ToolCalls::Failed,
                },
            ),
            (
                "unknown tools",
                RouteCycle::new(0),
                dropped(),
                worked(),
                tools(ToolCalls::Unknown),
                NotContinued::Tools {
                    tools: ToolCalls::Unknown,
                },
            ),
            (
                "no session",
                RouteCycle::new(0),
                dropped(),
                worked(),
                SessionFacts {
                    resumable: false,
                    tools: ToolCalls::Completed,
                },
                NotContinued::NoSession,
            ),
            (
                "budget spent",
                spent,
                dropped(),
                worked(),
                completed(),
                NotContinued::BudgetSpent {
                    max_continuations: 2,
                },
            ),
            (
                "hard failure",
                RouteCycle::new(0),
                hard,
                worked(),
                completed(),
                NotContinued::NotTransient,
            ),
            (
                "unclassified",
                RouteCycle::new(0),
                unclassified,
                worked(),
                completed(),
                NotContinued::NotTransient,
            ),
            (
                "low confidence",
                RouteCycle::new(0),
                low,
                worked(),
                completed(),
                NotContinued::NotTransient,
            ),
            (
                "stale evidence",
                RouteCycle::new(0),
                dropped(),
                stale,
                completed(),
                NotContinued::EvidenceNotCurrent,
            ),
        ];
        for (case, cycle, classification, effect, session, why) in cases {
            let decision = decide(&cycle, &classification, &effect, session, &on);
            assert_eq!(
                decision,
                evaluate(
                    &cycle,
                    &classification,
                    &gate(&effect),
                    Identical::NONE,
                    &on,
                    now()
                ),
                "{case}: the gate's decision, as without the option"
            );
            assert!(
                matches!(decision, Decision::Manual { .. }),
                "{case}: a person decides: {decision:?}"
            );
            assert_eq!(
                continuation(&cycle, &classification, &gate(&effect), &session, &on),
                Err(why),
                "{case}"
            );
        }
    }

    #[test]
    fn with_the_option_off_every_decision_is_the_gate_and_policy_as_before() {
        let off = slots(AutoContinue::DISABLED);
        let effects = [
            worked(),
            EffectContext::effect_safe(),
            EffectContext::nothing_known(),
        ];
        let sessions = [
            completed(),
            SessionFacts::default(),
            SessionFacts {
                resumable: true,
                tools: ToolCalls::Pending,
            },
        ];
        let codes = [
            SemanticCode::NetworkReset,
            SemanticCode::ProviderOverloaded,
            SemanticCode::UsageLimitReached,
            SemanticCode::Unknown,
        ];
        for code in codes {
            let classification = SimulatedFailure::of(code).classification(now());
            for effect in &effects {
                for session in sessions {
                    assert_eq!(
                        decide(&RouteCycle::new(0), &classification, effect, session, &off),
                        gated(&classification, effect),
                        "{code:?} {effect:?} {session:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn an_effect_safe_failure_follows_the_policy_even_with_the_option_on() {
        let on = slots(AutoContinue::ON);
        let safe = EffectContext::effect_safe();
        let decision = decide(&RouteCycle::new(0), &dropped(), &safe, completed(), &on);
        assert!(
            matches!(decision, Decision::Retry { ordinal: 1, .. }),
            "nothing was done, so a fresh attempt repeats nothing: {decision:?}"
        );
    }

    #[test]
    fn a_kind_that_cannot_resume_is_never_continued() {
        let mut on = slots(AutoContinue::ON);
        on[0].kind = Some(AgentKind::Simulated);
        assert_eq!(
            continuation(
                &RouteCycle::new(0),
                &dropped(),
                &gate(&worked()),
                &completed(),
                &on
            ),
            Err(NotContinued::NoSession)
        );
    }

    fn transcript(statuses: &[ToolStatus]) -> Transcript {
        let mut t = Transcript::default();
        t.say("Running it.", false);
        for (i, status) in statuses.iter().enumerate() {
            t.tool(&format!("t{i}"), "Bash", None, *status);
        }
        t
    }

    #[test]
    fn tool_calls_are_completed_only_when_every_call_the_attempt_made_completed() {
        use ToolStatus::*;
        let seen = worked();
        let quiet = EffectContext::effect_safe();
        let cases = [
            (
                "all completed",
                Some(transcript(&[Completed, Completed])),
                &seen,
                ToolCalls::Completed,
            ),
            (
                "none made",
                Some(transcript(&[])),
                &quiet,
                ToolCalls::Completed,
            ),
            (
                "no transcript, none made",
                None,
                &quiet,
                ToolCalls::Completed,
            ),
            (
                "one still running",
                Some(transcript(&[Completed, Started])),
                &seen,
                ToolCalls::Pending,
            ),
            (
                "one failed",
                Some(transcript(&[Failed, Completed])),
                &seen,
                ToolCalls::Failed,
            ),
            (
                "one refused",
                Some(transcript(&[Refused])),
                &seen,
                ToolCalls::Refused,
            ),
            (
                "pending before refused",
                Some(transcript(&[Refused, Started])),
                &seen,
                ToolCalls::Pending,
            ),
            (
                "seen but none in the transcript",
                Some(transcript(&[])),
                &seen,
                ToolCalls::Unknown,
            ),
            ("no transcript after tools", None, &seen, ToolCalls::Unknown),
        ];
        for (case, t, effect, expected) in cases {
            assert_eq!(ToolCalls::of(t.as_ref(), effect), expected, "{case}");
        }
        let unread = EffectContext {
            tool_activity_seen: None,
            ..worked()
        };
        assert_eq!(
            ToolCalls::of(Some(&transcript(&[Completed])), &unread),
            ToolCalls::Unknown,
            "the adapter met a line it could not read: a call may be missing"
        );
        let mut cut = transcript(&[Completed]);
        cut.elided.entries = 3;
        assert_eq!(
            ToolCalls::of(Some(&cut), &seen),
            ToolCalls::Unknown,
            "calls left out of a long transcript's middle are not known to have completed"
        );
    }

    #[test]
    fn a_cycle_stored_before_continuations_were_counted_reads_as_none_used() {
        let stored = r#"{"current":0,"excluded":[],"usage":{"0":{"transient":{"retries_used":1,"reset_wait_used":false},"hard":{"retries_used":0,"reset_wait_used":true}}}}"#;
        let cycle: RouteCycle = serde_json::from_str(stored).unwrap();
        let transient = cycle.usage_of(0, PolicyClass::Transient);
        assert_eq!(transient.continuations_used, 0);
        assert_eq!(transient.retries_used, 1, "the rest reads as stored");
        let again: RouteCycle =
            serde_json::from_str(&serde_json::to_string(&cycle).unwrap()).unwrap();
        assert_eq!(again, cycle, "and is stored with the count from then on");
    }

    #[test]
    fn each_reason_reads_as_words() {
        let texts: Vec<String> = [
            NotContinued::NoSession,
            NotContinued::Tools {
                tools: ToolCalls::Pending,
            },
            NotContinued::BudgetSpent {
                max_continuations: 1,
            },
            NotContinued::BudgetSpent {
                max_continuations: 3,
            },
        ]
        .iter()
        .map(NotContinued::describe)
        .collect();
        assert_eq!(
            texts,
            [
                "there is no session to resume (no session id, or its files are gone)",
                "a tool call had not finished",
                "its 1 automatic continuation in this cycle is used",
                "its 3 automatic continuations in this cycle are used",
            ]
        );
    }
}
