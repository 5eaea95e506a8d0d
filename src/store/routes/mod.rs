//! Routes, their durable state, ownership leases, and the append-only
//! attempt history.
//!
//! [`Store::commit_transition`] is the only way a route's state changes: a
//! compare-and-set on (id, generation, state) inside one immediate
//! transaction, together with the attempt rows the transition writes. The
//! loser of a race gets the row as it is now.

use chrono::{DateTime, Utc};
use rusqlite::{params, OptionalExtension, Row, TransactionBehavior};

use super::{from_json, parse_ts, to_json, ts, Store, StoreError};
use crate::classification::Classification;
use crate::engine::pipeline::{CandidatePolicy, PendingOutcome, RouteCycle};
use crate::engine::{AttemptOutcome, Candidate, RouteState};
use crate::evidence::Evidence;
use crate::safety::EffectContext;

/// A route's durable state, as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct RouteRow {
    pub id: u32,
    pub profile_id: Option<u32>,
    pub profile_name: String,
    pub prompt: String,
    pub cwd: Option<String>,
    pub state: RouteState,
    pub generation: u32,
    pub candidate_index: u32,
    /// Snapshot taken at start; policies are refreshed by id at each decision.
    pub candidates: Vec<Candidate>,
    pub cycle: RouteCycle,
    pub classification: Option<Classification>,
    pub policy: Option<CandidatePolicy>,
    pub decision: Option<String>,
    pub deadline: Option<DateTime<Utc>>,
    pub pending_outcome: Option<PendingOutcome>,
    pub manual_reason: Option<String>,
    pub owner: Option<String>,
    pub lease_until: Option<DateTime<Utc>>,
    /// Attempts dispatched so far.
    pub attempts: u32,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// The first row of a route.
#[derive(Debug, Clone)]
pub struct NewRoute {
    pub profile_id: u32,
    pub profile_name: String,
    pub prompt: String,
    pub cwd: Option<String>,
    pub candidates: Vec<Candidate>,
    pub cycle: RouteCycle,
    pub candidate_index: u32,
    pub owner: String,
    pub lease_until: DateTime<Utc>,
    pub now: DateTime<Utc>,
}

/// An attempt about to be dispatched; written in the dispatching transition.
#[derive(Debug, Clone, PartialEq)]
pub struct AttemptRecord {
    pub number: u32,
    pub generation: u32,
    pub candidate_index: u32,
    pub candidate_id: u32,
    pub candidate_name: String,
    pub invocation_id: String,
    pub started_at: DateTime<Utc>,
}

/// How an attempt ended and what was decided about it.
#[derive(Debug, Clone, PartialEq)]
pub struct AttemptResultRecord {
    pub number: u32,
    pub finished_at: DateTime<Utc>,
    pub outcome: AttemptOutcome,
    pub classification: Option<Classification>,
    pub effect: Option<EffectContext>,
    pub policy_revision: Option<u32>,
    pub policy: Option<CandidatePolicy>,
    pub decision: Option<String>,
    pub evidence: Option<Evidence>,
    pub excerpt: Option<String>,
}

/// Everything one transition writes besides the route row.
#[derive(Debug, Clone, Default)]
pub struct TransitionWrite {
    pub dispatch: Option<AttemptRecord>,
    pub result: Option<AttemptResultRecord>,
}

/// The result of a compare-and-set.
#[derive(Debug, Clone, PartialEq)]
pub enum Cas {
    /// Committed; the row as stored now.
    Won(RouteRow),
    /// Another actor changed the route first; the row as it is now.
    Lost(RouteRow),
}

/// A route an engine means to take over, as it saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Claim<'a> {
    pub id: u32,
    pub expected_generation: u32,
    pub expected_owner: Option<&'a str>,
}

/// Routes changed since a point in the store's change sequence.
#[derive(Debug, Clone, PartialEq)]
pub struct RouteChanges {
    /// The changed routes, oldest change first.
    pub rows: Vec<RouteRow>,
    /// Pass this to the next call to see only later changes.
    pub seen: ChangeSeq,
}

/// A point in the store's route change sequence. Every insert and every
/// write of a route's state, generation or owner moves it forward; lease
/// renewals do not.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct ChangeSeq(i64);

/// Every route's current generation, read in one snapshot with the change
/// sequence point it reflects.
#[derive(Debug, Clone, PartialEq)]
pub struct Generations {
    /// `(route id, generation)`.
    pub routes: Vec<(u32, u32)>,
    pub seen: ChangeSeq,
}

/// A stored attempt joined with its result, if it has one.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredAttempt {
    pub attempt: AttemptRecord,
    pub result: Option<AttemptResultRecord>,
}

/// One route row as [`Store::routes_each`] read it: its id, and the row or
/// why it could not be read.
pub type RouteRead = (u32, Result<RouteRow, StoreError>);

/// The states in which a route has a pending timer or a running attempt.
const ACTIVE_STATES: &str = "('running', 'waiting_reset', 'retry_scheduled')";

const ROUTE_COLUMNS: &str = "id, profile_id, profile_name, prompt, cwd, state, generation, \
    candidate_index, candidates_json, cycle_json, classification_json, policy_json, decision, \
    deadline, pending_outcome, manual_reason, owner, lease_until, created_at, updated_at, \
    (SELECT COUNT(*) FROM attempts a WHERE a.route_id = routes.id)";

impl Store {
    /// Creates a route already `Running` its first attempt (generation 1),
    /// route and attempt in one transaction.
    pub fn insert_route(
        &mut self,
        r: &NewRoute,
        first_attempt: impl FnOnce(u32) -> AttemptRecord,
    ) -> Result<RouteRow, StoreError> {
        let tx = self
            .conn_mut()
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        tx.execute(
            "INSERT INTO routes (profile_id, profile_name, prompt, cwd, state, generation, \
             candidate_index, candidates_json, cycle_json, owner, lease_until, created_at, updated_at) \
             VALUES (?1, ?2, ?3, ?4, ?5, 1, ?6, ?7, ?8, ?9, ?10, ?11, ?11)",
            params![
                r.profile_id,
                r.profile_name,
                r.prompt,
                r.cwd,
                RouteState::Running.as_str(),
                r.candidate_index,
                to_json(&r.candidates),
                to_json(&r.cycle),
                r.owner,
                ts(r.lease_until),
                ts(r.now)
            ],
        )?;
        let id = tx.last_insert_rowid() as u32;
        insert_attempt(&tx, id, &first_attempt(id))?;
        let stored = read_route(&tx, id)?;
        tx.commit()?;
        stored.ok_or(StoreError::Malformed {
            what: "route",
            detail: format!("route {id} vanished after insert"),
        })
    }

    pub fn route(&self, id: u32) -> Result<Option<RouteRow>, StoreError> {
        read_route(self.conn(), id)
    }

    /// Routes with a pending timer or a running attempt whose owner is not
    /// `owner` (or that have none), newest first: the candidates for
    /// adoption. Finished routes are not read at all.
    pub fn active_routes_not_owned_by(&self, owner: &str) -> Result<Vec<RouteRow>, StoreError> {
        let sql = format!(
            "SELECT {ROUTE_COLUMNS} FROM routes \
             WHERE state IN {ACTIVE_STATES} AND owner IS NOT ?1 ORDER BY id DESC"
        );
        let mut stmt = self.conn().prepare_cached(&sql)?;
        let raws = stmt
            .query_map([owner], raw_route)?
            .collect::<Result<Vec<_>, _>>()?;
        raws.into_iter().map(RawRoute::parse).collect()
    }

    /// Routes with a pending timer or a running attempt owned by `owner`:
    /// what its heartbeat checks for overdue deadlines and lost reports.
    pub fn active_routes_owned_by(&self, owner: &str) -> Result<Vec<RouteRow>, StoreError> {
        let sql = format!(
            "SELECT {ROUTE_COLUMNS} FROM routes \
             WHERE state IN {ACTIVE_STATES} AND owner = ?1 ORDER BY id"
        );
        let mut stmt = self.conn().prepare_cached(&sql)?;
        let raws = stmt
            .query_map([owner], raw_route)?
            .collect::<Result<Vec<_>, _>>()?;
        raws.into_iter().map(RawRoute::parse).collect()
    }

    /// `(id, owner, lease_until)` of every route with a pending timer or a
    /// running attempt, newest first, without reading the rest of the rows.
    #[allow(clippy::type_complexity)]
    pub fn active_owners(
        &self,
    ) -> Result<Vec<(u32, Option<String>, Option<DateTime<Utc>>)>, StoreError> {
        let sql = format!(
            "SELECT id, owner, lease_until FROM routes WHERE state IN {ACTIVE_STATES} \
             ORDER BY id DESC"
        );
        let mut stmt = self.conn().prepare_cached(&sql)?;
        let raws = stmt
            .query_map([], |r| {
                Ok((
                    r.get::<_, u32>(0)?,
                    r.get::<_, Option<String>>(1)?,
                    r.get::<_, Option<String>>(2)?,
                ))
            })?
            .collect::<Result<Vec<_>, _>>()?;
        raws.into_iter()
            .map(|(id, owner, lease)| Ok((id, owner, opt_ts(lease)?)))
            .collect()
    }

    /// Routes inserted, or whose state, generation or owner was written,
    /// after `since` (by any connection), oldest change first.
    pub fn routes_changed_since(&self, since: ChangeSeq) -> Result<RouteChanges, StoreError> {
        let sql = format!(
            "SELECT {ROUTE_COLUMNS}, change_seq FROM routes \
             WHERE change_seq > ?1 ORDER BY change_seq"
        );
        let mut stmt = self.conn().prepare_cached(&sql)?;
        let mut seen = since;
        let raws = stmt
            .query_map([since.0], |r| {
                Ok((raw_route(r)?, r.get::<_, i64>(ROUTE_COLUMN_COUNT)?))
            })?
            .collect::<Result<Vec<_>, _>>()?;
        let mut rows = Vec::with_capacity(raws.len());
        for (raw, seq) in raws {
            seen = seen.max(ChangeSeq(seq));
            rows.push(raw.parse()?);
        }
        Ok(RouteChanges { rows, seen })
    }

    /// Every route's generation and the change sequence point they reflect,
    /// without reading the rest of the rows.
    pub fn generations(&self) -> Result<Generations, StoreError> {
        let mut stmt = self
            .conn()
            .prepare_cached("SELECT id, generation, change_seq FROM routes")?;
        let mut seen = ChangeSeq::default();
        let mut routes = Vec::new();
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            routes.push((r.get(0)?, r.get(1)?));
            seen = seen.max(ChangeSeq(r.get(2)?));
        }
        Ok(Generations { routes, seen })
    }

    /// Newest first.
    pub fn routes(&self) -> Result<Vec<RouteRow>, StoreError> {
        let sql = format!("SELECT {ROUTE_COLUMNS} FROM routes ORDER BY id DESC");
        let mut stmt = self.conn().prepare(&sql)?;
        let raws = stmt
            .query_map([], raw_route)?
            .collect::<Result<Vec<_>, _>>()?;
        raws.into_iter().map(RawRoute::parse).collect()
    }

    /// Newest first, each row read on its own: a row whose columns or JSON
    /// cannot be read is its id with the error, and the others are still
    /// read. Damage below the rows (a broken page) still fails the whole
    /// read.
    pub fn routes_each(&self) -> Result<Vec<RouteRead>, StoreError> {
        let sql = format!("SELECT {ROUTE_COLUMNS} FROM routes ORDER BY id DESC");
        let mut stmt = self.conn().prepare(&sql)?;
        let mut rows = stmt.query([])?;
        let mut out = Vec::new();
        while let Some(r) = rows.next()? {
            let id: u32 = r.get(0)?;
            let row = raw_route(r)
                .map_err(|e| unreadable_column("route", e))
                .and_then(RawRoute::parse);
            out.push((id, row));
        }
        Ok(out)
    }

    /// Compare-and-set: writes `next` (with generation + 1) only if the route
    /// is still at `expected_generation` in `expected_state`.
    pub fn commit_transition(
        &mut self,
        expected_generation: u32,
        expected_state: RouteState,
        next: &RouteRow,
        write: &TransitionWrite,
    ) -> Result<Cas, StoreError> {
        let tx = self
            .conn_mut()
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let changed = update_route(&tx, expected_generation, expected_state, next)?;
        if changed == 0 {
            drop(tx);
            let current = self.route(next.id)?.ok_or(StoreError::Malformed {
                what: "route",
                detail: format!("route {} does not exist", next.id),
            })?;
            return Ok(Cas::Lost(current));
        }
        if let Some(a) = &write.dispatch {
            insert_attempt(&tx, next.id, a)?;
        }
        if let Some(r) = &write.result {
            insert_result(&tx, next.id, r)?;
        }
        // Read back inside the transaction: the row as committed, without
        // opening another read.
        let stored = read_route(&tx, next.id)?;
        tx.commit()?;
        let stored = stored.ok_or(StoreError::Malformed {
            what: "route",
            detail: format!("route {} vanished after commit", next.id),
        })?;
        Ok(Cas::Won(stored))
    }

    /// Records how an attempt ended when its route has moved on (stopped,
    /// superseded). At most once per attempt; a second call is ignored.
    /// Stores the process (pid and kernel start time) attempt `number` of
    /// route `route_id` runs in.
    pub fn set_attempt_process(
        &self,
        route_id: u32,
        number: u32,
        pid: u32,
        start: u64,
    ) -> Result<(), StoreError> {
        let start = i64::try_from(start).unwrap_or(i64::MAX);
        self.conn().execute(
            "INSERT INTO attempt_processes (attempt_id, pid, pid_start) \
             SELECT id, ?3, ?4 FROM attempts WHERE route_id = ?1 AND number = ?2",
            rusqlite::params![route_id, number, pid, start],
        )?;
        Ok(())
    }

    /// The process of route `route_id`'s latest attempt, when it was stored.
    pub fn latest_attempt_process(&self, route_id: u32) -> Result<Option<(u32, u64)>, StoreError> {
        let found = self
            .conn()
            .query_row(
                "SELECT p.pid, p.pid_start FROM attempts a \
                 LEFT JOIN attempt_processes p ON p.attempt_id = a.id \
                 WHERE a.route_id = ?1 ORDER BY a.number DESC LIMIT 1",
                [route_id],
                |r| Ok((r.get::<_, Option<u32>>(0)?, r.get::<_, Option<i64>>(1)?)),
            )
            .optional()?;
        Ok(match found {
            Some((Some(pid), Some(start))) => Some((pid, u64::try_from(start).unwrap_or(0))),
            _ => None,
        })
    }

    pub fn record_late_result(
        &self,
        route_id: u32,
        result: &AttemptResultRecord,
    ) -> Result<(), StoreError> {
        insert_result(self.conn(), route_id, result)
    }

    pub fn attempts(&self, route_id: u32) -> Result<Vec<StoredAttempt>, StoreError> {
        let mut stmt = self.conn().prepare_cached(
            "SELECT a.number, a.generation, a.candidate_index, a.candidate_id, a.candidate_name, \
             a.invocation_id, a.started_at, r.finished_at, r.outcome, r.classification_json, \
             r.effect_json, r.policy_revision, r.policy_json, r.decision, r.evidence_json, r.excerpt \
             FROM attempts a LEFT JOIN attempt_results r ON r.attempt_id = a.id \
             WHERE a.route_id = ?1 ORDER BY a.number",
        )?;
        let raws = stmt
            .query_map([route_id], raw_attempt)?
            .collect::<Result<Vec<_>, _>>()?;
        raws.into_iter().map(RawAttempt::parse).collect()
    }

    /// Attempts of `candidate_index` in this route so far.
    pub fn candidate_attempts(
        &self,
        route_id: u32,
        candidate_index: u32,
    ) -> Result<u32, StoreError> {
        Ok(self
            .conn()
            .prepare_cached(
                "SELECT COUNT(*) FROM attempts WHERE route_id = ?1 AND candidate_index = ?2",
            )?
            .query_row(params![route_id, candidate_index], |r| r.get(0))?)
    }

    /// Results classified unclassified, newest first, with their route.
    pub fn unclassified_results(&self) -> Result<Vec<(u32, StoredAttempt)>, StoreError> {
        let mut stmt = self.conn().prepare(
            "SELECT a.route_id FROM attempts a JOIN attempt_results r ON r.attempt_id = a.id \
             WHERE r.class = 'unclassified' GROUP BY a.route_id ORDER BY a.route_id DESC",
        )?;
        let routes = stmt
            .query_map([], |r| r.get::<_, u32>(0))?
            .collect::<Result<Vec<_>, _>>()?;
        let mut out = Vec::new();
        for route_id in routes {
            for a in self.attempts(route_id)? {
                let unclassified = a
                    .result
                    .as_ref()
                    .and_then(|r| r.classification.as_ref())
                    .is_some_and(|c| c.class == crate::classification::Class::Unclassified);
                if unclassified {
                    out.push((route_id, a));
                }
            }
        }
        Ok(out)
    }

    /// Extends every lease `owner` holds.
    pub fn renew_leases(&self, owner: &str, until: DateTime<Utc>) -> Result<(), StoreError> {
        self.conn()
            .prepare_cached("UPDATE routes SET lease_until = ?2 WHERE owner = ?1")?
            .execute(params![owner, ts(until)])?;
        Ok(())
    }

    /// Takes ownership if the route still has `expected_owner` at
    /// `expected_generation`; `false` when someone else changed it first.
    pub fn take_ownership(
        &self,
        id: u32,
        expected_generation: u32,
        expected_owner: Option<&str>,
        owner: &str,
        until: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        let claim = Claim {
            id,
            expected_generation,
            expected_owner,
        };
        let taken = self.take_ownerships(&[claim], owner, until)?;
        Ok(taken == [true])
    }

    /// [`Store::take_ownership`] of many routes in one transaction (one
    /// commit for a whole restart's adoptions); one answer per claim, in
    /// order. Each claim is still its own compare-and-set.
    pub fn take_ownerships(
        &self,
        claims: &[Claim<'_>],
        owner: &str,
        until: DateTime<Utc>,
    ) -> Result<Vec<bool>, StoreError> {
        let tx = rusqlite::Transaction::new_unchecked(self.conn(), TransactionBehavior::Immediate)?;
        let until = ts(until);
        let mut taken = Vec::with_capacity(claims.len());
        {
            let mut stmt = tx.prepare_cached(
                "UPDATE routes SET owner = ?4, lease_until = ?5 \
                 WHERE id = ?1 AND generation = ?2 AND owner IS ?3",
            )?;
            for c in claims {
                let n = stmt.execute(params![
                    c.id,
                    c.expected_generation,
                    c.expected_owner,
                    owner,
                    until
                ])?;
                taken.push(n == 1);
            }
        }
        tx.commit()?;
        Ok(taken)
    }

    /// Gives up ownership of routes that need no owner any more.
    pub fn release_ownership(&self, owner: &str) -> Result<(), StoreError> {
        self.conn().execute(
            "UPDATE routes SET owner = NULL, lease_until = NULL WHERE owner = ?1",
            [owner],
        )?;
        Ok(())
    }

    /// Changes whenever another connection commits (`PRAGMA data_version`).
    pub fn data_version(&self) -> Result<i64, StoreError> {
        Ok(self
            .conn()
            .query_row("PRAGMA data_version", [], |r| r.get(0))?)
    }
}

/// Number of columns in [`ROUTE_COLUMNS`].
const ROUTE_COLUMN_COUNT: usize = 21;

fn read_route(conn: &rusqlite::Connection, id: u32) -> Result<Option<RouteRow>, StoreError> {
    let sql = format!("SELECT {ROUTE_COLUMNS} FROM routes WHERE id = ?1");
    let raw = conn
        .prepare_cached(&sql)?
        .query_row([id], raw_route)
        .optional()
        .map_err(|e| unreadable_column("route", e))?;
    raw.map(RawRoute::parse).transpose()
}

/// A stored value of the wrong type (text where a number belongs, say) is a
/// malformed row, not a database error.
fn unreadable_column(what: &'static str, e: rusqlite::Error) -> StoreError {
    match e {
        rusqlite::Error::InvalidColumnType(..)
        | rusqlite::Error::FromSqlConversionFailure(..)
        | rusqlite::Error::IntegralValueOutOfRange(..) => StoreError::Malformed {
            what,
            detail: e.to_string(),
        },
        other => StoreError::Sqlite(other),
    }
}

fn update_route(
    tx: &rusqlite::Transaction<'_>,
    expected_generation: u32,
    expected_state: RouteState,
    next: &RouteRow,
) -> Result<usize, StoreError> {
    Ok(tx.prepare_cached(
        "UPDATE routes SET state = ?4, generation = ?2 + 1, candidate_index = ?5, cycle_json = ?6, \
         classification_json = ?7, policy_json = ?8, decision = ?9, deadline = ?10, \
         pending_outcome = ?11, manual_reason = ?12, owner = ?13, lease_until = ?14, updated_at = ?15 \
         WHERE id = ?1 AND generation = ?2 AND state = ?3",
    )?
    .execute(params![
            next.id,
            expected_generation,
            expected_state.as_str(),
            next.state.as_str(),
            next.candidate_index,
            to_json(&next.cycle),
            next.classification.as_ref().map(to_json),
            next.policy.as_ref().map(to_json),
            next.decision,
            next.deadline.map(ts),
            next.pending_outcome.map(PendingOutcome::as_str),
            next.manual_reason,
            next.owner,
            next.lease_until.map(ts),
            ts(next.updated_at)
        ])?)
}

fn insert_attempt(
    tx: &rusqlite::Transaction<'_>,
    route_id: u32,
    a: &AttemptRecord,
) -> Result<(), StoreError> {
    tx.prepare_cached(
        "INSERT INTO attempts (route_id, number, generation, candidate_index, candidate_id, \
         candidate_name, invocation_id, started_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    )?
    .execute(params![
        route_id,
        a.number,
        a.generation,
        a.candidate_index,
        a.candidate_id,
        a.candidate_name,
        a.invocation_id,
        ts(a.started_at)
    ])?;
    Ok(())
}

fn insert_result(
    conn: &rusqlite::Connection,
    route_id: u32,
    r: &AttemptResultRecord,
) -> Result<(), StoreError> {
    let class = r.classification.as_ref().map(|c| c.class.as_str());
    conn.prepare_cached(
        "INSERT OR IGNORE INTO attempt_results (attempt_id, finished_at, outcome, code, class, \
         rule_id, catalogue_version, classification_json, effect_json, policy_revision, policy_json, \
         decision, evidence_json, excerpt) \
         SELECT id, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15 \
         FROM attempts WHERE route_id = ?1 AND number = ?2",
    )?
    .execute(params![
            route_id,
            r.number,
            ts(r.finished_at),
            r.outcome.as_str(),
            r.classification.as_ref().map(|c| c.code.as_str()),
            class,
            r.classification.as_ref().and_then(|c| c.rule_id.clone()),
            r.classification.as_ref().map(|c| c.catalogue_version.clone()),
            r.classification.as_ref().map(to_json),
            r.effect.as_ref().map(to_json),
            r.policy_revision,
            r.policy.as_ref().map(to_json),
            r.decision,
            r.evidence.as_ref().map(to_json),
            r.excerpt
        ])?;
    Ok(())
}

/// Column values before parsing, so parse errors surface as [`StoreError`].
struct RawRoute {
    id: u32,
    profile_id: Option<u32>,
    profile_name: String,
    prompt: String,
    cwd: Option<String>,
    state: String,
    generation: u32,
    candidate_index: u32,
    candidates: String,
    cycle: String,
    classification: Option<String>,
    policy: Option<String>,
    decision: Option<String>,
    deadline: Option<String>,
    pending_outcome: Option<String>,
    manual_reason: Option<String>,
    owner: Option<String>,
    lease_until: Option<String>,
    created_at: String,
    updated_at: String,
    attempts: u32,
}

fn raw_route(r: &Row<'_>) -> rusqlite::Result<RawRoute> {
    Ok(RawRoute {
        id: r.get(0)?,
        profile_id: r.get(1)?,
        profile_name: r.get(2)?,
        prompt: r.get(3)?,
        cwd: r.get(4)?,
        state: r.get(5)?,
        generation: r.get(6)?,
        candidate_index: r.get(7)?,
        candidates: r.get(8)?,
        cycle: r.get(9)?,
        classification: r.get(10)?,
        policy: r.get(11)?,
        decision: r.get(12)?,
        deadline: r.get(13)?,
        pending_outcome: r.get(14)?,
        manual_reason: r.get(15)?,
        owner: r.get(16)?,
        lease_until: r.get(17)?,
        created_at: r.get(18)?,
        updated_at: r.get(19)?,
        attempts: r.get(20)?,
    })
}

fn opt_ts(s: Option<String>) -> Result<Option<DateTime<Utc>>, StoreError> {
    s.as_deref().map(parse_ts).transpose()
}

fn opt_json<T: serde::de::DeserializeOwned>(
    what: &'static str,
    s: Option<String>,
) -> Result<Option<T>, StoreError> {
    s.as_deref().map(|s| from_json(what, s)).transpose()
}

impl RawRoute {
    fn parse(self) -> Result<RouteRow, StoreError> {
        let state = RouteState::parse(&self.state).ok_or(StoreError::Malformed {
            what: "route state",
            detail: self.state.clone(),
        })?;
        let pending_outcome = match self.pending_outcome.as_deref() {
            Some(s) => Some(PendingOutcome::parse(s).ok_or(StoreError::Malformed {
                what: "pending outcome",
                detail: s.to_string(),
            })?),
            None => None,
        };
        Ok(RouteRow {
            id: self.id,
            profile_id: self.profile_id,
            profile_name: self.profile_name,
            prompt: self.prompt,
            cwd: self.cwd,
            state,
            generation: self.generation,
            candidate_index: self.candidate_index,
            candidates: from_json("route candidates", &self.candidates)?,
            cycle: from_json("route cycle", &self.cycle)?,
            classification: opt_json("route classification", self.classification)?,
            policy: opt_json("route policy", self.policy)?,
            decision: self.decision,
            deadline: opt_ts(self.deadline)?,
            pending_outcome,
            manual_reason: self.manual_reason,
            owner: self.owner,
            lease_until: opt_ts(self.lease_until)?,
            attempts: self.attempts,
            created_at: parse_ts(&self.created_at)?,
            updated_at: parse_ts(&self.updated_at)?,
        })
    }
}

struct RawAttempt {
    number: u32,
    generation: u32,
    candidate_index: u32,
    candidate_id: u32,
    candidate_name: String,
    invocation_id: String,
    started_at: String,
    finished_at: Option<String>,
    outcome: Option<String>,
    classification: Option<String>,
    effect: Option<String>,
    policy_revision: Option<u32>,
    policy: Option<String>,
    decision: Option<String>,
    evidence: Option<String>,
    excerpt: Option<String>,
}

fn raw_attempt(r: &Row<'_>) -> rusqlite::Result<RawAttempt> {
    Ok(RawAttempt {
        number: r.get(0)?,
        generation: r.get(1)?,
        candidate_index: r.get(2)?,
        candidate_id: r.get(3)?,
        candidate_name: r.get(4)?,
        invocation_id: r.get(5)?,
        started_at: r.get(6)?,
        finished_at: r.get(7)?,
        outcome: r.get(8)?,
        classification: r.get(9)?,
        effect: r.get(10)?,
        policy_revision: r.get(11)?,
        policy: r.get(12)?,
        decision: r.get(13)?,
        evidence: r.get(14)?,
        excerpt: r.get(15)?,
    })
}

impl RawAttempt {
    fn parse(self) -> Result<StoredAttempt, StoreError> {
        let attempt = AttemptRecord {
            number: self.number,
            generation: self.generation,
            candidate_index: self.candidate_index,
            candidate_id: self.candidate_id,
            candidate_name: self.candidate_name,
            invocation_id: self.invocation_id,
            started_at: parse_ts(&self.started_at)?,
        };
        let (Some(finished), Some(outcome)) = (self.finished_at, self.outcome) else {
            return Ok(StoredAttempt {
                attempt,
                result: None,
            });
        };
        let outcome = AttemptOutcome::parse(&outcome).ok_or(StoreError::Malformed {
            what: "attempt outcome",
            detail: outcome.clone(),
        })?;
        let result = AttemptResultRecord {
            number: self.number,
            finished_at: parse_ts(&finished)?,
            outcome,
            classification: opt_json("attempt classification", self.classification)?,
            effect: opt_json("attempt effect", self.effect)?,
            policy_revision: self.policy_revision,
            policy: opt_json("attempt policy", self.policy)?,
            decision: self.decision,
            evidence: opt_json("attempt evidence", self.evidence)?,
            excerpt: self.excerpt,
        };
        Ok(StoredAttempt {
            attempt,
            result: Some(result),
        })
    }
}

#[cfg(test)]
mod tests {
    use chrono::Duration;
    use rusqlite::Connection;

    use super::*;
    use crate::engine::{pipeline, route};
    use crate::store::MIGRATIONS;

    fn now() -> DateTime<Utc> {
        "2026-12-02T12:00:00Z".parse().unwrap()
    }

    fn running_route(store: &mut Store, owner: &str) -> RouteRow {
        let new = NewRoute {
            profile_id: 1,
            profile_name: "p".into(),
            prompt: "do it".into(),
            cwd: None,
            candidates: Vec::new(),
            cycle: pipeline::new_cycle(0),
            candidate_index: 0,
            owner: owner.to_string(),
            lease_until: now() + Duration::seconds(15),
            now: now(),
        };
        store
            .insert_route(&new, |id| AttemptRecord {
                number: 1,
                generation: 1,
                candidate_index: 0,
                candidate_id: 1,
                candidate_name: "c".into(),
                invocation_id: format!("r{id}-a1-{owner}"),
                started_at: now(),
            })
            .unwrap()
    }

    fn commit(store: &mut Store, plan: route::Plan) -> RouteRow {
        match store
            .commit_transition(
                plan.expected_generation,
                plan.expected_state,
                &plan.next,
                &plan.write,
            )
            .unwrap()
        {
            Cas::Won(row) => row,
            Cas::Lost(row) => panic!("no other writer, yet route {} moved", row.id),
        }
    }

    fn ids(rows: &[RouteRow]) -> Vec<u32> {
        rows.iter().map(|r| r.id).collect()
    }

    /// Opens the database in `dir`, creating profile 1 if it has none.
    fn open(dir: &tempfile::TempDir) -> Store {
        let store = Store::open(&dir.path().join("r.db")).unwrap();
        if store.profile_count().unwrap() == 0 {
            store.create_profile("p", now()).unwrap();
        }
        store
    }

    #[test]
    fn changes_since_a_mark_are_only_routes_written_after_it_by_any_connection() {
        let dir = tempfile::tempdir().unwrap();
        let mut a = open(&dir);
        let mut b = open(&dir);
        let first = running_route(&mut a, "me");
        let second = running_route(&mut a, "me");
        let mark = a.generations().unwrap();
        assert_eq!(
            mark.routes,
            vec![(first.id, 1), (second.id, 1)],
            "every route's generation"
        );
        let done = commit(&mut b, route::succeeded(&second, 1, now()));
        let third = running_route(&mut b, "other");
        let changes = a.routes_changed_since(mark.seen).unwrap();
        assert_eq!(
            ids(&changes.rows),
            vec![second.id, third.id],
            "the route written by the other connection, then the new one"
        );
        assert_eq!(changes.rows[0], done, "rows are read in full");
        let again = a.routes_changed_since(changes.seen).unwrap();
        assert!(again.rows.is_empty(), "nothing changed after the new mark");
        assert_eq!(again.seen, changes.seen, "an empty read keeps the mark");
    }

    #[test]
    fn lease_renewal_is_not_a_change_but_an_owner_change_is() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = open(&dir);
        let row = running_route(&mut store, "me");
        let mark = store.generations().unwrap().seen;
        store
            .renew_leases("me", now() + Duration::seconds(30))
            .unwrap();
        assert!(
            store.routes_changed_since(mark).unwrap().rows.is_empty(),
            "renewing a lease changes nothing another engine acts on"
        );
        let taken = store
            .take_ownership(row.id, 1, Some("me"), "other", now())
            .unwrap();
        assert!(taken);
        let changed = store.routes_changed_since(mark).unwrap();
        assert_eq!(ids(&changed.rows), vec![row.id]);
        assert_eq!(changed.rows[0].owner.as_deref(), Some("other"));
    }

    #[test]
    fn adoption_candidates_are_active_routes_of_other_owners_newest_first() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = open(&dir);
        let _mine = running_route(&mut store, "me");
        let theirs = running_route(&mut store, "other");
        let finished = running_route(&mut store, "other");
        commit(&mut store, route::succeeded(&finished, 1, now()));
        let unowned = running_route(&mut store, "other");
        store.release_ownership("other").unwrap();
        let found = store.active_routes_not_owned_by("me").unwrap();
        assert_eq!(
            ids(&found),
            vec![unowned.id, theirs.id],
            "own and finished routes are left out; a route with no owner is included"
        );
    }

    #[test]
    fn batch_takeover_takes_only_routes_still_as_claimed() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = open(&dir);
        let a = running_route(&mut store, "gone");
        let b = running_route(&mut store, "gone");
        let c = running_route(&mut store, "gone");
        let claim = |row: &RouteRow, generation| Claim {
            id: row.id,
            expected_generation: generation,
            expected_owner: Some("gone"),
        };
        let taken = store
            .take_ownerships(
                &[claim(&a, 1), claim(&b, 2), claim(&c, 1)],
                "me",
                now() + Duration::seconds(15),
            )
            .unwrap();
        assert_eq!(
            taken,
            vec![true, false, true],
            "a claim made at another generation is refused"
        );
        let owners: Vec<Option<String>> = [a.id, b.id, c.id]
            .iter()
            .map(|id| store.route(*id).unwrap().unwrap().owner)
            .collect();
        assert_eq!(
            owners,
            vec![Some("me".into()), Some("gone".into()), Some("me".into())]
        );
    }

    #[test]
    fn upgrade_numbers_existing_routes_as_changes_in_id_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.db");
        {
            let c = Connection::open(&path).unwrap();
            c.execute_batch(MIGRATIONS[0].1).unwrap();
            c.pragma_update(None, "user_version", 1).unwrap();
            for id in [1, 2] {
                c.execute(
                    "INSERT INTO routes (id, profile_name, prompt, state, generation, \
                     candidate_index, candidates_json, cycle_json, created_at, updated_at) \
                     VALUES (?1, 'p', 'x', 'succeeded', 3, 0, '[]', ?2, ?3, ?3)",
                    params![id, to_json(&pipeline::new_cycle(0)), ts(now())],
                )
                .unwrap();
            }
        }
        let mut store = open(&dir);
        let all = store.routes_changed_since(ChangeSeq::default()).unwrap();
        assert_eq!(ids(&all.rows), vec![1, 2], "existing routes in id order");
        assert_eq!(all.seen, store.generations().unwrap().seen);
        let new = running_route(&mut store, "me");
        let after = store.routes_changed_since(all.seen).unwrap();
        assert_eq!(
            ids(&after.rows),
            vec![new.id],
            "a route inserted after the upgrade comes after them"
        );
    }
}
