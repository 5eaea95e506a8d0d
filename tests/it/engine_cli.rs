//! The route commands of the `recourse` binary: output, exit codes and every
//! error message they print.

use crate::common::recourse_on;
use std::path::Path;
use std::process::Output;

use crate::common::{hanging_agent, seed_profile, spawn_run, uniform_policy};
use recourse::agent::{AgentSpec, SimStep};
use recourse::policy::Exhausted;
use recourse::profile::CandidateInput;
use recourse::store::Store;

fn profile(db: &Path, name: &str, script: Vec<SimStep>) {
    let candidate = CandidateInput::new(
        format!("{name} sim"),
        AgentSpec::simulated(script),
        uniform_policy(None, Some((1, 1)), Exhausted::Stop),
    );
    seed_profile(db, name, &[candidate]);
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).to_string()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).to_string()
}

#[test]
fn run_prints_each_transition_and_exits_zero_on_success() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("cli.db");
    profile(
        &db,
        "Quick",
        vec![
            SimStep::Overloaded { after_ms: 50 },
            SimStep::Succeed { after_ms: 50 },
        ],
    );
    let out = recourse_on(&db, &["run", "--profile", "Quick", "--prompt", "go"]);
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "(simulated) The task is done.\n",
        "stdout is the agent's answer alone, so answer=$(recourse run …) works"
    );
    // Transitions are progress: on stderr.
    let lines: Vec<String> = stderr(&out)
        .lines()
        .filter(|l| l.starts_with("route "))
        .map(str::to_string)
        .collect();
    assert_eq!(lines.len(), 4, "start, retry, running, success: {lines:?}");
    assert!(
        lines[0].starts_with("route 1 running                    candidate 1/1 Quick sim"),
        "the state in the app's words, in a column as wide as the longest: {lines:?}"
    );
    assert!(lines[1].contains(" retry scheduled ") && lines[1].contains("retry 1/1"));
    assert!(lines[3].starts_with("route 1 succeeded "));
    assert!(
        lines
            .iter()
            .all(|l| !l.contains(" gen ") && !l.contains("retry_scheduled")),
        "no generation and no state's code name: {lines:?}"
    );
}

#[test]
fn run_that_needs_a_person_says_how_to_act_and_exits_three() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("cli.db");
    profile(&db, "Unsafe", vec![SimStep::ToolThenReset { after_ms: 20 }]);
    let out = recourse_on(&db, &["run", "--profile", "Unsafe", "--prompt", "go"]);
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(stdout(&out), "", "no answer: the route did not succeed");
    let text = stderr(&out);
    assert!(
        text.contains("route 1 needs you: not safe to recover automatically"),
        "{text}"
    );
    assert!(
        text.contains("  actions: retry-now, stop (recourse action 1 ACTION --generation 2)"),
        "{text}"
    );
    let out = recourse_on(&db, &["action", "1", "stop", "--generation", "2"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).starts_with("route 1 stopped "));
    let out = recourse_on(&db, &["action", "1", "retry-now", "--generation", "2"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out),
        "error: the route changed: it is stopped now, at generation 3; look again before acting\n"
    );
}

#[test]
fn route_detail_says_states_in_words_times_locally_and_the_generation_only_for_the_command() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("cli.db");
    profile(&db, "Unsafe", vec![SimStep::ToolThenReset { after_ms: 20 }]);
    recourse_on(&db, &["run", "--profile", "Unsafe", "--prompt", "go"]);
    let held = stdout(&recourse_on(&db, &["route", "1"]));
    assert!(
        held.starts_with("route 1 needs manual recovery "),
        "the state as the app's badge says it: {held}"
    );
    assert!(
        held.contains("\n  actions: retry-now, stop (recourse action 1 ACTION --generation 2)\n"),
        "the generation where a command needs it: {held}"
    );
    recourse_on(&db, &["action", "1", "stop", "--generation", "2"]);
    // Nine hours east of UTC (a POSIX zone: no time zone database needed).
    let out = crate::common::recourse_cmd(&db, &["route", "1"])
        .env("TZ", "JST-9")
        .output()
        .unwrap();
    let shown = stdout(&out);
    let json = stdout(&recourse_on(&db, &["route", "1", "--json"]));
    let detail: serde_json::Value = serde_json::from_str(&json).unwrap();
    let at: chrono::DateTime<chrono::Utc> =
        serde_json::from_value(detail["manual_actions"][0]["at"].clone()).unwrap();
    let tokyo = chrono::FixedOffset::east_opt(9 * 3600).unwrap();
    let local = at.with_timezone(&tokyo).format("%-d %b %Y, %H:%M:%S");
    assert!(
        shown.contains(&format!("\n  you: Stop from the command line at {local}: ")),
        "the action as its button names it, at the local time in the app's shape: {shown}"
    );
    assert!(
        !shown.contains(" gen ") && !shown.contains("(gen"),
        "the generation is the engine's, not a person's: {shown}"
    );
    assert_eq!(
        detail["snapshot"]["generation"], 3,
        "--json keeps the generation for scripts"
    );
}

#[test]
fn route_commands_list_and_show_routes() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("cli.db");
    profile(&db, "Quick", vec![SimStep::Succeed { after_ms: 10 }]);
    let out = recourse_on(&db, &["routes"]);
    assert_eq!(
        stdout(&out),
        "no routes yet — start one with `recourse run --profile NAME --prompt TEXT`\n"
    );
    recourse_on(&db, &["run", "--profile", "Quick", "--prompt", "go"]);
    let out = recourse_on(&db, &["routes", "--json"]);
    let routes: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(routes[0]["state"], "succeeded");
    let out = recourse_on(&db, &["route", "1"]);
    let text = stdout(&out);
    assert!(text.contains("  attempt 1 Quick sim — succeeded"), "{text}");
    let out = recourse_on(&db, &["route", "1", "--json"]);
    let detail: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(detail["attempts"].as_array().map(Vec::len), Some(1));
}

#[test]
fn bad_input_is_reported_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("cli.db");
    profile(&db, "Quick", vec![SimStep::Succeed { after_ms: 10 }]);
    let out = recourse_on(&db, &["run", "--profile", "Nope", "--prompt", "go"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out),
        "error: profile \"Nope\" does not exist; the profiles are: \"Quick\"\n"
    );
    let out = recourse_on(&db, &["action", "1", "bogus", "--generation", "1"]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "clap refuses it as a usage error"
    );
    assert!(
        stderr(&out).starts_with(
            "error: <ACTION> \"bogus\": expected one of retry-now, skip-now, cancel-wait, stop, \
             resume, continue, handover\n"
        ),
        "{}",
        stderr(&out)
    );
    let out = recourse_on(&db, &["route", "9"]);
    assert_eq!(stderr(&out), "error: route 9 does not exist\n");
    let junk = dir.path().join("junk.db");
    std::fs::write(&junk, b"not a database at all, just some bytes".repeat(50)).unwrap();
    let out = recourse_on(&junk, &["routes"]);
    assert_eq!(
        stderr(&out),
        format!(
            "error: opening {0}: {0} is not a Recourse database (not an SQLite file); the file was left untouched\n",
            junk.display()
        )
    );
}

#[test]
fn action_that_dispatches_follows_the_route_to_its_end() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("cli.db");
    profile(
        &db,
        "Twice",
        vec![
            SimStep::ToolThenReset { after_ms: 20 },
            SimStep::Succeed { after_ms: 20 },
        ],
    );
    let out = recourse_on(&db, &["run", "--profile", "Twice", "--prompt", "go"]);
    assert_eq!(out.status.code(), Some(3));
    // A tool ran before the failure: without a terminal to ask on, a retry
    // is refused unless --yes says the person accepts it may repeat work.
    let out = recourse_on(&db, &["action", "1", "retry-now", "--generation", "2"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        "error: nothing sent: retry-now may repeat work an agent already did (see `recourse \
         route 1`), and standard input is not a terminal to ask on; add --yes to send it anyway\n"
    );
    let shown = stdout(&recourse_on(&db, &["route", "1"]));
    assert!(
        shown.contains(
            "  may repeat work: the safety gate refused automatic recovery — a tool call or tool \
             effect was seen before the failure\n"
        ),
        "{shown}"
    );
    let out = recourse_on(
        &db,
        &["action", "1", "retry-now", "--generation", "2", "--yes"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lines: Vec<String> = stdout(&out).lines().map(str::to_string).collect();
    assert_eq!(lines.len(), 2, "dispatch, then success: {lines:?}");
    assert!(lines[0].starts_with("route 1 running "));
    assert!(lines[1].starts_with("route 1 succeeded "));
    let shown = stdout(&recourse_on(&db, &["route", "1"]));
    let history: Vec<&str> = shown
        .lines()
        .filter(|l| l.starts_with("  attempt ") || l.starts_with("  you: "))
        .collect();
    assert_eq!(history.len(), 3, "{shown}");
    assert!(
        history[1].starts_with("  you: Retry now from the command line at ")
            && history[1].ends_with(
                ": started attempt 2 on Twice sim (candidate 1), after you confirmed it may repeat \
                 work (the safety gate refused automatic recovery — a tool call or tool effect \
                 was seen before the failure)"
            )
            && history[2].starts_with("  attempt 2 Twice sim"),
        "the action is in the history, before the attempt it started: {history:?}"
    );
}

#[test]
fn ctrl_c_stops_the_agent_and_leaves_the_route_for_a_person() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("cli.db");
    let pidfile = dir.path().join("agent.pid");
    seed_profile(&db, "Hang", &[hanging_agent(&pidfile)]);
    let child = spawn_run(&db, "Hang");
    let mut agent_pid = String::new();
    for _ in 0..500 {
        agent_pid = std::fs::read_to_string(&pidfile).unwrap_or_default();
        if !agent_pid.trim().is_empty() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert!(!agent_pid.trim().is_empty(), "the agent started");
    crate::common::send_signal(child.id() as i32, libc::SIGINT);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    assert_eq!(
        crate::common::said(&out.stderr),
        "interrupted: stopping route 1's agent\n"
    );
    let stat =
        std::fs::read_to_string(format!("/proc/{}/stat", agent_pid.trim())).unwrap_or_default();
    let state = stat
        .rsplit(')')
        .next()
        .and_then(|r| r.split_whitespace().next());
    assert!(
        stat.is_empty() || state == Some("Z"),
        "the agent was killed"
    );
    let row = Store::open(&db).unwrap().route(1).unwrap().unwrap();
    assert_eq!(row.state, recourse::route::RouteState::NeedsManual);
}

#[test]
fn route_after_a_skip_names_the_failed_candidate_apart_from_the_current_one() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("cli.db");
    let skip = || uniform_policy(None, Some((1, 1)), Exhausted::Skip);
    seed_profile(
        &db,
        "Two",
        &[
            CandidateInput::new(
                "first",
                AgentSpec::simulated(vec![SimStep::Overloaded { after_ms: 10 }]),
                skip(),
            ),
            CandidateInput::new(
                "second",
                AgentSpec::simulated(vec![SimStep::Succeed { after_ms: 10 }]),
                skip(),
            ),
        ],
    );
    let out = recourse_on(&db, &["run", "--profile", "Two", "--prompt", "go"]);
    assert_eq!(out.status.code(), Some(0));
    let shown = stdout(&recourse_on(&db, &["route", "1"]));
    let first = shown.lines().next().unwrap_or_default();
    assert!(
        first.contains(
            "candidate 2/2 second | after transient provider_overloaded on candidate 1 first"
        ),
        "the failure is not the running candidate's: {first}"
    );
    assert!(
        shown.contains(
            "  last failure: candidate 1 “first” — candidate 1 used up its transient retries and wait; skipping to candidate 2\n"
        ),
        "{shown}"
    );
    assert!(
        !shown.contains("retries:") && !shown.contains("when exhausted"),
        "no budget or outcome of the skipped candidate: {shown}"
    );
}

#[test]
fn routes_can_be_filtered_by_state_and_help_lists_the_choices() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("cli.db");
    profile(&db, "Quick", vec![SimStep::Succeed { after_ms: 10 }]);
    profile(&db, "Unsafe", vec![SimStep::ToolThenReset { after_ms: 10 }]);
    assert_eq!(
        recourse_on(&db, &["run", "--profile", "Quick", "--prompt", "a"])
            .status
            .code(),
        Some(0)
    );
    assert_eq!(
        recourse_on(&db, &["run", "--profile", "Unsafe", "--prompt", "b"])
            .status
            .code(),
        Some(3)
    );
    let out = recourse_on(&db, &["routes", "--state", "needs_manual"]);
    let listed = stdout(&out);
    assert_eq!(listed.lines().count(), 1, "{listed}");
    assert!(listed.starts_with("route 2 "), "{listed}");
    let out = recourse_on(&db, &["routes", "--state", "succeeded,needs_manual"]);
    assert_eq!(stdout(&out).lines().count(), 2);
    let out = recourse_on(&db, &["routes", "--state", "done"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).starts_with(
            "error: --state \"done\": expected one of running, waiting_reset, retry_scheduled, \
             queued, needs_manual, stopped, succeeded\n"
        ),
        "{}",
        stderr(&out)
    );
    let help = stdout(&recourse_on(&db, &["action", "--help"]));
    assert!(
        help.contains(
            "[possible values: retry-now, skip-now, cancel-wait, stop, resume, continue, handover]"
        ),
        "{help}"
    );
    assert!(
        help.contains(
            "  retry-now    Run the current candidate again now, as one more attempt in the \
             same cycle: the retries and reset wait it used are not renewed, so if it fails, what its \
             policy says to do when recovery is used up (skip or stop) applies."
        ) && help.contains(
            "  resume       Send the prompt to the current candidate again, in a fresh cycle"
        ),
        "the help says what each action does, and that a retry renews no budget: {help}"
    );
    let help = stdout(&recourse_on(&db, &["classify", "--help"]));
    assert!(
        help.contains("[possible values: anthropic-api, claude-code, codex, openai-api, gemini, opencode, generic, simulated]"),
        "{help}"
    );
}

#[test]
fn run_json_prints_one_result_document_with_the_answer() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("cli.db");
    profile(&db, "Quick", vec![SimStep::Succeed { after_ms: 10 }]);
    let out = recourse_on(
        &db,
        &["run", "--profile", "Quick", "--prompt", "go", "--json"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    assert_eq!(doc["route"], 1);
    assert_eq!(doc["state"], "succeeded");
    assert_eq!(doc["exit_code"], 0);
    assert_eq!(doc["answer"], "(simulated) The task is done.");
    assert!(doc["usage"].is_object() && doc.get("session_id").is_some());
}
