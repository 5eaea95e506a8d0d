//! Codex `exec --json`, as 0.17x really prints it (fixtures/agents/recorded/codex-*):
//! `thread.started`, `turn.started`, `item.started|updated|completed` (items:
//! agent_message, reasoning and todo_list are model output (a plan is what
//! the model wrote, and any assistant output makes a replay unsafe); command_execution,
//! file_change, mcp_tool_call and web_search are tool activity; `error` items
//! are the CLI's own warnings), `turn.completed`, and failures as `error`
//! events (`Reconnecting... 1/5 (…)` while it retries) then `turn.failed`.

use crate::agent::stream::{
    raw, status_in, str_at, CommandLine, Exit, Finished, Seen, StreamAdapter,
};
use crate::agent::{AccountFacts, AgentKind, AgentSpec, Descriptor, Launch};
use crate::evidence::Provider;

pub(super) const DESCRIPTOR: Descriptor = Descriptor {
    kind: AgentKind::Codex,
    slug: "codex",
    label: "Codex CLI",
    description: "Runs `codex exec --json`; items and turn failures are tracked.",
    default_program: Some("codex"),
    config_dir_variable: Some("CODEX_HOME"),
    provider: Provider::Codex,
    account: AccountFacts {
        credentials: &["OPENAI_API_KEY", "CODEX_API_KEY"],
        base_urls: &["OPENAI_BASE_URL"],
    },
    policy_applies: true,
    starter: || AgentSpec::default_for(AgentKind::Codex),
    launch: Launch::Process {
        command: |agent, prompt| {
            CommandLine::cli(agent, "codex", &["exec", "--json"], "--model", &[prompt])
        },
        adapter: || Box::<Codex>::default(),
    },
};

#[derive(Default)]
pub struct Codex {
    seen: Seen,
    completed: bool,
    /// Message of the terminal `turn.failed`, else of the last `error` event
    /// that is not a retry notice.
    error: Option<String>,
    failed: bool,
}

impl StreamAdapter for Codex {
    fn on_stdout_line(&mut self, line: &str) {
        let Some(v) = self.seen.read(line) else {
            return;
        };
        match str_at(&v, &["type"]) {
            Some("thread.started") => {}
            Some("turn.started") => self.seen.stream_started = true,
            Some("item.started" | "item.updated" | "item.completed") => self.item(&v),
            Some("turn.completed") => self.completed = true,
            Some("turn.failed") => {
                self.failed = true;
                if let Some(m) = str_at(&v, &["error", "message"]) {
                    self.error = Some(m.to_string());
                }
            }
            Some("error") => {
                let message = str_at(&v, &["message"]).unwrap_or_default();
                if !message.starts_with("Reconnecting...") && !self.failed {
                    self.error = Some(message.to_string());
                }
            }
            other => self.seen.unknown_type(other),
        }
    }

    fn finish(self: Box<Self>, exit: Exit) -> Finished {
        if self.completed && self.error.is_none() && exit.code == Some(0) {
            return Finished::Succeeded;
        }
        let boundary_known = self.error.is_some();
        let phase = self.seen.phase();
        let mut raw = raw(Provider::Codex, self.error, &exit, phase);
        raw.http_status = status_in(&String::from_utf8_lossy(&raw.message));
        Finished::Failed {
            raw,
            effect: self.seen.effect(boundary_known),
        }
    }

    fn seen(&self) -> &Seen {
        &self.seen
    }

    fn seen_mut(&mut self) -> &mut Seen {
        &mut self.seen
    }
}

impl Codex {
    fn item(&mut self, v: &serde_json::Value) {
        let item_type = str_at(v, &["item", "type"]).or(str_at(v, &["item", "item_type"]));
        match item_type {
            // A warning of the CLI's own ("Model metadata … not found").
            Some("error") => {}
            Some("agent_message" | "reasoning" | "todo_list") => {
                self.seen.stream_started = true;
                self.seen.assistant = true;
            }
            Some("command_execution" | "file_change" | "mcp_tool_call" | "web_search") => {
                self.seen.stream_started = true;
                self.seen.tool = true;
            }
            other => {
                self.seen.stream_started = true;
                self.seen
                    .unknown(format!("item {}", other.unwrap_or("(none)")));
            }
        }
    }
}
