//! `recourse db check` and `recourse db backup DEST`: look after the
//! database file itself.
//!
//! `check` runs `PRAGMA integrity_check` on the file opened read-only and
//! prints `ok` or every problem found; exit code 0 when sound, 1 when
//! damaged or it could not be checked. `backup` copies it with SQLite's
//! online backup API (a consistent snapshot, even while the app or a run
//! writes to it) to a new file, refusing to replace an existing one unless
//! `--force`.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand};
use recourse::store::{Store, StoreError};

use super::exit::Exit;
use super::routes::DbArg;

#[derive(Subcommand)]
pub enum DbCommand {
    /// Run SQLite's integrity check; print ok or every problem found
    Check {
        #[command(flatten)]
        db: DbArg,
    },
    /// Copy the database to DEST with SQLite's online backup
    Backup(BackupArgs),
}

#[derive(Args)]
pub struct BackupArgs {
    /// The new file
    dest: PathBuf,
    /// Replace DEST if it exists
    #[arg(long)]
    force: bool,
    #[command(flatten)]
    db: DbArg,
}

pub fn run(command: DbCommand) -> Result<Exit> {
    match command {
        DbCommand::Check { db } => check(&db.path()),
        DbCommand::Backup(args) => backup(&args),
    }
}

fn existing(path: &Path) -> Result<()> {
    if !recourse::engine::database_exists(path)? {
        bail!("no database at {}", path.display());
    }
    Ok(())
}

fn check(path: &Path) -> Result<Exit> {
    existing(path)?;
    let problems = match Store::check_file(path) {
        Ok(problems) => problems,
        Err(StoreError::Corrupt { detail, .. }) => vec![detail],
        Err(e) => return Err(e).with_context(|| format!("checking {}", path.display())),
    };
    if problems.is_empty() {
        println!("ok: {} passed SQLite's integrity check", path.display());
        return Ok(Exit::Success);
    }
    for p in &problems {
        println!("{p}");
    }
    eprintln!(
        "error: {} is damaged: {} problem{} found by SQLite's integrity check; restore it \
         from a backup, or move it aside to start a new database",
        path.display(),
        problems.len(),
        if problems.len() == 1 { "" } else { "s" }
    );
    Ok(Exit::Failure)
}

fn backup(args: &BackupArgs) -> Result<Exit> {
    let source = args.db.path();
    existing(&source)?;
    let dest = &args.dest;
    if dest.is_dir() {
        bail!("{} is a directory; name the new file", dest.display());
    }
    if dest.exists() && !args.force {
        bail!(
            "{} already exists; pass --force to replace it",
            dest.display()
        );
    }
    if same_file(&source, dest) {
        bail!("{} is the database itself", dest.display());
    }
    let store =
        Store::open_read_only(&source).with_context(|| format!("opening {}", source.display()))?;
    // Written beside DEST under another name, then moved into place: DEST is
    // never a half-written copy, and without --force an existing DEST (even
    // one created meanwhile) is never replaced.
    let partial = partial_name(dest);
    let _ = std::fs::remove_file(&partial);
    let copied = store
        .backup_to(&partial)
        .with_context(|| format!("writing {}", partial.display()))
        .and_then(|()| place(&partial, dest, args.force));
    if copied.is_err() {
        let _ = std::fs::remove_file(&partial);
    }
    copied?;
    println!("backed up {} to {}", source.display(), dest.display());
    Ok(Exit::Success)
}

/// Moves the finished copy to `dest`: `rename` replaces (with --force),
/// `hard_link` refuses an existing file.
fn place(partial: &Path, dest: &Path, force: bool) -> Result<()> {
    if force {
        std::fs::rename(partial, dest)
            .with_context(|| format!("moving the copy to {}", dest.display()))?;
        return Ok(());
    }
    std::fs::hard_link(partial, dest).map_err(|e| {
        if e.kind() == std::io::ErrorKind::AlreadyExists {
            anyhow::anyhow!(
                "{} already exists; pass --force to replace it",
                dest.display()
            )
        } else {
            anyhow::Error::new(e).context(format!("moving the copy to {}", dest.display()))
        }
    })?;
    std::fs::remove_file(partial).with_context(|| format!("removing {}", partial.display()))?;
    Ok(())
}

fn partial_name(dest: &Path) -> PathBuf {
    let mut name = dest.as_os_str().to_owned();
    name.push(format!(".partial-{}", std::process::id()));
    PathBuf::from(name)
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}
