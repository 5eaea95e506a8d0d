//! Catalogue commands: browse rules (built-in and local), classify pasted
//! text in the playground, export unclassified evidence as a fixture, and
//! make a local rule from evidence: propose, check, save, remove.

use recourse::catalogue::propose::{code_basis, propose, RuleDraft};
use recourse::catalogue::{self, Origin, ProviderScope};
use recourse::classification::{Class, Confidence, Scope, SemanticCode};
use recourse::engine::overlay::{EvidenceSource, RuleReview, SavedRule};
use recourse::engine::{Engine, FixtureExport, InboxItem, PlaygroundInput, PlaygroundResult};
use recourse::evidence::Provider;
use serde::{Deserialize, Serialize};
use tauri::State;

use crate::error::IpcError;
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
    let fixtures = &state.fixtures_by_rule;
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

#[tauri::command]
#[specta::specta]
pub async fn classify_text(
    state: State<'_, AppState>,
    input: PlaygroundInput,
) -> Result<PlaygroundResult, IpcError> {
    state
        .run(move |engine| Ok(engine.classify_text(input)?))
        .await
}

#[tauri::command]
#[specta::specta]
pub async fn unclassified_inbox(state: State<'_, AppState>) -> Result<Vec<InboxItem>, IpcError> {
    state.run(|engine| Ok(engine.unclassified_inbox()?)).await
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
    state
        .run(move |engine| Ok(engine.export_fixture(route_id, attempt)?))
        .await
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
            RuleSource::Pasted(input) => EvidenceSource::Pasted(input.evidence()?),
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
