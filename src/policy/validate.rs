//! Field-addressed validation of candidate policies and policy documents.
//!
//! Validation never stops at the first problem: it returns every error, each
//! with the field path a UI or a person can jump to
//! (`candidates[2].hard.retry.max_retries`). Disabled sections are not
//! checked; they are normalized away when stored.

use super::{
    AutoContinue, CandidatePolicy, ClassPolicy, PolicyDocument, RepeatedFailure, ResetWait, Retry,
    CONTINUATIONS_RANGE, CURRENT_VERSION, INITIAL_INTERVAL_RANGE, MAX_DELAY_SECONDS,
    REPEAT_THRESHOLD_RANGE, RESET_WAIT_RANGE, RETRIES_RANGE,
};
use crate::agent::AgentKind;
use crate::amount::too_few_or_many;
use crate::classification::PolicyClass;
use crate::profile::names;
use crate::timing::words;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One problem at one field path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct FieldError {
    pub path: String,
    pub message: String,
}

impl FieldError {
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> FieldError {
        FieldError {
            path: path.into(),
            message: message.into(),
        }
    }
}

impl std::fmt::Display for FieldError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

/// Why a policy document could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, specta::Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum PolicyError {
    /// The text is not JSON at all.
    #[error("not valid JSON: {message}")]
    Syntax { message: String },
    /// JSON, but not a document to read field by field: not an object, a
    /// key given twice, no `version` on a current document. (A field
    /// unknown, missing or of the wrong type is one of `Invalid`'s.)
    #[error("{path}: {message}")]
    Shape { path: String, message: String },
    /// A `version` this build does not read.
    #[error("version: {}", unsupported_version(found))]
    UnsupportedVersion { found: String },
    /// Fields unknown, missing, of the wrong type or breaking the rules;
    /// every problem is listed.
    #[error("{} invalid field(s): {}", errors.len(), join(errors))]
    Invalid { errors: Vec<FieldError> },
}

fn unsupported_version(found: &str) -> String {
    format!(
        "unsupported policy document version {found}; this build reads version {CURRENT_VERSION}"
    )
}

fn join(errors: &[FieldError]) -> String {
    let lines: Vec<String> = errors.iter().map(FieldError::to_string).collect();
    lines.join("; ")
}

impl PolicyError {
    /// Every problem as `path: message` items, whatever the variant.
    pub fn errors(&self) -> Vec<FieldError> {
        match self {
            PolicyError::Syntax { .. } => vec![FieldError::new("document", self.to_string())],
            PolicyError::Shape { path, message } => vec![FieldError::new(path, message)],
            PolicyError::UnsupportedVersion { found } => {
                vec![FieldError::new("version", unsupported_version(found))]
            }
            PolicyError::Invalid { errors } => errors.clone(),
        }
    }
}

/// Every error in a current-version document.
pub fn validate_document(document: &PolicyDocument) -> Vec<FieldError> {
    validate_read(document, &|_| false)
}

/// [`validate_document`] of a document read with stand-ins: a check that
/// reads a place `stood_in` says is not the person's value is skipped, so
/// no problem is made up from a stand-in. The checks read a candidate's
/// name (and the other names), its agent, and each section as a whole.
pub fn validate_read(
    document: &PolicyDocument,
    stood_in: &dyn Fn(&str) -> bool,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if document.version != CURRENT_VERSION {
        errors.push(FieldError::new(
            "version",
            unsupported_version(&document.version.to_string()),
        ));
    }
    if document.candidates.is_empty() {
        errors.push(FieldError::new(
            "candidates",
            "must list at least one candidate",
        ));
    }
    // By what a name looks like: a zero-width or normalization variant of
    // a name is the same name.
    let mut first_index_by_name: BTreeMap<String, usize> = BTreeMap::new();
    for (index, entry) in document.candidates.iter().enumerate() {
        let prefix = format!("candidates[{index}]");
        let name_path = format!("{prefix}.name");
        if !stood_in(&name_path) {
            check_name(&mut errors, &mut first_index_by_name, document, index);
        }
        let agent_path = format!("{prefix}.agent");
        if !stood_in(&agent_path) {
            check_text(&mut errors, &agent_path, &entry.agent);
        }
        errors.extend(sections(&prefix, &entry.policy, stood_in));
        if !stood_in(&agent_path) && !stood_in(&format!("{prefix}.transient")) {
            errors.extend(check_resumes(&prefix, entry));
        }
    }
    errors
}

/// The name of candidate `index`: given, without control characters, and
/// not one an earlier candidate has (by what it looks like;
/// `first_index_by_name` holds the names checked so far).
fn check_name(
    errors: &mut Vec<FieldError>,
    first_index_by_name: &mut BTreeMap<String, usize>,
    document: &PolicyDocument,
    index: usize,
) {
    let entry = &document.candidates[index];
    let name_path = format!("candidates[{index}].name");
    check_text(errors, &name_path, &entry.name);
    errors.extend(names::control_error(
        &name_path,
        &entry.name,
        "a candidate name",
    ));
    let key = names::look_alike_key(&entry.name);
    if let Some(&first) = first_index_by_name.get(&key) {
        let first_name = &document.candidates[first].name;
        let why = names::looks_like(&entry.name, first_name)
            .map(|why| format!("; {why} from {first_name:?}"))
            .unwrap_or_default();
        errors.push(FieldError::new(
            name_path,
            format!(
                "duplicate candidate name {:?} (also candidates[{first}]){why}",
                entry.name
            ),
        ));
    } else {
        first_index_by_name.insert(key, index);
    }
}

/// Automatic continuation resumes the agent's own session: a candidate
/// whose kind cannot resume one (or is not a kind Recourse knows) cannot
/// have it.
fn check_resumes(prefix: &str, entry: &super::CandidateEntry) -> Option<FieldError> {
    if !entry.policy.transient.auto_continue.enabled {
        return None;
    }
    let why = match AgentKind::from_slug(&entry.agent) {
        Some(kind) if kind.descriptor().resume.is_some() => return None,
        Some(kind) => format!(
            "{} candidates cannot resume a session, so they cannot continue one \
             automatically; turn it off, or choose a CLI that resumes its sessions",
            kind.descriptor().label
        ),
        None => format!(
            "agent {:?} is not a kind Recourse knows, so whether it can resume a session is \
             unknown; automatic continuation needs one of {}",
            entry.agent,
            resuming_kinds()
        ),
    };
    Some(FieldError::new(
        format!("{prefix}.transient.auto_continue.enabled"),
        why,
    ))
}

/// The slugs of the kinds that resume their sessions: `claude-code, codex, …`.
fn resuming_kinds() -> String {
    let slugs: Vec<&str> = AgentKind::ALL
        .into_iter()
        .filter(|k| k.descriptor().resume.is_some())
        .map(|k| k.slug())
        .collect();
    slugs.join(", ")
}

fn check_text(errors: &mut Vec<FieldError>, path: &str, value: &str) {
    if value.trim().is_empty() {
        errors.push(FieldError::new(path, "must not be empty"));
    }
}

/// Every error in one candidate policy; paths start with `prefix`
/// (empty for a bare policy).
pub fn validate_policy(prefix: &str, policy: &CandidatePolicy) -> Vec<FieldError> {
    sections(prefix, policy, &|_| false)
}

/// Each section of `policy` that no stand-in is in: its checks read only
/// the section's own fields.
fn sections(
    prefix: &str,
    policy: &CandidatePolicy,
    stood_in: &dyn Fn(&str) -> bool,
) -> Vec<FieldError> {
    let mut errors: Vec<FieldError> = PolicyClass::ALL
        .into_iter()
        .map(|class| (class, join_path(prefix, class.as_str())))
        .filter(|(_, path)| !stood_in(path))
        .flat_map(|(class, path)| validate_class(&path, class, policy.section(class)))
        .collect();
    if !stood_in(&join_path(prefix, "unclassified")) {
        let path = join_path(prefix, "unclassified.repeated_failure");
        errors.extend(validate_repeated_failure(
            &path,
            policy.unclassified.repeated_failure,
        ));
    }
    errors
}

fn join_path(prefix: &str, field: &str) -> String {
    if prefix.is_empty() {
        field.to_string()
    } else {
        format!("{prefix}.{field}")
    }
}

fn validate_class(prefix: &str, class: PolicyClass, policy: &ClassPolicy) -> Vec<FieldError> {
    let mut errors =
        validate_reset_wait(&format!("{prefix}.wait_for_reset"), policy.wait_for_reset);
    errors.extend(validate_retry(&format!("{prefix}.retry"), policy.retry));
    errors.extend(validate_auto_continue(
        &format!("{prefix}.auto_continue"),
        class,
        policy.auto_continue,
    ));
    errors
}

/// Automatic continuation answers a transient failure only (a hard one
/// needs a reset or a person), with a budget of 1–5 continuations.
fn validate_auto_continue(
    prefix: &str,
    class: PolicyClass,
    auto: AutoContinue,
) -> Option<FieldError> {
    if !auto.enabled {
        return None;
    }
    if class != PolicyClass::Transient {
        return Some(FieldError::new(
            format!("{prefix}.enabled"),
            format!(
                "automatic continuation applies to transient failures only; a {} failure needs \
                 its reset or a person",
                class.as_str()
            ),
        ));
    }
    (!CONTINUATIONS_RANGE.contains(&auto.max_continuations)).then(|| {
        FieldError::new(
            format!("{prefix}.max_continuations"),
            format!(
                "must be {}–{} continuations when enabled {}",
                CONTINUATIONS_RANGE.start(),
                CONTINUATIONS_RANGE.end(),
                too_few_or_many(*CONTINUATIONS_RANGE.start(), auto.max_continuations)
            ),
        )
    })
}

fn validate_repeated_failure(prefix: &str, repeated: RepeatedFailure) -> Option<FieldError> {
    let threshold = repeated.threshold()?;
    (!REPEAT_THRESHOLD_RANGE.contains(&threshold)).then(|| {
        FieldError::new(
            format!("{prefix}.threshold"),
            format!(
                "must be {}–{} identical failures when enabled {}",
                REPEAT_THRESHOLD_RANGE.start(),
                REPEAT_THRESHOLD_RANGE.end(),
                too_few_or_many(*REPEAT_THRESHOLD_RANGE.start(), threshold)
            ),
        )
    })
}

fn validate_reset_wait(prefix: &str, wait: ResetWait) -> Vec<FieldError> {
    if !wait.enabled || RESET_WAIT_RANGE.contains(&wait.max_wait_seconds) {
        return Vec::new();
    }
    vec![FieldError::new(
        format!("{prefix}.max_wait_seconds"),
        words::outside(&RESET_WAIT_RANGE, wait.max_wait_seconds),
    )]
}

fn validate_retry(prefix: &str, retry: Retry) -> Vec<FieldError> {
    if !retry.enabled {
        return Vec::new();
    }
    let mut errors = Vec::new();
    if !RETRIES_RANGE.contains(&retry.max_retries) {
        errors.push(FieldError::new(
            format!("{prefix}.max_retries"),
            format!(
                "must be {}–{} when enabled {}",
                RETRIES_RANGE.start(),
                RETRIES_RANGE.end(),
                too_few_or_many(*RETRIES_RANGE.start(), retry.max_retries)
            ),
        ));
    }
    if !INITIAL_INTERVAL_RANGE.contains(&retry.initial_interval_seconds) {
        errors.push(FieldError::new(
            format!("{prefix}.initial_interval_seconds"),
            words::outside(&INITIAL_INTERVAL_RANGE, retry.initial_interval_seconds),
        ));
    }
    if errors.is_empty() {
        errors.extend(check_longest_delay(prefix, retry));
    }
    errors
}

/// The last retry's delay, `initial × 2^(max_retries − 1)`, must fit in 24 h.
fn check_longest_delay(prefix: &str, retry: Retry) -> Option<FieldError> {
    let exponent = retry.max_retries - 1;
    let longest = u64::from(retry.initial_interval_seconds) << exponent;
    if longest <= u64::from(MAX_DELAY_SECONDS) {
        return None;
    }
    Some(FieldError::new(
        prefix,
        format!(
            "the last retry would wait {} (the first delay, {}, doubled {exponent} times), \
             longer than the {} limit; use fewer retries or a shorter first delay",
            words::exact(longest),
            words::exact(u64::from(retry.initial_interval_seconds)),
            words::exact(u64::from(MAX_DELAY_SECONDS))
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::{CandidateEntry, Exhausted, UnclassifiedPolicy};

    fn retrying(max_retries: u32, initial_interval_seconds: u32) -> CandidatePolicy {
        let mut policy = CandidatePolicy::default_for_new_candidate();
        policy.hard.retry = Retry {
            enabled: true,
            max_retries,
            initial_interval_seconds,
        };
        policy
    }

    fn document(policies: Vec<CandidatePolicy>) -> PolicyDocument {
        let candidates = policies
            .into_iter()
            .enumerate()
            .map(|(i, policy)| CandidateEntry {
                name: format!("c{i}"),
                agent: "simulated".into(),
                enabled: true,
                policy,
            })
            .collect();
        PolicyDocument {
            version: CURRENT_VERSION,
            candidates,
        }
    }

    #[test]
    fn zero_retries_when_enabled_names_the_field_and_value() {
        let doc = document(vec![
            CandidatePolicy::default_for_new_candidate(),
            CandidatePolicy::default_for_new_candidate(),
            retrying(0, 5),
        ]);
        let errors = validate_document(&doc);
        assert_eq!(
            errors,
            vec![FieldError::new(
                "candidates[2].hard.retry.max_retries",
                "must be 1–10 when enabled (0 is too few)"
            )]
        );
    }

    #[test]
    fn policy_paths_continue_the_caller_prefix_directly() {
        let errors = validate_policy("profiles[1].candidates[2]", &retrying(0, 5));
        assert_eq!(
            errors,
            vec![FieldError::new(
                "profiles[1].candidates[2].hard.retry.max_retries",
                "must be 1–10 when enabled (0 is too few)"
            )],
            "a candidate's class sections sit directly under its prefix"
        );
    }

    #[test]
    fn all_errors_are_returned_not_just_the_first() {
        let mut policy = retrying(11, 0);
        policy.transient.wait_for_reset = ResetWait {
            enabled: true,
            max_wait_seconds: 604_801,
        };
        let errors = validate_policy("", &policy);
        let paths: Vec<&str> = errors.iter().map(|e| e.path.as_str()).collect();
        assert_eq!(
            paths,
            vec![
                "transient.wait_for_reset.max_wait_seconds",
                "hard.retry.max_retries",
                "hard.retry.initial_interval_seconds"
            ]
        );
    }

    #[test]
    fn limits_are_inclusive_at_both_ends() {
        for (retries, interval) in [(1, 1), (10, 84), (1, 3600), (5, 2700)] {
            let errors = validate_policy("", &retrying(retries, interval));
            assert!(
                errors.is_empty(),
                "{retries} × {interval}s is within limits: {errors:?}"
            );
        }
        let mut policy = CandidatePolicy::default_for_new_candidate();
        for max_wait_seconds in [1, 604_800] {
            policy.transient.wait_for_reset = ResetWait {
                enabled: true,
                max_wait_seconds,
            };
            assert!(
                validate_policy("", &policy).is_empty(),
                "{max_wait_seconds}s"
            );
        }
    }

    #[test]
    fn a_refused_delay_or_wait_is_said_in_durations() {
        let mut policy = retrying(3, 7_200);
        policy.transient.wait_for_reset = ResetWait {
            enabled: true,
            max_wait_seconds: 0,
        };
        let said: Vec<(String, String)> = validate_policy("c", &policy)
            .into_iter()
            .map(|e| (e.path, e.message))
            .collect();
        assert_eq!(
            said,
            [
                (
                    "c.transient.wait_for_reset.max_wait_seconds".to_string(),
                    "must be at least 1 s (0 s is too short)".to_string()
                ),
                (
                    "c.hard.retry.initial_interval_seconds".to_string(),
                    // Typed as "2 h", read back as 2 h, not as 7200.
                    "must be at most 1 h (2 h is too long)".to_string()
                ),
            ]
        );
    }

    #[test]
    fn last_delay_over_24_hours_is_rejected() {
        let errors = validate_policy("", &retrying(10, 3600));
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert_eq!(errors[0].path, "hard.retry");
        assert_eq!(
            errors[0].message,
            "the last retry would wait 21 d 8 h (the first delay, 1 h, doubled 9 times), longer than \
             the 1 d limit; use fewer retries or a shorter first delay"
        );
    }

    #[test]
    fn last_delay_of_exactly_24_hours_is_allowed() {
        // 2700 s × 2^5 = 86400 s.
        assert!(validate_policy("", &retrying(6, 2700)).is_empty());
    }

    #[test]
    fn disabled_sections_are_not_checked() {
        let mut policy = CandidatePolicy::default_for_new_candidate();
        policy.hard.retry = Retry {
            enabled: false,
            max_retries: 99,
            initial_interval_seconds: 0,
        };
        policy.hard.on_exhausted = Exhausted::Stop;
        assert!(validate_policy("", &policy).is_empty());
    }

    #[test]
    fn a_repeat_threshold_outside_2_to_10_names_the_field_and_the_range() {
        for threshold in [0, 1, 11, u32::MAX] {
            let mut policy = CandidatePolicy::default_for_new_candidate();
            policy.unclassified = UnclassifiedPolicy::skip_after(threshold);
            assert_eq!(
                validate_policy("candidates[1]", &policy),
                vec![FieldError::new(
                    "candidates[1].unclassified.repeated_failure.threshold",
                    format!(
                        "must be 2–10 identical failures when enabled ({threshold} is too {})",
                        if threshold < 2 { "few" } else { "many" }
                    )
                )],
                "one failure is not a repeat, and more than ten is refused"
            );
        }
        for threshold in [2, 10] {
            let mut policy = CandidatePolicy::default_for_new_candidate();
            policy.unclassified = UnclassifiedPolicy::skip_after(threshold);
            assert!(validate_policy("", &policy).is_empty(), "{threshold}");
        }
        let mut off = CandidatePolicy::default_for_new_candidate();
        off.unclassified.repeated_failure = RepeatedFailure {
            enabled: false,
            threshold: 99,
        };
        assert!(
            validate_policy("", &off).is_empty(),
            "a disabled exception is not checked; it is stored normalized"
        );
    }

    #[test]
    fn empty_names_duplicates_and_empty_lists_are_reported() {
        let mut doc = document(vec![
            CandidatePolicy::default_for_new_candidate(),
            CandidatePolicy::default_for_new_candidate(),
        ]);
        doc.candidates[1].name = "c0".into();
        doc.candidates[0].agent = " ".into();
        let errors = validate_document(&doc);
        assert_eq!(
            errors,
            vec![
                FieldError::new("candidates[0].agent", "must not be empty"),
                FieldError::new(
                    "candidates[1].name",
                    "duplicate candidate name \"c0\" (also candidates[0])"
                ),
            ]
        );
        let empty = document(Vec::new());
        assert_eq!(
            validate_document(&empty),
            vec![FieldError::new(
                "candidates",
                "must list at least one candidate"
            )]
        );
    }

    fn continuing(max_continuations: u32) -> CandidatePolicy {
        let mut policy = CandidatePolicy::default_for_new_candidate();
        policy.transient.auto_continue = AutoContinue {
            enabled: true,
            max_continuations,
        };
        policy
    }

    #[test]
    fn a_continuation_budget_outside_1_to_5_is_refused_at_its_field() {
        for (budget, error) in [
            (
                0,
                Some("must be 1–5 continuations when enabled (0 is too few)"),
            ),
            (1, None),
            (5, None),
            (
                6,
                Some("must be 1–5 continuations when enabled (6 is too many)"),
            ),
        ] {
            let errors = validate_policy("candidates[0]", &continuing(budget));
            let expected: Vec<FieldError> = error
                .map(|m| {
                    FieldError::new("candidates[0].transient.auto_continue.max_continuations", m)
                })
                .into_iter()
                .collect();
            assert_eq!(errors, expected, "budget {budget}");
        }
        let mut off = CandidatePolicy::default_for_new_candidate();
        off.transient.auto_continue.max_continuations = 99;
        assert!(
            validate_policy("", &off).is_empty(),
            "a switched-off option is not checked"
        );
    }

    #[test]
    fn automatic_continuation_is_refused_in_the_hard_section() {
        let mut policy = CandidatePolicy::default_for_new_candidate();
        policy.hard.auto_continue = AutoContinue::ON;
        assert_eq!(
            validate_policy("", &policy),
            vec![FieldError::new(
                "hard.auto_continue.enabled",
                "automatic continuation applies to transient failures only; a hard failure \
                 needs its reset or a person"
            )]
        );
    }

    #[test]
    fn automatic_continuation_on_a_kind_that_cannot_resume_names_the_kind() {
        let mut doc = document(vec![continuing(2), continuing(2), continuing(2)]);
        doc.candidates[0].agent = "claude-code".into();
        doc.candidates[2].agent = "gemini-cli".into();
        assert_eq!(
            validate_document(&doc),
            vec![
                FieldError::new(
                    "candidates[1].transient.auto_continue.enabled",
                    "Simulated provider candidates cannot resume a session, so they cannot \
                     continue one automatically; turn it off, or choose a CLI that resumes its \
                     sessions"
                ),
                FieldError::new(
                    "candidates[2].transient.auto_continue.enabled",
                    "agent \"gemini-cli\" is not a kind Recourse knows, so whether it can resume \
                     a session is unknown; automatic continuation needs one of claude-code, \
                     codex, gemini, opencode"
                ),
            ],
            "claude-code resumes its sessions; the simulated provider and an unknown agent do not"
        );
    }

    #[test]
    fn every_error_kind_flattens_to_path_and_message() {
        let version = PolicyError::UnsupportedVersion { found: "2".into() };
        assert_eq!(
            version.errors(),
            vec![FieldError::new(
                "version",
                "unsupported policy document version 2; this build reads version 1"
            )]
        );
        let invalid = PolicyError::Invalid {
            errors: vec![
                FieldError::new("candidates", "must list at least one candidate"),
                FieldError::new("version", "unsupported"),
            ],
        };
        assert_eq!(
            invalid.to_string(),
            "2 invalid field(s): candidates: must list at least one candidate; version: unsupported"
        );
        let syntax = PolicyError::Syntax {
            message: "EOF".into(),
        };
        assert_eq!(syntax.errors()[0].message, "not valid JSON: EOF");
    }
}
