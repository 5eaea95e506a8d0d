//! The engine's API over the catalogue in force (built-in rules plus the
//! local overlay): the catalogue itself, its state for the rule browser,
//! the inbox of unclassified evidence and its export as a fixture, pasted
//! text classified, and local rules checked and saved.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, MutexGuard};

use super::overlay::{self, Overlay};
use super::views::summary;
use super::{Engine, EngineError, InboxItem};
use crate::catalogue::{self, Catalogue, Explanation, RuleSpec};
use crate::classification::Classification;
use crate::evaluator::CandidateSlot;
use crate::evidence::{Evidence, Provider, RawEvidence};
use crate::simulation::{preview, Preview, SimulatedFailure};

/// Pasted error text as the catalogue in force classifies it, and what a
/// draft would do if every attempt failed with it.
#[derive(Debug, Clone, serde::Serialize, specta::Type)]
pub struct TextPreview {
    pub classification: Classification,
    pub preview: Preview,
}

/// The catalogue in force and where its local part stands: an owned
/// snapshot, so no lock is held while it is read.
pub struct CatalogueState {
    pub catalogue: Arc<Catalogue>,
    /// The names of the fixtures (built-in and local) that expect each
    /// rule, by rule id; a local fixture file that cannot be read is left
    /// out.
    pub fixtures_by_rule: BTreeMap<String, Vec<String>>,
    /// The local rules file.
    pub rules_path: PathBuf,
    /// Why the local rules file is not in force (file, rule, reason).
    pub error: Option<String>,
}

/// Pasted evidence for the playground; raw text never leaves this call
/// unsanitized.
#[derive(Debug, Clone, serde::Deserialize, specta::Type)]
pub struct PlaygroundInput {
    pub provider: Provider,
    pub message: String,
    pub http_status: Option<u16>,
    pub headers: BTreeMap<String, String>,
}

impl PlaygroundInput {
    /// Sanitized evidence of the pasted text, or which field is wrong.
    pub fn evidence(self) -> Result<Evidence, EngineError> {
        if let Some(status) = self
            .http_status
            .filter(|s| !crate::evidence::HTTP_STATUS_RANGE.contains(s))
        {
            return Err(EngineError::validation(
                "http_status",
                format!("HTTP status must be 100–599 ({status} is not an HTTP status)"),
            ));
        }
        Ok(Evidence::from_raw(
            RawEvidence::new(self.provider, self.message, chrono::Utc::now())
                .with_http_status(self.http_status)
                .with_headers(self.headers),
        ))
    }
}

#[derive(Debug, Clone, serde::Serialize, specta::Type)]
pub struct PlaygroundResult {
    pub explanation: Explanation,
    /// The sanitized text the rules were matched against (spans index it).
    pub sanitized: String,
}

#[derive(Debug, Clone, serde::Serialize, specta::Type)]
pub struct FixtureExport {
    /// Where the file was written.
    pub path: String,
    pub text: String,
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
            fixtures_by_rule: overlay.fixtures_by_rule(),
            rules_path: overlay.rules_path(),
            error: overlay.error().map(str::to_owned),
        }
    }

    /// Pasted text, sanitized, as the catalogue in force explains it.
    pub fn classify_text(&self, input: PlaygroundInput) -> Result<PlaygroundResult, EngineError> {
        let evidence = input.evidence()?;
        let explanation = self
            .catalogue()
            .explain(&evidence, crate::timing::machine_local_tz());
        Ok(PlaygroundResult {
            explanation,
            sanitized: evidence.message,
        })
    }

    /// Writes the sanitized evidence of one unclassified attempt as a
    /// catalogue fixture in a `fixtures/` folder beside the database, ready
    /// to move into the repository's `fixtures/catalogue/`.
    pub fn export_fixture(
        &self,
        route_id: u32,
        attempt: u32,
    ) -> Result<FixtureExport, EngineError> {
        let db_path = self.store().path().to_path_buf();
        let item = self
            .unclassified_inbox()?
            .into_iter()
            .find(|item| item.route_id == route_id && item.attempt == attempt)
            .ok_or_else(|| {
                EngineError::not_found(
                    "unclassified evidence of route/attempt",
                    format!("{route_id}/{attempt}"),
                )
            })?;
        write_fixture(&db_path, &item)
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
        Ok(TextPreview {
            preview: preview(candidates, &[failure], now),
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

/// Writes `item` as a fixture file in a `fixtures/` folder beside the
/// database at `db_path`.
fn write_fixture(db_path: &Path, item: &InboxItem) -> Result<FixtureExport, EngineError> {
    let classification = catalogue::classify(&item.evidence, crate::timing::machine_local_tz());
    let text = catalogue::fixture_from_evidence(&item.evidence, &classification);
    let dir = db_path.parent().unwrap_or(Path::new(".")).join("fixtures");
    let path = dir.join(format!(
        "unclassified-route{}-attempt{}.toml",
        item.route_id, item.attempt
    ));
    crate::store::files::write_private(&path, text.as_bytes())
        .map_err(|err| EngineError::Io(format!("could not write {}: {err}", path.display())))?;
    Ok(FixtureExport {
        path: path.display().to_string(),
        text,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classification::SemanticCode;

    #[test]
    fn pasted_text_with_an_impossible_http_status_is_refused_at_its_field() {
        let input = PlaygroundInput {
            provider: Provider::Generic,
            message: "boom".into(),
            http_status: Some(42),
            headers: BTreeMap::new(),
        };
        let err = input.evidence().unwrap_err();
        assert_eq!(err.code(), super::super::ErrorCode::Validation);
        let paths: Vec<&str> = err.field_errors().iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, ["http_status"]);
        assert_eq!(
            err.to_string(),
            "http_status: HTTP status must be 100–599 (42 is not an HTTP status)"
        );
    }

    #[test]
    fn pasted_text_is_sanitized_before_anything_reads_it() {
        let input = PlaygroundInput {
            provider: Provider::Generic,
            message: "401 invalid x-api-key sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789"
                .into(),
            http_status: Some(401),
            headers: BTreeMap::new(),
        };
        let evidence = input.evidence().unwrap();
        assert!(
            !evidence.message.contains("abcdefghijklmnop"),
            "the key is redacted before it is shown: {}",
            evidence.message
        );
    }

    fn inbox_item() -> InboxItem {
        let evidence = Evidence::from_raw(
            RawEvidence::new(
                Provider::Generic,
                "segfault in the flux capacitor",
                chrono::Utc::now(),
            )
            .with_exit_code(139),
        );
        InboxItem {
            route_id: 3,
            attempt: 2,
            candidate_name: "sim".into(),
            code: SemanticCode::Unknown,
            catalogue_version: catalogue::CATALOGUE_VERSION.into(),
            now: None,
            evidence,
        }
    }

    #[test]
    fn exported_fixture_is_written_beside_the_database_and_parses() {
        let dir = tempfile::tempdir().unwrap();
        let export = write_fixture(&dir.path().join("recourse.db"), &inbox_item()).unwrap();
        let expected = dir
            .path()
            .join("fixtures/unclassified-route3-attempt2.toml");
        assert_eq!(export.path, expected.display().to_string());
        assert_eq!(std::fs::read_to_string(&expected).unwrap(), export.text);
        catalogue::Fixture::parse(&export.text)
            .expect("an exported fixture is a valid fixture file");
    }

    #[test]
    fn export_into_an_unwritable_place_says_where_and_why() {
        let dir = tempfile::tempdir().unwrap();
        // A plain file where the fixtures folder should be makes the write fail.
        std::fs::write(dir.path().join("fixtures"), "not a folder").unwrap();
        let err = write_fixture(&dir.path().join("recourse.db"), &inbox_item()).unwrap_err();
        assert_eq!(err.code(), super::super::ErrorCode::Io);
        let target = dir
            .path()
            .join("fixtures/unclassified-route3-attempt2.toml");
        assert!(
            err.to_string()
                .starts_with(&format!("could not write {}: ", target.display())),
            "{err}"
        );
    }
}
