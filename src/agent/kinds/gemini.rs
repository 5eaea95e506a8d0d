//! Gemini CLI `--output-format stream-json`, as 0.6x really prints it
//! (fixtures/agents/recorded/gemini-*): `init`, `message` (role user or
//! assistant), `tool_use`, `tool_result`, `error` (a non-fatal warning) and a
//! final `result` with `status` and, on failure, `error {type, message}`.
//!
//! The result carries no HTTP status. The CLI prints its error class and the
//! status on stderr (`… TerminalQuotaError: …`, `status: 429`) and exits
//! with the status mod 256, so those are read, in that order.
//!
//! Without a result, the CLI's last "Error when talking to Gemini API" block
//! on stderr (its header line, the indented stack and `cause`/`status`
//! fields, up to the closing `}`) is the evidence: warnings, startup
//! telemetry and the retry notices before it are not. With no such block the
//! whole stderr tail is.

use std::sync::LazyLock;

use regex::Regex;

use crate::agent::kinds::{waits_for_window, HOUR};
use crate::agent::stream::{
    raw, status_at, str_at, CommandLine, Exit, Finished, Seen, StreamAdapter,
};
use crate::agent::{
    Access, AccessFlags, AccessMap, AccountFacts, AgentKind, AgentSpec, Descriptor, Launch,
    ReadinessFacts, Resume, SessionFile, SessionRoot, Sessions, ToolStatus, Usage,
};
use crate::evidence::{Phase, Provider};

/// The CLI's output flags, first on every command line it is run with.
const FIXED: &[&str] = &["--output-format", "stream-json"];

pub(super) const DESCRIPTOR: Descriptor = Descriptor {
    kind: AgentKind::Gemini,
    slug: "gemini",
    label: "Gemini CLI",
    description: "Runs `gemini -p` with stream-json output; tool use, assistant text and the CLI's error class are tracked.",
    default_program: Some("gemini"),
    config_dir_variable: Some("GEMINI_CLI_HOME"),
    provider: Provider::Gemini,
    account: AccountFacts {
        credentials: &["GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_APPLICATION_CREDENTIALS", "GOOGLE_CLOUD_PROJECT"],
        base_urls: &["GOOGLE_GEMINI_BASE_URL"],
    },
    policy_applies: true,
    access: Some(AccessMap {
        flags: |level| {
            Some(AccessFlags::args(match level {
                Access::ReadOnly => &["--approval-mode", "plan"],
                Access::Edit => &["--approval-mode", "auto_edit"],
                Access::Full => &["--approval-mode", "yolo"],
            }))
        },
        own_flags: &["--approval-mode", "-y", "--yolo", "--allowed-tools"],
    }),
    readiness: Some(ReadinessFacts {
        package: "@google/gemini-cli",
        credential_variables: &[
            "GEMINI_API_KEY",
            "GOOGLE_API_KEY",
            "GOOGLE_APPLICATION_CREDENTIALS",
        ],
        // GEMINI_CLI_HOME stands for the home its `.gemini` folder is in.
        credential_files: &[".gemini/oauth_creds.json"],
        config_dir_default: "~",
        full_as_root_needs: None,
    }),
    starter: || AgentSpec {
        access: Some(Access::Edit),
        ..AgentSpec::default_for(AgentKind::Gemini)
    },
    starter_policy: || waits_for_window(24 * HOUR),
    starter_why: "Gemini CLI's free quota is counted per day and resets at midnight Pacific time: a hard failure waits for that reset (up to 1 d) before trying the next candidate; per-minute limits and overloads are retried 3 times from 10 s.",
    hard_wait_s: 24 * HOUR,
    launch: Launch::Process {
        command: |agent, prompt| {
            CommandLine::cli(
                agent,
                "gemini",
                FIXED,
                "--model",
                &["-p", prompt],
            )
        },
        adapter: || Box::<Gemini>::default(),
    },
    resume: Some(Resume {
        command: |agent, session, message| {
            CommandLine::cli(
                agent,
                "gemini",
                FIXED,
                "--model",
                &["--resume", session, "-p", message],
            )
        },
        // `.gemini/tmp/<project>/chats/session-<date>-<first 8 of id>.jsonl`.
        sessions: Sessions {
            root: SessionRoot::ConfigDir,
            folder: ".gemini/tmp",
            file: SessionFile::Named {
                depth: 3,
                prefix: Some(8),
            },
        },
    }),
};

#[derive(Default)]
pub struct Gemini {
    seen: Seen,
    /// `Some(None)` for a successful result, `Some(Some(message))` for an error.
    result: Option<Option<String>>,
    /// The last `error` event's message: a result may carry none of its own.
    last_error: Option<String>,
}

impl StreamAdapter for Gemini {
    fn on_stdout_line(&mut self, line: &str) {
        let Some(v) = self.seen.read(line) else {
            return;
        };
        match str_at(&v, &["type"]) {
            Some("init") => {
                let t = &mut self.seen.transcript;
                t.session(str_at(&v, &["session_id"]).unwrap_or_default());
                t.model(str_at(&v, &["model"]).unwrap_or_default());
            }
            Some("message") => {
                self.seen.stream_started = true;
                if str_at(&v, &["role"]) == Some("assistant") {
                    self.seen.assistant = true;
                    let delta = v.get("delta").and_then(|d| d.as_bool()) == Some(true);
                    let text = str_at(&v, &["content"]).unwrap_or_default();
                    self.seen.transcript.say(text, delta);
                }
            }
            Some(kind @ ("tool_use" | "tool_result")) => {
                self.seen.stream_started = true;
                self.seen.tool = true;
                self.record_tool(&v, kind);
            }
            Some("error") => self.last_error = str_at(&v, &["message"]).map(str::to_string),
            Some("result") => {
                let tool_calls = v.pointer("/stats/tool_calls").and_then(|n| n.as_u64());
                if tool_calls.unwrap_or(0) > 0 {
                    self.seen.tool = true;
                }
                self.record_result(&v);
                self.result = Some(match str_at(&v, &["status"]) {
                    Some("success") => None,
                    _ => Some(
                        str_at(&v, &["error", "message"])
                            .map(str::to_string)
                            .or_else(|| self.last_error.clone())
                            .unwrap_or_else(|| "the Gemini CLI reported an error".to_string()),
                    ),
                });
            }
            other => self.seen.unknown_type(other),
        }
    }

    fn finish(self: Box<Self>, exit: Exit) -> Finished {
        let stderr = String::from_utf8_lossy(&exit.stderr_tail).into_owned();
        let block = api_error_block(&stderr);
        let stderr = block.clone().unwrap_or(stderr);
        match self.result {
            Some(None) if exit.code == Some(0) => Finished::Succeeded,
            Some(message) => {
                let message = message.unwrap_or_else(|| "exited with an error".to_string());
                let mut raw = raw(
                    Provider::Gemini,
                    Some(message.clone()),
                    &exit,
                    Phase::Request,
                );
                let provider = provider_error(&message);
                raw.http_status = provider
                    .as_ref()
                    .and_then(|e| status_at(e, &["code"]))
                    .or_else(|| last_status(&stderr))
                    .or_else(|| status_from_exit(exit.code));
                raw.error_type = provider
                    .as_ref()
                    .and_then(|e| str_at(e, &["status"]).map(str::to_string))
                    .or_else(|| cli_error_class(&stderr));
                Finished::Failed {
                    raw,
                    effect: self.seen.effect(true),
                }
            }
            None => {
                let phase = self.seen.phase();
                let mut raw = raw(Provider::Gemini, block, &exit, phase);
                raw.http_status = last_status(&stderr);
                raw.error_type = cli_error_class(&stderr);
                Finished::Failed {
                    raw,
                    effect: self.seen.effect(false),
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

impl Gemini {
    /// `tool_use` starts a call; `tool_result` ends it. Gemini withholds a
    /// tool rather than refusing it: a call the approval mode does not
    /// allow ends `invalid_tool_params` (plan mode) or `tool_not_registered`
    /// (a tool the level leaves out), recorded as refused (docs/agents.md).
    fn record_tool(&mut self, v: &serde_json::Value, kind: &str) {
        let id = str_at(v, &["tool_id"]).unwrap_or_default();
        let t = &mut self.seen.transcript;
        if kind == "tool_use" {
            let name = str_at(v, &["tool_name"]).unwrap_or_default();
            t.tool(id, name, v.get("parameters"), ToolStatus::Started);
            return;
        }
        let status = match (str_at(v, &["status"]), str_at(v, &["error", "type"])) {
            (Some("success"), _) => ToolStatus::Completed,
            (_, Some("invalid_tool_params" | "tool_not_registered")) => ToolStatus::Refused,
            _ => ToolStatus::Failed,
        };
        t.tool_ended(id, "", status, str_at(v, &["error", "message"]));
    }

    /// The result's stats (tokens, no cost) and, on success, the answer:
    /// the text after the last tool call (Gemini prints none of its own).
    fn record_result(&mut self, v: &serde_json::Value) {
        let t = &mut self.seen.transcript;
        if let Some(stats) = v.get("stats") {
            let n = |k: &str| {
                stats
                    .get(k)
                    .and_then(|n| n.as_u64())
                    .map_or(0, |n| u32::try_from(n).unwrap_or(u32::MAX))
            };
            t.add_usage(Usage {
                input_tokens: n("input_tokens"),
                output_tokens: n("output_tokens"),
                cache_read_tokens: n("cached"),
                cache_write_tokens: 0,
                cost_usd: None,
            });
        }
        if str_at(v, &["status"]) == Some("success") {
            if let Some(answer) = t.text_after_last_tool() {
                t.answer(&answer);
            }
        }
    }
}

/// The provider's own `{"error": {code, message, status}}` inside the CLI's
/// message (`[API Error: {…}]`), when it kept it.
fn provider_error(message: &str) -> Option<serde_json::Value> {
    let start = message.find("{\"error\"")?;
    let end = message.rfind('}')?;
    let v: serde_json::Value = serde_json::from_str(message.get(start..=end)?).ok()?;
    v.get("error").cloned()
}

const API_ERROR_HEADER: &str = "Error when talking to Gemini API";

/// The CLI's last "Error when talking to Gemini API" block: its line and
/// the message's further lines (`Suggested retry after 12s.`), then the
/// indented lines (stack frames, `cause: {…}`, `status: 429`) and the `}`
/// that closes the error object; an unindented line after the stack is other
/// output.
fn api_error_block(stderr: &str) -> Option<String> {
    let start = stderr.rfind(API_ERROR_HEADER)?;
    let start = stderr[..start].rfind('\n').map_or(0, |i| i + 1);
    let mut lines = stderr[start..].lines();
    let mut block = lines.next()?.to_string();
    let mut in_stack = false;
    for line in lines {
        let closing = line.starts_with('}');
        let indented = line.starts_with([' ', '\t']);
        in_stack |= indented;
        if in_stack && !indented && !closing {
            break;
        }
        block.push('\n');
        block.push_str(line);
        if closing {
            break;
        }
    }
    Some(block.trim_end().to_string())
}

static STATUS_LINE: LazyLock<Regex> = LazyLock::new(|| {
    crate::ascii_regex::compile(r"(?m)^\s*(?:status|code): (\d{3}),?\s*$")
        .expect("status line pattern is valid")
});

static ERROR_CLASS: LazyLock<Regex> = LazyLock::new(|| {
    crate::ascii_regex::compile(r"Error when talking to Gemini API[^\n]*? ([A-Za-z]\w*Error): ")
        .expect("error class pattern is valid")
});

/// `status: 429` on the CLI's last printed error object.
fn last_status(stderr: &str) -> Option<u16> {
    STATUS_LINE
        .captures_iter(stderr)
        .last()?
        .get(1)?
        .as_str()
        .parse()
        .ok()
}

/// `TerminalQuotaError`, `RetryableQuotaError`, `ModelNotFoundError`; the
/// generic `_ApiError` says nothing and is left out.
fn cli_error_class(stderr: &str) -> Option<String> {
    let class = ERROR_CLASS.captures_iter(stderr).last()?.get(1)?.as_str();
    (class != "_ApiError" && class != "Error").then(|| class.to_string())
}

/// The CLI exits with the HTTP status mod 256: 173 is 429, 247 is 503.
fn status_from_exit(code: Option<i32>) -> Option<u16> {
    let status = u16::try_from(code? + 256).ok()?;
    (400..600).contains(&status).then_some(status)
}
