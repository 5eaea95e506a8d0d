//! `recourse run`: start a route on a profile and follow it until it
//! succeeds or needs a person. Its transitions go to stderr and the agent's
//! final answer to stdout, so `answer=$(recourse run …)` works; `--json`
//! prints one result document instead of the answer.

use std::collections::{BTreeMap, BTreeSet};

use anyhow::{bail, Context, Result};
use chrono::Utc;
use clap::Args;
use recourse::engine::{Engine, EngineOptions, StartRun};
use recourse::route::RouteState;

use super::exit::Exit;
use super::interrupts::{say, Interrupts};
use super::routes::{line, DbArg};

#[derive(Args)]
pub struct RunArgs {
    /// Profile name
    #[arg(long)]
    profile: String,
    /// The task for the agent
    #[arg(long)]
    prompt: String,
    /// Working directory of the agent
    #[arg(long)]
    cwd: Option<String>,
    /// Print one JSON document (route, state, answer, usage, session id,
    /// files changed) on stdout instead of the answer
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    db: DbArg,
}

/// Where a followed route's transitions are printed: `recourse run` keeps
/// stdout for the answer, `action` and `recover` print them as their output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    Stdout,
    Stderr,
}

impl Progress {
    pub fn say(self, text: &str) {
        match self {
            Progress::Stdout => println!("{text}"),
            Progress::Stderr => eprintln!("{text}"),
        }
    }
}

pub async fn run(args: RunArgs) -> Result<Exit> {
    let mut interrupts = Interrupts::listen()?;
    let path = args.db.path();
    check_profile_exists(&path, &args.profile)?;
    let opts = EngineOptions {
        adopt_orphans: false,
        ..EngineOptions::default()
    };
    let engine = Engine::open(&path, opts)
        .await
        .with_context(|| format!("opening {}", path.display()))?;
    note_orphans(&engine, None);
    let result = start_and_follow(&engine, args, &mut interrupts).await;
    engine.shutdown().await;
    result
}

/// Refuses an unknown profile before anything is opened for writing, so a
/// mistyped name creates no database and seeds nothing. A database not
/// created yet holds only the demo profile its first start seeds.
fn check_profile_exists(path: &std::path::Path, name: &str) -> Result<()> {
    let profiles = if recourse::engine::database_exists(path)? {
        recourse::engine::RouteViewer::open(path)
            .with_context(|| format!("opening {}", path.display()))?
            .list_profiles()?
    } else if name == recourse::engine::DEMO_PROFILE {
        return Ok(());
    } else {
        Vec::new()
    };
    if profiles.iter().any(|p| p.name == name) {
        return Ok(());
    }
    bail!(super::profile::unknown_profile(name, &profiles))
}

/// Says on stderr which active routes (other than `except`) were left by a
/// process that is gone, and that `recourse recover` takes them over.
pub fn note_orphans(engine: &Engine, except: Option<u32>) {
    let orphans: Vec<String> = match engine.orphaned_routes() {
        Ok(found) => found
            .iter()
            .filter(|s| Some(s.id) != except)
            .map(|s| format!("route {} ({})", s.id, s.state.words()))
            .collect(),
        Err(e) => {
            tracing::warn!("cannot look for orphaned routes: {e}");
            return;
        }
    };
    match orphans.as_slice() {
        [] => {}
        [one] => eprintln!(
            "note: {one} was left by a process that is gone; `recourse recover` takes it over"
        ),
        many => eprintln!(
            "note: {} were left by processes that are gone; `recourse recover` takes them over",
            many.join(", ")
        ),
    }
}

async fn start_and_follow(
    engine: &Engine,
    args: RunArgs,
    interrupts: &mut Interrupts,
) -> Result<Exit> {
    let profile = engine.profile_by_name(&args.profile)?;
    if let Some(signal) = interrupts.already().await {
        say("interrupted before the route started; nothing was started");
        return Ok(Exit::Interrupted { signal });
    }
    let mut events = engine.subscribe();
    let start = engine
        .start_run(StartRun {
            profile_id: profile.id,
            prompt: args.prompt,
            cwd: args.cwd,
        })
        .await?;
    // The start is printed from its event, like every later transition.
    let exit = follow(engine, &mut events, start.id, interrupts, Progress::Stderr).await?;
    let result = RunResult::of(engine, start.id, exit)?;
    if args.json {
        println!(
            "{}",
            recourse::controls::escape_json(&serde_json::to_string_pretty(&result)?)
        );
    } else {
        result.print();
    }
    Ok(exit)
}

/// What `recourse run --json` prints: the route, how it ended, and what its
/// last attempt's agent answered and did.
#[derive(serde::Serialize)]
struct RunResult {
    route: u32,
    state: &'static str,
    exit_code: u8,
    /// The final answer of the last attempt (when it gave one).
    answer: Option<String>,
    /// Tokens and cost of every attempt together.
    usage: recourse::agent::Usage,
    /// The agent CLI's own session id, for resuming it.
    session_id: Option<String>,
    /// Files of the working directory the last attempt changed (`None`: not
    /// a git repository).
    files_changed: Option<Vec<recourse::agent::FileChange>>,
    /// Tool uses the access level refused, and what that means.
    refused: Vec<String>,
    refused_notice: Option<String>,
    /// Why a person is needed, when one is.
    manual_reason: Option<String>,
}

impl RunResult {
    fn of(engine: &Engine, route: u32, exit: Exit) -> Result<RunResult> {
        let detail = engine.route_detail(route)?;
        let last = detail.attempts.last();
        let full = last.and_then(|a| engine.attempt_transcript(route, a.number).ok());
        Ok(RunResult {
            route,
            state: detail.snapshot.state.as_str(),
            exit_code: exit.code(),
            answer: full.as_ref().and_then(|t| t.transcript.answer.clone()),
            usage: detail.totals,
            session_id: full.as_ref().and_then(|t| t.transcript.session_id.clone()),
            files_changed: full
                .as_ref()
                .and_then(|t| t.files.as_ref().map(|f| f.files.clone())),
            refused: last
                .and_then(|a| a.transcript.as_ref())
                .map(|t| t.refused.clone())
                .unwrap_or_default(),
            refused_notice: detail.refused_notice,
            manual_reason: detail.snapshot.manual_reason,
        })
    }

    /// The answer on stdout, as the agent wrote it (its terminal escapes
    /// stripped when it was stored); what else a person should know on
    /// stderr.
    fn print(&self) {
        if let Some(notice) = &self.refused_notice {
            eprintln!("note: {notice}");
        }
        if let Some(files) = &self.files_changed {
            if !files.is_empty() {
                let names: Vec<String> = files
                    .iter()
                    .map(|f| recourse::controls::escape(&f.path).into_owned())
                    .collect();
                eprintln!(
                    "changed {} file{}: {}",
                    files.len(),
                    if files.len() == 1 { "" } else { "s" },
                    names.join(", ")
                );
            }
        }
        let u = &self.usage;
        if u.input_tokens + u.output_tokens > 0 {
            let cost = u.cost_usd.map(|c| format!(", ${c:.4}")).unwrap_or_default();
            eprintln!(
                "tokens: {} in, {} out{cost}",
                u.input_tokens, u.output_tokens
            );
        }
        if self.state == RouteState::Succeeded.as_str() {
            if let Some(answer) = &self.answer {
                println!("{}", recourse::controls::escape_text(answer));
            }
        }
    }
}

/// Prints the route's transitions until it rests; see [`follow_all`].
pub async fn follow(
    engine: &Engine,
    events: &mut tokio::sync::broadcast::Receiver<recourse::engine::RouteEvent>,
    route_id: u32,
    interrupts: &mut Interrupts,
    progress: Progress,
) -> Result<Exit> {
    follow_all(engine, events, [(route_id, 0)].into(), interrupts, progress).await
}

/// Prints the routes' transitions until each rests; `routes` maps each to
/// the last generation already printed. [`Exit::Success`] when all
/// succeeded, [`Exit::NeedsYou`] when one needs a person,
/// [`Exit::TakenOver`] when another process took one over,
/// [`Exit::Interrupted`] on Ctrl-C, SIGTERM or SIGHUP (see
/// [`Interrupts`]): a running agent is stopped (its route then needs a
/// person), and a wait is left at its deadline for `recourse recover` or
/// the app, as the message says.
pub async fn follow_all(
    engine: &Engine,
    events: &mut tokio::sync::broadcast::Receiver<recourse::engine::RouteEvent>,
    mut routes: BTreeMap<u32, u32>,
    interrupts: &mut Interrupts,
    progress: Progress,
) -> Result<Exit> {
    let mut exit = Exit::Success;
    while !routes.is_empty() {
        let received = tokio::select! {
            // A signal first: after SIGHUP the terminal may be gone, and
            // printing one more transition must not come before the stop.
            biased;
            signal = interrupts.next() => {
                let ids: BTreeSet<u32> = routes.keys().copied().collect();
                return interrupted(engine, &ids, signal).await;
            }
            r = events.recv() => r,
        };
        let ev = match received {
            Ok(ev) => ev,
            Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
            Err(tokio::sync::broadcast::error::RecvError::Closed) => bail!("engine stopped"),
        };
        match routes.get_mut(&ev.route_id) {
            Some(printed) if ev.generation > *printed => *printed = ev.generation,
            Some(_) | None => continue,
        }
        let s = ev.snapshot;
        progress.say(&line(&s, Utc::now()));
        let owned_elsewhere = s.owner.as_deref().is_some_and(|o| o != engine.instance());
        match s.state {
            RouteState::Succeeded => {}
            RouteState::NeedsManual | RouteState::Stopped => {
                print_needs_you(&s, progress);
                exit = exit.max(Exit::NeedsYou);
            }
            RouteState::Running
            | RouteState::WaitingReset
            | RouteState::RetryScheduled
            | RouteState::Queued
                if owned_elsewhere =>
            {
                progress.say(&format!(
                    "route {} is now run by {}",
                    s.id,
                    recourse::controls::escape(s.owner.as_deref().unwrap_or_default())
                ));
                exit = exit.max(Exit::TakenOver);
            }
            RouteState::Running
            | RouteState::WaitingReset
            | RouteState::RetryScheduled
            | RouteState::Queued => {
                continue;
            }
        }
        routes.remove(&s.id);
    }
    Ok(exit)
}

/// A signal: stops this engine (killing its agents and their process
/// groups: their routes need a person) and says what became of each
/// followed route, read back after the stop so the words match the stored
/// state. A wait is not cancelled: it stays pending at its deadline with no
/// owner, for `recourse recover` or the app, and the message says until
/// when. Nothing here may fail before the stop: the stop is what keeps the
/// routes from being left `running`.
async fn interrupted(engine: &Engine, routes: &BTreeSet<u32>, signal: i32) -> Result<Exit> {
    let mut running = BTreeSet::new();
    for id in routes {
        let state = engine.route_detail(*id).map(|d| d.snapshot.state);
        if matches!(state, Ok(RouteState::Running)) {
            say(&format!("interrupted: stopping route {id}'s agent"));
            running.insert(*id);
        }
    }
    engine.shutdown().await;
    for id in routes {
        let s = engine.route_detail(*id)?.snapshot;
        if let Some(note) = after_interrupt(running.contains(id), &s) {
            say(&note);
        }
    }
    Ok(Exit::Interrupted { signal })
}

/// What became of a followed route once this engine stopped, from its
/// stored state: an agent that failed on its own just before the stop
/// leaves the route waiting for its retry, and the message must say so.
fn after_interrupt(was_running: bool, s: &recourse::engine::RouteSnapshot) -> Option<String> {
    let id = s.id;
    match (s.state, s.deadline) {
        (RouteState::WaitingReset | RouteState::RetryScheduled, Some(deadline)) => {
            let until = super::time::date_time(deadline);
            let why = if was_running {
                format!("route {id}'s agent failed before it could be stopped; ")
            } else {
                String::new()
            };
            Some(format!(
                "interrupted: {why}route {id} stays waiting until {until}; \
                 `recourse recover` or the app will take it over"
            ))
        }
        (RouteState::Queued, _) => Some(format!(
            "interrupted: route {id} stays queued; `recourse recover` or the app will take it over"
        )),
        // Its wait came due just before the stop: that attempt was killed.
        (RouteState::NeedsManual, _) if !was_running => Some(format!(
            "interrupted: stopping route {id}'s agent, which had just started"
        )),
        (
            RouteState::Running
            | RouteState::WaitingReset
            | RouteState::RetryScheduled
            | RouteState::NeedsManual
            | RouteState::Stopped
            | RouteState::Succeeded,
            _,
        ) => None,
    }
}

/// What a person reads when a route rests waiting for them.
pub fn print_needs_you(s: &recourse::engine::RouteSnapshot, progress: Progress) {
    progress.say(&format!(
        "route {} needs you: {}",
        s.id,
        recourse::controls::escape(&super::time::readable_times(
            s.manual_reason.as_deref().unwrap_or("no reason recorded")
        ))
    ));
    progress.say(&super::routes::actions_line(s));
}
