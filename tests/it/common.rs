//! Setup shared by the engine integration tests: opening an engine in a temp
//! directory, seeding a profile straight into the store, candidate policies
//! and agents replaying the recorded real CLIs in `fixtures/agents/recorded/`.
//!
//! Each test binary compiles this module and uses only part of it.
#![allow(dead_code)]

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use chrono::Utc;
use recourse::agent::{AgentKind, AgentSpec};
use recourse::engine::{ActionRequest, Engine, EngineError, EngineOptions, RouteSnapshot};
use recourse::policy::{CandidatePolicy, ClassPolicy, Exhausted};
use recourse::profile::CandidateInput;
use recourse::route::{ManualAction, RouteRow, RouteState};
use recourse::store::Store;

/// Opens an engine on `db`, seeding the demo profile only if asked.
pub async fn open_engine(db: &Path, seed_demo: bool) -> Engine {
    let opts = EngineOptions {
        seed_demo,
        ..EngineOptions::default()
    };
    Engine::open(db, opts).await.expect("engine opens")
}

/// Creates profile `name` holding `candidates` directly in the store, as a
/// person would have before running the binary.
pub fn seed_profile(db: &Path, name: &str, candidates: &[CandidateInput]) {
    let mut store = Store::open(db).unwrap();
    let id = store.create_profile(name, Utc::now()).unwrap();
    let writes = with_accounts(&store, candidates);
    store
        .save_candidates(id, 1, &writes, Utc::now())
        .unwrap()
        .unwrap();
}

/// What `recourse run` said on stderr besides the route's transitions
/// (`route N STATE candidate …` lines, its progress): notes, warnings,
/// interruptions.
pub fn said(stderr: &[u8]) -> String {
    let transition = |l: &str| {
        l.starts_with("route ")
            && recourse::route::RouteState::ALL
                .into_iter()
                .any(|s| l.contains(&format!(" {} ", s.words())))
            && l.contains(" candidate ")
    };
    String::from_utf8_lossy(stderr)
        .lines()
        .filter(|l| !transition(l))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// `at` as the CLI prints a time: the app's shape, in this process's
/// zone (which the `recourse` it starts inherits).
pub fn local_time(at: chrono::DateTime<Utc>) -> String {
    at.with_timezone(&chrono::Local)
        .format("%-d %b %Y, %H:%M:%S")
        .to_string()
}

/// The `recourse` binary with `ARGS`.
pub fn recourse(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_recourse"))
        .args(args)
        .output()
        .expect("recourse runs")
}

/// `candidates` with the account each derives to in `store`, for saving
/// them straight into the store.
pub fn with_accounts(
    store: &Store,
    candidates: &[CandidateInput],
) -> Vec<(CandidateInput, recourse::account::AccountId)> {
    let key = store.account_key().unwrap();
    candidates
        .iter()
        .map(|c| {
            let account = recourse::account::derive_from_spec(&c.agent, &key);
            (c.clone(), account)
        })
        .collect()
}

/// The `recourse` binary with `ARGS --db DB`, run to its end.
pub fn recourse_on(db: &Path, args: &[&str]) -> Output {
    recourse_cmd(db, args).output().expect("recourse runs")
}

/// The `recourse` binary with `ARGS --db DB` and standard input closed,
/// not started: the test adds its environment and where output goes.
pub fn recourse_cmd(db: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_recourse"));
    command.args(args).arg("--db").arg(db).stdin(Stdio::null());
    command
}

/// What a finished `recourse` said, as text.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl From<Output> for Run {
    fn from(output: Output) -> Run {
        Run {
            code: output.status.code().expect("exited normally"),
            stdout: String::from_utf8(output.stdout).unwrap(),
            stderr: String::from_utf8(output.stderr).unwrap(),
        }
    }
}

/// The route once `done` holds, polled every 10 ms of tokio time for up to
/// ten minutes of it (the engine tests run in paused time); panics naming
/// `what` it waited for.
pub async fn until_route(
    engine: &Engine,
    id: u32,
    what: &str,
    done: impl Fn(&RouteSnapshot) -> bool,
) -> RouteSnapshot {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(600);
    loop {
        let s = engine.route_detail(id).unwrap().snapshot;
        if done(&s) {
            return s;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "route {id} never {what}: it is {}",
            s.state.as_str()
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// [`until_route`] reaches `state`.
pub async fn until_state(engine: &Engine, id: u32, state: RouteState) -> RouteSnapshot {
    let what = format!("became {}", state.as_str());
    until_route(engine, id, &what, |s| s.state == state).await
}

/// `recourse run --profile PROFILE --prompt go --db DB`, not started: its
/// stdout dropped, its stderr piped.
pub fn run_cmd(db: &Path, profile: &str) -> Command {
    let mut command = recourse_cmd(db, &["run", "--profile", profile, "--prompt", "go"]);
    command.stdout(Stdio::null()).stderr(Stdio::piped());
    command
}

/// [`run_cmd`], started.
pub fn spawn_run(db: &Path, profile: &str) -> Child {
    run_cmd(db, profile)
        .spawn()
        .expect("recourse binary starts")
}

/// SIGKILLs `child` (std's kill on Unix: what an OOM kill does) and reaps it.
pub fn sigkill(child: &mut Child) {
    child.kill().expect("SIGKILL delivered");
    child.wait().expect("killed child reaped");
}

/// Route `id` as the database at `db` holds it now; `None` while there is
/// no such route or no database yet.
pub fn stored_route(db: &Path, id: u32) -> Option<RouteRow> {
    Store::open_read_only(db).ok()?.route(id).ok()?
}

/// Route 1 once `when` holds, polled every 10 ms for up to 20 s while
/// `child`, the `recourse run` that made it, lives; panics with the run's
/// exit status and stderr (when piped) if it ends first.
pub fn wait_for_route(db: &Path, child: &mut Child, when: impl Fn(&RouteRow) -> bool) -> RouteRow {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(20) {
        if let Some(row) = stored_route(db, 1).filter(|r| when(r)) {
            return row;
        }
        if let Ok(Some(status)) = child.try_wait() {
            // It may have reached the state just before it exited.
            if let Some(row) = stored_route(db, 1).filter(|r| when(r)) {
                return row;
            }
            let mut said = String::new();
            if let Some(mut stderr) = child.stderr.take() {
                let _ = stderr.read_to_string(&mut said);
            }
            panic!("recourse run exited ({status}) before the expected state: {said}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("route never reached the expected state");
}

/// A policy section of a profile document as JSON: no reset wait, no
/// retry, stop.
pub fn stop_section_json() -> serde_json::Value {
    serde_json::json!({
        "wait_for_reset": { "enabled": false, "max_wait_seconds": 0 },
        "retry": { "enabled": false, "max_retries": 0, "initial_interval_seconds": 0 },
        "on_exhausted": "stop"
    })
}

/// The same section for transient and hard failures.
pub fn uniform_policy(
    reset_wait_max_s: Option<u32>,
    retry: Option<(u32, u32)>,
    exhausted: Exhausted,
) -> CandidatePolicy {
    let section = ClassPolicy::new(reset_wait_max_s, retry, exhausted);
    CandidatePolicy::both(section)
}

/// An agent of `kind` that replays `recording` (`claude/overloaded`) of the
/// pinned CLI from `fixtures/agents/recorded/` through `replay.py`.
pub fn replay_agent(kind: AgentKind, recording: &str) -> AgentSpec {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let (cli, scenario) = recording.split_once('/').expect("cli/scenario");
    let version = pinned_version(cli);
    let dir = root.join(format!(
        "fixtures/agents/recorded/{cli}-{version}/{scenario}"
    ));
    assert!(dir.is_dir(), "{} is recorded", dir.display());
    let mut agent = AgentSpec::simulated(Vec::new());
    agent.kind = kind;
    agent.program = Some(root.join("fixtures/agents/replay.py").display().to_string());
    agent
        .env
        .insert("RECOURSE_REPLAY".into(), dir.display().to_string());
    agent
}

/// The version of the CLI (`claude`, `codex`, …) pinned in
/// `agents/package.json`.
pub fn pinned_version(cli: &str) -> String {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let versions = std::fs::read_to_string(root.join("agents/package.json")).unwrap();
    let versions: serde_json::Value = serde_json::from_str(&versions).unwrap();
    let package = match cli {
        "claude" => "@anthropic-ai/claude-code",
        "codex" => "@openai/codex",
        "gemini" => "@google/gemini-cli",
        "opencode" => "opencode-ai",
        other => panic!("no pinned CLI {other}"),
    };
    versions["dependencies"][package]
        .as_str()
        .unwrap()
        .to_string()
}

/// OpenCode waiting out a 4-hour retry-after without a word (a recording
/// of the real CLI): it runs until killed. Its pid goes to `pidfile`.
pub fn hanging_agent(pidfile: &Path) -> CandidateInput {
    let mut agent = replay_agent(AgentKind::Opencode, "opencode/quota_day");
    agent.env.insert(
        "RECOURSE_REPLAY_PIDFILE".into(),
        pidfile.display().to_string(),
    );
    CandidateInput::new(
        "opencode",
        agent,
        CandidatePolicy::default_for_new_candidate(),
    )
}

/// Starts a route on profile `profile_id` with the prompt `go`.
pub async fn start_route(engine: &Engine, profile_id: u32) -> Result<RouteSnapshot, EngineError> {
    engine
        .start_run(recourse::engine::StartRun {
            profile_id,
            prompt: "go".into(),
            cwd: None,
        })
        .await
}

/// Creates profile `name` holding `candidates` through the engine; its id.
pub fn engine_profile(engine: &Engine, name: &str, candidates: Vec<CandidateInput>) -> u32 {
    let p = engine.create_profile(name).unwrap();
    engine
        .save_candidates(p.id, p.revision, candidates)
        .unwrap()
        .id
}

/// Asks for `action` on route `route_id` as seen at `expected_generation`.
pub async fn act_on(
    engine: &Engine,
    route_id: u32,
    action: ManualAction,
    expected_generation: u32,
) -> Result<RouteSnapshot, EngineError> {
    act_as(engine, route_id, action, expected_generation, false).await
}

/// As [`act_on`], the person having confirmed that it may repeat work an
/// agent already did (the app's question, `recourse action --yes`).
pub async fn act_confirmed(
    engine: &Engine,
    route_id: u32,
    action: ManualAction,
    expected_generation: u32,
) -> Result<RouteSnapshot, EngineError> {
    act_as(engine, route_id, action, expected_generation, true).await
}

async fn act_as(
    engine: &Engine,
    route_id: u32,
    action: ManualAction,
    expected_generation: u32,
    confirm_repeat: bool,
) -> Result<RouteSnapshot, EngineError> {
    let request = ActionRequest {
        route_id,
        action,
        expected_generation,
        confirm_repeat,
        message: None,
    };
    engine.act(request, recourse::route::Actor::App).await
}

/// One CLI × scenario entry of `fixtures/agents/contract.toml`: what the
/// decision requires of it (read by the replay and the live contract tests).
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    /// succeeded | retry | skip | wait | manual
    pub decision: String,
    pub code: Option<String>,
    /// Must appear in the sanitized evidence: the provider's words, not noise.
    pub excerpt: Option<String>,
    /// For `wait`: seconds to the reset, ±90 s (the CLIs print reset clock
    /// times to the minute).
    pub reset_in_s: Option<i64>,
    /// Why this is what the decision requires, when it is not obvious.
    pub why: Option<String>,
    /// Words the transcript's final answer holds.
    pub answer: Option<String>,
    /// The transcript's tool calls in order, `name:status` (status
    /// `completed`, `failed`, `refused` or `started`).
    pub tools: Option<Vec<String>>,
    /// Another list of tool calls the live CLI may report instead of
    /// `tools`, for a CLI whose own output varies between runs (`why` says
    /// how it was seen).
    pub tools_also: Option<Vec<String>>,
    /// The transcript holds the CLI's session id.
    pub session: Option<bool>,
    /// Live only: the agent wrote `recourse-note.txt` in its working
    /// directory (the `write_file` scenarios).
    pub written: Option<bool>,
}

impl Expect {
    /// Every way `t` differs from what this expects of a transcript.
    pub fn transcript_problems(&self, t: &recourse::agent::Transcript) -> Vec<String> {
        let mut problems = Vec::new();
        if let Some(words) = &self.answer {
            if !t
                .answer
                .as_deref()
                .is_some_and(|a| a.contains(words.as_str()))
            {
                problems.push(format!(
                    "answer {:?}, expected it to hold {words:?}",
                    t.answer
                ));
            }
        }
        if let Some(tools) = &self.tools {
            let got: Vec<String> = t
                .entries
                .iter()
                .filter_map(|e| match e {
                    recourse::agent::Entry::Tool { name, status, .. } => Some(format!(
                        "{name}:{}",
                        serde_json::to_value(status).unwrap().as_str().unwrap()
                    )),
                    _ => None,
                })
                .collect();
            if &got != tools && self.tools_also.as_ref() != Some(&got) {
                let also = self
                    .tools_also
                    .as_ref()
                    .map(|t| format!(" or {t:?}"))
                    .unwrap_or_default();
                problems.push(format!("tools {got:?}, expected {tools:?}{also}"));
            }
        }
        if self.session == Some(true) && t.session_id.is_none() {
            problems.push("no session id in the transcript".into());
        }
        problems
    }
}

/// `contract.toml`, by CLI, then scenario.
pub fn contract() -> std::collections::BTreeMap<String, std::collections::BTreeMap<String, Expect>>
{
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/agents/contract.toml");
    toml::from_str(&std::fs::read_to_string(path).unwrap()).expect("contract.toml is valid")
}

/// The contract policy document's candidates: the CLI under test, then the fallback.
pub fn contract_policy() -> recourse::policy::PolicyDocument {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/agents/contract-policy.json");
    recourse::policy::document::load(&std::fs::read_to_string(path).unwrap())
        .unwrap()
        .document
}

/// The agent kind of a recorded CLI's short name.
pub fn kind_of(cli: &str) -> AgentKind {
    match cli {
        "claude" => AgentKind::ClaudeCode,
        "codex" => AgentKind::Codex,
        "gemini" => AgentKind::Gemini,
        "opencode" => AgentKind::Opencode,
        other => panic!("no agent kind for CLI {other}"),
    }
}

/// The process exists and is not a zombie.
pub fn alive(pid: &str) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{}/stat", pid.trim())) else {
        return false;
    };
    stat.rsplit(')')
        .next()
        .and_then(|r| r.split_whitespace().next())
        != Some("Z")
}

/// Sends `signal` to `pid` (negative: its process group), as a terminal or
/// the kernel would: SIGINT for Ctrl-C, SIGKILL for an OOM kill.
#[allow(unsafe_code)]
pub fn send_signal(pid: i32, signal: i32) {
    // SAFETY: kill(2) takes plain integers and touches no memory of ours.
    unsafe {
        libc::kill(pid, signal);
    }
}
