//! Contract tests against the pinned, unmodified agent CLIs: for each CLI ×
//! scenario, a real `recourse run` inside tests/live/sandbox.sh (its own
//! network namespace, the loopback mock answering with the scenario, fresh
//! HOME), on a profile of that CLI plus a simulated fallback under
//! fixtures/agents/contract-policy.json. The route must come to what
//! fixtures/agents/contract.toml says, the same file the recordings are
//! checked against:
//! - succeeded: the CLI answered; one attempt;
//! - retry: the first attempt is retried, the retry fails too, the candidate
//!   is skipped and the fallback succeeds;
//! - skip: the candidate is skipped at once and the fallback succeeds;
//! - wait: the route waits for the reset the provider gave (then the run is
//!   interrupted: nobody waits ten minutes in a test);
//! - manual: the route needs a person.
//!
//! The first failure's code and evidence are checked too.
//!
//! One more case runs two routes on one real Claude Code candidate against a
//! usage window (`usage_limit_until_reset`): the second route never reaches
//! the mock before the reset (`RECOURSE_LIVE=claude/two_routes` runs it
//! alone).
//!
//! By default every scenario of Claude Code, Codex and Gemini CLI runs and
//! two of OpenCode (it backs off for 70–110 s on every retryable failure, and
//! its full matrix takes about 30 minutes); `RECOURSE_LIVE=all` runs
//! everything, `RECOURSE_LIVE=claude/overloaded,codex/ok` a chosen few, and
//! `RECOURSE_LIVE=off` none.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{contract, contract_policy, kind_of, seed_profile, Expect};
use chrono::Utc;
use recourse::agent::{AgentKind, AgentSpec, AttemptTimeouts, SimStep};
use recourse::profile::CandidateInput;
use recourse::route::RouteState;
use recourse::store::Store;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const PROMPT: &str = "Reply with the single word done.";
/// OpenCode scenarios in the default run: its quick ones.
const OPENCODE_DEFAULT: [&str; 4] = [
    "ok",
    "unauthorized",
    "write_file.edit",
    "write_file.read_only",
];

/// The recording of `cli`/`scenario`'s meta.json: the access level and the
/// candidate's own variables the scenario was recorded with.
fn recorded_meta(cli: &str, scenario: &str) -> serde_json::Value {
    let root = Path::new(ROOT).join("fixtures/agents/recorded");
    let dir = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with(&format!("{cli}-")))
        })
        .expect("the CLI's recordings");
    serde_json::from_str(&std::fs::read_to_string(dir.join(scenario).join("meta.json")).unwrap())
        .unwrap()
}

/// The contract policy: candidate 0 is the CLI under test, 1 the fallback.
/// The CLI gets the access level and variables its recording of `scenario`
/// was made with (none for the scenarios recorded before access levels).
fn candidates(cli: &str, scenario: &str) -> Vec<CandidateInput> {
    let doc = contract_policy();
    let bin = Path::new(ROOT).join("agents/node_modules/.bin").join(cli);
    assert!(
        bin.exists(),
        "{} is missing: scripts/setup.sh installs the pinned CLIs",
        bin.display()
    );
    let mut agent = AgentSpec::simulated(Vec::new());
    agent.kind = kind_of(cli);
    agent.program = Some(bin.display().to_string());
    // OpenCode never gives up on a cut stream or a 4-hour retry-after, and
    // backs off silently for up to 110 s before it reports a failure.
    agent.timeouts = match agent.kind {
        AgentKind::Opencode => AttemptTimeouts {
            idle_s: 150,
            total_s: 300,
        },
        _ => AttemptTimeouts {
            idle_s: 60,
            total_s: 180,
        },
    };
    let meta = recorded_meta(cli, scenario);
    agent.access = meta["access"]
        .as_str()
        .map(|a| serde_json::from_value(serde_json::json!(a)).unwrap());
    let own: Vec<&str> = agent
        .access
        .and_then(|level| (agent.kind.descriptor().access?.flags)(level))
        .map(|flags| flags.env.iter().map(|(name, _)| *name).collect())
        .unwrap_or_default();
    for (name, value) in meta["env"].as_object().into_iter().flatten() {
        if !own.contains(&name.as_str()) {
            agent
                .env
                .insert(name.clone(), value.as_str().unwrap().to_string());
        }
    }
    let fallback = AgentSpec::simulated(vec![SimStep::Succeed { after_ms: 10 }]);
    vec![
        CandidateInput::new(cli, agent, doc.candidates[0].policy.clone()),
        CandidateInput::new("fallback", fallback, doc.candidates[1].policy.clone()),
    ]
}

struct Run {
    exit: Option<i32>,
    /// `recourse run`'s stdout: the agent's answer.
    answer: String,
    /// The sandbox's working directory after the run.
    repo: std::path::PathBuf,
    /// The route as it was when the run came to rest (or was interrupted).
    row: recourse::route::RouteRow,
    mock_started: f64,
}

fn live(cli: &str, scenario: &str, expect: &Expect) -> Result<Run, String> {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("live.db");
    seed_profile(&db, cli, &candidates(cli, scenario));
    let work = dir.path().join("sandbox");
    // `write_file.edit`: the mock's `write_file` scenario at access `edit`.
    let mock_scenario = scenario.split('.').next().unwrap_or(scenario);
    let mut child = Command::new("bash")
        .arg(Path::new(ROOT).join("tests/live/sandbox.sh"))
        .arg(mock_scenario)
        .arg(&work)
        .arg("--")
        .arg(env!("CARGO_BIN_EXE_recourse"))
        .args(["run", "--profile", cli, "--prompt", PROMPT, "--db"])
        .arg(&db)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .map_err(|e| format!("sandbox: {e}"))?;
    let group = child.id() as i32;
    // Transitions come on stderr; stdout is kept for the answer.
    let progress = child.stderr.take().unwrap();
    let mut answer_pipe = child.stdout.take().unwrap();
    let answer = std::thread::spawn(move || {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut answer_pipe, &mut text).unwrap();
        text
    });
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(progress).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let deadline = Instant::now() + Duration::from_secs(600);
    let mut lines = Vec::new();
    let mut row = None;
    loop {
        match rx.recv_timeout(Duration::from_millis(200)) {
            Ok(line) => {
                let waiting = line.contains(&format!(" {} ", RouteState::WaitingReset.words()));
                lines.push(line);
                if waiting && expect.decision == "wait" {
                    row = Store::open(&db).unwrap().route(1).unwrap();
                    crate::common::send_signal(-group, libc::SIGINT);
                }
            }
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) if Instant::now() > deadline => {
                crate::common::send_signal(-group, libc::SIGKILL);
                let _ = child.wait();
                return Err(format!("still running after 600 s: {lines:?}"));
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
        }
    }
    let status = child.wait().unwrap();
    let answer = answer.join().unwrap();
    let stderr = lines.join("\n");
    let row = match row {
        Some(r) => r,
        None => Store::open(&db)
            .unwrap()
            .route(1)
            .unwrap()
            .ok_or_else(|| format!("no route was started: {stderr}"))?,
    };
    let mock_started = std::fs::read_to_string(work.join("mock.port.started"))
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0.0);
    let run = Run {
        exit: status.code(),
        answer,
        repo: work.join("repo"),
        row,
        mock_started,
    };
    check(&db, expect, &run).map_err(|p| {
        format!(
            "{p}\n--- answer (stdout):\n{}\n--- stderr:\n{stderr}",
            run.answer
        )
    })?;
    Ok(run)
}

fn check(db: &Path, expect: &Expect, run: &Run) -> Result<(), String> {
    let store = Store::open(db).unwrap();
    let attempts = store.attempts(1).unwrap();
    let first = attempts.first().ok_or("no attempt was made")?;
    let result = first.result.as_ref();
    let decision = result
        .and_then(|r| {
            r.decision
                .as_ref()
                .map(|d| d.text(&recourse::account::AccountNames::ids()).into_owned())
        })
        .unwrap_or_default();
    let state = run.row.state;
    let ok = match expect.decision.as_str() {
        "succeeded" => state == RouteState::Succeeded && attempts.len() == 1,
        "retry" => {
            decision.contains("retry 1 of 1")
                && state == RouteState::Succeeded
                && attempts.last().unwrap().attempt.candidate_index == 1
        }
        "skip" => {
            decision.starts_with("candidate 1 used up its ")
                && decision.ends_with("; skipping to candidate 2")
                && state == RouteState::Succeeded
                && attempts.len() == 2
        }
        "wait" => state == RouteState::WaitingReset && decision.starts_with("wait for"),
        "manual" => state == RouteState::NeedsManual && run.exit == Some(3),
        other => return Err(format!("unknown decision {other} in contract.toml")),
    };
    if !ok {
        return Err(format!(
            "expected {}: state {state:?}, exit {:?}, {} attempts, first decision {decision:?}",
            expect.decision,
            run.exit,
            attempts.len()
        ));
    }
    // A named code or excerpt with nothing stored is a failure, not a pass.
    if let Some(code) = &expect.code {
        let c = result
            .and_then(|r| r.classification.as_ref())
            .ok_or_else(|| format!("no classification stored, expected code {code}"))?;
        if c.code.as_str() != code {
            return Err(format!(
                "code {} (rule {:?}), expected {code}",
                c.code.as_str(),
                c.rule_id
            ));
        }
    }
    if let Some(excerpt) = &expect.excerpt {
        let message = &result
            .and_then(|r| r.evidence.as_ref())
            .ok_or_else(|| format!("no evidence stored, expected {excerpt:?} in it"))?
            .message;
        if !message.contains(excerpt.as_str()) {
            return Err(format!("evidence lacks {excerpt:?}: {message:?}"));
        }
    }
    let transcript = store.transcript(1, 1).unwrap().map(|(t, _)| t);
    let problems = match &transcript {
        Some(t) => expect.transcript_problems(t),
        None if expect.answer.is_some() || expect.tools.is_some() => {
            vec!["no transcript was stored".to_string()]
        }
        None => Vec::new(),
    };
    if !problems.is_empty() {
        return Err(problems.join("; "));
    }
    if let Some(words) = &expect.answer {
        if !run.answer.contains(words.as_str()) {
            return Err(format!(
                "recourse run printed {:?}, not the answer",
                run.answer
            ));
        }
    }
    if let Some(written) = expect.written {
        let there = run.repo.join("recourse-note.txt").exists();
        if there != written {
            return Err(format!(
                "recourse-note.txt {} in the working directory",
                if there {
                    "was written"
                } else {
                    "was not written"
                }
            ));
        }
    }
    if let Some(reset_in) = expect.reset_in_s {
        let deadline = run.row.deadline.ok_or("a wait with no deadline")?;
        let want = run.mock_started + reset_in as f64;
        let got = deadline.timestamp() as f64;
        // The CLIs print reset clock times to the minute.
        if (got - want).abs() > 90.0 {
            return Err(format!(
                "waits until {deadline} ({:.0} s from the mock's reset)",
                got - want
            ));
        }
        assert!(deadline > Utc::now(), "the reset is in the future");
    }
    Ok(())
}

fn selected(contract: &BTreeMap<String, BTreeMap<String, Expect>>) -> Vec<(String, String)> {
    let choice = std::env::var("RECOURSE_LIVE").unwrap_or_default();
    let all: Vec<(String, String)> = contract
        .iter()
        .flat_map(|(cli, s)| s.keys().map(move |k| (cli.clone(), k.clone())))
        // Only the recorder needs this one: the redaction audit replays it.
        .filter(|(_, s)| s != "secret_echo")
        .collect();
    match choice.as_str() {
        "off" => Vec::new(),
        "all" => all,
        "" => all
            .into_iter()
            .filter(|(cli, s)| cli != "opencode" || OPENCODE_DEFAULT.contains(&s.as_str()))
            .collect(),
        list => list
            .split(',')
            .map(|c| {
                let (cli, s) = c
                    .trim()
                    .split_once('/')
                    .expect("RECOURSE_LIVE=cli/scenario,…");
                (cli.to_string(), s.to_string())
            })
            .collect(),
    }
}

#[test]
fn every_pinned_cli_comes_to_what_the_decision_requires() {
    let contract = contract();
    let cases = selected(&contract);
    if cases.is_empty() {
        eprintln!("RECOURSE_LIVE=off: no live CLI ran");
        return;
    }
    // One thread per CLI: the CLIs wait on the mock, not on the cores.
    let mut by_cli: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (cli, s) in &cases {
        by_cli.entry(cli.clone()).or_default().push(s.clone());
    }
    let contract = std::sync::Arc::new(contract);
    let handles: Vec<_> = by_cli
        .into_iter()
        .map(|(cli, scenarios)| {
            let contract = contract.clone();
            std::thread::spawn(move || {
                let mut failures = Vec::new();
                for s in scenarios {
                    let started = Instant::now();
                    let expect = &contract[&cli][&s];
                    match live(&cli, &s, expect) {
                        Ok(_) => eprintln!("{cli}/{s}: ok ({:.0?})", started.elapsed()),
                        Err(e) => failures.push(format!("{cli}/{s}: {e}")),
                    }
                }
                failures
            })
        })
        .collect();
    let failures: Vec<String> = handles
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} live cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n\n")
    );
}

/// Two routes on one real Claude Code candidate, so one account, and a
/// subscription window the mock refuses until its reset 30 s after it
/// starts (`usage_limit_until_reset`), then serves. The first route's
/// attempt marks the account; the second, started while the first waits, is
/// held back by the mark and never reaches the mock before the reset: every
/// refused request is the first route's one attempt (as many as the
/// recording of `claude/usage_limit` shows one attempt makes). At the reset
/// one route probes, and both succeed.
#[test]
fn a_second_route_on_a_limited_claude_account_never_reaches_the_provider_before_the_reset() {
    let choice = std::env::var("RECOURSE_LIVE").unwrap_or_default();
    let listed = choice.is_empty() || choice == "all" || choice.contains("claude/two_routes");
    if choice == "off" || !listed {
        eprintln!("RECOURSE_LIVE={choice}: the two-route Claude Code case did not run");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("live.db");
    seed_profile(&db, "claude", &candidates("claude", "usage_limit"));
    let work = dir.path().join("sandbox");
    let mut child = Command::new("bash")
        .arg(Path::new(ROOT).join("tests/live/sandbox.sh"))
        .arg("usage_limit_until_reset")
        .arg(&work)
        .arg("--")
        .arg("bash")
        .arg(Path::new(ROOT).join("tests/live/two_routes.sh"))
        .arg(env!("CARGO_BIN_EXE_recourse"))
        .arg(&db)
        .arg("claude")
        .env("MOCK_RESET_SOON_S", "30")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .expect("the sandbox starts");
    let deadline = Instant::now() + Duration::from_secs(300);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            crate::common::send_signal(-(child.id() as i32), libc::SIGKILL);
            let _ = child.wait();
            panic!("the two routes did not rest within 300 s");
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    let runs = ["run1.out", "run2.out"]
        .map(|f| std::fs::read_to_string(work.join("repo").join(f)).unwrap_or_default());
    assert!(status.success(), "both routes succeed: {runs:#?}");
    let store = Store::open(&db).unwrap();
    let first = store.attempts(1).unwrap();
    let reset = match first[0].result.as_ref().and_then(|r| r.decision.clone()) {
        Some(recourse::route::Decided::Typed(recourse::evaluator::Decision::WaitForReset {
            until,
            ..
        })) => until,
        other => panic!("the first route waits for the provider's reset, not {other:?}"),
    };
    let second = store.attempts(2).unwrap();
    let holds = store.holds(2).unwrap();
    assert!(
        !holds.is_empty() && holds[0].record.mark.until == Some(reset),
        "the second route was held back by the first one's mark: {holds:?} {runs:#?}"
    );
    assert_eq!(second.len(), 1, "it ran once, after the reset: {runs:#?}");
    assert!(second[0].attempt.started_at >= reset);
    let requests = std::fs::read_to_string(work.join("mock.log")).unwrap();
    let refused = requests
        .lines()
        .filter(|l| l.contains("\"note\": \"usage_limit\""))
        .count();
    let version = crate::common::pinned_version("claude");
    let recorded = std::fs::read_to_string(Path::new(ROOT).join(format!(
        "fixtures/agents/recorded/claude-{version}/usage_limit/requests.jsonl"
    )))
    .unwrap();
    let one_attempt = recorded
        .lines()
        .filter(|l| l.contains("usage_limit"))
        .count();
    assert_eq!(
        refused, one_attempt,
        "only the first route's attempt reached the mock before the reset:\n{requests}"
    );
    let served = requests
        .lines()
        .filter(|l| l.contains("\"note\": \"ok"))
        .count();
    assert!(served >= 2, "both routes were served after it:\n{requests}");
}
