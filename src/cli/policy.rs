//! `recourse policy check|normalize FILE`: validate a candidate policy
//! document (current or legacy) and print its normalized current form.
//!
//! Exit codes: 0 valid, 1 the file could not be read (or is larger than
//! [`super::MAX_INPUT_BYTES`], 1 MiB), 2 the document is invalid (every
//! error is printed as `path: message`).

use super::exit::Exit;
use anyhow::anyhow;
use clap::Subcommand;
use recourse::policy::{load, DocumentSource, LoadedDocument, PolicyError};
use std::path::{Path, PathBuf};

#[derive(Subcommand)]
pub enum PolicyCommand {
    /// Validate a policy document; lists every error with its field path.
    Check { file: PathBuf },
    /// Print the normalized current-version JSON (legacy documents accepted).
    Normalize { file: PathBuf },
}

pub fn run(command: PolicyCommand) -> Exit {
    match execute(&command) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("error: {}", super::error_text(&error));
            Exit::Failure
        }
    }
}

fn execute(command: &PolicyCommand) -> anyhow::Result<Exit> {
    let (file, normalize) = match command {
        PolicyCommand::Check { file } => (file, false),
        PolicyCommand::Normalize { file } => (file, true),
    };
    let loaded = match read_policy(file)? {
        Ok(loaded) => loaded,
        Err(error) => return Ok(report_invalid(file, &error)),
    };
    if normalize {
        super::print_json(&loaded.document)?;
    } else {
        println!("{}", summary(&loaded));
    }
    Ok(Exit::Success)
}

/// Reads and loads a policy file: the outer error is IO, the inner one the
/// document's own problems.
pub fn read_policy(file: &Path) -> anyhow::Result<Result<LoadedDocument, PolicyError>> {
    let text = super::read_bounded(file, super::MAX_INPUT_BYTES)
        .map_err(|why| anyhow!("cannot read policy file {}: {why}", file.display()))?;
    Ok(load(&text))
}

/// Prints every error of an invalid document to stderr; [`Exit::BadInput`].
pub fn report_invalid(file: &Path, error: &PolicyError) -> Exit {
    let errors = error.errors();
    for item in &errors {
        eprintln!("{item}");
    }
    eprintln!(
        "{}: invalid policy document ({})",
        file.display(),
        recourse::policy::read::how_many(errors.len(), "error")
    );
    Exit::BadInput
}

fn summary(loaded: &LoadedDocument) -> String {
    let count = loaded.document.candidates.len();
    let form = match loaded.source {
        DocumentSource::Current => format!("version {}", loaded.document.version),
        DocumentSource::Legacy => format!(
            "legacy document, normalizes to version {}",
            loaded.document.version
        ),
    };
    let plural = if count == 1 { "" } else { "s" };
    format!("ok: {count} candidate{plural} ({form})")
}
