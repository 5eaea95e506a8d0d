//! The built-in simulated provider: a script of real provider failures and
//! successes, played inside Recourse by the runner (`runner::simulated`);
//! no process, no network, no keys.

use chrono::{DateTime, Timelike, Utc};

use crate::agent::{AccountFacts, AgentKind, AgentSpec, Descriptor, Launch, SimStep};
use crate::evidence::Provider;
use crate::policy::{CandidatePolicy, ClassPolicy, Exhausted};

pub(super) const DESCRIPTOR: Descriptor = Descriptor {
    kind: AgentKind::Simulated,
    slug: "simulated",
    label: "Simulated provider",
    description: "Built in. Plays a script of failures and successes; no network, no keys.",
    default_program: None,
    config_dir_variable: None,
    provider: Provider::Simulated,
    account: AccountFacts::NONE,
    policy_applies: true,
    access: None,
    readiness: None,
    starter: || AgentSpec::simulated(vec![SimStep::Succeed { after_ms: 1500 }]),
    starter_policy: || {
        CandidatePolicy::new(
            ClassPolicy::new(None, Some((3, 2)), Exhausted::Skip),
            ClassPolicy::new(Some(120), None, Exhausted::Skip),
        )
    },
    starter_why: "The built-in simulated provider plays short failures so you can watch the policy work: retries from 2 s and a reset wait of up to 2 min.",
    hard_wait_s: 120,
    launch: Launch::InProcess,
    resume: None,
};

/// What each CLI prints for a failure, taken from the recordings of the
/// pinned CLIs (`fixtures/agents/recorded/<cli>-<version>/<scenario>`).
/// OpenCode passes the provider's own error body through, so it is worded
/// as the Anthropic API it most often runs on.
pub struct SimulatedWords {
    pub overloaded: &'static str,
    pub overloaded_status: u16,
    pub overloaded_type: Option<&'static str>,
    /// `{s}`: the seconds of the retry-after.
    pub rate_limited: &'static str,
    pub rate_limited_type: Option<&'static str>,
    pub connection_reset: &'static str,
}

impl SimulatedWords {
    /// `None`: a simulated candidate that names no CLI fails as Claude Code.
    pub fn of(like: Option<AgentKind>) -> SimulatedWords {
        match like.unwrap_or(AgentKind::ClaudeCode) {
            // codex-0.171.0/overloaded, rate_limited, cut_stream
            AgentKind::Codex => SimulatedWords {
                overloaded: "unexpected status 503 Service Unavailable: The server is overloaded or not ready yet.",
                overloaded_status: 503,
                overloaded_type: None,
                rate_limited: "exceeded retry limit, last status: 429 Too Many Requests",
                rate_limited_type: None,
                connection_reset: "stream disconnected before completion: stream closed before response.completed",
            },
            // gemini-0.61.0/overloaded, cut_stream
            AgentKind::Gemini => SimulatedWords {
                overloaded: "[API Error: The model is overloaded. Please try again later.]",
                overloaded_status: 503,
                overloaded_type: None,
                // gemini-cli issue 2020: a throttle, not a quota.
                rate_limited: "[API Error: Resource has been exhausted (e.g. check quota).]",
                rate_limited_type: None,
                connection_reset: "Model stream ended without a finish reason.",
            },
            // claude-2.1.332/overloaded, rate_limited, tool_then_error
            AgentKind::ClaudeCode
            | AgentKind::Opencode
            | AgentKind::Simulated
            | AgentKind::Generic => SimulatedWords {
                overloaded: r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
                overloaded_status: 529,
                overloaded_type: Some("overloaded_error"),
                rate_limited: r#"{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}"#,
                rate_limited_type: Some("rate_limit_error"),
                connection_reset: "API Error: Connection error. (read ECONNRESET: connection reset by peer)",
            },
        }
    }
}

/// A usage limit that resets `resets_in_s` after `now`, as `like` says it:
/// Claude Code gives the epoch second, Codex the time left in whole
/// minutes, Gemini CLI the clock time (to the minute, in UTC); the reset
/// falls at the minute they name.
pub fn usage_limit_words(like: Option<AgentKind>, now: DateTime<Utc>, resets_in_s: u32) -> String {
    let minutes = resets_in_s.div_ceil(60).max(1);
    match like.unwrap_or(AgentKind::ClaudeCode) {
        AgentKind::Codex => format!(
            "You've hit your usage limit. Upgrade to Pro (https://openai.com/chatgpt/pricing) or \
             try again in {minutes} minute{}.",
            if minutes == 1 { "" } else { "s" }
        ),
        AgentKind::Gemini => {
            let reset = now + chrono::Duration::seconds(i64::from(resets_in_s));
            // The next whole minute: a clock time never promises too early.
            let reset = reset
                .with_second(0)
                .and_then(|t| t.with_nanosecond(0))
                .map_or(reset, |t| t + chrono::Duration::minutes(1));
            format!(
                "Usage limit reached for gemini-2.5-pro. Access resets at {} UTC.",
                reset.format("%-I:%M %p")
            )
        }
        AgentKind::ClaudeCode | AgentKind::Opencode | AgentKind::Simulated | AgentKind::Generic => {
            format!(
                "Claude AI usage limit reached|{}",
                now.timestamp() + i64::from(resets_in_s)
            )
        }
    }
}
