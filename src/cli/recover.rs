//! `recourse recover`: adopt every route whose owning process is gone (a
//! killed `recourse run`, an app that crashed) and follow them until they
//! rest, like `recourse run`. The engine's restart reconciliation does the
//! work: a route caught mid-dispatch goes to manual recovery and is never
//! replayed; a wait is owned and re-armed at its stored deadline.

use anyhow::Result;
use chrono::Utc;
use clap::Args;
use recourse::route::RouteState;

use super::exit::Exit;
use super::interrupts::Interrupts;
use super::routes::{line, open_viewer, DbArg};
use super::run::{follow_all, Progress};

#[derive(Args)]
pub struct RecoverArgs {
    #[command(flatten)]
    db: DbArg,
}

pub async fn run(args: RecoverArgs) -> Result<Exit> {
    let mut interrupts = Interrupts::listen()?;
    let engine = open_viewer(&args.db).await?;
    let result = recover(&engine, &mut interrupts).await;
    engine.shutdown().await;
    result
}

/// [`Exit::Success`] when there was nothing to recover or every route
/// succeeded, [`Exit::NeedsYou`] when one needs a person,
/// [`Exit::TakenOver`] when another process took one over,
/// [`Exit::Interrupted`] on Ctrl-C, SIGTERM or SIGHUP (the greatest of
/// these that applies).
async fn recover(engine: &recourse::engine::Engine, interrupts: &mut Interrupts) -> Result<Exit> {
    let mut events = engine.subscribe();
    let recovered = engine.recover_orphans()?;
    if recovered.is_empty() {
        println!("no orphaned routes");
        return Ok(Exit::Success);
    }
    println!(
        "recovering {} orphaned route{}",
        recovered.len(),
        if recovered.len() == 1 { "" } else { "s" }
    );
    let mut follow = std::collections::BTreeMap::new();
    let mut exit = Exit::Success;
    let now = Utc::now();
    for s in &recovered {
        println!("{}", line(s, now));
        match s.state {
            RouteState::NeedsManual | RouteState::Stopped => {
                super::run::print_needs_you(s, Progress::Stdout);
                exit = Exit::NeedsYou;
            }
            RouteState::Succeeded => {}
            RouteState::Running
            | RouteState::WaitingReset
            | RouteState::RetryScheduled
            | RouteState::Queued => {
                follow.insert(s.id, s.generation);
            }
        }
    }
    let followed = follow_all(engine, &mut events, follow, interrupts, Progress::Stdout).await?;
    Ok(exit.max(followed))
}
