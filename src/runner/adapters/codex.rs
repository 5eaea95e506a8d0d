//! Codex `exec --json`: `thread.started`, `turn.started`, `item.*` events
//! (agent_message and reasoning are assistant output; command_execution,
//! file_change, mcp_tool_call and web_search are tool activity),
//! `turn.completed`, and failures as `turn.failed` or `error`.

use super::{json, raw, status_in, str_at, Exit, Finished, Seen, StreamAdapter};
use crate::evidence::{Phase, Provider};

#[derive(Default)]
pub struct Codex {
    seen: Seen,
    completed: bool,
    /// Message of the last `turn.failed` / `error` event.
    error: Option<String>,
}

impl StreamAdapter for Codex {
    fn on_stdout_line(&mut self, line: &str) {
        let Some(v) = json(line) else { return };
        match str_at(&v, &["type"]) {
            Some("thread.started" | "turn.started") => self.seen.stream_started = true,
            Some("item.started" | "item.updated" | "item.completed") => {
                self.seen.stream_started = true;
                let item_type =
                    str_at(&v, &["item", "type"]).or(str_at(&v, &["item", "item_type"]));
                match item_type {
                    Some("agent_message" | "reasoning") => self.seen.assistant = true,
                    Some("command_execution" | "file_change" | "mcp_tool_call" | "web_search") => {
                        self.seen.tool = true
                    }
                    _ => {}
                }
            }
            Some("turn.completed") => self.completed = true,
            Some("turn.failed") => {
                self.error = str_at(&v, &["error", "message"]).map(str::to_string);
            }
            Some("error") => self.error = str_at(&v, &["message"]).map(str::to_string),
            _ => {}
        }
    }

    fn finish(self: Box<Self>, exit: Exit) -> Finished {
        if self.completed && self.error.is_none() && exit.code == Some(0) {
            return Finished::Succeeded;
        }
        let boundary_known = self.error.is_some();
        let phase = if self.seen.stream_started {
            Phase::Stream
        } else {
            Phase::Connect
        };
        let mut raw = raw(Provider::Codex, self.error, &exit, phase);
        raw.http_status = status_in(&String::from_utf8_lossy(&raw.message));
        Finished::Failed {
            raw,
            effect: self.seen.effect(boundary_known),
        }
    }
}
