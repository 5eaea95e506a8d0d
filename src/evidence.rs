//! Evidence: the bounded, sanitized, correlated record of one failure.
//!
//! Adapters and the CLI build a [`RawEvidence`]; [`Evidence::from_raw`]
//! sanitizes and bounds it before anything is matched or stored. Nothing
//! downstream ever sees raw provider text.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// Sanitized message text is cut to this many bytes (on a char boundary).
pub const MAX_MESSAGE_BYTES: usize = 4096;

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
