//! Accounts in the database: the install's key, limit marks and their
//! probes, dispatches held back, the slots a dispatch counts on, the global
//! maximum of running agents, and what the accounts view reads.
//!
//! Marks are written in the transaction of the route transition that makes
//! them ([`super::routes`] calls the functions taking a connection), so the
//! CLI, the app and every other process on the file see the same marks.
//! `limit_version` moves with every write of a mark (triggers, migration
//! 0008): a plan made from the marks commits only while it has not moved.

use chrono::{DateTime, Utc};
use rusqlite::{params, Connection, OptionalExtension};

use super::routes::lease_until_sql;
use super::{from_json, parse_ts, to_json, ts, Store, StoreError};
use crate::account::{AccountId, AccountKey, Mark, Probe, StoredMark};
use crate::agent::AgentSpec;
use crate::evaluator::Decision;
use crate::route::{HoldRecord, ProbeClaim, ProbeEnd, RouteState};

/// The shared setting holding the global maximum of running agents.
const MAX_RUNNING: &str = "max_running_agents";

/// The marks' version: moves with every write of a mark.
pub(crate) fn version(conn: &Connection) -> Result<u64, StoreError> {
    let v: i64 = conn
        .prepare_cached("SELECT version FROM limit_version WHERE id = 1")?
        .query_row([], |r| r.get(0))?;
    Ok(u64::try_from(v).unwrap_or_default())
}

/// Whether route `route_id`, about to run a candidate of `account`, fits:
/// the account runs fewer agents than the smallest `max_concurrent` of its
/// candidates, and all accounts together fewer than the global maximum
/// (each counted without the route itself).
pub(crate) fn has_room(
    conn: &Connection,
    route_id: u32,
    account: Option<&AccountId>,
) -> Result<bool, StoreError> {
    if let Some(max) = max_running(conn)? {
        let running: u32 = conn
            .prepare_cached("SELECT COUNT(*) FROM routes WHERE state = 'running' AND id != ?1")?
            .query_row([route_id], |r| r.get(0))?;
        if running >= max {
            return Ok(false);
        }
    }
    let Some(account) = account else {
        return Ok(true);
    };
    let Some(limit) = account_limit(conn, account)? else {
        return Ok(true);
    };
    Ok(running_on(conn, account, route_id)? < limit)
}

fn account_limit(conn: &Connection, account: &AccountId) -> Result<Option<u32>, StoreError> {
    Ok(conn
        .prepare_cached("SELECT MIN(max_concurrent) FROM candidates WHERE account = ?1")?
        .query_row([account.as_str()], |r| r.get(0))?)
}

fn running_on(conn: &Connection, account: &AccountId, except: u32) -> Result<u32, StoreError> {
    Ok(conn
        .prepare_cached(
            "SELECT COUNT(*) FROM routes WHERE state = 'running' AND account = ?1 AND id != ?2",
        )?
        .query_row(params![account.as_str(), except], |r| r.get(0))?)
}

fn max_running(conn: &Connection) -> Result<Option<u32>, StoreError> {
    let value: Option<String> = conn
        .prepare_cached("SELECT value FROM shared_settings WHERE key = ?1")?
        .query_row([MAX_RUNNING], |r| r.get(0))
        .optional()?;
    Ok(value.and_then(|v| v.parse().ok()))
}

/// The running attempt of `route_id` at `generation` ended: the marks it
/// probed are cleared when it answered, else free for another probe.
pub(crate) fn end_probe(
    conn: &Connection,
    route_id: u32,
    generation: u32,
    end: ProbeEnd,
) -> Result<usize, StoreError> {
    let sql = match end {
        ProbeEnd::Answered => {
            "DELETE FROM limit_marks WHERE probe_route = ?1 AND probe_generation = ?2"
        }
        ProbeEnd::Released => {
            "UPDATE limit_marks SET probe_route = NULL, probe_generation = NULL \
             WHERE probe_route = ?1 AND probe_generation = ?2"
        }
    };
    Ok(conn
        .prepare_cached(sql)?
        .execute(params![route_id, generation])?)
}

/// Records `mark`, replacing the one on the same scope (and its probe).
pub(crate) fn record_mark(conn: &Connection, mark: &Mark) -> Result<(), StoreError> {
    conn.prepare_cached(
        "INSERT INTO limit_marks (account, model, mark_json, until) VALUES (?1, ?2, ?3, ?4) \
         ON CONFLICT (account, model) DO UPDATE SET mark_json = excluded.mark_json, \
         until = excluded.until, probe_route = NULL, probe_generation = NULL",
    )?
    .execute(params![
        mark.account.as_str(),
        mark.model.as_deref().unwrap_or(""),
        to_json(mark),
        mark.until.map(ts)
    ])?;
    Ok(())
}

pub(crate) fn insert_hold(
    conn: &Connection,
    route_id: u32,
    generation: u32,
    hold: &HoldRecord,
) -> Result<(), StoreError> {
    conn.prepare_cached(
        "INSERT INTO dispatch_holds (route_id, generation, candidate_index, candidate_name, \
         mark_json, decision_json, at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )?
    .execute(params![
        route_id,
        generation,
        hold.candidate_index,
        hold.candidate_name,
        to_json(&hold.mark),
        to_json(&hold.decision),
        ts(hold.at)
    ])?;
    Ok(())
}

/// Makes route `route_id` at `generation` the probe of the claimed marks,
/// each only while it still has the probe the claim saw; `false` when one
/// of them changed.
pub(crate) fn claim_probe(
    conn: &Connection,
    route_id: u32,
    generation: u32,
    claim: &ProbeClaim,
) -> Result<bool, StoreError> {
    let mut stmt = conn.prepare_cached(
        "UPDATE limit_marks SET probe_route = ?2, probe_generation = ?3 \
         WHERE id = ?1 AND probe_route IS ?4 AND probe_generation IS ?5",
    )?;
    for (id, seen) in &claim.marks {
        let n = stmt.execute(params![
            id,
            route_id,
            generation,
            seen.map(|p| p.route_id),
            seen.map(|p| p.generation)
        ])?;
        if n != 1 {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Where a route stands, as far as a probe it runs is concerned.
#[derive(Debug, Clone, PartialEq)]
pub struct ProbeRoute {
    pub state: RouteState,
    pub generation: u32,
    pub owner: Option<String>,
    pub lease_until: Option<DateTime<Utc>>,
}

/// What a dispatch of one route is planned from (the route machine's
/// `World` lends it): the marks' version, each account's marks with whether
/// their probe is at work and whether a slot is free, and the global slot.
#[derive(Debug, Clone, PartialEq)]
pub struct DispatchFacts {
    pub stamp: u64,
    pub accounts: Vec<crate::account::AccountState>,
    pub global_full: bool,
}

/// Whether a route's owner is alive, from its id and lease: the engine's
/// judgement (leases and processes), asked by the store.
pub type OwnerAlive<'a> = &'a dyn Fn(Option<&str>, Option<DateTime<Utc>>) -> bool;

/// How full the slots are for one route about to dispatch.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Room {
    /// Its account runs as many agents as its limit allows, or older routes
    /// queue for it.
    pub account_full: bool,
    /// The global maximum is reached, or older routes queue for it.
    pub global_full: bool,
}

/// One dispatch a mark held back, as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredHold {
    pub generation: u32,
    pub record: HoldRecord,
}

/// A candidate with the account it runs as.
#[derive(Debug, Clone, PartialEq)]
pub struct AccountCandidate {
    pub account: AccountId,
    pub profile_name: String,
    pub candidate_name: String,
    pub agent: AgentSpec,
}

/// Attempts of one account started in one hour, by how they ended.
#[derive(Debug, Clone, PartialEq)]
pub struct HourCount {
    pub account: AccountId,
    /// `2026-12-02T13`: the hour, UTC.
    pub hour: String,
    /// `None` while running.
    pub outcome: Option<String>,
    pub class: Option<String>,
    pub count: u32,
}

/// The candidates that have an account, with their profiles' names.
const ACCOUNT_CANDIDATES: &str = "SELECT c.account, p.name, c.name, c.agent_json \
     FROM candidates c JOIN profiles p ON p.id = c.profile_id WHERE c.account IS NOT NULL \
     ORDER BY c.account, p.name, c.position";

impl Store {
    /// The install's key derived account ids are hashed with.
    pub fn account_key(&self) -> Result<AccountKey, StoreError> {
        let key: Vec<u8> =
            self.conn()
                .query_row("SELECT key FROM install_key WHERE id = 1", [], |r| r.get(0))?;
        Ok(AccountKey::new(key))
    }

    /// The marks' version and the marks on `accounts` (every mark when
    /// `None`), read in that order: a mark written between the two reads
    /// makes a plan from them stale, never wrongly current.
    pub fn limit_marks(
        &self,
        accounts: Option<&[&AccountId]>,
    ) -> Result<(u64, Vec<StoredMark>), StoreError> {
        let conn = self.conn();
        let version = version(conn)?;
        let sql = "SELECT id, mark_json, probe_route, probe_generation FROM limit_marks";
        let rows: Vec<(u32, String, Option<u32>, Option<u32>)> = match accounts {
            None => conn
                .prepare_cached(&format!("{sql} ORDER BY id"))?
                .query_map([], read_mark)?
                .collect::<Result<_, _>>()?,
            Some(accounts) => {
                let mut stmt = conn.prepare_cached(&format!("{sql} WHERE account = ?1"))?;
                let mut rows = Vec::new();
                for a in accounts {
                    rows.extend(
                        stmt.query_map([a.as_str()], read_mark)?
                            .collect::<Result<Vec<_>, _>>()?,
                    );
                }
                rows
            }
        };
        let marks = rows
            .into_iter()
            .map(|(id, json, route, generation)| {
                Ok(StoredMark {
                    id,
                    mark: from_json("limit mark", &json)?,
                    probe: route.zip(generation).map(|(route_id, generation)| Probe {
                        route_id,
                        generation,
                    }),
                })
            })
            .collect::<Result<Vec<_>, StoreError>>()?;
        Ok((version, marks))
    }

    /// Whether `probe` is at work: its route runs that very attempt and its
    /// owner is alive (a crashed probe holds nobody back).
    pub fn probe_at_work(&self, probe: Probe, alive: OwnerAlive<'_>) -> Result<bool, StoreError> {
        Ok(self.probe_route(probe.route_id)?.is_some_and(|r| {
            r.state == RouteState::Running
                && r.generation == probe.generation
                && alive(r.owner.as_deref(), r.lease_until)
        }))
    }

    /// What a dispatch of route `route_id` (queued since `queued_since`, if
    /// it is) to any of `accounts` is planned from; the marks' version is
    /// read first, so a plan from these facts is never wrongly current.
    pub fn dispatch_facts(
        &self,
        route_id: u32,
        accounts: &[&AccountId],
        queued_since: Option<DateTime<Utc>>,
        alive: OwnerAlive<'_>,
    ) -> Result<DispatchFacts, StoreError> {
        let (stamp, marks) = self.limit_marks(Some(accounts))?;
        let mut states = Vec::with_capacity(accounts.len());
        for id in accounts {
            let mut of_account = Vec::new();
            for mark in marks.iter().filter(|m| m.mark.account == **id) {
                let probe_live = match mark.probe {
                    None => false,
                    Some(p) => self.probe_at_work(p, alive)?,
                };
                of_account.push(crate::account::MarkState {
                    mark: mark.clone(),
                    probe_live,
                });
            }
            states.push(crate::account::AccountState {
                account: (*id).clone(),
                marks: of_account,
                full: self.room(route_id, Some(id), queued_since)?.account_full,
            });
        }
        Ok(DispatchFacts {
            stamp,
            accounts: states,
            global_full: self.room(route_id, None, queued_since)?.global_full,
        })
    }

    /// What a probe's route is doing now; `None` for a route that is gone.
    pub fn probe_route(&self, id: u32) -> Result<Option<ProbeRoute>, StoreError> {
        let raw = self
            .conn()
            .prepare_cached(concat!(
                "SELECT state, generation, owner, ",
                lease_until_sql!(),
                " FROM routes WHERE id = ?1"
            ))?
            .query_row([id], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, u32>(1)?,
                    r.get::<_, Option<String>>(2)?,
                    r.get::<_, Option<String>>(3)?,
                ))
            })
            .optional()?;
        let Some((state, generation, owner, lease)) = raw else {
            return Ok(None);
        };
        Ok(Some(ProbeRoute {
            state: RouteState::parse(&state).ok_or(StoreError::Malformed {
                what: "route state",
                detail: state,
            })?,
            generation,
            owner,
            lease_until: lease.as_deref().map(parse_ts).transpose()?,
        }))
    }

    /// How full the slots of `account` and the global maximum are for route
    /// `route_id`: each is full when its limit is reached, or when a route
    /// queued before `queued_since` (every queued one, for a route not
    /// queued) waits for it: first in, first out.
    pub fn room(
        &self,
        route_id: u32,
        account: Option<&AccountId>,
        queued_since: Option<DateTime<Utc>>,
    ) -> Result<Room, StoreError> {
        let conn = self.conn();
        let since = queued_since.map(ts);
        // Queued before this route (every queued route, for one not queued),
        // for the slot the clause names.
        let ahead = |slot: &str, account: &str| -> Result<u32, StoreError> {
            let sql = format!(
                "SELECT COUNT(*) FROM routes WHERE state = 'queued' AND id != ?1 \
                 AND (?2 IS NULL OR queued_at < ?2 OR (queued_at = ?2 AND id < ?1)) AND {slot}"
            );
            Ok(conn
                .prepare_cached(&sql)?
                .query_row(params![route_id, since, account], |r| r.get(0))?)
        };
        let global_full = match max_running(conn)? {
            None => false,
            Some(max) => {
                let running: u32 = conn
                    .prepare_cached(
                        "SELECT COUNT(*) FROM routes WHERE state = 'running' AND id != ?1",
                    )?
                    .query_row([route_id], |r| r.get(0))?;
                running >= max
                    || ahead(
                        "json_extract(queued_json, '$.reason.kind') = 'global_full' \
                         AND ?3 IS NOT NULL",
                        "",
                    )? > 0
            }
        };
        let account_full = match account {
            None => false,
            Some(account) => match account_limit(conn, account)? {
                None => false,
                Some(limit) => {
                    running_on(conn, account, route_id)? >= limit
                        || ahead("account = ?3", account.as_str())? > 0
                }
            },
        };
        Ok(Room {
            account_full,
            global_full,
        })
    }

    /// Queued routes `owner` owns, first queued first.
    pub fn queued_routes_owned_by(
        &self,
        owner: &str,
    ) -> Result<Vec<crate::route::RouteRow>, StoreError> {
        self.select_routes(
            "WHERE state = 'queued' AND owner = ?1 ORDER BY queued_at, id",
            [owner],
        )
    }

    /// Removes every mark on `account`: a person cleared it. How many.
    pub fn clear_marks(&self, account: &AccountId) -> Result<usize, StoreError> {
        Ok(self.conn().execute(
            "DELETE FROM limit_marks WHERE account = ?1",
            [account.as_str()],
        )?)
    }

    /// The probe `route_id` runs at `generation` showed its first sign of
    /// success (assistant output): the limit has lifted, its marks go.
    pub fn probe_answered(&self, route_id: u32, generation: u32) -> Result<usize, StoreError> {
        end_probe(self.conn(), route_id, generation, ProbeEnd::Answered)
    }

    /// The dispatches marks held back on `route_id`, oldest first.
    pub fn holds(&self, route_id: u32) -> Result<Vec<StoredHold>, StoreError> {
        let rows: Vec<(u32, u32, String, String, String, String)> = self
            .conn()
            .prepare_cached(
                "SELECT generation, candidate_index, candidate_name, mark_json, decision_json, at \
                 FROM dispatch_holds WHERE route_id = ?1 ORDER BY id",
            )?
            .query_map([route_id], |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                ))
            })?
            .collect::<Result<_, _>>()?;
        rows.into_iter()
            .map(
                |(generation, candidate_index, candidate_name, mark, decision, at)| {
                    Ok(StoredHold {
                        generation,
                        record: HoldRecord {
                            candidate_index,
                            candidate_name,
                            mark: from_json("held mark", &mark)?,
                            decision: from_json::<Decision>("held decision", &decision)?,
                            at: parse_ts(&at)?,
                        },
                    })
                },
            )
            .collect()
    }

    /// The global maximum of running agents; `None`: no maximum.
    pub fn max_running(&self) -> Result<Option<u32>, StoreError> {
        max_running(self.conn())
    }

    pub fn set_max_running(&self, max: Option<u32>) -> Result<(), StoreError> {
        match max {
            Some(max) => self.conn().execute(
                "INSERT INTO shared_settings (key, value) VALUES (?1, ?2) \
                 ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                params![MAX_RUNNING, max.to_string()],
            )?,
            None => self
                .conn()
                .execute("DELETE FROM shared_settings WHERE key = ?1", [MAX_RUNNING])?,
        };
        Ok(())
    }

    /// Agents running now, per account and in all.
    pub fn running_counts(&self) -> Result<(Vec<(AccountId, u32)>, u32), StoreError> {
        let rows: Vec<(Option<String>, u32)> = self
            .conn()
            .prepare_cached(
                "SELECT account, COUNT(*) FROM routes WHERE state = 'running' GROUP BY account",
            )?
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<Result<_, _>>()?;
        let total = rows.iter().map(|(_, n)| n).sum();
        let by_account = rows
            .into_iter()
            .filter_map(|(a, n)| Some((AccountId::parse(&a?)?, n)))
            .collect();
        Ok((by_account, total))
    }

    /// Every candidate that has an account, with its profile.
    pub fn account_candidates(&self) -> Result<Vec<AccountCandidate>, StoreError> {
        let rows: Vec<(String, String, String, String)> = self
            .conn()
            .prepare_cached(ACCOUNT_CANDIDATES)?
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?
            .collect::<Result<_, _>>()?;
        let mut out = Vec::new();
        for (account, profile_name, candidate_name, agent) in rows {
            let Some(account) = AccountId::parse(&account) else {
                continue;
            };
            out.push(AccountCandidate {
                account,
                profile_name,
                candidate_name,
                agent: from_json("candidate agent", &agent)?,
            });
        }
        Ok(out)
    }

    /// How many times [`Store::account_candidates`] was read on this
    /// connection: what a test counts the accounts' names being read by.
    #[cfg(test)]
    pub(crate) fn account_candidates_reads(&self) -> i32 {
        self.conn()
            .prepare_cached(ACCOUNT_CANDIDATES)
            .expect("the statement prepares")
            .get_status(rusqlite::StatementStatus::Run)
    }

    /// Routes waiting on an account: waiting for a reset or a retry, or
    /// queued, with the account of their current candidate.
    pub fn waiting_routes(&self) -> Result<Vec<(AccountId, u32)>, StoreError> {
        let rows: Vec<(String, u32)> = self
            .conn()
            .prepare_cached(
                "SELECT account, id FROM routes WHERE account IS NOT NULL \
                 AND state IN ('waiting_reset', 'retry_scheduled', 'queued') ORDER BY id",
            )?
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<Result<_, _>>()?;
        Ok(rows
            .into_iter()
            .filter_map(|(a, id)| Some((AccountId::parse(&a)?, id)))
            .collect())
    }

    /// Attempts started since `since`, counted by account, hour, outcome
    /// and class: the accounts view's chart.
    pub fn attempts_by_hour(&self, since: DateTime<Utc>) -> Result<Vec<HourCount>, StoreError> {
        let mut stmt = self.conn().prepare_cached(
            "SELECT a.account, substr(a.started_at, 1, 13) AS hour, r.outcome, r.class, \
             COUNT(*) FROM attempts a LEFT JOIN attempt_results r ON r.attempt_id = a.id \
             WHERE a.started_at >= ?1 AND a.account IS NOT NULL \
             GROUP BY a.account, hour, r.outcome, r.class ORDER BY hour",
        )?;
        let rows = stmt.query_map([ts(since)], |r| {
            let Some(account) = AccountId::parse(&r.get::<_, String>(0)?) else {
                return Ok(None);
            };
            Ok(Some(HourCount {
                account,
                hour: r.get(1)?,
                outcome: r.get(2)?,
                class: r.get(3)?,
                count: r.get(4)?,
            }))
        })?;
        let mut out = Vec::new();
        for row in rows {
            out.extend(row?);
        }
        Ok(out)
    }
}

type MarkColumns = (u32, String, Option<u32>, Option<u32>);

fn read_mark(r: &rusqlite::Row<'_>) -> rusqlite::Result<MarkColumns> {
    Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
}
