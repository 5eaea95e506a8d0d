//! `recourse accounts [--json]`, `recourse accounts clear ACCOUNT` and
//! `recourse accounts max-running [N|off]`: the accounts the candidates run
//! as, their limit marks and routes, clearing a mark by hand, and the
//! global maximum of running agents every process on the database obeys.

use anyhow::Result;
use chrono::{DateTime, Utc};
use clap::{Args, Subcommand};
use recourse::controls::escape;
use recourse::engine::{AccountStatus, AccountView, AccountsOverview, MarkView, RouteViewer};

use super::exit::Exit;
use super::routes::{open_viewer, DbArg};

#[derive(Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct AccountsArgs {
    #[command(subcommand)]
    command: Option<AccountsCommand>,
    /// Print JSON instead of lines
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    db: DbArg,
}

#[derive(Subcommand)]
pub enum AccountsCommand {
    /// Remove every limit mark of ACCOUNT (its id or its name), so its
    /// routes dispatch again
    Clear {
        /// The account, as `recourse accounts` names it
        account: String,
        #[command(flatten)]
        db: DbArg,
    },
    /// Show the global maximum of running agents, or set it (a number from
    /// 1 to 256, or `off`)
    MaxRunning {
        #[arg(value_parser = parse_max)]
        value: Option<MaxRunning>,
        #[command(flatten)]
        db: DbArg,
    },
}

/// A maximum to set, or none.
#[derive(Debug, Clone, Copy)]
pub struct MaxRunning(Option<u32>);

fn parse_max(text: &str) -> Result<MaxRunning, String> {
    if text == "off" {
        return Ok(MaxRunning(None));
    }
    text.parse::<u32>()
        .map(|n| MaxRunning(Some(n)))
        .map_err(|_| {
            format!(
                "{}: expected a number of running agents, or off",
                super::shown_value(text)
            )
        })
}

pub async fn run(args: AccountsArgs) -> Result<Exit> {
    match args.command {
        None => list(&args.db, args.json),
        Some(AccountsCommand::Clear { account, db }) => {
            let engine = open_viewer(&db).await?;
            let cleared = engine.clear_account(&account);
            engine.shutdown().await;
            let cleared = cleared?;
            println!(
                "cleared {cleared} limit mark{} on {}; its routes dispatch again",
                if cleared == 1 { "" } else { "s" },
                escape(account.trim())
            );
            Ok(Exit::Success)
        }
        Some(AccountsCommand::MaxRunning { value, db }) => {
            let engine = open_viewer(&db).await?;
            let result = match value {
                Some(MaxRunning(max)) => engine.set_max_running(max).map(|()| max),
                None => engine.max_running(),
            };
            engine.shutdown().await;
            match result? {
                Some(max) => println!("max running agents: {max}"),
                None => println!("max running agents: no maximum"),
            }
            Ok(Exit::Success)
        }
    }
}

fn list(db: &DbArg, json: bool) -> Result<Exit> {
    if !recourse::engine::database_exists(&db.path())? {
        println!("no accounts yet — a candidate's account is known once its profile is saved");
        return Ok(Exit::Success);
    }
    let viewer = RouteViewer::open(&db.path())?;
    let all = viewer.accounts()?;
    if json {
        super::print_json(&all)?;
        return Ok(Exit::Success);
    }
    print!("{}", text(&all, Utc::now()));
    Ok(Exit::Success)
}

/// The accounts as lines: each account's state, marks, candidates and
/// routes, then the global maximum.
pub fn text(all: &AccountsOverview, now: DateTime<Utc>) -> String {
    let mut out = String::new();
    if all.accounts.is_empty() {
        out.push_str(
            "no accounts yet — a candidate's account is known once its profile is saved\n",
        );
    }
    for a in &all.accounts {
        out.push_str(&account_line(a, now));
        out.push('\n');
        for m in &a.marks {
            out.push_str(&format!("  {}\n", mark_line(m)));
        }
        let candidates: Vec<String> = a
            .candidates
            .iter()
            .map(|c| format!("{} / {}", escape(&c.profile), escape(&c.candidate)))
            .collect();
        if !candidates.is_empty() {
            out.push_str(&format!("  candidates: {}\n", candidates.join(", ")));
        }
    }
    out.push_str(&format!(
        "max running agents: {} ({} running)\n",
        all.max_running
            .map_or("no maximum".to_string(), |m| m.to_string()),
        all.running
    ));
    out
}

fn account_line(a: &AccountView, now: DateTime<Utc>) -> String {
    let id = if a.labelled {
        String::new()
    } else {
        format!(" [{}]", a.id)
    };
    let state = match a.status {
        AccountStatus::Ready => "ready".to_string(),
        AccountStatus::Limited { until } => format!("limited until {}", instant(until, now)),
        AccountStatus::Refused => "refused: limited until cleared".to_string(),
        AccountStatus::Probing { route_id } => {
            format!("reset passed; route {route_id} is trying it")
        }
        AccountStatus::ResetPassed => "reset passed; the next dispatch tries it".to_string(),
    };
    let limit = a.limit.map_or("-".to_string(), |l| l.to_string());
    let waiting = if a.waiting.is_empty() {
        "none".to_string()
    } else {
        let ids: Vec<String> = a.waiting.iter().map(|r| r.to_string()).collect();
        format!("routes {}", ids.join(", "))
    };
    let day = a.chart.iter().fold([0u32; 4], |t, h| {
        [
            t[0] + h.succeeded,
            t[1] + h.transient,
            t[2] + h.hard,
            t[3] + h.other,
        ]
    });
    format!(
        "{}{id} | {state} | running {}/{limit} | waiting: {waiting} | 24 h: {} succeeded, {} \
         transient, {} hard, {} other",
        escape(&a.name),
        a.running,
        day[0],
        day[1],
        day[2],
        day[3]
    )
}

fn mark_line(m: &MarkView) -> String {
    let until = match m.until {
        Some(u) => format!(
            "until {}{}",
            super::time::date_time(u),
            if m.trusted {
                " (the provider's reset)"
            } else {
                " (default hold)"
            }
        ),
        None => "until cleared".to_string(),
    };
    let model = m
        .model
        .as_deref()
        .map(|m| format!(" model {}", escape(m)))
        .unwrap_or_default();
    format!(
        "mark: {} {}{model} [{}] {until}, from route {} attempt {}",
        m.class.as_str(),
        m.code.as_str(),
        escape(m.rule_id.as_deref().unwrap_or("no rule")),
        m.route_id,
        m.attempt
    )
}

/// `2 Dec 2026, 13:02:00 (in 3 h 2 min)`, local time.
fn instant(at: DateTime<Utc>, now: DateTime<Utc>) -> String {
    let secs = ((at - now).num_milliseconds().max(0) + 999) / 1000;
    let left = recourse::timing::words::readable(u64::try_from(secs).unwrap_or(0));
    format!("{} (in {left})", super::time::date_time(at))
}
