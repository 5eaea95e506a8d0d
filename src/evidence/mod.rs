//! Evidence: the bounded, sanitized, correlated record of one failure.
//!
//! Adapters and the CLI build a [`RawEvidence`]; [`Evidence::from_raw`]
//! sanitizes and bounds it before anything is matched or stored. Nothing
//! downstream ever sees raw provider text.
//!
//! Work is bounded before any pattern runs: only the first
//! [`RAW_HEAD_BYTES`] and the last [`RAW_TAIL_BYTES`] of the raw message are
//! considered (errors often sit at the end of a long log), joined by a
//! [`OMITTED_MARKER_PREFIX`] line. The sanitized text is then cut to
//! [`MAX_MESSAGE_BYTES`], again keeping head and tail.

pub mod fingerprint;
pub mod sanitize;

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

pub use fingerprint::Fingerprint;
pub use sanitize::{sanitize, strip_terminal_escapes};

/// The HTTP statuses there are: anything else read as one is not a status.
pub const HTTP_STATUS_RANGE: std::ops::RangeInclusive<u16> = 100..=599;

/// Sanitized message text is cut to this many bytes (on a char boundary).
pub const MAX_MESSAGE_BYTES: usize = 4096;
/// Bytes from the start of a raw message considered at all.
pub const RAW_HEAD_BYTES: usize = 64 * 1024;
/// Bytes from the end of a raw message considered at all.
pub const RAW_TAIL_BYTES: usize = 16 * 1024;
/// How far a cut point looks for a line boundary, so a secret is not split
/// into pieces the sanitizer no longer recognises.
const CUT_SLACK_BYTES: usize = 1024;
/// Start of the line that replaces the part of a message left out.
pub const OMITTED_MARKER_PREFIX: &str = "[truncated: ";
/// Header names longer than this are dropped.
const MAX_HEADER_NAME_BYTES: usize = 64;
/// Header values and `error_type` are cut to this many bytes.
pub const MAX_FIELD_BYTES: usize = 256;
/// At most this many selected headers are kept (in name order).
pub const MAX_HEADERS: usize = 32;
/// Exact header names kept (lowercased).
const KEPT_HEADERS: [&str; 3] = ["retry-after", "retry-after-ms", "x-should-retry"];
/// Header name prefixes kept (lowercased).
const KEPT_HEADER_PREFIXES: [&str; 4] = [
    "anthropic-ratelimit-",
    "x-ratelimit-reset-",
    "x-ratelimit-remaining-",
    "x-ratelimit-limit-",
];

/// Which tool or API produced the evidence; scopes catalogue rules.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, specta::Type,
)]
#[serde(rename_all = "kebab-case")]
pub enum Provider {
    AnthropicApi,
    ClaudeCode,
    Codex,
    OpenaiApi,
    Gemini,
    Opencode,
    Generic,
    Simulated,
}

impl Provider {
    pub const ALL: [Provider; 8] = [
        Provider::AnthropicApi,
        Provider::ClaudeCode,
        Provider::Codex,
        Provider::OpenaiApi,
        Provider::Gemini,
        Provider::Opencode,
        Provider::Generic,
        Provider::Simulated,
    ];

    /// Evidence with no known tool (any command, the simulated provider):
    /// every catalogue rule applies to it.
    pub fn sees_every_rule(self) -> bool {
        match self {
            Provider::Generic | Provider::Simulated => true,
            Provider::AnthropicApi
            | Provider::ClaudeCode
            | Provider::Codex
            | Provider::OpenaiApi
            | Provider::Gemini
            | Provider::Opencode => false,
        }
    }

    /// Whose text a person can paste: every provider but the built-in
    /// simulated one, whose texts are Recourse's own.
    pub fn pastable() -> Vec<Provider> {
        Provider::ALL
            .into_iter()
            .filter(|p| *p != Provider::Simulated)
            .collect()
    }

    /// The name a person reads in a choice of providers (`Anthropic API`).
    pub fn words(self) -> &'static str {
        match self {
            Provider::AnthropicApi => "Anthropic API",
            Provider::ClaudeCode => "Claude Code",
            Provider::Codex => "Codex CLI",
            Provider::OpenaiApi => "OpenAI API",
            Provider::Gemini => "Gemini CLI",
            Provider::Opencode => "OpenCode",
            Provider::Generic => "Any command",
            Provider::Simulated => "Simulated provider",
        }
    }

    /// The name in evidence and on the command line (`anthropic-api`).
    pub fn as_str(self) -> &'static str {
        match self {
            Provider::AnthropicApi => "anthropic-api",
            Provider::ClaudeCode => "claude-code",
            Provider::Codex => "codex",
            Provider::OpenaiApi => "openai-api",
            Provider::Gemini => "gemini",
            Provider::Opencode => "opencode",
            Provider::Generic => "generic",
            Provider::Simulated => "simulated",
        }
    }
}

/// Where in the invocation the failure happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    Spawn,
    Connect,
    Request,
    Stream,
    Exit,
}

impl Phase {
    pub const ALL: [Phase; 5] = [
        Phase::Spawn,
        Phase::Connect,
        Phase::Request,
        Phase::Stream,
        Phase::Exit,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Spawn => "spawn",
            Phase::Connect => "connect",
            Phase::Request => "request",
            Phase::Stream => "stream",
            Phase::Exit => "exit",
        }
    }
}

/// Ties evidence to the exact attempt that produced it, so stale evidence is
/// recognisable.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct Correlation {
    pub route_id: String,
    pub generation: u32,
    pub attempt: u32,
    pub invocation_id: String,
}

/// Unsanitized input from an adapter or the CLI. Never stored.
#[derive(Debug, Clone, PartialEq)]
pub struct RawEvidence {
    pub provider: Provider,
    pub message: Vec<u8>,
    pub phase: Option<Phase>,
    pub http_status: Option<u16>,
    pub headers: BTreeMap<String, String>,
    pub error_type: Option<String>,
    pub exit_code: Option<i32>,
    pub occurred_at: DateTime<Utc>,
    pub correlation: Option<Correlation>,
}

impl RawEvidence {
    /// Evidence with only what every failure has: who reported it, what it
    /// said and when. Phase, status, headers, error type and exit code are
    /// absent until set with the `with_*` methods; the engine sets the
    /// correlation.
    pub fn new(
        provider: Provider,
        message: impl Into<Vec<u8>>,
        occurred_at: DateTime<Utc>,
    ) -> RawEvidence {
        RawEvidence {
            provider,
            message: message.into(),
            phase: None,
            http_status: None,
            headers: BTreeMap::new(),
            error_type: None,
            exit_code: None,
            occurred_at,
            correlation: None,
        }
    }

    /// Where in the invocation it failed (`None` keeps it unknown).
    pub fn with_phase(mut self, phase: impl Into<Option<Phase>>) -> RawEvidence {
        self.phase = phase.into();
        self
    }

    /// The HTTP status, when one was seen.
    pub fn with_http_status(mut self, status: impl Into<Option<u16>>) -> RawEvidence {
        self.http_status = status.into();
        self
    }

    /// Response headers as received; [`Evidence::from_raw`] keeps only the
    /// timing and retry ones.
    pub fn with_headers(mut self, headers: BTreeMap<String, String>) -> RawEvidence {
        self.headers = headers;
        self
    }

    /// The provider's own error type (`overloaded_error`, …).
    pub fn with_error_type(mut self, error_type: Option<String>) -> RawEvidence {
        self.error_type = error_type;
        self
    }

    /// The program's exit code, when it exited.
    pub fn with_exit_code(mut self, code: impl Into<Option<i32>>) -> RawEvidence {
        self.exit_code = code.into();
        self
    }
}

/// Sanitized, bounded evidence; safe to match, store and show.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct Evidence {
    pub provider: Provider,
    /// Sanitized and cut to [`MAX_MESSAGE_BYTES`].
    pub message: String,
    pub truncated: bool,
    pub phase: Option<Phase>,
    pub http_status: Option<u16>,
    /// Only the selected timing/retry headers, names lowercased, values sanitized.
    pub headers: BTreeMap<String, String>,
    pub error_type: Option<String>,
    pub exit_code: Option<i32>,
    pub occurred_at: DateTime<Utc>,
    pub correlation: Option<Correlation>,
}

impl Evidence {
    /// Bounds, decodes (lossily), strips terminal escapes, sanitizes and cuts
    /// the raw evidence. Time and memory are linear in
    /// `RAW_HEAD_BYTES + RAW_TAIL_BYTES`, whatever the input size.
    pub fn from_raw(raw: RawEvidence) -> Evidence {
        let text = strip_terminal_escapes(&bounded_text(&raw.message));
        let (message, truncated) = cut_sanitized(sanitize(&text));
        Evidence {
            provider: raw.provider,
            message,
            truncated: truncated || raw.message.len() > RAW_HEAD_BYTES + RAW_TAIL_BYTES,
            phase: raw.phase,
            http_status: raw.http_status,
            headers: selected_headers(&raw.headers),
            error_type: raw.error_type.as_deref().map(sanitize_field),
            exit_code: raw.exit_code,
            occurred_at: raw.occurred_at,
            correlation: raw.correlation,
        }
    }
}

/// Decodes at most head + tail bytes of `bytes`, with a marker line where the
/// middle was left out. The cuts are made where no secret can be split (see
/// [`head_end`] and [`tail_start`]).
fn bounded_text(bytes: &[u8]) -> String {
    if bytes.len() <= RAW_HEAD_BYTES + RAW_TAIL_BYTES {
        return String::from_utf8_lossy(bytes).into_owned();
    }
    let head_end = head_end(bytes, RAW_HEAD_BYTES, true);
    let tail_start = tail_start(bytes, bytes.len() - RAW_TAIL_BYTES).max(head_end);
    let omitted = tail_start - head_end;
    format!(
        "{}\n{OMITTED_MARKER_PREFIX}{omitted} bytes omitted]\n{}",
        String::from_utf8_lossy(&bytes[..head_end]),
        String::from_utf8_lossy(&bytes[tail_start..]),
    )
}

/// Bytes that end a token: a key, password or hash never spans one, so a
/// cut next to one leaves no piece of it. Everything else (ASCII letters,
/// digits, `+/=_-.~:@%!#$*&^\`) may be inside a secret. Secrets are ASCII,
/// so every byte of a non-ASCII character is a boundary.
fn is_token_boundary(b: u8) -> bool {
    !b.is_ascii()
        || b.is_ascii_whitespace()
        || b.is_ascii_control()
        || matches!(
            b,
            b'"' | b'\''
                | b'`'
                | b','
                | b';'
                | b'<'
                | b'>'
                | b'('
                | b')'
                | b'['
                | b']'
                | b'{'
                | b'}'
                | b'|'
        )
}

/// Where the kept head ends, at or before `at`: with `by_line`, after the
/// last newline within [`CUT_SLACK_BYTES`] (a line is kept or dropped whole,
/// so a value never loses the key name that gets it redacted); otherwise at `at` when
/// a token ends there; otherwise before the token the cut would split, however
/// far back it starts (a run that long is a blob and would be redacted).
fn head_end(bytes: &[u8], at: usize, by_line: bool) -> usize {
    let floor = at.saturating_sub(CUT_SLACK_BYTES);
    let line_end = (floor..at).rev().find(|&i| bytes[i] == b'\n');
    if let Some(i) = line_end.filter(|_| by_line) {
        return i + 1;
    }
    if at >= bytes.len() || is_token_boundary(bytes[at]) || is_token_boundary(bytes[at - 1]) {
        return at;
    }
    (0..at)
        .rev()
        .find(|&i| is_token_boundary(bytes[i]))
        .map_or(0, |i| i + 1)
}

/// Where the kept tail starts, at or after `at`: after the first newline
/// within [`CUT_SLACK_BYTES`]; otherwise after the first token from `at` on,
/// cut or whole, since its key name may be in the part left out
/// (`"password": "` | `hunter2"`).
fn tail_start(bytes: &[u8], at: usize) -> usize {
    let ceiling = (at + CUT_SLACK_BYTES).min(bytes.len());
    if let Some(i) = (at..ceiling).find(|&i| bytes[i] == b'\n') {
        return i + 1;
    }
    let first_token = (at..bytes.len())
        .find(|&i| !is_token_boundary(bytes[i]))
        .unwrap_or(bytes.len());
    (first_token..bytes.len())
        .find(|&i| is_token_boundary(bytes[i]))
        .unwrap_or(bytes.len())
}

/// Cuts sanitized text to [`MAX_MESSAGE_BYTES`], keeping the first three
/// quarters of the budget from the head and the rest from the tail.
fn cut_sanitized(text: String) -> (String, bool) {
    if text.len() <= MAX_MESSAGE_BYTES {
        return (text, false);
    }
    let marker = format!("\n{OMITTED_MARKER_PREFIX}{} bytes omitted]\n", text.len());
    let budget = MAX_MESSAGE_BYTES - marker.len();
    let head_end = floor_char_boundary(&text, budget * 3 / 4);
    let tail_start = ceil_char_boundary(&text, text.len() - (budget - head_end));
    let omitted = tail_start - head_end;
    let marker = format!("\n{OMITTED_MARKER_PREFIX}{omitted} bytes omitted]\n");
    let cut = format!("{}{marker}{}", &text[..head_end], &text[tail_start..]);
    (cut, true)
}

fn floor_char_boundary(text: &str, at: usize) -> usize {
    (0..=at.min(text.len()))
        .rev()
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(0)
}

fn ceil_char_boundary(text: &str, at: usize) -> usize {
    (at..=text.len())
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(text.len())
}

/// Sanitizes a short structured field and cuts it to [`MAX_FIELD_BYTES`].
fn sanitize_field(value: &str) -> String {
    let bounded = if value.len() > MAX_FIELD_BYTES * 4 {
        let end = head_end(value.as_bytes(), MAX_FIELD_BYTES * 4, false);
        &value[..floor_char_boundary(value, end)]
    } else {
        value
    };
    let clean = sanitize(strip_terminal_escapes(bounded).trim());
    let clean = clean.replace('\n', " ");
    clean[..floor_char_boundary(&clean, MAX_FIELD_BYTES)].to_owned()
}

fn is_kept_header(name: &str) -> bool {
    KEPT_HEADERS.contains(&name) || KEPT_HEADER_PREFIXES.iter().any(|p| name.starts_with(p))
}

/// The selected retry/rate-limit headers, names lowercased, values sanitized.
fn selected_headers(headers: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    headers
        .iter()
        .filter(|(name, _)| name.len() <= MAX_HEADER_NAME_BYTES)
        .map(|(name, value)| (name.trim().to_ascii_lowercase(), value))
        .filter(|(name, _)| is_kept_header(name))
        .take(MAX_HEADERS)
        .map(|(name, value)| (name, sanitize_field(value)))
        .collect()
}

#[cfg(test)]
mod tests;
