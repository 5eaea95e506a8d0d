//! `recourse classify`: the catalogue on the command line.
//!
//! Two modes:
//! - `recourse classify --json` reads JSON Lines evidence on stdin and prints
//!   one JSON result per line, in order (the machine contract, see
//!   docs/catalogue.md). Blank lines are skipped. At the first malformed line
//!   it flushes every earlier result, prints `line N: …` naming the field on
//!   stderr, prints nothing for that line and stops with exit code 2. An
//!   error names the field and the JSON type it got, never the value (a key
//!   pasted into the wrong field must not reach stderr); names from the input
//!   are sanitized and cut to [`MAX_SHOWN_CHARS`].
//! - `recourse classify "text" --provider codex [--status N] [--header k=v]`
//!   explains one piece of evidence for a person.

use std::collections::BTreeMap;
use std::io::{self, BufRead, BufWriter, Write};

use anyhow::Context;
use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use serde::Serialize;
use serde_json::{Map, Value};

use recourse::catalogue::{self, Catalogue, Explanation, MatchOutcome};
use recourse::classification::{Class, Confidence, Scope, SemanticCode, Span};
use recourse::evidence::{Evidence, Phase, Provider, RawEvidence};
use recourse::timing::{machine_local_tz, TimingHint};

use super::exit::Exit;

/// Longest accepted input line; longer lines are an error, not a memory hazard.
pub const MAX_LINE_BYTES: usize = 1 << 20;

use super::{one_of, shown_value as shown_name, OneOf, MAX_SHOWN_CHARS};

fn providers() -> OneOf<Provider> {
    one_of(&Provider::ALL, Provider::as_str)
}

fn phases() -> OneOf<Phase> {
    one_of(&Phase::ALL, Phase::as_str)
}
const FIELDS: [&str; 8] = [
    "provider",
    "message",
    "phase",
    "http_status",
    "headers",
    "error_type",
    "exit_code",
    "occurred_at",
];

#[derive(clap::Args, Debug)]
pub struct ClassifyArgs {
    /// Evidence text to explain (omit with --json)
    pub text: Option<String>,
    /// Read JSON Lines evidence on stdin, print one JSON result per line
    #[arg(long)]
    pub json: bool,
    /// Tool that produced the text
    #[arg(long, default_value = "generic", value_parser = providers())]
    pub provider: Provider,
    /// HTTP status of the failed request
    #[arg(long, value_name = "N")]
    pub status: Option<u16>,
    /// Response header, repeatable
    #[arg(long = "header", value_name = "NAME=VALUE")]
    pub headers: Vec<String>,
    /// Provider error type or code (overloaded_error, insufficient_quota, …)
    #[arg(long)]
    pub error_type: Option<String>,
    /// Exit code of the agent process
    #[arg(long, allow_negative_numbers = true)]
    pub exit_code: Option<i32>,
    /// Where the failure happened
    #[arg(long, value_parser = phases())]
    pub phase: Option<Phase>,
    /// When the failure happened (RFC 3339); default now
    #[arg(long)]
    pub occurred_at: Option<String>,
    /// IANA zone for clock times printed without one; default the machine's
    #[arg(long, value_name = "ZONE")]
    pub tz: Option<String>,
    #[command(flatten)]
    pub overlay: super::catalogue::OverlayArgs,
}

/// Runs the subcommand.
pub fn run(args: ClassifyArgs) -> Exit {
    let tz = match args.tz.as_deref().map(parse_tz).transpose() {
        Ok(tz) => tz.unwrap_or_else(machine_local_tz),
        Err(message) => return usage_error(&message),
    };
    let catalogue = args.overlay.catalogue();
    let outcome = match (args.json, args.text.clone()) {
        (true, None) => run_json(&catalogue, tz),
        (false, Some(text)) => run_text(&args, &catalogue, text, tz),
        (true, Some(_)) => return usage_error("give either evidence text or --json, not both"),
        (false, None) => {
            return usage_error("give the evidence text, or --json to read JSON Lines on stdin")
        }
    };
    match outcome {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            Exit::Failure
        }
    }
}

fn usage_error(message: &str) -> Exit {
    eprintln!("error: {message}");
    Exit::BadInput
}

fn parse_tz(name: &str) -> Result<Tz, String> {
    name.parse::<Tz>()
        .map_err(|_| format!("--tz {} is not an IANA time zone", shown_name(name)))
}

// ─── JSON Lines mode ─────────────────────────────────────────────────────────

/// One result line of `classify --json`.
#[derive(Serialize)]
struct JsonResult {
    code: SemanticCode,
    class: Class,
    confidence: Confidence,
    scope: Scope,
    rule_id: Option<String>,
    catalogue_version: String,
    retry_after_s: Option<f64>,
    reset_at: Option<DateTime<Utc>>,
    matched: Option<Span>,
    excerpt: String,
    truncated: bool,
    explanation: String,
}

fn run_json(catalogue: &Catalogue, tz: Tz) -> anyhow::Result<Exit> {
    let mut input = io::stdin().lock();
    let mut out = BufWriter::new(io::stdout().lock());
    let now = Utc::now();
    let mut number = 0usize;
    while let Some(line) = read_line(&mut input, MAX_LINE_BYTES).context("reading stdin")? {
        number += 1;
        let parsed = match line {
            Line::TooLong => Err(format!("longer than {MAX_LINE_BYTES} bytes")),
            Line::Text(bytes) if bytes.iter().all(u8::is_ascii_whitespace) => continue,
            Line::Text(bytes) => parse_line(&bytes, now),
        };
        match parsed {
            Ok(raw) => write_result(&mut out, catalogue, raw, tz)?,
            Err(message) => {
                out.flush().context("writing stdout")?;
                eprintln!("line {number}: {message}");
                return Ok(Exit::BadInput);
            }
        }
    }
    out.flush().context("writing stdout")?;
    Ok(Exit::Success)
}

fn write_result(
    out: &mut impl Write,
    catalogue: &Catalogue,
    raw: RawEvidence,
    tz: Tz,
) -> anyhow::Result<()> {
    let evidence = Evidence::from_raw(raw);
    let c = catalogue.classify(&evidence, tz);
    let result = JsonResult {
        excerpt: catalogue::excerpt(&evidence, c.matched),
        truncated: evidence.truncated,
        code: c.code,
        class: c.class,
        confidence: c.confidence,
        scope: c.scope,
        rule_id: c.rule_id,
        catalogue_version: c.catalogue_version,
        retry_after_s: c.retry_after_s,
        reset_at: c.reset_at,
        matched: c.matched,
        explanation: c.explanation,
    };
    let line = serde_json::to_string(&result).context("writing stdout")?;
    out.write_all(super::json_text(&line).as_bytes())
        .context("writing stdout")?;
    out.write_all(b"\n").context("writing stdout")?;
    Ok(())
}

enum Line {
    Text(Vec<u8>),
    TooLong,
}

/// Reads one line (without its `\n` / `\r\n`), holding at most `max` bytes.
fn read_line(input: &mut impl BufRead, max: usize) -> io::Result<Option<Line>> {
    let mut line = Vec::new();
    let mut too_long = false;
    let mut seen_any = false;
    loop {
        let chunk = input.fill_buf()?;
        if chunk.is_empty() {
            break;
        }
        seen_any = true;
        let (part, done) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (&chunk[..i], Some(i + 1)),
            None => (chunk, None),
        };
        if line.len() + part.len() > max {
            too_long = true;
        } else {
            line.extend_from_slice(part);
        }
        let used = done.unwrap_or(chunk.len());
        input.consume(used);
        if done.is_some() {
            break;
        }
    }
    if !seen_any {
        return Ok(None);
    }
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    Ok(Some(if too_long {
        Line::TooLong
    } else {
        Line::Text(line)
    }))
}

/// Parses one JSON Lines object into raw evidence, or says which field is wrong.
fn parse_line(bytes: &[u8], now: DateTime<Utc>) -> Result<RawEvidence, String> {
    let value: Value = serde_json::from_slice(bytes).map_err(|e| format!("invalid JSON: {e}"))?;
    let Value::Object(object) = value else {
        return Err(format!("expected a JSON object, got {}", json_type(&value)));
    };
    if let Some(unknown) = object.keys().find(|k| !FIELDS.contains(&k.as_str())) {
        return Err(format!(
            "unknown field {} (known fields: {})",
            shown_name(unknown),
            FIELDS.join(", ")
        ));
    }
    Ok(RawEvidence {
        provider: provider_field(&object)?,
        message: required_string(&object, "message")?.into_bytes(),
        phase: phase_field(&object)?,
        http_status: status_field(&object)?,
        headers: headers_field(&object)?,
        error_type: optional_string(&object, "error_type")?,
        exit_code: exit_code_field(&object)?,
        occurred_at: occurred_at_field(&object)?.unwrap_or(now),
        correlation: None,
    })
}

/// A field that is absent or JSON `null` is not given.
fn field<'a>(object: &'a Map<String, Value>, name: &str) -> Option<&'a Value> {
    object.get(name).filter(|v| !v.is_null())
}

fn field_error(name: &str, expected: &str, got: &Value) -> String {
    format!(
        "field {name:?}: expected {expected}, got {}",
        json_type(got)
    )
}

/// What kind of JSON value the user gave; the value itself is never shown.
fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn bounded_name(name: &str) -> String {
    let clean = recourse::evidence::sanitize(name);
    match clean.char_indices().nth(MAX_SHOWN_CHARS) {
        Some((cut, _)) => format!("{}…", &clean[..cut]),
        None => clean,
    }
}

fn required_string(object: &Map<String, Value>, name: &str) -> Result<String, String> {
    optional_string(object, name)?.ok_or_else(|| format!("missing required field {name:?}"))
}

fn optional_string(object: &Map<String, Value>, name: &str) -> Result<Option<String>, String> {
    field(object, name)
        .map(|v| {
            v.as_str()
                .map(str::to_owned)
                .ok_or_else(|| field_error(name, "a string", v))
        })
        .transpose()
}

fn provider_field(object: &Map<String, Value>) -> Result<Provider, String> {
    let value = field(object, "provider").ok_or("missing required field \"provider\"")?;
    serde_json::from_value(value.clone()).map_err(|_| {
        field_error(
            "provider",
            &format!("one of {}", providers().names()),
            value,
        )
    })
}

fn phase_field(object: &Map<String, Value>) -> Result<Option<Phase>, String> {
    field(object, "phase")
        .map(|v| {
            serde_json::from_value(v.clone())
                .map_err(|_| field_error("phase", &format!("one of {}", phases().names()), v))
        })
        .transpose()
}

fn status_field(object: &Map<String, Value>) -> Result<Option<u16>, String> {
    field(object, "http_status")
        .map(|v| {
            v.as_u64()
                .and_then(|s| u16::try_from(s).ok())
                .filter(|s| recourse::evidence::HTTP_STATUS_RANGE.contains(s))
                .ok_or_else(|| field_error("http_status", "integer 100-599", v))
        })
        .transpose()
}

fn exit_code_field(object: &Map<String, Value>) -> Result<Option<i32>, String> {
    field(object, "exit_code")
        .map(|v| {
            v.as_i64()
                .and_then(|c| i32::try_from(c).ok())
                .ok_or_else(|| field_error("exit_code", "a 32-bit integer", v))
        })
        .transpose()
}

fn occurred_at_field(object: &Map<String, Value>) -> Result<Option<DateTime<Utc>>, String> {
    field(object, "occurred_at")
        .map(|v| {
            v.as_str()
                .and_then(|s| DateTime::parse_from_rfc3339(s).ok())
                .map(|t| t.with_timezone(&Utc))
                .ok_or_else(|| field_error("occurred_at", "an RFC 3339 timestamp", v))
        })
        .transpose()
}

fn headers_field(object: &Map<String, Value>) -> Result<BTreeMap<String, String>, String> {
    let Some(value) = field(object, "headers") else {
        return Ok(BTreeMap::new());
    };
    let Value::Object(headers) = value else {
        return Err(field_error("headers", "an object of string values", value));
    };
    headers
        .iter()
        .map(|(name, v)| match v.as_str() {
            Some(s) => Ok((name.clone(), s.to_owned())),
            None => Err(field_error(
                &format!("headers.{}", bounded_name(name)),
                "a string",
                v,
            )),
        })
        .collect()
}

// ─── Human-readable mode ─────────────────────────────────────────────────────

fn run_text(
    args: &ClassifyArgs,
    catalogue: &Catalogue,
    text: String,
    tz: Tz,
) -> anyhow::Result<Exit> {
    let raw = match raw_from_args(args, text) {
        Ok(raw) => raw,
        Err(message) => return Ok(usage_error(&message)),
    };
    let evidence = Evidence::from_raw(raw);
    let explanation = catalogue.explain(&evidence, tz);
    let mut out = io::stdout().lock();
    out.write_all(render(&evidence, &explanation).as_bytes())
        .context("writing stdout")?;
    Ok(Exit::Success)
}

fn raw_from_args(args: &ClassifyArgs, text: String) -> Result<RawEvidence, String> {
    let (provider, phase) = (args.provider, args.phase);
    if let Some(status) = args
        .status
        .filter(|s| !recourse::evidence::HTTP_STATUS_RANGE.contains(s))
    {
        return Err(format!("--status {status}: expected integer 100-599"));
    }
    let headers = args
        .headers
        .iter()
        .map(|h| match h.split_once('=') {
            Some((name, value)) if !name.trim().is_empty() => {
                Ok((name.trim().to_owned(), value.trim().to_owned()))
            }
            _ => Err(format!("--header {}: expected NAME=VALUE", shown_name(h))),
        })
        .collect::<Result<BTreeMap<_, _>, _>>()?;
    let occurred_at = match &args.occurred_at {
        None => Utc::now(),
        Some(s) => DateTime::parse_from_rfc3339(s)
            .map(|t| t.with_timezone(&Utc))
            .map_err(|_| {
                format!(
                    "--occurred-at {}: expected an RFC 3339 timestamp",
                    shown_name(s)
                )
            })?,
    };
    Ok(RawEvidence {
        provider,
        message: text.into_bytes(),
        phase,
        http_status: args.status,
        headers,
        error_type: args.error_type.clone(),
        exit_code: args.exit_code,
        occurred_at,
        correlation: None,
    })
}

fn render(evidence: &Evidence, explanation: &Explanation) -> String {
    let c = &explanation.classification;
    let mut lines = vec![
        format!("code:        {}", c.code.as_str()),
        format!("class:       {}", c.class.as_str()),
        format!("confidence:  {}", confidence_name(c.confidence)),
        format!("rule:        {}", c.rule_id.as_deref().unwrap_or("(none)")),
        format!("catalogue:   {}", c.catalogue_version),
        matched_line(evidence, c.matched),
        format!(
            "why:         {}",
            super::time::readable_times(&c.explanation)
        ),
        hint_line(explanation.hint.as_ref()),
    ];
    if explanation.progress_lines_ignored > 0 {
        lines.push(format!(
            "progress:    {} retry-progress line(s) ignored",
            explanation.progress_lines_ignored
        ));
    }
    lines.extend(explanation.matches.iter().map(|m| {
        format!(
            "  {:<11} {} (priority {}, {}, {})",
            outcome_name(m.outcome),
            m.rule_id,
            m.priority,
            m.code.as_str(),
            if m.structured { "structured" } else { "text" }
        )
    }));
    lines.push(format!(
        "excerpt:     {}",
        catalogue::excerpt(evidence, c.matched)
    ));
    let mut text = lines.join("\n");
    text.push('\n');
    text
}

fn matched_line(evidence: &Evidence, matched: Option<Span>) -> String {
    match matched {
        Some(span) => format!(
            "matched:     bytes {}..{}: {:?}",
            span.start,
            span.end,
            &evidence.message[span.start as usize..span.end as usize]
        ),
        None => "matched:     (structured fields or nothing)".to_owned(),
    }
}

fn hint_line(hint: Option<&TimingHint>) -> String {
    match hint {
        Some(h) => format!(
            "hint:        retry at {} ({}{})",
            super::time::date_time(h.reset_at),
            h.source.as_str(),
            h.retry_after_s
                .map(|s| format!(", {s} s after the failure"))
                .unwrap_or_default()
        ),
        None => "hint:        (none trusted)".to_owned(),
    }
}

fn confidence_name(confidence: Confidence) -> &'static str {
    match confidence {
        Confidence::Low => "low",
        Confidence::Medium => "medium",
        Confidence::High => "high",
    }
}

fn outcome_name(outcome: MatchOutcome) -> &'static str {
    match outcome {
        MatchOutcome::Selected => "selected",
        MatchOutcome::Wrapped => "wrapped",
        MatchOutcome::Outranked => "outranked",
        MatchOutcome::Conflicting => "conflicting",
    }
}
