//! Routes, their durable state, ownership leases, and the append-only
//! attempt history, one module per concern: the route row itself (here),
//! the compare-and-set that changes it ([`cas`]), attempts ([`attempts`]),
//! the manual actions of its history ([`actions`]),
//! ownership leases ([`leases`]) and the change feed ([`changes`]).
//!
//! [`Store::commit_transition`] is the only way a route's state changes: a
//! compare-and-set on (id, generation, state) inside one immediate
//! transaction, together with the attempt rows the transition writes. The
//! loser of a race gets the row as it is now.

mod actions;
mod attempts;
mod cas;
mod changes;
mod housekeeping;
mod leases;

pub(crate) use leases::lease_until_sql;
mod snapshots;
mod transcripts;

use chrono::{DateTime, Utc};
use rusqlite::{params, OptionalExtension, Row, TransactionBehavior};

use super::{from_json, parse_ts, to_json, ts, Store, StoreError};
use crate::policy::Exhausted;
use crate::route::machine::Plan;
use crate::route::{Decided, HoldReason, NewRoute, RouteRecord, RouteRow, RouteState};

pub use actions::StoredAction;
pub use attempts::StoredAttempt;
pub use cas::{Batch, Cas};
pub use changes::{ChangeSeq, Generations, RouteChanges};
pub use housekeeping::{PruneCount, RouteScope};
pub use leases::{Claim, OwnedRoute};

/// The text search of [`Store::routes_page`]: a route matches when its id
/// is the text (as a number) or its profile name or prompt contains it,
/// ignoring ASCII case. Empty text matches every route.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RouteSearch {
    id: Option<i64>,
    /// `%text%` with `%`, `_` and `\` escaped, so they match themselves.
    pattern: Option<String>,
}

impl RouteSearch {
    pub fn new(text: &str) -> RouteSearch {
        let text = text.trim();
        if text.is_empty() {
            return RouteSearch::default();
        }
        let mut pattern = String::from("%");
        for c in text.chars() {
            if matches!(c, '%' | '_' | '\\') {
                pattern.push('\\');
            }
            pattern.push(c);
        }
        pattern.push('%');
        RouteSearch {
            id: text.trim_start_matches('#').parse().ok(),
            pattern: Some(pattern),
        }
    }
}

/// One route row as [`Store::routes_each`] read it: its id, and the row or
/// why it could not be read.
pub type RouteRead = (u32, Result<RouteRow, StoreError>);

/// What every read of a whole route selects; [`RawRoute::read`] takes the
/// columns by these names.
/// The failed candidate is the one of the latest failed attempt or held
/// dispatch (an attempt wins a tie: it was dispatched after the hold).
/// The candidate snapshot is in `route_snapshots`, written once per route
/// (migration 0010); the lease is the route's own or its owner's
/// ([`leases::lease_until_sql`]).
const ROUTE_COLUMNS: &str = concat!(
    "id, profile_id, profile_name, prompt, cwd, state, generation, \
    candidate_index, \
    (SELECT s.candidates_json FROM route_snapshots s WHERE s.route_id = routes.id) \
      AS candidates_json, cycle_json, classification_json, policy_json, decision, \
    decision_json, deadline, pending_outcome, manual_reason, manual_reason_code, manual_reason_json, \
    owner, ",
    lease_until_sql!(),
    " AS lease_until, created_at, updated_at, queued_json, archived_at, \
    (SELECT COUNT(*) FROM attempts a WHERE a.route_id = routes.id) AS attempts, \
    (SELECT candidate_index FROM ( \
       SELECT a.candidate_index, a.generation AS g, 1 AS k FROM attempts a \
       JOIN attempt_results r ON r.attempt_id = a.id \
       WHERE a.route_id = routes.id AND r.outcome = 'failed' \
       UNION ALL SELECT h.candidate_index, h.generation, 0 FROM dispatch_holds h \
       WHERE h.route_id = routes.id) ORDER BY g DESC, k DESC LIMIT 1) AS failed_candidate"
);

impl Store {
    /// Creates a route queued at generation 0 and, in the same transaction,
    /// commits `first` (its first dispatch, [`crate::route::machine::released`],
    /// planned from the row as inserted): nothing of the route is written
    /// unless the plan commits. `None` leaves it queued.
    pub fn create_route(
        &mut self,
        r: &NewRoute,
        first: impl FnOnce(&RouteRow) -> Option<Plan>,
    ) -> Result<Cas, StoreError> {
        let tx = self
            .conn_mut()
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let account = r
            .candidates
            .get(r.candidate_index as usize)
            .and_then(|c| c.account.as_ref().map(|a| a.as_str().to_string()));
        tx.execute(
            // The number after every route there has been, never one a
            // deleted route had (migration 0016).
            "INSERT INTO routes (id, profile_id, profile_name, prompt, cwd, state, generation, \
             candidate_index, cycle_json, owner, lease_until, created_at, updated_at, account) \
             VALUES ((SELECT last + 1 FROM route_ids), ?1, ?2, ?3, ?4, ?5, 0, ?6, ?7, ?8, ?9, \
             ?10, ?10, ?11)",
            params![
                r.profile_id,
                r.profile_name,
                r.prompt,
                r.cwd,
                RouteState::Queued.as_str(),
                r.candidate_index,
                to_json(&r.cycle),
                r.owner,
                ts(r.lease_until),
                ts(r.now),
                account
            ],
        )?;
        let id = tx.last_insert_rowid() as u32;
        tx.prepare_cached(
            "INSERT INTO route_snapshots (route_id, candidates_json) VALUES (?1, ?2)",
        )?
        .execute(params![id, snapshots::snapshot_json(&r.candidates)])?;
        let inserted = read_route(&tx, id)?.ok_or(StoreError::Malformed {
            what: "route",
            detail: format!("route {id} vanished after insert"),
        })?;
        if let Some(plan) = first(&inserted) {
            match cas::apply(&tx, &plan)? {
                cas::Applied::Done => {}
                cas::Applied::WorldChanged => return Ok(Cas::WorldChanged(inserted)),
                cas::Applied::Moved => {
                    return Err(StoreError::Malformed {
                        what: "route",
                        detail: format!("route {id} moved while it was being created"),
                    })
                }
            }
        }
        let stored = read_route(&tx, id)?;
        tx.commit()?;
        stored.map(Cas::Won).ok_or(StoreError::Malformed {
            what: "route",
            detail: format!("route {id} vanished after insert"),
        })
    }

    pub fn route(&self, id: u32) -> Result<Option<RouteRow>, StoreError> {
        read_route(self.conn(), id)
    }

    /// Newest first.
    pub fn routes(&self) -> Result<Vec<RouteRow>, StoreError> {
        self.select_routes("ORDER BY id DESC", [])
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
            let id: u32 = r.get("id")?;
            let row = RawRoute::read(r)
                .map_err(|e| unreadable_column("route", e))
                .and_then(RawRoute::parse);
            out.push((id, row));
        }
        Ok(out)
    }

    /// One page of the route list, newest first: at most `limit` routes
    /// with an id below `before`, in one of `states` (every state when
    /// empty), matching `search` (see [`RouteSearch`]). Only the page's rows
    /// are read and parsed, so a page costs about the same with 100 000
    /// routes: see [`page_sql`] for the indexes each query uses.
    pub fn routes_page(
        &self,
        scope: RouteScope,
        states: &[RouteState],
        search: &RouteSearch,
        before: Option<u32>,
        limit: u32,
    ) -> Result<Vec<RouteRow>, StoreError> {
        let before = before.map_or(i64::MAX, i64::from);
        self.select_routes(
            &page_sql(scope, states, search),
            params![before, search.id, search.pattern, limit],
        )
    }

    /// How many routes of `scope` are in each state (states with none are
    /// left out); counted from the `routes_by_archive` index, no row is read.
    pub fn state_counts(&self, scope: RouteScope) -> Result<Vec<(RouteState, u32)>, StoreError> {
        let mut stmt = self.conn().prepare_cached(&counts_sql(scope))?;
        let rows = stmt
            .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, u32>(1)?)))?
            .collect::<Result<Vec<_>, _>>()?;
        rows.into_iter()
            .map(|(state, n)| {
                RouteState::parse(&state)
                    .map(|s| (s, n))
                    .ok_or(StoreError::Malformed {
                        what: "route state",
                        detail: state,
                    })
            })
            .collect()
    }

    /// Whole routes matching `rest` (a `WHERE` and/or `ORDER BY` clause).
    pub(crate) fn select_routes(
        &self,
        rest: &str,
        params: impl rusqlite::Params,
    ) -> Result<Vec<RouteRow>, StoreError> {
        let sql = format!("SELECT {ROUTE_COLUMNS} FROM routes {rest}");
        let mut stmt = self.conn().prepare_cached(&sql)?;
        let raws = stmt
            .query_map(params, RawRoute::read)?
            .collect::<Result<Vec<_>, _>>()?;
        raws.into_iter().map(RawRoute::parse).collect()
    }
}

/// The statement of [`Store::state_counts`]. The index is named: left to
/// choose, SQLite counted the archived routes by walking `routes_by_state`
/// (for its order by state) and reading every route row, 0.1–1.2 s at
/// 100 000 routes, on every page and count of the list.
fn counts_sql(scope: RouteScope) -> String {
    format!(
        "SELECT state, COUNT(*) FROM routes INDEXED BY routes_by_archive WHERE {} GROUP BY state",
        scope.condition()
    )
}

/// The clause after `FROM routes` of [`Store::routes_page`], taking
/// `?1` before, `?2` id, `?3` pattern, `?4` limit. Without search it walks
/// the primary key (or `routes_by_state`) newest first and stops at the
/// limit. A search picks the page's ids from the covering index
/// `routes_by_text` (migration 0005) rather than the rows: text no route
/// holds is the worst case, and scanning the rows for it read the whole
/// table.
fn page_sql(scope: RouteScope, states: &[RouteState], search: &RouteSearch) -> String {
    // Fixed words from `RouteState::as_str`, never user input.
    let in_states = if states.is_empty() {
        String::new()
    } else {
        let list: Vec<String> = states.iter().map(|s| format!("'{}'", s.as_str())).collect();
        format!(" AND state IN ({})", list.join(", "))
    };
    if search.pattern.is_none() {
        // Newest first, read in the order of an index that holds it (so the
        // read stops at the limit) rather than every match sorted: every
        // route of the list walks the primary key (`+` keeps SQLite from
        // the archive index, whose matches it would sort: 50–190 ms at
        // 100 000 routes); the archived ones, usually few, are found in
        // that index rather than by walking every row past them.
        let from = match (scope, states.is_empty()) {
            (RouteScope::Listed, true) => "WHERE id < ?1 AND +archived_at IS NULL".to_string(),
            (RouteScope::Archived, true) => {
                "INDEXED BY routes_by_archive WHERE id < ?1 AND archived_at IS NOT NULL".to_string()
            }
            (_, false) => format!("WHERE id < ?1 AND {}{in_states}", scope.condition()),
        };
        return format!("{from} ORDER BY id DESC LIMIT ?4");
    }
    let scope = scope.condition();
    format!(
        "WHERE id IN (SELECT id FROM routes INDEXED BY routes_by_text \
         WHERE id < ?1 AND {scope}{in_states} AND (id = ?2 OR profile_name LIKE ?3 ESCAPE '\\' \
         OR prompt LIKE ?3 ESCAPE '\\') ORDER BY id DESC LIMIT ?4) ORDER BY id DESC"
    )
}

fn read_route(conn: &rusqlite::Connection, id: u32) -> Result<Option<RouteRow>, StoreError> {
    let sql = format!("SELECT {ROUTE_COLUMNS} FROM routes WHERE id = ?1");
    let raw = conn
        .prepare_cached(&sql)?
        .query_row([id], RawRoute::read)
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

fn opt_ts(s: Option<String>) -> Result<Option<DateTime<Utc>>, StoreError> {
    s.as_deref().map(parse_ts).transpose()
}

fn opt_json<T: serde::de::DeserializeOwned>(
    what: &'static str,
    s: Option<String>,
) -> Result<Option<T>, StoreError> {
    s.as_deref().map(|s| from_json(what, s)).transpose()
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
    decision_json: Option<String>,
    deadline: Option<String>,
    pending_outcome: Option<String>,
    manual_reason: Option<String>,
    manual_reason_code: Option<String>,
    manual_reason_json: Option<String>,
    owner: Option<String>,
    lease_until: Option<String>,
    created_at: String,
    updated_at: String,
    archived_at: Option<String>,
    queued: Option<String>,
    attempts: u32,
    failed_candidate: Option<u32>,
}

impl RawRoute {
    /// The [`ROUTE_COLUMNS`] of `r`, by name: a query may select more.
    fn read(r: &Row<'_>) -> rusqlite::Result<RawRoute> {
        Ok(RawRoute {
            id: r.get("id")?,
            profile_id: r.get("profile_id")?,
            profile_name: r.get("profile_name")?,
            prompt: r.get("prompt")?,
            cwd: r.get("cwd")?,
            state: r.get("state")?,
            generation: r.get("generation")?,
            candidate_index: r.get("candidate_index")?,
            candidates: r.get("candidates_json")?,
            cycle: r.get("cycle_json")?,
            classification: r.get("classification_json")?,
            policy: r.get("policy_json")?,
            decision: r.get("decision")?,
            decision_json: r.get("decision_json")?,
            deadline: r.get("deadline")?,
            pending_outcome: r.get("pending_outcome")?,
            manual_reason: r.get("manual_reason")?,
            manual_reason_code: r.get("manual_reason_code")?,
            manual_reason_json: r.get("manual_reason_json")?,
            owner: r.get("owner")?,
            lease_until: r.get("lease_until")?,
            created_at: r.get("created_at")?,
            updated_at: r.get("updated_at")?,
            archived_at: r.get("archived_at")?,
            queued: r.get("queued_json")?,
            attempts: r.get("attempts")?,
            failed_candidate: r.get("failed_candidate")?,
        })
    }

    fn parse(self) -> Result<RouteRow, StoreError> {
        let state = RouteState::parse(&self.state).ok_or(StoreError::Malformed {
            what: "route state",
            detail: self.state.clone(),
        })?;
        let pending_outcome = match self.pending_outcome.as_deref() {
            Some(s) => Some(Exhausted::parse(s).ok_or(StoreError::Malformed {
                what: "pending outcome",
                detail: s.to_string(),
            })?),
            None => None,
        };
        let manual_reason = match (
            self.manual_reason_json,
            self.manual_reason_code,
            self.manual_reason,
        ) {
            (Some(json), _, _) => Some(from_json("manual reason", &json)?),
            (None, Some(code), _) => {
                Some(HoldReason::from_code(&code).ok_or(StoreError::Malformed {
                    what: "manual reason code",
                    detail: code,
                })?)
            }
            (None, None, Some(text)) => Some(HoldReason::Legacy { text }),
            (None, None, None) => None,
        };
        Ok(RouteRow::restore(RouteRecord {
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
            decision: decided(self.decision_json, self.decision)?,
            failed_candidate: self.failed_candidate,
            deadline: opt_ts(self.deadline)?,
            pending_outcome,
            manual_reason,
            queued: opt_json("route queue", self.queued)?,
            owner: self.owner,
            lease_until: opt_ts(self.lease_until)?,
            attempts: self.attempts,
            created_at: parse_ts(&self.created_at)?,
            updated_at: parse_ts(&self.updated_at)?,
            archived_at: opt_ts(self.archived_at)?,
        }))
    }
}

/// A stored decision: typed when written with one, else the words of a row
/// from before decisions were typed.
pub(super) fn decided(
    json: Option<String>,
    words: Option<String>,
) -> Result<Option<Decided>, StoreError> {
    match (json, words) {
        (Some(json), _) => Ok(Some(from_json("decision", &json)?)),
        (None, Some(words)) => Ok(Some(Decided::Words(words))),
        (None, None) => Ok(None),
    }
}

/// What a decision is stored as: its JSON (none for words read from an old
/// row) and its words.
pub(super) fn decided_columns(d: Option<&Decided>) -> (Option<String>, Option<String>) {
    let json = d.filter(|d| !matches!(d, Decided::Words(_))).map(to_json);
    // The words keep the account's id: stored, they must not change with
    // what its candidates are called later.
    let words = d.map(|d| d.text(&crate::account::AccountNames::ids()).into_owned());
    (json, words)
}

/// Routes and attempts for the tests of every routes module.
#[cfg(test)]
mod fixtures {
    use chrono::Duration;

    use super::*;
    use crate::evaluator::RouteCycle;
    use crate::route::machine;

    pub(super) fn now() -> DateTime<Utc> {
        "2026-12-02T12:00:00Z".parse().unwrap()
    }

    pub(super) fn running_route(store: &mut Store, owner: &str) -> RouteRow {
        let new = NewRoute {
            profile_id: 1,
            profile_name: "p".into(),
            prompt: "do it".into(),
            cwd: None,
            candidates: vec![crate::profile::Candidate {
                id: 1,
                name: "c".into(),
                enabled: true,
                agent: crate::agent::AgentSpec::simulated(Vec::new()),
                policy: crate::policy::CandidatePolicy::default_for_new_candidate(),
                policy_revision: 1,
                account: None,
            }],
            cycle: RouteCycle::new(0),
            candidate_index: 0,
            owner: owner.to_string(),
            lease_until: now() + Duration::seconds(15),
            now: now(),
        };
        let lease = machine::Lease {
            owner,
            until: now() + Duration::seconds(15),
        };
        let first =
            |row: &RouteRow| machine::released(row, lease, machine::World::default(), now());
        match store.create_route(&new, first).unwrap() {
            Cas::Won(row) => row,
            other => panic!("no other writer, yet {other:?}"),
        }
    }

    pub(super) fn commit(store: &mut Store, plan: machine::Plan) -> RouteRow {
        match store.commit_transition(&plan).unwrap() {
            Cas::Won(row) => row,
            Cas::Lost(row) | Cas::WorldChanged(row) => {
                panic!("no other writer, yet route {} moved", row.id)
            }
        }
    }

    /// A running route stopped by a person, committed through the store:
    /// at rest, with one killed attempt.
    pub(super) fn stopped(store: &mut Store) -> RouteRow {
        let row = running_route(store, "me");
        let lease = machine::Lease {
            owner: "me",
            until: now(),
        };
        let plan = machine::manual(
            &row,
            crate::route::Ask::new(
                crate::route::ManualAction::Stop,
                row.generation,
                crate::route::Actor::App,
            ),
            lease,
            machine::World::default(),
            now(),
        )
        .unwrap();
        commit(store, plan)
    }

    pub(super) fn ids(rows: &[RouteRow]) -> Vec<u32> {
        rows.iter().map(|r| r.id).collect()
    }

    /// Opens the database in `dir`, creating profile 1 if it has none.
    pub(super) fn open(dir: &tempfile::TempDir) -> Store {
        let store = Store::open(&dir.path().join("r.db")).unwrap();
        if store.profile_count().unwrap() == 0 {
            store.create_profile("p", now()).unwrap();
        }
        store
    }
}

#[cfg(test)]
mod manual_reason_tests {
    use rusqlite::{params, Connection};

    use super::fixtures::{now, open, stopped};
    use super::*;
    use crate::evaluator::RouteCycle;
    use crate::store::{to_json, ts, MIGRATIONS};

    fn stored(store: &Store, id: u32, column: &str) -> Option<String> {
        store
            .conn()
            .query_row(
                &format!("SELECT {column} FROM routes WHERE id = ?1"),
                [id],
                |r| r.get(0),
            )
            .unwrap()
    }

    #[test]
    fn a_reason_is_stored_as_json_beside_its_words_and_read_back_by_it() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = open(&dir);
        let row = stopped(&mut store);
        assert_eq!(
            stored(&store, row.id, "manual_reason_json").as_deref(),
            Some(
                r#"{"kind":"stopped_by_you","risk":{"kind":"stopped_while_running","attempt":1}}"#
            ),
            "stopped while its agent ran: sending it again may repeat work"
        );
        assert_eq!(
            stored(&store, row.id, "manual_reason").as_deref(),
            Some("stopped by you"),
            "the words stay for a person reading the file"
        );
        let read = store.route(row.id).unwrap().unwrap();
        assert_eq!(
            read.manual_reason,
            Some(HoldReason::StoppedByYou {
                risk: Some(crate::route::RepeatRisk::StoppedWhileRunning { attempt: 1 })
            })
        );
    }

    #[test]
    fn an_unknown_reason_code_is_a_malformed_row_not_a_guess() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = open(&dir);
        let row = stopped(&mut store);
        store
            .conn()
            .execute(
                "UPDATE routes SET manual_reason_json = NULL, manual_reason_code = 'paused' \
                 WHERE id = ?1",
                [row.id],
            )
            .unwrap();
        let err = store.route(row.id).expect_err("unknown code refused");
        assert!(
            matches!(
                err,
                StoreError::Malformed {
                    what: "manual reason code",
                    ..
                }
            ),
            "{err:?}"
        );
    }

    #[test]
    fn an_older_database_reads_its_stored_sentences_as_their_reasons() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.db");
        let rows = [
            (
                1,
                "needs_manual",
                "wait cancelled by you; retry now, skip to the next candidate, or stop",
            ),
            (2, "stopped", "stopped by you"),
            (3, "needs_manual", "attempt 2 was still running"),
        ];
        {
            let c = Connection::open(&path).unwrap();
            for (_, sql) in &MIGRATIONS[..3] {
                c.execute_batch(sql).unwrap();
            }
            c.pragma_update(None, "user_version", 3).unwrap();
            for (id, state, reason) in rows {
                c.execute(
                    "INSERT INTO routes (id, profile_name, prompt, state, generation, \
                     candidate_index, candidates_json, cycle_json, manual_reason, created_at, \
                     updated_at) VALUES (?1, 'p', 'x', ?2, 3, 0, '[]', ?3, ?4, ?5, ?5)",
                    params![id, state, to_json(&RouteCycle::new(0)), reason, ts(now())],
                )
                .unwrap();
            }
        }
        let store = open(&dir);
        let mut reasons: Vec<_> = store
            .routes()
            .unwrap()
            .into_iter()
            .map(|r| (r.id, r.manual_reason.clone()))
            .collect();
        reasons.sort_by_key(|(id, _)| *id);
        assert_eq!(
            reasons,
            vec![
                (1, Some(HoldReason::WaitCancelled)),
                (2, Some(HoldReason::StoppedByYou { risk: None })),
                (
                    3,
                    Some(HoldReason::Legacy {
                        text: "attempt 2 was still running".into()
                    })
                ),
            ],
            "the upgrade gives the sentences earlier builds wrote their codes"
        );
    }

    #[test]
    fn a_decision_stored_before_decisions_were_typed_reads_back_as_its_words() {
        let words = "retry in 4 s (retry 1 of 3)".to_string();
        assert_eq!(
            decided(None, Some(words.clone())).unwrap(),
            Some(Decided::Words(words.clone())),
            "an old row has the words and no JSON"
        );
        assert_eq!(
            decided_columns(Some(&Decided::Words(words.clone()))),
            (None, Some(words)),
            "written back, it stays words: no JSON is made up for it"
        );
        assert_eq!(decided(None, None).unwrap(), None);
    }
}

#[cfg(test)]
mod page_tests {
    use super::fixtures::open;
    use super::*;

    /// SQLite's plan for a page query, one step a line.
    fn plan(
        store: &Store,
        scope: RouteScope,
        states: &[RouteState],
        search: &RouteSearch,
    ) -> String {
        let sql = format!("SELECT id FROM routes {}", page_sql(scope, states, search));
        explain(
            store,
            &sql,
            params![i64::MAX, search.id, search.pattern, 101],
        )
    }

    /// SQLite's plan for `sql` with `params` bound, a step a line.
    fn explain(store: &Store, sql: &str, params: impl rusqlite::Params) -> String {
        let mut stmt = store
            .conn()
            .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
            .unwrap();
        let steps = stmt
            .query_map(params, |r| r.get::<_, String>("detail"))
            .unwrap()
            .collect::<Result<Vec<_>, _>>()
            .unwrap();
        steps.join("\n")
    }

    #[test]
    fn a_page_never_reads_every_route_row() {
        let dir = tempfile::tempdir().unwrap();
        let store = open(&dir);
        let text = RouteSearch::new("deploy");
        let cases = [
            (&[][..], &RouteSearch::default()),
            (&[RouteState::NeedsManual][..], &RouteSearch::default()),
            (&[RouteState::Succeeded, RouteState::Stopped][..], &text),
            (&[][..], &text),
        ];
        for (scope, (states, search)) in [RouteScope::Listed, RouteScope::Archived]
            .into_iter()
            .flat_map(|scope| cases.map(|case| (scope, case)))
        {
            let plan = plan(&store, scope, states, search);
            for line in plan.lines() {
                assert!(
                    !line.starts_with("SCAN routes") || line.contains("COVERING INDEX"),
                    "{scope:?} {states:?} {search:?}: a full scan of the route rows:\n{plan}"
                );
            }
            if search.pattern.is_some() {
                assert!(
                    plan.contains("COVERING INDEX routes_by_text"),
                    "a search reads the narrow text index, not the rows:\n{plan}"
                );
            }
        }
    }

    /// The newest page of the list, and of one state, is read in id order
    /// and stops at its limit: sorting every match first cost 50–190 ms
    /// at 100 000 routes, and the first list at start is such a page.
    #[test]
    fn the_newest_page_is_read_in_order_without_sorting_every_match() {
        let dir = tempfile::tempdir().unwrap();
        let store = open(&dir);
        for states in [&[][..], &[RouteState::NeedsManual][..]] {
            let plan = plan(&store, RouteScope::Listed, states, &RouteSearch::default());
            assert!(
                !plan.contains("TEMP B-TREE FOR ORDER BY"),
                "{states:?}: every match sorted before the page is cut:\n{plan}"
            );
        }
        let archived = plan(&store, RouteScope::Archived, &[], &RouteSearch::default());
        assert!(
            archived.contains("INDEX routes_by_archive"),
            "archived routes are found in their index, not by walking every row:\n{archived}"
        );
    }

    /// Counting reads an index only, in both scopes: the archived count
    /// read every route row (0.1–1.2 s at 100 000 routes) on every page.
    #[test]
    fn counts_never_read_a_route_row() {
        let dir = tempfile::tempdir().unwrap();
        let store = open(&dir);
        for scope in [RouteScope::Listed, RouteScope::Archived] {
            let plan = explain(&store, &counts_sql(scope), []);
            for line in plan.lines().filter(|l| l.contains(" routes ")) {
                assert!(
                    line.contains("COVERING INDEX"),
                    "{scope:?}: route rows read to count them:\n{plan}"
                );
            }
        }
    }

    #[test]
    fn search_text_is_escaped_for_like_and_read_as_an_id_when_numeric() {
        assert_eq!(
            RouteSearch::new(" 50%_x\\ "),
            RouteSearch {
                id: None,
                pattern: Some("%50\\%\\_x\\\\%".into())
            }
        );
        assert_eq!(RouteSearch::new("#42").id, Some(42));
        assert_eq!(RouteSearch::new("   "), RouteSearch::default());
    }
}

#[cfg(test)]
mod plan_tests {
    use super::fixtures::open;
    use super::*;
    use rusqlite::StatementStatus;

    #[test]
    fn a_cached_statement_is_planned_once_whatever_is_bound_to_it() {
        let dir = tempfile::tempdir().unwrap();
        let store = open(&dir);
        for owner in ["a", "b", "c"] {
            store.queued_routes_owned_by(owner).unwrap();
        }
        let sql = format!(
            "SELECT {ROUTE_COLUMNS} FROM routes WHERE state = 'queued' AND owner = ?1 \
             ORDER BY queued_at, id"
        );
        let stmt = store.conn().prepare_cached(&sql).unwrap();
        assert_eq!(
            stmt.get_status(StatementStatus::Run),
            3,
            "the statement the three calls ran"
        );
        assert_eq!(
            stmt.get_status(StatementStatus::RePrepare),
            0,
            "a new owner bound is not a reason to parse and plan it again (it was, \
             on every call, before the connection kept its plans stable)"
        );
    }
}
