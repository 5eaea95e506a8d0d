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
    /// Classify failure evidence with the built-in catalogue
    Classify(cli::classify::ClassifyArgs),
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Classify(args) => cli::classify::run(args),
    }
}
