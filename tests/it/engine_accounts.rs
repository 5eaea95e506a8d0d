//! Accounts in one engine: a limit hit by one route holds every other route
//! on the account until one probe at the reset answers; the history says
//! why nothing was dispatched; `max_concurrent` queues routes first in,
//! first out; a person's clear lets routes through; restart keeps the
//! marks and the queue. (Several processes: `accounts_processes.rs`.)

use std::time::{Duration, Instant};

use recourse::agent::{AgentSpec, SimStep};
use recourse::engine::{AccountStatus, Engine, GapReason, RouteDetail, TimelineEntry};
use recourse::policy::Exhausted;
use recourse::profile::CandidateInput;
use recourse::route::{ManualAction, RouteState};

use crate::common::{act_on, engine_profile, open_engine, start_route, uniform_policy};

/// A candidate of account `label` playing `script`, waiting up to an hour
/// for a reset and stopping after that.
pub fn on_account(name: &str, label: &str, script: Vec<SimStep>) -> CandidateInput {
    let mut agent = AgentSpec::simulated(script);
    agent.account = Some(label.into());
    CandidateInput::new(
        name,
        agent,
        uniform_policy(Some(3600), None, Exhausted::Stop),
    )
}

async fn profile(engine: &Engine, name: &str, candidates: Vec<CandidateInput>) -> u32 {
    engine_profile(engine, name, candidates)
}

async fn start(engine: &Engine, profile_id: u32) -> u32 {
    start_route(engine, profile_id).await.unwrap().id
}

/// A usage window on `label` resetting in `resets_in_s`, then success.
fn limited_then_ok(name: &str, label: &str, resets_in_s: u32) -> CandidateInput {
    let limit = SimStep::UsageLimit {
        after_ms: 10,
        resets_in_s,
    };
    on_account(name, label, vec![limit, SimStep::Succeed { after_ms: 600 }])
}

/// Waits until route `id` is in a state `done` accepts.
pub async fn until(
    engine: &Engine,
    id: u32,
    within: Duration,
    done: impl Fn(RouteState) -> bool,
) -> RouteDetail {
    let start = Instant::now();
    loop {
        let d = engine.route_detail(id).unwrap();
        if done(d.snapshot.state) {
            return d;
        }
        assert!(
            start.elapsed() < within,
            "route {id} still {:?} after {within:?}",
            d.snapshot.state
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn is(state: RouteState) -> impl Fn(RouteState) -> bool {
    move |s| s == state
}

#[tokio::test(flavor = "multi_thread")]
async fn a_limit_one_route_hit_holds_the_others_on_its_account_until_one_probe_answers() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open_engine(&dir.path().join("r.db"), false).await;
    let hits = profile(&engine, "Hits", vec![limited_then_ok("claude", "work", 3)]).await;
    let later = profile(
        &engine,
        "Later",
        vec![on_account(
            "claude too",
            "work",
            vec![SimStep::Succeed { after_ms: 10 }],
        )],
    )
    .await;
    let first = start(&engine, hits).await;
    let waiting = until(
        &engine,
        first,
        Duration::from_secs(5),
        is(RouteState::WaitingReset),
    )
    .await;
    let reset = waiting.snapshot.deadline.unwrap();

    let second = start(&engine, later).await;
    let held = engine.route_detail(second).unwrap();
    assert_eq!(held.snapshot.state, RouteState::WaitingReset);
    assert_eq!(
        held.snapshot.deadline,
        Some(reset),
        "its policy waits for the same reset, as if it had hit the limit itself"
    );
    assert!(held.attempts.is_empty(), "nothing was dispatched");
    assert_eq!(held.holds.len(), 1);
    let text = &held.holds[0].text;
    assert!(
        text.starts_with("not dispatched: work limited until ")
            && text.contains("; wait for the hard reset until "),
        "{text}"
    );
    let all = engine.accounts().unwrap();
    let work = all.accounts.iter().find(|a| a.id == "work").unwrap();
    assert_eq!(work.status, AccountStatus::Limited { until: reset });
    assert_eq!(work.waiting, vec![first, second], "both routes wait on it");

    // At the reset the oldest route probes; the other waits for its answer.
    let probing = until(&engine, second, Duration::from_secs(6), |s| {
        s != RouteState::WaitingReset
    })
    .await;
    assert_eq!(
        probing.snapshot.state,
        RouteState::Queued,
        "route {first} (the oldest) probes; this one queues behind it"
    );
    assert!(
        probing.snapshot.queued.unwrap().contains("is trying it"),
        "the queue says why"
    );
    let done_first = until(
        &engine,
        first,
        Duration::from_secs(5),
        is(RouteState::Succeeded),
    )
    .await;
    let done_second = until(
        &engine,
        second,
        Duration::from_secs(5),
        is(RouteState::Succeeded),
    )
    .await;
    let probe_answered = done_first.attempts[1].finished_at.unwrap();
    let next = done_second.attempts[0].started_at;
    assert!(
        next >= probe_answered,
        "the second route reached the provider only after the probe answered \
         ({next} < {probe_answered})"
    );
    assert_eq!(
        engine.accounts().unwrap().accounts[0].status,
        AccountStatus::Ready,
        "the probe's success cleared the mark"
    );
    engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_held_route_draws_its_wait_for_the_limit_and_the_person_s_turn_after_it_was_cancelled() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open_engine(&dir.path().join("r.db"), false).await;
    let hits = profile(
        &engine,
        "Hits",
        vec![limited_then_ok("claude", "work", 3000)],
    )
    .await;
    let later = profile(
        &engine,
        "Later",
        vec![
            on_account(
                "claude too",
                "work",
                vec![SimStep::Succeed { after_ms: 10 }],
            ),
            on_account("other", "home", vec![SimStep::Succeed { after_ms: 10 }]),
        ],
    )
    .await;
    let first = start(&engine, hits).await;
    until(
        &engine,
        first,
        Duration::from_secs(5),
        is(RouteState::WaitingReset),
    )
    .await;
    let second = start(&engine, later).await;
    let held = engine.route_detail(second).unwrap();
    assert_eq!(
        held.holds[0].from_route, first,
        "the hold names the route the limit was learned from"
    );
    let cancelled = act_on(
        &engine,
        second,
        ManualAction::CancelWait,
        held.snapshot.generation,
    )
    .await
    .unwrap();
    tokio::time::sleep(Duration::from_millis(50)).await;
    act_on(&engine, second, ManualAction::SkipNow, cancelled.generation)
        .await
        .unwrap();
    let done = until(
        &engine,
        second,
        Duration::from_secs(5),
        is(RouteState::Succeeded),
    )
    .await;
    let shape: Vec<String> = done
        .timeline
        .iter()
        .map(|e| match e {
            TimelineEntry::Attempt { number, .. } => format!("attempt {number}"),
            TimelineEntry::Gap { why, label, .. } => format!("{why:?}: {label}"),
            TimelineEntry::Mark { label, .. } => format!("mark: {label}"),
        })
        .collect();
    assert_eq!(
        shape,
        [
            format!("mark: not dispatched to claude too: work limited, learned from route {first}"),
            "ResetWait: waiting for the provider's reset".into(),
            "mark: cancel wait from the app".into(),
            "Person: waited for you".into(),
            "mark: skip now from the app".into(),
            "attempt 1".into(),
        ],
        "the wait before any attempt and the person's turn after it are drawn, each with its reason"
    );
    let gaps: Vec<_> = done
        .timeline
        .iter()
        .filter_map(|e| match e {
            TimelineEntry::Gap {
                start, end, why, ..
            } => Some((*start, *end, *why)),
            _ => None,
        })
        .collect();
    assert_eq!(
        gaps[0].1,
        Some(gaps[1].0),
        "the wait ends where the person's turn starts: at the cancel, not at the skip"
    );
    assert_eq!(gaps[1].2, GapReason::Person);
    engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn max_concurrent_queues_routes_first_in_first_out() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open_engine(&dir.path().join("r.db"), false).await;
    let mut one = on_account("slow", "work", vec![SimStep::Succeed { after_ms: 400 }]);
    one.agent.max_concurrent = Some(1);
    let p = profile(&engine, "One at a time", vec![one]).await;
    let mut ids = Vec::new();
    for _ in 0..3 {
        ids.push(start(&engine, p).await);
    }
    let states: Vec<RouteState> = ids
        .iter()
        .map(|id| engine.route_detail(*id).unwrap().snapshot.state)
        .collect();
    assert_eq!(
        states,
        [RouteState::Running, RouteState::Queued, RouteState::Queued]
    );
    let queued = engine
        .route_detail(ids[1])
        .unwrap()
        .snapshot
        .queued
        .unwrap();
    assert_eq!(
        queued,
        "queued: work runs as many agents as its limit allows; it starts when one ends"
    );
    let mut starts = Vec::new();
    for id in &ids {
        let d = until(
            &engine,
            *id,
            Duration::from_secs(10),
            is(RouteState::Succeeded),
        )
        .await;
        starts.push((d.attempts[0].started_at, d.attempts[0].finished_at.unwrap()));
    }
    for pair in starts.windows(2) {
        assert!(
            pair[1].0 >= pair[0].1,
            "one at a time, in the order they queued: {starts:?}"
        );
    }
    engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cleared_account_lets_new_routes_through_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open_engine(&dir.path().join("r.db"), false).await;
    let p = profile(&engine, "P", vec![limited_then_ok("claude", "work", 3000)]).await;
    let first = start(&engine, p).await;
    until(
        &engine,
        first,
        Duration::from_secs(5),
        is(RouteState::WaitingReset),
    )
    .await;
    assert_eq!(
        engine.clear_account("nobody").unwrap_err().to_string(),
        "account \"nobody\" does not exist"
    );
    assert_eq!(engine.clear_account("work").unwrap(), 1, "one mark cleared");
    let second = start(&engine, p).await;
    let d = engine.route_detail(second).unwrap();
    assert_eq!(
        d.snapshot.state,
        RouteState::Running,
        "nothing holds it now"
    );
    assert_eq!(
        engine.route_detail(first).unwrap().snapshot.state,
        RouteState::WaitingReset,
        "a wait already decided keeps its deadline (retry-now brings it forward)"
    );
    engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn restart_keeps_the_marks_and_the_queue() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let engine = open_engine(&db, false).await;
    let mut slow = on_account("slow", "busy", vec![SimStep::Succeed { after_ms: 300 }]);
    slow.agent.max_concurrent = Some(1);
    let busy = profile(&engine, "Busy", vec![slow]).await;
    let limited = profile(
        &engine,
        "Limited",
        vec![limited_then_ok("claude", "limited", 3000)],
    )
    .await;
    let marked = start(&engine, limited).await;
    until(
        &engine,
        marked,
        Duration::from_secs(5),
        is(RouteState::WaitingReset),
    )
    .await;
    let running = start(&engine, busy).await;
    let queued = [start(&engine, busy).await, start(&engine, busy).await];
    engine.shutdown().await;

    let engine = open_engine(&db, false).await;
    let all = engine.accounts().unwrap();
    let limited_account = all.accounts.iter().find(|a| a.id == "limited").unwrap();
    assert!(
        matches!(limited_account.status, AccountStatus::Limited { .. }),
        "the mark outlived the engine"
    );
    let held = start(&engine, limited).await;
    assert!(
        engine.route_detail(held).unwrap().attempts.is_empty(),
        "a new route is held by it"
    );
    assert_eq!(
        engine.route_detail(running).unwrap().snapshot.state,
        RouteState::NeedsManual,
        "the agent running at shutdown was stopped"
    );
    let mut finished = Vec::new();
    for id in queued {
        let d = until(
            &engine,
            id,
            Duration::from_secs(10),
            is(RouteState::Succeeded),
        )
        .await;
        finished.push(d.attempts[0].started_at);
    }
    assert!(
        finished[0] < finished[1],
        "the queue kept its order across the restart"
    );
    engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_exported_profile_carries_an_account_label_and_never_a_derived_account() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open_engine(&dir.path().join("r.db"), false).await;
    let mut derived = AgentSpec::simulated(vec![SimStep::Succeed { after_ms: 10 }]);
    derived
        .env
        .insert("ANTHROPIC_BASE_URL".into(), "http://127.0.0.1:9".into());
    let plain = CandidateInput::new(
        "derived",
        derived,
        uniform_policy(None, None, Exhausted::Stop),
    );
    let id = profile(
        &engine,
        "p",
        vec![
            on_account("labelled", "work", vec![SimStep::Succeed { after_ms: 10 }]),
            plain,
        ],
    )
    .await;
    let accounts = engine.accounts().unwrap().accounts;
    let hashed: Vec<&str> = accounts
        .iter()
        .filter(|a| !a.labelled)
        .map(|a| a.id.as_str())
        .collect();
    assert_eq!(
        hashed.len(),
        1,
        "the unlabelled candidate has a derived account: {accounts:?}"
    );
    let text = engine.export_profile(id).unwrap().to_json_pretty();
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(doc["candidates"][0]["agent"]["account"], "work", "{text}");
    assert!(
        doc["candidates"][1]["agent"].get("account").is_none(),
        "no label, no account field: {text}"
    );
    assert!(
        !text.contains(hashed[0]),
        "the derived id ({}) stays in the database: {text}",
        hashed[0]
    );
    engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_limit_is_noticed_once_however_many_routes_it_holds_back() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open_engine(&dir.path().join("r.db"), false).await;
    let mut notices = engine.subscribe_accounts();
    let hits = profile(
        &engine,
        "Hits",
        vec![limited_then_ok("claude", "work", 3600)],
    )
    .await;
    let first = start(&engine, hits).await;
    until(
        &engine,
        first,
        Duration::from_secs(5),
        is(RouteState::WaitingReset),
    )
    .await;
    let later = profile(
        &engine,
        "Later",
        vec![on_account(
            "too",
            "work",
            vec![SimStep::Succeed { after_ms: 10 }],
        )],
    )
    .await;
    for _ in 0..3 {
        let held = start(&engine, later).await;
        let d = engine.route_detail(held).unwrap();
        assert_eq!(d.holds.len(), 1, "held back by the mark: {d:?}");
    }
    let notice = notices.try_recv().expect("the limit was noticed");
    assert_eq!(
        (notice.account.as_str(), notice.until.is_some()),
        ("work", true),
        "{notice:?}"
    );
    assert!(
        notices.try_recv().is_err(),
        "one notice for the mark, none for the three routes it held back"
    );
    engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn retry_now_while_the_accounts_limit_is_in_force_is_refused_with_why() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open_engine(&dir.path().join("r.db"), false).await;
    let hits = profile(
        &engine,
        "Hits",
        vec![
            limited_then_ok("claude", "work", 600),
            on_account("codex", "other", vec![SimStep::Succeed { after_ms: 10 }]),
        ],
    )
    .await;
    let id = start(&engine, hits).await;
    let waiting = until(
        &engine,
        id,
        Duration::from_secs(5),
        is(RouteState::WaitingReset),
    )
    .await;
    let cancelled = crate::common::act_on(
        &engine,
        id,
        recourse::route::ManualAction::CancelWait,
        waiting.snapshot.generation,
    )
    .await
    .unwrap();
    let err = crate::common::act_on(
        &engine,
        id,
        recourse::route::ManualAction::RetryNow,
        cancelled.generation,
    )
    .await
    .unwrap_err();
    let said = err.to_string();
    assert!(
        said.starts_with("claude would not start now: work limited until ")
            && said.ends_with(
                "; skip now, wait for it, or clear the limit in Accounts if it has lifted"
            ),
        "the refusal says why, not that the request was stale: {said}"
    );
    let d = engine.route_detail(id).unwrap();
    assert_eq!(
        (
            d.snapshot.state,
            d.snapshot.candidate_index,
            d.attempts.len()
        ),
        (RouteState::NeedsManual, 0, 1),
        "nothing was dispatched and the route did not move to codex"
    );
}

/// A candidate of the account its spec derives (no label), playing `script`.
fn on_derived(name: &str, script: Vec<SimStep>) -> CandidateInput {
    CandidateInput::new(
        name,
        AgentSpec::simulated(script),
        uniform_policy(Some(3600), None, Exhausted::Stop),
    )
}

/// The derived account's id and the name the Accounts tab gives it.
fn derived_account(engine: &Engine) -> (String, String) {
    let all = engine.accounts().unwrap().accounts;
    let a = all.iter().find(|a| !a.labelled).expect("a derived account");
    assert_ne!(a.name, a.id, "a derived account is named in words");
    (a.id.clone(), a.name.clone())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hold_names_a_derived_account_as_the_accounts_tab_does_never_by_its_id() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open_engine(&dir.path().join("r.db"), false).await;
    // A simulated account is derived from its script: the same one shares it.
    let script = vec![
        SimStep::UsageLimit {
            after_ms: 10,
            resets_in_s: 600,
        },
        SimStep::Succeed { after_ms: 10 },
    ];
    let hits = profile(&engine, "Hits", vec![on_derived("claude", script.clone())]).await;
    let later = profile(&engine, "Later", vec![on_derived("claude too", script)]).await;
    let (id, name) = derived_account(&engine);
    let first = start(&engine, hits).await;
    let waiting = until(
        &engine,
        first,
        Duration::from_secs(5),
        is(RouteState::WaitingReset),
    )
    .await;
    let second = start(&engine, later).await;
    let held = engine.route_detail(second).unwrap();
    assert_eq!(held.holds.len(), 1, "{:?}", held.snapshot);
    let hold = &held.holds[0];
    assert_eq!(
        hold.account, id,
        "the id stays for `recourse accounts clear`"
    );
    assert_eq!(hold.account_name, name, "what the hold history shows");
    let limited = format!("not dispatched: {name} limited until ");
    assert!(hold.text.starts_with(&limited), "{}", hold.text);
    let decision = held
        .snapshot
        .last_failure
        .as_ref()
        .unwrap()
        .decision
        .clone();
    assert!(
        decision.as_deref().is_some_and(|d| d.starts_with(&limited)),
        "the route list row's words: {decision:?}"
    );
    let marks: Vec<&str> = held
        .timeline
        .iter()
        .filter_map(|e| match e {
            TimelineEntry::Mark { label, .. } => Some(label.as_str()),
            _ => None,
        })
        .collect();
    let mark = format!("not dispatched to claude too: {name} limited, learned from route {first}");
    assert!(marks.contains(&mark.as_str()), "{marks:?}");
    for text in marks.iter().copied().chain([hold.text.as_str()]) {
        assert!(!text.contains(&id), "no id where a person reads: {text}");
    }

    // A person's retry now on the limited account says why, by its name.
    let cancelled = act_on(
        &engine,
        first,
        ManualAction::CancelWait,
        waiting.snapshot.generation,
    )
    .await
    .unwrap();
    let said = act_on(&engine, first, ManualAction::RetryNow, cancelled.generation)
        .await
        .unwrap_err()
        .to_string();
    assert!(
        said.starts_with(&format!(
            "claude would not start now: {name} limited until "
        )),
        "{said}"
    );
    engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_queued_route_names_its_derived_account_in_the_list_the_detail_and_the_event() {
    let dir = tempfile::tempdir().unwrap();
    let engine = open_engine(&dir.path().join("r.db"), false).await;
    let mut one = on_derived("slow", vec![SimStep::Succeed { after_ms: 400 }]);
    one.agent.max_concurrent = Some(1);
    let p = profile(&engine, "One at a time", vec![one]).await;
    let (id, name) = derived_account(&engine);
    let mut events = engine.subscribe();
    let running = start(&engine, p).await;
    let queued = start(&engine, p).await;
    let said =
        format!("queued: {name} runs as many agents as its limit allows; it starts when one ends");
    let detail = engine.route_detail(queued).unwrap().snapshot;
    assert_eq!(detail.queued.as_deref(), Some(said.as_str()), "the detail");
    let page = engine
        .list_routes(&recourse::engine::RouteQuery::all(10))
        .unwrap();
    let row = page.routes.iter().find(|r| r.id == queued).unwrap();
    assert_eq!(row.queued.as_deref(), Some(said.as_str()), "the list row");
    let mut published = None;
    while published.is_none() {
        let event = tokio::time::timeout(Duration::from_secs(5), events.recv())
            .await
            .expect("the queued route is published")
            .unwrap();
        if event.route_id == queued {
            published = event.snapshot.queued;
        }
    }
    assert_eq!(published.as_deref(), Some(said.as_str()), "the event");
    assert!(!said.contains(&id));
    until(
        &engine,
        running,
        Duration::from_secs(10),
        is(RouteState::Succeeded),
    )
    .await;
    engine.shutdown().await;
}
