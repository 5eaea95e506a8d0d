//! Reading an agent's output: what every kind's adapter shares.
//!
//! An adapter sees stdout line by line while the agent runs and the exit
//! status plus a stderr tail at the end. It records what the agent is known
//! to have done (assistant output, thinking included; tool activity) and
//! whether the failure came before the prompt could have been delivered.

use chrono::{DateTime, Utc};

use super::line;
use super::transcript::Transcript;
use super::{AccessFlags, AgentSpec};
use crate::evidence::{Phase, Provider, RawEvidence};
use crate::safety::{EffectContext, PromptDelivery};

/// How the process ended.
#[derive(Debug, Clone)]
pub struct Exit {
    pub code: Option<i32>,
    pub stderr_tail: Vec<u8>,
    pub stdout_seen: bool,
    pub occurred_at: DateTime<Utc>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Finished {
    Succeeded,
    Failed {
        raw: RawEvidence,
        effect: EffectContext,
    },
}

pub trait StreamAdapter: Send {
    fn on_stdout_line(&mut self, line: &str);
    /// A line longer than the runner keeps; `head` is its start. What it
    /// held is unknown unless the adapter can tell from the head.
    fn on_oversized_line(&mut self, head: &str) {
        self.seen_mut().oversized(head);
    }
    /// What is known so far, for an attempt the runner ends itself
    /// (a deadline): the failure boundary is not known.
    fn effect_so_far(&self) -> EffectContext {
        self.seen().effect(false)
    }
    fn finish(self: Box<Self>, exit: Exit) -> Finished;
    /// The transcript so far, taken out (before [`StreamAdapter::finish`]).
    fn take_transcript(&mut self, _exit: &Exit) -> Transcript {
        std::mem::take(&mut self.seen_mut().transcript)
    }
    /// What the adapter has seen of the agent's stream so far.
    fn seen(&self) -> &Seen;
    fn seen_mut(&mut self) -> &mut Seen;
}

/// Program, arguments, what goes to stdin, and the variables Recourse adds
/// for the access level (over the candidate's own).
#[derive(Debug, Clone, PartialEq)]
pub struct CommandLine {
    pub program: String,
    pub args: Vec<String>,
    pub stdin: Option<String>,
    pub env: Vec<(String, String)>,
}

impl CommandLine {
    /// `PROGRAM FIXED ACCESS [MODEL_FLAG MODEL] ARGS TAIL`: the layout of
    /// every CLI kind (`docs/agents.md`), the candidate's extra arguments
    /// after Recourse's own flags and before the session flags and message.
    pub(crate) fn cli(
        agent: &AgentSpec,
        default_program: &str,
        fixed: &[&str],
        model_flag: &str,
        tail: &[&str],
    ) -> CommandLine {
        let access = agent
            .access
            .and_then(|level| (agent.kind.descriptor().access?.flags)(level))
            .unwrap_or(AccessFlags::NONE);
        let mut args: Vec<String> = fixed.iter().map(|s| s.to_string()).collect();
        args.extend(access.args.iter().map(|s| s.to_string()));
        if let Some(model) = &agent.model {
            args.extend([model_flag.to_string(), model.clone()]);
        }
        args.extend(agent.args.iter().cloned());
        args.extend(tail.iter().map(|s| s.to_string()));
        let env = access
            .env
            .iter()
            .map(|(name, ours)| {
                let value = merged(agent.env.get(*name).map(String::as_str), ours);
                (name.to_string(), value)
            })
            .collect();
        CommandLine {
            program: agent
                .program
                .clone()
                .unwrap_or_else(|| default_program.to_string()),
            args,
            stdin: None,
            env,
        }
    }
}

/// A variable Recourse sets for the access level, over the candidate's own
/// value of it: two JSON objects are merged, ours winning key by key (a
/// person's `OPENCODE_CONFIG_CONTENT` keeps its other settings); anything
/// else is replaced by ours.
fn merged(theirs: Option<&str>, ours: &str) -> String {
    fn merge(base: &mut serde_json::Value, over: &serde_json::Value) {
        match (base, over) {
            (serde_json::Value::Object(b), serde_json::Value::Object(o)) => {
                for (k, v) in o {
                    merge(b.entry(k.clone()).or_insert(serde_json::Value::Null), v);
                }
            }
            (b, o) => *b = o.clone(),
        }
    }
    let parse = |s: &str| serde_json::from_str::<serde_json::Value>(s).ok();
    match (theirs.and_then(parse), parse(ours)) {
        (Some(mut base @ serde_json::Value::Object(_)), Some(over)) => {
            merge(&mut base, &over);
            base.to_string()
        }
        _ => ours.to_string(),
    }
}

/// What an adapter knows about effects when the process ends.
#[derive(Debug, Clone, Default)]
pub struct Seen {
    /// The agent's event stream started (the prompt reached it).
    pub stream_started: bool,
    pub assistant: bool,
    pub tool: bool,
    /// An event or item type this adapter does not know arrived after the
    /// stream started; what it stood for is unknown, so effects are too.
    pub unknown_event: Option<String>,
    /// What the agent said and did, as far as its stream tells.
    pub transcript: Transcript,
}

impl Seen {
    /// `boundary_known`: the failure was reported as a terminal error event,
    /// not a cut stream.
    pub fn effect(&self, boundary_known: bool) -> EffectContext {
        let delivery = match (self.stream_started, boundary_known) {
            (false, _) => PromptDelivery::NotDelivered,
            (true, true) => PromptDelivery::Confirmed,
            (true, false) => PromptDelivery::Ambiguous,
        };
        let unknown = self.unknown_event.is_some();
        EffectContext {
            prompt_delivery: Some(delivery),
            assistant_output_seen: Some(self.assistant),
            tool_activity_seen: if unknown { None } else { Some(self.tool) },
            partial_result_seen: Some(false),
            evidence_current: None,
        }
    }

    /// Where a failure without a terminal error event happened.
    pub fn phase(&self) -> Phase {
        if self.stream_started {
            Phase::Stream
        } else {
            Phase::Connect
        }
    }

    /// An event whose `type` (`None`: it had none) this adapter does not know.
    pub fn unknown_type(&mut self, event_type: Option<&str>) {
        self.unknown(format!("type {}", event_type.unwrap_or("(none)")));
    }

    /// The event on a stdout line. A line that cannot be read even mended
    /// (see [`line`]) could have been a tool call, so effects become unknown;
    /// only a blank line is known noise.
    pub fn read(&mut self, text: &str) -> Option<serde_json::Value> {
        match line::read(text) {
            line::Line::Event(v) => Some(v),
            line::Line::Blank => None,
            line::Line::Unreadable => {
                self.stream_started = true;
                self.unknown(format!(
                    "unreadable line starting {:?}",
                    text.trim().chars().take(40).collect::<String>()
                ));
                None
            }
        }
    }

    /// A line too long to keep: what it held is unknown.
    pub fn oversized(&mut self, head: &str) {
        self.stream_started = true;
        self.unknown(format!(
            "oversized line starting {:?}",
            head.chars().take(40).collect::<String>()
        ));
    }

    /// Fail closed on a type the adapter was not written for.
    pub fn unknown(&mut self, what: impl Into<String>) {
        if self.unknown_event.is_none() {
            let what = what.into();
            tracing::warn!("unknown agent event {what}: counting it as possible effects");
            self.unknown_event = Some(what);
        }
    }
}

/// Evidence text from an error event, else the stderr tail.
pub(crate) fn raw(
    provider: Provider,
    message: Option<String>,
    exit: &Exit,
    phase: Phase,
) -> RawEvidence {
    let message = match message.filter(|m| !m.trim().is_empty()) {
        Some(m) => m.into_bytes(),
        None => exit.stderr_tail.clone(),
    };
    RawEvidence::new(provider, message, exit.occurred_at)
        .with_phase(phase)
        .with_exit_code(exit.code)
}

static STATUS: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    crate::ascii_regex::compile(
        r"(?i)(?:\b(?:api error|(?:unexpected |last )?status(?: code)?|http)[: ]+|\brequest rejected \()(\d{3})\b",
    )
    .expect("status pattern is valid")
});

/// `API Error: 529 …`, `unexpected status 503 …`, `last status: 429 …` → the status.
pub(crate) fn status_in(text: &str) -> Option<u16> {
    STATUS
        .captures(text)?
        .get(1)?
        .as_str()
        .parse()
        .ok()
        .filter(|s| crate::evidence::HTTP_STATUS_RANGE.contains(s))
}

pub(crate) fn str_at<'a>(v: &'a serde_json::Value, path: &[&str]) -> Option<&'a str> {
    path.iter().try_fold(v, |v, k| v.get(k))?.as_str()
}

/// An HTTP status from a JSON number or numeric string.
pub(crate) fn status_at(v: &serde_json::Value, path: &[&str]) -> Option<u16> {
    let v = path.iter().try_fold(v, |v, k| v.get(k))?;
    let n = v.as_u64().or_else(|| v.as_str()?.parse().ok())?;
    u16::try_from(n)
        .ok()
        .filter(|s| crate::evidence::HTTP_STATUS_RANGE.contains(s))
}

/// A fresh adapter of a process kind, for the tests.
#[cfg(test)]
fn for_kind(kind: crate::agent::AgentKind) -> Box<dyn StreamAdapter> {
    match kind.descriptor().launch {
        crate::agent::Launch::Process { adapter, .. } => adapter(),
        crate::agent::Launch::InProcess => panic!("{kind:?} has no adapter"),
    }
}

#[cfg(test)]
mod evidence_tests;

#[cfg(test)]
mod tests {
    //! Fail closed: after the stream started, an event or item type the
    //! adapter does not know makes effects unknown. Each case is lines from
    //! a recording (fixtures/agents/recorded/) with one unknown line added.
    use super::*;
    use crate::agent::AgentKind;
    use chrono::Utc;

    fn exit(code: i32) -> Exit {
        Exit {
            code: Some(code),
            stderr_tail: Vec::new(),
            stdout_seen: true,
            occurred_at: Utc::now(),
        }
    }

    fn effect_of(kind: AgentKind, lines: &[&str]) -> EffectContext {
        let mut adapter = for_kind(kind);
        for line in lines {
            adapter.on_stdout_line(line);
        }
        match adapter.finish(exit(1)) {
            Finished::Failed { effect, .. } => effect,
            Finished::Succeeded => panic!("{kind:?}: a failure was expected"),
        }
    }

    const CLAUDE_INIT: &str = r#"{"type":"system","subtype":"init","session_id":"s"}"#;
    const CLAUDE_RESULT: &str = r#"{"type":"result","subtype":"success","is_error":true,"result":"API Error: 500 Internal server error.","api_error_status":500}"#;
    const CODEX_START: &str = r#"{"type":"turn.started"}"#;
    const CODEX_FAILED: &str = r#"{"type":"turn.failed","error":{"message":"unexpected status 503 Service Unavailable: The server is overloaded or not ready yet."}}"#;
    const GEMINI_USER: &str =
        r#"{"type":"message","role":"user","content":"Reply with the single word done."}"#;
    const GEMINI_RESULT: &str = r#"{"type":"result","status":"error","error":{"type":"unknown","message":"[API Error: The model is overloaded. Please try again later.]"},"stats":{"tool_calls":0}}"#;
    const OPENCODE_STEP: &str = r#"{"type":"step_start","part":{"type":"step-start"}}"#;
    const OPENCODE_ERROR: &str = r#"{"type":"error","error":{"name":"APIError","data":{"message":"Overloaded","statusCode":529}}}"#;

    #[test]
    fn the_recorded_failures_alone_are_effect_safe() {
        for (kind, lines) in [
            (AgentKind::ClaudeCode, [CLAUDE_INIT, CLAUDE_RESULT]),
            (AgentKind::Codex, [CODEX_START, CODEX_FAILED]),
            (AgentKind::Gemini, [GEMINI_USER, GEMINI_RESULT]),
            (AgentKind::Opencode, [OPENCODE_STEP, OPENCODE_ERROR]),
        ] {
            let effect = effect_of(kind, &lines);
            assert_eq!(effect.tool_activity_seen, Some(false), "{kind:?}");
            assert_eq!(effect.assistant_output_seen, Some(false), "{kind:?}");
        }
    }

    #[test]
    fn an_unknown_event_type_makes_effects_unknown_for_every_adapter() {
        for (kind, lines) in [
            (
                AgentKind::ClaudeCode,
                [
                    CLAUDE_INIT,
                    r#"{"type":"workflow_step","step":1}"#,
                    CLAUDE_RESULT,
                ],
            ),
            (
                AgentKind::Codex,
                [
                    CODEX_START,
                    r#"{"type":"turn.delegated","agent":"x"}"#,
                    CODEX_FAILED,
                ],
            ),
            (
                AgentKind::Gemini,
                [
                    GEMINI_USER,
                    r#"{"type":"file_edit","path":"a.rs"}"#,
                    GEMINI_RESULT,
                ],
            ),
            (
                AgentKind::Opencode,
                [
                    OPENCODE_STEP,
                    r#"{"type":"patch","part":{}}"#,
                    OPENCODE_ERROR,
                ],
            ),
        ] {
            let effect = effect_of(kind, &lines);
            assert_eq!(
                effect.tool_activity_seen, None,
                "{kind:?}: what the unknown event did is unknown, so the gate fails closed"
            );
            assert_eq!(
                crate::safety::gate(&EffectContext {
                    evidence_current: Some(true),
                    ..effect
                }),
                crate::safety::GateVerdict::Manual(
                    crate::safety::UnsafeReason::ToolActivityUnknown
                )
            );
        }
    }

    #[test]
    fn codex_unknown_item_type_and_todo_list_are_not_nothing() {
        let unknown = effect_of(
            AgentKind::Codex,
            &[
                CODEX_START,
                r#"{"type":"item.completed","item":{"id":"item_1","type":"collab_agent_call"}}"#,
                CODEX_FAILED,
            ],
        );
        assert_eq!(unknown.tool_activity_seen, None);
        let plan = effect_of(
            AgentKind::Codex,
            &[
                CODEX_START,
                r#"{"type":"item.completed","item":{"id":"item_1","type":"todo_list","items":[{"text":"fix","completed":false}]}}"#,
                CODEX_FAILED,
            ],
        );
        assert_eq!(
            plan.assistant_output_seen,
            Some(true),
            "the model's plan is model output: a 503 after it is not replayed"
        );
    }

    #[test]
    fn claude_unknown_content_block_makes_effects_unknown() {
        let effect = effect_of(
            AgentKind::ClaudeCode,
            &[
                CLAUDE_INIT,
                r#"{"type":"assistant","message":{"model":"claude-opus-5-5","content":[{"type":"container_upload","file_id":"f"}]}}"#,
                CLAUDE_RESULT,
            ],
        );
        assert_eq!(effect.tool_activity_seen, None);
    }

    #[test]
    fn claude_partial_message_events_are_known_or_fail_closed() {
        let tool_start = effect_of(
            AgentKind::ClaudeCode,
            &[
                CLAUDE_INIT,
                r#"{"type":"stream_event","event":{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":"Bash","input":{}}}}"#,
                CLAUDE_RESULT,
            ],
        );
        assert_eq!(
            tool_start.tool_activity_seen,
            Some(true),
            "a tool_use block that starts streaming is a tool call"
        );
        let unknown = effect_of(
            AgentKind::ClaudeCode,
            &[
                CLAUDE_INIT,
                r#"{"type":"stream_event","event":{"type":"content_block_pause","index":0}}"#,
                CLAUDE_RESULT,
            ],
        );
        assert_eq!(unknown.tool_activity_seen, None, "an unknown stream event");
        let bookkeeping = effect_of(
            AgentKind::ClaudeCode,
            &[
                CLAUDE_INIT,
                r#"{"type":"stream_event","event":{"type":"message_start","message":{}}}"#,
                r#"{"type":"stream_event","event":{"type":"message_stop"}}"#,
                CLAUDE_RESULT,
            ],
        );
        assert_eq!(bookkeeping.tool_activity_seen, Some(false));
        assert_eq!(bookkeeping.assistant_output_seen, Some(false));
    }

    #[test]
    fn a_claude_assistant_message_without_content_blocks_is_not_nothing() {
        let effect = effect_of(
            AgentKind::ClaudeCode,
            &[
                CLAUDE_INIT,
                r#"{"type":"assistant","message":{"model":"claude-opus-5-5","content":"done"}}"#,
                CLAUDE_RESULT,
            ],
        );
        assert_eq!(
            effect.tool_activity_seen, None,
            "a shape the adapter was not written for could have held anything"
        );
    }

    #[test]
    fn an_oversized_claude_result_line_is_read_from_its_head() {
        let mut adapter = for_kind(AgentKind::ClaudeCode);
        adapter.on_stdout_line(CLAUDE_INIT);
        adapter.on_oversized_line(r#"{"type":"result","subtype":"success","is_error":false,"duration_ms":9,"result":"a very long answer"#);
        assert_eq!(
            adapter.finish(Exit {
                code: Some(0),
                ..exit(0)
            }),
            Finished::Succeeded
        );
        // As 2.1.332 prints it: `type` comes after the text, so it is cut off.
        let mut adapter = for_kind(AgentKind::ClaudeCode);
        adapter.on_stdout_line(CLAUDE_INIT);
        adapter.on_oversized_line(r#"{"duration_api_ms":33,"usage":{"input_tokens":12,"iterations":[]},"is_error":false,"num_turns":1,"subtype":"success","result":"a very long answer"#);
        assert_eq!(
            adapter.finish(exit(0)),
            Finished::Succeeded,
            "a result whose type is past the cut is still the result"
        );
        let mut adapter = for_kind(AgentKind::ClaudeCode);
        adapter.on_stdout_line(CLAUDE_INIT);
        adapter.on_oversized_line(
            r#"{"duration_api_ms":33,"is_error":false,"note":"a very long note"#,
        );
        assert!(
            adapter.effect_so_far().tool_activity_seen.is_none(),
            "without the cut in `result` it is not known to be the result"
        );
        let mut adapter = for_kind(AgentKind::ClaudeCode);
        adapter.on_stdout_line(CLAUDE_INIT);
        adapter.on_oversized_line(
            r#"{"type":"assistant","message":{"content":[{"type":"text","text":"huge"#,
        );
        assert!(
            adapter.effect_so_far().tool_activity_seen.is_none(),
            "an oversized line that is not a result could have been anything"
        );
    }

    /// Claude Code's `system`/`api_retry` (as recorded, with a long delay):
    /// the CLI's own backoff before its next try, not the provider's reset.
    #[test]
    fn claude_api_retry_is_progress_not_effects_and_not_a_reset_hint() {
        let retry = r#"{"type":"system","subtype":"api_retry","attempt":1,"max_retries":1,"retry_delay_ms":1800000,"error_status":529,"error":"overloaded","session_id":"s"}"#;
        let mut adapter = for_kind(AgentKind::ClaudeCode);
        adapter.on_stdout_line(CLAUDE_INIT);
        adapter.on_stdout_line(retry);
        let so_far = adapter.effect_so_far();
        assert_eq!(so_far.assistant_output_seen, Some(false), "not output");
        assert_eq!(
            so_far.tool_activity_seen,
            Some(false),
            "a known event, no effects"
        );
        adapter.on_stdout_line(
            r#"{"type":"result","subtype":"success","is_error":true,"result":"API Error: Repeated server errors."}"#,
        );
        let Finished::Failed { raw, effect } = adapter.finish(exit(1)) else {
            panic!("a failure was expected");
        };
        assert_eq!(effect.tool_activity_seen, Some(false));
        assert!(
            raw.headers.is_empty(),
            "no retry-after made up: {:?}",
            raw.headers
        );
        assert_eq!(
            raw.http_status,
            Some(529),
            "the retried status is a fallback status"
        );
        let c =
            crate::catalogue::classify(&crate::evidence::Evidence::from_raw(raw), chrono_tz::UTC);
        assert_eq!(
            (c.retry_after_s, c.reset_at),
            (None, None),
            "retry_delay_ms is the CLI's own backoff, not a trusted reset: {c:?}"
        );
    }

    /// A recorded stream (fixtures/agents/recorded/), one line per entry.
    fn recorded(cli: &str, scenario: &str) -> Vec<String> {
        let dir = format!(
            "{}/fixtures/agents/recorded/{cli}/{scenario}/stdout",
            env!("CARGO_MANIFEST_DIR")
        );
        std::fs::read_to_string(&dir)
            .unwrap_or_else(|e| panic!("{dir}: {e}"))
            .lines()
            .map(str::to_string)
            .collect()
    }

    /// Each pinned CLI: its kind, its recording folder, the recorded line of
    /// the tool call in `tool_then_error`, where in it a nested payload fits
    /// (inside the tool's input), and a piece of its text to cut mid-emoji.
    const TOOL_LINES: [(AgentKind, &str, &str, &str, &str); 4] = [
        (
            AgentKind::ClaudeCode,
            "claude-2.1.332",
            r#""type":"tool_use""#,
            r#""input":{"#,
            "recourse-tool-ran",
        ),
        (
            AgentKind::Codex,
            "codex-0.171.0",
            r#""type":"command_execution""#,
            r#""item":{"#,
            "recourse-tool-ran",
        ),
        (
            AgentKind::Gemini,
            "gemini-0.61.0",
            r#""type":"tool_use""#,
            r#""parameters":{"#,
            r#""dir_path":"."#,
        ),
        (
            AgentKind::Opencode,
            "opencode-1.18.33",
            r#""type":"tool_use""#,
            r#""input":{"#,
            "recourse-tool-ran",
        ),
    ];

    /// The recorded effect-free `overloaded` failure (retried by policy) with
    /// `line` added before its terminal event.
    fn overloaded_with(cli: &str, line: String) -> Vec<String> {
        let mut lines = recorded(cli, "overloaded");
        lines.insert(lines.len() - 1, line);
        lines
    }

    fn gate_of(effect: EffectContext) -> crate::safety::GateVerdict {
        crate::safety::gate(&EffectContext {
            evidence_current: Some(true),
            ..effect
        })
    }

    #[test]
    fn a_tool_call_nested_past_the_parsers_limit_is_still_a_tool_call() {
        for (kind, cli, marker, payload_at, _) in TOOL_LINES {
            let tool = recorded(cli, "tool_then_error")
                .into_iter()
                .find(|l| l.contains(marker))
                .unwrap_or_else(|| panic!("{cli}: no recorded tool line"));
            for depth in [129, 200, 5_000] {
                let payload = format!(r#"{}"x"{}"#, "[".repeat(depth), "]".repeat(depth));
                let line = tool.replacen(
                    payload_at,
                    &format!(r#"{payload_at}"payload":{payload},"#),
                    1,
                );
                assert!(serde_json::from_str::<serde_json::Value>(&line).is_err());
                let refs: Vec<String> = overloaded_with(cli, line);
                let refs: Vec<&str> = refs.iter().map(String::as_str).collect();
                let effect = effect_of(kind, &refs);
                assert_eq!(
                    effect.tool_activity_seen,
                    Some(true),
                    "{kind:?} depth {depth}: the tool call is read, not dropped"
                );
                assert!(
                    matches!(gate_of(effect), crate::safety::GateVerdict::Manual(_)),
                    "{kind:?} depth {depth}: a 529 after a tool ran is never replayed"
                );
            }
        }
    }

    #[test]
    fn a_tool_call_with_a_lone_surrogate_is_still_a_tool_call() {
        for (kind, cli, marker, _, text) in TOOL_LINES {
            for tool in recorded(cli, "tool_then_error")
                .into_iter()
                .filter(|l| l.contains(marker) || l.contains("tool_result"))
                .filter(|l| l.contains(text))
            {
                // A string cut mid-emoji, as Node's JSON.stringify writes it.
                let line = tool.replacen(text, &format!("{text} \\ud83d"), 1);
                assert!(serde_json::from_str::<serde_json::Value>(&line).is_err());
                let lines = overloaded_with(cli, line);
                let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
                let effect = effect_of(kind, &refs);
                assert_eq!(
                    effect.tool_activity_seen,
                    Some(true),
                    "{kind:?}: the tool line with a lone surrogate is read"
                );
            }
        }
    }

    #[test]
    fn a_line_that_cannot_be_read_at_all_makes_effects_unknown() {
        for (kind, cli, marker, _, _) in TOOL_LINES {
            let tool = recorded(cli, "tool_then_error")
                .into_iter()
                .find(|l| l.contains(marker))
                .unwrap();
            // The tool line cut short (the CLI died writing it) and stray text.
            for line in [
                tool[..tool.len() / 2].to_string(),
                "Segmentation fault".into(),
            ] {
                let lines = overloaded_with(cli, line);
                let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
                let effect = effect_of(kind, &refs);
                assert_eq!(
                    effect.tool_activity_seen, None,
                    "{kind:?}: could have been a tool"
                );
                assert_eq!(
                    gate_of(effect),
                    crate::safety::GateVerdict::Manual(
                        crate::safety::UnsafeReason::ToolActivityUnknown
                    )
                );
            }
            let lines = overloaded_with(cli, "   ".into());
            let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
            assert_eq!(
                effect_of(kind, &refs).tool_activity_seen,
                Some(false),
                "{kind:?}: a blank line is noise"
            );
        }
    }

    #[test]
    fn status_is_read_from_each_clis_wording() {
        for (text, status) in [
            ("API Error: 529 Overloaded.", Some(529)),
            ("unexpected status 503 Service Unavailable: …", Some(503)),
            (
                "exceeded retry limit, last status: 429 Too Many Requests",
                Some(429),
            ),
            ("API Error: Request rejected (429) · …", Some(429)),
            ("the build took 500 seconds", None),
        ] {
            assert_eq!(status_in(text), status, "{text}");
        }
    }
}

#[cfg(test)]
mod command_line_tests {
    use super::*;
    use crate::agent::{Access, AgentKind};

    #[test]
    fn a_persons_own_json_config_keeps_its_settings_under_the_access_levels() {
        let mut agent = AgentSpec::default_for(AgentKind::Opencode);
        agent.access = Some(Access::ReadOnly);
        agent.env.insert(
            "OPENCODE_CONFIG_CONTENT".into(),
            r#"{"model":"x/y","permission":{"edit":"allow","webfetch":"deny"}}"#.into(),
        );
        let line = (match agent.kind.descriptor().launch {
            crate::agent::Launch::Process { command, .. } => command,
            crate::agent::Launch::InProcess => unreachable!("OpenCode is a process"),
        })(&agent, "go");
        assert_eq!(
            line.args,
            ["run", "--format", "json", "--agent", "plan", "go"]
        );
        let (name, value) = &line.env[0];
        assert_eq!(name, "OPENCODE_CONFIG_CONTENT");
        let merged: serde_json::Value = serde_json::from_str(value).unwrap();
        assert_eq!(merged["model"], "x/y", "the person's other settings stay");
        assert_eq!(merged["permission"]["edit"], "deny", "the level wins");
        assert_eq!(merged["permission"]["webfetch"], "deny");
        assert_eq!(merged["permission"]["bash"], "deny");
    }
}
