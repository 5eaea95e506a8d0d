//! `recourse run`: start a route on a profile and follow it until it
//! succeeds or needs a person, printing every transition.

use anyhow::{bail, Context, Result};
use chrono::Utc;
use clap::Args;
use recourse::engine::{Engine, EngineOptions, RouteState, StartRun};

use super::routes::{actions, line, DbArg};

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
    #[command(flatten)]
    db: DbArg,
}

pub async fn run(args: RunArgs) -> Result<std::process::ExitCode> {
    let path = args.db.path();
    let opts = EngineOptions {
        adopt_orphans: false,
        ..EngineOptions::default()
    };
    let engine = Engine::open(&path, opts)
        .await
        .with_context(|| format!("opening {}", path.display()))?;
    let result = start_and_follow(&engine, args).await;
    engine.shutdown().await;
    result
}

async fn start_and_follow(engine: &Engine, args: RunArgs) -> Result<std::process::ExitCode> {
    let profile = engine.profile_by_name(&args.profile)?;
    let mut events = engine.subscribe();
    let start = engine
        .start_run(StartRun {
            profile_id: profile.id,
            prompt: args.prompt,
            cwd: args.cwd,
        })
        .await?;
    // The start is printed from its event, like every later transition.
    follow(engine, &mut events, start.id).await
}

/// Prints the route's transitions until it rests; exit code 0 on success,
/// 3 when it needs a person, 4 when another process took it over, 130 on
/// Ctrl-C (the caller's shutdown then kills the agent and records the
/// route as interrupted).
pub async fn follow(
    engine: &Engine,
    events: &mut tokio::sync::broadcast::Receiver<recourse::engine::RouteEvent>,
    route_id: u32,
) -> Result<std::process::ExitCode> {
    // One Ctrl-C listener for the whole follow: a listener made anew each
    // turn would miss a signal that arrives between two turns.
    let interrupted = tokio::signal::ctrl_c();
    tokio::pin!(interrupted);
    loop {
        let received = tokio::select! {
            r = events.recv() => r,
            _ = &mut interrupted => {
                eprintln!("interrupted: stopping route {route_id}'s agent");
                return Ok(std::process::ExitCode::from(130));
            }
        };
        let ev = match received {
            Ok(ev) => ev,
            Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
            Err(tokio::sync::broadcast::error::RecvError::Closed) => bail!("engine stopped"),
        };
        if ev.route_id != route_id {
            continue;
        }
        let s = ev.snapshot;
        println!("{}", line(&s, Utc::now()));
        let owned_elsewhere = s.owner.as_deref().is_some_and(|o| o != engine.instance());
        match s.state {
            RouteState::Succeeded => return Ok(std::process::ExitCode::SUCCESS),
            RouteState::NeedsManual | RouteState::Stopped => {
                println!(
                    "route {} needs you: {}",
                    s.id,
                    s.manual_reason.as_deref().unwrap_or("no reason recorded")
                );
                println!(
                    "  actions: {} (recourse action {} ACTION --generation {})",
                    actions(&s),
                    s.id,
                    s.generation
                );
                return Ok(std::process::ExitCode::from(3));
            }
            RouteState::Running | RouteState::WaitingReset | RouteState::RetryScheduled
                if owned_elsewhere =>
            {
                println!(
                    "route {} is now run by {}",
                    s.id,
                    s.owner.unwrap_or_default()
                );
                return Ok(std::process::ExitCode::from(4));
            }
            RouteState::Running | RouteState::WaitingReset | RouteState::RetryScheduled => {}
        }
    }
}
