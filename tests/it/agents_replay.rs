//! Every recording of the pinned real CLIs (fixtures/agents/recorded/),
//! replayed through the real runner and adapter by fixtures/agents/replay.py,
//! then sanitized, classified, gated and evaluated exactly as the engine
//! does, under the contract policy (fixtures/agents/contract-policy.json).
//! What each must come to is fixtures/agents/contract.toml: one entry per
//! CLI × scenario, written from the decision, not from what the code does.
//!
//! `RECOURSE_REPLAY_ONLY=claude/overloaded` runs one case; every failing case
//! is reported, not just the first.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use recourse::agent::{AgentKind, AgentSpec, AttemptTimeouts};
use recourse::catalogue;
use recourse::classification::Classification;
use recourse::clock::Clock;
use recourse::evaluator::{self, CandidateSlot, Decision, RouteCycle};
use recourse::evidence::Evidence;
use recourse::runner::{run, Launch, RunReport};
use recourse::safety;
use tokio_util::sync::CancellationToken;

use crate::common::{contract, contract_policy, kind_of, Expect};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The pinned versions, from the one place they are recorded.
fn pinned() -> BTreeMap<String, String> {
    let pkg: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(Path::new(ROOT).join("agents/package.json")).unwrap(),
    )
    .unwrap();
    let names = [
        ("claude", "@anthropic-ai/claude-code"),
        ("codex", "@openai/codex"),
        ("gemini", "@google/gemini-cli"),
        ("opencode", "opencode-ai"),
    ];
    names
        .into_iter()
        .map(|(cli, package)| {
            let v = pkg["dependencies"][package].as_str().unwrap().to_string();
            (cli.to_string(), v)
        })
        .collect()
}

/// The agent a recording was made with: its kind, its access level, and
/// the variables the candidate set (those Recourse itself sets for the
/// level come from the level, so the replayer checks they do).
fn replay_agent(kind: AgentKind, recording: &Path) -> AgentSpec {
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(recording.join("meta.json")).unwrap())
            .unwrap();
    let mut agent = AgentSpec::simulated(Vec::new());
    agent.kind = kind;
    agent.access = meta["access"]
        .as_str()
        .map(|a| serde_json::from_value(serde_json::json!(a)).expect("a known access level"));
    let own: Vec<&str> = agent
        .access
        .and_then(|level| (kind.descriptor().access?.flags)(level))
        .map(|flags| flags.env.iter().map(|(name, _)| *name).collect())
        .unwrap_or_default();
    for (name, value) in meta["env"].as_object().into_iter().flatten() {
        if !own.contains(&name.as_str()) {
            agent
                .env
                .insert(name.clone(), value.as_str().unwrap().to_string());
        }
    }
    agent.program = Some(format!("{ROOT}/fixtures/agents/replay.py"));
    agent
        .env
        .insert("RECOURSE_REPLAY".into(), recording.display().to_string());
    // A recording of a CLI that never exited keeps running: the idle
    // deadline ends it, as it would a live one.
    agent.timeouts = AttemptTimeouts {
        idle_s: 3,
        total_s: 30,
    };
    agent
}

struct Outcome {
    /// `None`: the attempt succeeded.
    decision: Option<Decision>,
    classification: Option<Classification>,
    evidence: Option<Evidence>,
    failed_at: DateTime<Utc>,
    transcript: recourse::agent::Transcript,
}

async fn replay(kind: AgentKind, recording: &Path) -> Outcome {
    let prompt = "Reply with the single word done.".to_string();
    let launch = Launch {
        agent: replay_agent(kind, recording),
        prompt,
        cwd: None,
        step: 0,
        clock: Clock::start(),
        spawned: None,
        progress: None,
        answered: None,
        resume: None,
    };
    let ran = run(launch, CancellationToken::new()).await;
    let (report, transcript) = (ran.report, ran.transcript);
    let now = Utc::now();
    let (raw, mut effect, runtime) = match report {
        RunReport::Succeeded => {
            return Outcome {
                decision: None,
                classification: None,
                evidence: None,
                failed_at: now,
                transcript,
            }
        }
        RunReport::Failed { raw, effect } => (raw, effect, None),
        RunReport::Runtime {
            failure,
            raw,
            effect,
        } => (raw, effect, Some(failure)),
        RunReport::Killed => panic!("nothing cancelled the replay"),
    };
    effect.evidence_current = Some(true);
    let evidence = Evidence::from_raw(raw);
    let classification = match runtime {
        Some(f) => f.classify(&catalogue::builtin().version),
        None => catalogue::classify(&evidence, chrono_tz::UTC),
    };
    let verdict = safety::gate(&effect);
    let doc = contract_policy();
    let slots: Vec<CandidateSlot> = doc.candidates.iter().map(CandidateSlot::from).collect();
    let cycle = RouteCycle::start(&slots).expect("the contract policy has candidates");
    let decision = evaluator::evaluate(
        &cycle,
        &classification,
        &verdict,
        evaluator::Identical::NONE,
        &slots,
        evidence.occurred_at,
    );
    Outcome {
        decision: Some(decision),
        classification: Some(classification),
        evidence: Some(evidence),
        failed_at: now,
        transcript,
    }
}

fn decision_name(o: &Outcome) -> &'static str {
    match &o.decision {
        None => "succeeded",
        Some(Decision::WaitForReset { .. }) => "wait",
        Some(Decision::Retry { .. }) => "retry",
        Some(Decision::Skip { .. } | Decision::SkipRepeated { .. }) => "skip",
        Some(Decision::Continue { .. }) => "continue",
        Some(Decision::Manual { .. } | Decision::Stop { .. }) => "manual",
    }
}

fn check(expect: &Expect, o: &Outcome) -> Vec<String> {
    let mut problems = Vec::new();
    let got = decision_name(o);
    if got != expect.decision {
        problems.push(format!(
            "decision {got}, expected {} ({:?})",
            expect.decision, o.decision
        ));
    }
    // A named code or excerpt with nothing stored to compare is a failure,
    // not a pass: the contract asked for something the run did not give.
    if let Some(code) = &expect.code {
        match &o.classification {
            Some(c) if c.code.as_str() == code => {}
            Some(c) => problems.push(format!(
                "code {} (rule {:?}), expected {code}",
                c.code.as_str(),
                c.rule_id
            )),
            None => problems.push(format!("no classification, expected code {code}")),
        }
    }
    if let Some(excerpt) = &expect.excerpt {
        match &o.evidence {
            Some(e) if e.message.contains(excerpt.as_str()) => {}
            Some(e) => problems.push(format!("evidence lacks {excerpt:?}: {:?}", e.message)),
            None => problems.push(format!("no evidence, expected {excerpt:?} in it")),
        }
    }
    if let Some(reset_in) = expect.reset_in_s {
        match &o.decision {
            Some(Decision::WaitForReset { until, .. }) => {
                let got = (*until - o.failed_at).num_seconds();
                if (got - reset_in).abs() > 90 {
                    problems.push(format!("waits {got} s, expected about {reset_in} s"));
                }
            }
            other => problems.push(format!("no wait to time: {other:?}")),
        }
    }
    problems
}

fn recordings() -> Vec<(String, PathBuf)> {
    let base = Path::new(ROOT).join("fixtures/agents/recorded");
    let mut out = Vec::new();
    for (cli, version) in pinned() {
        let dir = base.join(format!("{cli}-{version}"));
        let mut scenarios: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| {
                panic!(
                    "{} must hold the recordings of the pinned {cli}: {e}",
                    dir.display()
                )
            })
            .map(|e| e.unwrap().path())
            .filter(|p| p.is_dir())
            .collect();
        scenarios.sort();
        out.extend(scenarios.into_iter().map(|p| (cli.clone(), p)));
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_recorded_scenario_comes_to_what_the_decision_requires() {
    let contract = contract();
    let only = std::env::var("RECOURSE_REPLAY_ONLY").ok();
    let mut failures = Vec::new();
    let mut ran = 0;
    for (cli, path) in recordings() {
        let scenario = path.file_name().unwrap().to_string_lossy().to_string();
        let case = format!("{cli}/{scenario}");
        if only.as_deref().is_some_and(|o| o != case) {
            continue;
        }
        let expect = contract.get(&cli).and_then(|c| c.get(&scenario));
        let outcome = replay(kind_of(&cli), &path).await;
        ran += 1;
        if std::env::var_os("RECOURSE_REPLAY_SHOW").is_some() {
            let c = outcome.classification.as_ref();
            eprintln!("    transcript: {:?}", outcome.transcript);
            eprintln!(
                "{case}: {} code={:?} rule={:?} reset={:?} evidence={:?}",
                decision_name(&outcome),
                c.map(|c| c.code.as_str()),
                c.and_then(|c| c.rule_id.clone()),
                c.and_then(|c| c.reset_at),
                outcome
                    .evidence
                    .as_ref()
                    .map(|e| e.message.chars().take(160).collect::<String>()),
            );
            if let Some(Decision::Manual { reason }) = &outcome.decision {
                eprintln!("    manual: {reason:?}");
            }
        }
        match expect {
            Some(expect) => failures.extend(
                check(expect, &outcome)
                    .into_iter()
                    .map(|p| format!("{case}: {p}")),
            ),
            None => failures.push(format!("{case}: recorded but not in contract.toml")),
        }
        if let Some(expect) = expect {
            failures.extend(
                expect
                    .transcript_problems(&outcome.transcript)
                    .into_iter()
                    .map(|p| format!("{case}: {p}")),
            );
        }
    }
    for (cli, scenarios) in &contract {
        for scenario in scenarios.keys() {
            let case = format!("{cli}/{scenario}");
            if only.is_none()
                && !recordings()
                    .iter()
                    .any(|(c, p)| c == cli && p.ends_with(scenario))
            {
                failures.push(format!("{case}: in contract.toml but not recorded"));
            }
        }
    }
    assert!(ran > 0, "no recording was replayed");
    assert!(
        failures.is_empty(),
        "{} of {ran} cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// A copy of `recording` whose stdout has `line` added before its last
/// (terminal) event.
fn with_line_added(recording: &Path, line: &str, into: &Path) {
    for entry in std::fs::read_dir(recording).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), into.join(entry.file_name())).unwrap();
    }
    let stdout = std::fs::read_to_string(recording.join("stdout")).unwrap();
    let mut lines: Vec<&str> = stdout.lines().collect();
    lines.insert(lines.len() - 1, line);
    std::fs::write(into.join("stdout"), lines.join("\n") + "\n").unwrap();
}

/// The second attack's high finding: a tool line `serde_json` refuses (nested
/// past its 128 levels, as an MCP tool's input can be, or holding a lone
/// surrogate, as Node writes a string cut mid-emoji) was dropped, so the
/// effect-free failure after it was retried and the agent ran again. Each
/// CLI's recorded tool call, made unparseable so, added to its recorded
/// retryable failure and replayed through the real runner: never retried.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_line_the_json_parser_refuses_still_stops_automatic_recovery() {
    let base = Path::new(ROOT).join("fixtures/agents/recorded");
    let mut failures = Vec::new();
    for (cli, marker, payload_at, text) in [
        (
            "claude",
            r#""type":"tool_use""#,
            r#""input":{"#,
            "recourse-tool-ran",
        ),
        (
            "codex",
            r#""type":"command_execution""#,
            r#""item":{"#,
            "recourse-tool-ran",
        ),
        (
            "gemini",
            r#""type":"tool_use""#,
            r#""parameters":{"#,
            r#""dir_path":"."#,
        ),
        (
            "opencode",
            r#""type":"tool_use""#,
            r#""input":{"#,
            "recourse-tool-ran",
        ),
    ] {
        let dir = base.join(format!("{cli}-{}", pinned()[cli]));
        let tool = std::fs::read_to_string(dir.join("tool_then_error/stdout"))
            .unwrap()
            .lines()
            .find(|l| l.contains(marker))
            .unwrap_or_else(|| panic!("{cli}: no recorded tool line"))
            .to_string();
        let deep = format!(
            r#"{payload_at}"payload":{}"x"{},"#,
            "[".repeat(200),
            "]".repeat(200)
        );
        for (what, line) in [
            ("nested 200 deep", tool.replacen(payload_at, &deep, 1)),
            (
                "a lone surrogate",
                tool.replacen(text, &format!("{text} \\ud83d"), 1),
            ),
        ] {
            assert!(
                serde_json::from_str::<serde_json::Value>(&line).is_err(),
                "{cli}: {what}"
            );
            let copy = tempfile::tempdir().unwrap();
            with_line_added(&dir.join("overloaded"), &line, copy.path());
            let outcome = replay(kind_of(cli), copy.path()).await;
            if decision_name(&outcome) != "manual" {
                failures.push(format!(
                    "{cli}, tool line with {what}: {:?}",
                    outcome.decision
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "replayed after a tool ran:\n{}",
        failures.join("\n")
    );
}

/// The README's table of verified versions is written by hand; it must say
/// what agents/package.json pins, for every pinned CLI and nothing else.
#[test]
fn the_readme_table_lists_the_pinned_versions() {
    let readme = std::fs::read_to_string(Path::new(ROOT).join("README.md")).unwrap();
    let pkg: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(Path::new(ROOT).join("agents/package.json")).unwrap(),
    )
    .unwrap();
    let pinned = pkg["dependencies"].as_object().expect("dependencies");
    // Rows of the table: `| CLI | `package` | version |`.
    let rows: BTreeMap<String, String> = readme
        .lines()
        .filter_map(|line| {
            let cells: Vec<&str> = line.trim().trim_matches('|').split('|').collect();
            let [_, package, version] = cells[..] else {
                return None;
            };
            let package = package.trim().strip_prefix('`')?.strip_suffix('`')?;
            Some((package.to_string(), version.trim().to_string()))
        })
        .collect();
    assert_eq!(pinned.len(), 4, "the four CLIs are pinned: {pinned:?}");
    for (package, version) in pinned {
        let version = version.as_str().unwrap();
        assert_eq!(
            rows.get(package).map(String::as_str),
            Some(version),
            "README's table must list {package} at {version}, the pinned version"
        );
    }
    assert_eq!(
        rows.len(),
        pinned.len(),
        "the README lists no CLI that is not pinned: {rows:?}"
    );
}
