//! `recourse simulate --policy FILE --errors FILE [--json]`: print the
//! timeline of decisions a failure sequence would produce, using the same
//! [`simulate`] function as the UI preview.
//!
//! Exit codes: 0 printed, 1 a file could not be read (or is larger than
//! [`super::MAX_INPUT_BYTES`], 1 MiB), 2 a file is invalid.

use super::exit::Exit;
use super::policy::{read_policy, report_invalid};
use anyhow::anyhow;
use chrono::{DateTime, SecondsFormat, Utc};
use clap::Args;
use recourse::evaluator::{CandidateSlot, Decision, Wording};
use recourse::policy::document::field_path;
use recourse::simulation::{
    check_failures, simulate, SimulatedFailure, TimelineStep, TimelineWording,
};
use serde::Deserialize;
use std::path::{Path, PathBuf};

#[derive(Args)]
pub struct SimulateArgs {
    /// Policy document (current or legacy).
    #[arg(long)]
    policy: PathBuf,
    /// Failure sequence: `{"start": RFC 3339?, "failures": [...]}`.
    #[arg(long)]
    errors: PathBuf,
    /// Print the timeline as JSON.
    #[arg(long)]
    json: bool,
}

/// The failure sequence file.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FailureFile {
    /// When the first attempt fails; the current time when absent.
    #[serde(default)]
    start: Option<DateTime<Utc>>,
    failures: Vec<SimulatedFailure>,
}

pub fn run(args: SimulateArgs) -> Exit {
    match execute(&args) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("error: {}", super::error_text(&error));
            Exit::Failure
        }
    }
}

fn execute(args: &SimulateArgs) -> anyhow::Result<Exit> {
    let document = match read_policy(&args.policy)? {
        Ok(loaded) => loaded.document,
        Err(error) => return Ok(report_invalid(&args.policy, &error)),
    };
    let failures = match read_failures(&args.errors)? {
        Ok(file) => file,
        Err(messages) => {
            for message in messages {
                eprintln!("{message}");
            }
            eprintln!("{}: invalid failure sequence", args.errors.display());
            return Ok(Exit::BadInput);
        }
    };
    let candidates: Vec<CandidateSlot> = document
        .candidates
        .iter()
        .map(CandidateSlot::from)
        .collect();
    if !candidates.iter().any(|slot| slot.enabled) {
        eprintln!(
            "{}: no enabled candidate to simulate",
            args.policy.display()
        );
        return Ok(Exit::BadInput);
    }
    let start = failures.start.unwrap_or_else(Utc::now);
    let steps = simulate(&candidates, &failures.failures, start);
    if args.json {
        println!("{}", serde_json::to_string_pretty(&steps)?);
    } else {
        print!(
            "{}",
            render(&candidates, &steps, failures.failures.len(), start)
        );
    }
    Ok(Exit::Success)
}

/// The failure file, or every `path: message` problem with it.
fn read_failures(file: &Path) -> anyhow::Result<Result<FailureFile, Vec<String>>> {
    let text = super::read_bounded(file, super::MAX_INPUT_BYTES)
        .map_err(|why| anyhow!("cannot read failure file {}: {why}", file.display()))?;
    let mut deserializer = serde_json::Deserializer::from_str(&text);
    let parsed: FailureFile = match serde_path_to_error::deserialize(&mut deserializer) {
        Ok(parsed) => parsed,
        Err(error) => {
            let path = field_path(error.path());
            return Ok(Err(vec![format!("{path}: {}", error.into_inner())]));
        }
    };
    let errors = check_failures(&parsed.failures);
    if errors.is_empty() {
        Ok(Ok(parsed))
    } else {
        Ok(Err(errors.iter().map(ToString::to_string).collect()))
    }
}

/// The readable timeline: one line per failure, then how it ends.
fn render(
    candidates: &[CandidateSlot],
    steps: &[TimelineStep],
    given: usize,
    start: DateTime<Utc>,
) -> String {
    let words = TimelineWording { start, candidates };
    let mut out = format!("start {}\n", rfc3339(start));
    for step in steps {
        out.push_str(&format!(
            "#{:<3} {:>9}  {:<14} {:<12} {:<24} -> {}\n",
            step.failure + 1,
            words.instant(step.at),
            step.candidate_name,
            step.class.as_str(),
            step.code.as_str(),
            step.decision.describe(&words),
        ));
    }
    out.push_str(&ending(&words, steps, given));
    out
}

fn ending(words: &TimelineWording<'_>, steps: &[TimelineStep], given: usize) -> String {
    let Some(last) = steps.last() else {
        return "no failures given\n".to_string();
    };
    let unused = given - steps.len();
    match last.decision.next_attempt_at(last.at) {
        Some(at) => format!(
            "end: no more failures; the attempt at {} on {} is assumed to succeed\n",
            words.instant(at),
            words.candidate(next_candidate(last))
        ),
        None if unused > 0 => format!(
            "end: the route left automatic recovery; {unused} later failure{} not used\n",
            if unused == 1 { " was" } else { "s were" }
        ),
        None => "end: the route left automatic recovery\n".to_string(),
    }
}

fn next_candidate(step: &TimelineStep) -> u32 {
    match step.decision {
        Decision::Skip { next, .. } => next,
        Decision::WaitForReset { .. }
        | Decision::Retry { .. }
        | Decision::Stop { .. }
        | Decision::Manual { .. } => step.candidate,
    }
}

fn rfc3339(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Secs, true)
}
