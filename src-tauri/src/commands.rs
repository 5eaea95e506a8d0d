//! Thin `#[tauri::command]` adapters: each one calls the engine (or a pure
//! library function) once and maps its error to [`IpcError`]. Every one is
//! `async`: Tauri runs a synchronous command on the main thread, where a
//! slow database read would freeze the window.

use chrono::Utc;
use recourse::agent::AgentSpec;
use recourse::catalogue::Catalogue;
use recourse::classification::Classification;
use recourse::engine::{
    secret_places, ActionRequest, AgentKindInfo, RouteDetail, RoutePage, RouteQuery, RouteSnapshot,
    SecretEnv, StartRun,
};
use recourse::evaluator::CandidateSlot;
use recourse::evidence::{Evidence, Provider, RawEvidence};
use recourse::policy::validate::{validate_policy, FieldError};
use recourse::policy::{CandidatePolicy, ClassPolicy};
use recourse::profile::{CandidateInput, Profile};
use recourse::simulation::{simulate, SimulatedFailure, TimelineStep, TimelineWording};
use recourse::timing::machine_local_tz;
use serde::{Deserialize, Serialize};
use tauri::State;

use crate::error::{ErrorCode, IpcError};
use crate::{AppState, EngineStatus};

type Reply<T> = Result<T, IpcError>;

#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct AppInfo {
    pub version: String,
    pub db_path: String,
    pub log_dir: String,
}

#[tauri::command]
#[specta::specta]
pub async fn app_info(state: State<'_, AppState>) -> Reply<AppInfo> {
    Ok(AppInfo {
        version: env!("CARGO_PKG_VERSION").to_string(),
        db_path: state.db_path.display().to_string(),
        log_dir: state.log_dir.display().to_string(),
    })
}

#[tauri::command]
#[specta::specta]
pub async fn agent_kinds(state: State<'_, AppState>) -> Reply<Vec<AgentKindInfo>> {
    Ok(state.engine().await?.agent_kinds())
}

#[tauri::command]
#[specta::specta]
pub async fn list_profiles(state: State<'_, AppState>) -> Reply<Vec<Profile>> {
    Ok(state.engine().await?.list_profiles()?)
}

#[tauri::command]
#[specta::specta]
pub async fn create_profile(state: State<'_, AppState>, name: String) -> Reply<Profile> {
    Ok(state.engine().await?.create_profile(&name)?)
}

#[tauri::command]
#[specta::specta]
pub async fn rename_profile(state: State<'_, AppState>, id: u32, name: String) -> Reply<Profile> {
    Ok(state.engine().await?.rename_profile(id, &name)?)
}

#[tauri::command]
#[specta::specta]
pub async fn delete_profile(state: State<'_, AppState>, id: u32) -> Reply<()> {
    Ok(state.engine().await?.delete_profile(id)?)
}

#[tauri::command]
#[specta::specta]
pub async fn save_candidates(
    state: State<'_, AppState>,
    profile_id: u32,
    expected_revision: u32,
    candidates: Vec<CandidateInput>,
) -> Reply<Profile> {
    Ok(state
        .engine()
        .await?
        .save_candidates(profile_id, expected_revision, candidates)?)
}

/// Every field error of one candidate's policy, addressed as
/// `candidates[<index>].<class>.…`, for inline validation while editing.
#[tauri::command]
#[specta::specta]
pub async fn check_policy(index: u32, policy: CandidatePolicy) -> Vec<FieldError> {
    validate_policy(&format!("candidates[{index}]"), &policy)
}

/// Every problem a save of the whole candidate list would be refused for;
/// the editor uses it live for what no single row can tell (duplicate names).
#[tauri::command]
#[specta::specta]
pub async fn check_candidates(candidates: Vec<CandidateInput>) -> Vec<FieldError> {
    recourse::profile::check_candidates(&candidates)
}

/// Every problem with candidate `index`'s agent settings (program, timeouts,
/// environment, config dir), for inline validation while editing.
#[tauri::command]
#[specta::specta]
pub async fn check_agent(index: u32, agent: AgentSpec) -> Vec<FieldError> {
    agent.validate(&format!("candidates[{index}].agent"))
}

/// The variables whose values are secret (kept in the keyring, or what the
/// evidence sanitizer would redact) and where each is kept, for the editor
/// to hide them and say where they live; the UI keeps no list of its own.
/// Asking whether a keyring runs is a D-Bus call: off the async threads.
#[tauri::command]
#[specta::specta]
pub async fn secret_env(env: std::collections::BTreeMap<String, String>) -> Reply<Vec<SecretEnv>> {
    tauri::async_runtime::spawn_blocking(move || secret_places(&env))
        .await
        .map_err(|e| IpcError::io(&e))
}

/// A candidate of a policy preview.
#[derive(Debug, Clone, Deserialize, specta::Type)]
pub struct PreviewCandidate {
    pub name: String,
    pub enabled: bool,
    pub policy: CandidatePolicy,
}

/// One step of a policy preview, with the decision in the words `recourse
/// simulate` prints, so the editor never writes its own.
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct PreviewStep {
    pub step: TimelineStep,
    pub text: String,
}

/// The evaluator's timeline for an example failure sequence: the same
/// function `recourse simulate` runs.
#[tauri::command]
#[specta::specta]
pub async fn preview_policy(
    candidates: Vec<PreviewCandidate>,
    failures: Vec<SimulatedFailure>,
) -> Vec<PreviewStep> {
    timeline(candidates, &failures, Utc::now())
}

/// How often pasted error text is repeated: as the editor's own examples,
/// enough for any retry budget to run out.
const PASTED_REPEATS: usize = 12;

/// Pasted error text as the catalogue in force (built-in plus the user's
/// reviewed local rules) classifies it, and what the draft would do if every
/// attempt failed with it.
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct TextPreview {
    pub classification: Classification,
    pub steps: Vec<PreviewStep>,
}

/// The preview for error text a person pasted: sanitized and classified by
/// the catalogue the engine would use for a run (local rules included) as a
/// `provider` failure, then the same evaluator timeline as [`preview_policy`].
#[tauri::command]
#[specta::specta]
pub async fn preview_error_text(
    state: State<'_, AppState>,
    candidates: Vec<PreviewCandidate>,
    provider: Provider,
    text: String,
) -> Reply<TextPreview> {
    let catalogue = state.engine().await?.catalogue();
    text_preview(&catalogue, candidates, provider, text)
}

fn text_preview(
    catalogue: &Catalogue,
    candidates: Vec<PreviewCandidate>,
    provider: Provider,
    text: String,
) -> Reply<TextPreview> {
    if text.trim().is_empty() {
        let message = "text: paste the error text to classify".to_string();
        return Err(IpcError {
            code: ErrorCode::Validation,
            fields: vec![FieldError::new("text", "paste the error text to classify")],
            message,
        });
    }
    let now = Utc::now();
    let evidence = Evidence::from_raw(RawEvidence::new(provider, text, now));
    let classification = catalogue.classify(&evidence, machine_local_tz());
    let failures = vec![SimulatedFailure::classified(&classification, now); PASTED_REPEATS];
    Ok(TextPreview {
        steps: timeline(candidates, &failures, now),
        classification,
    })
}

/// The evaluator's decisions on `failures` from `start`, in the words
/// `recourse simulate` prints.
fn timeline(
    candidates: Vec<PreviewCandidate>,
    failures: &[SimulatedFailure],
    start: chrono::DateTime<Utc>,
) -> Vec<PreviewStep> {
    let slots: Vec<CandidateSlot> = candidates
        .into_iter()
        .map(|c| CandidateSlot {
            enabled: c.enabled,
            name: c.name,
            policy: c.policy,
        })
        .collect();
    let words = TimelineWording {
        start,
        candidates: &slots,
    };
    simulate(&slots, failures, start)
        .into_iter()
        .map(|step| PreviewStep {
            text: step.decision.describe(&words),
            step,
        })
        .collect()
}

/// What a class section does when every attempt fails, in words; `next`
/// names the candidate a skip goes to.
#[tauri::command]
#[specta::specta]
pub async fn describe_schedule(section: ClassPolicy, next: Option<String>) -> String {
    section.describe_schedule(next.as_deref())
}

#[tauri::command]
#[specta::specta]
pub async fn start_run(state: State<'_, AppState>, request: StartRun) -> Reply<RouteSnapshot> {
    Ok(state.engine().await?.start_run(request).await?)
}

#[tauri::command]
#[specta::specta]
pub async fn list_routes(state: State<'_, AppState>, query: RouteQuery) -> Reply<RoutePage> {
    state.route_page(&query).await
}

/// Whether the engine is still starting, ready, or failed to open; the
/// [`EngineStatus`] event says when that changes.
#[tauri::command]
#[specta::specta]
pub async fn engine_status(state: State<'_, AppState>) -> Reply<EngineStatus> {
    Ok(state.engine_status())
}

#[tauri::command]
#[specta::specta]
pub async fn route_detail(state: State<'_, AppState>, id: u32) -> Reply<RouteDetail> {
    Ok(state.engine().await?.route_detail(id)?)
}

/// A manual action fenced by the generation the person saw; a stale one is
/// refused with code `stale` and the UI reloads the route.
#[tauri::command]
#[specta::specta]
pub async fn route_action(
    state: State<'_, AppState>,
    request: ActionRequest,
) -> Reply<RouteSnapshot> {
    Ok(state.engine().await?.act(request).await?)
}

#[cfg(test)]
mod tests {
    use recourse::classification::SemanticCode;
    use recourse::policy::Exhausted;
    use tauri::async_runtime::block_on;

    use super::*;

    fn retrying(max_retries: u32, initial_interval_seconds: u32) -> ClassPolicy {
        ClassPolicy::new(
            None,
            Some((max_retries, initial_interval_seconds)),
            Exhausted::Skip,
        )
    }

    #[test]
    fn preview_steps_carry_the_words_recourse_simulate_prints() {
        let candidate = |name: &str| PreviewCandidate {
            name: name.into(),
            enabled: true,
            policy: CandidatePolicy::both(retrying(1, 5)),
        };
        let failures = vec![SimulatedFailure::of(SemanticCode::ProviderOverloaded); 2];
        let steps = block_on(preview_policy(
            vec![candidate("opus"), candidate("gemini")],
            failures,
        ));
        let texts: Vec<String> = steps.into_iter().map(|s| s.text).collect();
        assert_eq!(
            texts,
            [
                "transient retry 1 of 1 in 5s, at +5s",
                "transient recovery exhausted: skip opus for gemini"
            ],
            "offsets from the preview's start and candidates by the draft's names"
        );
    }

    #[test]
    fn secret_variables_are_those_the_sanitizer_would_redact_or_the_keyring_holds() {
        let env = [
            ("OPENAI_API_KEY", "sk-proj-abcdefghijklmnopqrstuvwx"),
            ("HTTPS_PROXY", "http://127.0.0.1:3128"),
            (
                "PROXY_WITH_LOGIN",
                "http://alice:hunter22@proxy.example:3128",
            ),
            ("CLAUDE_CODE_MAX_RETRIES", "1"),
            (
                "SOME_SETTING",
                "recourse-keyring:0123456789abcdef0123456789abcdef",
            ),
        ]
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .into();
        let found = block_on(secret_env(env)).unwrap();
        let names: Vec<&str> = found.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            ["OPENAI_API_KEY", "PROXY_WITH_LOGIN", "SOME_SETTING"],
            "a key, a URL with a password and a keyring reference are hidden; a plain proxy \
             and a number are not"
        );
        assert_eq!(found[2].place, recourse::engine::SecretPlace::Keyring);
        assert_eq!(found[2].note, "in the keyring");
    }

    #[test]
    fn pasted_error_text_is_classified_by_the_catalogue_and_previewed() {
        let candidate = PreviewCandidate {
            name: "opus".into(),
            enabled: true,
            policy: CandidatePolicy::both(retrying(1, 5)),
        };
        let preview = text_preview(
            recourse::catalogue::builtin(),
            vec![candidate],
            Provider::AnthropicApi,
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#.into(),
        )
        .unwrap();
        assert_eq!(
            preview.classification.code,
            SemanticCode::ProviderOverloaded,
            "the built-in catalogue's rule, not an example"
        );
        let texts: Vec<&str> = preview.steps.iter().map(|s| s.text.as_str()).collect();
        assert_eq!(
            texts,
            [
                "transient retry 1 of 1 in 5s, at +5s",
                "manual recovery: transient policy says skip, but no eligible candidate is left"
            ],
            "the same evaluator as preview_policy, on the classified failure"
        );
    }

    #[test]
    fn empty_error_text_is_refused_at_its_field() {
        let err = text_preview(
            recourse::catalogue::builtin(),
            vec![],
            Provider::ClaudeCode,
            "  ".into(),
        )
        .unwrap_err();
        assert_eq!(err.fields[0].path, "text");
        assert_eq!(err.message, "text: paste the error text to classify");
    }

    #[test]
    fn schedule_names_the_next_candidate_it_skips_to() {
        assert_eq!(
            block_on(describe_schedule(retrying(3, 5), Some("Codex".into()))),
            "Retry after 5 s, 10 s, 20 s, then skip to Codex."
        );
    }
}
