//! Policy preview: the timeline of decisions a sequence of failures would
//! produce for a route's candidates. The CLI's `simulate` and the UI preview
//! share this one function, so a preview can never disagree with the engine:
//! it runs the real [`gate`] and [`evaluate`].
//!
//! Pure: time starts at `start` and jumps to each decision's next attempt.
//! An unclassified failure below its candidate's repeat threshold waits for
//! a person; the next failure is read as their retry, at the same instant,
//! so the timeline shows where the route would move on.

use crate::classification::{Class, Classification, Confidence, Scope, SemanticCode};
use crate::evaluator::repeated::identical;
use crate::evaluator::{
    continuation, evaluate_failure, unwaited_reset, CandidateSlot, Decision, ManualReason,
    NotContinued, RouteCycle, SessionFacts, Sighting, UnwaitedReset, Wording,
};
use crate::evidence::Fingerprint;
use crate::policy::FieldError;
use crate::safety::{gate, EffectContext, GateVerdict};
use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};

/// Catalogue version stamped on simulated classifications.
pub const SIMULATION_CATALOGUE: &str = "simulation";

/// One failed attempt, given at classification level.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
#[serde(deny_unknown_fields)]
pub struct SimulatedFailure {
    pub code: SemanticCode,
    /// The code's class, or `unclassified` (low-confidence, stale or
    /// conflicting evidence); any other class contradicts the code → class
    /// table, is refused by [`check_failures`] and never honoured.
    #[serde(default)]
    pub class: Option<Class>,
    #[serde(default = "high_confidence")]
    pub confidence: Confidence,
    /// A trusted provider reset this many seconds after the failure
    /// (negative: already in the past).
    #[serde(default)]
    pub reset_in_seconds: Option<i32>,
    /// What the attempt did before failing; absent means effect-safe.
    #[serde(default)]
    pub effect: Option<EffectContext>,
    /// What a run would find about the attempt's session, for automatic
    /// continuation; absent means no session it could resume.
    #[serde(default)]
    pub session: Option<SessionFacts>,
    /// Which failure this is, for counting identical unclassified ones:
    /// failures with the same fingerprint are the same failure. Absent:
    /// the code names it. A text failure gets its evidence's.
    #[serde(default)]
    pub fingerprint: Option<String>,
}

fn high_confidence() -> Confidence {
    Confidence::High
}

impl SimulatedFailure {
    /// A clean, confident failure of `code` with no reset hint.
    pub fn of(code: SemanticCode) -> SimulatedFailure {
        SimulatedFailure {
            code,
            class: None,
            confidence: Confidence::High,
            reset_in_seconds: None,
            effect: None,
            session: None,
            fingerprint: None,
        }
    }

    /// A failure as the catalogue classified it at `at`: its code, its
    /// class only where the catalogue left it unclassified, its confidence,
    /// its reset (a retry-after hint is already resolved into `reset_at`)
    /// and its evidence's fingerprint, for previewing a policy on real
    /// error text.
    pub fn classified(
        classification: &Classification,
        fingerprint: &Fingerprint,
        at: DateTime<Utc>,
    ) -> SimulatedFailure {
        SimulatedFailure {
            code: classification.code,
            class: (classification.class == Class::Unclassified).then_some(Class::Unclassified),
            confidence: classification.confidence,
            reset_in_seconds: classification.reset_at.map(|reset| {
                let seconds = (reset - at).num_seconds();
                i32::try_from(seconds).unwrap_or(if seconds < 0 { i32::MIN } else { i32::MAX })
            }),
            effect: None,
            session: None,
            fingerprint: Some(fingerprint.as_str().to_string()),
        }
    }

    /// What makes two failures of a sequence the same failure.
    pub fn fingerprint(&self) -> Fingerprint {
        match &self.fingerprint {
            Some(name) => Fingerprint::named(name),
            None => Fingerprint::named(self.code.as_str()),
        }
    }

    /// The classification the catalogue would have produced at `at`.
    pub fn classification(&self, at: DateTime<Utc>) -> Classification {
        Classification {
            code: self.code,
            class: match self.class {
                Some(Class::Unclassified) => Class::Unclassified,
                Some(Class::Transient | Class::Hard) | None => self.code.class(),
            },
            confidence: self.confidence,
            scope: Scope::Unknown,
            rule_id: None,
            catalogue_version: SIMULATION_CATALOGUE.to_string(),
            retry_after_s: None,
            reset_at: self
                .reset_in_seconds
                .map(|seconds| at + Duration::seconds(i64::from(seconds))),
            matched: None,
            explanation: format!("simulated {} failure", self.code.as_str()),
        }
    }

    pub fn effect_context(&self) -> EffectContext {
        self.effect
            .clone()
            .unwrap_or_else(EffectContext::effect_safe)
    }
}

/// Every failure whose `class` contradicts its code, as
/// `failures[N].class` errors: a failure file cannot make `unknown` or
/// `permission_denied` transient, only a code unclassified.
pub fn check_failures(failures: &[SimulatedFailure]) -> Vec<FieldError> {
    failures
        .iter()
        .enumerate()
        .filter_map(|(index, failure)| {
            let given = failure.class?;
            let own = failure.code.class();
            (given != own && given != Class::Unclassified).then(|| {
                FieldError::new(
                    format!("failures[{index}].class"),
                    format!(
                        "`{}` contradicts code `{}`, whose class is {}; a class may only be \
                         overridden to `unclassified` (low-confidence, stale or conflicting evidence)",
                        given.as_str(),
                        failure.code.as_str(),
                        own.as_str()
                    ),
                )
            })
        })
        .collect()
}

/// One failure and the decision it produced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct TimelineStep {
    /// Index of the failure in the input sequence.
    pub failure: u32,
    /// When the failed attempt ended.
    pub at: DateTime<Utc>,
    /// The candidate whose attempt failed.
    pub candidate: u32,
    pub candidate_name: String,
    pub code: SemanticCode,
    pub class: Class,
    pub gate: GateVerdict,
    pub decision: Decision,
    /// Why the candidate's automatic continuation did not answer the
    /// gate's refusal; only where it is turned on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_continued: Option<NotContinued>,
    /// The provider's own reset the decision did not wait for, and why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unwaited_reset: Option<UnwaitedReset>,
}

impl TimelineStep {
    /// The decision in `words`, and why it is not an automatic
    /// continuation where one was turned on.
    pub fn describe(&self, words: &impl Wording) -> String {
        let mut text = self.decision.describe(words);
        if let Some(why) = self.not_continued {
            text.push_str(&format!(
                "; not continued automatically, as {}",
                why.describe()
            ));
        }
        if let Some(unwaited) = self.unwaited_reset {
            text.push_str(&format!("; {}", unwaited.describe(words)));
        }
        text
    }
}

/// Feeds `failures` one by one to the route, each at the instant of the
/// previous decision's next attempt. Stops early when a decision leaves
/// automatic recovery (except one that waits for a person while the same
/// failure again would count toward a repeat threshold: then the next
/// failure is their retry); failures after that are not used. Empty when
/// no candidate is enabled. After an automatic continuation the next
/// failure is judged with what the session did before it, as a run judges
/// it.
pub fn simulate(
    candidates: &[CandidateSlot],
    failures: &[SimulatedFailure],
    start: DateTime<Utc>,
) -> Vec<TimelineStep> {
    walk(candidates, failures.iter(), start).steps
}

/// A simulated route's steps, and whether it would go on after the last
/// one: the failures ran out while it was still in automatic recovery.
struct Walk {
    steps: Vec<TimelineStep>,
    goes_on: bool,
}

/// [`simulate`] over any sequence of failures.
fn walk<'a>(
    candidates: &[CandidateSlot],
    failures: impl Iterator<Item = &'a SimulatedFailure>,
    start: DateTime<Utc>,
) -> Walk {
    let mut walked = Walk {
        steps: Vec::new(),
        goes_on: false,
    };
    let Some(mut cycle) = RouteCycle::start(candidates) else {
        return walked;
    };
    let mut at = start;
    let mut continued: Option<EffectContext> = None;
    let mut earlier = Vec::new();
    for (index, failure) in failures.enumerate() {
        let (step, session, sighting) = step(
            &cycle,
            candidates,
            index,
            failure,
            continued.as_ref(),
            &earlier,
            at,
        );
        let next_at = step.decision.next_attempt_at(at).or_else(|| {
            // A person's retry, at once: the count goes on.
            step.decision.counts_toward_repeat().then_some(at)
        });
        continued = matches!(step.decision, Decision::Continue { .. }).then_some(session);
        cycle = cycle.apply(&step.decision);
        walked.steps.push(step);
        earlier.push(sighting);
        walked.goes_on = next_at.is_some();
        match next_at {
            Some(next) => at = next,
            None => break,
        }
    }
    walked
}

/// One failure's step, what its session had done by then, and what the
/// repeat count makes of it.
fn step(
    cycle: &RouteCycle,
    candidates: &[CandidateSlot],
    index: usize,
    failure: &SimulatedFailure,
    continued: Option<&EffectContext>,
    earlier: &[Sighting],
    at: DateTime<Utc>,
) -> (TimelineStep, EffectContext, Sighting) {
    let classification = failure.classification(at);
    let own = match candidates.get(cycle.current as usize).and_then(|s| s.kind) {
        Some(kind) => kind.started_failure_effect(failure.effect_context()),
        None => failure.effect_context(),
    };
    let effect = continued.map_or_else(|| own.clone(), |e| own.with_earlier(e));
    let verdict = gate(&effect);
    // No working directory in a preview: files changed are unknown, as
    // outside a git repository.
    let sighting = Sighting::of(
        cycle.current,
        classification.class,
        &verdict,
        None,
        failure.fingerprint(),
    );
    let repeats = identical(earlier, &sighting);
    let session = failure.session.unwrap_or_default();
    let decision = evaluate_failure(
        cycle,
        &classification,
        &verdict,
        repeats,
        &session,
        candidates,
        at,
    );
    let refused = matches!(
        decision,
        Decision::Manual {
            reason: ManualReason::UnsafeEffect { .. }
        }
    );
    let not_continued = refused
        .then(|| continuation(cycle, &classification, &verdict, &session, candidates).err())
        .flatten()
        .filter(|why| *why != NotContinued::Off);
    let unwaited_reset = unwaited_reset(cycle, &decision, classification.reset_at, candidates, at);
    let candidate_name = candidates
        .get(cycle.current as usize)
        .map(|slot| slot.name.clone())
        .unwrap_or_default();
    let step = TimelineStep {
        failure: u32::try_from(index).unwrap_or(u32::MAX),
        at,
        candidate: cycle.current,
        candidate_name,
        code: classification.code,
        class: classification.class,
        gate: verdict,
        decision,
        not_continued,
        unwaited_reset,
    };
    (step, effect, sighting)
}

/// One step of a policy preview, with the decision in the words `recourse
/// simulate` prints, so the editor never writes its own.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct PreviewStep {
    pub step: TimelineStep,
    pub text: String,
}

/// The most steps a preview walks. A whole walk of a usual profile fits
/// many times over (four candidates retrying three times each take 16);
/// bounded because a profile may hold hundreds of candidates, and a
/// preview cut here says so.
pub const PREVIEW_STEPS: usize = 100;

/// What the editor's preview shows: the steps, and words for the end when
/// the walk was cut before the route left automatic recovery.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct Preview {
    pub steps: Vec<PreviewStep>,
    /// Said after the last step when the preview stopped at
    /// [`PREVIEW_STEPS`] while the route would still go on by itself;
    /// `None`: the steps end where the route would (a person decides, or it
    /// stops).
    pub cut: Option<String>,
}

/// The evaluator's timeline from `start` if every attempt failed like
/// `failures`, the last of them again and again until the route leaves
/// automatic recovery (at most [`PREVIEW_STEPS`] steps), each decision in
/// timeline words: what the editor's preview shows.
pub fn preview(
    candidates: &[CandidateSlot],
    failures: &[SimulatedFailure],
    start: DateTime<Utc>,
) -> Preview {
    let again = failures.last().into_iter().cycle();
    let walked = walk(
        candidates,
        failures.iter().chain(again).take(PREVIEW_STEPS),
        start,
    );
    let cut = (walked.goes_on && walked.steps.len() == PREVIEW_STEPS).then(|| {
        format!(
            "the preview stops here, after {PREVIEW_STEPS} steps; the route would go on by the \
             same policy"
        )
    });
    let words = TimelineWording { start, candidates };
    Preview {
        steps: walked
            .steps
            .into_iter()
            .map(|step| PreviewStep {
                text: step.describe(&words),
                step,
            })
            .collect(),
        cut,
    }
}

/// For a timeline, read as a whole from its start: instants as offsets from
/// that start (`+1 min 10 s`), delays as spans (`10 s`), candidates by name
/// in quotes, since a name may hold colons and parentheses of its own
/// (`“Codex (simulated): a tool ran, then the stream dropped”`).
pub struct TimelineWording<'a> {
    pub start: DateTime<Utc>,
    pub candidates: &'a [CandidateSlot],
}

impl Wording for TimelineWording<'_> {
    fn instant(&self, at: DateTime<Utc>) -> String {
        offset(at - self.start)
    }

    fn delay(&self, seconds: u32) -> String {
        span(Duration::seconds(i64::from(seconds)))
    }

    fn candidate(&self, index: u32) -> String {
        let name = self
            .candidates
            .get(index as usize)
            .map_or("?", |slot| slot.name.as_str());
        format!("“{name}”")
    }
}

/// `+1 h 2 min 3 s` relative to the start.
pub fn offset(since_start: Duration) -> String {
    format!("+{}", span(since_start))
}

/// `1 d 2 h 3 min 4 s`, leaving out zero units; `0 s` for nothing: as
/// every duration a person reads is written.
pub fn span(duration: Duration) -> String {
    crate::timing::words::exact(u64::try_from(duration.num_seconds()).unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::{CandidatePolicy, ClassPolicy, Exhausted};
    use chrono::TimeZone;

    fn start() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 3, 1, 12, 0, 0).unwrap()
    }

    fn retrying_slot(name: &str, enabled: bool) -> CandidateSlot {
        let section = ClassPolicy::new(None, Some((2, 30)), Exhausted::Skip);
        CandidateSlot {
            enabled,
            name: name.into(),
            policy: CandidatePolicy::both(section),
            kind: None,
        }
    }

    #[test]
    fn a_retry_sooner_than_the_providers_reset_says_why_it_does_not_wait() {
        let slot = |wait: Option<u32>| CandidateSlot {
            enabled: true,
            name: "opus".into(),
            policy: CandidatePolicy::both(ClassPolicy::new(wait, Some((1, 3)), Exhausted::Stop)),
            kind: None,
        };
        let failure = SimulatedFailure {
            reset_in_seconds: Some(12),
            ..SimulatedFailure::of(SemanticCode::RateLimited)
        };
        let first = |wait| {
            preview(&[slot(wait)], std::slice::from_ref(&failure), start()).steps[0]
                .text
                .clone()
        };
        assert_eq!(
            first(None),
            "transient retry 1 of 1 in 3 s, at +3 s; the provider's reset at +12 s is not \
             waited for, as the transient reset wait is off"
        );
        assert!(
            first(Some(5)).ends_with("as it is further away than the longest transient wait (5 s)"),
            "{}",
            first(Some(5))
        );
        assert!(
            !first(Some(60)).contains("not waited for"),
            "a reset within the longest wait is waited for: nothing to explain"
        );
        let waited_then = preview(&[slot(Some(60))], &[failure.clone(), failure], start());
        assert!(
            waited_then.steps[1]
                .text
                .ends_with("as the transient reset wait was used once already in this cycle"),
            "{}",
            waited_then.steps[1].text
        );
    }

    #[test]
    fn a_classified_failure_keeps_its_reset_and_an_unclassified_verdict() {
        let at = start();
        let mut c = SimulatedFailure::of(SemanticCode::RateLimited).classification(at);
        c.reset_at = Some(at + Duration::seconds(12));
        let fp = Fingerprint::named("x");
        let failure = SimulatedFailure::classified(&c, &fp, at);
        assert_eq!(
            failure.reset_in_seconds,
            Some(12),
            "a retry-after hint, resolved"
        );
        assert_eq!(failure.class, None, "the code's own class");
        c.class = Class::Unclassified;
        assert_eq!(
            SimulatedFailure::classified(&c, &fp, at).class,
            Some(Class::Unclassified),
            "a low-confidence match stays unclassified in the preview"
        );
    }

    #[test]
    fn time_jumps_to_each_decisions_next_attempt() {
        let candidates = [retrying_slot("a", true), retrying_slot("b", true)];
        let failures = vec![SimulatedFailure::of(SemanticCode::NetworkReset); 4];
        let steps = simulate(&candidates, &failures, start());
        let offsets: Vec<i64> = steps
            .iter()
            .map(|s| (s.at - start()).num_seconds())
            .collect();
        assert_eq!(
            offsets,
            vec![0, 30, 90, 90],
            "retries at +30 s and +60 s, skip is immediate"
        );
        assert_eq!(steps[3].candidate_name, "b");
    }

    #[test]
    fn a_preview_walks_every_candidate_to_the_routes_end_from_one_failure() {
        let retrying = |name: &str| CandidateSlot {
            enabled: true,
            name: name.into(),
            policy: CandidatePolicy::both(ClassPolicy::new(None, Some((3, 20)), Exhausted::Skip)),
            kind: None,
        };
        let candidates = ["a", "b", "c", "d"].map(retrying);
        let overloaded = SimulatedFailure::of(SemanticCode::ProviderOverloaded);
        // The editor's examples sent 12 failures: the walk stopped at the
        // second candidate's third retry, with no outcome and no word.
        for given in [1, 12] {
            let shown = preview(&candidates, &vec![overloaded.clone(); given], start());
            assert_eq!(
                shown.steps.len(),
                16,
                "four candidates, three retries and a skip or stop each ({given} given)"
            );
            assert_eq!(
                shown.steps.last().unwrap().text,
                "manual recovery: the transient policy says skip, but no candidate is left to \
                 skip to in this cycle",
                "the walk ends with the route's outcome"
            );
            assert_eq!(shown.cut, None, "nothing left out");
        }
    }

    #[test]
    fn a_preview_cut_at_its_bound_says_so_after_the_last_step() {
        let candidates: Vec<CandidateSlot> = (0..40)
            .map(|i| retrying_slot(&format!("c{i}"), true))
            .collect();
        let overloaded = [SimulatedFailure::of(SemanticCode::ProviderOverloaded)];
        let shown = preview(&candidates, &overloaded, start());
        assert_eq!(shown.steps.len(), PREVIEW_STEPS, "its whole walk takes 120");
        assert!(shown.steps.last().unwrap().step.decision.is_automatic());
        assert_eq!(
            shown.cut.as_deref(),
            Some(
                "the preview stops here, after 100 steps; the route would go on by the same \
                 policy"
            ),
            "a walk cut short says so, in words"
        );
        let short = preview(&candidates[..1], &overloaded, start());
        assert_eq!(short.cut, None, "a walk that ends says nothing more");
    }

    #[test]
    fn timeline_ends_at_the_first_non_automatic_decision() {
        let candidates = [retrying_slot("a", true)];
        let failures = vec![SimulatedFailure::of(SemanticCode::Unknown); 3];
        let steps = simulate(&candidates, &failures, start());
        assert_eq!(steps.len(), 1, "later failures cannot happen after manual");
        assert!(!steps[0].decision.is_automatic());
    }

    #[test]
    fn an_any_command_candidate_previews_manual_recovery_as_its_real_runs_end() {
        // The generic adapter reports a started command's failure as
        // unknown effects; the preview of the same kind must end the same.
        let mut any = retrying_slot("script", true);
        any.kind = Some(crate::agent::AgentKind::Generic);
        let failures = vec![SimulatedFailure::of(SemanticCode::ProviderOverloaded); 2];
        let steps = simulate(&[any, retrying_slot("b", true)], &failures, start());
        assert_eq!(steps.len(), 1, "no retry and no skip: {steps:?}");
        assert_eq!(
            steps[0].gate,
            gate(&EffectContext {
                evidence_current: Some(true),
                ..EffectContext::unknown(false)
            }),
            "the gate refuses for the reason a real run gives"
        );
        assert!(!steps[0].decision.is_automatic());
        let mut claude = retrying_slot("claude", true);
        claude.kind = Some(crate::agent::AgentKind::ClaudeCode);
        let steps = simulate(&[claude], &failures, start());
        assert!(steps[0].decision.is_automatic(), "its policy applies");
    }

    #[test]
    fn route_starts_at_the_first_enabled_candidate_or_not_at_all() {
        let failures = [SimulatedFailure::of(SemanticCode::NetworkReset)];
        let candidates = [retrying_slot("off", false), retrying_slot("on", true)];
        assert_eq!(simulate(&candidates, &failures, start())[0].candidate, 1);
        let none = [retrying_slot("off", false)];
        assert!(simulate(&none, &failures, start()).is_empty());
    }

    #[test]
    fn a_class_the_code_does_not_have_is_refused_naming_the_field() {
        let with = |code, class| SimulatedFailure {
            class: Some(class),
            ..SimulatedFailure::of(code)
        };
        let failures = [
            with(SemanticCode::RateLimited, Class::Transient),
            with(SemanticCode::RateLimited, Class::Unclassified),
            with(SemanticCode::Unknown, Class::Transient),
            with(SemanticCode::PermissionDenied, Class::Hard),
            with(SemanticCode::QuotaExhausted, Class::Transient),
        ];
        let errors: Vec<String> = check_failures(&failures)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            errors,
            [
                "failures[2].class: `transient` contradicts code `unknown`, whose class is unclassified; a class may only be overridden to `unclassified` (low-confidence, stale or conflicting evidence)",
                "failures[3].class: `hard` contradicts code `permission_denied`, whose class is unclassified; a class may only be overridden to `unclassified` (low-confidence, stale or conflicting evidence)",
                "failures[4].class: `transient` contradicts code `quota_exhausted`, whose class is hard; a class may only be overridden to `unclassified` (low-confidence, stale or conflicting evidence)",
            ],
            "the code's own class and `unclassified` are accepted"
        );
    }

    #[test]
    fn an_impossible_class_is_never_honoured_even_unchecked() {
        // The app preview passes failures straight in: the code's class
        // still decides, so `unknown` can never be retried.
        let failure = SimulatedFailure {
            class: Some(Class::Transient),
            ..SimulatedFailure::of(SemanticCode::Unknown)
        };
        assert_eq!(failure.classification(start()).class, Class::Unclassified);
        let steps = simulate(&[retrying_slot("a", true)], &[failure], start());
        assert!(!steps[0].decision.is_automatic(), "{:?}", steps[0].decision);
        let made_unclassified = SimulatedFailure {
            class: Some(Class::Unclassified),
            ..SimulatedFailure::of(SemanticCode::RateLimited)
        };
        assert_eq!(
            made_unclassified.classification(start()).class,
            Class::Unclassified,
            "conflicting evidence can make any code unclassified"
        );
    }

    #[test]
    fn an_unknown_key_in_effect_is_refused_not_ignored() {
        let text = r#"{"code": "provider_overloaded", "effect": {"prompt_delivery": "confirmed",
            "assistant_output_seen": false, "tool_actvity_seen": true,
            "partial_result_seen": false, "evidence_current": true}}"#;
        let error = serde_json::from_str::<SimulatedFailure>(text).unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("unknown field `tool_actvity_seen`"),
            "a typo must not leave the effect looking safe: {error}"
        );
    }

    #[test]
    fn reset_offset_resolves_against_the_failure_instant() {
        let failure = SimulatedFailure {
            reset_in_seconds: Some(-5),
            ..SimulatedFailure::of(SemanticCode::UsageLimitReached)
        };
        let classification = failure.classification(start());
        assert_eq!(
            classification.reset_at,
            Some(start() - Duration::seconds(5))
        );
        assert_eq!(
            classification.class,
            Class::Hard,
            "class comes from the code"
        );
    }
}
