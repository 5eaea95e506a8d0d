//! What each attempt's agent said and did is kept (issue 26): the answer,
//! the tool calls with their status (refused ones named), usage and cost,
//! the CLI's session id and the files of a git working directory that
//! changed — sanitized, in their own table, and said when a route succeeded
//! although its agent was refused what it tried.

use std::path::Path;
use std::time::Duration;

use crate::common::{open_engine, replay_agent, until_route};
use recourse::agent::{Access, AgentKind, AgentSpec, Entry, SimStep, ToolStatus};
use recourse::engine::{Engine, StartRun};
use recourse::policy::CandidatePolicy;
use recourse::profile::CandidateInput;
use recourse::route::RouteState;

/// A git repository with one committed file, in folder `repo` of `dir`.
fn git_repo_in(dir: &tempfile::TempDir) -> std::path::PathBuf {
    let repo = dir.path().join("repo");
    std::fs::create_dir(&repo).unwrap();
    let ok = std::process::Command::new("sh")
        .arg("-c")
        .arg("git init -q && echo a > kept.txt && git add . && git -c user.email=t@example.invalid -c user.name=t commit -qm init")
        .current_dir(&repo)
        .status()
        .unwrap()
        .success();
    assert!(ok);
    repo
}

async fn run_one(engine: &Engine, agent: AgentSpec, cwd: &Path) -> u32 {
    let id = start_one(engine, agent, cwd).await;
    until_route(engine, id, "rested", |s| s.state != RouteState::Running).await;
    id
}

/// Starts a route on a profile of one candidate running `agent` in `cwd`.
async fn start_one(engine: &Engine, agent: AgentSpec, cwd: &Path) -> u32 {
    let p = engine.create_profile("p").unwrap();
    let c = CandidateInput::new("agent", agent, CandidatePolicy::default_for_new_candidate());
    let p = engine.save_candidates(p.id, p.revision, vec![c]).unwrap();
    engine
        .start_run(StartRun {
            profile_id: p.id,
            prompt: "Create the file recourse-note.txt in the working directory.".into(),
            cwd: Some(cwd.display().to_string()),
        })
        .await
        .unwrap()
        .id
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_only_claude_that_was_refused_a_write_succeeds_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let repo = git_repo_in(&dir);
    let engine = open_engine(&dir.path().join("t.db"), false).await;
    let mut agent = replay_agent(AgentKind::ClaudeCode, "claude/write_file.read_only");
    agent.access = Some(Access::ReadOnly);
    let id = run_one(&engine, agent, &repo).await;
    let detail = engine.route_detail(id).unwrap();
    assert_eq!(detail.snapshot.state, RouteState::Succeeded);
    assert_eq!(
        detail.refused_notice.as_deref(),
        Some("succeeded, but the agent was refused 1 tool use (Write): its access is read-only")
    );
    let summary = detail.attempts[0].transcript.as_ref().expect("a summary");
    assert_eq!(summary.refused, ["Write"]);
    assert_eq!(
        summary.files_changed,
        Some(0),
        "a git repository, nothing changed"
    );
    assert_eq!(detail.totals.input_tokens, 24);
    let whole = engine.attempt_transcript(id, 1).unwrap().transcript;
    assert_eq!(whole.answer.as_deref(), Some("Done."));
    assert_eq!(
        whole.session_id.as_deref(),
        Some("00000000-0000-4000-8000-000000000001")
    );
    assert!(whole.usage.and_then(|u| u.cost_usd).is_some());
    assert!(matches!(
        &whole.entries[0],
        Entry::Tool { name, status: ToolStatus::Refused, .. } if name == "Write"
    ));
    engine.shutdown().await;
}

/// Any command: a script that writes a file, edits one, and prints.
fn script(dir: &Path, body: &str) -> AgentSpec {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join("agent.sh");
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut agent = AgentSpec::default_for(AgentKind::Generic);
    agent.program = Some(path.display().to_string());
    agent
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_attempts_transcript_is_what_its_agent_said_so_far_and_the_engine_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open_engine(&dir.path().join("t.db"), false).await;
    // Claude Code's recorded first three lines (its tool ran), then the
    // agent keeps working.
    let recorded = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/agents/recorded/claude-2.1.332/tool_then_error/stdout");
    let mut agent = script(
        dir.path(),
        &format!("head -n 3 '{}'\nsleep 30", recorded.display()),
    );
    agent.kind = AgentKind::ClaudeCode;
    let id = start_one(&engine, agent, dir.path()).await;
    until_route(&engine, id, "ran", |s| s.state == RouteState::Running).await;
    // Asked while the agent runs (the app asks when Stop is pressed): the
    // answer comes from the running attempt, and nothing is left locked.
    let asking = engine.clone();
    let live = tokio::time::timeout(
        Duration::from_secs(30),
        tokio::task::spawn_blocking(move || loop {
            // Until the run is booked (just after the route says running).
            match asking.attempt_transcript(id, 1) {
                Ok(t) if !t.transcript.entries.is_empty() => return t,
                Ok(_) | Err(_) => std::thread::sleep(Duration::from_millis(20)),
            }
        }),
    )
    .await
    .expect("the running attempt's transcript is answered, not waited on forever")
    .unwrap();
    assert!(
        format!("{:?}", live.transcript.entries).contains("recourse-tool-ran"),
        "what the agent did so far: {:?}",
        live.transcript.entries
    );
    let s = engine.route_detail(id).unwrap().snapshot;
    tokio::time::timeout(
        Duration::from_secs(30),
        crate::common::act_confirmed(
            &engine,
            id,
            recourse::route::ManualAction::Stop,
            s.generation,
        ),
    )
    .await
    .expect("the engine still acts after the question")
    .unwrap();
    until_route(&engine, id, "stopped", |s| s.state != RouteState::Running).await;
    engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_files_an_attempt_changed_in_its_git_working_directory_are_listed() {
    let dir = tempfile::tempdir().unwrap();
    let repo = git_repo_in(&dir);
    std::thread::sleep(Duration::from_millis(20));
    let engine = open_engine(&dir.path().join("t.db"), false).await;
    let agent = script(
        dir.path(),
        "echo new > new.txt\necho more >> kept.txt\necho wrote two files",
    );
    let id = run_one(&engine, agent, &repo).await;
    let t = engine.attempt_transcript(id, 1).unwrap();
    let files = t.files.expect("a git repository");
    let listed: Vec<(&str, &str)> = files
        .files
        .iter()
        .map(|f| (f.path.as_str(), f.status.as_str()))
        .collect();
    assert_eq!(listed, [("kept.txt", "M"), ("new.txt", "??")]);
    assert!(files.diff_stat.contains("kept.txt"));
    assert_eq!(
        t.transcript.entries,
        [Entry::Output {
            stream: "stdout".into(),
            text: "wrote two files".into()
        }],
        "a command's transcript is what it printed"
    );
    engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_simulated_attempt_is_not_credited_with_edits_made_beside_it() {
    let dir = tempfile::tempdir().unwrap();
    let repo = git_repo_in(&dir);
    let engine = open_engine(&dir.path().join("t.db"), false).await;
    let agent = AgentSpec::simulated(vec![SimStep::Succeed { after_ms: 400 }]);
    let id = start_one(&engine, agent, &repo).await;
    // A person edits the tree while the simulation "runs".
    std::fs::write(repo.join("by-hand.txt"), "mine").unwrap();
    until_route(&engine, id, "rested", |s| s.state != RouteState::Running).await;
    let t = engine.attempt_transcript(id, 1).unwrap();
    assert_eq!(
        t.files, None,
        "the simulated provider writes no file: its tree is not read, so by-hand.txt is not its"
    );
    engine.shutdown().await;
}

/// Secret forms an agent may print, each one the sanitizer redacts on its
/// own (checked first, so the test cannot pass by a form it ignores).
const PLANTED: [&str; 10] = [
    "sk-ant-api03-PLANTEDaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    "sk-proj-PLANTEDbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
    "AKIAPLANTED1234567890",
    "ghp_PLANTEDcccccccccccccccccccccccccccccc",
    "xoxb-1234567890-PLANTEDdddddddddddd",
    "Bearer PLANTEDeeeeeeeeeeeeeeeeeeeeeeee",
    "eyJhbGciOiJIUzI1NiJ9.eyJQTEFOVEVEIjoxfQ.PLANTEDfffffffffffffffffff",
    "password=PLANTEDggggggggg",
    "https://user:PLANTEDhhhhhhh@example.com/x",
    "AIzaPLANTEDiiiiiiiiiiiiiiiiiiiiiiiiiiiiii",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_planted_secret_reaches_a_stored_transcript() {
    for form in PLANTED {
        assert!(
            !recourse::evidence::sanitize(form).contains("PLANTED"),
            "the sanitizer redacts {form} on its own"
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let engine = open_engine(&db, false).await;
    let lines: Vec<String> = PLANTED
        .iter()
        .map(|f| format!("echo 'token {f}'"))
        .collect();
    let agent = script(
        dir.path(),
        &format!("{}\n{} >&2\nexit 0", lines.join("\n"), lines[0]),
    );
    let id = run_one(&engine, agent, dir.path()).await;
    let t = engine.attempt_transcript(id, 1).unwrap();
    let shown = serde_json::to_string(&t).unwrap();
    assert!(!shown.contains("PLANTED"), "{shown}");
    engine.shutdown().await;
    for suffix in ["", "-wal", "-shm"] {
        if let Ok(bytes) = std::fs::read(format!("{}{suffix}", db.display())) {
            assert!(
                !String::from_utf8_lossy(&bytes).contains("PLANTED"),
                "the database{suffix} holds a planted secret"
            );
        }
    }
}
