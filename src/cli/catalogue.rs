//! `recourse catalogue list|show|stats|test|add|remove|export`: the local
//! catalogue overlay from the command line, with the same checks as the app.
//!
//! A rules FILE holds `[[rule]]` blocks in the local schema (the built-in
//! one plus `overrides` and `reviewed`). `add` saves a rule unreviewed
//! (shown, never acted on) unless `--reviewed` says a person reviewed it.
//!
//! Exit codes: 0 done, 1 a file or the database could not be read or
//! written, 2 a rule is invalid or refused by its checks (every reason on
//! stderr), or an unknown id.

use std::path::{Path, PathBuf};

use anyhow::{anyhow, Context};
use clap::{Args, Subcommand};
use serde::Deserialize;

use recourse::catalogue::bundled::{builtin_fixtures, negative_corpus};
use recourse::catalogue::checks::{describe, Change, RuleChecks, Sample};
use recourse::catalogue::export::{patch, NewFixture};
use recourse::catalogue::stats::CatalogueStats;
use recourse::catalogue::{Catalogue, Origin, ProviderScope, Rule, RuleSpec, RULES_TOML};
use recourse::controls::escape;
use recourse::engine::overlay::{overlay_dir, Overlay};
use recourse::engine::RouteViewer;
use recourse::timing::machine_local_tz;

use super::exit::Exit;
use super::routes::DbArg;

/// Where the local catalogue is, or that it is not used.
#[derive(Args, Debug)]
pub struct OverlayArgs {
    /// Database whose folder holds the local catalogue (default: $RECOURSE_DB,
    /// else <data dir>/recourse/recourse.db)
    #[arg(long)]
    pub db: Option<PathBuf>,
    /// Use the built-in catalogue only, ignoring local rules
    #[arg(long)]
    pub builtin_only: bool,
}

impl OverlayArgs {
    fn db_path(&self) -> PathBuf {
        DbArg {
            db: self.db.clone(),
        }
        .path()
    }

    /// The overlay in force; a broken local file is reported on stderr and
    /// the built-in catalogue used.
    pub fn overlay(&self) -> Overlay {
        if self.builtin_only {
            return Overlay::builtin_only();
        }
        let overlay = Overlay::open(overlay_dir(&self.db_path()));
        if let Some(error) = overlay.error() {
            eprintln!("warning: {error}; using the built-in catalogue");
        }
        overlay
    }

    pub fn catalogue(&self) -> std::sync::Arc<Catalogue> {
        self.overlay().catalogue()
    }
}

#[derive(Subcommand)]
pub enum CatalogueCommand {
    /// List every rule in force, local ones marked
    List {
        #[command(flatten)]
        overlay: OverlayArgs,
    },
    /// Show one rule: patterns, origin, and the fixtures that expect it
    Show {
        id: String,
        #[command(flatten)]
        overlay: OverlayArgs,
    },
    /// Count rules, fixtures (by kind, class, code and source) and the
    /// negative corpus
    Stats {
        /// One JSON object instead of text
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        overlay: OverlayArgs,
    },
    /// Run the checks of the rules in FILE without saving them
    Test {
        file: PathBuf,
        /// A changed fixture you accept, by name (repeatable)
        #[arg(long = "confirm", value_name = "FIXTURE")]
        confirm: Vec<String>,
        #[command(flatten)]
        overlay: OverlayArgs,
    },
    /// Check the rules in FILE and save them to the local catalogue
    Add {
        file: PathBuf,
        /// A person reviewed these rules: they act on the next failure
        #[arg(long)]
        reviewed: bool,
        /// A changed fixture you accept, by name (repeatable)
        #[arg(long = "confirm", value_name = "FIXTURE")]
        confirm: Vec<String>,
        #[command(flatten)]
        overlay: OverlayArgs,
    },
    /// Remove a local rule and its local fixtures
    Remove {
        id: String,
        #[command(flatten)]
        overlay: OverlayArgs,
    },
    /// Print a local rule and its fixtures as a patch for this repository
    Export {
        id: String,
        #[command(flatten)]
        overlay: OverlayArgs,
    },
}

pub fn run(command: CatalogueCommand) -> Exit {
    match execute(command) {
        Ok(exit) => exit,
        Err(error) => {
            eprintln!("error: {}", super::error_text(&error));
            Exit::Failure
        }
    }
}

fn execute(command: CatalogueCommand) -> anyhow::Result<Exit> {
    match command {
        CatalogueCommand::List { overlay } => Ok(list(&overlay.overlay())),
        CatalogueCommand::Show { id, overlay } => Ok(show(&overlay.overlay(), &id)),
        CatalogueCommand::Stats { json, overlay } => stats(&overlay.overlay(), json),
        CatalogueCommand::Test {
            file,
            confirm,
            overlay,
        } => test(&overlay, &file, &confirm),
        CatalogueCommand::Add {
            file,
            reviewed,
            confirm,
            overlay,
        } => add(&overlay, &file, reviewed, &confirm),
        CatalogueCommand::Remove { id, overlay } => remove(&overlay, &id),
        CatalogueCommand::Export { id, overlay } => Ok(export(&overlay.overlay(), &id)),
    }
}

fn list(overlay: &Overlay) -> Exit {
    let catalogue = overlay.catalogue();
    println!("catalogue {}", catalogue.version);
    for rule in &catalogue.rules {
        let origin = origin_words(rule);
        let origin = if origin.is_empty() {
            String::new()
        } else {
            format!("  [{origin}]")
        };
        println!(
            "{}  {} ({})  priority {}  {}{}",
            escape(&rule.id),
            rule.code.as_str(),
            rule.class().as_str(),
            rule.priority,
            providers(rule),
            escape(&origin)
        );
    }
    Exit::Success
}

/// Built-in and local rules and fixtures; the built-in negative corpus.
fn stats(overlay: &Overlay, json: bool) -> anyhow::Result<Exit> {
    let mut fixtures = builtin_fixtures().to_vec();
    let (local, problems) = overlay.local_fixtures();
    for problem in problems {
        eprintln!("warning: {problem}");
    }
    fixtures.extend(local);
    let stats = CatalogueStats::of(&overlay.catalogue(), &fixtures, negative_corpus());
    if json {
        println!("{}", serde_json::to_string_pretty(&stats)?);
        return Ok(Exit::Success);
    }
    let counts = |map: &std::collections::BTreeMap<String, usize>| {
        map.iter()
            .map(|(k, n)| format!("{k} {n}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let r = &stats.rules;
    println!("catalogue {}", stats.version);
    println!(
        "rules: {} ({} built-in, {} local); by class: {}",
        r.total,
        r.builtin,
        r.local,
        counts(&r.by_class)
    );
    let f = &stats.fixtures;
    println!("fixtures: {}", f.total);
    println!("  by kind: {}", counts(&f.by_kind));
    println!("  by class: {}", counts(&f.by_class));
    println!("  by source: {}", counts(&f.by_source_kind));
    println!("  by code: {}", counts(&f.by_code));
    let c = &stats.negative_corpus;
    println!(
        "negative corpus: {} texts ({} lines of ordinary agent output, {} negative fixtures)",
        c.total, c.ordinary_output, c.negative_fixtures
    );
    Ok(Exit::Success)
}

/// `local`, `local, overrides X`, `local, not reviewed`; empty for built-in.
fn origin_words(rule: &Rule) -> String {
    match &rule.origin {
        Origin::Builtin => String::new(),
        Origin::Local {
            overrides,
            reviewed,
        } => {
            let mut words = vec!["local".to_owned()];
            if let Some(target) = overrides {
                words.push(format!("overrides {target}"));
            }
            if !reviewed {
                words.push("not reviewed".to_owned());
            }
            words.join(", ")
        }
    }
}

fn providers(rule: &Rule) -> String {
    match &rule.providers {
        ProviderScope::Any => "any provider".to_owned(),
        ProviderScope::Only(list) => list
            .iter()
            .map(|p| p.as_str())
            .collect::<Vec<_>>()
            .join(", "),
    }
}

fn show(overlay: &Overlay, id: &str) -> Exit {
    let catalogue = overlay.catalogue();
    let Some(rule) = catalogue.rules.iter().find(|r| r.id == id) else {
        eprintln!(
            "error: no rule {} in catalogue {}",
            escape(id),
            catalogue.version
        );
        return Exit::BadInput;
    };
    let origin = origin_words(rule);
    println!("rule:        {}", escape(&rule.id));
    println!("description: {}", escape(&rule.description));
    println!(
        "code:        {} (class {})",
        rule.code.as_str(),
        rule.class().as_str()
    );
    println!("confidence:  {:?}", rule.confidence);
    println!("priority:    {}", rule.priority);
    println!("providers:   {}", providers(rule));
    println!(
        "origin:      {}",
        if origin.is_empty() {
            "built-in".into()
        } else {
            escape(&origin)
        }
    );
    for (index, matcher) in rule.matchers.iter().enumerate() {
        if let Some(pattern) = matcher.text_pattern() {
            println!("pattern {index}:   {}", escape(pattern));
        }
    }
    for name in overlay.fixtures_by_rule().remove(id).unwrap_or_default() {
        println!("fixture:     {}", escape(&name));
    }
    Exit::Success
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RulesFile {
    rule: Vec<RuleSpec>,
}

fn read_rules(file: &Path) -> anyhow::Result<Result<Vec<RuleSpec>, String>> {
    let text = super::read_bounded(file, super::MAX_INPUT_BYTES)
        .map_err(|why| anyhow!("cannot read rules file {}: {why}", file.display()))?;
    Ok(toml::from_str::<RulesFile>(&text)
        .map(|f| f.rule)
        .map_err(|e| format!("{}: not a rules file: {e}", file.display())))
}

/// Past attempts and the inbox of the database, when there is one.
fn samples(overlay: &OverlayArgs) -> anyhow::Result<Vec<Sample>> {
    let path = overlay.db_path();
    if !recourse::engine::database_exists(&path)? {
        return Ok(Vec::new());
    }
    let viewer = RouteViewer::open(&path).with_context(|| format!("opening {}", path.display()))?;
    Ok(viewer.rule_samples()?)
}

fn test(args: &OverlayArgs, file: &Path, confirm: &[String]) -> anyhow::Result<Exit> {
    let specs = match read_rules(file)? {
        Ok(specs) => specs,
        Err(message) => return Ok(refused(&[message])),
    };
    let overlay = args.overlay();
    let samples = samples(args)?;
    let mut exit = Exit::Success;
    for spec in &specs {
        let review = overlay.review(spec, None, &samples, confirm, machine_local_tz());
        println!("rule {}", review.rule_id);
        if let Some(checks) = &review.checks {
            print_checks(checks);
        }
        if !review.refusals.is_empty() {
            let reasons: Vec<String> = review.refusals.iter().map(ToString::to_string).collect();
            exit = refused(&reasons);
        }
    }
    Ok(exit)
}

fn print_checks(checks: &RuleChecks) {
    println!(
        "  impact: {} of {} inbox items and past attempts change",
        checks.impact.len(),
        checks.samples_checked
    );
    print_changes(&checks.impact);
    println!(
        "  fixtures: {} of {} change",
        checks.changed_fixtures.len(),
        checks.fixtures_checked
    );
    print_changes(&checks.changed_fixtures);
    if checks.broadness.is_empty() {
        println!("  broadness: bounded, matches no ordinary output");
    }
}

fn print_changes(changes: &[Change]) {
    for change in changes {
        println!(
            "    {}: {} → {}",
            change.name,
            super::time::readable_times(&describe(&change.before)),
            super::time::readable_times(&describe(&change.after))
        );
    }
}

fn refused(reasons: &[String]) -> Exit {
    for reason in reasons {
        eprintln!("refused: {reason}");
    }
    Exit::BadInput
}

fn add(
    args: &OverlayArgs,
    file: &Path,
    reviewed: bool,
    confirm: &[String],
) -> anyhow::Result<Exit> {
    if args.builtin_only {
        return Ok(refused(&[
            "--builtin-only has no local catalogue to add to".to_owned(),
        ]));
    }
    let specs = match read_rules(file)? {
        Ok(specs) => specs,
        Err(message) => return Ok(refused(&[message])),
    };
    let mut overlay = args.overlay();
    let samples = samples(args)?;
    for spec in specs {
        let spec = RuleSpec {
            reviewed: Some(reviewed),
            ..spec
        };
        match overlay.save(&spec, None, &samples, confirm, machine_local_tz()) {
            Ok(saved) => {
                let state = if reviewed {
                    "acts on the next failure"
                } else {
                    "not reviewed: shown, never acted on (add again with --reviewed)"
                };
                println!(
                    "saved {} to {} (catalogue {}); {state}",
                    saved.rule_id, saved.rules_path, saved.catalogue_version
                );
            }
            Err(recourse::engine::EngineError::Validation(errors)) => {
                let reasons: Vec<String> = errors.iter().map(ToString::to_string).collect();
                return Ok(refused(&reasons));
            }
            Err(other) => return Err(other.into()),
        }
    }
    Ok(Exit::Success)
}

fn remove(args: &OverlayArgs, id: &str) -> anyhow::Result<Exit> {
    let mut overlay = args.overlay();
    match overlay.remove(id) {
        Ok(version) => {
            println!("removed {id} (catalogue {version})");
            Ok(Exit::Success)
        }
        Err(e @ recourse::engine::EngineError::NotFound { .. }) => {
            eprintln!("error: {e}");
            Ok(Exit::BadInput)
        }
        Err(other) => Err(other.into()),
    }
}

fn export(overlay: &Overlay, id: &str) -> Exit {
    let Some(spec) = overlay.local().rules.iter().find(|r| r.id == id) else {
        eprintln!("error: local rule {id} does not exist");
        return Exit::BadInput;
    };
    let fixtures: Vec<NewFixture> = overlay
        .local_fixtures()
        .0
        .into_iter()
        .filter(|f| f.fixture.expect.rule_id.as_deref() == Some(id))
        .map(|f| NewFixture {
            path: format!(
                "fixtures/catalogue/{}/{}",
                f.fixture.input.provider.as_str(),
                f.name.trim_start_matches("local/")
            ),
            text: toml::to_string(&f.fixture).expect("a fixture always serializes"),
        })
        .collect();
    print!("{}", patch(RULES_TOML, spec, &fixtures));
    Exit::Success
}
