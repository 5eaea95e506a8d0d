//! OpenCode `run --format json`, as 1.x really prints it
//! (fixtures/agents/recorded/opencode-*): one JSON event per line —
//! `step_start`, `text`, `reasoning`, `tool_use`, `step_finish` — and `error`
//! with `error.name` and `error.data {message, statusCode, responseHeaders,
//! responseBody}`: the provider's status, headers (retry-after, reset
//! instants) and body (its error type) as the CLI received them.

use std::collections::BTreeMap;

use crate::agent::stream::{
    raw, status_at, status_in, str_at, CommandLine, Exit, Finished, Seen, StreamAdapter,
};
use crate::agent::{AccountFacts, AgentKind, AgentSpec, Descriptor, Launch};
use crate::evidence::{Phase, Provider};

pub(super) const DESCRIPTOR: Descriptor = Descriptor {
    kind: AgentKind::Opencode,
    slug: "opencode",
    label: "OpenCode",
    description: "Runs `opencode run --format json`; text, tool and error events are tracked.",
    default_program: Some("opencode"),
    config_dir_variable: Some("OPENCODE_CONFIG_DIR"),
    provider: Provider::Opencode,
    account: AccountFacts {
        credentials: &[
            "ANTHROPIC_API_KEY",
            "OPENAI_API_KEY",
            "GEMINI_API_KEY",
            "OPENROUTER_API_KEY",
        ],
        base_urls: &[],
    },
    policy_applies: true,
    starter: || AgentSpec::default_for(AgentKind::Opencode),
    launch: Launch::Process {
        command: |agent, prompt| {
            CommandLine::cli(
                agent,
                "opencode",
                &["run", "--format", "json"],
                "--model",
                &[prompt],
            )
        },
        adapter: || Box::<Opencode>::default(),
    },
};

#[derive(Default)]
pub struct Opencode {
    seen: Seen,
    error: Option<ErrorEvent>,
}

struct ErrorEvent {
    name: Option<String>,
    message: Option<String>,
    status: Option<u16>,
    headers: BTreeMap<String, String>,
    body: Option<String>,
}

impl StreamAdapter for Opencode {
    fn on_stdout_line(&mut self, line: &str) {
        let Some(v) = self.seen.read(line) else {
            return;
        };
        match str_at(&v, &["type"]) {
            Some("step_start" | "step_finish") => self.seen.stream_started = true,
            Some("text" | "reasoning") => {
                self.seen.stream_started = true;
                self.seen.assistant = true;
            }
            Some("tool_use") => {
                self.seen.stream_started = true;
                self.seen.tool = true;
            }
            Some("error") => self.error = Some(error_event(&v)),
            other => self.seen.unknown_type(other),
        }
    }

    fn finish(self: Box<Self>, exit: Exit) -> Finished {
        let Some(e) = self.error else {
            if exit.code == Some(0) {
                return Finished::Succeeded;
            }
            let phase = self.seen.phase();
            return Finished::Failed {
                raw: raw(Provider::Opencode, None, &exit, phase),
                effect: self.seen.effect(false),
            };
        };
        // The CLI's message first, then the provider's body, which carries
        // the provider's own wording and error type.
        let message = match (&e.message, &e.body) {
            (Some(m), Some(b)) => Some(format!("{m}\n{b}")),
            (m, b) => m.clone().or_else(|| b.clone()),
        };
        let mut raw = raw(Provider::Opencode, message, &exit, Phase::Request);
        raw.http_status = e
            .status
            .or_else(|| status_in(&String::from_utf8_lossy(&raw.message)));
        raw.error_type = e.body.as_deref().and_then(body_error_type).or(e.name);
        raw.headers = e.headers;
        Finished::Failed {
            raw,
            effect: self.seen.effect(true),
        }
    }

    fn seen(&self) -> &Seen {
        &self.seen
    }

    fn seen_mut(&mut self) -> &mut Seen {
        &mut self.seen
    }
}

fn error_event(v: &serde_json::Value) -> ErrorEvent {
    let data = v.pointer("/error/data");
    let headers = data
        .and_then(|d| d.get("responseHeaders"))
        .and_then(|h| h.as_object())
        .map(|h| {
            h.iter()
                .filter_map(|(k, v)| Some((k.to_ascii_lowercase(), v.as_str()?.to_string())))
                .collect()
        })
        .unwrap_or_default();
    ErrorEvent {
        name: str_at(v, &["error", "name"]).map(str::to_string),
        message: str_at(v, &["error", "data", "message"])
            .or(str_at(v, &["error", "message"]))
            .map(str::to_string),
        status: data.and_then(|d| status_at(d, &["statusCode"])),
        headers,
        body: data
            .and_then(|d| d.get("responseBody"))
            .and_then(|b| b.as_str())
            .map(str::to_string),
    }
}

/// `overloaded_error` from an Anthropic body, `insufficient_quota` from an
/// OpenAI one (its `code`, else its `type`).
fn body_error_type(body: &str) -> Option<String> {
    let v: serde_json::Value = serde_json::from_str(body).ok()?;
    let e = v.get("error")?;
    str_at(e, &["code"])
        .or(str_at(e, &["type"]))
        .or(str_at(e, &["status"]))
        .map(str::to_string)
}
