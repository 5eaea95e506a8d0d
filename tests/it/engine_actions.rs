//! Manual actions, stop and shutdown of real processes, policy edits versus
//! pending timers, the unclassified inbox, and two engines sharing one
//! database.

use std::path::Path;
use std::time::Duration;

use crate::common::{
    act_confirmed, act_on, hanging_agent, open_engine, uniform_policy, until_state,
};
use recourse::agent::{AgentSpec, SimStep};
use recourse::engine::{Engine, RouteSnapshot, StartRun, TimelineEntry};
use recourse::policy::Exhausted;
use recourse::profile::{CandidateInput, Profile};
use recourse::route::{Actor, AttemptOutcome, ManualAction, RouteState};

async fn open(db: &Path) -> Engine {
    open_engine(db, false).await
}

fn sim(name: &str, script: Vec<SimStep>, retry: Option<(u32, u32)>) -> CandidateInput {
    CandidateInput::new(
        name,
        AgentSpec::simulated(script),
        uniform_policy(Some(120), retry, Exhausted::Skip),
    )
}

/// "only": succeeds after 5 s of work, so the route stays running meanwhile.
fn long_success() -> CandidateInput {
    sim("only", vec![SimStep::Succeed { after_ms: 5000 }], None)
}

/// "flaky": `overloads` 529s 10 ms apart, then success.
fn flaky(overloads: usize, retry: (u32, u32)) -> CandidateInput {
    let mut script = vec![SimStep::Overloaded { after_ms: 10 }; overloads];
    script.push(SimStep::Succeed { after_ms: 10 });
    sim("flaky", script, Some(retry))
}

fn profile(engine: &Engine, candidates: Vec<CandidateInput>) -> Profile {
    let p = engine.create_profile("P").unwrap();
    engine
        .save_candidates(p.id, p.revision, candidates)
        .unwrap()
}

async fn start(engine: &Engine, p: &Profile, prompt: &str) -> RouteSnapshot {
    engine
        .start_run(StartRun {
            profile_id: p.id,
            prompt: prompt.into(),
            cwd: None,
        })
        .await
        .unwrap()
}

/// A fresh engine in its own directory, a profile of `candidates`, and a
/// route of it started on "work". Keep the directory alive for the test.
async fn started(
    candidates: Vec<CandidateInput>,
) -> (tempfile::TempDir, Engine, Profile, RouteSnapshot) {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(&dir.path().join("a.db")).await;
    let p = profile(&engine, candidates);
    let s = start(&engine, &p, "work").await;
    (dir, engine, p, s)
}

async fn act(engine: &Engine, s: &RouteSnapshot, action: ManualAction) -> RouteSnapshot {
    act_on(engine, s.id, action, s.generation).await.unwrap()
}

/// Starts the hanging agent; returns the route and the agent's pid.
async fn start_hanging(engine: &Engine, p: &Profile, pidfile: &Path) -> (RouteSnapshot, String) {
    let s = start(engine, p, "Reply with the single word done.").await;
    (s, wait_pid(pidfile).await)
}

#[tokio::test(start_paused = true)]
async fn actions_not_valid_now_are_conflicts_with_a_clear_message() {
    let (_dir, engine, _, s) = started(vec![long_success()]).await;
    assert_eq!(
        s.actions,
        vec![ManualAction::Stop],
        "only stop while running"
    );
    let err = act_on(&engine, s.id, ManualAction::RetryNow, s.generation)
        .await
        .unwrap_err();
    assert_eq!(err.code().as_str(), "conflict");
    assert_eq!(
        err.to_string(),
        "Retry now is not possible while the route is running",
        "a sentence of its own, the action and the state in the app's words"
    );
    let stopped = act(&engine, &s, ManualAction::Stop).await;
    let err = act_on(&engine, s.id, ManualAction::SkipNow, stopped.generation)
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "no candidate is left to skip to in this cycle"
    );
    let err = act_on(&engine, 42, ManualAction::Stop, 1)
        .await
        .unwrap_err();
    assert_eq!(err.code().as_str(), "not_found");
    engine.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn stale_error_message_names_the_current_generation() {
    let (_dir, engine, _, s) = started(vec![long_success()]).await;
    act(&engine, &s, ManualAction::Stop).await;
    let err = act_on(&engine, s.id, ManualAction::Resume, s.generation)
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "the route changed: it is stopped now, at generation 2; look again before acting",
        "the state in words, the generation for `recourse action --generation`"
    );
    engine.shutdown().await;
}

/// "stubborn": `overloads` 529s, then success; one retry, then stop.
fn stubborn(overloads: usize) -> CandidateInput {
    let mut script = vec![SimStep::Overloaded { after_ms: 10 }; overloads];
    script.push(SimStep::Succeed { after_ms: 10 });
    CandidateInput::new(
        "stubborn",
        AgentSpec::simulated(script),
        uniform_policy(None, Some((1, 10)), Exhausted::Stop),
    )
}

#[tokio::test(start_paused = true)]
async fn retry_now_after_a_policy_stop_is_one_attempt_and_resume_starts_a_fresh_cycle() {
    let (_dir, engine, _, s) = started(vec![stubborn(4)]).await;
    let stopped = until_state(&engine, s.id, RouteState::NeedsManual).await;
    assert_eq!(stopped.attempts, 2, "the first attempt and its one retry");
    act(&engine, &stopped, ManualAction::RetryNow).await;
    let again = until_state(&engine, s.id, RouteState::NeedsManual).await;
    assert_eq!(
        again.attempts, 3,
        "the manual attempt failed and the exhausted outcome (stop) applied at once: no new \
         round of automatic retries"
    );
    assert_eq!(again.retry.map(|r| (r.ordinal, r.max)), Some((1, 1)));
    let stopped = act(&engine, &again, ManualAction::Stop).await;
    act(&engine, &stopped, ManualAction::Resume).await;
    let waiting = until_state(&engine, s.id, RouteState::RetryScheduled).await;
    assert_eq!(
        (waiting.attempts, waiting.retry.map(|r| r.ordinal)),
        (4, Some(1)),
        "resume starts a fresh cycle: its failure is retried by policy again"
    );
    let done = until_state(&engine, s.id, RouteState::Succeeded).await;
    assert_eq!(done.attempts, 5);
    engine.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn retry_now_during_a_wait_only_brings_the_attempt_forward() {
    let (_dir, engine, _, s) = started(vec![stubborn(3)]).await;
    let waiting = until_state(&engine, s.id, RouteState::RetryScheduled).await;
    act(&engine, &waiting, ManualAction::RetryNow).await;
    let stopped = until_state(&engine, s.id, RouteState::NeedsManual).await;
    assert_eq!(
        stopped.attempts, 2,
        "the early attempt was the scheduled retry: the budget is spent, so policy stops"
    );
    engine.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn after_a_skip_the_snapshot_describes_the_new_candidate_and_keeps_the_failure_apart() {
    let (_dir, engine, _, s) = started(vec![
        sim("first", vec![SimStep::Overloaded { after_ms: 10 }], None),
        long_success(),
    ])
    .await;
    let moved = loop {
        let now = engine.route_detail(s.id).unwrap().snapshot;
        if now.candidate_index == 1 {
            break now;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    assert_eq!(moved.state, RouteState::Running);
    assert_eq!(
        (moved.retry, moved.pending_outcome),
        (None, None),
        "the skipped candidate's budget and exhausted outcome are not the running one's"
    );
    let failure = moved
        .last_failure
        .expect("the failure that caused the skip");
    assert_eq!(
        (failure.candidate_index, failure.candidate_name.as_str()),
        (0, "first")
    );
    assert_eq!(
        failure.classification.code,
        recourse::classification::SemanticCode::ProviderOverloaded
    );
    assert!(
        failure.decision.unwrap_or_default().contains(
            "candidate 1 used up its transient retries and wait; skipping to candidate 2"
        ),
        "what was decided about it"
    );
    engine.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn a_route_stopped_by_the_gate_reports_no_exhausted_outcome() {
    let (_dir, engine, _, s) = started(vec![sim(
        "tools",
        vec![SimStep::ToolThenReset { after_ms: 10 }],
        Some((3, 10)),
    )])
    .await;
    let stopped = until_state(&engine, s.id, RouteState::NeedsManual).await;
    assert_eq!(
        stopped.pending_outcome, None,
        "the gate stopped it: no skip or stop is pending"
    );
    assert_eq!(stopped.last_failure.map(|f| f.candidate_index), Some(0));
    assert_eq!(
        stopped.repeat_risk.as_deref(),
        Some(
            "the safety gate refused automatic recovery — a tool call or tool effect was seen \
             before the failure"
        ),
        "the gate's first refusal, so the UI can warn that a rerun may repeat that work"
    );
    engine.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn the_snapshot_names_where_a_skip_goes_and_nothing_on_the_last_candidate() {
    let (_dir, engine, _, s) = started(vec![
        sim("first", vec![SimStep::Overloaded { after_ms: 10 }], None),
        long_success(),
    ])
    .await;
    assert_eq!(s.skip_to.as_deref(), Some("only"));
    assert_eq!(s.repeat_risk, None, "nothing failed yet");
    let moved = loop {
        let now = engine.route_detail(s.id).unwrap().snapshot;
        if now.candidate_index == 1 {
            break now;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    assert_eq!(
        moved.skip_to, None,
        "the last candidate has nowhere to skip to: its skip outcome needs a person"
    );
    engine.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn skip_now_during_a_retry_wait_moves_to_the_next_candidate() {
    let (_dir, engine, _, s) = started(vec![
        sim(
            "flaky",
            vec![SimStep::Overloaded { after_ms: 100 }],
            Some((5, 60)),
        ),
        sim("steady", vec![SimStep::Succeed { after_ms: 100 }], None),
    ])
    .await;
    let waiting = until_state(&engine, s.id, RouteState::RetryScheduled).await;
    assert_eq!(
        waiting.actions,
        vec![
            ManualAction::RetryNow,
            ManualAction::SkipNow,
            ManualAction::CancelWait,
            ManualAction::Stop
        ]
    );
    let skipped = act(&engine, &waiting, ManualAction::SkipNow).await;
    assert_eq!(
        (skipped.state, skipped.candidate_index),
        (RouteState::Running, 1)
    );
    let done = until_state(&engine, s.id, RouteState::Succeeded).await;
    assert_eq!(done.attempts, 2, "the pending retry never ran");
    engine.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn policy_edit_applies_to_the_next_decision_not_the_pending_timer() {
    let (_dir, engine, p, s) = started(vec![flaky(2, (3, 10))]).await;
    let waiting = until_state(&engine, s.id, RouteState::RetryScheduled).await;
    let first_deadline = waiting.deadline.unwrap();
    let mut edited = sim("flaky", Vec::new(), Some((3, 100)));
    edited.id = Some(p.candidates[0].id);
    edited.agent = p.candidates[0].agent.clone();
    engine
        .save_candidates(p.id, p.revision, vec![edited])
        .unwrap();
    let after_edit = engine.route_detail(s.id).unwrap().snapshot;
    assert_eq!(
        after_edit.deadline,
        Some(first_deadline),
        "pending timer untouched"
    );
    let second = loop {
        let d = engine.route_detail(s.id).unwrap();
        if d.snapshot.state == RouteState::RetryScheduled && d.snapshot.attempts == 2 {
            break d;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    let failed_at = second.attempts[1].finished_at.unwrap();
    let delay = (second.snapshot.deadline.unwrap() - failed_at).num_seconds();
    assert_eq!(
        delay, 200,
        "second retry uses the edited 100 s initial interval (×2)"
    );
    assert_eq!(second.attempts[1].policy_revision, Some(2));
    engine.shutdown().await;
}

#[tokio::test]
async fn stop_kills_the_agent_process_and_records_it() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open(&dir.path().join("a.db")).await;
    let pidfile = dir.path().join("agent.pid");
    let p = profile(&engine, vec![hanging_agent(&pidfile)]);
    let (s, pid) = start_hanging(&engine, &p, &pidfile).await;
    let stopped = act(&engine, &s, ManualAction::Stop).await;
    assert_eq!(stopped.state, RouteState::Stopped);
    assert_eq!(
        stopped.actions,
        vec![ManualAction::Resume, ManualAction::Continue],
        "OpenCode can resume its session; with one candidate there is no one to hand over to"
    );
    wait_gone(&pid).await;
    let again = act(&engine, &s, ManualAction::Stop).await;
    assert_eq!(
        again.generation, stopped.generation,
        "stopping twice changes nothing"
    );
    let detail = engine.route_detail(s.id).unwrap();
    assert_eq!(detail.attempts[0].outcome, Some(AttemptOutcome::Killed));
    engine.shutdown().await;
}

#[tokio::test]
async fn shutdown_kills_agents_and_leaves_routes_for_a_person() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.db");
    let engine = open(&db).await;
    let pidfile = dir.path().join("agent.pid");
    let p = profile(&engine, vec![hanging_agent(&pidfile)]);
    let (s, pid) = start_hanging(&engine, &p, &pidfile).await;
    engine.shutdown().await;
    wait_gone(&pid).await;
    let engine = open(&db).await;
    let after = engine.route_detail(s.id).unwrap();
    assert_eq!(after.snapshot.state, RouteState::NeedsManual);
    assert!(after
        .snapshot
        .manual_reason
        .unwrap()
        .starts_with("attempt 1 was still running when Recourse was shut down"));
    assert_eq!(after.attempts[0].outcome, Some(AttemptOutcome::Interrupted));
    engine.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn unclassified_failures_land_in_the_inbox_and_need_a_person() {
    let message = "the flux capacitor is out of sync".to_string();
    let (_dir, engine, _, s) = started(vec![sim(
        "odd",
        vec![SimStep::Unrecognised {
            after_ms: 10,
            message: message.clone(),
        }],
        Some((3, 1)),
    )])
    .await;
    let manual = until_state(&engine, s.id, RouteState::NeedsManual).await;
    assert_eq!(
        manual.attempts, 1,
        "unclassified is never retried automatically"
    );
    let inbox = engine.unclassified_inbox().unwrap();
    assert_eq!(inbox.len(), 1);
    assert_eq!((inbox[0].route_id, inbox[0].attempt), (s.id, 1));
    assert_eq!(inbox[0].evidence.message, message);
    engine.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn resume_starts_a_fresh_cycle_on_the_current_candidate() {
    let (_dir, engine, _, s) = started(vec![flaky(1, (1, 30))]).await;
    let waiting = until_state(&engine, s.id, RouteState::RetryScheduled).await;
    let stopped = act(&engine, &waiting, ManualAction::Stop).await;
    tokio::time::sleep(Duration::from_secs(60)).await;
    assert_eq!(
        engine.route_detail(s.id).unwrap().snapshot.attempts,
        1,
        "a stopped route's timer never fires"
    );
    let resumed = act(&engine, &stopped, ManualAction::Resume).await;
    assert_eq!(resumed.state, RouteState::Running);
    until_state(&engine, s.id, RouteState::Succeeded).await;
    engine.shutdown().await;
}

#[tokio::test]
async fn a_second_engine_leaves_live_routes_to_their_owner() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("shared.db");
    let first = open(&db).await;
    let p = profile(
        &first,
        vec![sim(
            "slow",
            vec![SimStep::Overloaded { after_ms: 50 }],
            Some((1, 2)),
        )],
    );
    let s = start(&first, &p, "work").await;
    let waiting = until_state(&first, s.id, RouteState::RetryScheduled).await;
    let second = open(&db).await;
    let seen = second.route_detail(s.id).unwrap().snapshot;
    assert_eq!(seen.owner.as_deref(), Some(first.instance()), "owner kept");
    // The second engine cancels the wait; the owner notices and drops its timer.
    let cancelled = act(&second, &waiting, ManualAction::CancelWait).await;
    assert_eq!(cancelled.state, RouteState::NeedsManual);
    tokio::time::sleep(Duration::from_secs(3)).await;
    let later = first.route_detail(s.id).unwrap().snapshot;
    assert_eq!(
        (later.state, later.attempts),
        (RouteState::NeedsManual, 1),
        "the owner's timer dispatched nothing after another process cancelled the wait"
    );
    second.shutdown().await;
    first.shutdown().await;
}

async fn wait_pid(pidfile: &Path) -> String {
    for _ in 0..500 {
        if let Ok(s) = std::fs::read_to_string(pidfile) {
            if !s.trim().is_empty() {
                return s.trim().to_string();
            }
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the fake agent never started");
}

async fn wait_gone(pid: &str) {
    for _ in 0..200 {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let state = stat
            .rsplit(')')
            .next()
            .and_then(|r| r.split_whitespace().next());
        if stat.is_empty() || state == Some("Z") {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("agent process {pid} survived");
}

#[tokio::test(start_paused = true)]
async fn every_manual_action_is_in_the_history_with_who_when_and_what_it_led_to() {
    let (_dir, engine, _, s) = started(vec![flaky(1, (1, 30))]).await;
    let waiting = until_state(&engine, s.id, RouteState::RetryScheduled).await;
    let deadline = waiting.deadline.unwrap();
    let cancelled = act(&engine, &waiting, ManualAction::CancelWait).await;
    let retried = act(&engine, &cancelled, ManualAction::RetryNow).await;
    until_state(&engine, s.id, RouteState::Succeeded).await;
    let d = engine.route_detail(s.id).unwrap();
    let said: Vec<_> = d
        .manual_actions
        .iter()
        .map(|m| (m.action, m.by, m.generation, m.attempt, m.text.as_str()))
        .collect();
    let due = deadline.to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    assert_eq!(
        said,
        vec![
            (
                ManualAction::CancelWait,
                Actor::App,
                cancelled.generation,
                None,
                format!("cancelled the scheduled retry due {due}; the route waits for you")
                    .as_str()
            ),
            (
                ManualAction::RetryNow,
                Actor::App,
                retried.generation,
                Some(2),
                "started attempt 2 on flaky (candidate 1)"
            ),
        ]
    );
    let marks: Vec<String> = d
        .timeline
        .iter()
        .filter_map(|e| match e {
            TimelineEntry::Mark { label, .. } => Some(label.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
        marks,
        ["cancel wait from the app", "retry now from the app"],
        "the recorded actions are the timeline's marks, not marks guessed from the gaps"
    );
    engine.shutdown().await;
}

#[tokio::test]
async fn resume_after_a_stop_mid_run_asks_first_and_records_the_yes() {
    let (_dir, engine, _, s) = started(vec![long_success()]).await;
    let stopped = act(&engine, &s, ManualAction::Stop).await;
    assert_eq!(
        stopped.repeat_risk.as_deref(),
        Some(
            "attempt 1 was stopped while its agent ran, so it may already have run tools or \
             changed files"
        )
    );
    let err = act_on(&engine, s.id, ManualAction::Resume, stopped.generation)
        .await
        .unwrap_err();
    assert_eq!(err.code().as_str(), "conflict");
    assert_eq!(
        err.to_string(),
        "Resume sends the prompt to an agent again and may repeat work: attempt 1 was stopped \
         while its agent ran, so it may already have run tools or changed files; confirm that \
         you want it"
    );
    let resumed = act_confirmed(&engine, s.id, ManualAction::Resume, stopped.generation)
        .await
        .unwrap();
    assert_eq!(resumed.state, RouteState::Running);
    assert_eq!(resumed.repeat_risk, None, "the person's yes was the answer");
    let history = engine.route_detail(s.id).unwrap().manual_actions;
    assert_eq!(
        history.iter().map(|m| m.text.as_str()).collect::<Vec<_>>(),
        [
            "stopped the route and the agent of attempt 1",
            "started attempt 2 on only (candidate 1), after you confirmed it may repeat work \
             (attempt 1 was stopped while its agent ran, so it may already have run tools or \
             changed files)"
        ]
    );
    engine.shutdown().await;
}
