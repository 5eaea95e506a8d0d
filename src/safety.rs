//! The effect-safety gate: may this failure be recovered automatically at all?
//!
//! Runs before policy and cannot be overridden by it. Missing knowledge
//! counts as unsafe.

use serde::{Deserialize, Serialize};

/// Was the prompt known to reach the agent?
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum PromptDelivery {
    /// Failed before the prompt could have been delivered (spawn, connect, HTTP error before streaming).
    NotDelivered,
    /// Delivered and the failure boundary is known.
    Confirmed,
    /// We cannot tell whether the agent received and acted on it.
    Ambiguous,
}

/// What the failed attempt is known to have done before it failed. Each
/// `Option` is `None` when the adapter could not tell; unknown fails closed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct EffectContext {
    pub prompt_delivery: Option<PromptDelivery>,
    /// Any assistant output, thinking included.
    pub assistant_output_seen: Option<bool>,
    pub tool_activity_seen: Option<bool>,
    pub partial_result_seen: Option<bool>,
    /// Evidence generation and invocation match the route's current ones.
    pub evidence_current: Option<bool>,
}
