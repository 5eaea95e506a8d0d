//! Profiles and their candidates: the agent kinds to pick from, create,
//! rename, delete and save, the editor's live checks, where secret values
//! live, and the policy's summary, schedule and preview in the backend's
//! own words.

use std::collections::BTreeMap;

use recourse::agent::AgentSpec;
use recourse::engine::{secret_places, AgentKindInfo, Readiness, SecretEnv, TextPreview};
use recourse::evaluator::CandidateSlot;
use recourse::evidence::Provider;
use recourse::policy::validate::{validate_policy, FieldError};
use recourse::policy::{CandidatePolicy, ClassPolicy, UnclassifiedPolicy};
use recourse::profile::{CandidateInput, Profile};
use recourse::simulation::{preview, Preview, SimulatedFailure};
use tauri::State;

use super::Reply;
use crate::error::IpcError;
use crate::AppState;

#[tauri::command]
#[specta::specta]
pub async fn agent_kinds(state: State<'_, AppState>) -> Reply<Vec<AgentKindInfo>> {
    state.run(|engine| Ok(engine.agent_kinds())).await
}

#[tauri::command]
#[specta::specta]
pub async fn list_profiles(state: State<'_, AppState>) -> Reply<Vec<Profile>> {
    state.run(|engine| Ok(engine.list_profiles()?)).await
}

#[tauri::command]
#[specta::specta]
pub async fn create_profile(state: State<'_, AppState>, name: String) -> Reply<Profile> {
    state
        .run(move |engine| Ok(engine.create_profile(&name)?))
        .await
}

#[tauri::command]
#[specta::specta]
pub async fn rename_profile(state: State<'_, AppState>, id: u32, name: String) -> Reply<Profile> {
    state
        .run(move |engine| Ok(engine.rename_profile(id, &name)?))
        .await
}

#[tauri::command]
#[specta::specta]
pub async fn delete_profile(state: State<'_, AppState>, id: u32) -> Reply<()> {
    state
        .run(move |engine| Ok(engine.delete_profile(id)?))
        .await
}

#[tauri::command]
#[specta::specta]
pub async fn save_candidates(
    state: State<'_, AppState>,
    profile_id: u32,
    expected_revision: u32,
    candidates: Vec<CandidateInput>,
) -> Reply<Profile> {
    let names: Vec<String> = candidates.iter().map(|c| c.name.clone()).collect();
    state
        .run(move |engine| Ok(engine.save_candidates(profile_id, expected_revision, candidates)?))
        .await
        .map_err(|e| e.in_words(&names))
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

/// The variables whose values look like secrets (what the evidence
/// sanitizer would redact) and where each lives, for the editor to hide and
/// say; the UI keeps no list of its own. Asks the keyring whether it runs.
#[tauri::command]
#[specta::specta]
pub async fn secret_env(env: BTreeMap<String, String>) -> Reply<Vec<SecretEnv>> {
    tauri::async_runtime::spawn_blocking(move || secret_places(&env))
        .await
        .map_err(|e| IpcError::io(&e))
}

/// Whether a candidate can start: its program and version, and whether its
/// credentials are present (their values are never read).
#[tauri::command]
#[specta::specta]
pub async fn readiness(agent: AgentSpec) -> Readiness {
    recourse::engine::readiness(&agent).await
}

/// A candidate's policy in one line (`Transient: retry 3× from 5 s, then
/// skip · Hard: stop`).
#[tauri::command]
#[specta::specta]
pub async fn policy_summary(policy: CandidatePolicy) -> String {
    policy.summary()
}

/// What a class section does when every attempt fails, in words; `next`
/// names the candidate a skip goes to.
#[tauri::command]
#[specta::specta]
pub async fn describe_schedule(section: ClassPolicy, next: Option<String>) -> String {
    section.describe_schedule(next.as_deref())
}

/// What the unclassified exception does, in words; `next` names the
/// candidate a skip goes to.
#[tauri::command]
#[specta::specta]
pub async fn describe_unclassified(section: UnclassifiedPolicy, next: Option<String>) -> String {
    section.describe(next.as_deref())
}

/// The evaluator's timeline if every attempt failed like `failures`, the
/// last of them again until the route leaves automatic recovery: the same
/// evaluator `recourse simulate` runs.
#[tauri::command]
#[specta::specta]
pub async fn preview_policy(
    candidates: Vec<CandidateSlot>,
    failures: Vec<SimulatedFailure>,
) -> Preview {
    preview(&candidates, &failures, chrono::Utc::now())
}

/// Pasted error text classified by the catalogue a run would use (local
/// rules included), then the same timeline as [`preview_policy`].
#[tauri::command]
#[specta::specta]
pub async fn preview_error_text(
    state: State<'_, AppState>,
    candidates: Vec<CandidateSlot>,
    provider: Provider,
    text: String,
) -> Reply<TextPreview> {
    state
        .run(move |engine| Ok(engine.preview_error_text(&candidates, provider, &text)?))
        .await
}

#[cfg(test)]
mod tests {
    use recourse::classification::SemanticCode;
    use recourse::policy::Exhausted;
    use recourse::simulation::SimulatedFailure;
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
        let candidate = |name: &str| CandidateSlot {
            name: name.into(),
            enabled: true,
            policy: CandidatePolicy::both(retrying(1, 5)),
            kind: None,
        };
        let failures = vec![SimulatedFailure::of(SemanticCode::ProviderOverloaded)];
        let shown = block_on(preview_policy(
            vec![candidate("opus"), candidate("gemini")],
            failures,
        ));
        assert_eq!(shown.cut, None);
        let texts: Vec<String> = shown.steps.into_iter().map(|s| s.text).collect();
        assert_eq!(
            texts,
            [
                "transient retry 1 of 1 in 5 s, at +5 s",
                "“opus” used up its transient retries and wait; skipping to “gemini”",
                "transient retry 1 of 1 in 5 s, at +10 s",
                "manual recovery: the transient policy says skip, but no candidate is left to \
                 skip to in this cycle"
            ],
            "offsets from the preview's start, candidates by the draft's names, and the one \
             failure again until the route's end"
        );
    }

    #[test]
    fn the_preview_says_when_a_session_would_be_continued_and_why_not() {
        use recourse::evaluator::{SessionFacts, ToolCalls};
        use recourse::safety::{EffectContext, PromptDelivery};
        let mut policy = CandidatePolicy::both(retrying(1, 5));
        policy.transient.auto_continue = recourse::policy::AutoContinue::ON;
        let opus = CandidateSlot {
            name: "opus".into(),
            enabled: true,
            policy,
            kind: Some(recourse::agent::AgentKind::ClaudeCode),
        };
        let after_tools = |tools| SimulatedFailure {
            effect: Some(EffectContext {
                prompt_delivery: Some(PromptDelivery::Confirmed),
                assistant_output_seen: Some(true),
                tool_activity_seen: Some(true),
                partial_result_seen: Some(false),
                evidence_current: Some(true),
            }),
            session: Some(SessionFacts {
                resumable: true,
                tools,
            }),
            ..SimulatedFailure::of(SemanticCode::NetworkReset)
        };
        let texts = |failures| -> Vec<String> {
            block_on(preview_policy(vec![opus.clone()], failures))
                .steps
                .into_iter()
                .map(|s| s.text)
                .collect()
        };
        let continued = |n: u32| {
            format!(
                "transient failure after completed tools: continue the agent's own session \
                 automatically ({n} of 2), without sending the prompt again"
            )
        };
        let refused = "manual recovery: not safe to recover automatically — a tool call or tool \
                       effect was seen before the failure";
        assert_eq!(
            texts(vec![after_tools(ToolCalls::Completed); 3]),
            [
                continued(1),
                continued(2),
                format!(
                    "{refused}; not continued automatically, as its 2 automatic continuations in \
                     this cycle are used"
                )
            ]
        );
        assert_eq!(
            texts(vec![after_tools(ToolCalls::Pending)]),
            [format!(
                "{refused}; not continued automatically, as a tool call had not finished"
            )]
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
    fn schedule_names_the_next_candidate_it_skips_to() {
        assert_eq!(
            block_on(describe_schedule(retrying(3, 5), Some("Codex".into()))),
            "Retry after 5 s, 10 s, 20 s, then skip to “Codex”."
        );
    }
}
