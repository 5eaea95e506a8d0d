//! `recourse profile …`: profiles without the app. Reads open the database
//! read-only; every write goes through the engine under the profile's
//! revision guard, so an edit made meanwhile in the app is refused with a
//! clear message, never overwritten.

use std::io::{IsTerminal, Read};
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};
use clap::Subcommand;
use recourse::agent::AgentKind;
use recourse::controls::escape;
use recourse::engine::{
    files, preview_import, read_document, read_document_file, write_document_file, AgentKindInfo,
    Engine, EngineError, EngineOptions, ImportPreview, ImportTarget, RouteViewer,
};
use recourse::profile::document::{ProfileCandidate, ProfileDocument, MAX_DOCUMENT_BYTES};
use recourse::profile::{words, Profile};

use super::exit::Exit;
use super::routes::DbArg;

#[derive(Subcommand)]
pub enum ProfileCommand {
    /// List the profiles
    List {
        /// Print JSON instead of lines
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        db: DbArg,
    },
    /// Show a profile's candidates and policies (--json: its profile document)
    Show {
        name: String,
        /// Print the profile document
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        db: DbArg,
    },
    /// Say whether each candidate can start: its program and version, and
    /// whether its credentials are present (values are never read)
    Check {
        name: String,
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        db: DbArg,
    },
    /// Write a profile's document to FILE (default, or -: standard output)
    Export {
        name: String,
        file: Option<PathBuf>,
        #[command(flatten)]
        db: DbArg,
    },
    /// Create a profile from a document (FILE, or - for standard input)
    Import {
        file: PathBuf,
        /// Replace the profile of the same name (its name, candidates and policies)
        #[arg(long)]
        replace: bool,
        /// Say what would change and write nothing
        #[arg(long)]
        dry_run: bool,
        #[command(flatten)]
        db: DbArg,
    },
    /// Create a profile, empty or with one candidate of an agent kind
    Create {
        name: String,
        /// Add one candidate of this kind with its defaults (immediate skip on failure)
        #[arg(long, value_parser = super::one_of(&AgentKind::ALL, AgentKind::slug))]
        agent: Option<AgentKind>,
        #[command(flatten)]
        db: DbArg,
    },
    /// Rename a profile (routes keep the name they started with)
    Rename {
        name: String,
        new_name: String,
        #[command(flatten)]
        db: DbArg,
    },
    /// Delete a profile (its routes and their history are kept)
    Delete {
        name: String,
        #[command(flatten)]
        db: DbArg,
    },
    /// Copy a profile under a new name
    Duplicate {
        name: String,
        new_name: String,
        #[command(flatten)]
        db: DbArg,
    },
    /// Edit a profile's document in $VISUAL or $EDITOR; saved only when valid
    Edit {
        name: String,
        #[command(flatten)]
        db: DbArg,
    },
}

pub fn run(command: ProfileCommand) -> Exit {
    match command {
        ProfileCommand::List { json, db } => super::routes::run_sync(|| list(&db, json)),
        ProfileCommand::Show { name, json, db } => {
            super::routes::run_sync(|| show(&db, &name, json))
        }
        ProfileCommand::Check { name, json, db } => super::routes::block_on(check(db, name, json)),
        ProfileCommand::Export { name, file, db } => {
            super::routes::run_sync(|| export(&db, &name, file.as_deref()))
        }
        ProfileCommand::Import {
            file,
            replace,
            dry_run,
            db,
        } => super::routes::block_on(import(db, file, replace, dry_run)),
        ProfileCommand::Create { name, agent, db } => {
            super::routes::block_on(with_engine(db, move |e| create(e, &name, agent)))
        }
        ProfileCommand::Rename { name, new_name, db } => {
            super::routes::block_on(with_engine(db, move |e| {
                let p = e.profile_by_name(&name)?;
                let renamed = e.rename_profile(p.id, &new_name)?;
                println!("renamed profile {:?} to {:?}", name, renamed.name);
                Ok(Exit::Success)
            }))
        }
        ProfileCommand::Delete { name, db } => super::routes::block_on(with_engine(db, move |e| {
            let p = e.profile_by_name(&name)?;
            e.delete_profile(p.id)?;
            println!("deleted profile {name:?} (its routes are kept)");
            Ok(Exit::Success)
        })),
        ProfileCommand::Duplicate { name, new_name, db } => {
            super::routes::block_on(with_engine(db, move |e| {
                let p = e.profile_by_name(&name)?;
                let copy = e.duplicate_profile(p.id, &new_name)?;
                println!("copied profile {name:?} to {:?}", copy.name);
                Ok(Exit::Success)
            }))
        }
        ProfileCommand::Edit { name, db } => {
            let database = db.path();
            super::routes::block_on(with_engine(db, move |e| edit(e, &name, &database)))
        }
    }
}

/// The profiles of an existing database, read-only; none when there is no
/// database yet.
fn stored_profiles(db: &DbArg) -> Result<Vec<Profile>> {
    let path = db.path();
    if !recourse::engine::database_exists(&path)? {
        return Ok(Vec::new());
    }
    let viewer = RouteViewer::open(&path).with_context(|| format!("opening {}", path.display()))?;
    Ok(viewer.list_profiles()?)
}

fn find<'a>(profiles: &'a [Profile], name: &str) -> Result<&'a Profile> {
    profiles
        .iter()
        .find(|p| p.name == name)
        .ok_or_else(|| anyhow!(unknown_profile(name, profiles)))
}

/// `profile "X" does not exist; the profiles are: A, B` (or how to make one).
pub fn unknown_profile(name: &str, profiles: &[Profile]) -> String {
    if profiles.is_empty() {
        return format!(
            "profile {name:?} does not exist, and there are no profiles yet; \
             create one with `recourse profile create NAME` or `recourse profile import FILE`"
        );
    }
    let names: Vec<String> = profiles.iter().map(|p| format!("{:?}", p.name)).collect();
    format!(
        "profile {name:?} does not exist; the profiles are: {}",
        names.join(", ")
    )
}

fn list(db: &DbArg, json: bool) -> Result<Exit> {
    let profiles = stored_profiles(db)?;
    if json {
        let items: Vec<serde_json::Value> = profiles
            .iter()
            .map(|p| {
                serde_json::json!({
                    "name": p.name,
                    "revision": p.revision,
                    "candidates": p.candidates.len(),
                    "updated_at": p.updated_at,
                })
            })
            .collect();
        println!(
            "{}",
            super::json_text(&serde_json::Value::from(items).to_string())
        );
    } else if profiles.is_empty() {
        println!("no profiles yet; create one with `recourse profile create NAME` or `recourse profile import FILE`");
    } else {
        for p in &profiles {
            let names: Vec<std::borrow::Cow<'_, str>> =
                p.candidates.iter().map(|c| escape(&c.name)).collect();
            println!(
                "{}  ({} candidate{}: {})",
                escape(&p.name),
                names.len(),
                if names.len() == 1 { "" } else { "s" },
                if names.is_empty() {
                    "none yet".to_string()
                } else {
                    names.join(", ")
                }
            );
        }
    }
    Ok(Exit::Success)
}

fn show(db: &DbArg, name: &str, json: bool) -> Result<Exit> {
    let profiles = stored_profiles(db)?;
    let profile = find(&profiles, name)?;
    let doc = ProfileDocument::from_profile(profile).without_secrets();
    if json {
        print!("{}", super::json_text(&doc.to_json_pretty()));
        return Ok(Exit::Success);
    }
    println!(
        "{} (revision {}, updated {})",
        escape(&profile.name),
        profile.revision,
        super::time::date_time(profile.updated_at)
    );
    if doc.candidates.is_empty() {
        println!("no candidates yet; add some with `recourse profile edit {name:?}`");
    }
    for (i, c) in doc.candidates.iter().enumerate() {
        let next = doc.candidates[i + 1..]
            .iter()
            .find(|n| n.enabled)
            .map(|n| n.name.as_str());
        let model = c
            .agent
            .model
            .as_deref()
            .map(|m| format!(", model {m}"))
            .unwrap_or_default();
        println!(
            "{}. {} — {}{}{}",
            i + 1,
            escape(&c.name),
            c.agent.kind.slug(),
            escape(&model),
            if c.enabled { "" } else { " (disabled)" }
        );
        println!("   access: {}", access_words(&c.agent));
        println!(
            "   transient: {}",
            escape(&c.transient.describe_schedule(next))
        );
        println!("   hard: {}", escape(&c.hard.describe_schedule(next)));
        if c.unclassified.repeated_failure.enabled {
            println!(
                "   unclassified: {}",
                escape(&c.unclassified.describe(next))
            );
        }
    }
    Ok(Exit::Success)
}

fn export(db: &DbArg, name: &str, file: Option<&Path>) -> Result<Exit> {
    let profiles = stored_profiles(db)?;
    let doc = ProfileDocument::from_profile(find(&profiles, name)?).without_secrets();
    if doc.candidates.is_empty() {
        eprintln!(
            "note: {name:?} has no candidates yet; the document will not import until it lists one"
        );
    }
    let text = doc.to_json_pretty();
    // `-` is standard output, as `import -` reads standard input.
    match file.filter(|path| *path != Path::new("-")) {
        None => print!("{}", super::json_text(&text)),
        Some(path) => {
            write_document_file(path, &db.path(), &text).map_err(plain)?;
            eprintln!("wrote {}", path.display());
        }
    }
    Ok(Exit::Success)
}

/// The document text of FILE, or of standard input for `-`, bounded.
fn read_input(file: &Path, database: &Path) -> Result<String> {
    if file == Path::new("-") {
        let mut bytes = Vec::new();
        std::io::stdin()
            .take(MAX_DOCUMENT_BYTES + 1)
            .read_to_end(&mut bytes)
            .context("reading standard input")?;
        if bytes.len() as u64 > MAX_DOCUMENT_BYTES {
            bail!("standard input: larger than 1 MiB; refusing to read it");
        }
        return String::from_utf8(bytes).map_err(|_| anyhow!("standard input is not UTF-8 text"));
    }
    read_document_file(file, database).map_err(plain)
}

/// A one-field error as its message alone (`cannot read F: …`).
fn plain(e: EngineError) -> anyhow::Error {
    match e.field_errors() {
        [one] => anyhow!(one.message.clone()),
        _ => e.into(),
    }
}

/// Prints every problem of a refused document, one per line.
/// Says why `source` was refused, each problem in the words the app uses
/// (named by `names`, the candidates' names) and then the field's path in
/// the document, to find it there.
fn print_refusal(source: &str, error: &EngineError, names: &[String]) -> Exit {
    let errors = error.field_errors();
    if errors.is_empty() {
        eprintln!("error: {source}: {}", escape(&error.to_string()));
    } else {
        eprintln!(
            "error: {source}: {}; nothing was written",
            recourse::policy::read::how_many(errors.len(), "problem")
        );
        for e in errors {
            let said = words::error_words(e, names);
            match words::error_path(e).as_str() {
                "document" | "file" => eprintln!("  {}", escape(&said)),
                path => eprintln!("  {} (at {})", escape(&said), escape(path)),
            }
        }
    }
    Exit::BadInput
}

fn print_changes(preview: &ImportPreview) {
    for change in &preview.changes {
        println!("  {}", escape(&change.describe()));
    }
}

async fn import(db: DbArg, file: PathBuf, replace: bool, dry_run: bool) -> Result<Exit> {
    let text = read_input(&file, &db.path())?;
    let source = file.display().to_string();
    if dry_run {
        let stored = stored_profiles(&db)?;
        let loaded = match read_document(&text) {
            Ok(loaded) => loaded,
            Err(e) => return Ok(print_refusal(&source, &e, &words::candidate_names(&text))),
        };
        let name = &loaded.document.name;
        let preview = preview_import(&loaded, stored.iter().find(|p| &p.name == name));
        describe_import(&preview, replace, true);
        return Ok(Exit::Success);
    }
    let loaded = match read_document(&text) {
        Ok(loaded) => loaded,
        Err(e) => return Ok(print_refusal(&source, &e, &words::candidate_names(&text))),
    };
    with_engine(db, move |engine| {
        let preview = match engine.preview_loaded(&loaded) {
            Ok(p) => p,
            Err(e) => return Ok(print_refusal(&source, &e, &words::candidate_names(&text))),
        };
        let target = match (preview.existing, replace) {
            (Some(_), false) => {
                eprintln!(
                    "error: a profile named {} already exists; `--replace` replaces it \
                     (`--dry-run` shows what would change)",
                    recourse::profile::names::quoted(&preview.name)
                );
                return Ok(Exit::BadInput);
            }
            (Some(_), true) if preview.changes.is_empty() => {
                println!(
                    "profile {:?} already matches {source}; nothing to do",
                    preview.name
                );
                return Ok(Exit::Success);
            }
            (Some(existing), true) => ImportTarget::Replace {
                id: existing.id,
                expected_revision: existing.revision,
            },
            (None, _) => ImportTarget::New,
        };
        match engine.import_profile(&loaded.document, target) {
            Ok(_) => {
                describe_import(&preview, replace, false);
                Ok(Exit::Success)
            }
            Err(e) => Ok(print_refusal(&source, &e, &words::candidate_names(&text))),
        }
    })
    .await
}

fn describe_import(preview: &ImportPreview, replace: bool, dry_run: bool) {
    if preview.legacy {
        eprintln!(
            "note: the candidates use the old generic action maps; they were normalized as the \
             policy decision says (`recourse profile show` prints the result)"
        );
    }
    let (would, did) = if dry_run { ("would ", "") } else { ("", "d") };
    match (&preview.existing, dry_run) {
        (Some(_), _) if preview.changes.is_empty() => {
            println!("profile {:?} already matches; nothing to do", preview.name)
        }
        (Some(_), true) if !replace => {
            println!(
                "a profile named {:?} exists; `--replace` would change:",
                preview.name
            );
            print_changes(preview);
        }
        (Some(_), _) => {
            println!("{would}replace{did} profile {:?}:", preview.name);
            print_changes(preview);
        }
        (None, _) => {
            println!("{would}create{did} profile {:?}:", preview.name);
            print_changes(preview);
        }
    }
}

/// Opens the engine for a write (a missing database is created, without
/// the demo profile), runs `f`, and shuts the engine down.
async fn with_engine(db: DbArg, f: impl FnOnce(&Engine) -> Result<Exit>) -> Result<Exit> {
    let path = db.path();
    let opts = EngineOptions {
        seed_demo: false,
        adopt_orphans: false,
        ..EngineOptions::default()
    };
    let engine = Engine::open(&path, opts)
        .await
        .with_context(|| format!("opening {}", path.display()))?;
    let result = f(&engine);
    engine.shutdown().await;
    result
}

fn create(engine: &Engine, name: &str, agent: Option<AgentKind>) -> Result<Exit> {
    let Some(agent) = agent else {
        let p = engine.create_profile(name)?;
        println!(
            "created profile {:?}; add candidates with `recourse profile edit {:?}`",
            p.name, p.name
        );
        return Ok(Exit::Success);
    };
    let doc = ProfileDocument {
        version: recourse::profile::document::PROFILE_VERSION,
        name: name.to_string(),
        candidates: vec![starter_candidate(agent)],
    };
    match engine.import_profile(&doc, ImportTarget::New) {
        Ok(p) => {
            println!(
                "created profile {:?} with one candidate, {:?}; change it with `recourse profile edit {:?}`",
                p.name,
                doc.candidates[0].name,
                p.name
            );
            // The app shows why beside a new candidate whose kind takes a
            // policy; so does the command line.
            let info = AgentKindInfo::of(agent);
            if info.policy_applies {
                println!(
                    "its policy starts from {}'s defaults: {}",
                    info.label, info.starter_why
                );
            }
            Ok(Exit::Success)
        }
        Err(e @ EngineError::Validation(_)) => Ok(print_refusal(
            "--agent",
            &e,
            &[doc.candidates[0].name.clone()],
        )),
        Err(e) => Err(e.into()),
    }
}

/// A candidate of `kind`, named by the kind's label as the app names one
/// (`Claude Code`, not `claude-code`), with what the app's add-candidate path
/// gives it: the kind's starter settings and starter policy, fitted to how
/// that CLI fails, from the one [`AgentKindInfo`] the app reads too.
fn starter_candidate(kind: AgentKind) -> ProfileCandidate {
    let starter = AgentKindInfo::of(kind).starter;
    ProfileCandidate {
        name: kind.descriptor().label.to_string(),
        enabled: true,
        agent: starter.agent,
        transient: starter.policy.transient,
        hard: starter.policy.hard,
        unclassified: starter.policy.unclassified,
    }
}

/// A candidate's access level in words; a candidate saved before levels
/// existed says what that means.
fn access_words(agent: &recourse::agent::AgentSpec) -> String {
    match (agent.access, agent.kind.descriptor().access) {
        (Some(level), _) => level.as_str().to_string(),
        (None, Some(_)) => "none set: no flag is passed, so the CLI's own default applies \
            (in print mode it refuses most changes); set read_only, edit or full"
            .to_string(),
        (None, None) => "not applicable".to_string(),
    }
}

/// `recourse profile check NAME`: each candidate's readiness; exit 1 when
/// one cannot start.
async fn check(db: DbArg, name: String, json: bool) -> Result<Exit> {
    let profiles = stored_profiles(&db)?;
    let profile = find(&profiles, &name)?;
    let mut all = Vec::new();
    for c in &profile.candidates {
        all.push((c.name.clone(), recourse::engine::readiness(&c.agent).await));
    }
    if json {
        let doc: Vec<serde_json::Value> = all
            .iter()
            .map(|(name, r)| serde_json::json!({"candidate": name, "readiness": r}))
            .collect();
        super::print_json(&doc)?;
    } else {
        for (name, r) in &all {
            let state = if r.ready { "ready" } else { "not ready" };
            println!("{}: {state}", escape(name));
            if !r.program.is_empty() {
                let version = r.version.as_deref().unwrap_or("version unknown");
                let verified = r
                    .verified
                    .as_deref()
                    .map(|v| format!(" (verified with {v})"))
                    .unwrap_or_default();
                match &r.found {
                    Some(path) => println!(
                        "   program: {} — {}{verified}",
                        escape(path),
                        escape(version)
                    ),
                    None => println!("   program: {} — not found", escape(&r.program)),
                }
            }
            for c in &r.credentials {
                let what = if c.file { "file" } else { "variable" };
                let present = if c.present { "present" } else { "absent" };
                println!("   {what} {}: {present}", escape(&c.name));
            }
            for p in &r.problems {
                println!("   problem: {}", escape(p));
            }
            if let Some(install) = &r.install {
                println!("   install: {install}");
            }
        }
    }
    Ok(if all.iter().all(|(_, r)| r.ready) {
        Exit::Success
    } else {
        Exit::Failure
    })
}

fn edit(engine: &Engine, name: &str, database: &Path) -> Result<Exit> {
    let profiles = engine.list_profiles()?;
    let profile = find(&profiles, name)?.clone();
    let mut doc = ProfileDocument::from_profile(&profile).without_secrets();
    if doc.candidates.is_empty() {
        doc.candidates
            .push(starter_candidate(AgentKind::FIRST_CHOICE));
    }
    let original = doc.to_json_pretty();
    let file = std::env::temp_dir().join(format!(
        "recourse-profile-{}-{}.json",
        profile.id,
        std::process::id()
    ));
    // Only its owner can read it: the document may hold keys in a
    // candidate's environment.
    files::write_private(&file, original.as_bytes())
        .with_context(|| format!("cannot write {}", file.display()))?;
    let kept = |why: &str| {
        anyhow!(
            "{why}; nothing was saved; your edit is kept at {} \
             (`recourse profile import {} --replace` saves it)",
            file.display(),
            file.display()
        )
    };
    loop {
        run_editor(&file).map_err(|e| kept(&e))?;
        let text = read_input(&file, database)?;
        if text == original {
            let _ = std::fs::remove_file(&file);
            println!("no changes; profile {name:?} is as it was");
            return Ok(Exit::Success);
        }
        let loaded = match read_document(&text) {
            Ok(loaded) => loaded,
            Err(e) => {
                print_refusal(
                    &file.display().to_string(),
                    &e,
                    &words::candidate_names(&text),
                );
                if ask_to_edit_again()? {
                    continue;
                }
                return Err(kept("the document is not valid"));
            }
        };
        let target = ImportTarget::Replace {
            id: profile.id,
            expected_revision: profile.revision,
        };
        let preview = preview_import(&loaded, Some(&profile));
        match engine.import_profile(&loaded.document, target) {
            Ok(saved) => {
                let _ = std::fs::remove_file(&file);
                println!(
                    "saved profile {:?} (revision {}):",
                    saved.name, saved.revision
                );
                print_changes(&preview);
                return Ok(Exit::Success);
            }
            Err(EngineError::Conflict(why)) => {
                return Err(kept(&format!("profile {name:?} could not be saved: {why}")))
            }
            Err(e @ EngineError::Validation(_)) => {
                print_refusal(
                    &file.display().to_string(),
                    &e,
                    &words::candidate_names(&text),
                );
                if ask_to_edit_again()? {
                    continue;
                }
                return Err(kept("the document is not valid"));
            }
            Err(e) => return Err(e.into()),
        }
    }
}

/// Runs `$VISUAL`, else `$EDITOR`, else `vi` on `file` through the shell,
/// so an editor with arguments (`code --wait`) works.
fn run_editor(file: &Path) -> std::result::Result<(), String> {
    let editor = ["VISUAL", "EDITOR"]
        .iter()
        .find_map(|v| std::env::var(v).ok().filter(|s| !s.trim().is_empty()))
        .unwrap_or_else(|| "vi".to_string());
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("{editor} \"$1\""))
        .arg("recourse-edit")
        .arg(file)
        .status()
        .map_err(|e| format!("cannot start the editor ({editor}): {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("the editor ({editor}) exited with {status}"))
    }
}

/// On a terminal, asks whether to open the editor again; elsewhere no.
fn ask_to_edit_again() -> Result<bool> {
    if !std::io::stdin().is_terminal() {
        return Ok(false);
    }
    eprint!("edit again? [Y/n] ");
    let mut answer = String::new();
    std::io::stdin().read_line(&mut answer)?;
    Ok(!answer.trim().to_lowercase().starts_with('n'))
}
