//! Claude Code `--output-format stream-json`: `system` (init), `assistant`
//! (text, thinking, tool_use blocks), `user` (tool_result blocks) and a final
//! `result` with `is_error`.

use super::{json, raw, status_in, str_at, Exit, Finished, Seen, StreamAdapter};
use crate::evidence::{Phase, Provider};

#[derive(Default)]
pub struct Claude {
    seen: Seen,
    /// `(is_error, result text, subtype)` of the `result` event.
    result: Option<(bool, String, String)>,
}

impl StreamAdapter for Claude {
    fn on_stdout_line(&mut self, line: &str) {
        let Some(v) = json(line) else { return };
        match str_at(&v, &["type"]) {
            Some("system") => self.seen.stream_started = true,
            Some("assistant") => {
                self.seen.stream_started = true;
                self.blocks(&v);
            }
            Some("user") => {
                self.seen.stream_started = true;
                self.blocks(&v);
            }
            Some("result") => {
                let is_error = v.get("is_error").and_then(|b| b.as_bool()).unwrap_or(true);
                let text = str_at(&v, &["result"]).unwrap_or_default().to_string();
                let subtype = str_at(&v, &["subtype"]).unwrap_or_default().to_string();
                self.result = Some((is_error, text, subtype));
            }
            _ => {}
        }
    }

    fn finish(self: Box<Self>, exit: Exit) -> Finished {
        match self.result {
            Some((false, _, _)) if exit.code == Some(0) => Finished::Succeeded,
            Some((_, text, subtype)) => {
                let message = if text.is_empty() { subtype } else { text };
                let mut raw = raw(Provider::ClaudeCode, Some(message), &exit, Phase::Stream);
                raw.http_status = status_in(&String::from_utf8_lossy(&raw.message));
                Finished::Failed {
                    raw,
                    effect: self.seen.effect(true),
                }
            }
            None => {
                let phase = if self.seen.stream_started {
                    Phase::Stream
                } else {
                    Phase::Connect
                };
                Finished::Failed {
                    raw: raw(Provider::ClaudeCode, None, &exit, phase),
                    effect: self.seen.effect(false),
                }
            }
        }
    }
}

impl Claude {
    fn blocks(&mut self, v: &serde_json::Value) {
        let blocks = v
            .pointer("/message/content")
            .and_then(|c| c.as_array())
            .cloned()
            .unwrap_or_default();
        for b in &blocks {
            match str_at(b, &["type"]) {
                Some("text" | "thinking" | "redacted_thinking") => self.seen.assistant = true,
                Some("tool_use" | "tool_result" | "server_tool_use") => self.seen.tool = true,
                _ => {}
            }
        }
    }
}
