//! Codex `exec --json`, as 0.17x really prints it (fixtures/agents/recorded/codex-*):
//! `thread.started`, `turn.started`, `item.started|updated|completed` (items:
//! agent_message, reasoning and todo_list are model output (a plan is what
//! the model wrote, and any assistant output makes a replay unsafe); command_execution,
//! file_change, mcp_tool_call and web_search are tool activity; `error` items
//! are the CLI's own warnings), `turn.completed`, and failures as `error`
//! events (`Reconnecting... 1/5 (…)` while it retries) then `turn.failed`.

use crate::agent::kinds::{waits_for_window, HOUR};
use crate::agent::stream::{
    raw, status_in, str_at, CommandLine, Exit, Finished, Seen, StreamAdapter,
};
use crate::agent::{
    Access, AccessFlags, AccessMap, AccountFacts, AgentKind, AgentSpec, Descriptor, Launch,
    ReadinessFacts, Resume, SessionFile, SessionRoot, Sessions, ToolStatus, Usage,
};
use crate::evidence::Provider;

/// The CLI's output flags, first on every command line it is run with.
const FIXED: &[&str] = &["exec", "--json"];

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
    access: Some(AccessMap {
        flags: |level| {
            Some(AccessFlags::args(match level {
                Access::ReadOnly => &["--sandbox", "read-only"],
                Access::Edit => &["--sandbox", "workspace-write"],
                Access::Full => &["--sandbox", "danger-full-access"],
            }))
        },
        own_flags: &[
            "--sandbox",
            "-s",
            "--dangerously-bypass-approvals-and-sandbox",
            "--approve-for-me",
            "--full-auto",
        ],
    }),
    readiness: Some(ReadinessFacts {
        package: "@openai/codex",
        credential_variables: &["OPENAI_API_KEY", "CODEX_API_KEY"],
        credential_files: &["auth.json"],
        config_dir_default: "~/.codex",
        full_as_root_needs: None,
    }),
    starter: || AgentSpec {
        access: Some(Access::Edit),
        ..AgentSpec::default_for(AgentKind::Codex)
    },
    starter_policy: || waits_for_window(6 * HOUR),
    starter_why: "Codex on a ChatGPT plan stops at its 5-hour usage window: a hard failure waits for the window to reset (up to 6 h) before trying the next candidate; overloads and dropped connections are retried 3 times from 10 s.",
    hard_wait_s: 6 * HOUR,
    launch: Launch::Process {
        command: |agent, prompt| {
            CommandLine::cli(agent, "codex", FIXED, "--model", &[prompt])
        },
        adapter: || Box::<Codex>::default(),
    },
    resume: Some(Resume {
        // Options before `resume` apply to the resumed run; `resume` itself
        // refuses `--sandbox`.
        command: |agent, session, message| {
            CommandLine::cli(
                agent,
                "codex",
                FIXED,
                "--model",
                &["resume", session, message],
            )
        },
        // `sessions/YYYY/MM/DD/rollout-<time>-<thread id>.jsonl`.
        sessions: Sessions {
            root: SessionRoot::ConfigDir,
            folder: "sessions",
            file: SessionFile::Named {
                depth: 4,
                prefix: None,
            },
        },
    }),
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
            Some("thread.started") => self
                .seen
                .transcript
                .session(str_at(&v, &["thread_id"]).unwrap_or_default()),
            Some("turn.started") => self.seen.stream_started = true,
            Some("item.started" | "item.updated" | "item.completed") => self.item(&v),
            Some("turn.completed") => {
                self.completed = true;
                if let Some(u) = v.get("usage") {
                    self.seen.transcript.add_usage(usage(u));
                }
            }
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

/// `turn.completed.usage`: Codex reports tokens, no cost.
fn usage(u: &serde_json::Value) -> Usage {
    let n = |k: &str| {
        u.get(k)
            .and_then(|n| n.as_u64())
            .map_or(0, |n| u32::try_from(n).unwrap_or(u32::MAX))
    };
    Usage {
        input_tokens: n("input_tokens"),
        output_tokens: n("output_tokens"),
        cache_read_tokens: n("cached_input_tokens"),
        cache_write_tokens: n("cache_write_input_tokens"),
        cost_usd: None,
    }
}

impl Codex {
    /// A tool item in the transcript: started, then completed or failed
    /// (a command by its exit code). A command the read-only sandbox stops
    /// is not printed at all (openai/codex#47433, docs/agents.md), so its
    /// refusals cannot be counted here.
    fn record_tool(&mut self, v: &serde_json::Value, kind: &str) {
        let item = &v["item"];
        let id = str_at(item, &["id"]).unwrap_or_default();
        let (name, input) = match kind {
            "command_execution" => ("shell".to_string(), item.get("command")),
            "mcp_tool_call" => (
                format!(
                    "{}/{}",
                    str_at(item, &["server"]).unwrap_or("mcp"),
                    str_at(item, &["tool"]).unwrap_or("tool")
                ),
                item.get("arguments"),
            ),
            "web_search" => ("web_search".to_string(), item.get("query")),
            _ => (kind.to_string(), item.get("changes")),
        };
        let t = &mut self.seen.transcript;
        if str_at(v, &["type"]) != Some("item.completed") {
            t.tool(id, &name, input, ToolStatus::Started);
            return;
        }
        t.tool(id, &name, input, ToolStatus::Started);
        let exit = item.get("exit_code").and_then(|c| c.as_i64());
        let failed = str_at(item, &["status"]) == Some("failed") || exit.is_some_and(|c| c != 0);
        let status = if failed {
            ToolStatus::Failed
        } else {
            ToolStatus::Completed
        };
        let detail = failed
            .then(|| str_at(item, &["aggregated_output"]))
            .flatten();
        t.tool_ended(id, &name, status, detail);
    }

    fn item(&mut self, v: &serde_json::Value) {
        let item_type = str_at(v, &["item", "type"]).or(str_at(v, &["item", "item_type"]));
        match item_type {
            // A warning of the CLI's own ("Model metadata … not found").
            Some("error") => {}
            Some("agent_message" | "reasoning" | "todo_list") => {
                self.seen.stream_started = true;
                self.seen.assistant = true;
                let done = str_at(v, &["type"]) == Some("item.completed");
                if let (true, Some("agent_message")) = (done, item_type) {
                    let text = str_at(v, &["item", "text"]).unwrap_or_default();
                    self.seen.transcript.say(text, false);
                    // The last message of the turn is the answer.
                    self.seen.transcript.answer(text);
                }
            }
            Some(kind @ ("command_execution" | "file_change" | "mcp_tool_call" | "web_search")) => {
                self.seen.stream_started = true;
                self.seen.tool = true;
                self.record_tool(v, kind);
            }
            other => {
                self.seen.stream_started = true;
                self.seen
                    .unknown(format!("item {}", other.unwrap_or("(none)")));
            }
        }
    }
}
