//! Agents never outlive their engine or a stop, and never run twice: real
//! `recourse run` processes are SIGKILLed, stopped from another process,
//! and stopped then resumed, and `/proc` is checked for the agent and the
//! tools it started.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::common::{
    alive, hanging_agent, open_engine, recourse_on, seed_profile, sigkill, spawn_run,
};
use recourse::agent::{AgentKind, AgentSpec};
use recourse::engine::{ActionRequest, EngineOptions};
use recourse::policy::CandidatePolicy;
use recourse::profile::CandidateInput;
use recourse::route::{Actor, AttemptOutcome, ManualAction, RouteState};
use recourse::store::Store;

fn gone_within(pid: &str, within: Duration) -> bool {
    let deadline = std::time::Instant::now() + within;
    while std::time::Instant::now() < deadline {
        if !alive(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    !alive(pid)
}

fn read_pid(file: &Path) -> String {
    for _ in 0..1000 {
        if let Ok(s) = std::fs::read_to_string(file) {
            if !s.trim().is_empty() {
                return s.trim().to_string();
            }
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("{} was never written", file.display());
}

/// Waits until the owner stored the process of route 1's attempt.
fn stored_process(db: &Path) -> (u32, u64) {
    for _ in 0..500 {
        if let Some(p) = Store::open(db).unwrap().latest_attempt_process(1).unwrap() {
            return p;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("the attempt's process was never stored");
}

/// A generic agent that starts a background tool and then waits: the tool
/// shares the agent's process group but is not its parent's child.
fn agent_with_tool(dir: &Path) -> (CandidateInput, PathBuf, PathBuf) {
    let (agent_pid, tool_pid) = (dir.join("agent.pid"), dir.join("tool.pid"));
    let mut agent = AgentSpec::simulated(Vec::new());
    agent.kind = AgentKind::Generic;
    agent.program = Some("sh".into());
    agent.args = vec![
        "-c".into(),
        format!(
            "sleep 300 & echo $! > {}; echo $$ > {}; exec sleep 300",
            tool_pid.display(),
            agent_pid.display()
        ),
    ];
    let candidate = CandidateInput::new(
        "with tool",
        agent,
        CandidatePolicy::default_for_new_candidate(),
    );
    (candidate, agent_pid, tool_pid)
}

#[test]
fn a_sigkilled_run_takes_its_agent_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let pidfile = dir.path().join("agent.pid");
    seed_profile(&db, "Hang", &[hanging_agent(&pidfile)]);
    let mut child = spawn_run(&db, "Hang");
    let agent = read_pid(&pidfile);
    assert!(alive(&agent));
    sigkill(&mut child);
    assert!(
        gone_within(&agent, Duration::from_secs(5)),
        "agent {agent} outlived the SIGKILLed engine"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_adopting_engine_kills_the_orphaned_tools_before_calling_the_attempt_interrupted() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let (candidate, agent_pid, tool_pid) = agent_with_tool(dir.path());
    seed_profile(&db, "Tool", &[candidate]);
    let mut child = spawn_run(&db, "Tool");
    let (agent, tool) = (read_pid(&agent_pid), read_pid(&tool_pid));
    assert_eq!(
        stored_process(&db).0.to_string(),
        agent,
        "the attempt's process is stored when it starts"
    );
    sigkill(&mut child);
    assert!(
        gone_within(&agent, Duration::from_secs(5)),
        "the agent dies with its engine"
    );
    assert!(
        alive(&tool),
        "its background tool is orphaned, not a child of the engine: the case to handle"
    );
    let engine = open_engine(&db, false).await;
    assert!(
        !alive(&tool),
        "the adopting engine killed the orphaned group before recording the attempt"
    );
    let row = Store::open(&db).unwrap().route(1).unwrap().unwrap();
    assert_eq!(row.state, RouteState::NeedsManual);
    let attempts = Store::open(&db).unwrap().attempts(1).unwrap();
    assert_eq!(
        attempts[0].result.as_ref().map(|r| r.outcome),
        Some(AttemptOutcome::Interrupted)
    );
    engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_from_another_process_is_recorded_once_the_agent_is_gone() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let (candidate, agent_pid, tool_pid) = agent_with_tool(dir.path());
    seed_profile(&db, "Tool", &[candidate]);
    let mut owner = spawn_run(&db, "Tool");
    let (agent, tool) = (read_pid(&agent_pid), read_pid(&tool_pid));
    assert_eq!(stored_process(&db).0.to_string(), agent);
    let other = recourse::engine::Engine::open(
        &db,
        EngineOptions {
            seed_demo: false,
            adopt_orphans: false,
            ..EngineOptions::default()
        },
    )
    .await
    .unwrap();
    let generation = Store::open(&db)
        .unwrap()
        .route(1)
        .unwrap()
        .unwrap()
        .generation;
    let stopped = other
        .act(
            ActionRequest {
                route_id: 1,
                action: ManualAction::Stop,
                expected_generation: generation,
                confirm_repeat: false,
                message: None,
            },
            Actor::Cli,
        )
        .await
        .unwrap();
    assert_eq!(stopped.state, RouteState::Stopped);
    assert!(
        !alive(&agent) && !alive(&tool),
        "when the stop returns, the agent and its tools are gone, not just marked killed"
    );
    let attempts = Store::open(&db).unwrap().attempts(1).unwrap();
    let outcome = attempts[0].result.as_ref().map(|r| r.outcome);
    // Which commits first is a race between the two processes: the stop
    // (the owner then records the ended agent as killed), or the owner's
    // report of an agent that died by a signal (then the stop applies to
    // the route that report left). Either way it ends stopped, by the CLI.
    assert!(
        matches!(
            outcome,
            Some(AttemptOutcome::Killed | AttemptOutcome::Failed)
        ),
        "the attempt's end is recorded: {outcome:?}"
    );
    let history = Store::open(&db).unwrap().manual_actions(1).unwrap();
    assert!(
        history
            .iter()
            .any(|a| a.record.action == ManualAction::Stop && a.record.by == Actor::Cli),
        "the stop is in the route's history: {history:?}"
    );
    // Resume at once from this other process: the new agent starts only
    // after the old one is gone, so two never run together.
    std::fs::remove_file(&agent_pid).unwrap();
    let resumed = other
        .act(
            ActionRequest {
                route_id: 1,
                action: ManualAction::Resume,
                expected_generation: stopped.generation,
                // Its agent was stopped while it ran: the person confirmed.
                confirm_repeat: true,
                message: None,
            },
            Actor::Cli,
        )
        .await
        .unwrap();
    assert_eq!(resumed.state, RouteState::Running);
    let second = read_pid(&agent_pid);
    assert_ne!(second, agent);
    assert!(!alive(&agent), "never two agents at once");
    other.shutdown().await;
    assert!(
        gone_within(&second, Duration::from_secs(10)),
        "the resumed agent ends with its engine"
    );
    let _ = owner.wait();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_then_resume_at_once_never_runs_two_agents() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let (candidate, agent_pid, _) = agent_with_tool(dir.path());
    seed_profile(&db, "Tool", &[candidate]);
    let engine = open_engine(&db, false).await;
    let profile = engine.profile_by_name("Tool").unwrap();
    let start = engine
        .start_run(recourse::engine::StartRun {
            profile_id: profile.id,
            prompt: "go".into(),
            cwd: None,
        })
        .await
        .unwrap();
    let first = read_pid(&agent_pid);
    std::fs::remove_file(&agent_pid).unwrap();
    let stopped = crate::common::act_on(&engine, start.id, ManualAction::Stop, start.generation)
        .await
        .unwrap();
    assert!(
        !alive(&first),
        "the stop returns only after the agent is killed and reaped"
    );
    // Its agent was stopped mid-run: the person confirmed the resume.
    let resumed =
        crate::common::act_confirmed(&engine, start.id, ManualAction::Resume, stopped.generation)
            .await
            .unwrap();
    assert_eq!(resumed.state, RouteState::Running);
    let second = read_pid(&agent_pid);
    assert_ne!(first, second);
    assert!(!alive(&first), "never two agents at once");
    engine.shutdown().await;
}

/// What `timeout`, a CI cancellation or `docker stop` (SIGTERM) and a
/// closed terminal (SIGHUP) send is handled like Ctrl-C: the agent's whole
/// process group is stopped, the attempt recorded, the route left for a
/// person and not `running` with nobody owning it.
#[test]
fn sigterm_and_sighup_stop_the_agents_group_and_record_the_attempt_like_ctrl_c() {
    for (signal, name) in [(libc::SIGTERM, "SIGTERM"), (libc::SIGHUP, "SIGHUP")] {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("r.db");
        let (candidate, agent_pid, tool_pid) = agent_with_tool(dir.path());
        seed_profile(&db, "Tool", &[candidate]);
        let child = spawn_run(&db, "Tool");
        let (agent, tool) = (read_pid(&agent_pid), read_pid(&tool_pid));
        stored_process(&db);
        crate::common::send_signal(child.id() as i32, signal);
        let out = child.wait_with_output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(128 + signal),
            "{name}: exits as shells report the signal"
        );
        assert_eq!(
            crate::common::said(&out.stderr),
            "interrupted: stopping route 1's agent\n",
            "{name}"
        );
        assert!(
            gone_within(&agent, Duration::from_secs(5))
                && gone_within(&tool, Duration::from_secs(5)),
            "{name}: the agent and the tool it started were stopped"
        );
        let store = Store::open(&db).unwrap();
        let row = store.route(1).unwrap().unwrap();
        assert_eq!(
            row.state,
            RouteState::NeedsManual,
            "{name}: not left running"
        );
        assert_eq!(row.owner, None, "{name}: nobody's lease is left on it");
        let attempts = store.attempts(1).unwrap();
        assert_eq!(
            attempts[0].result.as_ref().map(|r| r.outcome),
            Some(AttemptOutcome::Interrupted),
            "{name}: the attempt is recorded"
        );
        let routes = recourse_on(&db, &["routes"]);
        assert!(
            !String::from_utf8_lossy(&routes.stdout).contains("orphaned"),
            "{name}: no orphan for `recover` to find"
        );
    }
}
