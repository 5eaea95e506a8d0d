//! Continue and Hand over through the engine, on recordings of the pinned
//! real CLIs (fixtures/agents/recorded-next/<cli>/resume.*): a tool runs,
//! then the provider fails (`resume.first`), so the safety gate hands the
//! route to a person; Continue resumes the CLI's own session with the
//! continuation message (the replayer plays `resume.continue` only for
//! exactly the resume command line the real CLI was run with), and the
//! route succeeds. Hand over starts the next candidate with the prompt and
//! the package. The session files a real CLI leaves behind are made where
//! each CLI keeps them (`docs/agents.md`), since a replay writes none.

use std::path::{Path, PathBuf};

use recourse::agent::{Access, AgentKind, AgentSpec, SimStep};
use recourse::engine::{ActionRequest, Engine, EngineError};
use recourse::profile::CandidateInput;
use recourse::route::{Actor, AttemptInput, ManualAction, RouteState, DEFAULT_CONTINUE_MESSAGE};

use crate::common::{engine_profile, open_engine, pinned_version, uniform_policy, until_state};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The pinned CLIs with resume recordings, and their kinds.
const CLIS: [(&str, AgentKind); 4] = [
    ("claude", AgentKind::ClaudeCode),
    ("codex", AgentKind::Codex),
    ("gemini", AgentKind::Gemini),
    ("opencode", AgentKind::Opencode),
];

fn recording(cli: &str, name: &str) -> PathBuf {
    let version = pinned_version(cli);
    Path::new(ROOT).join(format!(
        "fixtures/agents/recorded-next/{cli}-{version}/{name}"
    ))
}

/// The session id the recorder wrote in place of the one the CLI printed.
fn session_of(cli: &str) -> &'static str {
    match cli {
        "opencode" => "ses_00000000000000000000000001",
        _ => "00000000-0000-4000-8000-000000000001",
    }
}

/// A candidate replaying `cli`'s resume pair at access `edit`, its session
/// state kept under `home` (left there when `session_kept`).
fn resuming(cli: &str, kind: AgentKind, home: &Path, session_kept: bool) -> AgentSpec {
    let mut agent = AgentSpec::default_for(kind);
    agent.access = Some(Access::Edit);
    agent.program = Some(format!("{ROOT}/fixtures/agents/replay.py"));
    let pair = format!(
        "{}:{}",
        recording(cli, "resume.first").display(),
        recording(cli, "resume.continue").display()
    );
    agent.env.insert("RECOURSE_REPLAY".into(), pair);
    let config = home.join("config");
    let id = session_of(cli);
    let file = match kind {
        AgentKind::ClaudeCode => config.join(format!("projects/-work-repo/{id}.jsonl")),
        AgentKind::Codex => config.join(format!(
            "sessions/2026/12/05/rollout-2026-12-05T09-09-58-{id}.jsonl"
        )),
        AgentKind::Gemini => config.join(format!(
            ".gemini/tmp/repo/chats/session-2026-12-05T09-10-{}.jsonl",
            &id[..8]
        )),
        _ => home.join("data/opencode/opencode.db"),
    };
    if session_kept {
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, "").unwrap();
    }
    if kind == AgentKind::Opencode {
        agent.env.insert(
            "XDG_DATA_HOME".into(),
            home.join("data").display().to_string(),
        );
    } else {
        agent.config_dir = Some(config.display().to_string());
    }
    agent
}

fn manual_only() -> recourse::policy::CandidatePolicy {
    uniform_policy(None, None, recourse::policy::Exhausted::Stop)
}

async fn needs_you(engine: &Engine, agent: AgentSpec, then: Vec<CandidateInput>) -> u32 {
    let mut candidates = vec![CandidateInput::new("first", agent, manual_only())];
    candidates.extend(then);
    let name = format!("p{}", engine.list_profiles().unwrap().len());
    let profile = engine_profile(engine, &name, candidates);
    let s = crate::common::start_route(engine, profile).await.unwrap();
    let s = until_state(engine, s.id, RouteState::NeedsManual).await;
    assert!(
        s.manual_reason
            .as_deref()
            .unwrap_or_default()
            .starts_with("not safe to recover automatically"),
        "work was seen before the failure, so the gate hands it to a person: {:?}",
        s.manual_reason
    );
    s.id
}

async fn act(engine: &Engine, id: u32, action: ManualAction) -> Result<(), EngineError> {
    let generation = engine.route_detail(id).unwrap().snapshot.generation;
    engine
        .act(
            ActionRequest {
                route_id: id,
                action,
                expected_generation: generation,
                // The gate held these routes: the person was told.
                confirm_repeat: true,
                message: None,
            },
            Actor::App,
        )
        .await
        .map(|_| ())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn continue_resumes_each_clis_own_session_with_the_message_and_the_route_succeeds() {
    for (cli, kind) in CLIS {
        let dir = tempfile::tempdir().unwrap();
        let engine = open_engine(&dir.path().join("r.db"), false).await;
        let id = needs_you(&engine, resuming(cli, kind, dir.path(), true), vec![]).await;
        let preview = engine.continuation_preview(id).unwrap();
        let offer = preview.continue_offer.unwrap_or_else(|| {
            panic!("{cli}: continue is offered: {:?}", preview.continue_refused)
        });
        assert_eq!(
            offer.session_id,
            session_of(cli),
            "{cli}: the session it printed"
        );
        assert_eq!(offer.message, DEFAULT_CONTINUE_MESSAGE);
        // The replayer refuses (exit 97) any command line but the resume
        // the real CLI was recorded with, so success proves the argv.
        act(&engine, id, ManualAction::Continue).await.unwrap();
        until_state(&engine, id, RouteState::Succeeded).await;
        let d = engine.route_detail(id).unwrap();
        assert_eq!(d.attempts.len(), 2, "{cli}");
        assert_eq!(
            d.attempts[1].input,
            AttemptInput::Continue {
                of_attempt: 1,
                session_id: session_of(cli).to_string(),
                message: DEFAULT_CONTINUE_MESSAGE.to_string(),
                automatic: false,
            },
            "{cli}: recorded as a continuation of attempt 1 with its session"
        );
        engine.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn continue_is_refused_with_a_reason_when_the_session_is_gone_or_cannot_be_resumed() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open_engine(&dir.path().join("r.db"), false).await;
    let gone = resuming("claude", AgentKind::ClaudeCode, dir.path(), false);
    let id = needs_you(&engine, gone, vec![]).await;
    let why = act(&engine, id, ManualAction::Continue)
        .await
        .unwrap_err()
        .to_string();
    assert!(
        why.starts_with("cannot continue: the session of attempt 1 cannot be resumed: Claude Code's session folder ")
            && why.ends_with("/config/projects is gone"),
        "{why}"
    );
    assert_eq!(
        engine.route_detail(id).unwrap().attempts.len(),
        1,
        "nothing was sent"
    );

    // A simulated candidate reports no session and cannot resume one.
    let sim = AgentSpec::simulated(vec![SimStep::ToolThenReset { after_ms: 5 }]);
    let id = needs_you(&engine, sim, vec![]).await;
    let preview = engine.continuation_preview(id).unwrap();
    assert_eq!(
        preview.continue_refused.as_deref(),
        Some("Simulated provider candidates cannot resume a session; retry or hand over instead")
    );
    assert_eq!(
        preview.handover_refused.as_deref(),
        Some("no candidate is left to hand over to in this cycle")
    );
    engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_of_ones_own_is_sent_and_an_empty_one_is_refused_at_its_field() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open_engine(&dir.path().join("r.db"), false).await;
    let id = needs_you(
        &engine,
        resuming("claude", AgentKind::ClaudeCode, dir.path(), true),
        vec![],
    )
    .await;
    let generation = engine.route_detail(id).unwrap().snapshot.generation;
    let request = |message: &str| ActionRequest {
        route_id: id,
        action: ManualAction::Continue,
        expected_generation: generation,
        confirm_repeat: true,
        message: Some(message.to_string()),
    };
    let err = engine.act(request("  "), Actor::App).await.unwrap_err();
    assert_eq!(err.field_errors()[0].path, "message");
    assert_eq!(
        err.to_string(),
        "message: the continuation message is empty"
    );
    engine
        .act(request("Check git status, then finish."), Actor::App)
        .await
        .unwrap();
    until_state(&engine, id, RouteState::Succeeded).await;
    let d = engine.route_detail(id).unwrap();
    let AttemptInput::Continue { message, .. } = &d.attempts[1].input else {
        panic!("{:?}", d.attempts[1].input);
    };
    assert_eq!(message, "Check git status, then finish.");
    engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn handover_starts_the_next_candidate_with_the_prompt_and_the_package() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open_engine(&dir.path().join("r.db"), false).await;
    let got = dir.path().join("prompt.txt");
    // Any command reads its prompt on stdin: it keeps what it was sent.
    let mut next = AgentSpec::default_for(AgentKind::Generic);
    next.program = Some("sh".into());
    next.args = vec!["-c".into(), format!("cat > '{}'; echo done", got.display())];
    let then = vec![CandidateInput::new("next", next, manual_only())];
    let first = resuming("claude", AgentKind::ClaudeCode, dir.path(), true);
    let id = needs_you(&engine, first, then).await;
    let preview = engine.continuation_preview(id).unwrap();
    let offer = preview.handover.expect("hand over is offered");
    assert_eq!(offer.to_candidate, "next");
    act(&engine, id, ManualAction::Handover).await.unwrap();
    until_state(&engine, id, RouteState::Succeeded).await;
    let sent = std::fs::read_to_string(&got).unwrap();
    assert!(
        sent.starts_with("go\n\n----- BEGIN REFERENCE DATA FROM A PREVIOUS ATTEMPT"),
        "{sent}"
    );
    assert_eq!(
        sent.trim_end(),
        format!("go\n\n{}", offer.package),
        "the package previewed is the one sent"
    );
    assert!(
        sent.contains("### Tools it ran\n- Bash "),
        "the tool the first agent ran: {sent}"
    );
    assert!(
        sent.contains("(transient provider_internal_error"),
        "and how it failed: {sent}"
    );
    let d = engine.route_detail(id).unwrap();
    assert_eq!(
        d.attempts[1].input,
        AttemptInput::Handover {
            from_attempt: 1,
            package: offer.package
        },
        "stored with the attempt"
    );
    engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn continue_after_the_gate_is_refused_until_the_person_accepts_the_risk() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open_engine(&dir.path().join("r.db"), false).await;
    let id = needs_you(
        &engine,
        resuming("claude", AgentKind::ClaudeCode, dir.path(), true),
        vec![],
    )
    .await;
    let generation = engine.route_detail(id).unwrap().snapshot.generation;
    let request = ActionRequest {
        route_id: id,
        action: ManualAction::Continue,
        expected_generation: generation,
        confirm_repeat: false,
        message: None,
    };
    let err = engine.act(request, Actor::Cli).await.unwrap_err();
    assert!(
        err.to_string().starts_with(
            "Continue resumes the agent's session to go on with the work and may repeat work: "
        ),
        "says what it sends and why it may repeat: {err}"
    );
    let d = engine.route_detail(id).unwrap();
    assert_eq!(
        (d.snapshot.generation, d.attempts.len()),
        (generation, 1),
        "nothing was sent"
    );
    engine.shutdown().await;
}

/// Automatic continuation (docs/decisions/2026-12-06-automatic-continuation.md):
/// the first candidate stops for a person when recovery is used up, so
/// only the option can carry the route on.
fn continuing_policy() -> recourse::policy::CandidatePolicy {
    let mut policy = manual_only();
    policy.transient.auto_continue = recourse::policy::AutoContinue::ON;
    policy
}

async fn route_on(
    engine: &Engine,
    agent: AgentSpec,
    policy: recourse::policy::CandidatePolicy,
) -> u32 {
    let name = format!("p{}", engine.list_profiles().unwrap().len());
    let profile = engine_profile(
        engine,
        &name,
        vec![CandidateInput::new("first", agent, policy)],
    );
    crate::common::start_route(engine, profile)
        .await
        .unwrap()
        .id
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_completed_tools_each_cli_continues_its_own_session_automatically_and_succeeds() {
    for (cli, kind) in CLIS {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("r.db");
        let engine = open_engine(&db, false).await;
        let agent = resuming(cli, kind, dir.path(), true);
        let id = route_on(&engine, agent, continuing_policy()).await;
        // The replayer answers the resume only for the exact command line
        // the real CLI was recorded resuming with (exit 97 otherwise).
        until_state(&engine, id, RouteState::Succeeded).await;
        let d = engine.route_detail(id).unwrap();
        assert_eq!(
            d.attempts.len(),
            2,
            "{cli}: the failure, then its continuation"
        );
        assert_eq!(
            d.attempts[1].input,
            AttemptInput::Continue {
                of_attempt: 1,
                session_id: session_of(cli).to_string(),
                message: DEFAULT_CONTINUE_MESSAGE.to_string(),
                automatic: true,
            },
            "{cli}: its own session, with the continuation message, never the prompt"
        );
        assert_eq!(
            d.attempts[0].decision.as_deref(),
            Some(
                "transient failure after completed tools: continue the agent's own session \
                 automatically (1 of 2), without sending the prompt again"
            ),
            "{cli}: the history says why"
        );
        assert!(d.manual_actions.is_empty(), "{cli}: nobody was asked");
        engine.shutdown().await;
        // The budget spent is in the stored route cycle, read after the
        // engine is gone as a restarted one would read it.
        let stored = recourse::store::Store::open_read_only(&db)
            .unwrap()
            .route(id)
            .unwrap()
            .unwrap();
        assert_eq!(
            stored
                .cycle
                .usage_of(0, recourse::classification::PolicyClass::Transient)
                .continuations_used,
            1,
            "{cli}: one continuation of the candidate's budget, kept in the database"
        );
    }
}

/// `cli`'s resume pair, its first run without the lines reporting how the
/// tool call ended (`ended`): the call then never reported back before the
/// provider failed, as when the CLI loses a tool's result.
fn with_tool_left_pending(dir: &Path, mut agent: AgentSpec, cli: &str, ended: &str) -> AgentSpec {
    let first = recording(cli, "resume.first");
    let target = dir.join(format!("{cli}-resume.first-pending"));
    std::fs::create_dir_all(&target).unwrap();
    for file in ["meta.json", "stderr", "requests.jsonl"] {
        std::fs::copy(first.join(file), target.join(file)).unwrap();
    }
    let stdout = std::fs::read_to_string(first.join("stdout")).unwrap();
    let kept: Vec<&str> = stdout.lines().filter(|l| !l.contains(ended)).collect();
    assert!(
        kept.len() < stdout.lines().count(),
        "{cli}: the recording reports the tool call's end with {ended}"
    );
    std::fs::write(target.join("stdout"), kept.join("\n") + "\n").unwrap();
    let pair = format!(
        "{}:{}",
        target.display(),
        recording(cli, "resume.continue").display()
    );
    agent.env.insert("RECOURSE_REPLAY".into(), pair);
    agent
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_left_pending_goes_to_the_gate_as_without_the_option() {
    for (cli, kind, ended) in [
        ("claude", AgentKind::ClaudeCode, "\"tool_result\""),
        (
            "codex",
            AgentKind::Codex,
            "\"item.completed\",\"item\":{\"id\":\"item_1\"",
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let engine = open_engine(&dir.path().join("r.db"), false).await;
        let agent = resuming(cli, kind, dir.path(), true);
        let agent = with_tool_left_pending(dir.path(), agent, cli, ended);
        let on = route_on(&engine, agent.clone(), continuing_policy()).await;
        let off = route_on(&engine, agent, manual_only()).await;
        for id in [on, off] {
            let s = until_state(&engine, id, RouteState::NeedsManual).await;
            assert!(
                s.manual_reason
                    .as_deref()
                    .unwrap_or_default()
                    .starts_with("not safe to recover automatically — "),
                "{cli}: the gate hands it to a person: {:?}",
                s.manual_reason
            );
        }
        let (with, without) = (
            engine.route_detail(on).unwrap(),
            engine.route_detail(off).unwrap(),
        );
        assert_eq!(with.attempts.len(), 1, "{cli}: nothing was continued");
        assert_eq!(
            with.attempts[0].decision, without.attempts[0].decision,
            "{cli}: the same decision as with the option off"
        );
        let transcript = engine.attempt_transcript(on, 1).unwrap().transcript;
        assert!(
            transcript.entries.iter().any(|e| matches!(
                e,
                recourse::agent::Entry::Tool {
                    status: recourse::agent::ToolStatus::Started,
                    ..
                }
            )),
            "{cli}: the transcript shows the call still running: {:?}",
            transcript.entries
        );
        engine.shutdown().await;
    }
}
