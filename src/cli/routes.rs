//! `recourse routes` and `recourse route ID`: read routes from the database,
//! opened read-only, and the shared line format every route command prints.

use std::path::PathBuf;

use anyhow::{anyhow, bail, Context, Result};
use chrono::{DateTime, Utc};
use clap::Args;
use recourse::controls::escape;
use recourse::engine::{
    Engine, EngineError, EngineOptions, RouteDetail, RouteSnapshot, RouteViewer,
};
use recourse::route::RouteState;
use recourse::store::StoreError;

use super::exit::Exit;
use super::time::{date_time, readable_times};

/// Runs a route command on a fresh tokio runtime with warn-level logs on
/// stderr (`RECOURSE_LOG` overrides), printing any error.
pub fn block_on(command: impl std::future::Future<Output = Result<Exit>>) -> Exit {
    init_logs();
    let result = tokio::runtime::Runtime::new()
        .context("starting the async runtime")
        .and_then(|rt| rt.block_on(command));
    report(result)
}

/// Runs a command that needs no runtime, like [`block_on`].
pub fn run_sync(command: impl FnOnce() -> Result<Exit>) -> Exit {
    init_logs();
    report(command())
}

fn init_logs() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("RECOURSE_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(recourse::engine::stderr_log_colours())
        .with_env_filter(filter)
        .init();
}

/// The exit code of a command's result; an error is one line on stderr.
fn report(result: Result<Exit>) -> Exit {
    match result {
        Ok(exit) => exit,
        Err(e) => {
            eprintln!("error: {}", super::error_text(&e));
            Exit::Failure
        }
    }
}

const NO_ROUTES: &str =
    "no routes yet — start one with `recourse run --profile NAME --prompt TEXT`";

#[derive(Args)]
pub struct DbArg {
    /// Database file (default: $RECOURSE_DB, else <data dir>/recourse/recourse.db)
    #[arg(long)]
    pub db: Option<PathBuf>,
}

impl DbArg {
    pub fn path(&self) -> PathBuf {
        self.db
            .clone()
            .unwrap_or_else(recourse::engine::default_db_path)
    }
}

#[derive(Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct RoutesArgs {
    /// Archive, delete or prune routes instead of listing them
    #[command(subcommand)]
    pub command: Option<super::housekeeping::RoutesCommand>,
    /// Print JSON instead of a table
    #[arg(long)]
    json: bool,
    /// Only routes in these states (repeat or comma-separate)
    #[arg(long, value_delimiter = ',', value_parser = super::one_of(&RouteState::ALL, RouteState::as_str))]
    state: Vec<RouteState>,
    #[command(flatten)]
    db: DbArg,
}

#[derive(Args)]
pub struct RouteArgs {
    /// Route id
    id: u32,
    /// Print JSON instead of text (with every attempt's whole transcript)
    #[arg(long)]
    json: bool,
    /// Print each attempt's whole transcript: what the agent said, every
    /// tool call with its status, the answer and the files changed
    #[arg(long)]
    transcript: bool,
    #[command(flatten)]
    db: DbArg,
}

/// Opens the engine on an existing database without seeding or adopting,
/// for a command that writes (`recourse action`). Only `recourse run`
/// creates a database.
pub async fn open_viewer(db: &DbArg) -> Result<Engine> {
    let opts = EngineOptions {
        seed_demo: false,
        adopt_orphans: false,
        ..EngineOptions::default()
    };
    let path = existing(db)?;
    Engine::open(&path, opts)
        .await
        .with_context(|| format!("opening {}", path.display()))
}

/// The database path, which must exist.
fn existing(db: &DbArg) -> Result<PathBuf> {
    let path = db.path();
    if !recourse::engine::database_exists(&path)? {
        bail!(
            "no database at {}; `recourse run` creates it",
            path.display()
        );
    }
    Ok(path)
}

/// Opens an existing database read-only, for commands that only look.
fn open_read_only(db: &DbArg) -> Result<RouteViewer> {
    let path = existing(db)?;
    RouteViewer::open(&path).with_context(|| format!("opening {}", path.display()))
}

/// Exit code 1 when a route's row could not be read; the others are shown.
pub fn list(args: RoutesArgs) -> Result<Exit> {
    if !recourse::engine::database_exists(&args.db.path())? {
        println!("{NO_ROUTES}");
        return Ok(Exit::Success);
    }
    let viewer = open_read_only(&args.db)?;
    let all = viewer.list_routes()?;
    // Only a hint: a failure to tell leaves the routes unmarked.
    let orphaned = viewer.orphaned_ids().unwrap_or_default();
    let total = all.len();
    let mut routes = Vec::with_capacity(total);
    let mut unreadable = Vec::new();
    let now = Utc::now();
    let wanted = |s: &RouteSnapshot| args.state.is_empty() || args.state.contains(&s.state);
    for r in all {
        match r {
            Ok(s) if !wanted(&s) => {}
            Ok(s) => {
                if !args.json {
                    println!("{}{}", line(&s, now), orphan_note(&orphaned, s.id));
                }
                routes.push(s);
            }
            Err(e) => unreadable.push(e),
        }
    }
    if args.json {
        let mut listed = serde_json::to_value(&routes)?;
        if let Some(items) = listed.as_array_mut() {
            for (item, s) in items.iter_mut().zip(&routes) {
                if let Some(fields) = item.as_object_mut() {
                    fields.insert("orphaned".into(), orphaned.contains(&s.id).into());
                }
            }
        }
        super::print_json(&listed)?;
    } else if total == 0 {
        // Nothing stored at all (an unreadable row is still a route).
        println!("{NO_ROUTES}");
    }
    if unreadable.is_empty() {
        return Ok(Exit::Success);
    }
    for e in &unreadable {
        eprintln!("error: {e}");
    }
    eprintln!(
        "error: {} of {total} route{} could not be read; the others are shown",
        unreadable.len(),
        if total == 1 { "" } else { "s" }
    );
    Ok(Exit::Failure)
}

pub fn show(args: RouteArgs) -> Result<Exit> {
    let viewer = open_read_only(&args.db)?;
    let detail = viewer.route_detail(args.id).map_err(|e| match e {
        EngineError::Store(error @ StoreError::Malformed { .. }) => anyhow!(
            "{}",
            recourse::engine::UnreadableRoute { id: args.id, error }
        ),
        e => e.into(),
    })?;
    let transcripts: Vec<recourse::engine::AttemptTranscript> = detail
        .attempts
        .iter()
        .filter(|a| a.transcript.is_some())
        .filter_map(|a| viewer.attempt_transcript(args.id, a.number).ok())
        .collect();
    if args.json {
        /// The route's detail with every attempt's whole transcript.
        #[derive(serde::Serialize)]
        struct WithTranscripts<'a> {
            #[serde(flatten)]
            detail: &'a RouteDetail,
            transcripts: &'a [recourse::engine::AttemptTranscript],
        }
        super::print_json(&WithTranscripts {
            detail: &detail,
            transcripts: &transcripts,
        })?;
        return Ok(Exit::Success);
    }
    let orphaned = viewer.orphaned_ids().unwrap_or_default();
    print_detail(&detail, &orphaned);
    if args.transcript {
        for t in &transcripts {
            super::transcript::print(t);
        }
    }
    Ok(Exit::Success)
}

/// Marks an orphaned route in `routes` and `route ID`.
pub const ORPHANED: &str =
    " | orphaned: the process that ran it is gone; `recourse recover` (or the app) takes it over";

fn orphan_note(orphaned: &[u32], id: u32) -> &'static str {
    if orphaned.contains(&id) {
        ORPHANED
    } else {
        ""
    }
}

fn print_detail(d: &RouteDetail, orphaned: &[u32]) {
    let s = &d.snapshot;
    println!("{}{}", line(s, Utc::now()), orphan_note(orphaned, s.id));
    println!(
        "  profile: {}   prompt: {}",
        escape(&s.profile_name),
        escape(&s.prompt_excerpt)
    );
    if let Some(cwd) = &s.cwd {
        println!("  directory: {}", escape(cwd));
    }
    if let Some(reason) = &s.manual_reason {
        println!("  reason: {}", escape(&readable_times(reason)));
    }
    if let Some(f) = &s.last_failure {
        println!(
            "  last failure: candidate {} “{}” — {}",
            f.candidate_index + 1,
            escape(&f.candidate_name),
            escape(&readable_times(
                f.decision.as_deref().unwrap_or("no decision recorded")
            ))
        );
    }
    if let Some(r) = s.retry {
        println!("  {} retries: {} of {}", r.class.as_str(), r.ordinal, r.max);
    }
    if let Some(outcome) = s.pending_outcome {
        println!("  when exhausted: {}", outcome.as_str());
    }
    println!("{}", actions_line(s));
    if let Some(risk) = &s.repeat_risk {
        println!("  may repeat work: {}", escape(risk));
    }
    // A person's action and a hold come before an attempt of their
    // generation: the dispatch they led to.
    let mut manual = d.manual_actions.iter().peekable();
    let mut holds = d.holds.iter().peekable();
    for a in &d.attempts {
        while let Some(m) = manual.next_if(|m| m.generation <= a.generation) {
            print_action(m);
        }
        while let Some(h) = holds.next_if(|h| h.generation <= a.generation) {
            print_hold(h);
        }
        let outcome = a.outcome.map_or("running", |o| o.as_str());
        println!(
            "  attempt {} {} — {}{}",
            a.number,
            escape(&a.candidate_name),
            outcome,
            a.classification
                .as_ref()
                .map(|c| format!(
                    " — {} {} [{}]",
                    c.class.as_str(),
                    c.code.as_str(),
                    escape(c.rule_id.as_deref().unwrap_or("no rule"))
                ))
                .unwrap_or_default()
        );
        if let Some(sent) = a.input.describe() {
            println!("      sent: {}", escape(&sent));
        }
        if let Some(decision) = &a.decision {
            println!("      decision: {}", escape(&readable_times(decision)));
        }
        if let Some(code) = a.exit_code {
            println!("      exit code: {code}");
        }
        if let Some(excerpt) = &a.excerpt {
            println!("      evidence: {}", escape(excerpt));
        }
        if let Some(t) = &a.transcript {
            let mut said = vec![format!(
                "{} tool call{}",
                t.tool_calls,
                if t.tool_calls == 1 { "" } else { "s" }
            )];
            if !t.refused.is_empty() {
                said.push(format!("refused: {}", escape(&t.refused.join(", "))));
            }
            if let Some(n) = t.files_changed {
                said.push(format!("{n} file{} changed", if n == 1 { "" } else { "s" }));
            }
            if t.input_tokens + t.output_tokens > 0 {
                said.push(format!(
                    "{} in / {} out tokens",
                    t.input_tokens, t.output_tokens
                ));
            }
            if let Some(c) = t.cost_usd {
                said.push(format!("${c:.4}"));
            }
            let quiet = t.tool_calls == 0
                && t.refused.is_empty()
                && t.files_changed.unwrap_or(0) == 0
                && t.input_tokens + t.output_tokens == 0;
            if !quiet {
                println!("      agent: {}", said.join(", "));
            }
            if let Some(answer) = &t.answer_excerpt {
                println!("      answer: {}", escape(answer));
            }
        }
    }
    if let Some(notice) = &d.refused_notice {
        println!("  note: {}", escape(notice));
    }
    let u = &d.totals;
    if u.input_tokens + u.output_tokens > 0 {
        let cost = u.cost_usd.map(|c| format!(", ${c:.4}")).unwrap_or_default();
        println!(
            "  total: {} in / {} out tokens{cost}",
            u.input_tokens, u.output_tokens
        );
    }
    manual.for_each(print_action);
    holds.for_each(print_hold);
}

fn print_action(m: &recourse::engine::ActionView) {
    println!(
        "  you: {} {} at {}: {}",
        m.action.label(),
        m.by.words(),
        date_time(m.at),
        escape(&readable_times(&m.text))
    );
}

fn print_hold(h: &recourse::engine::HoldView) {
    println!(
        "  not dispatched: {} — {} {} [{}]",
        escape(&h.candidate_name),
        h.classification.class.as_str(),
        h.classification.code.as_str(),
        escape(h.classification.rule_id.as_deref().unwrap_or("no rule"))
    );
    println!("      decision: {}", escape(&readable_times(&h.text)));
}

/// The actions a person can take now, as `recourse action` spells them,
/// with the command and the generation it needs: the one place the CLI
/// shows a route's generation.
pub fn actions_line(s: &RouteSnapshot) -> String {
    if s.actions.is_empty() {
        return "  actions: none".to_string();
    }
    let names: Vec<&str> = s.actions.iter().map(|a| a.as_str()).collect();
    format!(
        "  actions: {} (recourse action {} ACTION --generation {})",
        names.join(", "),
        s.id,
        s.generation
    )
}

/// The width of the state column: its longest words.
fn state_width() -> usize {
    RouteState::ALL
        .into_iter()
        .map(|state| state.words().chars().count())
        .max()
        .unwrap_or(0)
}

/// One line per route state: id, state (in the app's words), candidate,
/// why, when.
pub fn line(s: &RouteSnapshot, now: DateTime<Utc>) -> String {
    let mut out = format!(
        "route {} {:<width$} candidate {}/{} {}",
        s.id,
        s.state.words(),
        s.candidate_index + 1,
        s.candidate_count,
        escape(&s.candidate_name),
        width = state_width()
    );
    if let Some(f) = &s.last_failure {
        let c = &f.classification;
        if f.candidate_index == s.candidate_index {
            out.push_str(&format!(" | {} {}", c.class.as_str(), c.code.as_str()));
        } else {
            out.push_str(&format!(
                " | after {} {} on candidate {} {}",
                c.class.as_str(),
                c.code.as_str(),
                f.candidate_index + 1,
                escape(&f.candidate_name)
            ));
        }
    }
    if let Some(queued) = &s.queued {
        out.push_str(&format!(" | {}", escape(&readable_times(queued))));
    }
    if let (Some(r), RouteState::RetryScheduled) = (s.retry, s.state) {
        out.push_str(&format!(" | retry {}/{}", r.ordinal, r.max));
    }
    if s.archived_at.is_some() {
        out.push_str(" | archived");
    }
    if let Some(deadline) = s.deadline {
        // Rounded up, so a countdown never says 0 before it is due.
        let secs = ((deadline - now).num_milliseconds().max(0) + 999) / 1000;
        out.push_str(&format!(
            " | due {} (in {})",
            date_time(deadline),
            recourse::timing::words::readable(u64::try_from(secs).unwrap_or(0))
        ));
    }
    out
}
