//! The local catalogue overlay in a running engine: a rule written while the
//! engine runs (by the CLI, an editor or the app) decides the next failure,
//! attempt history keeps the version of its time, and a planted secret in
//! the evidence never reaches the local rules file or its fixtures.

use crate::common::{open_engine, uniform_policy, until_route};
use recourse::agent::{AgentSpec, SimStep};
use recourse::catalogue::local::LocalFile;
use recourse::catalogue::propose::propose;
use recourse::catalogue::{builtin, CATALOGUE_VERSION};
use recourse::classification::{Class, SemanticCode};
use recourse::engine::overlay::{overlay_dir, EvidenceSource, RULES_FILE};
use recourse::engine::{Engine, RouteSnapshot, StartRun};
use recourse::policy::Exhausted;
use recourse::profile::{CandidateInput, Profile};
use recourse::route::RouteState;

const KEY: &str = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGH";

fn odd_failure(message: &str) -> CandidateInput {
    CandidateInput::new(
        "odd",
        AgentSpec::simulated(vec![SimStep::Unrecognised {
            after_ms: 10,
            message: message.to_owned(),
        }]),
        uniform_policy(None, Some((3, 30)), Exhausted::Stop),
    )
}

fn profile(engine: &Engine, candidate: CandidateInput) -> Profile {
    let p = engine.create_profile("P").unwrap();
    engine
        .save_candidates(p.id, p.revision, vec![candidate])
        .unwrap()
}

async fn run(engine: &Engine, p: &Profile) -> RouteSnapshot {
    engine
        .start_run(StartRun {
            profile_id: p.id,
            prompt: "work".into(),
            cwd: None,
        })
        .await
        .unwrap()
}

#[tokio::test(start_paused = true)]
async fn a_running_engine_uses_a_local_rule_written_after_it_started() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.db");
    let engine = open_engine(&db, false).await;
    let p = profile(&engine, odd_failure("the flux capacitor is out of sync"));
    let first = run(&engine, &p).await;
    let first = until_route(&engine, first.id, "left running", |s| {
        s.state != RouteState::Running
    })
    .await;
    assert_eq!(
        first.state,
        RouteState::NeedsManual,
        "unknown text needs a person"
    );

    // Another process (the CLI, an editor) writes a reviewed rule.
    let item = &engine.unclassified_inbox().unwrap()[0];
    let mut draft = propose(&item.evidence, |_| false);
    draft.code = SemanticCode::ProviderUnavailable;
    let local = LocalFile::default().with_rule(draft.to_spec(true));
    let folder = overlay_dir(&db);
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join(RULES_FILE), local.to_toml()).unwrap();

    let second = run(&engine, &p).await;
    let second = until_route(&engine, second.id, "left running", |s| {
        s.state != RouteState::Running
    })
    .await;
    assert_eq!(
        second.state,
        RouteState::RetryScheduled,
        "the candidate's transient policy now handles the same error"
    );
    let attempt = &engine.route_detail(second.id).unwrap().attempts[0];
    let c = attempt.classification.as_ref().unwrap();
    assert_eq!(c.class, Class::Transient);
    assert_eq!(c.rule_id.as_deref(), Some(draft.id.as_str()));
    assert_eq!(c.catalogue_version, format!("{CATALOGUE_VERSION}+local.1"));
    let old = &engine.route_detail(first.id).unwrap().attempts[0];
    assert_eq!(
        old.classification.as_ref().unwrap().catalogue_version,
        CATALOGUE_VERSION,
        "history keeps the version of its time"
    );
    engine.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn an_unreviewed_local_rule_is_shown_but_the_route_still_needs_a_person() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.db");
    let engine = open_engine(&db, false).await;
    let p = profile(&engine, odd_failure("the flux capacitor is out of sync"));
    let evidence_route = run(&engine, &p).await;
    until_route(&engine, evidence_route.id, "left running", |s| {
        s.state != RouteState::Running
    })
    .await;
    let item = &engine.unclassified_inbox().unwrap()[0];
    let mut draft = propose(&item.evidence, |_| false);
    draft.code = SemanticCode::ProviderUnavailable;
    engine
        .save_rule(
            &draft.to_spec(false),
            &[],
            Some(EvidenceSource::Attempt {
                route_id: item.route_id,
                attempt: item.attempt,
            }),
        )
        .unwrap();
    let again = run(&engine, &p).await;
    let again = until_route(&engine, again.id, "left running", |s| {
        s.state != RouteState::Running
    })
    .await;
    assert_eq!(
        again.state,
        RouteState::NeedsManual,
        "unreviewed fails closed"
    );
    let attempt = &engine.route_detail(again.id).unwrap().attempts[0];
    let c = attempt.classification.as_ref().unwrap();
    assert_eq!(
        c.rule_id.as_deref(),
        Some(draft.id.as_str()),
        "but it is shown"
    );
    engine.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn a_planted_key_in_an_inbox_item_never_reaches_the_local_catalogue() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.db");
    let engine = open_engine(&db, false).await;
    let p = profile(
        &engine,
        odd_failure(&format!("the flux capacitor refused key {KEY}")),
    );
    let s = run(&engine, &p).await;
    until_route(&engine, s.id, "left running", |s| {
        s.state != RouteState::Running
    })
    .await;
    let item = &engine.unclassified_inbox().unwrap()[0];
    let mut draft = propose(&item.evidence, |_| false);
    draft.code = SemanticCode::ProviderUnavailable;
    let review = engine.review_rule(&draft.to_spec(true), &[], None).unwrap();
    assert!(review.refusals.is_empty(), "{:?}", review.refusals);
    let impact = &review.checks.unwrap().impact;
    assert_eq!(impact.len(), 1, "the inbox item is what the rule changes");
    assert_eq!(
        impact[0].name,
        format!("From the inbox — route {}, attempt 1", s.id)
    );
    let saved = engine
        .save_rule(
            &draft.to_spec(true),
            &[],
            Some(EvidenceSource::Attempt {
                route_id: item.route_id,
                attempt: item.attempt,
            }),
        )
        .unwrap();
    let mut written = vec![std::fs::read_to_string(&saved.rules_path).unwrap()];
    written.push(std::fs::read_to_string(saved.fixture_path.unwrap()).unwrap());
    for text in written {
        assert!(!text.contains("abcdefghijklmnop"), "key leaked: {text}");
        assert!(!text.contains(KEY));
    }
    assert_eq!(
        engine.catalogue().version,
        format!("{}+local.1", builtin().version)
    );
    let now = engine.unclassified_inbox().unwrap()[0].now.clone();
    assert_eq!(
        now.map(|c| (c.rule_id, c.class)),
        Some((Some(draft.id.clone()), Class::Transient)),
        "the inbox item says the catalogue now knows it"
    );
    engine.shutdown().await;
}
