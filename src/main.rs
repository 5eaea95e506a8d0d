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
    /// Check or normalize a candidate policy document.
    #[command(subcommand)]
    Policy(cli::policy::PolicyCommand),
    /// Print the decision timeline a failure sequence would produce.
    Simulate(cli::simulate::SimulateArgs),
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Policy(command) => cli::policy::run(command),
        Command::Simulate(args) => cli::simulate::run(args),
    }
}
