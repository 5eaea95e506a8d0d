//! The engine's API over the catalogue in force (built-in rules plus the
//! local overlay): the catalogue itself, its state for the rule browser,
//! the inbox of unclassified evidence, and local rules checked and saved.

use std::path::PathBuf;
use std::sync::{Arc, MutexGuard};

use super::overlay::{self, Overlay};
use super::views::summary;
use super::{Engine, EngineError, InboxItem};
use crate::catalogue::bundled::NamedFixture;
use crate::catalogue::{Catalogue, RuleSpec};
use crate::classification::Classification;
use crate::evaluator::CandidateSlot;
use crate::evidence::{Evidence, Provider, RawEvidence};
use crate::simulation::{preview, PreviewStep, SimulatedFailure, PASTED_REPEATS};

/// Pasted error text as the catalogue in force classifies it, and what a
/// draft would do if every attempt failed with it.
#[derive(Debug, Clone, serde::Serialize, specta::Type)]
pub struct TextPreview {
    pub classification: Classification,
    pub steps: Vec<PreviewStep>,
}

/// The catalogue in force and where its local part stands: an owned
/// snapshot, so no lock is held while it is read.
pub struct CatalogueState {
    pub catalogue: Arc<Catalogue>,
    /// The local rules' fixtures; a fixture file that cannot be read is
    /// left out.
    pub local_fixtures: Vec<NamedFixture>,
    /// The local rules file.
    pub rules_path: PathBuf,
    /// Why the local rules file is not in force (file, rule, reason).
    pub error: Option<String>,
}

impl Engine {
    /// The catalogue in force, with the local file re-read when it changed
    /// (by this app, the CLI or an editor) since the last call.
    pub fn catalogue(&self) -> Arc<Catalogue> {
        self.overlay().catalogue()
    }

    /// The catalogue in force with its local fixtures, file and error.
    pub fn catalogue_state(&self) -> CatalogueState {
        let overlay = self.overlay();
        CatalogueState {
            catalogue: overlay.catalogue(),
            local_fixtures: overlay.local_fixtures().0,
            rules_path: overlay.rules_path(),
            error: overlay.error().map(str::to_owned),
        }
    }

    /// Sanitized evidence of attempts no catalogue rule classified, each
    /// with what the catalogue in force (local rules included) says now.
    pub fn unclassified_inbox(&self) -> Result<Vec<InboxItem>, EngineError> {
        let found = self.store().inbox_results()?;
        let catalogue = self.catalogue();
        let tz = crate::timing::machine_local_tz();
        Ok(found
            .into_iter()
            .filter_map(|(route_id, a)| {
                let result = a.result?;
                let classification = result.classification?;
                let evidence = result.evidence?;
                let now = catalogue.classify(&evidence, tz);
                Some(InboxItem {
                    route_id,
                    attempt: a.attempt.number,
                    candidate_name: a.attempt.candidate_name,
                    code: classification.code,
                    catalogue_version: classification.catalogue_version,
                    now: now.rule_id.is_some().then(|| summary(&now)),
                    evidence,
                })
            })
            .collect())
    }

    /// Error text a person pasted, sanitized and classified by the
    /// catalogue a run would use (local rules included) as a `provider`
    /// failure, and what `candidates` would do if every attempt failed so.
    pub fn preview_error_text(
        &self,
        candidates: &[CandidateSlot],
        provider: Provider,
        text: &str,
    ) -> Result<TextPreview, EngineError> {
        if text.trim().is_empty() {
            return Err(EngineError::validation(
                "text",
                "paste the error text to classify",
            ));
        }
        let now = chrono::Utc::now();
        let evidence = Evidence::from_raw(RawEvidence::new(provider, text, now));
        let classification = self
            .catalogue()
            .classify(&evidence, crate::timing::machine_local_tz());
        let failure = SimulatedFailure::classified(&classification, &evidence.fingerprint(), now);
        let failures = vec![failure; PASTED_REPEATS];
        Ok(TextPreview {
            steps: preview(candidates, &failures, now),
            classification,
        })
    }

    /// The checks of a proposed local rule (see [`Overlay::review`]),
    /// against the evidence it is made from when given.
    pub fn review_rule(
        &self,
        spec: &RuleSpec,
        confirmed: &[String],
        from: Option<overlay::EvidenceSource>,
    ) -> Result<overlay::RuleReview, EngineError> {
        let samples = overlay::samples(&self.store())?;
        let evidence = self.source_evidence(from)?;
        let tz = crate::timing::machine_local_tz();
        Ok(self.overlay().review(
            spec,
            evidence.as_ref().map(|(_, e)| e),
            &samples,
            confirmed,
            tz,
        ))
    }

    /// The evidence a rule is made from, with where it came from in words.
    fn source_evidence(
        &self,
        from: Option<overlay::EvidenceSource>,
    ) -> Result<Option<(String, Evidence)>, EngineError> {
        Ok(match from {
            None => None,
            Some(overlay::EvidenceSource::Attempt { route_id, attempt }) => Some((
                format!(
                    "sanitized evidence of route {route_id} attempt {attempt}, observed by Recourse"
                ),
                self.attempt_evidence(route_id, attempt)?,
            )),
            Some(overlay::EvidenceSource::Pasted(evidence)) => Some((
                "sanitized text pasted into the Recourse playground".to_owned(),
                evidence,
            )),
        })
    }

    /// Saves a local rule after its checks pass; the evidence it was made
    /// from (sanitized) becomes a local fixture.
    pub fn save_rule(
        &self,
        spec: &RuleSpec,
        confirmed: &[String],
        from: Option<overlay::EvidenceSource>,
    ) -> Result<overlay::SavedRule, EngineError> {
        let samples = overlay::samples(&self.store())?;
        let evidence = self.source_evidence(from)?;
        let tz = crate::timing::machine_local_tz();
        self.overlay().save(
            spec,
            evidence.as_ref().map(|(s, e)| (s.as_str(), e)),
            &samples,
            confirmed,
            tz,
        )
    }

    /// Removes a local rule and its local fixtures; the new catalogue version.
    pub fn remove_rule(&self, id: &str) -> Result<String, EngineError> {
        self.overlay().remove(id)
    }

    /// The sanitized evidence attempt `attempt` of route `route` kept.
    pub fn attempt_evidence(&self, route: u32, attempt: u32) -> Result<Evidence, EngineError> {
        self.store()
            .attempts(route)?
            .into_iter()
            .find(|a| a.attempt.number == attempt)
            .and_then(|a| a.result?.evidence)
            .ok_or_else(|| {
                EngineError::not_found("evidence of route/attempt", format!("{route}/{attempt}"))
            })
    }

    /// The overlay, refreshed from its file; held only inside this module.
    fn overlay(&self) -> MutexGuard<'_, Overlay> {
        let mut overlay = self.inner.overlay.lock().unwrap_or_else(|p| p.into_inner());
        overlay.refresh();
        overlay
    }
}
