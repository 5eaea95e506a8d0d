//! Catalogue commands: browse rules, classify pasted text in the playground,
//! and export unclassified evidence from real runs as a fixture file.

use std::collections::BTreeMap;
use std::path::Path;

use chrono::Utc;
use recourse::catalogue::{self, Explanation, ProviderScope};
use recourse::classification::{Class, Confidence, Scope, SemanticCode};
use recourse::engine::InboxItem;
use recourse::evidence::{Evidence, Provider, RawEvidence};
use recourse::policy::FieldError;
use recourse::timing::machine_local_tz;
use serde::{Deserialize, Serialize};
use tauri::State;

use crate::error::{ErrorCode, IpcError};
use crate::AppState;

/// One catalogue rule as the browser lists it.
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct RuleView {
    pub id: String,
    pub description: String,
    pub priority: u16,
    /// Empty means every provider.
    pub providers: Vec<Provider>,
    pub code: SemanticCode,
    pub class: Class,
    pub confidence: Confidence,
    pub scope: Scope,
    pub wrapper: bool,
    /// Text patterns of the rule's alternatives, as written in the catalogue.
    pub patterns: Vec<String>,
}

#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct CatalogueView {
    pub version: String,
    pub rules: Vec<RuleView>,
}

#[tauri::command]
#[specta::specta]
pub fn catalogue_rules() -> CatalogueView {
    let rules = catalogue::rules()
        .iter()
        .map(|rule| RuleView {
            id: rule.id.clone(),
            description: rule.description.clone(),
            priority: rule.priority,
            providers: match &rule.providers {
                ProviderScope::Any => Vec::new(),
                ProviderScope::Only(list) => list.clone(),
            },
            code: rule.code,
            class: rule.class(),
            confidence: rule.confidence,
            scope: rule.scope,
            wrapper: rule.role == catalogue::Role::Wrapper,
            patterns: rule
                .matchers
                .iter()
                .filter_map(|m| m.text_pattern().map(str::to_string))
                .collect(),
        })
        .collect();
    CatalogueView {
        version: catalogue::CATALOGUE_VERSION.to_string(),
        rules,
    }
}

/// Pasted evidence for the playground; raw text never leaves this call
/// unsanitized.
#[derive(Debug, Clone, Deserialize, specta::Type)]
pub struct PlaygroundInput {
    pub provider: Provider,
    pub message: String,
    pub http_status: Option<u16>,
    pub headers: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct PlaygroundResult {
    pub explanation: Explanation,
    /// The sanitized text the rules were matched against (spans index it).
    pub sanitized: String,
}

#[tauri::command]
#[specta::specta]
pub fn classify_text(input: PlaygroundInput) -> Result<PlaygroundResult, IpcError> {
    if let Some(status) = input.http_status.filter(|s| !(100..=599).contains(s)) {
        let message = format!("HTTP status must be 100–599, got {status}");
        return Err(IpcError {
            code: ErrorCode::Validation,
            fields: vec![FieldError::new("http_status", message.clone())],
            message,
        });
    }
    let evidence = Evidence::from_raw(
        RawEvidence::new(input.provider, input.message, Utc::now())
            .with_http_status(input.http_status)
            .with_headers(input.headers),
    );
    let explanation = catalogue::explain(&evidence, machine_local_tz());
    Ok(PlaygroundResult {
        explanation,
        sanitized: evidence.message,
    })
}

#[tauri::command]
#[specta::specta]
pub fn unclassified_inbox(state: State<'_, AppState>) -> Result<Vec<InboxItem>, IpcError> {
    Ok(state.engine.unclassified_inbox()?)
}

#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct FixtureExport {
    /// Where the file was written.
    pub path: String,
    pub text: String,
}

/// Writes the sanitized evidence of one unclassified attempt as a catalogue
/// fixture beside the database, ready to move into `fixtures/catalogue/`.
#[tauri::command]
#[specta::specta]
pub fn export_fixture(
    state: State<'_, AppState>,
    route_id: u32,
    attempt: u32,
) -> Result<FixtureExport, IpcError> {
    let item = state
        .engine
        .unclassified_inbox()?
        .into_iter()
        .find(|item| item.route_id == route_id && item.attempt == attempt)
        .ok_or_else(|| IpcError {
            code: ErrorCode::NotFound,
            message: format!("route {route_id} attempt {attempt} has no unclassified evidence"),
            fields: Vec::new(),
        })?;
    write_fixture(&state.db_path, &item)
}

/// Writes `item` as a fixture file in a `fixtures/` folder beside the database.
fn write_fixture(db_path: &Path, item: &InboxItem) -> Result<FixtureExport, IpcError> {
    let classification = catalogue::classify(&item.evidence, machine_local_tz());
    let text = catalogue::fixture_from_evidence(&item.evidence, &classification);
    let dir = db_path.parent().unwrap_or(Path::new(".")).join("fixtures");
    let path = dir.join(format!(
        "unclassified-route{}-attempt{}.toml",
        item.route_id, item.attempt
    ));
    let written = std::fs::create_dir_all(&dir).and_then(|()| std::fs::write(&path, &text));
    written.map_err(|err| IpcError {
        code: ErrorCode::Io,
        message: format!("could not write {}: {err}", path.display()),
        fields: Vec::new(),
    })?;
    Ok(FixtureExport {
        path: path.display().to_string(),
        text,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn playground(message: &str, http_status: Option<u16>) -> Result<PlaygroundResult, IpcError> {
        classify_text(PlaygroundInput {
            provider: Provider::Generic,
            message: message.into(),
            http_status,
            headers: BTreeMap::new(),
        })
    }

    #[test]
    fn playground_refuses_an_impossible_http_status_naming_the_field() {
        let err = playground("boom", Some(42)).unwrap_err();
        assert_eq!(err.code, ErrorCode::Validation);
        let paths: Vec<&str> = err.fields.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, ["http_status"]);
        assert_eq!(err.message, "HTTP status must be 100–599, got 42");
    }

    #[test]
    fn playground_shows_only_sanitized_text() {
        let result = playground(
            "401 invalid x-api-key sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789",
            Some(401),
        )
        .unwrap();
        assert!(
            !result.sanitized.contains("abcdefghijklmnop"),
            "the key is redacted before it is shown: {}",
            result.sanitized
        );
    }

    fn inbox_item() -> InboxItem {
        let evidence = Evidence::from_raw(
            RawEvidence::new(
                Provider::Generic,
                "segfault in the flux capacitor",
                Utc::now(),
            )
            .with_exit_code(139),
        );
        InboxItem {
            route_id: 3,
            attempt: 2,
            candidate_name: "sim".into(),
            code: SemanticCode::Unknown,
            catalogue_version: catalogue::CATALOGUE_VERSION.into(),
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
        assert_eq!(err.code, ErrorCode::Io);
        let target = dir
            .path()
            .join("fixtures/unclassified-route3-attempt2.toml");
        assert!(
            err.message
                .starts_with(&format!("could not write {}: ", target.display())),
            "{}",
            err.message
        );
    }
}
