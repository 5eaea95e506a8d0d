//! TEMPORARY stand-ins for the evidence, catalogue, policy and evaluator
//! branches, shaped after their announced names. Deleted when they merge.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};

use crate::classification::{Class, Classification, Confidence, PolicyClass, Scope, SemanticCode};
use crate::evidence::{Evidence, RawEvidence};
use crate::safety::{EffectContext, PromptDelivery};

pub fn from_raw(raw: RawEvidence) -> Evidence {
    let text = String::from_utf8_lossy(&raw.message).to_string();
    let re = regex::Regex::new(r"(sk-[A-Za-z0-9_\-]{8,}|Bearer [A-Za-z0-9._\-]+)").unwrap();
    let message = re.replace_all(&text, "[redacted]").to_string();
    Evidence {
        provider: raw.provider,
        message,
        truncated: false,
        phase: raw.phase,
        http_status: raw.http_status,
        headers: raw.headers,
        error_type: raw.error_type,
        exit_code: raw.exit_code,
        occurred_at: raw.occurred_at,
        correlation: raw.correlation,
    }
}

pub fn classify(e: &Evidence, _tz: chrono_tz::Tz) -> Classification {
    let (code, rule) = if e.http_status == Some(529) || e.message.contains("overloaded") {
        (SemanticCode::ProviderOverloaded, Some("shim.overloaded.v1"))
    } else if e.message.contains("usage limit reached") {
        (SemanticCode::UsageLimitReached, Some("shim.usage.v1"))
    } else if e.message.to_lowercase().contains("connection reset") {
        (SemanticCode::NetworkReset, Some("shim.reset.v1"))
    } else {
        (SemanticCode::Unknown, None)
    };
    let reset_at = e
        .message
        .split('|')
        .nth(1)
        .and_then(|s| s.trim().parse::<i64>().ok())
        .and_then(|s| DateTime::from_timestamp(s, 0));
    Classification {
        code,
        class: code.class(),
        confidence: Confidence::High,
        scope: Scope::Provider,
        rule_id: rule.map(str::to_string),
        catalogue_version: "shim-0".into(),
        retry_after_s: None,
        reset_at,
        matched: None,
        explanation: "shim".into(),
    }
}

pub fn machine_local_tz() -> chrono_tz::Tz {
    chrono_tz::UTC
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum ExhaustedOutcome {
    Skip,
    Stop,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct ResetWait {
    pub enabled: bool,
    pub max_wait_s: u32,
}
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct RetryPolicy {
    pub enabled: bool,
    pub max_retries: u32,
    pub initial_interval_s: u32,
}
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct ClassPolicy {
    pub reset_wait: ResetWait,
    pub retry: RetryPolicy,
    pub exhausted: ExhaustedOutcome,
}
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct CandidatePolicy {
    pub transient: ClassPolicy,
    pub hard: ClassPolicy,
}

impl CandidatePolicy {
    pub fn default_for_new_candidate() -> CandidatePolicy {
        let skip = ClassPolicy {
            reset_wait: ResetWait {
                enabled: false,
                max_wait_s: 0,
            },
            retry: RetryPolicy {
                enabled: false,
                max_retries: 0,
                initial_interval_s: 0,
            },
            exhausted: ExhaustedOutcome::Skip,
        };
        CandidatePolicy {
            transient: skip.clone(),
            hard: skip,
        }
    }
    pub fn class(&self, c: PolicyClass) -> &ClassPolicy {
        match c {
            PolicyClass::Transient => &self.transient,
            PolicyClass::Hard => &self.hard,
        }
    }
    /// (field path relative to the candidate, message)
    pub fn validate(&self) -> Result<(), (String, String)> {
        for c in PolicyClass::ALL {
            let p = self.class(c);
            if p.retry.enabled && !(1..=10).contains(&p.retry.max_retries) {
                return Err((
                    format!("{}.retry.max_retries", c.as_str()),
                    "must be between 1 and 10".into(),
                ));
            }
        }
        Ok(())
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum GateVerdict {
    Allowed,
    Blocked { reason: String },
}

pub fn gate(c: &EffectContext) -> GateVerdict {
    let ok = c.prompt_delivery == Some(PromptDelivery::NotDelivered)
        || (c.prompt_delivery == Some(PromptDelivery::Confirmed)
            && c.assistant_output_seen == Some(false)
            && c.tool_activity_seen == Some(false));
    if ok && c.evidence_current == Some(true) {
        GateVerdict::Allowed
    } else {
        GateVerdict::Blocked {
            reason: "the failed attempt may have had effects".into(),
        }
    }
}

#[derive(Debug, Clone)]
pub struct CandidateSlot {
    pub enabled: bool,
    pub name: String,
    pub policy: CandidatePolicy,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct RouteCycle {
    pub candidate: usize,
    pub excluded: BTreeSet<usize>,
    pub retry_ordinals: BTreeMap<PolicyClass, u32>,
    pub reset_waits_used: BTreeSet<(usize, PolicyClass)>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Decision {
    WaitForReset {
        class: PolicyClass,
        until: DateTime<Utc>,
    },
    Retry {
        class: PolicyClass,
        at: DateTime<Utc>,
        ordinal: u32,
    },
    Skip {
        excluded: usize,
        next: Option<usize>,
    },
    Stop {
        reason: String,
    },
    Manual {
        reason: String,
    },
}

impl RouteCycle {
    pub fn new(candidate: usize) -> RouteCycle {
        RouteCycle {
            candidate,
            ..RouteCycle::default()
        }
    }
    pub fn apply(&self, d: &Decision) -> RouteCycle {
        let mut c = self.clone();
        match d {
            Decision::WaitForReset { class, .. } => {
                c.reset_waits_used.insert((c.candidate, *class));
            }
            Decision::Retry { class, ordinal, .. } => {
                c.retry_ordinals.insert(*class, *ordinal);
            }
            Decision::Skip { excluded, next } => {
                c.excluded.insert(*excluded);
                c.retry_ordinals.clear();
                if let Some(n) = next {
                    c.candidate = *n;
                }
            }
            Decision::Stop { .. } | Decision::Manual { .. } => {}
        }
        c
    }
}

pub fn evaluate(
    cycle: &RouteCycle,
    cl: &Classification,
    verdict: &GateVerdict,
    slots: &[CandidateSlot],
    now: DateTime<Utc>,
) -> Decision {
    if let GateVerdict::Blocked { reason } = verdict {
        return Decision::Manual {
            reason: reason.clone(),
        };
    }
    let Some(class) = cl.class.policy_class() else {
        return Decision::Manual {
            reason: "unclassified failure".into(),
        };
    };
    if cl.class == Class::Unclassified {
        unreachable!()
    }
    let p = slots[cycle.candidate].policy.class(class);
    if let Some(reset) = cl.reset_at {
        if p.reset_wait.enabled
            && !cycle.reset_waits_used.contains(&(cycle.candidate, class))
            && reset > now
            && reset <= now + Duration::seconds(p.reset_wait.max_wait_s as i64)
        {
            return Decision::WaitForReset {
                class,
                until: reset,
            };
        }
    }
    let ord = cycle.retry_ordinals.get(&class).copied().unwrap_or(0);
    if p.retry.enabled && ord < p.retry.max_retries {
        let delay = p.retry.initial_interval_s as i64 * (1i64 << ord);
        return Decision::Retry {
            class,
            at: now + Duration::seconds(delay),
            ordinal: ord + 1,
        };
    }
    match p.exhausted {
        ExhaustedOutcome::Stop => Decision::Stop {
            reason: "retries exhausted".into(),
        },
        ExhaustedOutcome::Skip => {
            let next = (cycle.candidate + 1..slots.len())
                .find(|i| slots[*i].enabled && !cycle.excluded.contains(i));
            match next {
                Some(_) => Decision::Skip {
                    excluded: cycle.candidate,
                    next,
                },
                None => Decision::Manual {
                    reason: "no candidate left".into(),
                },
            }
        }
    }
}
