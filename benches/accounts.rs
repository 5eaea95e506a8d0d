//! Accounts under a burst (issue 28), printed as figures:
//!
//! 1. `burst`: 1 000 routes on one account wait for one reset (a usage
//!    window another route hit). At the reset exactly one agent may start —
//!    the probe — until it answers; then the queue drains at the account's
//!    `max_concurrent`. Prints how many agents started before the probe
//!    answered, the most running at once, the reset → probe spawn and probe
//!    answer → next spawn delays, and the drain time against its ideal.
//! 2. `latency`: the same with 5 routes, repeated (30 times), for p50 / p99
//!    of the reset → probe spawn and probe answer → next spawn delays.
//! 3. `release`: 1 000 routes on one account, no `max_concurrent`, wait for
//!    one reset; the probe's answer releases the other 999 at once. Prints
//!    each released route's lateness (its attempt's stored start − the
//!    probe's answer) p50 / p99 / max: the burst issue 32 asks to be
//!    dispatched in batches.
//! 4. `check`: what the account check costs a dispatch — the facts a
//!    dispatch is planned from (`Store::dispatch_facts`: marks, probes,
//!    slots) and the plan (`machine::released`), with no mark, with a live
//!    mark, and beside the commit of a transition; and the two reads a
//!    burst makes once rather than once a route (the candidates the
//!    accounts' names come from, one candidate as saved).
//!
//! Run: `cargo bench --bench accounts` (about 3 min on 2 cores);
//! `-- --quick` uses 100 routes and 5 repetitions; naming sections
//! (`-- burst latency release check`) runs only those. Times are the engine's own
//! (attempt start and end as stored, to the millisecond). The simulated
//! provider's "first answer" is its success, so the probe answers when its
//! attempt ends.

use std::path::Path;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use tokio::runtime::Runtime;

use recourse::account::AccountId;
use recourse::agent::{AgentSpec, SimStep};
use recourse::engine::{AccountStatus, Engine, EngineOptions, StartRun};
use recourse::policy::{CandidatePolicy, ClassPolicy, Exhausted};
use recourse::profile::CandidateInput;
use recourse::route::machine::{self, Lease, World};
use recourse::route::RouteState;
use recourse::store::Store;

const ACCOUNT: &str = "bench";

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let quick = args.iter().any(|a| a == "--quick");
    let named: Vec<&str> = args
        .iter()
        .filter(|a| !a.starts_with('-'))
        .map(String::as_str)
        .collect();
    let wants = |s: &str| named.is_empty() || named.contains(&s);
    let rt = Runtime::new().expect("tokio runtime");
    if wants("burst") {
        let routes = if quick { 100 } else { 1_000 };
        rt.block_on(burst(routes, 4, 50));
    }
    if wants("latency") {
        rt.block_on(latency(if quick { 5 } else { 30 }));
    }
    if wants("release") {
        rt.block_on(release(if quick { 100 } else { 1_000 }));
    }
    if wants("check") {
        check(if quick { 2_000 } else { 20_000 });
    }
}

fn candidate(name: &str, script: Vec<SimStep>, policy: CandidatePolicy) -> CandidateInput {
    let mut agent = AgentSpec::simulated(script);
    agent.account = Some(ACCOUNT.into());
    CandidateInput::new(name, agent, policy)
}

/// Waits for a reset up to an hour, then stops.
fn waits() -> CandidatePolicy {
    CandidatePolicy::both(ClassPolicy::new(Some(3600), None, Exhausted::Stop))
}

async fn engine(dir: &Path) -> Engine {
    let opts = EngineOptions {
        seed_demo: false,
        adopt_orphans: false,
        ..EngineOptions::default()
    };
    Engine::open(&dir.join("bench.db"), opts)
        .await
        .expect("engine opens")
}

async fn profile(engine: &Engine, name: &str, candidate: CandidateInput) -> u32 {
    let p = engine.create_profile(name).expect("profile");
    engine
        .save_candidates(p.id, p.revision, vec![candidate])
        .expect("candidates")
        .id
}

async fn start(engine: &Engine, profile_id: u32) -> u32 {
    engine
        .start_run(StartRun {
            profile_id,
            prompt: "bench".into(),
            cwd: None,
        })
        .await
        .expect("route starts")
        .id
}

/// Runs a route that hits a usage window resetting in `resets_in_s` and
/// stops; returns the reset instant of the mark it leaves.
async fn mark(engine: &Engine, marker: u32) -> DateTime<Utc> {
    let id = start(engine, marker).await;
    loop {
        if engine.route_detail(id).expect("route").snapshot.state == RouteState::NeedsManual {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let accounts = engine.accounts().expect("accounts");
    let account = accounts
        .accounts
        .iter()
        .find(|a| a.id == ACCOUNT)
        .expect("the account");
    match account.status {
        AccountStatus::Limited { until } => until,
        other => panic!("the marker left the account {other:?}"),
    }
}

/// Each route's attempts as (started, finished).
fn runs(engine: &Engine, ids: &[u32]) -> Vec<(DateTime<Utc>, DateTime<Utc>)> {
    let mut out = Vec::new();
    for id in ids {
        for a in engine.route_detail(*id).expect("route").attempts {
            out.push((a.started_at, a.finished_at.expect("finished")));
        }
    }
    out.sort();
    out
}

async fn until_done(engine: &Engine, ids: &[u32], within: Duration) {
    let start = Instant::now();
    for id in ids {
        loop {
            let s = engine.route_detail(*id).expect("route").snapshot.state;
            if s == RouteState::Succeeded {
                break;
            }
            assert!(
                start.elapsed() < within,
                "route {id} is {s:?} after {within:?}"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

fn ms(d: chrono::Duration) -> f64 {
    d.num_microseconds().unwrap_or(i64::MAX) as f64 / 1000.0
}

/// The most intervals open at once.
fn most_at_once(runs: &[(DateTime<Utc>, DateTime<Utc>)]) -> usize {
    let mut edges: Vec<(DateTime<Utc>, i32)> =
        runs.iter().flat_map(|(s, f)| [(*s, 1), (*f, -1)]).collect();
    // An end at the same millisecond as a start comes first.
    edges.sort();
    let (mut open, mut most) = (0i32, 0i32);
    for (_, step) in edges {
        open += step;
        most = most.max(open);
    }
    most as usize
}

struct Burst {
    /// When each route's first event after the reset was received, minus
    /// the reset, in ms: the timers' burst (the probe dispatched, the rest
    /// queued behind it).
    woken: Vec<f64>,
    /// Events lost to a lagging receiver (their routes are not in `woken`).
    lost: u64,
    /// Each attempt's start, and the probe's answer.
    starts: Vec<DateTime<Utc>>,
    answer: DateTime<Utc>,
    before_answer: usize,
    most: usize,
    reset_to_probe: f64,
    answer_to_next: f64,
    drain: f64,
}

/// `routes` routes wait on one mark; after its reset they run, at most
/// `limit` at a time (no limit: `None`), each for `work_ms`.
async fn reset(routes: usize, limit: Option<u32>, work_ms: u32, setup_s: u32) -> Burst {
    let dir = tempfile::tempdir().expect("temp dir");
    let engine = engine(dir.path()).await;
    let mut marker = candidate(
        "marker",
        vec![SimStep::UsageLimit {
            after_ms: 1,
            resets_in_s: setup_s,
        }],
        waits(),
    );
    marker.policy = CandidatePolicy::both(ClassPolicy::new(None, None, Exhausted::Stop));
    let marker = profile(&engine, "Marker", marker).await;
    let mut waiter = candidate(
        "waiter",
        vec![SimStep::Succeed { after_ms: work_ms }],
        waits(),
    );
    waiter.agent.max_concurrent = limit;
    let waiter = profile(&engine, "Waiters", waiter).await;
    let reset_at = mark(&engine, marker).await;
    let mut ids = Vec::with_capacity(routes);
    for _ in 0..routes {
        ids.push(start(&engine, waiter).await);
    }
    assert!(
        Utc::now() < reset_at,
        "every route was held before the reset"
    );
    let woken = tokio::spawn(first_events(engine.subscribe(), ids.clone()));
    until_done(&engine, &ids, Duration::from_secs(600)).await;
    let runs = runs(&engine, &ids);
    engine.shutdown().await;
    let (woken, lost) = woken.await.expect("event watcher");
    let mut woken: Vec<f64> = woken.iter().map(|at| ms(*at - reset_at)).collect();
    woken.sort_by(f64::total_cmp);
    let (probe_start, answer) = runs[0];
    Burst {
        woken,
        lost,
        starts: runs.iter().map(|(s, _)| *s).collect(),
        answer,
        before_answer: runs.iter().filter(|(s, _)| *s < answer).count(),
        most: most_at_once(&runs),
        reset_to_probe: ms(probe_start - reset_at),
        answer_to_next: runs.get(1).map_or(0.0, |(s, _)| ms(*s - answer)),
        drain: ms(runs.iter().map(|(_, f)| *f).max().expect("runs") - answer),
    }
}

/// When the first event of each route of `ids` that leaves its wait for
/// the reset arrived, and how many events were lost to a lagging receiver.
async fn first_events(
    mut events: tokio::sync::broadcast::Receiver<recourse::engine::RouteEvent>,
    ids: Vec<u32>,
) -> (Vec<DateTime<Utc>>, u64) {
    let mut first = std::collections::HashMap::new();
    let mut lost = 0;
    while first.len() + (lost as usize) < ids.len() {
        match events.recv().await {
            Ok(ev)
                if ids.contains(&ev.route_id) && ev.snapshot.state != RouteState::WaitingReset =>
            {
                first.entry(ev.route_id).or_insert_with(Utc::now);
            }
            Ok(_) => {}
            Err(tokio::sync::broadcast::error::RecvError::Lagged(n)) => lost += n,
            Err(tokio::sync::broadcast::error::RecvError::Closed) => break,
        }
    }
    (first.into_values().collect(), lost)
}

async fn burst(routes: usize, limit: u32, work_ms: u32) {
    println!("== burst: {routes} routes on one account, one reset, max_concurrent {limit}, {work_ms} ms agents");
    let setup_s = 6 + (routes as u32) / 60;
    let b = reset(routes, Some(limit), work_ms, setup_s).await;
    let ideal = (routes - 1).div_ceil(limit as usize) as f64 * f64::from(work_ms);
    println!(
        "agents started before the probe answered: {} (must be 1)",
        b.before_answer
    );
    println!("most agents running at once: {} (limit {limit})", b.most);
    println!("reset → probe spawn: {:.1} ms", b.reset_to_probe);
    println!("probe answer → next spawn: {:.1} ms", b.answer_to_next);
    println!(
        "queue drained in {:.0} ms after the answer (ideal {ideal:.0} ms at the limit: {:.0} % of it)",
        b.drain,
        ideal / b.drain * 100.0
    );
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let at = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[at.min(sorted.len() - 1)]
}

async fn latency(trials: usize) {
    println!("== latency: 5 routes on one account, one reset, repeated {trials} times");
    let (mut to_probe, mut to_next) = (Vec::new(), Vec::new());
    for _ in 0..trials {
        let b = reset(5, Some(2), 20, 2).await;
        assert_eq!(b.before_answer, 1, "one probe until it answered");
        to_probe.push(b.reset_to_probe);
        to_next.push(b.answer_to_next);
    }
    for (name, values) in [
        ("reset → probe spawn", &mut to_probe),
        ("probe answer → next spawn", &mut to_next),
    ] {
        values.sort_by(f64::total_cmp);
        println!(
            "{name}: p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
            percentile(values, 0.5),
            percentile(values, 0.99),
            values[values.len() - 1]
        );
    }
}

async fn release(routes: usize) {
    println!(
        "== release: {routes} routes on one account, one reset, no max_concurrent, 2 s agents"
    );
    let setup_s = 6 + (routes as u32) / 60;
    let b = reset(routes, None, 2_000, setup_s).await;
    assert_eq!(b.before_answer, 1, "one probe until it answered");
    println!(
        "the reset's timers: {} routes left their wait (one probes, the rest queue behind it), \
         event received − reset p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms ({} events lost)",
        b.woken.len(),
        percentile(&b.woken, 0.5),
        percentile(&b.woken, 0.99),
        b.woken[b.woken.len() - 1],
        b.lost
    );
    let mut late: Vec<f64> = b.starts[1..].iter().map(|s| ms(*s - b.answer)).collect();
    late.sort_by(f64::total_cmp);
    println!(
        "reset → probe spawn: {:.1} ms; {} routes released by the probe's answer, \
         spawn lateness p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
        b.reset_to_probe,
        late.len(),
        percentile(&late, 0.5),
        percentile(&late, 0.99),
        late[late.len() - 1]
    );
}

/// The check a dispatch runs, in microseconds per dispatch.
fn check(iterations: u32) {
    println!("== check: the account check of one dispatch, {iterations} times");
    let dir = tempfile::tempdir().expect("temp dir");
    let rt = Runtime::new().expect("runtime");
    let clear = rt.block_on(async {
        let engine = engine(dir.path()).await;
        let mut c = candidate("c", vec![SimStep::Succeed { after_ms: 1 }], waits());
        c.agent.max_concurrent = Some(4);
        let clear = engine.create_profile("Clear").expect("profile");
        let clear = engine
            .save_candidates(clear.id, clear.revision, vec![c])
            .expect("saved");
        let marker = profile(
            &engine,
            "Marker",
            candidate(
                "m",
                vec![SimStep::UsageLimit {
                    after_ms: 1,
                    resets_in_s: 3600,
                }],
                CandidatePolicy::both(ClassPolicy::new(None, None, Exhausted::Stop)),
            ),
        )
        .await;
        mark(&engine, marker).await;
        engine.shutdown().await;
        clear
    });
    let mut store = Store::open(&dir.path().join("bench.db")).expect("store");
    let account = AccountId::parse(ACCOUNT).expect("label");
    let other = AccountId::parse("elsewhere").expect("label");
    let alive = |_: Option<&str>, _: Option<DateTime<Utc>>| true;
    let now = Utc::now();
    let lease = Lease {
        owner: "bench",
        until: now + chrono::Duration::seconds(60),
    };
    let new = machine::start(&clear, "bench".into(), None, lease, World::default(), now)
        .expect("an enabled candidate");
    for (name, accounts) in [("a clear account", &other), ("a limited account", &account)] {
        let ids = [accounts];
        let started = Instant::now();
        for _ in 0..iterations {
            let facts = store.dispatch_facts(0, &ids, None, &alive).expect("facts");
            std::hint::black_box(facts);
        }
        let facts_us = started.elapsed().as_secs_f64() * 1e6 / f64::from(iterations);
        let facts = store.dispatch_facts(0, &ids, None, &alive).expect("facts");
        let world = World {
            accounts: &facts.accounts,
            global_full: facts.global_full,
            stamp: facts.stamp,
            paused: false,
        };
        let mut candidates = new.candidates.clone();
        candidates[0].account = Some((*accounts).clone());
        let row = queued_row(&mut store, &new, candidates);
        let started = Instant::now();
        for _ in 0..iterations {
            std::hint::black_box(machine::released(&row, lease, world, now));
        }
        let plan_us = started.elapsed().as_secs_f64() * 1e6 / f64::from(iterations);
        println!("{name}: facts {facts_us:.1} µs + plan {plan_us:.2} µs per dispatch");
    }
    let per_read = |read: &dyn Fn()| {
        let started = Instant::now();
        for _ in 0..iterations {
            read();
        }
        started.elapsed().as_secs_f64() * 1e6 / f64::from(iterations)
    };
    let names_us = per_read(&|| {
        std::hint::black_box(store.account_candidates().expect("candidates"));
    });
    let id = clear.candidates[0].id;
    let saved_us = per_read(&|| {
        std::hint::black_box(store.candidates_by_id(&[id]).expect("candidate"));
    });
    println!(
        "read once a burst, not once a route: the candidates the accounts' names come from \
         {names_us:.1} µs, one candidate as saved {saved_us:.1} µs"
    );
}

/// A route created the way the engine creates one, left queued.
fn queued_row(
    store: &mut Store,
    new: &recourse::route::NewRoute,
    candidates: Vec<recourse::profile::Candidate>,
) -> recourse::route::RouteRow {
    let mut new = new.clone();
    new.candidates = candidates;
    match store.create_route(&new, |_| None).expect("route created") {
        recourse::store::Cas::Won(row) => row,
        other => panic!("nothing else writes: {other:?}"),
    }
}
