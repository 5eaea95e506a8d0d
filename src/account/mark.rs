//! Limit marks: what a failed attempt said about its account, shared by
//! every route (and every process) that dispatches to that account.
//!
//! A failure classified as account- or model-scoped (usage and quota
//! windows, credit balance, credentials, throttles) with a class and at
//! least medium confidence makes a [`Mark`]: until the provider's trusted
//! reset, or for a default hold when it gave none (short and doubling for
//! throttles and windows, until cleared for credentials and billing).
//! Unknown, unclassified or low-confidence evidence never makes one.
//!
//! Before any dispatch, [`standing`] says what the candidate's account
//! marks mean for it: clear; limited (the candidate's policy decides as if
//! the failure had just happened); past its reset with another route
//! probing it (wait for that probe); or past its reset with nobody probing
//! (this dispatch is the probe).

use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};

use super::{AccountId, AccountNames};
use crate::classification::{Class, Classification, Confidence, PolicyClass, Scope, SemanticCode};

/// The model a model-scoped mark names when the candidate sets none.
pub const DEFAULT_MODEL: &str = "default";

/// What kind of limit a code is, which decides the hold without a reset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum LimitKind {
    /// A short throttle: rate limits, a model's capacity.
    Throttle,
    /// A usage or quota window.
    Window,
    /// Credit or billing: lifts when someone pays.
    Billing,
    /// Credentials refused: lifts when someone fixes them.
    Credentials,
}

impl LimitKind {
    /// The limit `code` is, or `None` for a code that says nothing about
    /// an account. Exhaustive: a new code is a decision here.
    pub fn of(code: SemanticCode) -> Option<LimitKind> {
        use SemanticCode::*;
        match code {
            RateLimited | ModelCapacity => Some(LimitKind::Throttle),
            UsageLimitReached | QuotaExhausted => Some(LimitKind::Window),
            CreditBalanceLow => Some(LimitKind::Billing),
            AuthInvalid | AuthRequired | AccountForbidden => Some(LimitKind::Credentials),
            ProviderOverloaded
            | ProviderUnavailable
            | ProviderInternalError
            | GatewayError
            | StreamDisconnected
            | NetworkReset
            | NetworkTimeout
            | NetworkDns
            | NetworkTls
            | AttemptTimedOut
            | ModelNotFound
            | ProviderConfigInvalid
            | ContextLengthExceeded
            | InvalidRequest
            | Cancelled
            | TaskFailed
            | RepositoryError
            | PermissionDenied
            | LocalRuntime
            | SpawnFailed
            | ResumeState
            | Unknown => None,
        }
    }

    /// How long a mark holds when the provider gave no reset, for the
    /// `streak`-th mark in a row on its scope; `None`: until cleared.
    pub fn default_hold(self, streak: u32) -> Option<Duration> {
        let doubling = |first: i64, cap: i64| {
            let factor = 1i64 << streak.saturating_sub(1).min(20);
            Duration::seconds(first.saturating_mul(factor).min(cap))
        };
        match self {
            LimitKind::Throttle => Some(doubling(30, 600)),
            LimitKind::Window => Some(doubling(300, 3600)),
            LimitKind::Billing | LimitKind::Credentials => None,
        }
    }
}

/// What a failure said about an account.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Mark {
    pub account: AccountId,
    /// `None`: the whole account; else only this model on it.
    pub model: Option<String>,
    pub code: SemanticCode,
    pub class: PolicyClass,
    pub confidence: Confidence,
    pub rule_id: Option<String>,
    pub catalogue_version: String,
    /// When the limit lifts; `None`: when a person clears it.
    pub until: Option<DateTime<Utc>>,
    /// `until` is the provider's own reset, not a default hold.
    pub trusted: bool,
    /// Marks in a row on this scope, this one included.
    pub streak: u32,
    /// The failed attempt it came from.
    pub route_id: u32,
    pub attempt: u32,
    pub created_at: DateTime<Utc>,
}

/// A stored mark.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredMark {
    pub id: u32,
    pub mark: Mark,
    /// The route dispatched as the probe after the reset.
    pub probe: Option<Probe>,
}

/// The one dispatch allowed through after a mark's reset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Probe {
    pub route_id: u32,
    /// The generation of the probing attempt.
    pub generation: u32,
}

impl Mark {
    /// Whether the mark concerns a candidate running `model` on its account.
    pub fn covers(&self, model: Option<&str>) -> bool {
        self.model
            .as_deref()
            .is_none_or(|m| m == model.unwrap_or(DEFAULT_MODEL))
    }

    /// In force at `now`: before its end, or with no end.
    pub fn in_force(&self, now: DateTime<Utc>) -> bool {
        self.until.is_none_or(|until| now < until)
    }

    /// The failure as if it had just happened to a candidate on this
    /// account: what its policy decides from. The reset is there only when
    /// the provider gave it; a default hold is no provider reset to wait for.
    pub fn classification(&self) -> Classification {
        Classification {
            code: self.code,
            class: match self.class {
                PolicyClass::Transient => Class::Transient,
                PolicyClass::Hard => Class::Hard,
            },
            confidence: self.confidence,
            scope: if self.model.is_some() {
                Scope::Model
            } else {
                Scope::Account
            },
            rule_id: self.rule_id.clone(),
            catalogue_version: self.catalogue_version.clone(),
            retry_after_s: None,
            reset_at: self.until.filter(|_| self.trusted),
            matched: None,
            // Stored with the route: the account by its id, as stored
            // words have it (no view shows a classification's explanation).
            explanation: format!(
                "not dispatched: {}",
                self.limited_until(&AccountNames::ids())
            ),
        }
    }

    /// `work limited until 2026-12-02T13:02:00Z` / `… until cleared`, the
    /// account by its name in `names`.
    pub fn limited_until(&self, names: &AccountNames) -> String {
        limited_until(&names.of(&self.account), self.model.as_deref(), self.until)
    }
}

/// `work limited until 2026-12-02T13:02:00Z`, `Claude Code (~/.claude)
/// (opus) limited until cleared`: the history's words for a mark on the
/// account named `account`.
pub fn limited_until(account: &str, model: Option<&str>, until: Option<DateTime<Utc>>) -> String {
    let whom = match model {
        Some(model) => format!("{account} ({model})"),
        None => account.to_string(),
    };
    match until {
        Some(until) => format!(
            "{whom} limited until {}",
            until.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
        ),
        None => format!("{whom} limited until cleared"),
    }
}

/// The mark a failure of a candidate on `account` running `model` makes,
/// if it makes one. `marks` are the account's marks: the one on the same
/// scope is what a default hold doubles from.
pub fn mark_for(
    c: &Classification,
    account: &AccountId,
    model: Option<&str>,
    (route_id, attempt): (u32, u32),
    marks: &[MarkState],
    now: DateTime<Utc>,
) -> Option<Mark> {
    let class = c.class.policy_class()?;
    if c.confidence == Confidence::Low {
        return None;
    }
    let model = match c.scope {
        Scope::Account => None,
        Scope::Model => Some(model.unwrap_or(DEFAULT_MODEL).to_string()),
        Scope::Network | Scope::Provider | Scope::OutOfScope | Scope::Unknown => return None,
    };
    let kind = LimitKind::of(c.code)?;
    let streak = marks
        .iter()
        .map(|m| &m.mark.mark)
        .find(|p| p.account == *account && p.model == model)
        .map_or(1, |p| p.streak.saturating_add(1));
    let (until, trusted) = match c.reset_at.filter(|r| *r > now) {
        Some(reset) => (Some(reset), true),
        None => (kind.default_hold(streak).map(|d| now + d), false),
    };
    Some(Mark {
        account: account.clone(),
        model,
        code: c.code,
        class,
        confidence: c.confidence,
        rule_id: c.rule_id.clone(),
        catalogue_version: c.catalogue_version.clone(),
        until,
        trusted,
        streak,
        route_id,
        attempt,
        created_at: now,
    })
}

/// A stored mark and whether its probe is still at work (the probing route
/// runs that attempt and its owner is alive: a crashed probe is not).
#[derive(Debug, Clone, PartialEq)]
pub struct MarkState {
    pub mark: StoredMark,
    pub probe_live: bool,
}

/// What one account looks like to a route about to dispatch to it.
#[derive(Debug, Clone, PartialEq)]
pub struct AccountState {
    pub account: AccountId,
    pub marks: Vec<MarkState>,
    /// No slot is free for this route: the account runs as many agents as
    /// its limit allows, or older routes queue for it.
    pub full: bool,
}

/// What an account's marks mean for one dispatch.
#[derive(Debug, Clone, PartialEq)]
pub enum Standing<'a> {
    Clear,
    /// A mark is in force: the candidate's policy decides.
    Limited(&'a Mark),
    /// The reset passed and another route probes: wait for its outcome.
    AwaitingProbe(&'a StoredMark),
    /// The reset passed and nobody probes: this dispatch is the probe of
    /// these marks.
    Probe(Vec<&'a StoredMark>),
}

/// What `marks` mean for route `route_id` dispatching a candidate running
/// `model` at `now`: the mark in force that ends last wins; past their
/// reset, a live probe by another route holds the dispatch back.
pub fn standing<'a>(
    marks: &'a [MarkState],
    model: Option<&str>,
    route_id: u32,
    now: DateTime<Utc>,
) -> Standing<'a> {
    let covering: Vec<&MarkState> = marks.iter().filter(|m| m.mark.mark.covers(model)).collect();
    let limited = covering
        .iter()
        .map(|m| &m.mark.mark)
        .filter(|m| m.in_force(now))
        .max_by_key(|m| m.until.map_or((1, DateTime::<Utc>::MIN_UTC), |u| (0, u)));
    if let Some(mark) = limited {
        return Standing::Limited(mark);
    }
    let probing = covering
        .iter()
        .find(|m| m.probe_live && m.mark.probe.is_some_and(|p| p.route_id != route_id));
    if let Some(m) = probing {
        return Standing::AwaitingProbe(&m.mark);
    }
    if covering.is_empty() {
        Standing::Clear
    } else {
        Standing::Probe(covering.iter().map(|m| &m.mark).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> DateTime<Utc> {
        "2026-12-02T12:00:00Z".parse().unwrap()
    }

    fn classification(code: SemanticCode, scope: Scope, reset_in_s: Option<i64>) -> Classification {
        Classification {
            code,
            class: code.class(),
            confidence: Confidence::High,
            scope,
            rule_id: Some("test.rule.v1".into()),
            catalogue_version: "2026.12.5".into(),
            retry_after_s: None,
            reset_at: reset_in_s.map(|s| now() + Duration::seconds(s)),
            matched: None,
            explanation: String::new(),
        }
    }

    fn work() -> AccountId {
        AccountId::parse("work").unwrap()
    }

    fn mark(code: SemanticCode, scope: Scope, reset: Option<i64>) -> Option<Mark> {
        mark_for(
            &classification(code, scope, reset),
            &work(),
            Some("opus"),
            (1, 1),
            &[],
            now(),
        )
    }

    #[test]
    fn a_usage_window_holds_its_account_until_the_providers_reset() {
        let m = mark(SemanticCode::UsageLimitReached, Scope::Account, Some(3600)).unwrap();
        assert_eq!(
            (m.until, m.trusted, m.model.clone()),
            (Some(now() + Duration::hours(1)), true, None)
        );
        assert_eq!(
            m.classification().reset_at,
            m.until,
            "the policy may wait for a trusted reset"
        );
        assert_eq!(
            m.limited_until(&AccountNames::default()),
            "work limited until 2026-12-02T13:00:00Z"
        );
        let named = AccountNames::new([(work(), "the work plan".to_string())].into());
        assert_eq!(
            m.limited_until(&named),
            "the work plan limited until 2026-12-02T13:00:00Z",
            "the account by the name the Accounts tab gives it"
        );
    }

    #[test]
    fn without_a_reset_throttles_double_and_credentials_hold_until_cleared() {
        let first = mark(SemanticCode::RateLimited, Scope::Account, None).unwrap();
        assert_eq!(first.until, Some(now() + Duration::seconds(30)));
        assert!(!first.trusted);
        assert_eq!(
            first.classification().reset_at,
            None,
            "a default hold is no provider reset to wait for"
        );
        let before = MarkState {
            mark: StoredMark {
                id: 1,
                mark: first.clone(),
                probe: None,
            },
            probe_live: false,
        };
        let second = mark_for(
            &classification(SemanticCode::RateLimited, Scope::Account, None),
            &work(),
            None,
            (2, 1),
            &[before],
            now(),
        )
        .unwrap();
        assert_eq!(
            (second.streak, second.until),
            (2, Some(now() + Duration::seconds(60)))
        );
        let auth = mark(SemanticCode::AuthInvalid, Scope::Account, None).unwrap();
        assert_eq!(auth.until, None, "credentials: until someone clears them");
        assert_eq!(
            auth.limited_until(&AccountNames::default()),
            "work limited until cleared"
        );
        assert_eq!(
            LimitKind::Window.default_hold(30),
            Some(Duration::hours(1)),
            "doubling is capped"
        );
    }

    #[test]
    fn model_scoped_marks_cover_only_their_model() {
        let m = mark(SemanticCode::ModelCapacity, Scope::Model, Some(60)).unwrap();
        assert_eq!(m.model.as_deref(), Some("opus"));
        assert!(m.covers(Some("opus")));
        assert!(!m.covers(Some("sonnet")));
        assert!(!m.covers(None));
    }

    #[test]
    fn no_mark_from_unknown_low_confidence_or_non_account_failures() {
        assert_eq!(mark(SemanticCode::Unknown, Scope::Unknown, None), None);
        assert_eq!(
            mark(SemanticCode::ProviderOverloaded, Scope::Provider, None),
            None
        );
        assert_eq!(
            mark(SemanticCode::RateLimited, Scope::Provider, Some(60)),
            None,
            "a provider-wide throttle is not this account's"
        );
        assert_eq!(
            mark(SemanticCode::ContextLengthExceeded, Scope::Model, None),
            None,
            "a request too long for the model says nothing about the account"
        );
        let mut low = classification(SemanticCode::UsageLimitReached, Scope::Account, Some(60));
        low.confidence = Confidence::Low;
        assert_eq!(mark_for(&low, &work(), None, (1, 1), &[], now()), None);
    }

    fn state(until: Option<i64>, probe: Option<(u32, bool)>) -> MarkState {
        let mut m = mark(SemanticCode::UsageLimitReached, Scope::Account, Some(60)).unwrap();
        m.until = until.map(|s| now() + Duration::seconds(s));
        MarkState {
            mark: StoredMark {
                id: 1,
                mark: m,
                probe: probe.map(|(route_id, _)| Probe {
                    route_id,
                    generation: 3,
                }),
            },
            probe_live: probe.is_some_and(|(_, live)| live),
        }
    }

    #[test]
    fn after_the_reset_one_route_probes_and_the_others_wait_for_it() {
        assert_eq!(standing(&[], None, 7, now()), Standing::Clear);
        let limited = [state(Some(10), None)];
        assert!(matches!(
            standing(&limited, None, 7, now()),
            Standing::Limited(_)
        ));
        let reset = [state(Some(-1), None)];
        assert!(
            matches!(standing(&reset, None, 7, now()), Standing::Probe(ref m) if m.len() == 1),
            "nobody probes yet: this one does"
        );
        let probed = [state(Some(-1), Some((3, true)))];
        assert!(matches!(
            standing(&probed, None, 7, now()),
            Standing::AwaitingProbe(_)
        ));
        let crashed = [state(Some(-1), Some((3, false)))];
        assert!(
            matches!(standing(&crashed, None, 7, now()), Standing::Probe(_)),
            "a probe whose owner is gone holds nobody back"
        );
        let cleared_only_by_you = [state(None, None)];
        assert!(matches!(
            standing(&cleared_only_by_you, None, 7, now()),
            Standing::Limited(m) if m.until.is_none()
        ));
    }
}
