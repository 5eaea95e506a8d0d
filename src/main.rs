//! `recourse` command-line interface.
use clap::{Parser, Subcommand};

mod cli;

#[derive(Parser)]
#[command(
    name = "recourse",
    version,
    about = "Classify agent failures, check policies, run routes"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Start a route on a profile and follow it until it rests
    Run(cli::run::RunArgs),
    /// List routes; or archive, delete or prune them (`routes archive|delete|prune`)
    Routes(cli::routes::RoutesArgs),
    /// Show one route with its attempts
    Route(cli::routes::RouteArgs),
    /// Apply a manual action to a route, fenced by its generation
    Action(cli::action::ActionArgs),
    /// Take over routes whose process is gone and follow them until they rest
    Recover(cli::recover::RecoverArgs),
    /// List accounts with their limit marks and routes; clear a mark; set the
    /// global maximum of running agents
    Accounts(cli::accounts::AccountsArgs),
    /// List, show, export, import, create, rename, delete, duplicate or edit profiles
    #[command(subcommand)]
    Profile(cli::profile::ProfileCommand),
    /// Check or normalize a candidate policy document.
    #[command(subcommand)]
    Policy(cli::policy::PolicyCommand),
    /// Print the decision timeline a failure sequence would produce.
    Simulate(cli::simulate::SimulateArgs),
    /// Check the database file or back it up.
    #[command(subcommand)]
    Db(cli::db::DbCommand),
    /// Classify failure evidence with the catalogue (built-in plus local rules)
    Classify(cli::classify::ClassifyArgs),
    /// Local catalogue rules: list, show, test, add, remove, export upstream
    #[command(subcommand)]
    Catalogue(cli::catalogue::CatalogueCommand),
}

impl Command {
    /// Runs no agent and writes only to its own output.
    fn only_prints(&self) -> bool {
        match self {
            Command::Routes(_)
            | Command::Route(_)
            | Command::Profile(_)
            | Command::Policy(_)
            | Command::Simulate(_)
            | Command::Db(_)
            | Command::Classify(_)
            | Command::Catalogue(_) => true,
            Command::Run(_) | Command::Action(_) | Command::Recover(_) | Command::Accounts(_) => {
                false
            }
        }
    }
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    if cli.command.only_prints() {
        cli::end_quietly_on_closed_pipe();
    }
    let exit = match cli.command {
        Command::Run(a) => cli::routes::block_on(cli::run::run(a)),
        Command::Routes(mut a) => match a.command.take() {
            Some(command) => cli::routes::block_on(cli::housekeeping::run(command)),
            None => cli::routes::run_sync(|| cli::routes::list(a)),
        },
        Command::Route(a) => cli::routes::run_sync(|| cli::routes::show(a)),
        Command::Action(a) => cli::routes::block_on(cli::action::run(a)),
        Command::Recover(a) => cli::routes::block_on(cli::recover::run(a)),
        Command::Accounts(a) => cli::routes::block_on(cli::accounts::run(a)),
        Command::Profile(command) => cli::profile::run(command),
        Command::Policy(command) => cli::policy::run(command),
        Command::Simulate(args) => cli::simulate::run(args),
        Command::Db(command) => cli::routes::run_sync(|| cli::db::run(command)),
        Command::Classify(args) => cli::classify::run(args),
        Command::Catalogue(command) => cli::catalogue::run(command),
    };
    exit.into()
}
