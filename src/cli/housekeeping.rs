//! `recourse routes archive|delete|prune`: route housekeeping from a
//! terminal, the same engine calls the app makes. Deleting asks first on a
//! terminal; elsewhere it needs `--yes`.

use std::io::{IsTerminal, Write};

use anyhow::Result;
use clap::{Args, Subcommand};
use recourse::controls::escape;
use recourse::engine::{Engine, Retention};

use super::exit::Exit;
use super::routes::{open_viewer, DbArg};

#[derive(Subcommand)]
pub enum RoutesCommand {
    /// Archive routes that neither run nor wait: they leave the everyday lists, history kept
    Archive(ArchiveArgs),
    /// Delete routes that neither run nor wait, with their whole history (asks first)
    Delete(DeleteArgs),
    /// Delete succeeded and stopped routes older than some days; their
    /// attempts' details (transcripts, processes) may go sooner (asks first)
    Prune(PruneArgs),
}

#[derive(Args)]
pub struct ArchiveArgs {
    /// Route ids
    #[arg(required = true)]
    ids: Vec<u32>,
    /// Bring archived routes back to the lists
    #[arg(long)]
    undo: bool,
    #[command(flatten)]
    db: DbArg,
}

#[derive(Args)]
pub struct DeleteArgs {
    /// Route ids
    #[arg(required = true)]
    ids: Vec<u32>,
    /// Do not ask (needed when standard input is not a terminal)
    #[arg(long)]
    yes: bool,
    #[command(flatten)]
    db: DbArg,
}

#[derive(Args)]
pub struct PruneArgs {
    /// Delete succeeded and stopped routes unchanged for this many days
    #[arg(long, value_name = "DAYS")]
    routes_older_than: Option<u32>,
    /// Remove the attempt details of succeeded and stopped routes
    /// unchanged for this many days (their history stays)
    #[arg(long, value_name = "DAYS")]
    details_older_than: Option<u32>,
    /// Do not ask (needed when standard input is not a terminal)
    #[arg(long)]
    yes: bool,
    #[command(flatten)]
    db: DbArg,
}

pub async fn run(command: RoutesCommand) -> Result<Exit> {
    let db = match &command {
        RoutesCommand::Archive(a) => &a.db,
        RoutesCommand::Delete(a) => &a.db,
        RoutesCommand::Prune(a) => &a.db,
    };
    let engine = open_viewer(db).await?;
    let result = act(&engine, command);
    engine.shutdown().await;
    result
}

fn act(engine: &Engine, command: RoutesCommand) -> Result<Exit> {
    match command {
        RoutesCommand::Archive(args) => {
            for id in args.ids {
                let s = engine.archive_route(id, !args.undo)?;
                let done = if args.undo {
                    "back in the lists"
                } else {
                    "archived"
                };
                println!("route {} ({}): {done}", s.id, s.state.words());
            }
            Ok(Exit::Success)
        }
        RoutesCommand::Delete(args) => {
            let mut lines = Vec::new();
            for &id in &args.ids {
                let s = engine.route_detail(id)?.snapshot;
                lines.push(format!(
                    "route {id} ({}, {} attempt{}): {}",
                    s.state.words(),
                    s.attempts,
                    if s.attempts == 1 { "" } else { "s" },
                    escape(&s.prompt_excerpt)
                ));
            }
            let question = format!(
                "{}\ndelete {} with all of {} history? This cannot be undone.",
                lines.join("\n"),
                if lines.len() == 1 {
                    "this route"
                } else {
                    "these routes"
                },
                if lines.len() == 1 { "its" } else { "their" },
            );
            if !confirmed(args.yes, &question)? {
                return Ok(not_confirmed());
            }
            let deleted = engine.delete_routes(&args.ids)?;
            for id in deleted {
                println!("route {id}: deleted");
            }
            Ok(Exit::Success)
        }
        RoutesCommand::Prune(args) => {
            if args.routes_older_than.is_none() && args.details_older_than.is_none() {
                eprintln!("error: say what to prune: --routes-older-than DAYS and/or --details-older-than DAYS");
                return Ok(Exit::BadInput);
            }
            if args.routes_older_than == Some(0) || args.details_older_than == Some(0) {
                eprintln!("error: a number of days is at least 1");
                return Ok(Exit::BadInput);
            }
            let question = match args.routes_older_than {
                Some(days) => format!(
                    "delete every succeeded or stopped route unchanged for {days} days, with its history?"
                ),
                None => "remove the attempt details of old succeeded and stopped routes?".into(),
            };
            if !confirmed(args.yes, &question)? {
                return Ok(not_confirmed());
            }
            let pruned = engine.prune(Retention {
                details_days: args.details_older_than,
                routes_days: args.routes_older_than,
            })?;
            println!(
                "deleted {} route{}; removed {} attempt detail row{}",
                pruned.routes_deleted,
                if pruned.routes_deleted == 1 { "" } else { "s" },
                pruned.detail_rows,
                if pruned.detail_rows == 1 { "" } else { "s" },
            );
            Ok(Exit::Success)
        }
    }
}

/// `--yes`, or a yes typed on a terminal.
pub(super) fn confirmed(yes: bool, question: &str) -> Result<bool> {
    if yes {
        return Ok(true);
    }
    if !std::io::stdin().is_terminal() {
        return Ok(false);
    }
    eprint!("{question} [y/N] ");
    std::io::stderr().flush()?;
    let mut answer = String::new();
    std::io::stdin().read_line(&mut answer)?;
    Ok(answer.trim().to_lowercase().starts_with('y'))
}

/// Nothing was deleted: said why, with the usage exit when it could not ask.
fn not_confirmed() -> Exit {
    if std::io::stdin().is_terminal() {
        eprintln!("nothing deleted");
        Exit::Success
    } else {
        eprintln!(
            "error: nothing deleted: standard input is not a terminal to ask on; add --yes to delete"
        );
        Exit::BadInput
    }
}
