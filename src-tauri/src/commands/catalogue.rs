//! Catalogue commands: browse rules (built-in and local), classify pasted
//! text in the playground, export unclassified evidence as a fixture, and
//! make a local rule from evidence: propose, check, save, remove.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use chrono::Utc;
use recourse::catalogue::bundled::builtin_fixtures;
use recourse::catalogue::propose::{code_basis, propose, RuleDraft};
use recourse::catalogue::{self, Catalogue, Explanation, Origin, ProviderScope};
use recourse::classification::{Class, Confidence, Scope, SemanticCode};
use recourse::engine::overlay::{EvidenceSource, RuleReview, SavedRule};
use recourse::engine::{Engine, InboxItem};
use recourse::evidence::{Evidence, Provider, RawEvidence};
use recourse::policy::FieldError;
use recourse::timing::machine_local_tz;
use serde::{Deserialize, Serialize};
use tauri::State;

use crate::error::{ErrorCode, IpcError};
use crate::AppState;

/// Where a rule comes from.
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct RuleOrigin {
    /// From the local catalogue beside the database.
    pub local: bool,
    /// The built-in rule a local one replaces.
    pub overrides: Option<String>,
    /// False for a local rule nobody reviewed: shown, never acted on.
    pub reviewed: bool,
}

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
    /// Fixtures (built-in and local) that expect this rule.
    pub fixtures: Vec<String>,
    pub origin: RuleOrigin,
}

#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct CatalogueView {
    /// The version in force: built-in, plus `+local.N` with local rules.
    pub version: String,
    pub rules: Vec<RuleView>,
    /// The local rules file.
    pub local_path: String,
    /// Why the local rules file is not in force (file, rule, reason).
    pub local_error: Option<String>,
}

#[tauri::command]
#[specta::specta]
pub async fn catalogue_rules(state: State<'_, AppState>) -> Result<CatalogueView, IpcError> {
    state.run(|engine| Ok(catalogue_view(engine))).await
}

fn catalogue_view(engine: &Engine) -> CatalogueView {
    let state = engine.catalogue_state();
    let catalogue = &state.catalogue;
    let mut fixtures: HashMap<&str, Vec<String>> = HashMap::new();
    let local = &state.local_fixtures;
    for named in builtin_fixtures().iter().chain(local) {
        if let Some(id) = named.fixture.expect.rule_id.as_deref() {
            fixtures.entry(id).or_default().push(named.name.clone());
        }
    }
    let rules = catalogue
        .rules
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
            fixtures: fixtures.get(rule.id.as_str()).cloned().unwrap_or_default(),
            origin: match &rule.origin {
                Origin::Builtin => RuleOrigin {
                    local: false,
                    overrides: None,
                    reviewed: true,
                },
                Origin::Local {
                    overrides,
                    reviewed,
                } => RuleOrigin {
                    local: true,
                    overrides: overrides.clone(),
                    reviewed: *reviewed,
                },
            },
        })
        .collect();
    CatalogueView {
        version: catalogue.version.clone(),
        rules,
        local_path: state.rules_path.display().to_string(),
        local_error: state.error.clone(),
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
pub async fn classify_text(
    state: State<'_, AppState>,
    input: PlaygroundInput,
) -> Result<PlaygroundResult, IpcError> {
    state
        .run(move |engine| playground(&engine.catalogue(), input))
        .await
}

fn playground(catalogue: &Catalogue, input: PlaygroundInput) -> Result<PlaygroundResult, IpcError> {
    let evidence = pasted_evidence(input)?;
    let explanation = catalogue.explain(&evidence, machine_local_tz());
    Ok(PlaygroundResult {
        explanation,
        sanitized: evidence.message,
    })
}

/// Sanitized evidence of pasted text, or which field is wrong.
fn pasted_evidence(input: PlaygroundInput) -> Result<Evidence, IpcError> {
    if let Some(status) = input.http_status.filter(|s| !(100..=599).contains(s)) {
        let message = format!("HTTP status must be 100–599, got {status}");
        return Err(IpcError {
            code: ErrorCode::Validation,
            fields: vec![FieldError::new("http_status", message.clone())],
            message,
        });
    }
    Ok(Evidence::from_raw(
        RawEvidence::new(input.provider, input.message, Utc::now())
            .with_http_status(input.http_status)
            .with_headers(input.headers),
    ))
}

#[tauri::command]
#[specta::specta]
pub async fn unclassified_inbox(state: State<'_, AppState>) -> Result<Vec<InboxItem>, IpcError> {
    state.run(|engine| Ok(engine.unclassified_inbox()?)).await
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
pub async fn export_fixture(
    state: State<'_, AppState>,
    route_id: u32,
    attempt: u32,
) -> Result<FixtureExport, IpcError> {
    let inbox = state.run(|engine| Ok(engine.unclassified_inbox()?)).await?;
    let item = inbox
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
    let written = recourse::engine::files::write_private(&path, text.as_bytes());
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

/// The evidence a new rule is made from: an inbox item or pasted text.
#[derive(Debug, Clone, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum RuleSource {
    Inbox { route_id: u32, attempt: u32 },
    Pasted(PlaygroundInput),
}

impl RuleSource {
    /// The engine's form: an attempt by id, or pasted text sanitized now.
    fn into_engine(self) -> Result<EvidenceSource, IpcError> {
        Ok(match self {
            RuleSource::Inbox { route_id, attempt } => {
                EvidenceSource::Attempt { route_id, attempt }
            }
            RuleSource::Pasted(input) => EvidenceSource::Pasted(pasted_evidence(input)?),
        })
    }
}

/// A proposed rule and the sanitized text it was drawn from.
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct RuleProposal {
    pub draft: RuleDraft,
    pub sanitized: String,
    /// What in the text the proposed code comes from; `None`: nothing
    /// points to one, and the draft's code is `unknown` for the person to
    /// choose.
    pub code_basis: Option<String>,
}

/// Proposes a local rule from evidence: only its sanitized text is read.
#[tauri::command]
#[specta::specta]
pub async fn propose_rule(
    state: State<'_, AppState>,
    source: RuleSource,
) -> Result<RuleProposal, IpcError> {
    state
        .run(move |engine| {
            let evidence = match source.into_engine()? {
                EvidenceSource::Attempt { route_id, attempt } => {
                    engine.attempt_evidence(route_id, attempt)?
                }
                EvidenceSource::Pasted(evidence) => evidence,
            };
            let catalogue = engine.catalogue();
            let draft = propose(&evidence, |id| catalogue.rules.iter().any(|r| r.id == id));
            Ok(RuleProposal {
                draft,
                code_basis: code_basis(&evidence).map(|(_, why)| why),
                sanitized: evidence.message,
            })
        })
        .await
}

/// The three checks of a draft as it would act once saved, and whether it
/// matches the text it is made from (`source`), as a save checks.
#[tauri::command]
#[specta::specta]
pub async fn review_rule(
    state: State<'_, AppState>,
    draft: RuleDraft,
    confirmed: Vec<String>,
    source: Option<RuleSource>,
) -> Result<RuleReview, IpcError> {
    state
        .run(move |engine| {
            let from = source.map(RuleSource::into_engine).transpose()?;
            Ok(engine.review_rule(&draft.to_spec(true), &confirmed, from)?)
        })
        .await
}

/// Saves a draft the person reviewed in the dialog (the review is what
/// lets it act), with its evidence as a local fixture.
#[tauri::command]
#[specta::specta]
pub async fn save_rule(
    state: State<'_, AppState>,
    draft: RuleDraft,
    confirmed: Vec<String>,
    source: RuleSource,
) -> Result<SavedRule, IpcError> {
    state
        .run(move |engine| {
            let from = source.into_engine()?;
            Ok(engine.save_rule(&draft.to_spec(true), &confirmed, Some(from))?)
        })
        .await
}

/// Removes a local rule and its local fixtures; the new catalogue version.
#[tauri::command]
#[specta::specta]
pub async fn remove_local_rule(state: State<'_, AppState>, id: String) -> Result<String, IpcError> {
    state.run(move |engine| Ok(engine.remove_rule(&id)?)).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn playground(message: &str, http_status: Option<u16>) -> Result<PlaygroundResult, IpcError> {
        super::playground(
            catalogue::builtin(),
            PlaygroundInput {
                provider: Provider::Generic,
                message: message.into(),
                http_status,
                headers: BTreeMap::new(),
            },
        )
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
