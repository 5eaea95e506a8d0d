//! The output contract of the catalogue: semantic codes, the one exhaustive
//! code → class table, and [`Classification`].
//!
//! Codes are stable diagnostic detail; classes are what users configure.
//! Anything without an explicit class assignment is [`Class::Unclassified`],
//! which fails closed to manual recovery (a candidate may opt in to moving
//! on after identical quiet repeats: `policy::unclassified`).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// Classification result class. `Unclassified` is internal, not configurable.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, specta::Type,
)]
#[serde(rename_all = "snake_case")]
pub enum Class {
    Transient,
    Hard,
    Unclassified,
}

/// The two user-configurable classes a candidate policy has a section for.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, specta::Type,
)]
#[serde(rename_all = "snake_case")]
pub enum PolicyClass {
    Transient,
    Hard,
}

impl PolicyClass {
    pub const ALL: [PolicyClass; 2] = [PolicyClass::Transient, PolicyClass::Hard];

    pub fn as_str(self) -> &'static str {
        match self {
            PolicyClass::Transient => "transient",
            PolicyClass::Hard => "hard",
        }
    }
}

impl Class {
    /// The policy section that governs this class, if any.
    pub fn policy_class(self) -> Option<PolicyClass> {
        match self {
            Class::Transient => Some(PolicyClass::Transient),
            Class::Hard => Some(PolicyClass::Hard),
            Class::Unclassified => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Class::Transient => "transient",
            Class::Hard => "hard",
            Class::Unclassified => "unclassified",
        }
    }
}

/// How sure the matching rule is. `Low` never drives automatic recovery.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, specta::Type,
)]
#[serde(rename_all = "snake_case")]
pub enum Confidence {
    Low,
    Medium,
    High,
}

/// What the failure is about: who has to change for it to go away.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// Connectivity between us and the provider.
    Network,
    /// The provider service as a whole.
    Provider,
    /// The selected model only.
    Model,
    /// The account, subscription, quota or credentials.
    Account,
    /// Not a provider failure: task, repository, permission, local runtime,
    /// cancellation, resume state.
    OutOfScope,
    /// Nothing recognised.
    Unknown,
}

/// Stable semantic codes. Adding a variant is a compile error in
/// [`SemanticCode::class`] until someone assigns it a class on purpose.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, specta::Type,
)]
#[serde(rename_all = "snake_case")]
pub enum SemanticCode {
    // transient
    ProviderOverloaded,
    ProviderUnavailable,
    ProviderInternalError,
    GatewayError,
    RateLimited,
    ModelCapacity,
    StreamDisconnected,
    NetworkReset,
    NetworkTimeout,
    NetworkDns,
    NetworkTls,
    /// Recourse ended an attempt that went quiet or ran too long.
    AttemptTimedOut,
    // hard
    UsageLimitReached,
    QuotaExhausted,
    CreditBalanceLow,
    AuthInvalid,
    AuthRequired,
    AccountForbidden,
    ModelNotFound,
    ProviderConfigInvalid,
    /// The request is larger than the selected model's window: hard, since
    /// another model may take it and the same one never will. Declared here,
    /// before the out-of-scope codes, to keep the order of stored codes.
    ContextLengthExceeded,
    // out of provider scope
    InvalidRequest,
    Cancelled,
    TaskFailed,
    RepositoryError,
    PermissionDenied,
    LocalRuntime,
    /// The agent program could not be started at all.
    SpawnFailed,
    ResumeState,
    // nothing recognised
    Unknown,
}

impl SemanticCode {
    pub const ALL: [SemanticCode; 30] = [
        SemanticCode::ProviderOverloaded,
        SemanticCode::ProviderUnavailable,
        SemanticCode::ProviderInternalError,
        SemanticCode::GatewayError,
        SemanticCode::RateLimited,
        SemanticCode::ModelCapacity,
        SemanticCode::StreamDisconnected,
        SemanticCode::NetworkReset,
        SemanticCode::NetworkTimeout,
        SemanticCode::NetworkDns,
        SemanticCode::NetworkTls,
        SemanticCode::AttemptTimedOut,
        SemanticCode::UsageLimitReached,
        SemanticCode::QuotaExhausted,
        SemanticCode::CreditBalanceLow,
        SemanticCode::AuthInvalid,
        SemanticCode::AuthRequired,
        SemanticCode::AccountForbidden,
        SemanticCode::ModelNotFound,
        SemanticCode::ProviderConfigInvalid,
        SemanticCode::ContextLengthExceeded,
        SemanticCode::InvalidRequest,
        SemanticCode::Cancelled,
        SemanticCode::TaskFailed,
        SemanticCode::RepositoryError,
        SemanticCode::PermissionDenied,
        SemanticCode::LocalRuntime,
        SemanticCode::SpawnFailed,
        SemanticCode::ResumeState,
        SemanticCode::Unknown,
    ];

    /// The one code → class table.
    pub fn class(self) -> Class {
        use SemanticCode::*;
        match self {
            ProviderOverloaded
            | ProviderUnavailable
            | ProviderInternalError
            | GatewayError
            | RateLimited
            | ModelCapacity
            | StreamDisconnected
            | NetworkReset
            | NetworkTimeout
            | NetworkDns
            | NetworkTls
            | AttemptTimedOut => Class::Transient,
            UsageLimitReached
            | QuotaExhausted
            | CreditBalanceLow
            | AuthInvalid
            | AuthRequired
            | AccountForbidden
            | ModelNotFound
            | ProviderConfigInvalid
            | ContextLengthExceeded => Class::Hard,
            InvalidRequest | Cancelled | TaskFailed | RepositoryError | PermissionDenied
            | LocalRuntime | SpawnFailed | ResumeState | Unknown => Class::Unclassified,
        }
    }

    /// The one code → scope table, beside the class table: what a failure
    /// of this code is about (the network, the provider, one model, the
    /// account), the most specific scope a catalogue rule proposes for it.
    /// The schema's check only asks a rule for a provider-side scope for a
    /// transient or hard code, and `out_of_scope` for the rest.
    pub fn scope(self) -> Scope {
        use SemanticCode::*;
        match self {
            NetworkReset | NetworkTimeout | NetworkDns | NetworkTls | StreamDisconnected => {
                Scope::Network
            }
            ProviderOverloaded
            | ProviderUnavailable
            | ProviderInternalError
            | GatewayError
            | AttemptTimedOut
            | ProviderConfigInvalid => Scope::Provider,
            ModelCapacity | ModelNotFound | ContextLengthExceeded => Scope::Model,
            RateLimited | UsageLimitReached | QuotaExhausted | CreditBalanceLow | AuthInvalid
            | AuthRequired | AccountForbidden => Scope::Account,
            InvalidRequest | Cancelled | TaskFailed | RepositoryError | PermissionDenied
            | LocalRuntime | SpawnFailed | ResumeState | Unknown => Scope::OutOfScope,
        }
    }

    /// The code in words a new user reads, where a person chooses one (the
    /// rule editor's code picker): short, as a drop-down cannot wrap; the
    /// snake_case name stays the stored value.
    pub fn words(self) -> &'static str {
        use SemanticCode::*;
        match self {
            ProviderOverloaded => "Provider overloaded",
            ProviderUnavailable => "Provider unavailable",
            ProviderInternalError => "Provider internal error",
            GatewayError => "Gateway or proxy error",
            RateLimited => "Rate limited (too many requests)",
            ModelCapacity => "Model out of capacity",
            StreamDisconnected => "Response stream disconnected",
            NetworkReset => "Connection reset",
            NetworkTimeout => "Network timeout",
            NetworkDns => "Host name not found (DNS)",
            NetworkTls => "Secure connection (TLS) failed",
            AttemptTimedOut => "Attempt went quiet or ran too long",
            UsageLimitReached => "Usage limit reached",
            QuotaExhausted => "Quota used up",
            CreditBalanceLow => "Credit balance too low",
            AuthInvalid => "API key or login invalid",
            AuthRequired => "Login or API key needed",
            AccountForbidden => "Account not allowed to do this",
            ModelNotFound => "Model not found or not offered",
            ProviderConfigInvalid => "Provider settings invalid",
            ContextLengthExceeded => "Request too long for the model",
            InvalidRequest => "Invalid request",
            Cancelled => "Cancelled",
            TaskFailed => "The task itself failed",
            RepositoryError => "Repository (git) error",
            PermissionDenied => "Local permission denied",
            LocalRuntime => "Could not run on this machine",
            SpawnFailed => "Agent program could not start",
            ResumeState => "Saved session could not resume",
            Unknown => "Not recognised",
        }
    }

    pub fn as_str(self) -> &'static str {
        use SemanticCode::*;
        match self {
            ProviderOverloaded => "provider_overloaded",
            ProviderUnavailable => "provider_unavailable",
            ProviderInternalError => "provider_internal_error",
            GatewayError => "gateway_error",
            RateLimited => "rate_limited",
            ModelCapacity => "model_capacity",
            StreamDisconnected => "stream_disconnected",
            NetworkReset => "network_reset",
            NetworkTimeout => "network_timeout",
            NetworkDns => "network_dns",
            NetworkTls => "network_tls",
            AttemptTimedOut => "attempt_timed_out",
            UsageLimitReached => "usage_limit_reached",
            QuotaExhausted => "quota_exhausted",
            CreditBalanceLow => "credit_balance_low",
            AuthInvalid => "auth_invalid",
            AuthRequired => "auth_required",
            AccountForbidden => "account_forbidden",
            ModelNotFound => "model_not_found",
            ProviderConfigInvalid => "provider_config_invalid",
            ContextLengthExceeded => "context_length_exceeded",
            InvalidRequest => "invalid_request",
            Cancelled => "cancelled",
            TaskFailed => "task_failed",
            RepositoryError => "repository_error",
            PermissionDenied => "permission_denied",
            LocalRuntime => "local_runtime",
            SpawnFailed => "spawn_failed",
            ResumeState => "resume_state",
            Unknown => "unknown",
        }
    }

    /// Parses the snake_case name; `None` for a code this build does not know.
    pub fn parse(name: &str) -> Option<SemanticCode> {
        SemanticCode::ALL.into_iter().find(|c| c.as_str() == name)
    }
}

/// Byte span of the sanitized evidence text that a rule matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct Span {
    pub start: u32,
    pub end: u32,
}

/// What the catalogue decided about one piece of evidence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct Classification {
    pub code: SemanticCode,
    pub class: Class,
    pub confidence: Confidence,
    pub scope: Scope,
    /// Stable id of the matching rule (`anthropic.overloaded.v1`); `None` when nothing matched.
    pub rule_id: Option<String>,
    pub catalogue_version: String,
    /// Validated relative hint, in seconds, when the provider gave one.
    pub retry_after_s: Option<f64>,
    /// Validated absolute reset instant (relative hints resolved against `occurred_at`).
    pub reset_at: Option<DateTime<Utc>>,
    pub matched: Option<Span>,
    /// Why this result, in one sentence a person can read.
    pub explanation: String,
}

/// A failure Recourse's own runner establishes: the agent never started, or
/// the runner ended it at a deadline. Known for certain, so classified here
/// and not by the catalogue (and never left in the unclassified inbox).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuntimeFailure {
    SpawnFailed,
    /// No output for the candidate's idle timeout.
    IdleTimeout {
        idle_s: u32,
        output_seen: bool,
    },
    /// The attempt outlived the candidate's total timeout.
    TotalTimeout {
        total_s: u32,
        output_seen: bool,
    },
}

impl RuntimeFailure {
    /// Stable id standing where a catalogue rule id would.
    pub const SPAWN_RULE: &'static str = "runtime.spawn_failed.v1";
    pub const TIMEOUT_RULE: &'static str = "runtime.attempt_timed_out.v1";

    /// The agent had printed something (stdout or stderr) before a
    /// deadline ended it: then it had the prompt and may have acted on it.
    pub fn output_seen(self) -> bool {
        match self {
            RuntimeFailure::SpawnFailed => false,
            RuntimeFailure::IdleTimeout { output_seen, .. }
            | RuntimeFailure::TotalTimeout { output_seen, .. } => output_seen,
        }
    }

    pub fn classify(self, catalogue_version: &str) -> Classification {
        let (code, scope, rule, explanation) = match self {
            RuntimeFailure::SpawnFailed => (
                SemanticCode::SpawnFailed,
                Scope::OutOfScope,
                Self::SPAWN_RULE,
                "the agent program could not be started; this is a local problem, not the provider's".to_string(),
            ),
            RuntimeFailure::IdleTimeout { idle_s, output_seen } => (
                SemanticCode::AttemptTimedOut,
                Scope::Network,
                Self::TIMEOUT_RULE,
                format!(
                    "the agent printed nothing for {idle_s} s (the idle timeout) and was stopped{}",
                    after_output(output_seen)
                ),
            ),
            RuntimeFailure::TotalTimeout { total_s, output_seen } => (
                SemanticCode::AttemptTimedOut,
                Scope::Network,
                Self::TIMEOUT_RULE,
                format!(
                    "the attempt ran longer than {total_s} s (the total timeout) and was stopped{}",
                    after_output(output_seen)
                ),
            ),
        };
        Classification {
            code,
            class: code.class(),
            confidence: Confidence::High,
            scope,
            rule_id: Some(rule.to_string()),
            catalogue_version: catalogue_version.to_string(),
            retry_after_s: None,
            reset_at: None,
            matched: None,
            explanation,
        }
    }
}

fn after_output(output_seen: bool) -> &'static str {
    if output_seen {
        " after it had produced output"
    } else {
        " before it produced any output"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_round_trips_through_its_name() {
        for code in SemanticCode::ALL {
            assert_eq!(SemanticCode::parse(code.as_str()), Some(code));
            let json = serde_json::to_string(&code).unwrap();
            assert_eq!(
                json,
                format!("\"{}\"", code.as_str()),
                "serde name and as_str agree"
            );
        }
    }

    #[test]
    fn every_code_has_words_of_its_own_not_its_name() {
        let mut seen = std::collections::BTreeSet::new();
        for code in SemanticCode::ALL {
            let words = code.words();
            assert!(
                !words.contains('_'),
                "{} is said in words, not as its snake_case name",
                code.as_str()
            );
            assert!(
                seen.insert(words),
                "two codes share the words {words:?}: a picker could not tell them apart"
            );
        }
    }

    #[test]
    fn unknown_code_name_is_not_parsed() {
        assert_eq!(SemanticCode::parse("provider_exploded"), None);
    }

    #[test]
    fn unclassified_has_no_policy_section() {
        assert_eq!(Class::Unclassified.policy_class(), None);
        assert_eq!(SemanticCode::Unknown.class(), Class::Unclassified);
    }
}
