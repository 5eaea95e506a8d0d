//! Reading the old generic candidate action maps and normalizing them into
//! per-class policies exactly as the policy decision prescribes:
//!
//! - `try_next` → immediate skip for both classes;
//! - `stop` → immediate stop for both classes;
//! - `retry_same` → one retry after 5 s, then stop;
//! - a per-code rule applies to the class of its code; two rules that would
//!   give one class different policies are an error; codes outside provider
//!   policy (unclassified) or unknown to this build are errors.
//!
//! Classes with no rule and no `on_error` get the new-candidate default,
//! immediate skip, which is the old fallback behaviour.

use super::validate::FieldError;
use super::CURRENT_VERSION;
use super::{CandidateEntry, CandidatePolicy, ClassPolicy, Exhausted, PolicyDocument};
use crate::classification::{PolicyClass, SemanticCode};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Interval of the single retry `retry_same` stands for.
pub const RETRY_SAME_INTERVAL_SECONDS: u32 = 5;

/// The old document: no `version`, one generic action map per candidate.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(deny_unknown_fields)]
pub struct LegacyDocument {
    pub candidates: Vec<LegacyCandidate>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(deny_unknown_fields)]
pub struct LegacyCandidate {
    pub name: String,
    pub agent: String,
    #[serde(default = "enabled_by_default")]
    pub enabled: bool,
    /// The action for any error no rule names.
    #[serde(default)]
    pub on_error: Option<LegacyAction>,
    /// Actions by semantic code name; a `BTreeMap` so order is deterministic.
    #[serde(default)]
    pub rules: BTreeMap<String, LegacyAction>,
}

fn enabled_by_default() -> bool {
    true
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum LegacyAction {
    TryNext,
    Stop,
    RetrySame,
}

impl LegacyAction {
    pub fn as_str(self) -> &'static str {
        match self {
            LegacyAction::TryNext => "try_next",
            LegacyAction::Stop => "stop",
            LegacyAction::RetrySame => "retry_same",
        }
    }

    /// The class policy this action stands for.
    pub fn class_policy(self) -> ClassPolicy {
        match self {
            LegacyAction::TryNext => ClassPolicy::new(None, None, Exhausted::Skip),
            LegacyAction::Stop => ClassPolicy::new(None, None, Exhausted::Stop),
            LegacyAction::RetrySame => ClassPolicy::new(
                None,
                Some((1, RETRY_SAME_INTERVAL_SECONDS)),
                Exhausted::Stop,
            ),
        }
    }
}

/// Converts every candidate, collecting every error.
pub fn convert(document: &LegacyDocument) -> Result<PolicyDocument, Vec<FieldError>> {
    let mut errors = Vec::new();
    let mut candidates = Vec::new();
    for (index, candidate) in document.candidates.iter().enumerate() {
        match convert_candidate(&format!("candidates[{index}]"), candidate) {
            Ok(entry) => candidates.push(entry),
            Err(found) => errors.extend(found),
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    Ok(PolicyDocument {
        version: CURRENT_VERSION,
        candidates,
    })
}

fn convert_candidate(
    prefix: &str,
    candidate: &LegacyCandidate,
) -> Result<CandidateEntry, Vec<FieldError>> {
    let mut policy = candidate
        .on_error
        .map(|action| CandidatePolicy::both(action.class_policy()))
        .unwrap_or_else(CandidatePolicy::default_for_new_candidate);
    let (by_class, mut errors) = rules_by_class(prefix, &candidate.rules);
    for (class, rules) in by_class {
        match single_action(&rules) {
            Some(action) => *policy.section_mut(class) = action.class_policy(),
            None => errors.push(conflict(prefix, class, &rules)),
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    Ok(CandidateEntry {
        name: candidate.name.clone(),
        agent: candidate.agent.clone(),
        enabled: candidate.enabled,
        policy,
    })
}

type ClassRules = BTreeMap<PolicyClass, Vec<(SemanticCode, LegacyAction)>>;

/// Groups rules by the class of their code; unknown and unclassified codes
/// are errors.
fn rules_by_class(
    prefix: &str,
    rules: &BTreeMap<String, LegacyAction>,
) -> (ClassRules, Vec<FieldError>) {
    let mut by_class = ClassRules::new();
    let mut errors = Vec::new();
    for (name, &action) in rules {
        let path = format!("{prefix}.rules.{name}");
        let Some(code) = SemanticCode::parse(name) else {
            errors.push(FieldError::new(
                path,
                format!("unknown semantic code \"{name}\""),
            ));
            continue;
        };
        match code.class().policy_class() {
            Some(class) => by_class.entry(class).or_default().push((code, action)),
            None => errors.push(FieldError::new(
                path,
                format!("code \"{name}\" is outside provider policy (unclassified), so a rule cannot apply to it"),
            )),
        }
    }
    (by_class, errors)
}

fn single_action(rules: &[(SemanticCode, LegacyAction)]) -> Option<LegacyAction> {
    let (_, first) = rules.first()?;
    rules
        .iter()
        .all(|(_, action)| action == first)
        .then_some(*first)
}

fn conflict(
    prefix: &str,
    class: PolicyClass,
    rules: &[(SemanticCode, LegacyAction)],
) -> FieldError {
    let listed: Vec<String> = rules
        .iter()
        .map(|(code, action)| format!("{} → {}", code.as_str(), action.as_str()))
        .collect();
    FieldError::new(
        format!("{prefix}.rules"),
        format!(
            "conflicting rules for the {} class: {}; codes of one class must share one action",
            class.as_str(),
            listed.join(", ")
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::Retry;

    fn candidate(
        on_error: Option<LegacyAction>,
        rules: &[(&str, LegacyAction)],
    ) -> LegacyCandidate {
        LegacyCandidate {
            name: "opus".into(),
            agent: "claude-code".into(),
            enabled: true,
            on_error,
            rules: rules.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
        }
    }

    fn policy_of(candidate: LegacyCandidate) -> CandidatePolicy {
        let document = LegacyDocument {
            candidates: vec![candidate],
        };
        convert(&document).expect("converts").candidates[0]
            .policy
            .clone()
    }

    #[test]
    fn try_next_becomes_immediate_skip_for_both_classes() {
        let policy = policy_of(candidate(Some(LegacyAction::TryNext), &[]));
        assert_eq!(
            policy,
            CandidatePolicy::both(ClassPolicy::new(None, None, Exhausted::Skip))
        );
    }

    #[test]
    fn stop_becomes_immediate_stop_for_both_classes() {
        let policy = policy_of(candidate(Some(LegacyAction::Stop), &[]));
        assert_eq!(
            policy,
            CandidatePolicy::both(ClassPolicy::new(None, None, Exhausted::Stop))
        );
    }

    #[test]
    fn retry_same_becomes_one_retry_after_five_seconds_then_stop() {
        let policy = policy_of(candidate(Some(LegacyAction::RetrySame), &[]));
        for class in PolicyClass::ALL {
            let section = policy.section(class);
            assert_eq!(
                section.retry,
                Retry {
                    enabled: true,
                    max_retries: 1,
                    initial_interval_seconds: 5
                }
            );
            assert!(
                !section.wait_for_reset.enabled,
                "retry_same never waits for a reset"
            );
            assert_eq!(section.on_exhausted, Exhausted::Stop);
        }
    }

    #[test]
    fn code_rules_set_only_their_own_class() {
        let policy = policy_of(candidate(
            Some(LegacyAction::Stop),
            &[("rate_limited", LegacyAction::RetrySame)],
        ));
        assert_eq!(policy.transient, LegacyAction::RetrySame.class_policy());
        assert_eq!(
            policy.hard,
            ClassPolicy::new(None, None, Exhausted::Stop),
            "hard keeps the on_error action"
        );
    }

    #[test]
    fn classes_without_rule_or_default_skip_like_a_new_candidate() {
        let policy = policy_of(candidate(None, &[("quota_exhausted", LegacyAction::Stop)]));
        assert_eq!(
            policy.transient,
            ClassPolicy::new(None, None, Exhausted::Skip)
        );
        assert_eq!(policy.hard, ClassPolicy::new(None, None, Exhausted::Stop));
    }

    #[test]
    fn agreeing_rules_in_one_class_are_accepted() {
        let policy = policy_of(candidate(
            None,
            &[
                ("auth_invalid", LegacyAction::Stop),
                ("quota_exhausted", LegacyAction::Stop),
            ],
        ));
        assert_eq!(policy.hard, ClassPolicy::new(None, None, Exhausted::Stop));
    }

    #[test]
    fn conflicting_rules_in_one_class_are_an_error_listing_them_in_order() {
        let document = LegacyDocument {
            candidates: vec![candidate(
                None,
                &[
                    ("rate_limited", LegacyAction::TryNext),
                    ("provider_overloaded", LegacyAction::RetrySame),
                ],
            )],
        };
        assert_eq!(
            convert(&document),
            Err(vec![FieldError::new(
                "candidates[0].rules",
                "conflicting rules for the transient class: provider_overloaded → retry_same, rate_limited → try_next; codes of one class must share one action"
            )])
        );
    }

    #[test]
    fn unknown_and_unclassified_codes_are_errors_naming_the_rule() {
        let document = LegacyDocument {
            candidates: vec![candidate(
                None,
                &[
                    ("provider_exploded", LegacyAction::Stop),
                    ("invalid_request", LegacyAction::TryNext),
                ],
            )],
        };
        assert_eq!(
            convert(&document),
            Err(vec![
                FieldError::new(
                    "candidates[0].rules.invalid_request",
                    "code \"invalid_request\" is outside provider policy (unclassified), so a rule cannot apply to it"
                ),
                FieldError::new(
                    "candidates[0].rules.provider_exploded",
                    "unknown semantic code \"provider_exploded\""
                ),
            ])
        );
    }
}
