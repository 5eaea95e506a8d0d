//! Values the UI needs from the backend before it calls anything, exported
//! as constants in the bindings so it never retypes a backend limit.

use std::ops::RangeInclusive;

use recourse::policy::{
    CONTINUATIONS_RANGE, INITIAL_INTERVAL_RANGE, REPEAT_THRESHOLD_RANGE, RESET_WAIT_RANGE,
    RETRIES_RANGE,
};
use serde::Serialize;

/// The bounds `validate_policy` enforces on an enabled section, for the
/// editor's field limits and hints.
#[derive(Debug, Clone, Serialize)]
pub struct PolicyLimits {
    pub max_retries: Bounds,
    pub initial_interval_seconds: Bounds,
    pub max_wait_seconds: Bounds,
    /// A transient section's automatic continuations per route cycle.
    pub max_continuations: Bounds,
    /// Identical unclassified failures before moving on, when opted in.
    pub repeat_threshold: Bounds,
}

/// An inclusive range.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Bounds {
    pub min: u32,
    pub max: u32,
}

impl PolicyLimits {
    pub fn current() -> PolicyLimits {
        PolicyLimits {
            max_retries: Bounds::of(RETRIES_RANGE),
            initial_interval_seconds: Bounds::of(INITIAL_INTERVAL_RANGE),
            max_wait_seconds: Bounds::of(RESET_WAIT_RANGE),
            max_continuations: Bounds::of(CONTINUATIONS_RANGE),
            repeat_threshold: Bounds::of(REPEAT_THRESHOLD_RANGE),
        }
    }
}

impl Bounds {
    fn of(range: RangeInclusive<u32>) -> Bounds {
        Bounds {
            min: *range.start(),
            max: *range.end(),
        }
    }
}

/// The bounds of the concurrency settings: a candidate's `max_concurrent`
/// and the global maximum of running agents, and the longest account label.
#[derive(Debug, Clone, Serialize)]
pub struct ConcurrencyLimits {
    pub max_concurrent: Bounds,
    pub max_running: Bounds,
    pub account_label_chars: u32,
}

impl ConcurrencyLimits {
    pub fn current() -> ConcurrencyLimits {
        ConcurrencyLimits {
            max_concurrent: Bounds::of(recourse::agent::AgentSpec::MAX_CONCURRENT),
            max_running: Bounds::of(recourse::engine::MAX_RUNNING),
            account_label_chars: recourse::account::MAX_LABEL_CHARS as u32,
        }
    }
}

/// A semantic code a local rule may assign, with the class the code → class
/// table gives it (a rule never chooses a class), for the rule editor.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct CodeClass {
    pub code: recourse::classification::SemanticCode,
    pub class: recourse::classification::Class,
    /// The code in words, shown before the code itself.
    pub words: &'static str,
}

/// Every code but `unknown` (what "no rule matched" means), in table order.
pub fn rule_codes() -> Vec<CodeClass> {
    recourse::classification::SemanticCode::ALL
        .into_iter()
        .filter(|c| *c != recourse::classification::SemanticCode::Unknown)
        .map(|code| CodeClass {
            code,
            class: code.class(),
            words: code.words(),
        })
        .collect()
}

/// Every code in words (`SemanticCode::words`), `unknown` included, by its
/// name as it crosses IPC: what a route card says before the code itself.
pub fn code_words() -> std::collections::BTreeMap<&'static str, &'static str> {
    recourse::classification::SemanticCode::ALL
        .into_iter()
        .map(|c| (c.as_str(), c.words()))
        .collect()
}

/// Each provider's name in words (`Provider::words`), by its name as it
/// crosses IPC (`claude-code`): what the provider choices show.
pub fn provider_words() -> std::collections::BTreeMap<&'static str, &'static str> {
    recourse::evidence::Provider::ALL
        .into_iter()
        .map(|p| (p.as_str(), p.words()))
        .collect()
}

/// The states each route-list filter keeps (`RouteFilter::states`; empty:
/// every state), by the filter's name as it crosses IPC.
pub fn route_filter_states(
) -> std::collections::BTreeMap<String, &'static [recourse::route::RouteState]> {
    recourse::engine::RouteFilter::ALL
        .into_iter()
        .map(|filter| (ipc_name(filter), filter.states()))
        .collect()
}

/// A unit enum value's name as it crosses IPC (`needs_you`, `retry_now`).
fn ipc_name(value: impl serde::Serialize) -> String {
    serde_json::to_value(value)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

/// What each manual action does (`ManualAction::help`, the words of
/// `recourse action --help`), by the action's name as it crosses IPC.
pub fn action_help() -> std::collections::BTreeMap<String, &'static str> {
    recourse::route::ManualAction::ALL
        .into_iter()
        .map(|action| (ipc_name(action), action.help()))
        .collect()
}

/// Each route state in words (`RouteState::words`, what the CLI prints),
/// by the state's name as it crosses IPC: the badge and announcements.
pub fn state_text() -> std::collections::BTreeMap<String, &'static str> {
    recourse::route::RouteState::ALL
        .into_iter()
        .map(|state| (ipc_name(state), state.words()))
        .collect()
}

/// Each manual action's name in words (`ManualAction::label`, as the
/// engine's refusals name it), by the action's name as it crosses IPC.
pub fn action_label() -> std::collections::BTreeMap<String, &'static str> {
    recourse::route::ManualAction::ALL
        .into_iter()
        .map(|action| (ipc_name(action), action.label()))
        .collect()
}
