//! The engine's API over profiles: list, read, create, rename, delete and
//! save their candidates, and the demo profile seeded on first start.

use super::{seed, Engine, EngineError, DEMO_PROFILE};
use crate::profile::{check_candidates, CandidateInput, Profile};
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
        let name = profile_name(name)?;
        let now = self.inner.clock.now();
        let id = self
            .store()
            .create_profile(&name, now)
            .map_err(|e| name_taken(e, &name))?;
        self.get_profile(id)
    }

    pub fn rename_profile(&self, id: u32, name: &str) -> Result<Profile, EngineError> {
        let name = profile_name(name)?;
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
        if !self.store().delete_profile(id)? {
            return Err(EngineError::not_found("profile", id));
        }
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
        let candidates: Vec<CandidateInput> = candidates
            .into_iter()
            .map(|c| CandidateInput {
                policy: c.policy.normalize(),
                ..c
            })
            .collect();
        let now = self.inner.clock.now();
        let outcome =
            self.store()
                .save_candidates(profile_id, expected_revision, &candidates, now)?;
        outcome.map_err(|r| refused(r, profile_id, expected_revision))?;
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

pub(super) fn profile_name(name: &str) -> Result<String, EngineError> {
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
        EngineError::Conflict(format!("a profile named {name:?} already exists"))
    } else {
        EngineError::Store(e)
    }
}
