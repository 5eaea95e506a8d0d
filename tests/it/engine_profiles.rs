//! Profiles and candidates through the engine API: validation with field
//! paths, revision conflicts, all-or-nothing saves, and error codes.

use crate::common::open_engine;
use recourse::agent::{AgentKind, AgentSpec, SimStep};
use recourse::engine::{Engine, EngineError, StartRun, DEMO_PROFILE};
use recourse::policy::{CandidatePolicy, ClassPolicy, Exhausted};
use recourse::profile::CandidateInput;

async fn open(dir: &tempfile::TempDir, seed_demo: bool) -> Engine {
    open_engine(&dir.path().join("p.db"), seed_demo).await
}

fn sim(name: &str) -> CandidateInput {
    CandidateInput::new(
        name,
        AgentSpec::simulated(vec![SimStep::Succeed { after_ms: 10 }]),
        CandidatePolicy::default_for_new_candidate(),
    )
}

fn validation(err: EngineError) -> (String, String) {
    assert_eq!(err.code().as_str(), "validation");
    let field = err
        .field_errors()
        .first()
        .expect("validation errors name a field")
        .path
        .clone();
    (field, err.to_string())
}

#[tokio::test]
async fn demo_profile_is_seeded_once() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(&dir, true).await;
    engine.shutdown().await;
    let engine = open(&dir, true).await;
    let profiles = engine.list_profiles().unwrap();
    assert_eq!(profiles.len(), 1, "reopening does not seed again");
    assert_eq!(profiles[0].name, DEMO_PROFILE);
    engine.shutdown().await;
}

#[tokio::test]
async fn profiles_are_listed_alphabetically_whatever_their_case() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(&dir, false).await;
    for name in ["beta", "Alpha", "gamma", "Delta"] {
        engine.create_profile(name).unwrap();
    }
    let names: Vec<String> = engine
        .list_profiles()
        .unwrap()
        .into_iter()
        .map(|p| p.name)
        .collect();
    assert_eq!(
        names,
        ["Alpha", "beta", "Delta", "gamma"],
        "a byte order would put every capital first"
    );
    engine.shutdown().await;
}

#[tokio::test]
async fn saving_candidates_bumps_revision_and_keeps_ids() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(&dir, false).await;
    let p = engine.create_profile("  Work  ").unwrap();
    assert_eq!(p.name, "Work", "names are trimmed");
    let p = engine
        .save_candidates(p.id, p.revision, vec![sim("a"), sim("b")])
        .unwrap();
    assert_eq!(p.revision, 2);
    let (a, b) = (p.candidates[0].clone(), p.candidates[1].clone());
    let mut edited = CandidateInput {
        id: Some(a.id),
        name: a.name.clone(),
        enabled: a.enabled,
        agent: a.agent.clone(),
        policy: CandidatePolicy::new(
            ClassPolicy::new(None, Some((2, 5)), Exhausted::Stop),
            ClassPolicy::new(None, None, Exhausted::Skip),
        ),
    };
    let reordered = vec![
        CandidateInput {
            id: Some(b.id),
            ..sim("b")
        },
        edited.clone(),
    ];
    let p = engine.save_candidates(p.id, p.revision, reordered).unwrap();
    assert_eq!(p.candidates[0].id, b.id, "reordering keeps ids");
    assert_eq!(p.candidates[1].id, a.id);
    assert_eq!(
        p.candidates[1].policy_revision, 2,
        "edited policy is a new revision"
    );
    assert_eq!(
        p.candidates[0].policy_revision, 1,
        "unchanged policy keeps its revision"
    );
    edited.name = "renamed".into();
    let p2 = engine
        .save_candidates(p.id, p.revision, vec![edited])
        .unwrap();
    assert_eq!(p2.candidates.len(), 1, "a candidate left out is removed");
    engine.shutdown().await;
}

#[tokio::test]
async fn stale_revision_is_a_conflict_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(&dir, false).await;
    let p = engine.create_profile("Work").unwrap();
    engine
        .save_candidates(p.id, p.revision, vec![sim("a")])
        .unwrap();
    let err = engine
        .save_candidates(p.id, p.revision, vec![sim("x"), sim("y")])
        .unwrap_err();
    assert_eq!(err.code().as_str(), "conflict");
    assert_eq!(
        err.to_string(),
        "the profile was changed elsewhere (revision 2, you edited 1); reload it and apply your edit again"
    );
    assert_eq!(engine.get_profile(p.id).unwrap().candidates.len(), 1);
    engine.shutdown().await;
}

#[tokio::test]
async fn a_save_with_several_problems_reports_each_at_its_field() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(&dir, false).await;
    let p = engine.create_profile("Work").unwrap();
    let mut no_script = sim("a");
    no_script.agent.script.clear();
    let mut bad_policy = sim("b");
    bad_policy.policy.hard = ClassPolicy::new(None, Some((0, 5)), Exhausted::Skip);
    let err = engine
        .save_candidates(p.id, p.revision, vec![no_script, bad_policy, sim("a")])
        .unwrap_err();
    let paths: Vec<&str> = err.field_errors().iter().map(|e| e.path.as_str()).collect();
    assert_eq!(
        paths,
        vec![
            "candidates[1].hard.retry.max_retries",
            "candidates[2].name",
            "candidates[0].agent.script",
        ],
        "every problem, policy document first, then each agent: not just the first one"
    );
    let first = &err.field_errors()[0];
    assert!(
        !first.message.contains("candidates["),
        "the message is the field's own, without its path: {}",
        first.message
    );
    engine.shutdown().await;
}

#[tokio::test]
async fn invalid_candidate_is_reported_by_field_path_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(&dir, false).await;
    let p = engine.create_profile("Work").unwrap();
    let mut bad = sim("c");
    bad.agent.script.clear();
    let err = engine
        .save_candidates(p.id, p.revision, vec![sim("a"), sim("b"), bad])
        .unwrap_err();
    assert_eq!(
        validation(err),
        (
            "candidates[2].agent.script".to_string(),
            "candidates[2].agent.script: a simulated candidate needs at least one scripted step"
                .to_string()
        )
    );
    let mut generic = sim("g");
    generic.agent.kind = AgentKind::Generic;
    let err = engine
        .save_candidates(p.id, p.revision, vec![generic])
        .unwrap_err();
    assert_eq!(
        validation(err).1,
        "candidates[0].agent.program: Any command needs a program: write a command on PATH, or its path"
    );
    let mut unnamed = sim(" ");
    unnamed.name = " ".into();
    let err = engine
        .save_candidates(p.id, p.revision, vec![unnamed])
        .unwrap_err();
    assert_eq!(validation(err).1, "candidates[0].name: must not be empty");
    let err = engine
        .save_candidates(p.id, p.revision, vec![sim("a"), sim("a")])
        .unwrap_err();
    assert_eq!(
        validation(err).1,
        "candidates[1].name: duplicate candidate name \"a\" (also candidates[0])"
    );
    let err = engine
        .save_candidates(p.id, p.revision, vec![])
        .unwrap_err();
    assert_eq!(
        validation(err).1,
        "candidates: must list at least one candidate"
    );
    let mut bad_policy = sim("p");
    bad_policy.policy = CandidatePolicy::new(
        ClassPolicy::new(None, Some((0, 5)), Exhausted::Skip),
        ClassPolicy::new(None, None, Exhausted::Skip),
    );
    let err = engine
        .save_candidates(p.id, p.revision, vec![sim("a"), bad_policy])
        .unwrap_err();
    let (field, _) = validation(err);
    assert!(
        field.starts_with("candidates[1].transient.retry"),
        "policy errors carry the candidate's path, got {field}"
    );
    let mut too_many = sim("q");
    too_many.policy.unclassified = recourse::policy::UnclassifiedPolicy::skip_after(11);
    let err = engine
        .save_candidates(p.id, p.revision, vec![sim("a"), too_many])
        .unwrap_err();
    assert_eq!(
        validation(err),
        (
            "candidates[1].unclassified.repeated_failure.threshold".to_string(),
            "candidates[1].unclassified.repeated_failure.threshold: must be 2–10 identical \
             failures when enabled (11 is too many)"
                .to_string()
        ),
        "refused at the field, naming the range"
    );
    let after = engine.get_profile(p.id).unwrap();
    assert_eq!(
        (after.revision, after.candidates.len()),
        (1, 0),
        "nothing half-written"
    );
    engine.shutdown().await;
}

#[tokio::test]
async fn candidate_id_of_another_profile_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(&dir, false).await;
    let a = engine.create_profile("A").unwrap();
    let a = engine.save_candidates(a.id, 1, vec![sim("a")]).unwrap();
    let b = engine.create_profile("B").unwrap();
    let stolen = CandidateInput {
        id: Some(a.candidates[0].id),
        ..sim("a")
    };
    let err = engine.save_candidates(b.id, 1, vec![stolen]).unwrap_err();
    assert_eq!(
        validation(err).1,
        format!(
            "candidates[0].id: candidate {} does not belong to this profile",
            a.candidates[0].id
        )
    );
    assert_eq!(engine.get_profile(a.id).unwrap().candidates.len(), 1);
    engine.shutdown().await;
}

#[tokio::test]
async fn profile_names_are_unique_non_empty_and_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(&dir, false).await;
    let p = engine.create_profile("Work").unwrap();
    let err = engine.create_profile("Work").unwrap_err();
    assert_eq!(err.code().as_str(), "conflict");
    assert_eq!(
        err.to_string(),
        "a profile named “Work” already exists",
        "a name in curly quotes, as the app quotes names"
    );
    let err = engine.create_profile("   ").unwrap_err();
    assert_eq!(validation(err).1, "name: a profile needs a name");
    let err = engine.create_profile(&"x".repeat(81)).unwrap_err();
    assert_eq!(
        validation(err).1,
        "name: a profile name is at most 80 characters"
    );
    let q = engine.create_profile("Home").unwrap();
    let err = engine.rename_profile(q.id, "Work").unwrap_err();
    assert_eq!(err.code().as_str(), "conflict");
    assert_eq!(
        engine.rename_profile(p.id, "Office").unwrap().name,
        "Office"
    );
    engine.shutdown().await;
}

#[tokio::test]
async fn missing_things_are_not_found() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(&dir, false).await;
    for err in [
        engine.get_profile(99).unwrap_err(),
        engine.rename_profile(99, "x").unwrap_err(),
        engine.delete_profile(99).unwrap_err(),
        engine.save_candidates(99, 1, vec![sim("a")]).unwrap_err(),
    ] {
        assert_eq!(err.code().as_str(), "not_found");
        assert_eq!(err.to_string(), "profile 99 does not exist");
        assert_eq!(err.field_errors(), &[]);
    }
    let err = engine.route_detail(7).unwrap_err();
    assert_eq!(err.to_string(), "route 7 does not exist");
    let err = engine.profile_by_name("Nope").unwrap_err();
    assert_eq!(err.to_string(), "profile \"Nope\" does not exist");
    engine.shutdown().await;
}

#[tokio::test]
async fn starting_a_run_checks_prompt_cwd_and_candidates() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(&dir, false).await;
    let p = engine.create_profile("Empty").unwrap();
    let run = |prompt: &str, cwd: Option<&str>| StartRun {
        profile_id: p.id,
        prompt: prompt.into(),
        cwd: cwd.map(str::to_string),
    };
    let err = engine.start_run(run(" ", None)).await.unwrap_err();
    assert_eq!(validation(err).1, "prompt: the prompt is empty");
    let err = engine
        .start_run(run("go", Some("/nonexistent/dir")))
        .await
        .unwrap_err();
    assert_eq!(validation(err).1, "cwd: /nonexistent/dir does not exist");
    let err = engine.start_run(run("go", None)).await.unwrap_err();
    assert_eq!(
        validation(err).1,
        "profile_id: the profile has no enabled candidate"
    );
    engine.shutdown().await;
}

#[tokio::test]
async fn agent_picker_lists_every_kind_with_a_description() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(&dir, false).await;
    let kinds = engine.agent_kinds();
    assert_eq!(kinds.len(), AgentKind::ALL.len());
    assert!(kinds
        .iter()
        .all(|k| !k.description.is_empty() && !k.label.is_empty()));
    let claude = kinds
        .iter()
        .find(|k| k.kind == AgentKind::ClaudeCode)
        .unwrap();
    assert_eq!(claude.default_program.as_deref(), Some("claude"));
    engine.shutdown().await;
}

#[test]
fn the_live_list_check_reports_what_a_save_would_refuse_without_saving() {
    let errors = recourse::profile::check_candidates(&[sim("a"), sim("b"), sim("a")]);
    let found: Vec<String> = errors
        .iter()
        .map(|e| format!("{}: {}", e.path, e.message))
        .collect();
    assert_eq!(
        found,
        ["candidates[2].name: duplicate candidate name \"a\" (also candidates[0])"],
        "the editor's live check finds what only the whole list shows, at the later row"
    );
    assert!(
        recourse::profile::check_candidates(&[sim("a"), sim("b")]).is_empty(),
        "renaming the duplicate clears it"
    );
}

#[tokio::test]
async fn pasted_error_text_is_classified_by_the_catalogue_in_force_and_previewed() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(&dir, false).await;
    let candidate = recourse::evaluator::CandidateSlot {
        name: "opus".into(),
        enabled: true,
        policy: CandidatePolicy::both(ClassPolicy::new(None, Some((1, 5)), Exhausted::Skip)),
        kind: None,
    };
    let preview = engine
        .preview_error_text(
            &[candidate],
            recourse::evidence::Provider::AnthropicApi,
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
        )
        .unwrap();
    assert_eq!(
        preview.classification.code,
        recourse::classification::SemanticCode::ProviderOverloaded,
        "the built-in catalogue's rule, not an example"
    );
    assert_eq!(preview.preview.cut, None, "the route ends within the walk");
    let texts: Vec<&str> = preview
        .preview
        .steps
        .iter()
        .map(|s| s.text.as_str())
        .collect();
    assert_eq!(
        texts,
        [
            "transient retry 1 of 1 in 5 s, at +5 s",
            "manual recovery: the transient policy says skip, but no candidate is left to skip \
             to in this cycle"
        ],
        "the same evaluator as the editor's preview, on the classified failure"
    );
    let err = engine
        .preview_error_text(&[], recourse::evidence::Provider::ClaudeCode, "  ")
        .unwrap_err();
    assert_eq!(
        validation(err),
        (
            "text".to_string(),
            "text: paste the error text to classify".to_string()
        )
    );
    engine.shutdown().await;
}
