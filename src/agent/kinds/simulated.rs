//! The built-in simulated provider: a script of real provider failures and
//! successes, played inside Recourse by the runner (`runner::simulated`);
//! no process, no network, no keys.

use crate::agent::{AccountFacts, AgentKind, AgentSpec, Descriptor, Launch, SimStep};
use crate::evidence::Provider;
use crate::policy::{CandidatePolicy, ClassPolicy, Exhausted};

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
    starter_policy: || CandidatePolicy {
        transient: ClassPolicy::new(None, Some((3, 2)), Exhausted::Skip),
        hard: ClassPolicy::new(Some(120), None, Exhausted::Skip),
    },
    starter_why: "The built-in simulated provider plays short failures so you can watch the policy work: retries from 2 s and a reset wait of up to 2 min.",
    hard_wait_s: 120,
    launch: Launch::InProcess,
    resume: None,
};
