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

/// A stored attempt joined with its result, if it has one.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredAttempt {
    pub attempt: AttemptRecord,
    pub result: Option<AttemptResultRecord>,
}

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
        tx.commit()?;
        self.route(id)?.ok_or(StoreError::Malformed {
            what: "route",
            detail: format!("route {id} vanished after insert"),
        })
    }

    pub fn route(&self, id: u32) -> Result<Option<RouteRow>, StoreError> {
        let sql = format!("SELECT {ROUTE_COLUMNS} FROM routes WHERE id = ?1");
        let raw = self.conn().query_row(&sql, [id], raw_route).optional()?;
        raw.map(RawRoute::parse).transpose()
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
        tx.commit()?;
        let stored = self.route(next.id)?.ok_or(StoreError::Malformed {
            what: "route",
            detail: format!("route {} vanished after commit", next.id),
        })?;
        Ok(Cas::Won(stored))
    }

    /// Records how an attempt ended when its route has moved on (stopped,
    /// superseded). At most once per attempt; a second call is ignored.
    pub fn record_late_result(
        &self,
        route_id: u32,
        result: &AttemptResultRecord,
    ) -> Result<(), StoreError> {
        insert_result(self.conn(), route_id, result)
    }

    pub fn attempts(&self, route_id: u32) -> Result<Vec<StoredAttempt>, StoreError> {
        let mut stmt = self.conn().prepare(
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
        Ok(self.conn().query_row(
            "SELECT COUNT(*) FROM attempts WHERE route_id = ?1 AND candidate_index = ?2",
            params![route_id, candidate_index],
            |r| r.get(0),
        )?)
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
        self.conn().execute(
            "UPDATE routes SET lease_until = ?2 WHERE owner = ?1",
            params![owner, ts(until)],
        )?;
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
        let n = self.conn().execute(
            "UPDATE routes SET owner = ?4, lease_until = ?5 \
             WHERE id = ?1 AND generation = ?2 AND owner IS ?3",
            params![id, expected_generation, expected_owner, owner, ts(until)],
        )?;
        Ok(n == 1)
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

fn update_route(
    tx: &rusqlite::Transaction<'_>,
    expected_generation: u32,
    expected_state: RouteState,
    next: &RouteRow,
) -> Result<usize, StoreError> {
    Ok(tx.execute(
        "UPDATE routes SET state = ?4, generation = ?2 + 1, candidate_index = ?5, cycle_json = ?6, \
         classification_json = ?7, policy_json = ?8, decision = ?9, deadline = ?10, \
         pending_outcome = ?11, manual_reason = ?12, owner = ?13, lease_until = ?14, updated_at = ?15 \
         WHERE id = ?1 AND generation = ?2 AND state = ?3",
        params![
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
        ],
    )?)
}

fn insert_attempt(
    tx: &rusqlite::Transaction<'_>,
    route_id: u32,
    a: &AttemptRecord,
) -> Result<(), StoreError> {
    tx.execute(
        "INSERT INTO attempts (route_id, number, generation, candidate_index, candidate_id, \
         candidate_name, invocation_id, started_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        params![
            route_id,
            a.number,
            a.generation,
            a.candidate_index,
            a.candidate_id,
            a.candidate_name,
            a.invocation_id,
            ts(a.started_at)
        ],
    )?;
    Ok(())
}

fn insert_result(
    conn: &rusqlite::Connection,
    route_id: u32,
    r: &AttemptResultRecord,
) -> Result<(), StoreError> {
    let class = r.classification.as_ref().map(|c| c.class.as_str());
    conn.execute(
        "INSERT OR IGNORE INTO attempt_results (attempt_id, finished_at, outcome, code, class, \
         rule_id, catalogue_version, classification_json, effect_json, policy_revision, policy_json, \
         decision, evidence_json, excerpt) \
         SELECT id, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15 \
         FROM attempts WHERE route_id = ?1 AND number = ?2",
        params![
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
        ],
    )?;
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
