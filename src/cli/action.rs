//! `recourse action ID ACTION --generation N [--yes]`: a generation-fenced
//! manual action, recorded in the route's history as the command line's.
//! One that sends work again on a route whose last agent may have done work
//! (the snapshot's `repeat_risk`) asks first on a terminal and needs
//! `--yes` elsewhere. When the action dispatches an attempt, this process
//! owns it and follows the route until it rests.

use anyhow::Result;
use chrono::Utc;
use clap::Args;
use recourse::controls::escape;
use recourse::engine::{ActionRequest, Engine};
use recourse::route::{Actor, ManualAction, RouteState};
use std::io::IsTerminal;

use super::exit::Exit;
use super::housekeeping::confirmed;
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
    /// Send work again even though it may repeat what an agent already did
    /// (needed when standard input is not a terminal to ask on)
    #[arg(long)]
    yes: bool,
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
    let result = match repeat_confirmed(&engine, &args) {
        Ok(Some(confirm_repeat)) => {
            let request = ActionRequest {
                route_id: args.id,
                action,
                expected_generation: args.generation,
                confirm_repeat,
                message: args.message,
            };
            act(&engine, request, &mut interrupts).await
        }
        Ok(None) => Ok(not_confirmed(args.id, action)),
        Err(e) => Err(e),
    };
    engine.shutdown().await;
    result
}

/// Whether the action may go on: `Some(confirm_repeat)`, or `None` when it
/// sends work again after an agent may have done work and the person did
/// not confirm (with `--yes`, or on a terminal).
fn repeat_confirmed(engine: &Engine, args: &ActionArgs) -> Result<Option<bool>> {
    if args.yes || !recourse::route::transitions::dispatches(args.action) {
        return Ok(Some(args.yes));
    }
    let s = engine.route_detail(args.id)?.snapshot;
    // A stale generation or an action not valid now is refused by the
    // engine, saying why: nothing to ask about.
    let applies = s.generation == args.generation && s.actions.contains(&args.action);
    let Some(risk) = s.repeat_risk.filter(|_| applies) else {
        return Ok(Some(false));
    };
    let question = format!(
        "route {}: {} may repeat work: {}.\nIt {}; check the working directory first. Go on?",
        s.id,
        args.action.as_str(),
        escape(&risk),
        args.action.what_it_sends().unwrap_or("starts an agent")
    );
    Ok(confirmed(false, &question)?.then_some(true))
}

/// Nothing was sent: said why, with the usage exit when it could not ask.
fn not_confirmed(route_id: u32, action: ManualAction) -> Exit {
    if std::io::stdin().is_terminal() {
        eprintln!("nothing sent");
        Exit::Success
    } else {
        eprintln!(
            "error: nothing sent: {} may repeat work an agent already did (see `recourse route \
             {route_id}`), and standard input is not a terminal to ask on; add --yes to send it \
             anyway",
            action.as_str()
        );
        Exit::BadInput
    }
}

async fn act(engine: &Engine, request: ActionRequest, interrupts: &mut Interrupts) -> Result<Exit> {
    let route_id = request.route_id;
    let mut events = engine.subscribe();
    if request.message.is_some() && request.action != ManualAction::Continue {
        anyhow::bail!("--message goes with continue only");
    }
    let s = engine.act(request, Actor::Cli).await?;
    let owned_here = s.owner.as_deref() == Some(engine.instance());
    if s.state == RouteState::Running && owned_here {
        // The dispatch is printed from its event, like every later one.
        return follow(engine, &mut events, route_id, interrupts, Progress::Stdout).await;
    }
    println!("{}", line(&s, Utc::now()));
    Ok(Exit::Success)
}
