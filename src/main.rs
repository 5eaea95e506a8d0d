//! `recourse` command-line interface.
use clap::{Parser, Subcommand};

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
enum Command {}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    match cli.command {}
}
