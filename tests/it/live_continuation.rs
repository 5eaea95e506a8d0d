//! Continue and Hand over against the pinned, unmodified agent CLIs, in
//! tests/live/sandbox.sh with the mock's `tool_then_error` scenario: the
//! model runs a harmless shell command, then the provider fails, so the
//! safety gate hands the route to a person. Then, through `recourse action`:
//! - continue: the same CLI resumes its own session; the mock sees the
//!   earlier conversation and the continuation message, never the prompt as
//!   a fresh start, and answers, so the route succeeds;
//! - handover: the next CLI starts a fresh session whose prompt carries the
//!   continuation package (its own run then meets the same failing provider).
//!
//! And with automatic continuation on (no action): the route continues the
//! session by itself when every tool call completed, and waits for a person
//! when the CLI refused the tool (`write_then_error`: Claude Code at
//! `read_only` refuses the model's file write, then the provider fails).
//!
//! Every CLI's continue runs by default except OpenCode's (it backs off for
//! about 80 s before it reports the failure); `RECOURSE_LIVE=all` runs it
//! too, `RECOURSE_LIVE=opencode/continue,claude/handover` a chosen few, and
//! `RECOURSE_LIVE=off` none.

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{kind_of, seed_profile, send_signal, uniform_policy};
use recourse::agent::{Access, AgentSpec, AttemptTimeouts};
use recourse::evaluator::{NotContinued, ToolCalls};
use recourse::policy::{AutoContinue, Exhausted};
use recourse::profile::CandidateInput;
use recourse::route::{AttemptInput, HoldReason, RouteState, DEFAULT_CONTINUE_MESSAGE};
use recourse::safety::UnsafeReason;
use recourse::store::Store;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const PROMPT: &str = "Print the marker, then finish.";

/// Whether `RECOURSE_LIVE` selects `cli`/`case`.
fn selected(cli: &str, case: &str, by_default: bool) -> bool {
    match std::env::var("RECOURSE_LIVE").unwrap_or_default().as_str() {
        "off" => false,
        "all" => true,
        "" => by_default,
        list => list.split(',').any(|c| c.trim() == format!("{cli}/{case}")),
    }
}

/// The pinned `cli` at access `edit`, whose failures all need a person.
fn candidate(cli: &str) -> CandidateInput {
    candidate_at(cli, Access::Edit)
}

/// The pinned `cli` at `access` whose transient failures continue the
/// session automatically where they may (the default budget), and otherwise
/// need a person.
fn continuing(cli: &str, access: Access) -> CandidateInput {
    let mut candidate = candidate_at(cli, access);
    candidate.policy.transient.auto_continue = AutoContinue::ON;
    candidate
}

fn candidate_at(cli: &str, access: Access) -> CandidateInput {
    let bin = Path::new(ROOT).join("agents/node_modules/.bin").join(cli);
    assert!(
        bin.exists(),
        "{} is missing: scripts/setup.sh installs the pinned CLIs",
        bin.display()
    );
    let mut agent = AgentSpec::default_for(kind_of(cli));
    agent.program = Some(bin.display().to_string());
    agent.access = Some(access);
    agent.timeouts = AttemptTimeouts {
        idle_s: 150,
        total_s: 300,
    };
    CandidateInput::new(cli, agent, uniform_policy(None, None, Exhausted::Stop))
}

struct Outcome {
    exit: Option<i32>,
    store: Store,
    /// Every request the mock saw, one JSON document each.
    requests: Vec<serde_json::Value>,
    /// What `recourse run` and `recourse action` printed.
    said: String,
}

/// `continue.sh` in the sandbox with the mock's `scenario` on a profile of
/// `candidates`, then `action` (`none`: the run alone).
fn run(scenario: &str, candidates: &[CandidateInput], action: &str) -> Outcome {
    let names: Vec<&str> = candidates.iter().map(|c| c.name.as_str()).collect();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("live.db");
    seed_profile(&db, "live", candidates);
    let work = dir.path().join("sandbox");
    let mut child = Command::new("bash")
        .arg(Path::new(ROOT).join("tests/live/sandbox.sh"))
        .arg(scenario)
        .arg(&work)
        .arg("--")
        .arg("bash")
        .arg(Path::new(ROOT).join("tests/live/continue.sh"))
        .arg(env!("CARGO_BIN_EXE_recourse"))
        .arg(&db)
        .arg("live")
        .arg(action)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .expect("the sandbox starts");
    let deadline = Instant::now() + Duration::from_secs(600);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            send_signal(-(child.id() as i32), libc::SIGKILL);
            let _ = child.wait();
            panic!("{names:?} {action}: not at rest within 600 s");
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    let said = ["run.out", "action.out"]
        .map(|f| std::fs::read_to_string(work.join("repo").join(f)).unwrap_or_default())
        .join("\n--- recourse action:\n");
    let requests = std::fs::read_to_string(work.join("mock.log"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    Outcome {
        exit: status.code(),
        store: Store::open(&db).unwrap(),
        requests,
        said,
    }
}

#[test]
fn continue_resumes_each_real_clis_own_session_and_the_route_succeeds() {
    for cli in ["claude", "codex", "gemini", "opencode"] {
        if !selected(cli, "continue", cli != "opencode") {
            eprintln!("{cli}/continue did not run (RECOURSE_LIVE)");
            continue;
        }
        let o = run("tool_then_error", &[candidate(cli)], "continue");
        let attempts = o.store.attempts(1).unwrap();
        let route = o.store.route(1).unwrap().unwrap();
        assert_eq!(
            (route.state, o.exit),
            (RouteState::Succeeded, Some(0)),
            "{cli}: the resumed session finished the task:\n{}",
            o.said
        );
        assert_eq!(attempts.len(), 2, "{cli}: one continuation:\n{}", o.said);
        let (session, _) = o.store.transcript(1, 1).unwrap().expect("a transcript");
        let AttemptInput::Continue {
            of_attempt,
            session_id,
            message,
            automatic,
        } = &attempts[1].attempt.input
        else {
            panic!("{cli}: {:?}", attempts[1].attempt.input);
        };
        assert_eq!(
            (*of_attempt, Some(session_id), message.as_str(), *automatic),
            (
                1,
                session.session_id.as_ref(),
                DEFAULT_CONTINUE_MESSAGE,
                false
            ),
            "{cli}: attempt 2 continues attempt 1's own session, by a person"
        );
        let continued: Vec<&serde_json::Value> = o
            .requests
            .iter()
            .filter(|r| r["note"] == "tool_then_error: continued")
            .collect();
        assert!(!continued.is_empty(), "{cli}: {:#?}", o.requests);
        for r in &continued {
            assert_eq!(
                r["earlier_turns"], true,
                "{cli}: the resumed request carries the earlier conversation: {r}"
            );
            // OpenCode sends a message quoted.
            let last = r["last_user"].as_str().unwrap().trim_matches('"');
            assert!(
                DEFAULT_CONTINUE_MESSAGE.starts_with(last) && last != PROMPT,
                "{cli}: the last thing said is the continuation message, not the prompt: {r}"
            );
        }
    }
}

#[test]
fn handover_starts_the_next_real_cli_with_the_prompt_and_the_package() {
    if !selected("claude", "handover", true) {
        eprintln!("claude/handover did not run (RECOURSE_LIVE)");
        return;
    }
    let o = run(
        "tool_then_error",
        &[candidate("claude"), candidate("codex")],
        "handover",
    );
    let attempts = o.store.attempts(1).unwrap();
    assert_eq!(attempts.len(), 2, "{}", o.said);
    let AttemptInput::Handover {
        from_attempt,
        package,
    } = &attempts[1].attempt.input
    else {
        panic!("{:?}", attempts[1].attempt.input);
    };
    assert_eq!(
        (*from_attempt, attempts[1].attempt.candidate_index),
        (1, 1),
        "Codex took over from attempt 1"
    );
    assert!(
        package.contains("recourse-tool-ran"),
        "the package says what Claude Code's tool printed: {package}"
    );
    let handed: Vec<&serde_json::Value> = o
        .requests
        .iter()
        .filter(|r| r["family"] == "openai")
        .filter(|r| {
            r["user_texts"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|t| t.as_str().unwrap_or_default().starts_with(PROMPT))
        })
        .collect();
    assert!(!handed.is_empty(), "Codex was started: {:#?}", o.requests);
    // The mock keeps 200 characters of each user text: the prompt, then the
    // package's head.
    let first = handed[0]["user_texts"].to_string();
    assert!(
        first.contains("BEGIN REFERENCE DATA FROM A PREVIOUS ATTEMPT"),
        "Codex's first request holds the prompt and the package: {first}"
    );
    assert_eq!(
        handed[0]["earlier_turns"], false,
        "a fresh session, not Claude Code's"
    );
}

#[test]
fn automatic_continuation_resumes_each_real_clis_session_after_its_tools_completed() {
    for cli in ["claude", "codex", "gemini", "opencode"] {
        if !selected(cli, "auto", cli != "opencode") {
            eprintln!("{cli}/auto did not run (RECOURSE_LIVE)");
            continue;
        }
        let o = run("tool_then_error", &[continuing(cli, Access::Edit)], "none");
        let attempts = o.store.attempts(1).unwrap();
        let route = o.store.route(1).unwrap().unwrap();
        assert_eq!(
            (route.state, o.exit),
            (RouteState::Succeeded, Some(0)),
            "{cli}: the route recovered by itself, with no person:\n{}",
            o.said
        );
        assert_eq!(attempts.len(), 2, "{cli}: one continuation:\n{}", o.said);
        let (session, _) = o.store.transcript(1, 1).unwrap().expect("a transcript");
        assert_eq!(
            attempts[1].attempt.input,
            AttemptInput::Continue {
                of_attempt: 1,
                session_id: session.session_id.clone().expect("a session id"),
                message: DEFAULT_CONTINUE_MESSAGE.to_string(),
                automatic: true,
            },
            "{cli}: attempt 2 continued attempt 1's own session automatically"
        );
        let continued: Vec<&serde_json::Value> = o
            .requests
            .iter()
            .filter(|r| r["note"] == "tool_then_error: continued")
            .collect();
        assert!(
            continued.iter().any(|r| r["earlier_turns"] == true),
            "{cli}: the resumed request carries the earlier conversation: {:#?}",
            o.requests
        );
    }
}

#[test]
fn automatic_continuation_leaves_a_refused_tool_call_to_a_person() {
    if !selected("claude", "auto-refused", true) {
        eprintln!("claude/auto-refused did not run (RECOURSE_LIVE)");
        return;
    }
    // At read_only Claude Code's plan mode refuses the file write the model
    // asks for (a harmless `echo` it would allow); the provider then fails.
    let o = run(
        "write_then_error",
        &[continuing("claude", Access::ReadOnly)],
        "none",
    );
    let attempts = o.store.attempts(1).unwrap();
    let route = o.store.route(1).unwrap().unwrap();
    assert_eq!(attempts.len(), 1, "no continuation was sent:\n{}", o.said);
    assert_eq!(
        (route.state, format!("{:?}", route.decision)),
        (
            RouteState::NeedsManual,
            "Some(Typed(Manual { reason: UnsafeEffect { reason: ToolActivitySeen } }))".into()
        ),
        "the gate's decision, as with the option off:\n{}",
        o.said
    );
    assert_eq!(
        route.manual_reason,
        Some(HoldReason::UnsafeEffect {
            reason: UnsafeReason::ToolActivitySeen,
            not_continued: Some(NotContinued::Tools {
                tools: ToolCalls::Refused
            }),
        }),
        "the person reads why the session was not continued"
    );
    assert!(
        o.said
            .contains("not continued automatically, as a tool call was refused"),
        "recourse run says so too:\n{}",
        o.said
    );
    assert!(
        !o.requests
            .iter()
            .any(|r| r["note"] == "write_then_error: continued"),
        "the mock saw no resumed session: {:#?}",
        o.requests
    );
    let (transcript, _) = o.store.transcript(1, 1).unwrap().expect("a transcript");
    assert!(
        format!("{:?}", transcript.entries).contains("Refused"),
        "the refused call is in the transcript: {:?}",
        transcript.entries
    );
}
