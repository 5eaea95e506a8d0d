//! Soak: many simulated routes through the real engine and a temp database,
//! their candidates failing in every way the simulated provider knows, with
//! manual actions interleaved, until every route settles. Then the stored
//! history is checked: no route lost, no double dispatch, every decision
//! consistent with the policy it was taken under, and resident memory flat.
//!
//! Default size suits the debug suite; the full run is
//! `RECOURSE_SOAK_ROUTES=3000 cargo test --release --test it engine_soak:: -- --nocapture`.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::common::{act_on, uniform_policy};
use recourse::agent::{AgentSpec, SimStep};
use recourse::engine::{
    AttemptView, Engine, EngineError, EngineOptions, RouteQuery, RouteSnapshot, StartRun,
};
use recourse::policy::{CandidatePolicy, ClassPolicy, Exhausted};
use recourse::profile::{CandidateInput, Profile};
use recourse::route::{AttemptOutcome, ManualAction, RouteState};
use tokio::sync::{mpsc, Semaphore};

/// Routes in the default (debug suite) run.
const DEFAULT_ROUTES: usize = 240;
/// Routes in flight at once: memory must level off once this many run.
const IN_FLIGHT: usize = 120;
/// From this many routes on, the run counts as full and memory is asserted.
const FULL_RUN_ROUTES: usize = 1000;
/// Allowed RSS growth between the end of warm-up and the end of a full run.
const MAX_RSS_GROWTH_KIB: u64 = 48 * 1024;

fn route_count() -> usize {
    std::env::var("RECOURSE_SOAK_ROUTES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(DEFAULT_ROUTES)
}

// ─── profiles: every failure the simulated provider plays ───────────────────

fn sim(name: &str, script: Vec<SimStep>, policy: CandidatePolicy) -> CandidateInput {
    CandidateInput::new(name, AgentSpec::simulated(script), policy)
}

const WORK_MS: u32 = 20;

fn overloaded() -> SimStep {
    SimStep::Overloaded { after_ms: WORK_MS }
}

fn succeed() -> SimStep {
    SimStep::Succeed { after_ms: WORK_MS }
}

/// The profiles routes are spread over, each a different way to fail.
fn profiles() -> Vec<(&'static str, Vec<CandidateInput>)> {
    let skip = Exhausted::Skip;
    let stop = Exhausted::Stop;
    vec![
        (
            "overloaded twice, retries",
            vec![sim(
                "flaky",
                vec![overloaded(), overloaded(), succeed()],
                uniform_policy(None, Some((3, 1)), stop),
            )],
        ),
        (
            "rate limit with reset hint",
            vec![sim(
                "limited",
                vec![
                    SimStep::RateLimited {
                        after_ms: WORK_MS,
                        retry_after_s: 1,
                    },
                    succeed(),
                ],
                uniform_policy(Some(30), Some((1, 1)), skip),
            )],
        ),
        (
            "usage limit, wait, then skip",
            vec![
                sim(
                    "capped",
                    vec![SimStep::UsageLimit {
                        after_ms: WORK_MS,
                        resets_in_s: 2,
                    }],
                    CandidatePolicy::new(
                        ClassPolicy::new(None, Some((1, 1)), skip),
                        ClassPolicy::new(Some(10), None, skip),
                    ),
                ),
                sim(
                    "backup",
                    vec![overloaded(), succeed()],
                    uniform_policy(None, Some((2, 1)), stop),
                ),
            ],
        ),
        (
            "hard error stops",
            vec![sim(
                "revoked",
                vec![SimStep::Unrecognised {
                    after_ms: WORK_MS,
                    message: "Invalid API key · Please run /login".into(),
                }],
                uniform_policy(None, None, stop),
            )],
        ),
        (
            "unsafe effects",
            vec![sim(
                "toolish",
                vec![SimStep::ToolThenReset { after_ms: WORK_MS }, succeed()],
                uniform_policy(None, Some((2, 1)), skip),
            )],
        ),
        (
            "everything exhausted",
            vec![
                sim(
                    "first",
                    vec![overloaded()],
                    uniform_policy(None, Some((1, 1)), skip),
                ),
                sim(
                    "second",
                    vec![overloaded()],
                    uniform_policy(None, None, skip),
                ),
            ],
        ),
        (
            "unclassified text",
            vec![sim(
                "odd",
                vec![SimStep::Unrecognised {
                    after_ms: WORK_MS,
                    message: "the flux capacitor is out of sync".into(),
                }],
                uniform_policy(None, Some((2, 1)), skip),
            )],
        ),
    ]
}

// ─── manual actions a person takes on some routes ───────────────────────────

#[derive(Debug, Clone, Copy)]
enum Plan {
    Watch,
    RetryNowWhenScheduled,
    SkipNowWhenWaiting,
    StopThenResume,
    StopAndLeave,
    RetryNowFromManual,
}

const PLANS: [Plan; 8] = [
    Plan::Watch,
    Plan::RetryNowWhenScheduled,
    Plan::Watch,
    Plan::SkipNowWhenWaiting,
    Plan::StopThenResume,
    Plan::Watch,
    Plan::StopAndLeave,
    Plan::RetryNowFromManual,
];

/// The action `plan` takes on `s` after `acted` earlier ones, if any; only
/// actions the snapshot offers, as the UI would.
fn next_action(plan: Plan, s: &RouteSnapshot, acted: u32) -> Option<ManualAction> {
    let wanted = match (plan, acted, s.state) {
        (Plan::RetryNowWhenScheduled, 0, RouteState::RetryScheduled) => ManualAction::RetryNow,
        (Plan::SkipNowWhenWaiting, 0, RouteState::WaitingReset) => ManualAction::SkipNow,
        (Plan::StopThenResume, 0, RouteState::Running) => ManualAction::Stop,
        (Plan::StopThenResume, 1, RouteState::Stopped) => ManualAction::Resume,
        (Plan::StopAndLeave, 0, RouteState::Running | RouteState::WaitingReset) => {
            ManualAction::Stop
        }
        (Plan::RetryNowFromManual, 0, RouteState::NeedsManual) => ManualAction::RetryNow,
        _ => return None,
    };
    s.actions.contains(&wanted).then_some(wanted)
}

fn settled(state: RouteState) -> bool {
    match state {
        RouteState::Succeeded | RouteState::NeedsManual | RouteState::Stopped => true,
        RouteState::Running
        | RouteState::WaitingReset
        | RouteState::RetryScheduled
        | RouteState::Queued => false,
    }
}

#[derive(Debug, Default, Clone, Copy)]
struct ActionCounts {
    applied: u32,
    stale: u32,
    conflict: u32,
}

impl ActionCounts {
    fn add(&mut self, other: ActionCounts) {
        self.applied += other.applied;
        self.stale += other.stale;
        self.conflict += other.conflict;
    }
}

/// Follows one route, acting as its plan says, until it settles for good.
async fn drive(
    engine: Engine,
    mut s: RouteSnapshot,
    plan: Plan,
    mut events: mpsc::UnboundedReceiver<RouteSnapshot>,
) -> ActionCounts {
    let mut counts = ActionCounts::default();
    let mut acted = 0;
    loop {
        if let Some(action) = next_action(plan, &s, acted) {
            match act_on(&engine, s.id, action, s.generation).await {
                Ok(now) => {
                    counts.applied += 1;
                    acted += 1;
                    s = now;
                    continue;
                }
                Err(EngineError::Stale { current }) => {
                    counts.stale += 1;
                    s = *current;
                    continue;
                }
                Err(EngineError::Conflict(_)) => {
                    counts.conflict += 1;
                    acted += 1;
                }
                Err(e) => panic!("route {}: {action:?} failed: {e}", s.id),
            }
        }
        if settled(s.state) && next_action(plan, &s, acted).is_none() {
            return counts;
        }
        s = newer_snapshot(&engine, &s, &mut events).await;
    }
}

/// The next snapshot of `s`'s route from its events, or read back when none
/// came for a second (events can be dropped when a receiver lags).
async fn newer_snapshot(
    engine: &Engine,
    s: &RouteSnapshot,
    events: &mut mpsc::UnboundedReceiver<RouteSnapshot>,
) -> RouteSnapshot {
    loop {
        match tokio::time::timeout(Duration::from_secs(1), events.recv()).await {
            Ok(Some(next)) if next.generation > s.generation => return next,
            Ok(Some(_)) => {}
            Ok(None) => panic!("event forwarding stopped"),
            Err(_) => {
                let read = engine.route_detail(s.id).expect("route readable").snapshot;
                if read.generation > s.generation {
                    return read;
                }
            }
        }
    }
}

/// Forwards engine events to the driver of their route.
fn forward_events(
    engine: &Engine,
    drivers: Arc<Mutex<HashMap<u32, mpsc::UnboundedSender<RouteSnapshot>>>>,
) -> tokio::task::JoinHandle<()> {
    let mut events = engine.subscribe();
    tokio::spawn(async move {
        loop {
            match events.recv().await {
                Ok(ev) => {
                    if let Some(tx) = drivers.lock().unwrap().get(&ev.route_id) {
                        let _ = tx.send(ev.snapshot);
                    }
                }
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
            }
        }
    })
}

// ─── memory ──────────────────────────────────────────────────────────────────

fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS line")
}

/// One RSS sample: seconds since start, routes started so far, KiB.
type Sample = (f64, usize, u64);

/// Samples RSS every 100 ms on its own thread until `stop` is set.
fn sample_rss(
    started: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
) -> std::thread::JoinHandle<Vec<Sample>> {
    std::thread::spawn(move || {
        let t0 = Instant::now();
        let mut samples = Vec::new();
        while !stop.load(Ordering::Relaxed) {
            samples.push((
                t0.elapsed().as_secs_f64(),
                started.load(Ordering::Relaxed),
                rss_kib(),
            ));
            std::thread::sleep(Duration::from_millis(100));
        }
        samples
    })
}

// ─── the run ─────────────────────────────────────────────────────────────────

struct Run {
    started: Vec<(u32, usize)>,
    actions: ActionCounts,
    wall: Duration,
    samples: Vec<Sample>,
}

async fn soak(engine: &Engine, profiles: &[Profile], routes: usize) -> Run {
    let t0 = Instant::now();
    let drivers = Arc::new(Mutex::new(HashMap::new()));
    let forwarder = forward_events(engine, drivers.clone());
    let started_count = Arc::new(AtomicUsize::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let sampler = sample_rss(started_count.clone(), stop.clone());
    let slots = Arc::new(Semaphore::new(IN_FLIGHT));
    let mut tasks = tokio::task::JoinSet::new();
    let mut started = Vec::new();
    let mut actions = ActionCounts::default();
    for n in 0..routes {
        // Finished drivers are collected as we go, so the test itself keeps
        // nothing per settled route.
        while let Some(done) = tasks.try_join_next() {
            actions.add(done.expect("driver finished"));
        }
        let permit = slots.clone().acquire_owned().await.unwrap();
        let profile = n % profiles.len();
        let s = engine
            .start_run(StartRun {
                profile_id: profiles[profile].id,
                prompt: format!("soak task {n}"),
                cwd: None,
            })
            .await
            .expect("route starts");
        let (tx, rx) = mpsc::unbounded_channel();
        drivers.lock().unwrap().insert(s.id, tx);
        started.push((s.id, profile));
        started_count.fetch_add(1, Ordering::Relaxed);
        let plan = PLANS[n % PLANS.len()];
        let engine = engine.clone();
        let drivers = drivers.clone();
        tasks.spawn(async move {
            let id = s.id;
            let counts = drive(engine, s, plan, rx).await;
            drivers.lock().unwrap().remove(&id);
            drop(permit);
            counts
        });
    }
    while let Some(done) = tasks.join_next().await {
        actions.add(done.expect("driver finished"));
    }
    forwarder.abort();
    stop.store(true, Ordering::Relaxed);
    Run {
        started,
        actions,
        wall: t0.elapsed(),
        samples: sampler.join().unwrap(),
    }
}

// ─── checks on the stored history ───────────────────────────────────────────

#[derive(Default)]
struct Figures {
    attempts: usize,
    transitions: u64,
    decisions_checked: usize,
    by_state: HashMap<&'static str, usize>,
}

/// Attempts of one route: numbered 1..=n, all finished, one at a time in
/// generation order, at most one success and only as the last attempt.
fn check_attempts(s: &RouteSnapshot, attempts: &[AttemptView]) {
    let numbers: Vec<u32> = attempts.iter().map(|a| a.number).collect();
    let expected: Vec<u32> = (1..=attempts.len() as u32).collect();
    assert_eq!(
        numbers, expected,
        "route {}: attempt numbers are contiguous",
        s.id
    );
    assert_eq!(
        s.attempts as usize,
        attempts.len(),
        "route {}: attempt count",
        s.id
    );
    for a in attempts {
        assert!(
            a.outcome.is_some() && a.finished_at.is_some(),
            "route {} attempt {}: a settled route has no running attempt",
            s.id,
            a.number
        );
    }
    for pair in attempts.windows(2) {
        let (a, b) = (&pair[0], &pair[1]);
        assert!(
            a.generation < b.generation,
            "route {}: attempt {} dispatched at generation {} after attempt {} at {}",
            s.id,
            b.number,
            b.generation,
            a.number,
            a.generation
        );
        assert!(
            a.finished_at.unwrap() <= b.started_at,
            "route {}: attempt {} started at {} before attempt {} finished at {:?}: two ran at once",
            s.id,
            b.number,
            b.started_at,
            a.number,
            a.finished_at
        );
    }
    let successes: Vec<&AttemptView> = attempts
        .iter()
        .filter(|a| a.outcome == Some(AttemptOutcome::Succeeded))
        .collect();
    match s.state {
        RouteState::Succeeded => assert!(
            successes.len() == 1 && attempts.last().map(|a| a.number) == Some(successes[0].number),
            "route {}: succeeded means exactly its last attempt succeeded",
            s.id
        ),
        RouteState::NeedsManual | RouteState::Stopped => assert!(
            successes.is_empty(),
            "route {} is {:?} after a successful attempt",
            s.id,
            s.state
        ),
        RouteState::Running
        | RouteState::WaitingReset
        | RouteState::RetryScheduled
        | RouteState::Queued => panic!("route {} did not settle: {:?}", s.id, s.state),
    }
}

/// Checks the decision recorded for a failed attempt against the policy
/// its candidate had; returns whether there was one to check.
fn check_decision(route: u32, a: &AttemptView, policy: &CandidatePolicy) -> bool {
    let (Some(decision), Some(c)) = (&a.decision, &a.classification) else {
        return false;
    };
    let Some(class) = c.class.policy_class() else {
        return false;
    };
    let section = policy.section(class);
    let name = class.as_str();
    let at = format!("route {route} attempt {}: {decision:?}", a.number);
    if let Some(rest) = decision.strip_prefix(&format!("{name} retry ")) {
        let numbers: Vec<u32> = rest
            .split(' ')
            .filter_map(|w| w.parse().ok())
            .take(3)
            .collect();
        let [ordinal, max, delay] = numbers[..] else {
            panic!("{at}: unreadable retry decision");
        };
        assert!(section.retry.enabled, "{at}: retry while retry is disabled");
        assert_eq!(
            max, section.retry.max_retries,
            "{at}: budget is the policy's"
        );
        assert!((1..=max).contains(&ordinal), "{at}: ordinal within budget");
        assert_eq!(
            delay,
            section.retry.initial_interval_seconds << (ordinal - 1),
            "{at}: delay doubles from the initial interval"
        );
    } else if decision.starts_with(&format!("wait for the {name} reset")) {
        assert!(
            section.wait_for_reset.enabled,
            "{at}: waited while waiting is disabled"
        );
    } else if decision.contains(&format!(
        " used up its {name} retries and wait; skipping to "
    )) || decision.contains("policy says skip, but no candidate is left")
    {
        assert_eq!(
            section.on_exhausted,
            Exhausted::Skip,
            "{at}: skip is the policy's"
        );
    } else if decision.starts_with("stop: ") {
        assert_eq!(
            section.on_exhausted,
            Exhausted::Stop,
            "{at}: stop is the policy's"
        );
    } else {
        assert!(
            decision.starts_with("manual recovery: "),
            "{at}: a decision of a known kind"
        );
    }
    true
}

/// Every stored route, read a page at a time as the app does.
fn every_route(engine: &Engine) -> Vec<RouteSnapshot> {
    let mut query = RouteQuery::all(RouteQuery::MAX_LIMIT);
    let mut all = Vec::new();
    loop {
        let page = engine.list_routes(&query).unwrap();
        query.before = page.routes.last().map(|r| r.id);
        all.extend(page.routes);
        if !page.more {
            return all;
        }
    }
}

fn check_history(engine: &Engine, run: &Run, profiles: &[Profile]) -> Figures {
    let stored: HashMap<u32, RouteSnapshot> =
        every_route(engine).into_iter().map(|s| (s.id, s)).collect();
    assert_eq!(
        stored.len(),
        run.started.len(),
        "every started route is stored, no other"
    );
    let mut figures = Figures::default();
    let mut invocations = HashSet::new();
    for &(id, profile) in &run.started {
        let s = stored
            .get(&id)
            .unwrap_or_else(|| panic!("route {id} was lost"));
        assert!(settled(s.state), "route {id} settled, got {:?}", s.state);
        let attempts = engine.route_detail(id).unwrap().attempts;
        check_attempts(s, &attempts);
        for a in &attempts {
            assert!(
                invocations.insert(a.invocation_id.clone()),
                "invocation id {} dispatched twice",
                a.invocation_id
            );
            let policy = &profiles[profile].candidates[a.candidate_index as usize].policy;
            if check_decision(id, a, policy) {
                figures.decisions_checked += 1;
            }
        }
        figures.attempts += attempts.len();
        figures.transitions += u64::from(s.generation);
        *figures.by_state.entry(s.state.as_str()).or_default() += 1;
    }
    figures
}

/// Prints about 30 samples of the RSS series.
fn print_series(samples: &[Sample]) {
    let step = (samples.len() / 30).max(1);
    let series: Vec<String> = samples
        .iter()
        .step_by(step)
        .map(|(t, n, kib)| format!("{t:.1}s/{n}r/{}MiB", kib / 1024))
        .collect();
    println!("rss series (time/routes started/RSS): {}", series.join(" "));
}

/// RSS at the end of warm-up (the first sample once a fifth of the routes,
/// and at least two full batches in flight, were started), the peak after
/// it, and the last sample.
fn rss_figures(samples: &[Sample], routes: usize) -> (u64, u64, u64) {
    let warm = samples
        .iter()
        .position(|&(_, n, _)| n >= (routes / 5).max(2 * IN_FLIGHT))
        .unwrap_or(0);
    let after = &samples[warm..];
    let peak = after.iter().map(|s| s.2).max().unwrap_or(0);
    (after[0].2, peak, samples.last().map_or(0, |s| s.2))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn routes_settle_without_loss_double_dispatch_or_memory_growth() {
    let routes = route_count();
    let dir = tempfile::tempdir().unwrap();
    let opts = EngineOptions {
        seed_demo: false,
        ..EngineOptions::default()
    };
    let engine = Engine::open(&dir.path().join("soak.db"), opts)
        .await
        .unwrap();
    let rss_start = rss_kib();
    let mut stored_profiles = Vec::new();
    for (name, candidates) in profiles() {
        let p = engine.create_profile(name).unwrap();
        stored_profiles.push(
            engine
                .save_candidates(p.id, p.revision, candidates)
                .unwrap(),
        );
    }
    let budget = Duration::from_secs(60 + routes as u64 / 5);
    let run = tokio::time::timeout(budget, soak(&engine, &stored_profiles, routes))
        .await
        .unwrap_or_else(|_| panic!("{routes} routes did not settle within {budget:?}"));
    let figures = check_history(&engine, &run, &stored_profiles);
    engine.shutdown().await;

    let (warm, peak, end) = rss_figures(&run.samples, routes);
    print_series(&run.samples);
    println!(
        "soak: {routes} routes, {} attempts, {} transitions, {} decisions checked, \
         states {:?}, actions {:?}, wall {:.1}s, RSS start {} MiB, after warm-up {} MiB, \
         peak {} MiB, end {} MiB",
        figures.attempts,
        figures.transitions,
        figures.decisions_checked,
        figures.by_state,
        run.actions,
        run.wall.as_secs_f64(),
        rss_start / 1024,
        warm / 1024,
        peak / 1024,
        end / 1024
    );
    assert!(
        figures.decisions_checked > routes / 2,
        "most routes fail at least once, so decisions were checked"
    );
    assert!(run.actions.applied > 0, "manual actions were interleaved");
    if routes >= FULL_RUN_ROUTES {
        assert!(
            peak.saturating_sub(warm) < MAX_RSS_GROWTH_KIB,
            "resident memory grew {} KiB after warm-up (limit {MAX_RSS_GROWTH_KIB} KiB): \
             with at most {IN_FLIGHT} routes in flight it should level off, so growth \
             means something is kept per finished route",
            peak.saturating_sub(warm)
        );
    }
}
