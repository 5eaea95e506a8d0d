//! The built-in simulated provider: a script of real provider failures and
//! successes, played inside Recourse by the runner (`runner::simulated`);
//! no process, no network, no keys.

use crate::agent::{AccountFacts, AgentKind, AgentSpec, Descriptor, Launch, SimStep};
use crate::evidence::Provider;

pub(super) const DESCRIPTOR: Descriptor = Descriptor {
    kind: AgentKind::Simulated,
    slug: "simulated",
    label: "Simulated provider",
    description: "Built in. Plays a script of failures and successes; no network, no keys.",
    default_program: None,
    config_dir_variable: None,
    provider: Provider::Simulated,
    account: AccountFacts::NONE,
    policy_applies: true,
    access: None,
    readiness: None,
    starter: || AgentSpec::simulated(vec![SimStep::Succeed { after_ms: 1500 }]),
    launch: Launch::InProcess,
};
