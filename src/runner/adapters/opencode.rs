//! OpenCode `run --format json`: one JSON event per line — `step_start`,
//! `text`, `tool_use`, `step_finish` — and `error` with `error.name` and
//! `error.data.message`.

use super::{json, raw, status_in, str_at, Exit, Finished, Seen, StreamAdapter};
use crate::evidence::{Phase, Provider};

#[derive(Default)]
pub struct Opencode {
    seen: Seen,
    /// `(name, message)` of the last error event.
    error: Option<(Option<String>, Option<String>)>,
}

impl StreamAdapter for Opencode {
    fn on_stdout_line(&mut self, line: &str) {
        let Some(v) = json(line) else { return };
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
            Some("error") => {
                let name = str_at(&v, &["error", "name"]).map(str::to_string);
                let message = str_at(&v, &["error", "data", "message"])
                    .or(str_at(&v, &["error", "message"]))
                    .map(str::to_string);
                self.error = Some((name, message));
            }
            _ => {}
        }
    }

    fn finish(self: Box<Self>, exit: Exit) -> Finished {
        let Some((name, message)) = self.error else {
            if exit.code == Some(0) {
                return Finished::Succeeded;
            }
            let phase = if self.seen.stream_started {
                Phase::Stream
            } else {
                Phase::Connect
            };
            return Finished::Failed {
                raw: raw(Provider::Opencode, None, &exit, phase),
                effect: self.seen.effect(false),
            };
        };
        let mut raw = raw(Provider::Opencode, message, &exit, Phase::Request);
        raw.error_type = name;
        raw.http_status = status_in(&String::from_utf8_lossy(&raw.message));
        Finished::Failed {
            raw,
            effect: self.seen.effect(true),
        }
    }
}
