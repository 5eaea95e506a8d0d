//! `recourse recover`: adopt every route whose owning process is gone (a
//! killed `recourse run`, an app that crashed) and follow them until they
//! rest, like `recourse run`. The engine's restart reconciliation does the
//! work: a route caught mid-dispatch goes to manual recovery and is never
//! replayed; a wait is owned and re-armed at its stored deadline.

use anyhow::Result;
use chrono::Utc;
use clap::Args;
use recourse::route::RouteState;

use super::routes::{line, open_viewer, DbArg};
use super::run::follow_all;

#[derive(Args)]
pub struct RecoverArgs {
    #[command(flatten)]
    db: DbArg,
}

pub async fn run(args: RecoverArgs) -> Result<std::process::ExitCode> {
    let engine = open_viewer(&args.db).await?;
    let result = recover(&engine).await;
    engine.shutdown().await;
    result
}

/// Exit code 0 when there was nothing to recover or every route succeeded,
/// 3 when one needs a person, 4 when another process took one over, 130 on
/// Ctrl-C.
async fn recover(engine: &recourse::engine::Engine) -> Result<std::process::ExitCode> {
    let mut events = engine.subscribe();
    let recovered = engine.recover_orphans()?;
    if recovered.is_empty() {
        println!("no orphaned routes");
        return Ok(std::process::ExitCode::SUCCESS);
    }
    println!(
        "recovering {} orphaned route{}",
        recovered.len(),
        if recovered.len() == 1 { "" } else { "s" }
    );
    let mut follow = std::collections::BTreeMap::new();
    let mut code = 0u8;
    let now = Utc::now();
    for s in &recovered {
        println!("{}", line(s, now));
        match s.state {
            RouteState::NeedsManual | RouteState::Stopped => {
                super::run::print_needs_you(s);
                code = 3;
            }
            RouteState::Succeeded => {}
            RouteState::Running | RouteState::WaitingReset | RouteState::RetryScheduled => {
                follow.insert(s.id, s.generation);
            }
        }
    }
    let followed = follow_all(engine, &mut events, follow).await?;
    if code == 0 {
        return Ok(followed);
    }
    // 130 (Ctrl-C) and 4 say more than 3; a plain 0 or 3 is 3.
    if followed == std::process::ExitCode::from(130) || followed == std::process::ExitCode::from(4)
    {
        return Ok(followed);
    }
    Ok(std::process::ExitCode::from(code))
}
