//! The engine's API over profiles: list, read, create, rename, delete and
//! save their candidates, and the demo profile seeded on first start.

use super::{seed, Engine, EngineError, DEMO_PROFILE};
use crate::profile::names::quoted;
use crate::profile::{check_candidates, CandidateInput, Profile};
use crate::runner::readiness::Readiness;
use crate::store::profiles::SaveRefusal;
use crate::store::StoreError;

impl Engine {
    pub fn list_profiles(&self) -> Result<Vec<Profile>, EngineError> {
        Ok(self.store().list_profiles()?)
    }

    pub fn get_profile(&self, id: u32) -> Result<Profile, EngineError> {
        self.store()
            .get_profile(id)?
            .ok_or_else(|| EngineError::not_found("profile", id))
    }

    pub fn profile_by_name(&self, name: &str) -> Result<Profile, EngineError> {
        self.store()
            .profile_by_name(name)?
            .ok_or_else(|| EngineError::not_found("profile", format!("{name:?}")))
    }

    pub fn create_profile(&self, name: &str) -> Result<Profile, EngineError> {
        let name = self.distinct_name(name, None)?;
        let now = self.inner.clock.now();
        let id = self
            .store()
            .create_profile(&name, now)
            .map_err(|e| name_taken(e, &name))?;
        self.get_profile(id)
    }

    pub fn rename_profile(&self, id: u32, name: &str) -> Result<Profile, EngineError> {
        let name = self.distinct_name(name, Some(id))?;
        let now = self.inner.clock.now();
        let found = self
            .store()
            .rename_profile(id, &name, now)
            .map_err(|e| name_taken(e, &name))?;
        if !found {
            return Err(EngineError::not_found("profile", id));
        }
        self.get_profile(id)
    }

    pub fn delete_profile(&self, id: u32) -> Result<(), EngineError> {
        let before = self.get_profile(id)?;
        if !self.store().delete_profile(id)? {
            return Err(EngineError::not_found("profile", id));
        }
        self.release_secrets(&before.candidates, &[]);
        Ok(())
    }

    /// Replaces the profile's ordered candidates if the profile is still at
    /// `expected_revision`. Validates everything first; nothing is written
    /// unless all of it is valid.
    pub fn save_candidates(
        &self,
        profile_id: u32,
        expected_revision: u32,
        candidates: Vec<CandidateInput>,
    ) -> Result<Profile, EngineError> {
        validate_candidates(&candidates)?;
        let mut candidates: Vec<CandidateInput> = candidates
            .into_iter()
            .map(|c| CandidateInput {
                name: crate::profile::names::normalize(&c.name),
                policy: c.policy.normalize(),
                ..c
            })
            .collect();
        let existing = self.get_profile(profile_id)?;
        let accounts = self.accounts_of(&candidates)?;
        let stowed = self.stow_secrets(&existing.name, &mut candidates, Some(&existing))?;
        let now = self.inner.clock.now();
        let writes = with_accounts(&candidates, accounts);
        let outcome = self
            .store()
            .save_candidates(profile_id, expected_revision, &writes, now);
        match outcome {
            Ok(Ok(())) => {}
            Ok(Err(r)) => {
                stowed.undo();
                return Err(refused(r, profile_id, expected_revision));
            }
            Err(e) => {
                stowed.undo();
                return Err(e.into());
            }
        }
        self.release_secrets(&existing.candidates, &agents(&candidates));
        // A limit may have been raised or lifted.
        self.kick_release();
        self.get_profile(profile_id)
    }

    pub(super) fn seed_demo(&self) -> Result<(), EngineError> {
        if self.store().profile_count()? > 0 {
            return Ok(());
        }
        let profile = match self.create_profile(DEMO_PROFILE) {
            Ok(p) => p,
            // Another process seeded it first.
            Err(EngineError::Conflict(_)) => return Ok(()),
            Err(e) => return Err(e),
        };
        self.save_candidates(profile.id, profile.revision, seed::demo_candidates())?;
        Ok(())
    }
}

impl Engine {
    /// The name as stored, refused when it only looks different from
    /// another profile's (invisible characters, normalization); `except`
    /// is the profile being renamed or replaced.
    pub(super) fn distinct_name(
        &self,
        name: &str,
        except: Option<u32>,
    ) -> Result<String, EngineError> {
        let name = profile_name(name)?;
        let names = self.store().profile_names()?;
        let look_alike = names
            .iter()
            .filter(|(id, _)| Some(*id) != except)
            .find_map(|(_, other)| Some((other, crate::profile::names::looks_like(&name, other)?)));
        match look_alike {
            Some((other, why)) => Err(EngineError::Conflict(format!(
                "a profile named {} already exists, and {} is the same name to a reader: {why}",
                quoted(other),
                quoted(&name)
            ))),
            None => Ok(name),
        }
    }
}

/// `inputs` with the account each runs as.
pub(super) fn with_accounts(
    inputs: &[CandidateInput],
    accounts: Vec<crate::account::AccountId>,
) -> Vec<crate::store::profiles::CandidateWrite> {
    inputs.iter().cloned().zip(accounts).collect()
}

/// The agents of `inputs`.
pub(super) fn agents(inputs: &[CandidateInput]) -> Vec<crate::agent::AgentSpec> {
    inputs.iter().map(|c| c.agent.clone()).collect()
}

/// Whether `agent` can start now: its program, version and credentials
/// (values never read), in the environment a run would give it.
pub async fn readiness(agent: &crate::agent::AgentSpec) -> Readiness {
    let mut env: std::collections::BTreeMap<String, String> = std::env::vars().collect();
    env.extend(agent.env.clone());
    crate::runner::readiness::check(agent, &env).await
}

fn profile_name(name: &str) -> Result<String, EngineError> {
    crate::profile::validate_name(name).map_err(|e| EngineError::Validation(vec![e]))
}

/// Refuses a candidate list with every problem [`check_candidates`] finds.
pub(super) fn validate_candidates(candidates: &[CandidateInput]) -> Result<(), EngineError> {
    let errors = check_candidates(candidates);
    if errors.is_empty() {
        Ok(())
    } else {
        Err(EngineError::Validation(errors))
    }
}

/// The error for a save the store refused.
pub(super) fn refused(
    refusal: SaveRefusal,
    profile_id: u32,
    expected_revision: u32,
) -> EngineError {
    match refusal {
        SaveRefusal::ProfileMissing => EngineError::not_found("profile", profile_id),
        SaveRefusal::RevisionMismatch { current } => EngineError::Conflict(format!(
            "the profile was changed elsewhere (revision {current}, you edited {expected_revision}); \
             reload it and apply your edit again"
        )),
        SaveRefusal::ForeignCandidate { index, id } => EngineError::validation(
            format!("candidates[{index}].id"),
            format!("candidate {id} does not belong to this profile"),
        ),
    }
}

pub(super) fn name_taken(e: StoreError, name: &str) -> EngineError {
    if crate::store::profiles::is_unique_violation(&e) {
        EngineError::Conflict(format!("a profile named {} already exists", quoted(name)))
    } else {
        EngineError::Store(e)
    }
}
