//! The append-only attempt history: one row per dispatched attempt, its
//! result once it ends, and the process it ran in.

use rusqlite::{params, OptionalExtension, Row};

use super::{decided, decided_columns, opt_json};
use crate::account::AccountId;
use crate::classification::SemanticCode;
use crate::route::{AttemptInput, AttemptOutcome, AttemptRecord, AttemptResultRecord};
use crate::store::{parse_ts, to_json, ts, Store, StoreError};

/// A stored attempt joined with its result, if it has one.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredAttempt {
    pub attempt: AttemptRecord,
    pub result: Option<AttemptResultRecord>,
}

/// Which results are unclassified inbox material, the one definition of
/// it (`?1` is the code `unknown`): failed attempts no catalogue rule
/// recognised (a known cause outside provider policy, such as a missing
/// program, is not inbox material) that kept their evidence.
const IN_INBOX: &str = "r.code = ?1 AND r.evidence_json IS NOT NULL";

/// What a read of the `attempts` table selects; [`RawAttempt::read`] takes
/// the columns by these names, which the `attempt_results` ones never share.
const ATTEMPT_COLUMNS: &str = "number, generation, candidate_index, candidate_id, candidate_name, \
    invocation_id, started_at, account, input_json";

/// What a read of the `attempt_results` table selects.
const RESULT_COLUMNS: &str = "finished_at, outcome, classification_json, effect_json, \
    policy_revision, policy_json, decision, decision_json, evidence_json, excerpt";

impl Store {
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
            params![route_id, number, pid, start],
        )?;
        Ok(())
    }

    /// The process of route `route_id`'s latest attempt, when it was stored.
    pub fn latest_attempt_process(&self, route_id: u32) -> Result<Option<(u32, u64)>, StoreError> {
        let found = self
            .conn()
            .query_row(
                "SELECT p.pid AS pid, p.pid_start AS pid_start FROM attempts a \
                 LEFT JOIN attempt_processes p ON p.attempt_id = a.id \
                 WHERE a.route_id = ?1 ORDER BY a.number DESC LIMIT 1",
                [route_id],
                |r| {
                    Ok((
                        r.get::<_, Option<u32>>("pid")?,
                        r.get::<_, Option<i64>>("pid_start")?,
                    ))
                },
            )
            .optional()?;
        Ok(match found {
            Some((Some(pid), Some(start))) => Some((pid, u64::try_from(start).unwrap_or(0))),
            _ => None,
        })
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
        let sql = format!(
            "SELECT {ATTEMPT_COLUMNS}, {RESULT_COLUMNS} \
             FROM attempts a LEFT JOIN attempt_results r ON r.attempt_id = a.id \
             WHERE a.route_id = ?1 ORDER BY a.number"
        );
        let mut stmt = self.conn().prepare_cached(&sql)?;
        let raws = stmt
            .query_map([route_id], RawAttempt::read)?
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

    /// Up to `limit` attempts of the route before attempt `number`, oldest
    /// first, each with how many files it changed (`None`: no working-tree
    /// evidence): what a repeat count reads back.
    pub fn attempts_before(
        &self,
        route_id: u32,
        number: u32,
        limit: u32,
    ) -> Result<Vec<(StoredAttempt, Option<u32>)>, StoreError> {
        let sql = format!(
            "SELECT {ATTEMPT_COLUMNS}, {RESULT_COLUMNS}, t.files_changed AS files_changed \
             FROM attempts a LEFT JOIN attempt_results r ON r.attempt_id = a.id \
             LEFT JOIN attempt_transcripts t ON t.attempt_id = a.id \
             WHERE a.route_id = ?1 AND a.number < ?2 ORDER BY a.number DESC LIMIT ?3"
        );
        let mut stmt = self.conn().prepare_cached(&sql)?;
        let rows = stmt
            .query_map(params![route_id, number, limit], |r| {
                Ok((
                    RawAttempt::read(r)?,
                    r.get::<_, Option<u32>>("files_changed")?,
                ))
            })?
            .collect::<Result<Vec<_>, _>>()?;
        let mut attempts = rows
            .into_iter()
            .map(|(raw, files)| Ok((raw.parse()?, files)))
            .collect::<Result<Vec<_>, StoreError>>()?;
        attempts.reverse();
        Ok(attempts)
    }

    /// The unclassified inbox (see [`IN_INBOX`]): newest route first, with
    /// their route; one query, however many routes there are.
    pub fn inbox_results(&self) -> Result<Vec<(u32, StoredAttempt)>, StoreError> {
        self.results_where(
            &format!("{IN_INBOX} ORDER BY a.route_id DESC, a.number"),
            params![SemanticCode::Unknown.as_str()],
        )
    }

    /// The numbers of route `route_id`'s attempts in the inbox.
    pub fn inbox_attempts(&self, route_id: u32) -> Result<Vec<u32>, StoreError> {
        let sql = format!(
            "SELECT a.number FROM attempts a JOIN attempt_results r ON r.attempt_id = a.id \
             WHERE a.route_id = ?2 AND {IN_INBOX} ORDER BY a.number"
        );
        let mut stmt = self.conn().prepare_cached(&sql)?;
        let numbers = stmt
            .query_map(params![SemanticCode::Unknown.as_str(), route_id], |r| {
                r.get(0)
            })?
            .collect::<Result<Vec<u32>, _>>()?;
        Ok(numbers)
    }

    /// The newest `limit` failed attempts that kept their evidence, with
    /// their route: what a proposed catalogue rule is checked against.
    pub fn failed_results_with_evidence(
        &self,
        limit: u32,
    ) -> Result<Vec<(u32, StoredAttempt)>, StoreError> {
        self.results_where(
            "r.evidence_json IS NOT NULL ORDER BY a.id DESC LIMIT ?1",
            params![limit],
        )
    }

    fn results_where(
        &self,
        condition: &str,
        params: &[&dyn rusqlite::ToSql],
    ) -> Result<Vec<(u32, StoredAttempt)>, StoreError> {
        let sql = format!(
            "SELECT a.route_id AS route_id, {ATTEMPT_COLUMNS}, {RESULT_COLUMNS} \
             FROM attempts a JOIN attempt_results r ON r.attempt_id = a.id WHERE {condition}"
        );
        let mut stmt = self.conn().prepare_cached(&sql)?;
        let rows = stmt
            .query_map(params, |r| {
                Ok((r.get::<_, u32>("route_id")?, RawAttempt::read(r)?))
            })?
            .collect::<Result<Vec<_>, _>>()?;
        rows.into_iter()
            .map(|(route_id, raw)| Ok((route_id, raw.parse()?)))
            .collect()
    }
}

pub(super) fn insert_attempt(
    tx: &rusqlite::Connection,
    route_id: u32,
    a: &AttemptRecord,
) -> Result<(), StoreError> {
    tx.prepare_cached(
        "INSERT INTO attempts (route_id, number, generation, candidate_index, candidate_id, \
         candidate_name, invocation_id, started_at, account, input_json) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
    )?
    .execute(params![
        route_id,
        a.number,
        a.generation,
        a.candidate_index,
        a.candidate_id,
        a.candidate_name,
        a.invocation_id,
        ts(a.started_at),
        a.account.as_ref().map(|a| a.as_str()),
        (a.input != AttemptInput::Prompt).then(|| to_json(&a.input))
    ])?;
    Ok(())
}

pub(super) fn insert_result(
    conn: &rusqlite::Connection,
    route_id: u32,
    r: &AttemptResultRecord,
) -> Result<(), StoreError> {
    let class = r.classification.as_ref().map(|c| c.class.as_str());
    let (decision_json, decision) = decided_columns(r.decision.as_ref());
    conn.prepare_cached(
        "INSERT OR IGNORE INTO attempt_results (attempt_id, finished_at, outcome, code, class, \
         rule_id, catalogue_version, classification_json, effect_json, policy_revision, policy_json, \
         decision, evidence_json, excerpt, decision_json) \
         SELECT id, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16 \
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
            decision,
            r.evidence.as_ref().map(to_json),
            r.excerpt,
            decision_json
        ])?;
    Ok(())
}

/// Column values before parsing, so parse errors surface as [`StoreError`].
struct RawAttempt {
    number: u32,
    generation: u32,
    candidate_index: u32,
    candidate_id: u32,
    candidate_name: String,
    invocation_id: String,
    started_at: String,
    account: Option<String>,
    input: Option<String>,
    finished_at: Option<String>,
    outcome: Option<String>,
    classification: Option<String>,
    effect: Option<String>,
    policy_revision: Option<u32>,
    policy: Option<String>,
    decision: Option<String>,
    decision_json: Option<String>,
    evidence: Option<String>,
    excerpt: Option<String>,
}

impl RawAttempt {
    /// The [`ATTEMPT_COLUMNS`] and [`RESULT_COLUMNS`] of `r`, by name.
    fn read(r: &Row<'_>) -> rusqlite::Result<RawAttempt> {
        Ok(RawAttempt {
            number: r.get("number")?,
            generation: r.get("generation")?,
            candidate_index: r.get("candidate_index")?,
            candidate_id: r.get("candidate_id")?,
            candidate_name: r.get("candidate_name")?,
            invocation_id: r.get("invocation_id")?,
            started_at: r.get("started_at")?,
            account: r.get("account")?,
            input: r.get("input_json")?,
            finished_at: r.get("finished_at")?,
            outcome: r.get("outcome")?,
            classification: r.get("classification_json")?,
            effect: r.get("effect_json")?,
            policy_revision: r.get("policy_revision")?,
            policy: r.get("policy_json")?,
            decision: r.get("decision")?,
            decision_json: r.get("decision_json")?,
            evidence: r.get("evidence_json")?,
            excerpt: r.get("excerpt")?,
        })
    }

    fn parse(self) -> Result<StoredAttempt, StoreError> {
        let attempt = AttemptRecord {
            number: self.number,
            generation: self.generation,
            candidate_index: self.candidate_index,
            candidate_id: self.candidate_id,
            candidate_name: self.candidate_name,
            invocation_id: self.invocation_id,
            started_at: parse_ts(&self.started_at)?,
            account: self.account.as_deref().and_then(AccountId::parse),
            input: opt_json("attempt input", self.input)?.unwrap_or_default(),
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
            decision: decided(self.decision_json, self.decision)?,
            evidence: opt_json("attempt evidence", self.evidence)?,
            excerpt: self.excerpt,
        };
        Ok(StoredAttempt {
            attempt,
            result: Some(result),
        })
    }
}
