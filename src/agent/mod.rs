//! What a candidate runs. Every fact about an agent kind — its names, the
//! program it runs, its config dir variable, its provider, how it is
//! launched and how its output is read — lives in that kind's own file under
//! [`kinds`], behind one [`Descriptor`]. Pure: the runner turns a descriptor
//! into a process, the engine and the UI read its facts.

mod access;
pub mod handover;
mod json_head;
pub mod kinds;
mod line;
mod spec;
pub mod stream;
pub mod transcript;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::safety::EffectContext;

pub use access::{Access, AccessFlags, AccessMap};
pub use kinds::{
    AccountFacts, Descriptor, Launch, ReadinessFacts, Resume, SessionFile, SessionRoot, Sessions,
};
pub use spec::{
    is_secret_value, keyring_reference, keyring_value, looks_secret, masked_args, AgentSpec,
    AttemptTimeouts, SimStep, MASKED,
};
pub use stream::{CommandLine, Exit, Finished, StreamAdapter};
pub use transcript::{
    Entry, FileChange, FilesChanged, ToolStatus, Transcript, TranscriptSummary, Usage,
};

/// Which agent CLI a candidate runs.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    specta::Type,
    JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum AgentKind {
    Simulated,
    ClaudeCode,
    Codex,
    Gemini,
    Opencode,
    Generic,
}

impl AgentKind {
    pub const ALL: [AgentKind; 6] = [
        AgentKind::Simulated,
        AgentKind::ClaudeCode,
        AgentKind::Codex,
        AgentKind::Gemini,
        AgentKind::Opencode,
        AgentKind::Generic,
    ];

    /// The kind an empty profile's document starts with when a person
    /// edits it: the first agent CLI most people run.
    pub const FIRST_CHOICE: AgentKind = AgentKind::ClaudeCode;

    /// Everything Recourse knows about this kind.
    pub fn descriptor(self) -> &'static Descriptor {
        kinds::descriptor(self)
    }

    /// The agent name used in policy and profile documents (`claude-code`).
    pub fn slug(self) -> &'static str {
        self.descriptor().slug
    }

    /// What a failed attempt of this kind that had started is known to
    /// have done, given what its failure reported: a kind whose policy does
    /// not apply (any command) reads no effects from its stream, so its
    /// effects are unknown and the gate sends it to a person. The policy
    /// preview asks here; the kind's adapter reports the same for real runs.
    pub fn started_failure_effect(self, reported: EffectContext) -> EffectContext {
        if self.descriptor().policy_applies {
            reported
        } else {
            EffectContext {
                evidence_current: reported.evidence_current,
                ..EffectContext::unknown(reported.assistant_output_seen.unwrap_or(true))
            }
        }
    }

    /// The kind a document's agent name stands for.
    pub fn from_slug(slug: &str) -> Option<AgentKind> {
        AgentKind::ALL.into_iter().find(|k| k.slug() == slug)
    }
}
