//! Any command: exit status 0 is success; otherwise the stderr tail is the
//! evidence. What the command did is unknown, so the gate fails closed.

use super::{raw, Exit, Finished, StreamAdapter};
use crate::evidence::{Phase, Provider};
use crate::safety::{EffectContext, PromptDelivery};

#[derive(Default)]
pub struct Generic;

impl StreamAdapter for Generic {
    fn on_stdout_line(&mut self, _line: &str) {}

    fn finish(self: Box<Self>, exit: Exit) -> Finished {
        if exit.code == Some(0) {
            return Finished::Succeeded;
        }
        let effect = EffectContext {
            prompt_delivery: Some(PromptDelivery::Ambiguous),
            assistant_output_seen: Some(exit.stdout_seen),
            tool_activity_seen: None,
            partial_result_seen: None,
            evidence_current: None,
        };
        Finished::Failed {
            raw: raw(Provider::Generic, None, &exit, Phase::Exit),
            effect,
        }
    }
}
