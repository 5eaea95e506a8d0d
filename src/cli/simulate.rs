//! `recourse simulate --policy FILE --errors FILE [--json]`: print the
//! timeline of decisions a failure sequence would produce, using the same
//! [`simulate`] function as the UI preview.
//!
//! A failure is given at classification level (`{"code": …}`) or as text
//! (`{"text": …, "provider"?: …, "http_status"?: …, "effect"?: …, "session"?: …}`), which the
//! catalogue in force classifies: built-in plus local rules, or built-in
//! only with `--builtin-only`.
//!
//! Exit codes: 0 printed, 1 a file could not be read (or is larger than
//! [`super::MAX_INPUT_BYTES`], 1 MiB), 2 a file is invalid.

use super::exit::Exit;
use super::policy::{read_policy, report_invalid};
use anyhow::anyhow;
use chrono::{DateTime, Utc};
use clap::Args;
use recourse::catalogue::Catalogue;
use recourse::evaluator::{CandidateSlot, Decision, Wording};
use recourse::evidence::{Evidence, Provider, RawEvidence};
use recourse::policy::document::field_path;
use recourse::simulation::{
    check_failures, simulate, SimulatedFailure, TimelineStep, TimelineWording,
};
use recourse::timing::machine_local_tz;
use serde::Deserialize;
use serde_json::Value;
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
    #[command(flatten)]
    overlay: super::catalogue::OverlayArgs,
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
    let failures = match read_failures(&args.errors, &args.overlay)? {
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
        super::print_json(&steps)?;
    } else {
        print!(
            "{}",
            render(&candidates, &steps, failures.failures.len(), start)
        );
    }
    Ok(Exit::Success)
}

/// The failure file, or every `path: message` problem with it.
fn read_failures(
    file: &Path,
    overlay: &super::catalogue::OverlayArgs,
) -> anyhow::Result<Result<FailureFile, Vec<String>>> {
    let text = super::read_bounded(file, super::MAX_INPUT_BYTES)
        .map_err(|why| anyhow!("cannot read failure file {}: {why}", file.display()))?;
    let parsed = match with_text_failures(&text) {
        // Text failures become classification-level ones first; positions
        // in the file no longer apply to what is then read.
        Some(mut value) => {
            if let Err(problems) = classify_text_failures(&mut value, overlay) {
                return Ok(Err(problems));
            }
            serde_path_to_error::deserialize(value)
        }
        None => serde_path_to_error::deserialize(&mut serde_json::Deserializer::from_str(&text)),
    };
    let parsed: FailureFile = match parsed {
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

/// The file as JSON when one of its failures is given as text.
fn with_text_failures(text: &str) -> Option<Value> {
    let value: Value = serde_json::from_str(text).ok()?;
    let has_text = value
        .get("failures")?
        .as_array()?
        .iter()
        .any(|f| f.get("text").is_some());
    has_text.then_some(value)
}

/// Fields a text failure may have.
const TEXT_FIELDS: [&str; 5] = ["text", "provider", "http_status", "effect", "session"];

/// Replaces each `{"text": …}` failure by the classification-level failure
/// the catalogue in force gives that text (read only when one is present).
fn classify_text_failures(
    value: &mut Value,
    overlay: &super::catalogue::OverlayArgs,
) -> Result<(), Vec<String>> {
    let start = value
        .get("start")
        .and_then(Value::as_str)
        .and_then(|s| s.parse::<DateTime<Utc>>().ok())
        .unwrap_or_else(Utc::now);
    let Some(failures) = value.get_mut("failures").and_then(Value::as_array_mut) else {
        return Ok(());
    };
    let mut catalogue = None;
    let mut problems = Vec::new();
    for (index, failure) in failures.iter_mut().enumerate() {
        let Some(object) = failure.as_object().filter(|o| o.contains_key("text")) else {
            continue;
        };
        let catalogue = catalogue.get_or_insert_with(|| overlay.catalogue());
        match text_failure(object, catalogue, start) {
            Ok(coded) => *failure = coded,
            Err(message) => problems.push(format!("failures[{index}]{message}")),
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems)
    }
}

/// One text failure as the classification-level failure the catalogue
/// makes of it (its code, class, confidence, reset and fingerprint, with
/// the `effect` and `session` given), or `.field: why`.
fn text_failure(
    object: &serde_json::Map<String, Value>,
    catalogue: &Catalogue,
    at: DateTime<Utc>,
) -> Result<Value, String> {
    if let Some(unknown) = object.keys().find(|k| !TEXT_FIELDS.contains(&k.as_str())) {
        return Err(format!(
            ": unknown field {} in a text failure (known fields: {})",
            super::shown_value(unknown),
            TEXT_FIELDS.join(", ")
        ));
    }
    let text = object["text"].as_str().ok_or(".text: expected a string")?;
    let provider = match object.get("provider") {
        None | Some(Value::Null) => Provider::Generic,
        Some(value) => serde_json::from_value::<Provider>(value.clone()).map_err(|_| {
            format!(
                ".provider: expected one of {}",
                Provider::ALL.map(Provider::as_str).join(", ")
            )
        })?,
    };
    let http_status = match object.get("http_status") {
        None | Some(Value::Null) => None,
        Some(value) => Some(
            value
                .as_u64()
                .and_then(|n| u16::try_from(n).ok())
                .filter(|n| recourse::evidence::HTTP_STATUS_RANGE.contains(n))
                .ok_or(".http_status: expected integer 100-599")?,
        ),
    };
    let evidence =
        Evidence::from_raw(RawEvidence::new(provider, text, at).with_http_status(http_status));
    let c = catalogue.classify(&evidence, machine_local_tz());
    let failure = SimulatedFailure::classified(&c, &evidence.fingerprint(), at);
    let mut coded = serde_json::to_value(failure).expect("a simulated failure serializes");
    for kept in ["effect", "session"] {
        if let Some(value) = object.get(kept) {
            coded[kept] = value.clone();
        }
    }
    Ok(coded)
}

/// The readable timeline: one line per failure, then how it ends.
fn render(
    candidates: &[CandidateSlot],
    steps: &[TimelineStep],
    given: usize,
    start: DateTime<Utc>,
) -> String {
    let words = TimelineWording { start, candidates };
    let mut out = format!("start {}\n", super::time::date_time(start));
    for step in steps {
        out.push_str(&format!(
            "#{:<3} {:>11}  {:<14} {:<12} {:<24} -> {}\n",
            step.failure + 1,
            words.instant(step.at),
            step.candidate_name,
            step.class.as_str(),
            step.code.as_str(),
            step.describe(&words),
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
        Decision::Skip { next, .. } | Decision::SkipRepeated { next, .. } => next,
        Decision::WaitForReset { .. }
        | Decision::Retry { .. }
        | Decision::Continue { .. }
        | Decision::Stop { .. }
        | Decision::Manual { .. } => step.candidate,
    }
}
