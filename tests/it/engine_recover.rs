//! Without the app, a route whose `recourse run` was killed (SIGKILL) or
//! interrupted (Ctrl-C) during a wait is orphaned: `recourse routes` says
//! so and who takes it over, `recourse run` and `recourse action` mention
//! it, and `recourse recover` adopts it — a wait is followed to its end at
//! its stored deadline, a route caught mid-dispatch goes to manual recovery
//! and is never replayed.

use crate::common::recourse_on;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::common::{
    seed_profile, sigkill, spawn_run, stored_route, uniform_policy, wait_for_route,
};
use recourse::agent::{AgentSpec, SimStep};
use recourse::policy::Exhausted;
use recourse::profile::CandidateInput;
use recourse::route::{AttemptOutcome, RouteState};
use recourse::store::Store;

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).to_string()
}

/// A usage limit that resets 3 s after the failure (a trusted reset wait),
/// then success.
fn waiting_profile(db: &Path) {
    let candidate = CandidateInput::new(
        "limited",
        AgentSpec::simulated(vec![
            SimStep::UsageLimit {
                after_ms: 50,
                resets_in_s: 3,
            },
            SimStep::Succeed { after_ms: 50 },
        ]),
        uniform_policy(Some(10), None, Exhausted::Stop),
    );
    seed_profile(db, "Waits", &[candidate]);
}

fn quick_profile(db: &Path) {
    let candidate = CandidateInput::new(
        "quick",
        AgentSpec::simulated(vec![SimStep::Succeed { after_ms: 10 }]),
        uniform_policy(None, None, Exhausted::Stop),
    );
    seed_profile(db, "Quick", &[candidate]);
}

const ORPHANED: &str =
    " | orphaned: the process that ran it is gone; `recourse recover` (or the app) takes it over";

#[test]
fn a_wait_killed_with_its_run_is_shown_orphaned_and_recover_follows_it_to_the_end() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("recover.db");
    waiting_profile(&db);
    quick_profile(&db);
    let mut child = spawn_run(&db, "Waits");
    let waiting = wait_for_route(&db, &mut child, |r| r.state == RouteState::WaitingReset);
    sigkill(&mut child);
    let deadline = waiting.deadline.unwrap();

    let out = recourse_on(&db, &["routes"]);
    let listed = text(&out.stdout);
    assert!(
        listed.starts_with("route 1 waiting for provider reset ")
            && listed.trim_end().ends_with(ORPHANED),
        "{listed}"
    );
    let out = recourse_on(&db, &["route", "1"]);
    let first = text(&out.stdout)
        .lines()
        .next()
        .unwrap_or_default()
        .to_string();
    assert!(first.ends_with(ORPHANED), "{first}");
    let out = recourse_on(&db, &["routes", "--json"]);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json[0]["orphaned"], true);

    // Another run says the orphan is there and how to take it over.
    let out = recourse_on(&db, &["run", "--profile", "Quick", "--prompt", "go"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        crate::common::said(&out.stderr),
        "note: route 1 (waiting for provider reset) was left by a process that is gone; \
         `recourse recover` takes it over\n"
    );

    // So does an action on another route.
    let out = recourse_on(&db, &["action", "2", "stop", "--generation", "2"]);
    assert_eq!(
        text(&out.stderr),
        "note: route 1 (waiting for provider reset) was left by a process that is gone; \
         `recourse recover` takes it over\n\
         error: Stop is not possible while the route has succeeded\n"
    );

    let out = recourse_on(&db, &["recover"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let lines: Vec<String> = text(&out.stdout).lines().map(str::to_string).collect();
    assert_eq!(lines.len(), 4, "{lines:?}");
    assert_eq!(lines[0], "recovering 1 orphaned route");
    assert!(
        lines[1].starts_with("route 1 waiting for provider reset "),
        "{lines:?}"
    );
    assert!(lines[2].starts_with("route 1 running "), "{lines:?}");
    assert!(lines[3].starts_with("route 1 succeeded "), "{lines:?}");

    let store = Store::open_read_only(&db).unwrap();
    let attempts = store.attempts(1).unwrap();
    assert_eq!(attempts.len(), 2, "the wait's attempt ran once");
    assert!(
        attempts[1].attempt.started_at >= deadline - chrono::Duration::milliseconds(5),
        "not before the stored deadline"
    );
    let out = recourse_on(&db, &["routes"]);
    assert!(
        !text(&out.stdout).contains("orphaned"),
        "{}",
        text(&out.stdout)
    );
    let out = recourse_on(&db, &["recover"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(text(&out.stdout), "no orphaned routes\n");
}

#[test]
fn a_route_killed_mid_dispatch_is_recovered_to_manual_and_not_replayed() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("recover.db");
    let candidate = CandidateInput::new(
        "slow",
        AgentSpec::simulated(vec![SimStep::Succeed { after_ms: 60_000 }]),
        uniform_policy(None, None, Exhausted::Stop),
    );
    seed_profile(&db, "Slow", &[candidate]);
    let mut child = spawn_run(&db, "Slow");
    wait_for_route(&db, &mut child, |r| r.state == RouteState::Running);
    sigkill(&mut child);

    let out = recourse_on(&db, &["routes"]);
    let listed = text(&out.stdout);
    assert!(
        listed.starts_with("route 1 running ") && listed.trim_end().ends_with(ORPHANED),
        "{listed}"
    );
    let out = recourse_on(&db, &["recover"]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    let printed = text(&out.stdout);
    assert!(
        printed.contains("route 1 needs manual recovery "),
        "{printed}"
    );
    assert!(
        printed.contains(
            "route 1 needs you: attempt 1 was still running when its engine stopped; \
             it may have done work, so it is not replayed automatically"
        ),
        "{printed}"
    );
    let store = Store::open_read_only(&db).unwrap();
    let attempts = store.attempts(1).unwrap();
    assert_eq!(attempts.len(), 1, "never replayed");
    assert_eq!(
        attempts[0].result.as_ref().map(|r| r.outcome),
        Some(AttemptOutcome::Interrupted)
    );
}

#[test]
fn ctrl_c_during_a_wait_says_the_wait_continues_and_recover_takes_it_over() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("recover.db");
    let candidate = CandidateInput::new(
        "flaky",
        AgentSpec::simulated(vec![
            SimStep::Overloaded { after_ms: 10 },
            SimStep::Succeed { after_ms: 10 },
        ]),
        uniform_policy(None, Some((1, 3)), Exhausted::Stop),
    );
    seed_profile(&db, "Flaky", &[candidate]);
    let mut child = spawn_run(&db, "Flaky");
    let waiting = wait_for_route(&db, &mut child, |r| r.state == RouteState::RetryScheduled);
    crate::common::send_signal(child.id() as i32, libc::SIGINT);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    let deadline = waiting.deadline.unwrap();
    assert_eq!(
        crate::common::said(&out.stderr),
        format!(
            "interrupted: route 1 stays waiting until {}; \
             `recourse recover` or the app will take it over\n",
            crate::common::local_time(deadline)
        )
    );
    let row = stored_route(&db, 1).unwrap();
    assert_eq!(row.state, RouteState::RetryScheduled, "the wait continues");
    assert_eq!(row.deadline, Some(deadline), "at its deadline");
    assert_eq!(row.generation, waiting.generation);
    assert_eq!(row.owner, None, "handed over");
    let out = recourse_on(&db, &["routes"]);
    assert!(
        text(&out.stdout).trim_end().ends_with(ORPHANED),
        "{}",
        text(&out.stdout)
    );

    let out = recourse_on(&db, &["recover"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let lines: Vec<String> = text(&out.stdout).lines().map(str::to_string).collect();
    assert_eq!(lines.len(), 4, "{lines:?}");
    assert!(
        lines[1].starts_with("route 1 retry scheduled "),
        "{lines:?}"
    );
    assert!(lines[3].starts_with("route 1 succeeded "), "{lines:?}");
    let attempts = Store::open_read_only(&db).unwrap().attempts(1).unwrap();
    assert!(
        attempts[1].attempt.started_at >= deadline - chrono::Duration::milliseconds(5),
        "the retry ran at its deadline, not before"
    );
}

/// A Codex-kind agent that prints the recorded 503 and exits, while a
/// child it left keeps the output pipes open for 3 s: the runner has seen
/// the exit and is reading the last output when the Ctrl-C comes.
fn failing_as_stopped(dir: &Path) -> CandidateInput {
    use std::os::unix::fs::PermissionsExt;
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let versions: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("agents/package.json")).unwrap())
            .unwrap();
    let version = versions["dependencies"]["@openai/codex"].as_str().unwrap();
    let recorded = root.join(format!(
        "fixtures/agents/recorded/codex-{version}/unavailable/stdout"
    ));
    let marker = dir.join("exited");
    let script = dir.join("codex.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\ncat '{}'\nsleep 3 &\ntouch '{}'\nexit 1\n",
            recorded.display(),
            marker.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut agent = AgentSpec::simulated(Vec::new());
    agent.kind = recourse::agent::AgentKind::Codex;
    agent.program = Some(script.display().to_string());
    CandidateInput::new(
        "codex",
        agent,
        uniform_policy(None, Some((1, 600)), Exhausted::Stop),
    )
}

#[test]
fn ctrl_c_as_the_agent_fails_on_its_own_says_the_route_stays_waiting() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("race.db");
    seed_profile(&db, "Racing", &[failing_as_stopped(dir.path())]);
    let mut child = spawn_run(&db, "Racing");
    let marker = dir.path().join("exited");
    let started = Instant::now();
    while !marker.exists() {
        assert!(started.elapsed() < Duration::from_secs(20), "the agent ran");
        assert!(
            child.try_wait().unwrap().is_none(),
            "run is still following"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(Duration::from_millis(200));
    crate::common::send_signal(child.id() as i32, libc::SIGINT);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    let row = stored_route(&db, 1).unwrap();
    assert_eq!(
        row.state,
        RouteState::RetryScheduled,
        "the agent's own 503 was decided, not discarded as killed"
    );
    assert_eq!(row.owner, None, "handed over");
    assert_eq!(
        crate::common::said(&out.stderr),
        format!(
            "interrupted: stopping route 1's agent\n\
             interrupted: route 1's agent failed before it could be stopped; \
             route 1 stays waiting until {}; `recourse recover` or the app will take it over\n",
            crate::common::local_time(row.deadline.unwrap())
        ),
        "the words match the stored state, not what was intended"
    );
}

/// The second attack: `recourse run` stopped with Ctrl-Z (SIGTSTP: the run
/// stops, its agent, in its own process group, works on) outlived its
/// 15 s lease, and `recover` killed the live agent and called the attempt
/// interrupted. A lapsed lease is not proof of death: the owner's process
/// (pid and start time, this machine) is looked at first.
#[test]
fn a_run_stopped_past_its_lease_keeps_its_route_and_its_agent() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let pidfile = dir.path().join("agent.pid");
    seed_profile(&db, "Hangs", &[crate::common::hanging_agent(&pidfile)]);
    let mut run = spawn_run(&db, "Hangs");
    wait_for_route(&db, &mut run, |r| r.state == RouteState::Running);
    let agent = (0..500)
        .find_map(|_| {
            std::thread::sleep(Duration::from_millis(10));
            std::fs::read_to_string(&pidfile)
                .ok()
                .filter(|p| !p.trim().is_empty())
        })
        .expect("the agent wrote its pid");
    let run_pid = i32::try_from(run.id()).unwrap();
    crate::common::send_signal(run_pid, libc::SIGSTOP);
    // Past the 15 s lease, with no renewal: the run is stopped.
    std::thread::sleep(Duration::from_secs(17));
    let routes = recourse_on(&db, &["routes"]);
    assert!(
        !text(&routes.stdout).contains("orphaned"),
        "a stopped run is not gone: {}",
        text(&routes.stdout)
    );
    let out = recourse_on(&db, &["recover"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let row = stored_route(&db, 1).unwrap();
    assert_eq!(row.state, RouteState::Running, "not taken over");
    assert!(crate::common::alive(&agent), "the agent was not killed");
    // Cleanup: the run continues and is stopped like Ctrl-C.
    crate::common::send_signal(run_pid, libc::SIGCONT);
    crate::common::send_signal(run_pid, libc::SIGINT);
    let status = run.wait().unwrap();
    assert!(!status.success(), "interrupted");
    assert!(
        !crate::common::alive(&agent),
        "the run took its agent with it"
    );
}
