//! Any command: exit status 0 is success; otherwise the stderr tail is the
//! evidence. What the command did is unknown, so the gate fails closed.

use super::{raw, Exit, Finished, StreamAdapter};
use crate::evidence::{Phase, Provider};
use crate::safety::{EffectContext, PromptDelivery};

#[derive(Default)]
pub struct Generic {
    stdout_seen: bool,
}

impl StreamAdapter for Generic {
    fn on_stdout_line(&mut self, line: &str) {
        self.stdout_seen |= !line.trim().is_empty();
    }

    fn on_oversized_line(&mut self, _head: &str) {
        self.stdout_seen = true;
    }

    fn effect_so_far(&self) -> EffectContext {
        unknown_effects(self.stdout_seen)
    }

    fn finish(self: Box<Self>, exit: Exit) -> Finished {
        if exit.code == Some(0) {
            return Finished::Succeeded;
        }
        Finished::Failed {
            raw: raw(Provider::Generic, None, &exit, Phase::Exit),
            effect: unknown_effects(exit.stdout_seen),
        }
    }
}

/// Whatever the command did is unknown: the prompt may have been acted on.
fn unknown_effects(stdout_seen: bool) -> EffectContext {
    EffectContext {
        prompt_delivery: Some(PromptDelivery::Ambiguous),
        assistant_output_seen: Some(stdout_seen),
        tool_activity_seen: None,
        partial_result_seen: None,
        evidence_current: None,
    }
}
