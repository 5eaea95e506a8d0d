//! The process runner with real commands (the generic kind runs whatever it
//! is given, `sh -c …` here): deadlines, process groups, bounds, stdin and
//! stdout that misbehave, and programs that cannot start.

use std::path::Path;
use std::time::{Duration, Instant};

use recourse::agent::{AgentKind, AgentSpec, AttemptTimeouts};
use recourse::classification::RuntimeFailure;
use recourse::clock::Clock;
use recourse::runner::{run, Launch, RunReport};
use tokio_util::sync::CancellationToken;

use crate::common::alive;

fn shell(script: &str) -> AgentSpec {
    let mut agent = AgentSpec::simulated(Vec::new());
    agent.kind = AgentKind::Generic;
    agent.program = Some("sh".into());
    agent.args = vec!["-c".into(), script.into()];
    agent
}

fn launch(agent: AgentSpec, prompt: &str) -> Launch {
    Launch {
        agent,
        prompt: prompt.into(),
        cwd: None,
        step: 0,
        clock: Clock::start(),
        spawned: None,
        progress: None,
        answered: None,
        resume: None,
    }
}

async fn go(agent: AgentSpec) -> RunReport {
    run(launch(agent, "p"), CancellationToken::new())
        .await
        .report
}

fn message(report: &RunReport) -> String {
    match report {
        RunReport::Failed { raw, .. } | RunReport::Runtime { raw, .. } => {
            String::from_utf8_lossy(&raw.message).into_owned()
        }
        other => panic!("expected a failure, got {other:?}"),
    }
}

async fn gone(pid: &str) -> bool {
    for _ in 0..100 {
        if !alive(pid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}

async fn read_pid(file: &Path) -> String {
    for _ in 0..500 {
        if let Ok(s) = std::fs::read_to_string(file) {
            if !s.trim().is_empty() {
                return s;
            }
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("{} was never written", file.display());
}

#[tokio::test]
async fn missing_program_is_a_spawn_failure_that_names_it() {
    let mut agent = shell("");
    agent.program = Some("recourse-no-such-agent".into());
    let report = go(agent).await;
    assert!(
        matches!(
            report,
            RunReport::Runtime {
                failure: RuntimeFailure::SpawnFailed,
                ..
            }
        ),
        "{report:?}"
    );
    assert_eq!(
        message(&report),
        "cannot start recourse-no-such-agent: not found on PATH",
        "a name on PATH is said once"
    );
}

#[tokio::test]
async fn a_file_that_is_not_executable_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("agent");
    std::fs::write(&file, "#!/bin/sh\n").unwrap();
    let mut agent = shell("");
    agent.program = Some(file.display().to_string());
    let report = go(agent).await;
    assert_eq!(
        message(&report),
        format!(
            "cannot start agent: not executable (permission denied) ({})",
            file.display()
        )
    );
}

#[tokio::test]
async fn a_working_directory_that_is_a_file_is_reported_as_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path().join("notes.txt");
    std::fs::write(&cwd, "x").unwrap();
    let mut l = launch(shell("exit 0"), "p");
    l.cwd = Some(cwd.clone());
    let report = run(l, CancellationToken::new()).await.report;
    assert_eq!(
        message(&report),
        format!(
            "cannot start sh: working directory {} is a file, not a directory",
            cwd.display()
        ),
        "it exists: “does not exist” would be wrong"
    );
}

#[tokio::test]
async fn a_deleted_working_directory_is_reported_as_such() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path().join("gone");
    let mut l = launch(shell("exit 0"), "p");
    l.cwd = Some(cwd.clone());
    let report = run(l, CancellationToken::new()).await.report;
    assert_eq!(
        message(&report),
        format!(
            "cannot start sh: working directory {} does not exist",
            cwd.display()
        ),
        "not blamed on the program"
    );
}

#[tokio::test]
async fn cancel_kills_the_whole_process_group_and_reaps_the_agent() {
    let dir = tempfile::tempdir().unwrap();
    let pids = dir.path().join("pids");
    let script = format!(
        "sleep 60 & echo $! > {0}.tool; echo $$ > {0}; wait",
        pids.display()
    );
    let cancel = CancellationToken::new();
    let task = tokio::spawn(run(launch(shell(&script), "p"), cancel.clone()));
    let agent = read_pid(&pids).await;
    let tool = read_pid(&dir.path().join("pids.tool")).await;
    cancel.cancel();
    assert_eq!(task.await.unwrap().report, RunReport::Killed);
    assert!(
        !alive(&agent),
        "the agent {agent} is killed and reaped (no zombie)"
    );
    assert!(gone(&tool).await, "the tool {tool} it started went with it");
}

#[tokio::test]
async fn an_agent_quiet_past_its_idle_timeout_is_ended_with_its_group() {
    let dir = tempfile::tempdir().unwrap();
    let pid = dir.path().join("pid");
    let mut agent = shell(&format!("echo $$ > {}; exec sleep 60", pid.display()));
    agent.timeouts = AttemptTimeouts {
        idle_s: 1,
        total_s: 60,
    };
    let started = Instant::now();
    let report = go(agent).await;
    assert!(
        matches!(
            report,
            RunReport::Runtime {
                failure: RuntimeFailure::IdleTimeout {
                    idle_s: 1,
                    output_seen: false
                },
                ..
            }
        ),
        "{report:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "ended at the deadline, not at exit"
    );
    assert!(!alive(&std::fs::read_to_string(&pid).unwrap()));
    assert!(message(&report).starts_with("the agent printed nothing for 1 s"));
}

#[tokio::test]
async fn an_agent_that_keeps_talking_is_ended_at_its_total_timeout() {
    let mut agent = shell("while true; do echo step; sleep 0.2; done");
    agent.timeouts = AttemptTimeouts {
        idle_s: 1,
        total_s: 2,
    };
    let report = go(agent).await;
    assert!(
        matches!(
            report,
            RunReport::Runtime {
                failure: RuntimeFailure::TotalTimeout {
                    total_s: 2,
                    output_seen: true
                },
                ..
            }
        ),
        "output keeps the idle deadline away; the total one still holds: {report:?}"
    );
}

#[tokio::test]
async fn the_attempt_ends_when_the_agent_exits_even_if_a_child_holds_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let child = dir.path().join("child");
    // A dev server left running in the background, holding the pipes.
    let script = format!("sleep 60 & echo $! > {}; exit 0", child.display());
    let started = Instant::now();
    let report = go(shell(&script)).await;
    assert_eq!(report, RunReport::Succeeded);
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "did not wait for the background child: {:?}",
        started.elapsed()
    );
    let child = std::fs::read_to_string(&child).unwrap();
    assert!(
        gone(&child).await,
        "what the agent left behind is killed with its group"
    );
}

#[tokio::test]
async fn invalid_utf8_on_stdout_does_not_stop_the_reader() {
    // Without a reader the agent would die of SIGPIPE (exit 141) and a
    // success would be recorded as a failure.
    let script = r"printf '\377\376 not utf-8\n'; i=0; while [ $i -lt 3000 ]; do echo line $i; i=$((i+1)); done; exit 0";
    assert_eq!(go(shell(script)).await, RunReport::Succeeded);
}

#[tokio::test]
async fn a_huge_line_without_newline_is_bounded_and_read_to_the_end() {
    // 64 MiB on one line: kept to the runner's bound, the rest drained.
    let script = "head -c 67108864 /dev/zero | tr '\\0' x; exit 0";
    assert_eq!(go(shell(script)).await, RunReport::Succeeded);
}

#[tokio::test]
async fn a_large_prompt_is_written_while_the_agent_talks_first() {
    // The agent writes 1 MiB before it reads stdin; written serially, the
    // 256 KiB prompt and the full stdout pipe would deadlock.
    let script = "head -c 1048576 /dev/zero; n=$(wc -c); [ \"$n\" -eq 262144 ]";
    let prompt = "x".repeat(256 * 1024);
    let mut agent = shell(script);
    agent.timeouts = AttemptTimeouts {
        idle_s: 20,
        total_s: 30,
    };
    let report = run(launch(agent, &prompt), CancellationToken::new())
        .await
        .report;
    assert_eq!(
        report,
        RunReport::Succeeded,
        "the whole prompt arrived: {report:?}"
    );
}

#[tokio::test]
async fn candidate_env_and_config_dir_reach_the_agent() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("env");
    // A Codex candidate whose program is a script that ignores the kind's
    // own arguments (`exec --json PROMPT`) and reports its environment.
    let script = dir.path().join("report-env");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\necho \"$HTTPS_PROXY|$CODEX_HOME\" > {}\n",
            out.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let mut agent = shell("");
    agent.kind = AgentKind::Codex;
    agent.program = Some(script.display().to_string());
    agent.args.clear();
    agent
        .env
        .insert("HTTPS_PROXY".into(), "http://127.0.0.1:3128".into());
    agent.config_dir = Some("/srv/codex-work-account".into());
    let _ = go(agent).await;
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        "http://127.0.0.1:3128|/srv/codex-work-account\n",
        "config_dir goes in the variable Codex documents"
    );
}

/// A `tracing` writer into a buffer the test reads.
#[derive(Clone, Default)]
struct Captured(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test(flavor = "current_thread")]
async fn the_spawn_log_never_shows_a_secret_from_the_candidate_env() {
    const KEY: &str = "sk-ant-api03-Zq7XbR2mK9pLw4TnV8cY1dF6hJ3sG5aE0uIoPzQxWvBnMkLjHgFdSa";
    let logs_of = Captured::default();
    let writer = logs_of.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .finish();
    // This thread only: the runtime is single-threaded, so the runner's
    // spawn (and its log) happens here.
    let _guard = tracing::subscriber::set_default(subscriber);
    let mut agent = shell("echo \"$ANTHROPIC_API_KEY\" >/dev/null; exit 1");
    agent.env.insert("ANTHROPIC_API_KEY".into(), KEY.into());
    agent
        .env
        .insert("HTTPS_PROXY".into(), "http://127.0.0.1:3128".into());
    // Call sites' interest is cached process-wide: another test's thread,
    // with no subscriber, can mark the spawn log as wanted by nobody just as
    // this one starts. Asked again, a few tries reach it.
    let mut logs = String::new();
    for _ in 0..5 {
        tracing::callsite::rebuild_interest_cache();
        let report = go(agent.clone()).await;
        assert!(matches!(report, RunReport::Failed { .. }), "{report:?}");
        logs = String::from_utf8(logs_of.0.lock().unwrap().clone()).unwrap();
        if logs.contains("starting the agent") {
            break;
        }
    }
    assert!(
        logs.contains("starting the agent") && logs.contains("ANTHROPIC_API_KEY"),
        "the spawn is logged with the spec, so the check below means something: {logs}"
    );
    assert!(
        logs.contains("http://127.0.0.1:3128"),
        "a value that is no secret stays readable: {logs}"
    );
    assert!(!logs.contains(KEY), "the key leaked into the log: {logs}");
    assert!(!logs.contains("sk-ant-"), "not even its prefix: {logs}");
}

/// The stored evidence of a spawn failure: what the route shows.
fn stored_message(report: &RunReport) -> String {
    match report {
        RunReport::Runtime { raw, .. } => {
            recourse::evidence::Evidence::from_raw(raw.clone()).message
        }
        other => panic!("expected a runtime failure, got {other:?}"),
    }
}

#[tokio::test]
async fn a_spawn_error_shows_the_configured_program_path_readable() {
    let program = "/some/long/path/claude-2/bin/agent";
    let mut agent = shell("");
    agent.program = Some(program.into());
    let shown = stored_message(&go(agent).await);
    assert_eq!(
        shown,
        format!("cannot start agent: no such file ({program})"),
        "a program path the user configured is no secret: not a blob, not [path]"
    );
}

#[tokio::test]
async fn a_spawn_error_shows_a_program_under_home_from_tilde() {
    let home = std::env::var("HOME").expect("tests run with a HOME");
    let home = home.trim_end_matches('/');
    assert!(!home.is_empty(), "HOME is a directory below /");
    let mut agent = shell("");
    agent.program = Some(format!("{home}/recourse-missing/claude-2/bin/agent"));
    let shown = stored_message(&go(agent).await);
    assert_eq!(
        shown, "cannot start agent: no such file (~/recourse-missing/claude-2/bin/agent)",
        "the user's name in the home path is left out; the rest is readable"
    );
}

/// Peak resident memory of this process so far (`VmHWM`), in KiB.
fn peak_rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM in /proc/self/status")
}

/// Runs `test`, an ignored test of this binary, alone in a new process, so
/// the peak memory it reports is its own and not other tests'.
fn run_alone(test: &str) -> String {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            test,
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("RECOURSE_RUN_ALONE", "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{test} failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// A Claude Code `result` line as 2.1.332 prints it (`type` after the
/// text: fixtures/agents/recorded/claude-2.1.332/ok), its text `mib` MiB
/// of `x` after `text_start`, then exit `code`.
fn huge_claude_result(dir: &Path, is_error: bool, text_start: &str, mib: usize) -> AgentSpec {
    let prefix = format!(
        r#"{{"duration_api_ms":33,"stop_reason":"end_turn","session_id":"s","usage":{{"input_tokens":12,"server_tool_use":{{"web_search_requests":0}},"iterations":[]}},"modelUsage":{{}},"is_error":{is_error},"num_turns":1,"subtype":"success","result":"{text_start}"#
    );
    let suffix = r#"","type":"result","duration_ms":1833,"uuid":"u"}"#;
    std::fs::write(dir.join("prefix"), prefix).unwrap();
    std::fs::write(dir.join("suffix"), format!("{suffix}\n")).unwrap();
    let init = r#"{"type":"system","subtype":"init","cwd":"/w","session_id":"s","tools":[]}"#;
    let script = dir.join("claude");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\necho '{init}'\ncd {}\ncat prefix; head -c {} /dev/zero | tr '\\0' x; cat suffix\nexit {}\n",
            dir.display(),
            mib << 20,
            u8::from(is_error)
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let mut agent = shell("");
    agent.kind = AgentKind::ClaudeCode;
    agent.program = Some(script.display().to_string());
    agent.args.clear();
    agent
}

#[test]
fn huge_stdout_lines_go_through_the_runner_in_bounded_memory() {
    let out = run_alone("runner::huge_lines_probe");
    let growth: u64 = out
        .lines()
        .find_map(|l| l.split("peak growth KiB: ").nth(1))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("the probe reports its peak: {out}"));
    assert!(
        growth < 48 * 1024,
        "a 100 MiB line must not be held whole: peak memory grew by {growth} KiB\n{out}"
    );
}

/// Run by `huge_stdout_lines_go_through_the_runner_in_bounded_memory` in a
/// process of its own.
#[test]
#[ignore = "run alone by huge_stdout_lines_go_through_the_runner_in_bounded_memory"]
fn huge_lines_probe() {
    assert!(
        std::env::var_os("RECOURSE_RUN_ALONE").is_some(),
        "run through run_alone, so the peak is this test's"
    );
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let before = peak_rss_kib();
    let dir = tempfile::tempdir().unwrap();
    rt.block_on(async {
        // 100 MiB of answer: a success, read from the head of its line.
        let ok = huge_claude_result(dir.path(), false, "", 100);
        assert_eq!(
            go(ok).await,
            RunReport::Succeeded,
            "a long answer is a success"
        );
        // 100 MiB of error text after the CLI's words: a failure whose
        // evidence is those words, bounded.
        let err = huge_claude_result(
            dir.path(),
            true,
            "API Error: 500 Internal server error. ",
            100,
        );
        let report = go(err).await;
        let RunReport::Failed { raw, effect } = &report else {
            panic!("expected a failure: {report:?}");
        };
        assert!(
            String::from_utf8_lossy(&raw.message)
                .starts_with("API Error: 500 Internal server error."),
            "the evidence is the CLI's words"
        );
        assert!(
            raw.message.len() <= 8192,
            "and bounded: {} bytes",
            raw.message.len()
        );
        assert_eq!(raw.http_status, Some(500));
        assert_eq!(
            effect.tool_activity_seen,
            Some(false),
            "a long result is a known event, not an unknown one"
        );
        // A 512 MiB line of a generic command, drained to its end.
        let report = go(shell("head -c 536870912 /dev/zero | tr '\\0' x; exit 0")).await;
        assert_eq!(report, RunReport::Succeeded);
    });
    println!("peak growth KiB: {}", peak_rss_kib().saturating_sub(before));
}
