//! Secret-looking `env` values at rest. Where a keyring runs (and is
//! unlocked), a save puts each value the sanitizer would redact
//! ([`crate::agent::looks_secret`]) into it and the database keeps a
//! reference; where none runs, the value stays in the database file, which
//! only its owner can read (0600). The runner reads referenced values when
//! it launches an agent ([`crate::keyring::resolve_env`]). Values found in
//! the file while a keyring runs are moved into it when the engine opens.
//!
//! Each reference belongs to one candidate's variable: a save may keep the
//! candidate's own references and nothing else, and an item no candidate
//! refers to any more is deleted from the keyring after the save.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::{Engine, EngineError};
use crate::agent::{keyring_reference, keyring_value, looks_secret, AgentSpec};
use crate::keyring::{Keyring, KeyringError};
use crate::profile::{Candidate, CandidateInput, Profile};

/// Where a secret-looking variable's value is kept, for the editor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum SecretPlace {
    /// In the keyring; the database holds a reference.
    Keyring,
    /// Typed but not saved yet: saving puts it in the keyring.
    KeyringOnSave,
    /// In the database file, which only its owner can read.
    DatabaseFile,
}

/// A variable whose value is secret, where it is kept, and that in words.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
pub struct SecretEnv {
    pub name: String,
    pub place: SecretPlace,
    /// `in the keyring`, `in the database file, readable only by you: no
    /// keyring is running`, …
    pub note: String,
}

/// The secret variables of `env` (kept in the keyring, or looking like a
/// key) and where each is kept, or would be once saved.
pub fn secret_places(env: &BTreeMap<String, String>) -> Vec<SecretEnv> {
    let mut keyring: Option<Result<(), KeyringError>> = None;
    env.iter()
        .filter(|(name, value)| crate::agent::is_secret_value(name, value))
        .map(|(name, value)| {
            let (place, note) = if keyring_reference(value).is_some() {
                (SecretPlace::Keyring, "in the keyring".to_string())
            } else {
                match keyring.get_or_insert_with(Keyring::available) {
                    Ok(()) => (
                        SecretPlace::KeyringOnSave,
                        "goes to the keyring when you save".to_string(),
                    ),
                    Err(why) => (
                        SecretPlace::DatabaseFile,
                        format!("in the database file, readable only by you: {why}"),
                    ),
                }
            };
            SecretEnv {
                name: name.clone(),
                place,
                note,
            }
        })
        .collect()
}

/// Keyring items made for a save, deleted again if the save does not
/// happen.
pub(super) struct Stowed {
    keyring: Option<Keyring>,
    created: Vec<String>,
}

impl Stowed {
    /// The save did not happen: its new items go.
    pub(super) fn undo(self) {
        if let Some(keyring) = &self.keyring {
            for reference in &self.created {
                forget(keyring, reference);
            }
        }
    }
}

impl Engine {
    /// Before a save to profile `profile` (`existing`: as stored): each
    /// secret-looking value of `inputs` goes to the keyring when one can
    /// be used, replaced by its reference. A reference in `inputs` must be
    /// the candidate's own, for the same variable.
    pub(super) fn stow_secrets(
        &self,
        profile: &str,
        inputs: &mut [CandidateInput],
        existing: Option<&Profile>,
    ) -> Result<Stowed, EngineError> {
        check_references(inputs, existing)?;
        let mut stowed = Stowed {
            keyring: None,
            created: Vec::new(),
        };
        let wanted = inputs
            .iter()
            .any(|c| c.agent.env.iter().any(|(n, v)| plain_secret(n, v)));
        if !wanted {
            return Ok(stowed);
        }
        match Keyring::open() {
            Ok(keyring) => stowed.keyring = Some(keyring),
            Err(why) => {
                tracing::info!("secret values stay in the database file: {why}");
                return Ok(stowed);
            }
        }
        for c in inputs.iter_mut() {
            if let Err(e) = stow_agent(&mut stowed, profile, &c.name, &mut c.agent) {
                stowed.undo();
                return Err(EngineError::Io(format!(
                    "could not put a value of candidate {:?} in the keyring: {e}; nothing was saved",
                    c.name
                )));
            }
        }
        Ok(stowed)
    }

    /// After a save: deletes the keyring items `before` referred to that
    /// no candidate of `after` refers to any more.
    pub(super) fn release_secrets(&self, before: &[Candidate], after: &[AgentSpec]) {
        let kept: BTreeSet<&str> = after.iter().flat_map(references).collect();
        let gone: Vec<&str> = before
            .iter()
            .flat_map(|c| references(&c.agent))
            .filter(|r| !kept.contains(r))
            .collect();
        if gone.is_empty() {
            return;
        }
        match Keyring::open() {
            Ok(keyring) => gone.iter().for_each(|r| forget(&keyring, r)),
            Err(why) => tracing::warn!(
                "{} keyring entries no longer used could not be removed: {why}",
                gone.len()
            ),
        }
    }

    /// Moves secret values found in the database file into the keyring,
    /// when one can be used, and scrubs them from the file. Nothing is
    /// asked of D-Bus when the file holds none.
    pub(super) fn move_secrets_to_keyring(&self) -> Result<(), EngineError> {
        let profiles = self.store().list_profiles()?;
        let holding: Vec<(&Profile, &Candidate)> = profiles
            .iter()
            .flat_map(|p| p.candidates.iter().map(move |c| (p, c)))
            .filter(|(_, c)| c.agent.env.iter().any(|(n, v)| plain_secret(n, v)))
            .collect();
        if holding.is_empty() {
            return Ok(());
        }
        let keyring = match Keyring::open() {
            Ok(keyring) => keyring,
            Err(why) => {
                tracing::info!("secret values stay in the database file: {why}");
                return Ok(());
            }
        };
        let mut stowed = Stowed {
            keyring: Some(keyring),
            created: Vec::new(),
        };
        let mut moved = 0;
        for (profile, candidate) in holding {
            let mut agent = candidate.agent.clone();
            let first = stowed.created.len();
            if let Err(e) = stow_agent(&mut stowed, &profile.name, &candidate.name, &mut agent) {
                tracing::warn!("could not move secret values into the keyring: {e}");
                break;
            }
            let swapped = self
                .store()
                .swap_candidate_agent(candidate.id, &candidate.agent, &agent);
            match swapped {
                Ok(true) => moved += stowed.created.len() - first,
                // Saved meanwhile: that save placed its values itself.
                Ok(false) | Err(_) => {
                    let made = stowed.created.split_off(first);
                    if let Some(keyring) = &stowed.keyring {
                        made.iter().for_each(|r| forget(keyring, r));
                    }
                    swapped?;
                }
            }
        }
        if moved > 0 {
            self.store().scrub_log()?;
            tracing::warn!(
                "moved {moved} secret value{} from the database file into the keyring",
                if moved == 1 { "" } else { "s" }
            );
        }
        Ok(())
    }

    /// Profile `id`'s candidates with the values kept in the keyring read
    /// back, for a copy that gets keyring entries of its own.
    pub(super) fn with_secret_values(
        &self,
        mut doc: crate::profile::document::ProfileDocument,
    ) -> Result<crate::profile::document::ProfileDocument, EngineError> {
        for c in &mut doc.candidates {
            c.agent.env = crate::keyring::resolve_env(&c.agent.env).map_err(|why| {
                EngineError::Io(format!("cannot copy candidate {:?}: {why}", c.name))
            })?;
        }
        Ok(doc)
    }
}

/// A value to move to the keyring: secret-looking, not a reference yet.
fn plain_secret(name: &str, value: &str) -> bool {
    keyring_reference(value).is_none() && looks_secret(name, value)
}

/// Puts `agent`'s plain secret values into the keyring, replacing each by
/// its reference; the new references are added to `stowed`.
fn stow_agent(
    stowed: &mut Stowed,
    profile: &str,
    candidate: &str,
    agent: &mut AgentSpec,
) -> Result<(), KeyringError> {
    let Some(keyring) = &stowed.keyring else {
        return Ok(());
    };
    for (name, value) in &mut agent.env {
        if !plain_secret(name, value) {
            continue;
        }
        let reference = crate::keyring::new_reference()?;
        let label = format!("Recourse: {name} of candidate {candidate:?} in profile {profile:?}");
        let attributes = [
            ("variable", name.as_str()),
            ("candidate", candidate),
            ("profile", profile),
        ];
        keyring.store(&reference, &label, &attributes, value)?;
        stowed.created.push(reference.clone());
        *value = keyring_value(&reference);
    }
    Ok(())
}

/// The keyring references `agent`'s values stand for.
fn references(agent: &AgentSpec) -> impl Iterator<Item = &str> {
    agent.env.values().filter_map(|v| keyring_reference(v))
}

fn forget(keyring: &Keyring, reference: &str) {
    if let Err(e) = keyring.delete(reference) {
        tracing::warn!("could not remove a keyring entry no longer used: {e}");
    }
}

/// Every reference in `inputs` is the stored candidate's own, for the same
/// variable: a document or an editor cannot point a candidate at another
/// candidate's keyring entry.
fn check_references(
    inputs: &[CandidateInput],
    existing: Option<&Profile>,
) -> Result<(), EngineError> {
    let mut errors = Vec::new();
    for (index, c) in inputs.iter().enumerate() {
        let stored =
            c.id.and_then(|id| existing?.candidates.iter().find(|s| s.id == id));
        for (name, value) in &c.agent.env {
            if keyring_reference(value).is_none() {
                continue;
            }
            let own = stored.and_then(|s| s.agent.env.get(name)) == Some(value);
            if !own {
                errors.push(crate::policy::FieldError::new(
                    format!("candidates[{index}].agent.env.{name}"),
                    "refers to a keyring entry this candidate does not have; type the value",
                ));
            }
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(EngineError::Validation(errors))
    }
}
