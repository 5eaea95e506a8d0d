//! Profiles and their ordered candidates, as stored and as the editor sends
//! them, and the profile document ([`document`]) that carries one in a file,
//! with the changes an import would make ([`diff`]).

pub mod diff;
pub mod document;
pub mod names;
pub mod words;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::agent::AgentSpec;
use crate::policy::{CandidatePolicy, FieldError};

/// A candidate as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct Candidate {
    pub id: u32,
    pub name: String,
    pub enabled: bool,
    pub agent: AgentSpec,
    pub policy: CandidatePolicy,
    /// Bumped whenever the policy document changes.
    pub policy_revision: u32,
    /// The account it runs as (its label, or derived when it was saved);
    /// `None` in a route snapshot taken before accounts existed.
    #[serde(default)]
    pub account: Option<crate::account::AccountId>,
}

/// A candidate as the editor sends it; `id` is `None` for a new one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct CandidateInput {
    pub id: Option<u32>,
    pub name: String,
    pub enabled: bool,
    pub agent: AgentSpec,
    pub policy: CandidatePolicy,
}

impl CandidateInput {
    /// A new (not yet stored) enabled candidate.
    pub fn new(name: impl Into<String>, agent: AgentSpec, policy: CandidatePolicy) -> Self {
        CandidateInput {
            id: None,
            name: name.into(),
            enabled: true,
            agent,
            policy,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct Profile {
    pub id: u32,
    pub name: String,
    /// Send it back with `save_candidates`; a mismatch is a conflict.
    pub revision: u32,
    pub candidates: Vec<Candidate>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// Longest profile name, in characters.
pub const MAX_NAME_CHARS: usize = 80;

/// The name as stored (trimmed, NFC; see [`names`]), or why it cannot name
/// a profile.
pub fn validate_name(name: &str) -> Result<String, FieldError> {
    if let Some(e) = names::control_error("name", name.trim(), "a profile name") {
        return Err(e);
    }
    let name = names::normalize(name);
    if name.is_empty() {
        return Err(FieldError::new("name", "a profile needs a name"));
    }
    if name.chars().count() > MAX_NAME_CHARS {
        return Err(FieldError::new(
            "name",
            format!("a profile name is at most {MAX_NAME_CHARS} characters"),
        ));
    }
    Ok(name)
}

/// Every problem a save of `candidates` would be refused for, at its path
/// (`candidates[1].name`, `candidates[0].agent.program`, …): the list as
/// the versioned policy document it is (names, duplicates, every policy
/// limit) and each agent spec. The save's check, and the editor's live
/// check of what only the whole list can tell (duplicate names).
pub fn check_candidates(candidates: &[CandidateInput]) -> Vec<FieldError> {
    use crate::policy::{validate::validate_document, CandidateEntry, PolicyDocument};
    let document = PolicyDocument {
        version: crate::policy::CURRENT_VERSION,
        candidates: candidates
            .iter()
            .map(|c| CandidateEntry {
                name: c.name.clone(),
                agent: c.agent.kind.slug().to_string(),
                enabled: c.enabled,
                policy: c.policy.clone(),
            })
            .collect(),
    };
    let mut errors = validate_document(&document);
    for (i, c) in candidates.iter().enumerate() {
        let index = u32::try_from(i).unwrap_or(u32::MAX);
        let prefix = format!("candidates[{index}].agent");
        errors.extend(c.agent.validate(&prefix));
        errors.extend(c.agent.left_out(&prefix));
    }
    errors
}
