//! Engine and store figures (issue 7):
//!
//! 1. committed transitions per second through `Store::commit_transition`,
//!    beside a raw rusqlite insert loop on a file with the same journal mode
//!    and `synchronous` level, one transaction per row;
//! 2. restart reconciliation (`Engine::open` adopting orphans) of 10 000,
//!    30 000 and 100 000 routes, and the engine's steady-state CPU with
//!    100 000 routes;
//! 3. 10 000 pending deadlines: idle CPU and memory, and how late timers
//!    fire through the engine and through the bare `Scheduler`.
//!
//! 4. how much the database grows per attempt with a typical and with the
//!    longest transcript kept (the bound), and what saving one costs.
//!
//! 5. on request only (`-- app-db`), a database of `APP_DB_ROUTES` (1 000)
//!    routes in the realistic mix written to `APP_DB`, for the desktop app's
//!    start-up benchmark (`scripts/bench-app.sh`).
//!
//! Run: `cargo bench --bench engine` (about 3 min on 2 cores);
//! `cargo bench --bench engine -- --quick` (or `ENGINE_BENCH_QUICK=1`) uses
//! smaller sizes; naming sections (`-- transitions deadlines reconcile`)
//! runs only those. See docs/benchmarks-engine.md.
//!
//! Databases are populated by copying a few template routes, each made
//! through the public store API and the real state machine, with four SQL
//! statements (`copy_route`); nothing else in this file writes SQL to the
//! store's tables.

use std::collections::HashMap;
use std::path::Path;
use std::time::{Duration, Instant};

use chrono::{DateTime, SecondsFormat, Utc};
use rusqlite::{params, Connection};
use tokio::runtime::Runtime;
use tokio_util::sync::CancellationToken;

use recourse::agent::{AgentSpec, SimStep, ToolStatus, Transcript, Usage};
use recourse::catalogue;
use recourse::engine::{Engine, EngineOptions};
use recourse::evidence::{Correlation, Evidence, Phase, Provider, RawEvidence, MAX_MESSAGE_BYTES};
use recourse::policy::{CandidatePolicy, ClassPolicy, Exhausted};
use recourse::profile::CandidateInput;
use recourse::route::machine::{self, Failure, Lease, Plan, World};
use recourse::route::{Interruption, ManualAction, RouteRow, RouteState};
use recourse::safety::EffectContext;
use recourse::scheduler::Scheduler;
use recourse::store::{Cas, Store};
use recourse::timing::machine_local_tz;

/// An owner whose process does not exist and whose lease has run out.
const DEAD_OWNER: &str = "pid4294967-1";

struct Sizes {
    transitions: usize,
    transcripts: usize,
    reconcile: [usize; 3],
    steady_window: Duration,
    deadlines: usize,
    idle_window: Duration,
    spread: Duration,
}

impl Sizes {
    fn pick() -> Sizes {
        let quick = std::env::args().any(|a| a == "--quick")
            || std::env::var_os("ENGINE_BENCH_QUICK").is_some_and(|v| !v.is_empty());
        if quick {
            Sizes {
                transitions: 2_000,
                transcripts: 50,
                reconcile: [1_000, 3_000, 10_000],
                steady_window: Duration::from_secs(3),
                deadlines: 1_000,
                idle_window: Duration::from_secs(5),
                spread: Duration::from_secs(3),
            }
        } else {
            Sizes {
                transitions: 10_000,
                transcripts: 300,
                reconcile: [10_000, 30_000, 100_000],
                steady_window: Duration::from_secs(10),
                deadlines: 10_000,
                idle_window: Duration::from_secs(25),
                spread: Duration::from_secs(10),
            }
        }
    }
}

fn main() {
    let sizes = Sizes::pick();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let dir = tempfile::tempdir().expect("temp dir");
    println!("# Engine and store benchmarks");
    println!(
        "sizes: {} transitions; reconcile {:?} routes; {} deadlines; idle window {} s",
        sizes.transitions,
        sizes.reconcile,
        sizes.deadlines,
        sizes.idle_window.as_secs()
    );
    let template = dir.path().join("template.db");
    make_templates(&template);
    // Deadlines before reconciliation, so its memory figure is not inflated
    // by the 100 000-route databases.
    if wanted("transitions") {
        transitions(dir.path(), sizes.transitions);
    }
    if wanted("deadlines") {
        pending_deadlines(&rt, dir.path(), &template, &sizes);
        scheduler_lateness(&rt, sizes.deadlines, sizes.spread);
    }
    if wanted("reconcile") {
        reconciliation(&rt, dir.path(), &template, &sizes);
    }
    if wanted("transcripts") {
        transcript_growth(dir.path(), sizes.transcripts);
    }
    if named_sections().iter().any(|a| a == "app-db") {
        app_database(&template);
    }
}

/// A section runs unless other sections are named on the command line
/// (`-- transitions`, `-- deadlines`, `-- reconcile`).
fn wanted(section: &str) -> bool {
    let named = named_sections();
    named.is_empty() || named.iter().any(|a| a == section)
}

fn named_sections() -> Vec<String> {
    std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect()
}

// ---------------------------------------------------------------- candidates

/// Transient: 3 retries 2 s apart, then skip. Hard: wait up to 2 h for a
/// trusted reset, then skip.
fn bench_policy() -> CandidatePolicy {
    let transient = ClassPolicy::new(None, Some((3, 2)), Exhausted::Skip);
    let hard = ClassPolicy::new(Some(7_200), None, Exhausted::Skip);
    CandidatePolicy::new(transient, hard)
}

/// Two simulated candidates: attempt 1 is overloaded, attempt 2 succeeds
/// after 100 ms. A fired retry runs no process.
fn candidates() -> Vec<CandidateInput> {
    let script = vec![
        SimStep::Overloaded { after_ms: 10 },
        SimStep::Succeed { after_ms: 100 },
    ];
    ["claude", "codex"]
        .into_iter()
        .map(|name| CandidateInput::new(name, AgentSpec::simulated(script.clone()), bench_policy()))
        .collect()
}

/// Opens (creating) the database with the bench profile as profile 1.
fn store_with_profile(path: &Path) -> (Store, recourse::profile::Profile) {
    let mut store = Store::open(path).expect("store opens");
    let id = store
        .create_profile("Bench", Utc::now())
        .expect("profile created");
    let key = store.account_key().expect("install key");
    let writes: Vec<_> = candidates()
        .into_iter()
        .map(|c| {
            let account = recourse::account::derive_from_spec(&c.agent, &key);
            (c, account)
        })
        .collect();
    store
        .save_candidates(id, 1, &writes, Utc::now())
        .expect("candidates saved")
        .expect("candidates accepted");
    let profile = store
        .get_profile(id)
        .expect("profile read")
        .expect("exists");
    (store, profile)
}

/// The world a plan is made in: no marks and no limits, at the marks'
/// version as stored, which saving the candidates moved (a plan from an
/// older version is refused as made from a world that changed).
fn world(store: &Store) -> World<'static> {
    let facts = store
        .dispatch_facts(0, &[], None, &|_, _| true)
        .expect("facts read");
    World {
        stamp: facts.stamp,
        ..World::default()
    }
}

fn new_route(store: &mut Store, profile: &recourse::profile::Profile, owner: &str) -> RouteRow {
    let now = Utc::now();
    let world = world(store);
    let lease = Lease {
        owner,
        until: now - chrono::Duration::minutes(1),
    };
    let prompt = "Fix the flaky integration test and open a pull request".to_string();
    let new =
        machine::start(profile, prompt, None, lease, world, now).expect("an enabled candidate");
    let created = store
        .create_route(&new, |row| machine::released(row, lease, world, now))
        .expect("route inserted");
    match created {
        Cas::Won(row) => row,
        other => panic!("no other writer in the bench, yet {other:?}"),
    }
}

fn commit(store: &mut Store, plan: Plan) -> RouteRow {
    let cas = store
        .commit_transition(&plan)
        .expect("transition committed");
    match cas {
        Cas::Won(row) => row,
        Cas::Lost(row) | Cas::WorldChanged(row) => {
            panic!("no other writer in the bench, yet route {} moved", row.id)
        }
    }
}

// ---------------------------------------------------------------- evidence

const RETRY: &str = "  ⎿  API Error (529 {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}) · Retrying in 5 seconds… (attempt 4/10)\n";
const STACK: &str = "    at BS.makeRequest (file:///opt/homebrew/lib/node_modules/@anthropic-ai/claude-code/cli.js:1279:5315)\n    at process.processTicksAndRejections (node:internal/process/task_queues:105:5)\n";
const OVERLOADED: &str =
    r#"API Error: 529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;

fn raw(message: String, http_status: Option<u16>) -> RawEvidence {
    RawEvidence::new(Provider::ClaudeCode, message, Utc::now())
        .with_phase(Phase::Request)
        .with_http_status(http_status)
        .with_exit_code(1)
}

/// A 529 after a run of retry progress lines and stack frames, as long as
/// sanitized evidence gets (`MAX_MESSAGE_BYTES`, 4 KiB).
fn overloaded_4kib() -> Evidence {
    let mut text = String::new();
    while text.len() < 2 * MAX_MESSAGE_BYTES {
        text.push_str(RETRY);
        text.push_str(STACK);
    }
    text.push_str(OVERLOADED);
    Evidence::from_raw(raw(text, Some(529)))
}

fn overloaded_short() -> Evidence {
    Evidence::from_raw(raw(OVERLOADED.to_string(), Some(529)))
}

fn usage_limit(resets_at: DateTime<Utc>) -> Evidence {
    let text = format!("Claude AI usage limit reached|{}", resets_at.timestamp());
    Evidence::from_raw(raw(text, None))
}

/// The running attempt of `row` failed with `evidence`, as the engine
/// records it (correlated, classified, effect-safe).
fn failure(row: &RouteRow, evidence: &Evidence) -> Failure {
    let mut evidence = evidence.clone();
    evidence.correlation = Some(Correlation {
        route_id: row.id.to_string(),
        generation: row.generation,
        attempt: row.attempts,
        invocation_id: format!("r{}-a{}-bench", row.id, row.attempts),
    });
    let classification = catalogue::classify(&evidence, machine_local_tz());
    let mut effect = EffectContext::effect_safe();
    effect.evidence_current = Some(true);
    Failure {
        number: row.attempts,
        evidence,
        classification,
        effect,
        session: Default::default(),
        files_changed: None,
        earlier: Vec::new(),
    }
}

fn lease(owner: &str) -> Lease<'_> {
    Lease {
        owner,
        until: Utc::now() + chrono::Duration::seconds(15),
    }
}

// ---------------------------------------------------------------- 1. transitions

/// The next transition of a route in the transitions loop: a failure when
/// it runs (with `failed`'s 4 KiB evidence), the dispatch of the retry when
/// it waits, retry-now when it needs a person.
fn next_plan(world: World<'_>, row: &RouteRow, failed: &Failure) -> Plan {
    let now = Utc::now();
    match row.state {
        RouteState::Running => {
            let mut f = failed.clone();
            f.number = row.attempts;
            if let Some(c) = f.evidence.correlation.as_mut() {
                c.route_id = row.id.to_string();
                c.generation = row.generation;
                c.attempt = row.attempts;
            }
            machine::failed(row, f, lease("bench"), world, now).expect("running")
        }
        RouteState::WaitingReset | RouteState::RetryScheduled => {
            machine::timer_fired(row, lease("bench"), world, now).expect("waiting routes dispatch")
        }
        RouteState::NeedsManual => machine::manual(
            row,
            recourse::route::Ask::new(
                ManualAction::RetryNow,
                row.generation,
                recourse::route::Actor::Cli,
            )
            .accepting_repeat(),
            lease("bench"),
            world,
            now,
        )
        .expect("retry-now is valid in needs_manual"),
        RouteState::Queued | RouteState::Stopped | RouteState::Succeeded => {
            panic!("the transitions loop never queues, stops or succeeds a route")
        }
    }
}

fn transitions(dir: &Path, n: usize) {
    let path = dir.join("transitions.db");
    let (mut store, profile) = store_with_profile(&path);
    let mut rows: Vec<RouteRow> = (0..1_000)
        .map(|_| new_route(&mut store, &profile, "bench"))
        .collect();
    let evidence = overloaded_4kib();
    let classified = failure(&rows[0], &evidence);
    let (mut committed, mut kinds) = (Duration::ZERO, [0usize; 2]);
    let mut sizes = Vec::with_capacity(n);
    let started = Instant::now();
    for i in 0..n {
        let slot = i % rows.len();
        let plan = next_plan(world(&store), &rows[slot], &classified);
        kinds[0] += usize::from(plan.write().result().is_some());
        kinds[1] += usize::from(plan.write().dispatch().is_some());
        sizes.push(written_bytes(&plan));
        let t = Instant::now();
        rows[slot] = commit(&mut store, plan);
        committed += t.elapsed();
    }
    let wall = started.elapsed();
    let settings = store.journal_settings().expect("settings read");
    drop(store);
    let raw = raw_insert_loop(&dir.join("raw.db"), &settings, &sizes);
    let per_commit = committed / n as u32;
    let per_raw = raw / n as u32;
    println!("\n## 1. Committed transitions");
    println!(
        "journal_mode={} synchronous={} (read from the store's connection; the raw loop uses the same)",
        settings.journal_mode, settings.synchronous
    );
    println!(
        "{n} transitions over 1000 routes: {} wrote an attempt result with {} B of sanitized evidence, {} an attempt row; {:.0} B of row data per transition on average (the raw rows have the same sizes)",
        kinds[0],
        evidence.message.len(),
        kinds[1],
        sizes.iter().sum::<usize>() as f64 / n as f64
    );
    println!("| measure | per op | ops/s |");
    println!("| --- | --- | --- |");
    row_line("commit_transition (store only)", per_commit);
    row_line("transition incl. planning", wall / n as u32);
    row_line("raw INSERT, one transaction per row", per_raw);
    println!(
        "ratio commit_transition / raw insert: {:.2}x",
        per_commit.as_secs_f64() / per_raw.as_secs_f64()
    );
}

fn row_line(what: &str, per: Duration) {
    println!(
        "| {what} | {:.1} µs | {:.0} |",
        per.as_secs_f64() * 1e6,
        1.0 / per.as_secs_f64()
    );
}

/// Bytes of row data a transition writes: the whole route row (SQLite
/// rewrites the record) and the attempt or result row, JSON as stored.
fn written_bytes(plan: &Plan) -> usize {
    let r = plan.next();
    let mut n = r.profile_name.len() + r.prompt.len() + 200;
    // The candidate snapshot is not rewritten: it is written once per route.
    n += json(&r.cycle) + json(&r.classification) + json(&r.policy);
    // The words as stored: accounts by id.
    let stored = recourse::account::AccountNames::ids();
    n += r.decision.as_ref().map_or(0, |d| d.text(&stored).len());
    n += r.manual_reason.as_ref().map_or(0, |m| m.text().len());
    if let Some(a) = plan.write().dispatch() {
        n += a.candidate_name.len() + a.invocation_id.len() + 60;
    }
    if let Some(res) = plan.write().result() {
        n +=
            json(&res.classification) + json(&res.effect) + json(&res.policy) + json(&res.evidence);
        n += res.excerpt.as_deref().map_or(0, str::len)
            + res.decision.as_ref().map_or(0, |d| d.text(&stored).len())
            + 60;
    }
    n
}

/// Length of a value as the store writes it (JSON).
fn json<T: serde::Serialize>(v: &T) -> usize {
    serde_json::to_string(v).map_or(0, |s| s.len())
}

/// Inserts one row per size in `sizes`, one `BEGIN IMMEDIATE … COMMIT` each.
fn raw_insert_loop(
    path: &Path,
    settings: &recourse::store::JournalSettings,
    sizes: &[usize],
) -> Duration {
    let mut conn = Connection::open(path).expect("raw db opens");
    conn.pragma_update(None, "journal_mode", &settings.journal_mode)
        .expect("journal mode set");
    conn.pragma_update(None, "synchronous", settings.synchronous)
        .expect("synchronous set");
    let mode: String = conn
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .expect("journal mode read");
    let sync: i64 = conn
        .query_row("PRAGMA synchronous", [], |r| r.get(0))
        .expect("synchronous read");
    assert_eq!(
        (mode.as_str(), sync),
        (settings.journal_mode.as_str(), settings.synchronous),
        "the raw baseline runs with the store's settings"
    );
    conn.execute_batch(
        "CREATE TABLE rows (id INTEGER PRIMARY KEY, route_id INTEGER NOT NULL, body TEXT NOT NULL)",
    )
    .expect("table created");
    let bodies: Vec<String> = sizes.iter().map(|&len| "x".repeat(len)).collect();
    let started = Instant::now();
    for (i, body) in bodies.iter().enumerate() {
        let tx = conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .expect("begin");
        tx.prepare_cached("INSERT INTO rows (route_id, body) VALUES (?1, ?2)")
            .expect("prepared")
            .execute(params![(i % 1000) as i64, body])
            .expect("inserted");
        tx.commit().expect("committed");
    }
    started.elapsed()
}

// ---------------------------------------------------------------- 4. transcripts

/// The database file's size once its write-ahead log is folded in.
fn file_bytes(path: &Path) -> u64 {
    let conn = Connection::open(path).expect("db opens");
    conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
        .expect("checkpoint");
    std::fs::metadata(path).expect("db file").len()
}

/// `n` succeeded routes, then one transcript saved per attempt: the growth
/// per attempt beside the transcript's own JSON size.
fn transcript_growth(dir: &Path, n: usize) {
    println!("\n## Transcripts: database growth per attempt ({n} attempts each)");
    println!("| transcript | its JSON | file growth per attempt | save (median) |");
    println!("| --- | --- | --- | --- |");
    for (what, t) in [
        ("typical", typical_transcript()),
        ("longest kept (the bound)", longest_transcript()),
    ] {
        let path = dir.join(format!("transcripts-{}.db", what.len()));
        let (mut store, profile) = store_with_profile(&path);
        let mut ids = Vec::with_capacity(n);
        for _ in 0..n {
            let running = new_route(&mut store, &profile, "bench");
            let done = commit(
                &mut store,
                machine::succeeded(&running, running.attempts, Utc::now()).expect("running"),
            );
            ids.push(done.id);
        }
        let before = file_bytes(&path);
        let mut took = Vec::with_capacity(n);
        for id in ids {
            let t0 = Instant::now();
            store
                .save_transcript(id, 1, &t, None)
                .expect("transcript saved");
            took.push(t0.elapsed());
        }
        took.sort();
        let growth = (file_bytes(&path) - before) as f64 / n as f64;
        println!(
            "| {what} | {:.1} KiB | {:.1} KiB | {:.0} µs |",
            json(&t) as f64 / 1024.0,
            growth / 1024.0,
            took[n / 2].as_secs_f64() * 1e6
        );
    }
}

// ---------------------------------------------------------------- templates

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Kind {
    Succeeded,
    NeedsManual,
    Stopped,
    WaitingReset,
    RetryScheduled,
    Running,
    /// Succeeded, its attempt holding the longest transcript kept (the
    /// newest route of the app's database: the one opened to time it).
    LongTranscript,
}

/// Per 100 routes: 64 succeeded, 15 needs_manual, 10 stopped, 5
/// waiting_reset, 5 retry_scheduled, 1 running with a dead owner.
fn realistic_mix(i: usize) -> Kind {
    match i % 100 {
        0..64 => Kind::Succeeded,
        64..79 => Kind::NeedsManual,
        79..89 => Kind::Stopped,
        89..94 => Kind::WaitingReset,
        94..99 => Kind::RetryScheduled,
        _ => Kind::Running,
    }
}

/// One route per kind, made through the store API and the real state
/// machine, owned by a dead engine.
fn make_templates(path: &Path) {
    let (mut store, profile) = store_with_profile(path);
    let short = overloaded_short();
    let later = Utc::now() + chrono::Duration::hours(1);
    for kind in [
        Kind::Succeeded,
        Kind::NeedsManual,
        Kind::Stopped,
        Kind::WaitingReset,
        Kind::RetryScheduled,
        Kind::Running,
        Kind::LongTranscript,
    ] {
        let row = template(&mut store, &profile, kind, &short, later);
        assert_eq!(row.id, kind as u32 + 1, "template ids follow Kind order");
        if !with_transcripts() {
            continue;
        }
        // Every attempt that ended has its transcript, as the engine saves them.
        let ended = if row.state == RouteState::Running {
            row.attempts - 1
        } else {
            row.attempts
        };
        for number in 1..=ended {
            let t = if kind == Kind::LongTranscript {
                longest_transcript()
            } else {
                typical_transcript()
            };
            store
                .save_transcript(row.id, number, &t, None)
                .expect("transcript saved");
        }
    }
}

/// Templates get transcripts unless `BENCH_TRANSCRIPTS=none` (the figures
/// of before transcripts existed).
fn with_transcripts() -> bool {
    std::env::var("BENCH_TRANSCRIPTS").map_or(true, |v| v != "none")
}

/// A coding attempt's transcript of ordinary size: a dozen messages, twenty
/// tool calls (two refused), an answer, usage (≈ 9 KiB as JSON).
fn typical_transcript() -> Transcript {
    let mut t = Transcript::default();
    t.session("4f1c2a0e-7b9d-4c1e-9a52-0d6f3e8b7a11");
    t.model("claude-sonnet-4-5");
    for i in 0..20 {
        if i % 2 == 0 {
            t.say(&format!("Step {i}: the test fails because the fixture server is started after the client connects; I will look at how the harness orders them and move the start before the first request, then run the suite again to see whether the flake is gone. {}", "Checking the logs for the timing. ".repeat(4)), false);
        }
        let id = format!("toolu_{i:02}");
        let input = serde_json::json!({"file_path": format!("tests/integration/server_{i}.rs"), "old_string": "start()", "new_string": "start().await"});
        let status = if i == 7 || i == 13 {
            ToolStatus::Refused
        } else {
            ToolStatus::Completed
        };
        t.tool(
            &id,
            if i % 3 == 0 { "Bash" } else { "Edit" },
            Some(&input),
            ToolStatus::Started,
        );
        t.tool_ended(
            &id,
            if i % 3 == 0 { "Bash" } else { "Edit" },
            status,
            (status == ToolStatus::Refused).then_some("Permission to use Bash has been denied."),
        );
    }
    t.answer(&"The flaky test is fixed: the fixture server now starts before the client connects, and the suite passed ten times in a row. ".repeat(6));
    t.add_usage(Usage {
        input_tokens: 48_210,
        output_tokens: 3_904,
        cache_read_tokens: 120_000,
        cache_write_tokens: 9_000,
        cost_usd: Some(0.4213),
    });
    t.sanitized()
}

/// The most a transcript keeps: an agent that wrote far more than the bound,
/// so the first and last parts are kept and the middle counted.
fn longest_transcript() -> Transcript {
    let mut t = Transcript::default();
    t.session("9a7e0c55-2f44-4b61-8d0e-5c3b1f2a6d90");
    for i in 0..4_000 {
        t.say(
            &format!(
                "Message {i}: {}",
                "reading the next module and comparing it with the failing case; ".repeat(3)
            ),
            false,
        );
        let id = format!("toolu_{i:04}");
        let input =
            serde_json::json!({"command": format!("cargo test -p worker --test chunk_{i}")});
        t.tool(&id, "Bash", Some(&input), ToolStatus::Started);
        t.tool_ended(&id, "Bash", ToolStatus::Completed, None);
    }
    t.answer(&"Done: every chunk test passes. ".repeat(40));
    t.sanitized()
}

fn template(
    store: &mut Store,
    profile: &recourse::profile::Profile,
    kind: Kind,
    short: &Evidence,
    later: DateTime<Utc>,
) -> RouteRow {
    let now = Utc::now();
    let dead = Lease {
        owner: DEAD_OWNER,
        until: now - chrono::Duration::minutes(1),
    };
    let running = new_route(store, profile, DEAD_OWNER);
    let world = world(store);
    let retry = |store: &mut Store, row: &RouteRow| {
        commit(
            store,
            machine::failed(row, failure(row, short), dead, world, now).expect("running"),
        )
    };
    let row = match kind {
        Kind::Running => running,
        Kind::RetryScheduled => retry(store, &running),
        Kind::WaitingReset => {
            let f = failure(&running, &usage_limit(later));
            commit(
                store,
                machine::failed(&running, f, dead, world, now).expect("running"),
            )
        }
        Kind::NeedsManual => commit(
            store,
            machine::interrupted(&running, Interruption::EngineStopped, now).expect("running"),
        ),
        Kind::Stopped => {
            let waiting = retry(store, &running);
            let plan = machine::manual(
                &waiting,
                recourse::route::Ask::new(
                    ManualAction::Stop,
                    waiting.generation,
                    recourse::route::Actor::Cli,
                )
                .accepting_repeat(),
                dead,
                world,
                now,
            )
            .expect("stop is valid while waiting");
            commit(store, plan)
        }
        Kind::Succeeded | Kind::LongTranscript => {
            let waiting = retry(store, &running);
            let again = commit(
                store,
                machine::timer_fired(&waiting, dead, world, now).expect("waiting"),
            );
            commit(
                store,
                machine::succeeded(&again, again.attempts, now).expect("running"),
            )
        }
    };
    assert_eq!(row.state, expected_state(kind), "template {kind:?}");
    row
}

fn expected_state(kind: Kind) -> RouteState {
    match kind {
        Kind::Succeeded | Kind::LongTranscript => RouteState::Succeeded,
        Kind::NeedsManual => RouteState::NeedsManual,
        Kind::Stopped => RouteState::Stopped,
        Kind::WaitingReset => RouteState::WaitingReset,
        Kind::RetryScheduled => RouteState::RetryScheduled,
        Kind::Running => RouteState::Running,
    }
}

/// Copies `n` routes from the templates into a fresh database at `path`,
/// in one transaction. `deadline(i)` replaces the deadline of waiting ones.
/// Returns the id, kind and deadline of every copied route.
fn populate(
    path: &Path,
    template: &Path,
    n: usize,
    mix: impl Fn(usize) -> Kind,
    deadline: impl Fn(usize) -> DateTime<Utc>,
) -> Vec<(u32, Kind, DateTime<Utc>)> {
    drop(store_with_profile(path));
    let mut conn = Connection::open(path).expect("db opens");
    conn.pragma_update(None, "cache_size", -256_000)
        .expect("page cache for the bulk copy");
    conn.execute(
        "ATTACH DATABASE ?1 AS tpl",
        [template.display().to_string()],
    )
    .expect("template attached");
    let tx = conn.transaction().expect("begin");
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let kind = mix(i);
        let at = deadline(i);
        let id = copy_route(&tx, kind as u32 + 1, &stamp(at));
        out.push((id, kind, at));
    }
    tx.commit().expect("populated");
    out
}

/// The only SQL this bench writes to the store's tables: one route row and
/// its attempts, results and transcripts, copied from a template.
fn copy_route(tx: &rusqlite::Transaction<'_>, template_id: u32, deadline: &str) -> u32 {
    tx.prepare_cached(
        "INSERT INTO main.routes (profile_id, profile_name, prompt, cwd, state, generation, \
         candidate_index, cycle_json, classification_json, policy_json, decision, \
         deadline, pending_outcome, manual_reason, owner, lease_until, created_at, updated_at) \
         SELECT profile_id, profile_name, prompt, cwd, state, generation, candidate_index, \
         cycle_json, classification_json, policy_json, decision, \
         CASE WHEN deadline IS NULL THEN NULL ELSE ?2 END, pending_outcome, manual_reason, owner, \
         lease_until, created_at, updated_at FROM tpl.routes WHERE id = ?1",
    )
    .expect("prepared")
    .execute(params![template_id, deadline])
    .expect("route copied");
    let id = tx.last_insert_rowid() as u32;
    tx.prepare_cached(
        "INSERT INTO main.route_snapshots (route_id, candidates_json) \
         SELECT ?2, candidates_json FROM tpl.route_snapshots WHERE route_id = ?1",
    )
    .expect("prepared")
    .execute(params![template_id, id])
    .expect("snapshot copied");
    tx.prepare_cached(
        "INSERT INTO main.attempts (route_id, number, generation, candidate_index, candidate_id, \
         candidate_name, invocation_id, started_at) \
         SELECT ?2, number, generation, candidate_index, candidate_id, candidate_name, \
         'r' || ?2 || '-a' || number || '-bench', started_at FROM tpl.attempts WHERE route_id = ?1",
    )
    .expect("prepared")
    .execute(params![template_id, id])
    .expect("attempts copied");
    tx.prepare_cached(
        "INSERT INTO main.attempt_results (attempt_id, finished_at, outcome, code, class, rule_id, \
         catalogue_version, classification_json, effect_json, policy_revision, policy_json, \
         decision, evidence_json, excerpt) \
         SELECT n.id, r.finished_at, r.outcome, r.code, r.class, r.rule_id, r.catalogue_version, \
         r.classification_json, r.effect_json, r.policy_revision, r.policy_json, r.decision, \
         r.evidence_json, r.excerpt FROM tpl.attempt_results r \
         JOIN tpl.attempts o ON o.id = r.attempt_id \
         JOIN main.attempts n ON n.route_id = ?2 AND n.number = o.number WHERE o.route_id = ?1",
    )
    .expect("prepared")
    .execute(params![template_id, id])
    .expect("results copied");
    tx.prepare_cached(
        "INSERT INTO main.attempt_transcripts (attempt_id, transcript_json, files_json, \
         session_id, answer_excerpt, tool_calls, refused_json, input_tokens, output_tokens, \
         cost_usd, files_changed) \
         SELECT n.id, t.transcript_json, t.files_json, t.session_id, t.answer_excerpt, \
         t.tool_calls, t.refused_json, t.input_tokens, t.output_tokens, t.cost_usd, \
         t.files_changed FROM tpl.attempt_transcripts t \
         JOIN tpl.attempts o ON o.id = t.attempt_id \
         JOIN main.attempts n ON n.route_id = ?2 AND n.number = o.number WHERE o.route_id = ?1",
    )
    .expect("prepared")
    .execute(params![template_id, id])
    .expect("transcripts copied");
    id
}

/// The store's timestamp format (RFC 3339, milliseconds, `Z`).
fn stamp(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Millis, true)
}

// ---------------------------------------------------------------- 2. reconciliation

fn adopting() -> EngineOptions {
    EngineOptions {
        seed_demo: false,
        adopt_orphans: true,
        lease: Duration::from_secs(15),
    }
}

fn reconciliation(rt: &Runtime, dir: &Path, template: &Path, sizes: &Sizes) {
    println!("\n## 3. Restart reconciliation");
    println!("mix per 100 routes: 64 succeeded, 15 needs_manual, 10 stopped, 5 waiting_reset, 5 retry_scheduled (deadlines 1 h ahead), 1 running; waiting and running ones owned by a dead engine");
    println!("| routes | populate | Engine::open (reconciled) | per route | adopted waits | interrupted |");
    println!("| --- | --- | --- | --- | --- | --- |");
    let mut first = None;
    let mut last = None;
    for &n in &sizes.reconcile {
        let path = dir.join(format!("reconcile-{n}.db"));
        let started = Instant::now();
        let routes = populate(&path, template, n, realistic_mix, |_| {
            Utc::now() + chrono::Duration::hours(1)
        });
        let populate_time = started.elapsed();
        let (open, engine) = rt.block_on(async {
            let t = Instant::now();
            let engine = Engine::open(&path, adopting()).await.expect("engine opens");
            (t.elapsed(), engine)
        });
        let count = |k: &[Kind]| routes.iter().filter(|r| k.contains(&r.1)).count();
        println!(
            "| {n} | {:.2} s | {:.3} s | {:.1} µs | {} | {} |",
            populate_time.as_secs_f64(),
            open.as_secs_f64(),
            open.as_secs_f64() * 1e6 / n as f64,
            count(&[Kind::WaitingReset, Kind::RetryScheduled]),
            count(&[Kind::Running]),
        );
        first.get_or_insert((n, open));
        last = Some((n, open));
        if n == sizes.reconcile[2] {
            steady_state(rt, &path, &routes, sizes.steady_window);
        }
        rt.block_on(engine.shutdown());
    }
    if let (Some((n0, t0)), Some((n1, t1))) = (first, last) {
        println!(
            "growth {n0} → {n1} routes ({}x): open time {:.1}x",
            n1 / n0,
            t1.as_secs_f64() / t0.as_secs_f64()
        );
    }
}

/// CPU the open engine uses with this many routes: idle (lease renewal and
/// reconcile every 5 s, `data_version` every second), then with another
/// connection cancelling one wait per second (each noticed by the engine).
fn steady_state(
    rt: &Runtime,
    path: &Path,
    routes: &[(u32, Kind, DateTime<Utc>)],
    window: Duration,
) {
    let idle = rt.block_on(cpu_over(window, || {}));
    let mut other = Store::open(path).expect("second connection");
    let mut waits = routes
        .iter()
        .filter(|r| matches!(r.1, Kind::WaitingReset | Kind::RetryScheduled))
        .map(|r| r.0);
    let busy = rt.block_on(cpu_over(window, || {
        let Some(id) = waits.next() else { return };
        let row = other.route(id).expect("read").expect("exists");
        let plan = machine::manual(
            &row,
            recourse::route::Ask::new(
                ManualAction::CancelWait,
                row.generation,
                recourse::route::Actor::Cli,
            )
            .accepting_repeat(),
            lease("other"),
            world(&other),
            Utc::now(),
        )
        .expect("cancel-wait is valid");
        commit(&mut other, plan);
    }));
    println!(
        "steady state with {} routes: idle {:.2}% of one core; with one external change per second {:.2}% (over {} s each)",
        routes.len(),
        idle,
        busy,
        window.as_secs()
    );
}

/// Process CPU (user + system) over `window` as % of one core, calling
/// `each_second` once a second.
async fn cpu_over(window: Duration, mut each_second: impl FnMut()) -> f64 {
    let before = cpu_time();
    let started = Instant::now();
    while started.elapsed() < window {
        tokio::time::sleep(Duration::from_secs(1)).await;
        each_second();
    }
    let used = cpu_time() - before;
    100.0 * used.as_secs_f64() / started.elapsed().as_secs_f64()
}

#[allow(unsafe_code)]
fn cpu_time() -> Duration {
    // SAFETY: getrusage only writes the struct it is given.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut usage);
        usage
    };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1_000);
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

fn vm_rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kib: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(f64::NAN);
    kib / 1024.0
}

// ---------------------------------------------------------------- 3. deadlines

fn pending_deadlines(rt: &Runtime, dir: &Path, template: &Path, sizes: &Sizes) {
    let n = sizes.deadlines;
    println!("\n## 2. {n} pending deadlines");
    let path = dir.join("idle.db");
    populate(
        &path,
        template,
        n,
        |_| Kind::RetryScheduled,
        |_| Utc::now() + chrono::Duration::hours(1),
    );
    let rss_before = vm_rss_mib();
    let engine = rt.block_on(async { Engine::open(&path, adopting()).await.expect("opens") });
    rt.block_on(async { tokio::time::sleep(Duration::from_secs(2)).await });
    let cpu = rt.block_on(cpu_over(sizes.idle_window, || {}));
    println!(
        "idle engine with {n} armed retries 1 h ahead: {cpu:.2}% of one core over {} s; VmRSS {:.1} MiB ({:.1} MiB before open)",
        sizes.idle_window.as_secs(),
        vm_rss_mib(),
        rss_before
    );
    heartbeat_costs(&path, engine.instance());
    rt.block_on(engine.shutdown());
    drop(engine);
    engine_lateness(rt, dir, template, n, sizes.spread);
}

/// What the idle engine's two periodic duties cost, each on a second
/// connection to its database: a lease renewal for the engine's `owner`
/// (every lease/3, 5 s) and the change poll (`PRAGMA data_version`, every
/// second).
fn heartbeat_costs(path: &Path, owner: &str) {
    let store = Store::open(path).expect("second connection");
    let renewals = 20;
    let started = Instant::now();
    for _ in 0..renewals {
        let now = Utc::now();
        store
            .renew_leases(owner, now + chrono::Duration::seconds(15), now)
            .expect("renewed");
    }
    let renewal = started.elapsed() / renewals;
    let polls = 10_000;
    let started = Instant::now();
    for _ in 0..polls {
        std::hint::black_box(store.data_version().expect("polled"));
    }
    let poll = started.elapsed() / polls;
    println!(
        "lease renewal: {:.3} ms each ({:.3} % of a core at one per 5 s); change poll: {:.1} µs each ({:.4} % at one per second)",
        renewal.as_secs_f64() * 1e3,
        renewal.as_secs_f64() / 5.0 * 100.0,
        poll.as_secs_f64() * 1e6,
        poll.as_secs_f64() * 100.0
    );
}

/// Deadlines spread over `spread`, the first 6 s after populating (opening
/// and adopting happen in between). Lateness is measured twice: when the
/// event of the dispatching generation was received, and the dispatched
/// attempt's stored `started_at`, each minus the stored deadline.
fn engine_lateness(rt: &Runtime, dir: &Path, template: &Path, n: usize, spread: Duration) {
    let path = dir.join("lateness.db");
    let first = Utc::now() + chrono::Duration::seconds(6);
    let step = spread / n as u32;
    let routes = populate(
        &path,
        template,
        n,
        |_| Kind::RetryScheduled,
        |i| first + chrono::Duration::from_std(step * i as u32).expect("small"),
    );
    let deadlines: HashMap<u32, DateTime<Utc>> = routes.iter().map(|r| (r.0, r.2)).collect();
    let (received, lagged, open) = rt.block_on(async {
        let t = Instant::now();
        let engine = Engine::open(&path, adopting()).await.expect("opens");
        let open = t.elapsed();
        let events = collect_dispatches(&engine, &deadlines).await;
        engine.shutdown().await;
        (events.0, events.1, open)
    });
    let store = Store::open(&path).expect("reopens");
    let planned: Vec<f64> = deadlines
        .iter()
        .filter_map(|(id, at)| {
            let attempts = store.attempts(*id).expect("attempts read");
            let fired = attempts.get(1)?.attempt.started_at;
            Some(ms(fired - *at))
        })
        .collect();
    println!(
        "engine: {n} retry deadlines over {} s, first 6 s after populating (open + adoption took {:.2} s)",
        spread.as_secs(),
        open.as_secs_f64()
    );
    println!("| timer lateness | fired | p50 | p99 | max |");
    println!("| --- | --- | --- | --- | --- |");
    let published: Vec<f64> = received
        .iter()
        .map(|(id, at)| ms(*at - deadlines[id]))
        .collect();
    lateness_line("engine: event received − deadline", &published);
    lateness_line("engine: stored dispatch time − deadline", &planned);
    if lagged > 0 {
        println!("({lagged} events were lost to a lagging receiver)");
    }
}

/// Records when the event of each route's dispatch (its first generation
/// after adoption) arrived, until all fired or the spread plus 10 s passed.
async fn collect_dispatches(
    engine: &Engine,
    deadlines: &HashMap<u32, DateTime<Utc>>,
) -> (Vec<(u32, DateTime<Utc>)>, u64) {
    let mut events = engine.subscribe();
    let mut got = Vec::with_capacity(deadlines.len());
    let mut lagged = 0;
    let last = deadlines.values().max().copied().unwrap_or_else(Utc::now);
    let give_up = tokio::time::Instant::now()
        + (last - Utc::now()).to_std().unwrap_or_default()
        + Duration::from_secs(10);
    while got.len() < deadlines.len() {
        let ev = tokio::select! {
            ev = events.recv() => ev,
            () = tokio::time::sleep_until(give_up) => break,
        };
        match ev {
            Ok(ev) if ev.snapshot.state == RouteState::Running => {
                got.push((ev.route_id, Utc::now()));
            }
            Ok(_) => {}
            Err(tokio::sync::broadcast::error::RecvError::Lagged(k)) => lagged += k,
            Err(tokio::sync::broadcast::error::RecvError::Closed) => break,
        }
    }
    (got, lagged)
}

fn ms(d: chrono::Duration) -> f64 {
    d.num_microseconds().unwrap_or(i64::MAX) as f64 / 1_000.0
}

fn lateness_line(what: &str, late_ms: &[f64]) {
    let mut v = late_ms.to_vec();
    v.sort_by(f64::total_cmp);
    let at = |q: f64| v[((v.len() - 1) as f64 * q).round() as usize];
    if v.is_empty() {
        println!("| {what} | 0 | – | – | – |");
        return;
    }
    println!(
        "| {what} | {} | {:.1} ms | {:.1} ms | {:.1} ms |",
        v.len(),
        at(0.5),
        at(0.99),
        v[v.len() - 1]
    );
}

/// The bare scheduler with `n` deadlines spread over `spread`, 1 s ahead.
fn scheduler_lateness(rt: &Runtime, n: usize, spread: Duration) {
    let late = rt.block_on(async {
        let cancel = CancellationToken::new();
        let (scheduler, mut fired, task) = Scheduler::start(cancel.clone());
        let first = tokio::time::Instant::now() + Duration::from_secs(1);
        let step = spread / n as u32;
        let at: Vec<tokio::time::Instant> = (0..n).map(|i| first + step * i as u32).collect();
        for (key, t) in at.iter().enumerate() {
            scheduler.arm(key as u32, 1, *t);
        }
        let mut late = Vec::with_capacity(n);
        for _ in 0..n {
            let f = fired.recv().await.expect("fires");
            let now = tokio::time::Instant::now();
            late.push((now - at[f.key as usize]).as_secs_f64() * 1e3);
        }
        cancel.cancel();
        task.await.expect("scheduler task ends");
        late
    });
    lateness_line("bare Scheduler: received − deadline", &late);
}

// ---------------------------------------------------------------- 4. app database

/// Writes the start-up benchmark's database: `APP_DB_ROUTES` routes in the
/// realistic mix, waits due in 1 h, owned by a dead engine so the app adopts
/// them as it would after a crash.
fn app_database(template: &Path) {
    let path =
        std::env::var_os("APP_DB").expect("app-db needs APP_DB=<path of the database to write>");
    let n: usize = std::env::var("APP_DB_ROUTES")
        .map(|v| v.parse().expect("APP_DB_ROUTES is a whole number"))
        .unwrap_or(1_000);
    let path = Path::new(&path);
    if path.exists() {
        panic!(
            "{} exists; the app-db section never overwrites a database",
            path.display()
        );
    }
    // The newest route (listed first) holds the longest transcript, so the
    // start-up bench can time opening it.
    let mix = |i: usize| {
        if i + 1 == n && with_transcripts() {
            Kind::LongTranscript
        } else {
            realistic_mix(i)
        }
    };
    let routes = populate(path, template, n, mix, |_| {
        Utc::now() + chrono::Duration::hours(1)
    });
    println!(
        "\n## App database\nwrote {} routes to {}",
        routes.len(),
        path.display()
    );
}
