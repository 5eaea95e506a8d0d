//! Gemini CLI `--output-format json`: one JSON document on stdout with
//! `response`, `stats` and, on failure, `error {type, message, code}`.
//! Without JSON the stderr text is the evidence and effects are unknown.

use super::{raw, str_at, Exit, Finished, Seen, StreamAdapter};
use crate::evidence::{Phase, Provider};
use crate::safety::{EffectContext, PromptDelivery};

#[derive(Default)]
pub struct Gemini {
    stdout: String,
}

impl StreamAdapter for Gemini {
    fn on_stdout_line(&mut self, line: &str) {
        if self.stdout.len() < 1 << 20 {
            self.stdout.push_str(line);
            self.stdout.push('\n');
        }
    }

    fn finish(self: Box<Self>, exit: Exit) -> Finished {
        let doc: Option<serde_json::Value> = serde_json::from_str(self.stdout.trim()).ok();
        match doc {
            Some(v) => from_json(&v, &exit),
            None if exit.code == Some(0) => Finished::Succeeded,
            None => Finished::Failed {
                raw: raw(Provider::Gemini, None, &exit, Phase::Exit),
                effect: unknown_effects(exit.stdout_seen),
            },
        }
    }
}

fn from_json(v: &serde_json::Value, exit: &Exit) -> Finished {
    let response = str_at(v, &["response"]).unwrap_or_default();
    let tool_calls = v
        .pointer("/stats/tools/totalCalls")
        .and_then(|n| n.as_u64());
    let Some(error) = v.get("error").filter(|e| !e.is_null()) else {
        if exit.code == Some(0) {
            return Finished::Succeeded;
        }
        return Finished::Failed {
            raw: raw(Provider::Gemini, None, exit, Phase::Exit),
            effect: unknown_effects(!response.is_empty()),
        };
    };
    let seen = Seen {
        stream_started: true,
        assistant: !response.is_empty(),
        tool: tool_calls.unwrap_or(0) > 0,
    };
    let message = str_at(error, &["message"]).map(str::to_string);
    let mut raw = raw(Provider::Gemini, message, exit, Phase::Request);
    raw.error_type = str_at(error, &["type"]).map(str::to_string);
    raw.http_status = error
        .get("code")
        .and_then(|c| c.as_u64())
        .and_then(|c| u16::try_from(c).ok())
        .filter(|c| (100..600).contains(c));
    let mut effect = seen.effect(true);
    if tool_calls.is_none() {
        effect.tool_activity_seen = None;
    }
    Finished::Failed { raw, effect }
}

/// Plain text output: the prompt may have been acted on; tools unknown.
fn unknown_effects(stdout_seen: bool) -> EffectContext {
    EffectContext {
        prompt_delivery: Some(PromptDelivery::Ambiguous),
        assistant_output_seen: Some(stdout_seen),
        tool_activity_seen: None,
        partial_result_seen: Some(false),
        evidence_current: None,
    }
}
