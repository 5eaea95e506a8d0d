//! What a candidate runs: the agent CLI kind, how to launch it, its attempt
//! deadlines, and the simulated provider's script. Pure data; the runner
//! turns it into a process.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Which agent CLI a candidate runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum AgentKind {
    Simulated,
    ClaudeCode,
    Codex,
    Gemini,
    Opencode,
    Generic,
}

impl AgentKind {
    /// The agent name used in policy documents (`claude-code`).
    pub fn slug(self) -> &'static str {
        match self {
            AgentKind::Simulated => "simulated",
            AgentKind::ClaudeCode => "claude-code",
            AgentKind::Codex => "codex",
            AgentKind::Gemini => "gemini",
            AgentKind::Opencode => "opencode",
            AgentKind::Generic => "generic",
        }
    }

    pub const ALL: [AgentKind; 6] = [
        AgentKind::Simulated,
        AgentKind::ClaudeCode,
        AgentKind::Codex,
        AgentKind::Gemini,
        AgentKind::Opencode,
        AgentKind::Generic,
    ];
}

/// One scripted outcome of the simulated provider.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum SimStep {
    /// Finishes the task.
    Succeed { after_ms: u32 },
    /// HTTP 529 `overloaded_error` before any output.
    Overloaded { after_ms: u32 },
    /// HTTP 429 with a `retry-after` header before any output.
    RateLimited { after_ms: u32, retry_after_s: u32 },
    /// Subscription usage limit that resets `resets_in_s` after the failure.
    UsageLimit { after_ms: u32, resets_in_s: u32 },
    /// A tool ran, then the connection was reset: not safe to replay.
    ToolThenReset { after_ms: u32 },
    /// A failure text no catalogue rule knows.
    Unrecognised { after_ms: u32, message: String },
}

impl SimStep {
    pub fn after_ms(&self) -> u32 {
        match self {
            SimStep::Succeed { after_ms }
            | SimStep::Overloaded { after_ms }
            | SimStep::RateLimited { after_ms, .. }
            | SimStep::UsageLimit { after_ms, .. }
            | SimStep::ToolThenReset { after_ms }
            | SimStep::Unrecognised { after_ms, .. } => *after_ms,
        }
    }
}

/// How to launch a candidate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct AgentSpec {
    pub kind: AgentKind,
    /// Executable; defaults per kind (`claude`, `codex`, …). Required for `generic`.
    #[serde(default)]
    pub program: Option<String>,
    /// Extra arguments placed before the prompt.
    #[serde(default)]
    pub args: Vec<String>,
    #[serde(default)]
    pub model: Option<String>,
    /// Simulated provider only: attempt N of this candidate in a route plays
    /// step N (the last step repeats).
    #[serde(default)]
    pub script: Vec<SimStep>,
    /// Variables added to the agent's environment (a proxy, another
    /// account's key). Values that look like secrets are never logged.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// The CLI's own configuration directory, passed as the variable that
    /// CLI documents (`CLAUDE_CONFIG_DIR`, `CODEX_HOME`, `GEMINI_CLI_HOME`,
    /// `OPENCODE_CONFIG_DIR`).
    #[serde(default)]
    pub config_dir: Option<String>,
    /// When an attempt that has gone quiet, or runs too long, is ended.
    #[serde(default)]
    pub timeouts: AttemptTimeouts,
}

/// Attempt deadlines: the process group is killed when one passes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct AttemptTimeouts {
    /// Seconds without any output on stdout or stderr.
    pub idle_s: u32,
    /// Seconds since the attempt started.
    pub total_s: u32,
}

impl AttemptTimeouts {
    /// Inclusive bounds, checked by candidate validation.
    pub const IDLE_S: std::ops::RangeInclusive<u32> = 10..=86_400;
    pub const TOTAL_S: std::ops::RangeInclusive<u32> = 10..=604_800;
}

impl Default for AttemptTimeouts {
    /// A quarter hour of silence (a long build prints nothing through the
    /// agent's stream), four hours in all.
    fn default() -> Self {
        AttemptTimeouts {
            idle_s: 900,
            total_s: 14_400,
        }
    }
}

impl AgentSpec {
    /// A simulated-provider agent that plays `script`; no process, no network.
    pub fn simulated(script: Vec<SimStep>) -> AgentSpec {
        AgentSpec {
            kind: AgentKind::Simulated,
            program: None,
            args: Vec::new(),
            model: None,
            script,
            env: BTreeMap::new(),
            config_dir: None,
            timeouts: AttemptTimeouts::default(),
        }
    }
}
