//! OpenCode `run --format json`, as 1.x really prints it
//! (fixtures/agents/recorded/opencode-*): one JSON event per line —
//! `step_start`, `text`, `reasoning`, `tool_use`, `step_finish` — and `error`
//! with `error.name` and `error.data {message, statusCode, responseHeaders,
//! responseBody}`: the provider's status, headers (retry-after, reset
//! instants) and body (its error type) as the CLI received them.

use std::collections::BTreeMap;

use crate::agent::kinds::HOUR;
use crate::agent::stream::{
    raw, status_at, status_in, str_at, CommandLine, Exit, Finished, Seen, StreamAdapter,
};
use crate::agent::{
    Access, AccessFlags, AccessMap, AccountFacts, AgentKind, AgentSpec, Descriptor, Launch,
    ReadinessFacts, Resume, SessionFile, SessionRoot, Sessions, ToolStatus, Usage,
};
use crate::evidence::{Phase, Provider};
use crate::policy::{CandidatePolicy, ClassPolicy, Exhausted};

/// The CLI's output flags, first on every command line it is run with.
const FIXED: &[&str] = &["run", "--format", "json"];

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
    // No flag below `--auto` (docs/agents.md): its default agent edits the
    // working directory; read-only is the plan agent with edit, bash and
    // task denied, which together withhold every writing tool.
    access: Some(AccessMap {
        flags: |level| {
            Some(match level {
                Access::ReadOnly => AccessFlags {
                    args: &["--agent", "plan"],
                    env: &[(
                        "OPENCODE_CONFIG_CONTENT",
                        r#"{"permission":{"edit":"deny","bash":"deny","task":"deny"}}"#,
                    )],
                },
                Access::Edit => AccessFlags::NONE,
                Access::Full => AccessFlags::args(&["--auto"]),
            })
        },
        own_flags: &["--auto", "--agent"],
    }),
    readiness: Some(ReadinessFacts {
        package: "opencode-ai",
        credential_variables: &[
            "ANTHROPIC_API_KEY",
            "OPENAI_API_KEY",
            "OPENROUTER_API_KEY",
            "GEMINI_API_KEY",
        ],
        credential_files: &["~/.local/share/opencode/auth.json", "opencode.json"],
        config_dir_default: "~/.config/opencode",
        full_as_root_needs: None,
    }),
    starter: || AgentSpec {
        access: Some(Access::Edit),
        ..AgentSpec::default_for(AgentKind::Opencode)
    },
    starter_policy: || {
        CandidatePolicy::new(
            ClassPolicy::new(Some(300), Some((3, 10)), Exhausted::Skip),
            ClassPolicy::new(None, None, Exhausted::Skip),
        )
    },
    starter_why: "OpenCode calls a provider's API with your key: a rate limit that says when to come back is waited for (up to 5 min) and overloads are retried 3 times from 10 s; a hard failure (credits, an invalid key) does not clear by waiting, so it skips to the next candidate.",
    hard_wait_s: HOUR,
    launch: Launch::Process {
        command: |agent, prompt| {
            CommandLine::cli(
                agent,
                "opencode",
                FIXED,
                "--model",
                &[prompt],
            )
        },
        adapter: || Box::<Opencode>::default(),
    },
    resume: Some(Resume {
        command: |agent, session, message| {
            CommandLine::cli(
                agent,
                "opencode",
                FIXED,
                "--model",
                &["--session", session, message],
            )
        },
        // One SQLite file holds every session.
        sessions: Sessions {
            root: SessionRoot::DataHome,
            folder: "opencode",
            file: SessionFile::Database("opencode.db"),
        },
    }),
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
        if let Some(id) = str_at(&v, &["sessionID"]) {
            self.seen.transcript.session(id);
        }
        match str_at(&v, &["type"]) {
            Some("step_start") => self.seen.stream_started = true,
            Some("step_finish") => {
                self.seen.stream_started = true;
                if let Some(part) = v.get("part") {
                    self.seen.transcript.add_usage(step_usage(part));
                }
            }
            Some(kind @ ("text" | "reasoning")) => {
                self.seen.stream_started = true;
                self.seen.assistant = true;
                if kind == "text" {
                    let text = str_at(&v, &["part", "text"]).unwrap_or_default();
                    self.seen.transcript.say(text, false);
                    self.seen.transcript.answer(text);
                }
            }
            Some("tool_use") => {
                self.seen.stream_started = true;
                self.seen.tool = true;
                self.record_tool(&v);
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

impl Opencode {
    /// A `tool_use` event carries the call's state. A tool the access level
    /// withholds comes back as the tool `invalid` ("Model tried to call
    /// unavailable tool 'write'"), `completed` (sic): recorded as the tool
    /// it was meant to be, refused (docs/agents.md).
    fn record_tool(&mut self, v: &serde_json::Value) {
        let Some(part) = v.get("part") else { return };
        let id = str_at(part, &["callID"]).unwrap_or_default();
        let state = &part["state"];
        let input = state.get("input");
        let t = &mut self.seen.transcript;
        if str_at(part, &["tool"]) == Some("invalid") {
            let meant = input
                .and_then(|i| str_at(i, &["tool"]))
                .unwrap_or("invalid");
            let why = input.and_then(|i| str_at(i, &["error"]));
            t.tool_ended(id, meant, ToolStatus::Refused, why);
            return;
        }
        let name = str_at(part, &["tool"]).unwrap_or_default();
        t.tool(id, name, input, ToolStatus::Started);
        match str_at(state, &["status"]) {
            Some("completed") => t.tool_ended(id, name, ToolStatus::Completed, None),
            Some("error") => t.tool_ended(id, name, ToolStatus::Failed, str_at(state, &["error"])),
            _ => {}
        }
    }
}

/// One step's tokens and cost (`step_finish`); the attempt's are their sum.
fn step_usage(part: &serde_json::Value) -> Usage {
    let n = |path: &str| {
        part.pointer(path)
            .and_then(|n| n.as_u64())
            .map_or(0, |n| u32::try_from(n).unwrap_or(u32::MAX))
    };
    Usage {
        input_tokens: n("/tokens/input"),
        output_tokens: n("/tokens/output"),
        cache_read_tokens: n("/tokens/cache/read"),
        cache_write_tokens: n("/tokens/cache/write"),
        cost_usd: part.get("cost").and_then(|c| c.as_f64()),
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
