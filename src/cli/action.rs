//! `recourse action ID ACTION --generation N`: a generation-fenced manual
//! action. When the action dispatches an attempt, this process owns it and
//! follows the route until it rests.

use anyhow::Result;
use chrono::Utc;
use clap::Args;
use recourse::engine::{ActionRequest, Engine};
use recourse::route::{ManualAction, RouteState};

use super::exit::Exit;
use super::interrupts::Interrupts;
use super::routes::{line, open_viewer, DbArg};
use super::run::{follow, Progress};

#[derive(Args)]
#[command(after_help = actions_help())]
pub struct ActionArgs {
    /// Route id
    id: u32,
    /// What to do
    #[arg(value_parser = super::one_of(&ManualAction::ALL, ManualAction::as_str))]
    action: ManualAction,
    /// The generation you saw (`recourse route ID`)
    #[arg(long)]
    generation: u32,
    /// `continue` only: what to say in the resumed session, in place of the
    /// candidate's continuation message (by default: check the current state
    /// before repeating any action, then finish the task)
    #[arg(long)]
    message: Option<String>,
    #[command(flatten)]
    db: DbArg,
}

/// Each action and what it does, below the options of `--help`.
fn actions_help() -> String {
    let mut text = String::from("Actions:");
    for action in ManualAction::ALL {
        text += &format!("\n  {:<12} {}", action.as_str(), action.help());
    }
    text
}

pub async fn run(args: ActionArgs) -> Result<Exit> {
    let action = args.action;
    let mut interrupts = Interrupts::listen()?;
    let engine = open_viewer(&args.db).await?;
    super::run::note_orphans(&engine, Some(args.id));
    let request = ActionRequest {
        route_id: args.id,
        action,
        expected_generation: args.generation,
        message: args.message,
    };
    let result = act(&engine, request, &mut interrupts).await;
    engine.shutdown().await;
    result
}

async fn act(engine: &Engine, request: ActionRequest, interrupts: &mut Interrupts) -> Result<Exit> {
    let route_id = request.route_id;
    let mut events = engine.subscribe();
    if request.message.is_some() && request.action != ManualAction::Continue {
        anyhow::bail!("--message goes with continue only");
    }
    let s = engine.act(request).await?;
    let owned_here = s.owner.as_deref() == Some(engine.instance());
    if s.state == RouteState::Running && owned_here {
        // The dispatch is printed from its event, like every later one.
        return follow(engine, &mut events, route_id, interrupts, Progress::Stdout).await;
    }
    println!("{}", line(&s, Utc::now()));
    Ok(Exit::Success)
}
