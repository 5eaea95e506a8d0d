//! The policy evaluator: one pure function from (route cycle, classification,
//! gate verdict, candidates, now) to the next [`Decision`], and the pure
//! [`RouteCycle::apply`] that records what a decision used.
//!
//! It decides; it never sleeps, schedules or persists (the route engine does).
//! Order, as the policy decision prescribes:
//! (a) an unsafe gate verdict, an unclassified or low-confidence
//!     classification ⇒ manual; the one exception, opted into per
//!     candidate: the `threshold`-th identical quiet unclassified failure
//!     in a row ([`repeated`]) skips to the next candidate, once per cycle;
//! (b) reset wait: enabled, unused for this candidate+class in this cycle,
//!     and a trusted `reset_at` with `now < reset_at ≤ now + max_wait` ⇒ wait
//!     until exactly `reset_at` (never shortened); the one attempt after the
//!     wait consumes no retry budget. The catalogue has already validated
//!     `reset_at` and resolved any relative `retry-after` hint into it, so
//!     `reset_at` is the only hint read here;
//! (c) retry while the class's retries used < `max_retries`, delay
//!     `initial × 2^used`, each delay capped at 24 h;
//! (d) exhausted ⇒ skip to the next enabled, non-excluded candidate after the
//!     current one (manual when none is left), or stop.
//!
//! [`evaluate_failure`] adds automatic continuation ([`continuation`]): a
//! gate refusal may become a continuation of the agent's own session when
//! the candidate opted in and the evidence allows it; every other decision
//! is [`evaluate`]'s.

mod continuation;

pub use continuation::{continuation, evaluate_failure, NotContinued, SessionFacts, ToolCalls};

pub mod repeated;
mod unwaited;
pub use unwaited::{unwaited_reset, NotWaited, UnwaitedReset};

pub use repeated::{Identical, Sighting};

use crate::agent::AgentKind;
use crate::classification::{Class, Classification, Confidence, PolicyClass, SemanticCode};
use crate::policy::{CandidateEntry, CandidatePolicy, ClassPolicy, Exhausted};
use crate::safety::{GateVerdict, UnsafeReason};
use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// One candidate of the route, in route order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct CandidateSlot {
    pub enabled: bool,
    pub name: String,
    pub policy: CandidatePolicy,
    /// What it runs, when known: a preview of a kind whose policy does not
    /// apply (any command) treats its failures as a real run does.
    #[serde(default)]
    pub kind: Option<AgentKind>,
}

impl From<&CandidateEntry> for CandidateSlot {
    fn from(entry: &CandidateEntry) -> CandidateSlot {
        CandidateSlot {
            enabled: entry.enabled,
            name: entry.name.clone(),
            policy: entry.policy.clone(),
            kind: AgentKind::from_slug(&entry.agent),
        }
    }
}

/// What one class of one candidate has used in this route cycle.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct ClassUsage {
    pub retries_used: u32,
    pub reset_wait_used: bool,
    /// Automatic continuations of this candidate's session (transient
    /// only); cycles stored before it read back as none used.
    #[serde(default)]
    pub continuations_used: u32,
}

/// Usage of both classes of one candidate; classes are independent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct CandidateUsage {
    pub transient: ClassUsage,
    pub hard: ClassUsage,
}

impl CandidateUsage {
    pub fn class(&self, class: PolicyClass) -> ClassUsage {
        match class {
            PolicyClass::Transient => self.transient,
            PolicyClass::Hard => self.hard,
        }
    }

    fn class_mut(&mut self, class: PolicyClass) -> &mut ClassUsage {
        match class {
            PolicyClass::Transient => &mut self.transient,
            PolicyClass::Hard => &mut self.hard,
        }
    }
}

/// Recovery state of one route cycle: from the route's start, or a person's
/// resume, until it succeeds or is stopped. A person's retry-now or skip-now
/// stays in the cycle, so nothing it used is renewed. Candidate indexes are positions in the
/// route's candidate list. Persisted by the engine as JSON.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct RouteCycle {
    /// The candidate whose attempt failed / runs next.
    pub current: u32,
    /// Candidates skipped in this cycle; never chosen again in it.
    pub excluded: BTreeSet<u32>,
    /// Budget used, by candidate index; absent means nothing used yet.
    pub usage: BTreeMap<u32, CandidateUsage>,
    /// The route has moved on once in this cycle for repeated unclassified
    /// failures; it does not again until a fresh cycle. Absent (false) in
    /// cycles stored before the exception existed.
    #[serde(default)]
    pub repeat_skip_used: bool,
}

/// Why the route stops for manual recovery by policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum StopReason {
    /// Waiting and retrying are used up and the class policy says stop.
    ExhaustedWithStop { class: PolicyClass },
}

impl StopReason {
    pub fn describe(&self) -> String {
        match self {
            StopReason::ExhaustedWithStop { class } => format!(
                "{} retries and wait are used up and the candidate's policy says stop",
                class.as_str()
            ),
        }
    }
}

/// Why automatic recovery is not possible at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ManualReason {
    /// The safety gate refused automatic recovery.
    UnsafeEffect { reason: UnsafeReason },
    /// The failure is unknown or outside provider policy.
    Unclassified { code: SemanticCode },
    /// The matching rule is not confident enough to act on.
    LowConfidence { code: SemanticCode },
    /// The policy said skip but every later candidate is disabled or excluded.
    NoEligibleCandidate { class: PolicyClass },
    /// The route cycle points past the end of the candidate list.
    CandidateOutOfRange { index: u32, count: u32 },
    /// Unclassified, on a candidate opted in to moving on after
    /// `threshold` identical quiet failures; `held` says why not now.
    /// `identical` counts this failure and the identical ones before it.
    RepeatedUnclassified {
        code: SemanticCode,
        identical: u32,
        threshold: u32,
        held: RepeatHeld,
    },
}

/// Why an unclassified failure on an opted-in candidate still waits for a
/// person.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum RepeatHeld {
    /// Fewer identical failures than the threshold so far.
    BelowThreshold,
    /// This failure does not count: its attempt changed files in the
    /// working directory (output and tool activity stop at the gate).
    FilesChanged,
    /// The route already moved on once in this cycle for this reason.
    MovedOnThisCycle,
    /// Every later candidate is disabled or excluded.
    NoCandidateLeft,
}

impl ManualReason {
    pub fn describe(&self) -> String {
        match self {
            ManualReason::UnsafeEffect { reason } => {
                format!("not safe to recover automatically — {}", reason.describe())
            }
            ManualReason::Unclassified {
                code: SemanticCode::Unknown,
            } => "no catalogue rule recognised the failure".to_string(),
            ManualReason::Unclassified { code } => format!(
                "the failure is unclassified (“{}”), outside provider policy",
                code.words()
            ),
            ManualReason::LowConfidence { code } => {
                format!("the classification “{}” has low confidence", code.words())
            }
            ManualReason::NoEligibleCandidate { class } => format!(
                "the {} policy says skip, but no candidate is left to skip to in this cycle",
                class.as_str()
            ),
            ManualReason::CandidateOutOfRange { index, count } => format!(
                "the route cycle points at candidate {index}, but the route has {count} candidates"
            ),
            ManualReason::RepeatedUnclassified {
                code,
                identical,
                threshold,
                held,
            } => {
                let failure = format!("the failure is unclassified (“{}”)", code.words());
                match held {
                    RepeatHeld::BelowThreshold => format!(
                        "{failure}; identical failure {identical} of {threshold} with no output \
                         or effects; at {threshold} the route moves to the next candidate"
                    ),
                    RepeatHeld::FilesChanged => format!(
                        "{failure} and its attempt changed files in the working directory, so \
                         it does not count toward moving to the next candidate"
                    ),
                    RepeatHeld::MovedOnThisCycle => format!(
                        "{failure} and repeated {identical} times, but the route already moved \
                         on once in this cycle for repeated unclassified failures"
                    ),
                    RepeatHeld::NoCandidateLeft => format!(
                        "{failure} and repeated {identical} times, but no candidate is left to \
                         move to in this cycle"
                    ),
                }
            }
        }
    }
}

/// The next step of a route after a failed attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Decision {
    /// Wait until the provider's trusted reset instant, then attempt the
    /// same candidate once without using retry budget.
    WaitForReset {
        class: PolicyClass,
        until: DateTime<Utc>,
    },
    /// Retry the same candidate at `at`; `ordinal` counts from 1 up to `max_retries`.
    Retry {
        class: PolicyClass,
        at: DateTime<Utc>,
        ordinal: u32,
        max_retries: u32,
        delay_seconds: u32,
    },
    /// Continue the failed attempt's own session now, sending a
    /// continuation message, never the prompt; `ordinal` counts from 1 up
    /// to `max_continuations`.
    Continue {
        class: PolicyClass,
        ordinal: u32,
        max_continuations: u32,
    },
    /// Exclude `excluded` for the rest of the cycle and run `next` now.
    Skip {
        class: PolicyClass,
        excluded: u32,
        next: u32,
    },
    /// The candidate's opted-in exception: its `identical`-th identical
    /// quiet unclassified failure in a row. Like a skip, once per cycle.
    SkipRepeated {
        excluded: u32,
        next: u32,
        identical: u32,
    },
    /// Stop by policy; recovery is manual from here.
    Stop { reason: StopReason },
    /// No automatic recovery possible.
    Manual { reason: ManualReason },
}

impl Decision {
    /// When the next attempt runs, or `None` when the route leaves automatic
    /// recovery. A skip runs the next candidate right away.
    pub fn next_attempt_at(&self, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
        match self {
            Decision::WaitForReset { until, .. } => Some(*until),
            Decision::Retry { at, .. } => Some(*at),
            Decision::Continue { .. } | Decision::Skip { .. } | Decision::SkipRepeated { .. } => {
                Some(now)
            }
            Decision::Stop { .. } | Decision::Manual { .. } => None,
        }
    }

    /// A person decides, and the same failure once more would count toward
    /// the candidate's repeat threshold: a preview reads the next failure
    /// as the person's retry, to show where the route would move on.
    pub fn counts_toward_repeat(&self) -> bool {
        matches!(
            self,
            Decision::Manual {
                reason: ManualReason::RepeatedUnclassified {
                    held: RepeatHeld::BelowThreshold,
                    ..
                }
            }
        )
    }

    /// True for wait, retry, continue and skip: anything that dispatches
    /// work again without a person.
    pub fn is_automatic(&self) -> bool {
        match self {
            Decision::WaitForReset { .. }
            | Decision::Retry { .. }
            | Decision::Continue { .. }
            | Decision::Skip { .. }
            | Decision::SkipRepeated { .. } => true,
            Decision::Stop { .. } | Decision::Manual { .. } => false,
        }
    }

    /// The decision in words: the attempt history, `recourse simulate` and
    /// the editor's preview all say the same thing, each naming instants
    /// and candidates its own way.
    pub fn describe(&self, words: &impl Wording) -> String {
        match self {
            Decision::WaitForReset { class, until } => format!(
                "wait for the {} reset until {}",
                class.as_str(),
                words.instant(*until)
            ),
            Decision::Retry {
                class,
                at,
                ordinal,
                max_retries,
                delay_seconds,
            } => format!(
                "{} retry {ordinal} of {max_retries} in {}, at {}",
                class.as_str(),
                words.delay(*delay_seconds),
                words.instant(*at)
            ),
            Decision::Continue {
                class,
                ordinal,
                max_continuations,
            } => format!(
                "{} failure after completed tools: continue the agent's own session \
                 automatically ({ordinal} of {max_continuations}), without sending the prompt again",
                class.as_str()
            ),
            Decision::Skip {
                class,
                excluded,
                next,
            } => format!(
                "{} used up its {} retries and wait; skipping to {}",
                words.candidate(*excluded),
                class.as_str(),
                words.candidate(*next)
            ),
            Decision::SkipRepeated {
                excluded,
                next,
                identical,
            } => format!(
                "unclassified failure repeated {identical} times on {} with no output or \
                 effects: skip to {} (once per cycle)",
                words.candidate(*excluded),
                words.candidate(*next)
            ),
            Decision::Stop { reason } => format!("stop: {}", reason.describe()),
            Decision::Manual { reason } => format!("manual recovery: {}", reason.describe()),
        }
    }
}

/// How [`Decision::describe`] names instants, delays and candidates.
pub trait Wording {
    fn instant(&self, at: DateTime<Utc>) -> String;
    fn delay(&self, seconds: u32) -> String;
    fn candidate(&self, index: u32) -> String;
}

/// For the attempt history, read long after the decision: absolute RFC 3339
/// instants, delays in words (`1 min 30 s`), and candidates by position, since a
/// candidate's name can change after the fact.
pub struct HistoryWording;

impl Wording for HistoryWording {
    fn instant(&self, at: DateTime<Utc>) -> String {
        at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
    }

    fn delay(&self, seconds: u32) -> String {
        crate::timing::words::exact(u64::from(seconds))
    }

    fn candidate(&self, index: u32) -> String {
        format!("candidate {}", index + 1)
    }
}

impl RouteCycle {
    /// A fresh cycle starting at candidate `current`.
    pub fn new(current: u32) -> RouteCycle {
        RouteCycle {
            current,
            ..RouteCycle::default()
        }
    }

    /// A fresh cycle at the first enabled candidate; `None` when none is enabled.
    pub fn start(candidates: &[CandidateSlot]) -> Option<RouteCycle> {
        RouteCycle::default()
            .next_eligible(candidates.iter().map(|c| c.enabled), 0)
            .map(RouteCycle::new)
    }

    /// The first candidate at or after `from` that is enabled and not
    /// excluded in this cycle: where a route starts and where a skip goes.
    /// `enabled` holds each candidate's flag, in route order.
    pub fn next_eligible(&self, enabled: impl IntoIterator<Item = bool>, from: u32) -> Option<u32> {
        enabled
            .into_iter()
            .enumerate()
            .skip(from as usize)
            .find_map(|(index, enabled)| {
                let index = u32::try_from(index).ok()?;
                (enabled && !self.excluded.contains(&index)).then_some(index)
            })
    }

    /// The cycle after a person skips the current candidate for `next`.
    pub fn skip_to(&self, next: u32) -> RouteCycle {
        let mut after = self.clone();
        after.excluded.insert(self.current);
        after.current = next;
        after
    }

    /// What `candidate` has used of `class` in this cycle.
    pub fn usage_of(&self, candidate: u32, class: PolicyClass) -> ClassUsage {
        self.usage
            .get(&candidate)
            .map(|usage| usage.class(class))
            .unwrap_or_default()
    }

    /// The cycle after `decision`: a reset wait is marked used, a retry or
    /// an automatic continuation counts against its class's budget (never
    /// refunded), a skip excludes the candidate and moves on (a skip for
    /// repeats also uses the cycle's one such skip). Stop and manual change
    /// nothing.
    pub fn apply(&self, decision: &Decision) -> RouteCycle {
        let mut next = self.clone();
        match decision {
            Decision::WaitForReset { class, .. } => {
                next.usage_mut(self.current, *class).reset_wait_used = true;
            }
            Decision::Retry { class, ordinal, .. } => {
                let usage = next.usage_mut(self.current, *class);
                usage.retries_used = usage.retries_used.max(*ordinal);
            }
            Decision::Continue { class, ordinal, .. } => {
                let usage = next.usage_mut(self.current, *class);
                usage.continuations_used = usage.continuations_used.max(*ordinal);
            }
            Decision::Skip {
                excluded, next: to, ..
            } => {
                next.excluded.insert(*excluded);
                next.current = *to;
            }
            Decision::SkipRepeated {
                excluded, next: to, ..
            } => {
                next.excluded.insert(*excluded);
                next.current = *to;
                next.repeat_skip_used = true;
            }
            Decision::Stop { .. } | Decision::Manual { .. } => {}
        }
        next
    }

    fn usage_mut(&mut self, candidate: u32, class: PolicyClass) -> &mut ClassUsage {
        self.usage.entry(candidate).or_default().class_mut(class)
    }
}

/// Decides what follows a failed attempt of `cycle.current`. Pure.
/// `identical` is how many identical quiet unclassified failures of the
/// candidate end with this one ([`repeated::identical`]); it matters only
/// for an unclassified failure on a candidate opted in to moving on.
pub fn evaluate(
    cycle: &RouteCycle,
    classification: &Classification,
    gate: &GateVerdict,
    identical: Identical,
    candidates: &[CandidateSlot],
    now: DateTime<Utc>,
) -> Decision {
    let class = match admit(classification, gate) {
        Ok(class) => class,
        Err(ManualReason::Unclassified { code }) => {
            return unclassified(cycle, code, identical, candidates)
        }
        Err(reason) => return Decision::Manual { reason },
    };
    let Some(slot) = candidates.get(cycle.current as usize) else {
        let reason = ManualReason::CandidateOutOfRange {
            index: cycle.current,
            count: u32::try_from(candidates.len()).unwrap_or(u32::MAX),
        };
        return Decision::Manual { reason };
    };
    let section = slot.policy.section(class);
    let usage = cycle.usage_of(cycle.current, class);
    reset_wait(section, usage, classification.reset_at, now)
        .map(|until| Decision::WaitForReset { class, until })
        .or_else(|| retry(class, section, usage, now))
        .unwrap_or_else(|| exhausted(cycle, class, section.on_exhausted, candidates))
}

/// Step (a): only effect-safe, classified, confident failures go on.
fn admit(classification: &Classification, gate: &GateVerdict) -> Result<PolicyClass, ManualReason> {
    if let GateVerdict::Manual(reason) = gate {
        return Err(ManualReason::UnsafeEffect { reason: *reason });
    }
    let code = classification.code;
    let class = match classification.class {
        Class::Transient => PolicyClass::Transient,
        Class::Hard => PolicyClass::Hard,
        Class::Unclassified => return Err(ManualReason::Unclassified { code }),
    };
    match classification.confidence {
        Confidence::Low => Err(ManualReason::LowConfidence { code }),
        Confidence::Medium | Confidence::High => Ok(class),
    }
}

/// Step (a), for an effect-safe unclassified failure: a person decides,
/// unless the candidate opted in and this is its `threshold`-th identical
/// quiet failure in a row, the cycle has not moved on for repeats yet, and
/// an eligible candidate follows.
fn unclassified(
    cycle: &RouteCycle,
    code: SemanticCode,
    identical: Identical,
    candidates: &[CandidateSlot],
) -> Decision {
    let threshold = candidates
        .get(cycle.current as usize)
        .and_then(|slot| slot.policy.unclassified.repeated_failure.threshold());
    let Some(threshold) = threshold else {
        return Decision::Manual {
            reason: ManualReason::Unclassified { code },
        };
    };
    let Identical(identical) = identical;
    let held = |held| Decision::Manual {
        reason: ManualReason::RepeatedUnclassified {
            code,
            identical,
            threshold,
            held,
        },
    };
    if identical == 0 {
        return held(RepeatHeld::FilesChanged);
    }
    if identical < threshold {
        return held(RepeatHeld::BelowThreshold);
    }
    if cycle.repeat_skip_used {
        return held(RepeatHeld::MovedOnThisCycle);
    }
    let enabled = candidates.iter().map(|slot| slot.enabled);
    match cycle.next_eligible(enabled, cycle.current.saturating_add(1)) {
        Some(next) => Decision::SkipRepeated {
            excluded: cycle.current,
            next,
            identical,
        },
        None => held(RepeatHeld::NoCandidateLeft),
    }
}

/// Step (b): the reset instant to wait for, if waiting applies.
fn reset_wait(
    section: &ClassPolicy,
    usage: ClassUsage,
    reset_at: Option<DateTime<Utc>>,
    now: DateTime<Utc>,
) -> Option<DateTime<Utc>> {
    let wait = section.wait_for_reset;
    if !wait.enabled || usage.reset_wait_used {
        return None;
    }
    let reset_at = reset_at?;
    let latest = now + Duration::seconds(i64::from(wait.max_wait_seconds));
    (now < reset_at && reset_at <= latest).then_some(reset_at)
}

/// Step (c): the next doubling retry while budget remains.
fn retry(
    class: PolicyClass,
    section: &ClassPolicy,
    usage: ClassUsage,
    now: DateTime<Utc>,
) -> Option<Decision> {
    let retry = section.retry;
    if !retry.enabled || usage.retries_used >= retry.max_retries {
        return None;
    }
    let delay_seconds = retry.delay_seconds(usage.retries_used);
    Some(Decision::Retry {
        class,
        at: now + Duration::seconds(i64::from(delay_seconds)),
        ordinal: usage.retries_used + 1,
        max_retries: retry.max_retries,
        delay_seconds,
    })
}

/// Step (d): skip to the next eligible candidate, or stop.
fn exhausted(
    cycle: &RouteCycle,
    class: PolicyClass,
    outcome: Exhausted,
    candidates: &[CandidateSlot],
) -> Decision {
    match outcome {
        Exhausted::Stop => Decision::Stop {
            reason: StopReason::ExhaustedWithStop { class },
        },
        Exhausted::Skip => {
            let enabled = candidates.iter().map(|slot| slot.enabled);
            match cycle.next_eligible(enabled, cycle.current.saturating_add(1)) {
                Some(next) => Decision::Skip {
                    class,
                    excluded: cycle.current,
                    next,
                },
                None => Decision::Manual {
                    reason: ManualReason::NoEligibleCandidate { class },
                },
            }
        }
    }
}

#[cfg(test)]
mod tests;
