//! The accounts as people see them (the app's Accounts view, `recourse
//! accounts`): each account's state, marks, waiting routes, running/limit
//! and the last 24 hours of attempts; clearing an account; the global
//! maximum of running agents; and one notice per new mark, for the desktop
//! notification.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Duration, DurationRound, Utc};
use serde::{Deserialize, Serialize};

use super::account_names::{kind_of, name_of};
use super::{Engine, EngineError};
use crate::account::{AccountId, AccountNames, LimitKind, StoredMark};
use crate::agent::AgentKind;
use crate::classification::{PolicyClass, SemanticCode};
use crate::store::Store;

/// Bounds of the global maximum of running agents.
pub const MAX_RUNNING: std::ops::RangeInclusive<u32> = 1..=256;

/// Every account, and the global maximum.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct AccountsOverview {
    pub accounts: Vec<AccountView>,
    /// The global maximum of running agents; `None`: no maximum.
    pub max_running: Option<u32>,
    /// Agents running now, on every account.
    pub running: u32,
    /// When this was read; the chart's last hour is the one holding it.
    pub at: DateTime<Utc>,
}

/// One account.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct AccountView {
    /// What `recourse accounts clear` takes: the label, or the derived id.
    pub id: String,
    /// The label, or the kind with its config dir, else with the candidate
    /// that runs as it: `Claude Code (~/.claude-work)`, `Claude Code account
    /// of “opus”`. The start of its hash only when no saved candidate does.
    pub name: String,
    pub labelled: bool,
    /// How a derived account was worked out, in words; `None` for a label.
    pub derivation: Option<String>,
    pub kinds: Vec<AgentKind>,
    pub candidates: Vec<AccountCandidateView>,
    pub status: AccountStatus,
    pub marks: Vec<MarkView>,
    /// Routes waiting on it (for a reset, a retry or a slot), by id.
    pub waiting: Vec<u32>,
    pub running: u32,
    /// The smallest `max_concurrent` of its candidates; `None`: no limit.
    pub limit: Option<u32>,
    /// Attempts per hour over the last 24 hours, oldest first.
    pub chart: Vec<HourBar>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct AccountCandidateView {
    pub profile: String,
    pub candidate: String,
}

/// What an account's marks say now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum AccountStatus {
    Ready,
    /// Limited until `until`.
    Limited {
        until: DateTime<Utc>,
    },
    /// Credentials or billing refused: limited until a person clears it.
    Refused,
    /// The reset has passed and route `route_id` is trying it.
    Probing {
        route_id: u32,
    },
    /// The reset has passed; the next dispatch tries it.
    ResetPassed,
}

/// One limit mark.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct MarkView {
    /// `None`: the whole account.
    pub model: Option<String>,
    pub code: SemanticCode,
    pub class: PolicyClass,
    pub rule_id: Option<String>,
    pub limit: LimitKind,
    /// `None`: until cleared.
    pub until: Option<DateTime<Utc>>,
    /// `until` is the provider's reset (else a default hold).
    pub trusted: bool,
    pub created_at: DateTime<Utc>,
    /// The failed attempt it came from.
    pub route_id: u32,
    pub attempt: u32,
    /// The route probing it after its reset.
    pub probe_route: Option<u32>,
}

/// Attempts of one hour: succeeded, failed by class, and the rest (killed,
/// interrupted, unclassified failures).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct HourBar {
    pub start: DateTime<Utc>,
    pub succeeded: u32,
    pub transient: u32,
    pub hard: u32,
    pub other: u32,
}

/// A new limit mark, for one desktop notification.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct AccountNotice {
    pub account: String,
    pub name: String,
    pub code: SemanticCode,
    /// `None`: until cleared.
    pub until: Option<DateTime<Utc>>,
    /// Routes waiting on the account when it was noticed.
    pub waiting: u32,
}

impl Engine {
    /// Every account with its state, marks, routes and last 24 hours.
    pub fn accounts(&self) -> Result<AccountsOverview, EngineError> {
        overview(&self.store(), self.inner.clock.now())
    }

    /// Removes every limit mark of `account` (its id or its name), so its
    /// routes dispatch again. How many marks went.
    pub fn clear_account(&self, account: &str) -> Result<u32, EngineError> {
        let id = self.find_account(account)?;
        let cleared = self.store().clear_marks(&id)?;
        tracing::info!(account = %id, cleared, "account cleared by a person");
        self.kick_release();
        Ok(u32::try_from(cleared).unwrap_or(u32::MAX))
    }

    fn find_account(&self, given: &str) -> Result<AccountId, EngineError> {
        let all = self.accounts()?;
        all.accounts
            .iter()
            .find(|a| a.id == given.trim() || a.name == given.trim())
            .and_then(|a| AccountId::parse(&a.id))
            .ok_or_else(|| EngineError::not_found("account", format!("{given:?}")))
    }

    /// The global maximum of running agents; `None`: no maximum.
    pub fn max_running(&self) -> Result<Option<u32>, EngineError> {
        Ok(self.store().max_running()?)
    }

    /// Sets the global maximum every process on this database obeys.
    pub fn set_max_running(&self, max: Option<u32>) -> Result<(), EngineError> {
        if let Some(n) = max.filter(|n| !MAX_RUNNING.contains(n)) {
            return Err(EngineError::validation(
                "max_running",
                format!(
                    "must be {} to {} running agents {}",
                    MAX_RUNNING.start(),
                    MAX_RUNNING.end(),
                    crate::amount::too_few_or_many(*MAX_RUNNING.start(), n)
                ),
            ));
        }
        self.store().set_max_running(max)?;
        self.kick_release();
        Ok(())
    }

    /// New limit marks, one notice each (a mark renewed by a failed probe
    /// is a new one).
    pub fn subscribe_accounts(&self) -> tokio::sync::broadcast::Receiver<AccountNotice> {
        self.inner.notices.subscribe()
    }

    /// Marks as they are now count as seen: only later ones are noticed.
    pub(super) fn remember_marks(&self) -> Result<(), EngineError> {
        let (_, marks) = self.store().limit_marks(None)?;
        self.book()
            .seen_marks
            .extend(marks.iter().map(|m| (m.id, m.mark.created_at)));
        Ok(())
    }

    /// Publishes a notice for each mark not seen yet (written here or by
    /// another process).
    pub(super) fn notice_marks(&self) {
        let read = self.store().limit_marks(None);
        let marks = match read {
            Ok((_, marks)) => marks,
            Err(e) => return tracing::warn!("cannot read the limit marks: {e}"),
        };
        let new: Vec<StoredMark> = {
            let mut book = self.book();
            marks
                .into_iter()
                .filter(|m| book.seen_marks.insert((m.id, m.mark.created_at)))
                .collect()
        };
        if new.is_empty() {
            return;
        }
        let waiting = self.store().waiting_routes().unwrap_or_default();
        let candidates = self.store().account_candidates().unwrap_or_default();
        for m in new {
            let account = &m.mark.account;
            let kinds: BTreeSet<AgentKind> = candidates
                .iter()
                .filter(|c| c.account == *account)
                .map(|c| c.agent.kind)
                .collect();
            // No subscriber is fine: nobody is watching.
            let _ = self.inner.notices.send(AccountNotice {
                account: account.to_string(),
                name: name_of(account, &kinds, &candidates),
                code: m.mark.code,
                until: m.mark.until,
                waiting: waiting.iter().filter(|(a, _)| a == account).count() as u32,
            });
        }
    }
}

/// The accounts of `store` at `now`: the engine's and the read-only
/// viewer's one answer.
pub(crate) fn overview(store: &Store, now: DateTime<Utc>) -> Result<AccountsOverview, EngineError> {
    let candidates = store.account_candidates()?;
    let (_, marks) = store.limit_marks(None)?;
    let (running, total) = store.running_counts()?;
    let waiting = store.waiting_routes()?;
    let first_hour = now.duration_trunc(Duration::hours(1)).unwrap_or(now) - Duration::hours(23);
    let hours = store.attempts_by_hour(first_hour)?;
    let mut ids: BTreeSet<AccountId> = candidates.iter().map(|c| c.account.clone()).collect();
    ids.extend(marks.iter().map(|m| m.mark.account.clone()));
    let mut accounts = Vec::with_capacity(ids.len());
    for id in ids {
        let own: Vec<_> = candidates.iter().filter(|c| c.account == id).collect();
        let kinds: BTreeSet<AgentKind> = own.iter().map(|c| c.agent.kind).collect();
        let own_marks: Vec<&StoredMark> = marks.iter().filter(|m| m.mark.account == id).collect();
        let status = status(store, &own_marks, now)?;
        accounts.push(AccountView {
            id: id.to_string(),
            name: name_of(&id, &kinds, &candidates),
            labelled: id.is_label(),
            derivation: kind_of(&id, &kinds)
                .filter(|_| !id.is_label())
                .map(|kind| crate::account::derivation_words(kind, own.len())),
            kinds: kinds.into_iter().collect(),
            candidates: own
                .iter()
                .map(|c| AccountCandidateView {
                    profile: c.profile_name.clone(),
                    candidate: c.candidate_name.clone(),
                })
                .collect(),
            status,
            marks: own_marks.iter().map(|m| mark_view(m)).collect(),
            waiting: waiting
                .iter()
                .filter(|(a, _)| *a == id)
                .map(|(_, r)| *r)
                .collect(),
            running: running
                .iter()
                .find(|(a, _)| *a == id)
                .map_or(0, |(_, n)| *n),
            limit: own.iter().filter_map(|c| c.agent.max_concurrent).min(),
            chart: chart(&hours, &id, first_hour),
        });
    }
    Ok(AccountsOverview {
        accounts,
        max_running: store.max_running()?,
        running: total,
        at: now,
    })
}

/// Every account a saved candidate runs as, by the name the Accounts tab
/// gives it: what the texts about routes call it.
pub(crate) fn account_names(store: &Store) -> Result<AccountNames, crate::store::StoreError> {
    let candidates = store.account_candidates()?;
    let ids: BTreeSet<&AccountId> = candidates.iter().map(|c| &c.account).collect();
    Ok(AccountNames::new(
        ids.into_iter()
            .map(|id| {
                let kinds: BTreeSet<AgentKind> = candidates
                    .iter()
                    .filter(|c| c.account == *id)
                    .map(|c| c.agent.kind)
                    .collect();
                (id.clone(), name_of(id, &kinds, &candidates))
            })
            .collect(),
    ))
}

/// The worst of the marks: refused until cleared, then limited until the
/// latest end, then a reset passed (probed or not).
fn status(
    store: &Store,
    marks: &[&StoredMark],
    now: DateTime<Utc>,
) -> Result<AccountStatus, EngineError> {
    if marks
        .iter()
        .any(|m| m.mark.until.is_none() && m.mark.in_force(now))
    {
        return Ok(AccountStatus::Refused);
    }
    if let Some(until) = marks
        .iter()
        .filter_map(|m| m.mark.until.filter(|u| *u > now))
        .max()
    {
        return Ok(AccountStatus::Limited { until });
    }
    let alive = |owner: Option<&str>, lease| !super::ownership::owner_gone(owner, lease, now);
    for m in marks {
        let Some(p) = m.probe else { continue };
        if store.probe_at_work(p, &alive)? {
            return Ok(AccountStatus::Probing {
                route_id: p.route_id,
            });
        }
    }
    Ok(if marks.is_empty() {
        AccountStatus::Ready
    } else {
        AccountStatus::ResetPassed
    })
}

fn mark_view(m: &StoredMark) -> MarkView {
    let mark = &m.mark;
    MarkView {
        model: mark.model.clone(),
        code: mark.code,
        class: mark.class,
        rule_id: mark.rule_id.clone(),
        limit: LimitKind::of(mark.code).unwrap_or(LimitKind::Credentials),
        until: mark.until,
        trusted: mark.trusted,
        created_at: mark.created_at,
        route_id: mark.route_id,
        attempt: mark.attempt,
        probe_route: m.probe.map(|p| p.route_id),
    }
}

/// 24 hourly bars of `account` from `first_hour`.
fn chart(
    hours: &[crate::store::accounts::HourCount],
    account: &AccountId,
    first_hour: DateTime<Utc>,
) -> Vec<HourBar> {
    let mut bars: BTreeMap<DateTime<Utc>, HourBar> = (0..24)
        .map(|h| {
            let start = first_hour + Duration::hours(h);
            let bar = HourBar {
                start,
                succeeded: 0,
                transient: 0,
                hard: 0,
                other: 0,
            };
            (start, bar)
        })
        .collect();
    for h in hours.iter().filter(|h| h.account == *account) {
        let Ok(start) = format!("{}:00:00Z", h.hour).parse::<DateTime<Utc>>() else {
            continue;
        };
        let Some(bar) = bars.get_mut(&start) else {
            continue;
        };
        let slot = match (h.outcome.as_deref(), h.class.as_deref()) {
            (None, _) => continue,
            (Some("succeeded"), _) => &mut bar.succeeded,
            (Some("failed"), Some("transient")) => &mut bar.transient,
            (Some("failed"), Some("hard")) => &mut bar.hard,
            _ => &mut bar.other,
        };
        *slot += h.count;
    }
    bars.into_values().collect()
}
