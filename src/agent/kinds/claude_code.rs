//! Claude Code `--output-format stream-json --verbose`, as 2.1.x really
//! prints it (fixtures/agents/recorded/claude-*):
//! - `system` `init`, then `system` `api_retry` for each of the CLI's own
//!   retries (`error_status`, `retry_delay_ms`): progress, not the verdict;
//! - `rate_limit_event` with `rate_limit_info {status, resetsAt, rateLimitType}`
//!   for subscription windows: the structured reset instant;
//! - `assistant` (text, thinking, tool_use blocks) and `user` (tool_result);
//!   on an API failure one more `assistant` holding only the CLI's own error
//!   text (`model: "<synthetic>"`, `is_api_error_message`, `api_error_status`,
//!   `api_error_type`): that is evidence, not assistant output;
//! - a final `result` with `is_error`, `result` text and `api_error_status`.

use crate::agent::json_head;
use crate::agent::kinds::{waits_for_window, HOUR};
use crate::agent::stream::{
    raw, status_at, status_in, str_at, CommandLine, Exit, Finished, Seen, StreamAdapter,
};
use crate::agent::{
    Access, AccessFlags, AccessMap, AccountFacts, AgentKind, AgentSpec, Descriptor, Launch,
    ReadinessFacts, Resume, SessionFile, SessionRoot, Sessions, ToolStatus, Usage,
};
use crate::evidence::{Phase, Provider};

/// The CLI's output flags, first on every command line it is run with.
const FIXED: &[&str] = &["--output-format", "stream-json", "--verbose"];

pub(super) const DESCRIPTOR: Descriptor = Descriptor {
    kind: AgentKind::ClaudeCode,
    slug: "claude-code",
    label: "Claude Code",
    description:
        "Runs `claude -p` with stream-json output; tool use and assistant text are tracked.",
    default_program: Some("claude"),
    config_dir_variable: Some("CLAUDE_CONFIG_DIR"),
    provider: Provider::ClaudeCode,
    account: AccountFacts {
        credentials: &[
            "ANTHROPIC_API_KEY",
            "ANTHROPIC_AUTH_TOKEN",
            "CLAUDE_CODE_OAUTH_TOKEN",
        ],
        base_urls: &["ANTHROPIC_BASE_URL"],
    },
    policy_applies: true,
    starter_policy: || waits_for_window(6 * HOUR),
    starter_why: "Claude Code on a subscription stops at its 5-hour usage window: a hard failure waits for the window to reset (up to 6 h) before trying the next candidate; overloads and dropped connections are retried 3 times from 10 s.",
    hard_wait_s: 6 * HOUR,
    access: Some(AccessMap {
        flags: |level| {
            Some(AccessFlags::args(match level {
                Access::ReadOnly => &["--permission-mode", "plan"],
                Access::Edit => &["--permission-mode", "acceptEdits"],
                Access::Full => &["--permission-mode", "bypassPermissions"],
            }))
        },
        own_flags: &[
            "--permission-mode",
            "--dangerously-skip-permissions",
            "--allow-dangerously-skip-permissions",
            "--allowedTools",
            "--allowed-tools",
        ],
    }),
    readiness: Some(ReadinessFacts {
        package: "@anthropic-ai/claude-code",
        credential_variables: &[
            "ANTHROPIC_API_KEY",
            "ANTHROPIC_AUTH_TOKEN",
            "CLAUDE_CODE_OAUTH_TOKEN",
        ],
        credential_files: &[".credentials.json"],
        config_dir_default: "~/.claude",
        full_as_root_needs: Some("IS_SANDBOX"),
    }),
    starter: || AgentSpec {
        access: Some(Access::Edit),
        ..AgentSpec::default_for(AgentKind::ClaudeCode)
    },
    launch: Launch::Process {
        command: |agent, prompt| {
            CommandLine::cli(
                agent,
                "claude",
                FIXED,
                "--model",
                &["-p", prompt],
            )
        },
        adapter: || Box::<Claude>::default(),
    },
    resume: Some(Resume {
        command: |agent, session, message| {
            CommandLine::cli(
                agent,
                "claude",
                FIXED,
                "--model",
                &["--resume", session, "-p", message],
            )
        },
        // `projects/<working directory>/<session id>.jsonl` (docs/agents.md).
        sessions: Sessions {
            root: SessionRoot::ConfigDir,
            folder: "projects",
            file: SessionFile::Named {
                depth: 2,
                prefix: None,
            },
        },
    }),
};

#[derive(Default)]
pub struct Claude {
    seen: Seen,
    result: Option<Outcome>,
    /// The synthetic API-error message's status and provider error type.
    api_error: Option<(Option<u16>, Option<String>)>,
    /// Status of the CLI's last own retry.
    retry_status: Option<u16>,
    /// A rejected subscription window: (reset epoch seconds, window name).
    window: Option<(String, Option<String>)>,
}

struct Outcome {
    is_error: bool,
    text: String,
    subtype: String,
    status: Option<u16>,
}

impl StreamAdapter for Claude {
    fn on_stdout_line(&mut self, line: &str) {
        let Some(v) = self.seen.read(line) else {
            return;
        };
        match str_at(&v, &["type"]) {
            Some("system") => self.system(&v),
            Some("rate_limit_event") => self.rate_limit(&v),
            Some("assistant") => {
                self.seen.stream_started = true;
                if is_synthetic(&v) {
                    self.api_error = Some((
                        status_at(&v, &["api_error_status"]),
                        str_at(&v, &["api_error_type"])
                            .or(str_at(&v, &["api_error"]))
                            .map(str::to_string),
                    ));
                } else {
                    self.blocks(&v);
                }
            }
            Some("user") => {
                self.seen.stream_started = true;
                self.blocks(&v);
            }
            // Partial messages (`--include-partial-messages`).
            Some("stream_event") => {
                self.seen.stream_started = true;
                self.stream_event(&v);
            }
            Some("result") => {
                let is_error = v.get("is_error").and_then(|b| b.as_bool()).unwrap_or(true);
                self.record_result(&v, is_error);
                self.result = Some(Outcome {
                    is_error,
                    text: str_at(&v, &["result"]).unwrap_or_default().to_string(),
                    subtype: str_at(&v, &["subtype"]).unwrap_or_default().to_string(),
                    status: status_at(&v, &["api_error_status"]),
                });
            }
            other => self.seen.unknown_type(other),
        }
    }

    /// A huge `result` (a long final answer, or an error with a long text)
    /// is recognised from its head. 2.1.x prints `type` after the `result`
    /// text (fixtures/agents/recorded/claude-*/ok), so a head without
    /// `type` whose cut falls in a top-level `result` string next to
    /// `is_error` is the result event; only it has those fields.
    fn on_oversized_line(&mut self, head: &str) {
        self.seen.stream_started = true;
        let Some(h) = json_head::scan(head) else {
            return self.seen.oversized(head);
        };
        let is_result = match h.str("type") {
            Some(t) => t == "result",
            None => h.cut_in.as_deref() == Some("result") && h.bool("is_error").is_some(),
        };
        if !is_result {
            return self.seen.oversized(head);
        }
        let status = h
            .fields
            .get("api_error_status")
            .and_then(|v| v.as_u64())
            .and_then(|n| u16::try_from(n).ok())
            .filter(|s| crate::evidence::HTTP_STATUS_RANGE.contains(s));
        let is_error = h.bool("is_error").unwrap_or(true);
        if !is_error {
            if let Some(answer) = h.str("result").or(h.cut_text.as_deref()) {
                // What was kept of a huge answer: its head.
                self.seen.transcript.answer(answer);
            }
        }
        self.result = Some(Outcome {
            is_error,
            text: h
                .str("result")
                .or(h.cut_text.as_deref())
                .unwrap_or_default()
                .to_string(),
            subtype: h.str("subtype").unwrap_or_default().to_string(),
            status,
        });
    }

    fn finish(self: Box<Self>, exit: Exit) -> Finished {
        let Claude {
            seen,
            result,
            api_error,
            retry_status,
            window,
        } = *self;
        match result {
            Some(r) if !r.is_error && exit.code == Some(0) => Finished::Succeeded,
            Some(r) => {
                // A result that is no error (the process still failed) holds
                // the model's answer, not the CLI's error: the stderr tail is
                // the evidence then.
                let message = match r.is_error {
                    false => None,
                    true if r.text.is_empty() => Some(r.subtype),
                    true => Some(r.text),
                };
                let mut raw = raw(Provider::ClaudeCode, message, &exit, Phase::Request);
                let (synthetic_status, error_type) = api_error.unwrap_or_default();
                raw.http_status = r
                    .status
                    .or(synthetic_status)
                    .or_else(|| status_in(&String::from_utf8_lossy(&raw.message)))
                    .or(retry_status);
                raw.error_type = error_type;
                if let Some((reset, claim)) = window {
                    raw.headers.insert(
                        "anthropic-ratelimit-unified-status".into(),
                        "rejected".into(),
                    );
                    raw.headers
                        .insert("anthropic-ratelimit-unified-reset".into(), reset);
                    if let Some(claim) = claim {
                        raw.headers.insert(
                            "anthropic-ratelimit-unified-representative-claim".into(),
                            claim,
                        );
                    }
                }
                Finished::Failed {
                    raw,
                    effect: seen.effect(true),
                }
            }
            None => {
                let phase = seen.phase();
                Finished::Failed {
                    raw: raw(Provider::ClaudeCode, None, &exit, phase),
                    effect: seen.effect(false),
                }
            }
        }
    }

    fn seen(&self) -> &Seen {
        &self.seen
    }

    fn seen_mut(&mut self) -> &mut Seen {
        &mut self.seen
    }
}

/// A tool result's text: a string, or the text blocks of a list.
fn result_text(b: &serde_json::Value) -> Option<String> {
    match b.get("content")? {
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Array(parts) => Some(
            parts
                .iter()
                .filter_map(|p| str_at(p, &["text"]))
                .collect::<Vec<_>>()
                .join("\n"),
        ),
        _ => None,
    }
}

/// The CLI's own rendering of an API error, dressed as an assistant message.
fn is_synthetic(v: &serde_json::Value) -> bool {
    v.get("is_api_error_message").and_then(|b| b.as_bool()) == Some(true)
        || str_at(v, &["message", "model"]) == Some("<synthetic>")
}

impl Claude {
    fn system(&mut self, v: &serde_json::Value) {
        match str_at(v, &["subtype"]) {
            Some("init") => {
                self.seen.stream_started = true;
                let t = &mut self.seen.transcript;
                t.session(str_at(v, &["session_id"]).unwrap_or_default());
                t.model(str_at(v, &["model"]).unwrap_or_default());
            }
            // A tool the permission mode refused (2.1.332, recorded).
            Some("permission_denied") => self.seen.transcript.tool_ended(
                str_at(v, &["tool_use_id"]).unwrap_or_default(),
                str_at(v, &["tool_name"]).unwrap_or_default(),
                ToolStatus::Refused,
                str_at(v, &["message"]),
            ),
            Some("api_retry") => {
                self.retry_status = status_at(v, &["error_status"]).or(self.retry_status);
            }
            Some("compact_boundary" | "status") => {}
            other => self
                .seen
                .unknown(format!("system/{}", other.unwrap_or("(none)"))),
        }
    }

    fn rate_limit(&mut self, v: &serde_json::Value) {
        let Some(info) = v.get("rate_limit_info") else {
            return;
        };
        if str_at(info, &["status"]) != Some("rejected") {
            return;
        }
        let reset = info.get("resetsAt").and_then(|r| r.as_i64());
        if let Some(reset) = reset {
            let claim = str_at(info, &["rateLimitType"]).map(str::to_string);
            self.window = Some((reset.to_string(), claim));
        }
    }

    fn blocks(&mut self, v: &serde_json::Value) {
        let is_user = str_at(v, &["type"]) == Some("user");
        let Some(blocks) = v.pointer("/message/content").and_then(|c| c.as_array()) else {
            // The prompt itself may come as a plain string; an assistant
            // message in a shape this adapter was not written for may not.
            if !is_user {
                self.seen
                    .unknown("assistant message without content blocks");
            }
            return;
        };
        for b in blocks {
            self.block(b, is_user);
            self.record(b, is_user);
        }
    }

    /// A whole message's block in the transcript (partial messages are not
    /// recorded: the whole message follows them).
    fn record(&mut self, b: &serde_json::Value, is_user: bool) {
        let t = &mut self.seen.transcript;
        match (str_at(b, &["type"]), is_user) {
            (Some("text"), false) => t.say(str_at(b, &["text"]).unwrap_or_default(), false),
            (Some("tool_use" | "server_tool_use" | "mcp_tool_use"), _) => t.tool(
                str_at(b, &["id"]).unwrap_or_default(),
                str_at(b, &["name"]).unwrap_or_default(),
                b.get("input"),
                ToolStatus::Started,
            ),
            (Some("tool_result" | "mcp_tool_result"), _) => {
                let failed = b.get("is_error").and_then(|e| e.as_bool()) == Some(true);
                let detail = failed.then(|| result_text(b)).flatten();
                t.tool_ended(
                    str_at(b, &["tool_use_id"]).unwrap_or_default(),
                    "",
                    if failed {
                        ToolStatus::Failed
                    } else {
                        ToolStatus::Completed
                    },
                    detail.as_deref(),
                );
            }
            _ => {}
        }
    }

    /// What the `result` event says of the run: answer, session, usage, cost,
    /// model, and the tools the permission mode refused.
    fn record_result(&mut self, v: &serde_json::Value, is_error: bool) {
        let t = &mut self.seen.transcript;
        if let Some(id) = str_at(v, &["session_id"]) {
            t.session(id);
        }
        if !is_error {
            if let Some(answer) = str_at(v, &["result"]) {
                t.answer(answer);
            }
        }
        if let Some(models) = v.get("modelUsage").and_then(|m| m.as_object()) {
            if let Some(model) = models.keys().next() {
                t.model(model);
            }
        }
        if let Some(u) = v.get("usage") {
            let n = |k: &str| {
                u.get(k)
                    .and_then(|n| n.as_u64())
                    .map_or(0, |n| u32::try_from(n).unwrap_or(u32::MAX))
            };
            t.add_usage(Usage {
                input_tokens: n("input_tokens"),
                output_tokens: n("output_tokens"),
                cache_read_tokens: n("cache_read_input_tokens"),
                cache_write_tokens: n("cache_creation_input_tokens"),
                // On a resumed session this is the session's total so far.
                cost_usd: v.get("total_cost_usd").and_then(|c| c.as_f64()),
            });
        }
        for denial in v
            .get("permission_denials")
            .and_then(|d| d.as_array())
            .into_iter()
            .flatten()
        {
            t.tool_ended(
                str_at(denial, &["tool_use_id"]).unwrap_or_default(),
                str_at(denial, &["tool_name"]).unwrap_or_default(),
                ToolStatus::Refused,
                None,
            );
        }
    }

    /// The Messages API stream events the CLI relays: a block start names
    /// its type, deltas are output, the rest is bookkeeping.
    fn stream_event(&mut self, v: &serde_json::Value) {
        match str_at(v, &["event", "type"]) {
            Some("content_block_start") => match v.pointer("/event/content_block") {
                Some(block) => self.block(block, false),
                None => self.seen.unknown("content_block_start without a block"),
            },
            Some("content_block_delta") => self.seen.assistant = true,
            Some(
                "message_start" | "message_delta" | "message_stop" | "content_block_stop" | "ping",
            ) => {}
            other => self
                .seen
                .unknown(format!("stream event {}", other.unwrap_or("(none)"))),
        }
    }

    fn block(&mut self, b: &serde_json::Value, is_user: bool) {
        match str_at(b, &["type"]) {
            // In a `user` message text is the prompt or a tool's note,
            // not assistant output.
            Some("text") if is_user => {}
            Some("text" | "thinking" | "redacted_thinking") => self.seen.assistant = true,
            Some(
                "tool_use"
                | "tool_result"
                | "server_tool_use"
                | "web_search_tool_result"
                | "mcp_tool_use"
                | "mcp_tool_result",
            ) => self.seen.tool = true,
            other => self
                .seen
                .unknown(format!("content block {}", other.unwrap_or("(none)"))),
        }
    }
}
