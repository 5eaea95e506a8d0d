//! Profiles and their ordered candidates. A candidate save replaces the
//! whole ordered list in one transaction, guarded by the profile revision the
//! editor loaded; candidates keep their ids so running routes can pick up
//! policy edits at their next decision.

use chrono::{DateTime, Utc};
use rusqlite::{params, OptionalExtension, Row, TransactionBehavior};

use super::{from_json, parse_ts, to_json, ts, Store, StoreError};
use crate::account::AccountId;
use crate::agent::AgentSpec;
use crate::profile::{Candidate, CandidateInput, Profile};

/// A candidate to write and the account it runs as (derived by the engine,
/// which may read its credentials; the store only keeps the result).
pub type CandidateWrite = (CandidateInput, AccountId);

/// Why a candidate save did not happen.
#[derive(Debug, Clone, PartialEq)]
pub enum SaveRefusal {
    ProfileMissing,
    RevisionMismatch {
        current: u32,
    },
    /// `candidates[index].id` names a candidate of another profile.
    ForeignCandidate {
        index: usize,
        id: u32,
    },
}

struct ProfileRow {
    id: u32,
    name: String,
    revision: u32,
    created_at: String,
    updated_at: String,
}

/// One saved candidate, by id.
const CANDIDATE_BY_ID: &str = "SELECT id, name, enabled, agent_json, policy_json, \
     policy_revision, account FROM candidates WHERE id = ?1";

impl Store {
    pub fn list_profiles(&self) -> Result<Vec<Profile>, StoreError> {
        let mut stmt = self.conn().prepare(
            // As a person reads a list: "alpha" before "Beta", whatever the case.
            "SELECT id, name, revision, created_at, updated_at FROM profiles \
             ORDER BY name COLLATE NOCASE, name",
        )?;
        let rows = stmt
            .query_map([], profile_row)?
            .collect::<Result<Vec<_>, _>>()?;
        rows.into_iter().map(|r| self.hydrate(r)).collect()
    }

    pub fn get_profile(&self, id: u32) -> Result<Option<Profile>, StoreError> {
        let row = self
            .conn()
            .query_row(
                "SELECT id, name, revision, created_at, updated_at FROM profiles WHERE id = ?1",
                [id],
                profile_row,
            )
            .optional()?;
        row.map(|r| self.hydrate(r)).transpose()
    }

    pub fn profile_by_name(&self, name: &str) -> Result<Option<Profile>, StoreError> {
        let id: Option<u32> = self
            .conn()
            .query_row("SELECT id FROM profiles WHERE name = ?1", [name], |r| {
                r.get("id")
            })
            .optional()?;
        id.map_or(Ok(None), |id| self.get_profile(id))
    }

    /// Every profile's id and name, for comparing a new name with them.
    pub fn profile_names(&self) -> Result<Vec<(u32, String)>, StoreError> {
        let mut stmt = self.conn().prepare("SELECT id, name FROM profiles")?;
        let rows = stmt
            .query_map([], |r| Ok((r.get("id")?, r.get("name")?)))?
            .collect::<Result<Vec<_>, _>>()?;
        Ok(rows)
    }

    pub fn profile_count(&self) -> Result<u32, StoreError> {
        Ok(self
            .conn()
            .query_row("SELECT COUNT(*) FROM profiles", [], |r| r.get(0))?)
    }

    /// Fails with a unique-constraint error when the name is taken.
    pub fn create_profile(&self, name: &str, now: DateTime<Utc>) -> Result<u32, StoreError> {
        self.conn().execute(
            // One past every id there has been (migration 0017).
            "INSERT INTO profiles (id, name, revision, created_at, updated_at) \
             VALUES ((SELECT last + 1 FROM profile_ids), ?1, 1, ?2, ?2)",
            params![name, ts(now)],
        )?;
        Ok(self.conn().last_insert_rowid() as u32)
    }

    /// `false` when no such profile exists.
    pub fn rename_profile(
        &self,
        id: u32,
        name: &str,
        now: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        let n = self.conn().execute(
            "UPDATE profiles SET name = ?2, updated_at = ?3 WHERE id = ?1",
            params![id, name, ts(now)],
        )?;
        Ok(n == 1)
    }

    /// Routes keep their snapshot and the profile name; `false` when absent.
    pub fn delete_profile(&self, id: u32) -> Result<bool, StoreError> {
        Ok(self
            .conn()
            .execute("DELETE FROM profiles WHERE id = ?1", [id])?
            == 1)
    }

    pub fn save_candidates(
        &mut self,
        profile_id: u32,
        expected_revision: u32,
        inputs: &[CandidateWrite],
        now: DateTime<Utc>,
    ) -> Result<Result<(), SaveRefusal>, StoreError> {
        self.replace_profile(profile_id, expected_revision, None, inputs, now)
    }

    /// A new profile with its candidates, in one transaction: nothing is
    /// left behind when a write fails. A unique-constraint error when the
    /// name is taken.
    pub fn create_profile_with_candidates(
        &mut self,
        name: &str,
        inputs: &[CandidateWrite],
        now: DateTime<Utc>,
    ) -> Result<Result<u32, SaveRefusal>, StoreError> {
        let tx = self
            .conn_mut()
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        tx.execute(
            // One past every id there has been (migration 0017).
            "INSERT INTO profiles (id, name, revision, created_at, updated_at) \
             VALUES ((SELECT last + 1 FROM profile_ids), ?1, 1, ?2, ?2)",
            params![name, ts(now)],
        )?;
        let id = tx.last_insert_rowid() as u32;
        if let Err(refusal) = write_candidates(&tx, id, inputs)? {
            return Ok(Err(refusal));
        }
        tx.commit()?;
        Ok(Ok(id))
    }

    /// Replaces the candidates (and the name, when given) in one
    /// transaction, guarded by the revision the caller read.
    pub fn replace_profile(
        &mut self,
        profile_id: u32,
        expected_revision: u32,
        name: Option<&str>,
        inputs: &[CandidateWrite],
        now: DateTime<Utc>,
    ) -> Result<Result<(), SaveRefusal>, StoreError> {
        let tx = self
            .conn_mut()
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let revision: Option<u32> = tx
            .query_row(
                "SELECT revision FROM profiles WHERE id = ?1",
                [profile_id],
                |r| r.get("revision"),
            )
            .optional()?;
        let Some(current) = revision else {
            return Ok(Err(SaveRefusal::ProfileMissing));
        };
        if current != expected_revision {
            return Ok(Err(SaveRefusal::RevisionMismatch { current }));
        }
        if let Err(refusal) = write_candidates(&tx, profile_id, inputs)? {
            return Ok(Err(refusal));
        }
        tx.execute(
            "UPDATE profiles SET name = COALESCE(?2, name), revision = revision + 1, updated_at = ?3 \
             WHERE id = ?1",
            params![profile_id, name, ts(now)],
        )?;
        tx.commit()?;
        Ok(Ok(()))
    }

    /// Replaces candidate `id`'s agent with `agent` if it is still `was`,
    /// without a new revision: the same agent, its values kept elsewhere
    /// (the keyring). `false` when it changed meanwhile.
    pub fn swap_candidate_agent(
        &self,
        id: u32,
        was: &AgentSpec,
        agent: &AgentSpec,
    ) -> Result<bool, StoreError> {
        let n = self.conn().execute(
            "UPDATE candidates SET agent_json = ?3 WHERE id = ?1 AND agent_json = ?2",
            params![id, to_json(was), to_json(agent)],
        )?;
        Ok(n == 1)
    }

    /// Writes the log's pages back into the database and empties the log,
    /// so that values a change removed (zeroed in place: `secure_delete`)
    /// are gone from both files. Best effort: a reader can hold it back.
    pub fn scrub_log(&self) -> Result<(), StoreError> {
        self.conn()
            .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
        Ok(())
    }

    /// Candidates whose account was never derived (saved before accounts
    /// existed), with their agents.
    pub fn candidates_without_account(&self) -> Result<Vec<(u32, AgentSpec)>, StoreError> {
        let mut stmt = self
            .conn()
            .prepare("SELECT id, agent_json FROM candidates WHERE account IS NULL")?;
        let rows = stmt
            .query_map([], |r| Ok((r.get::<_, u32>(0)?, r.get::<_, String>(1)?)))?
            .collect::<Result<Vec<_>, _>>()?;
        rows.into_iter()
            .map(|(id, agent)| Ok((id, from_json("candidate agent", &agent)?)))
            .collect()
    }

    /// Sets candidate `id`'s derived account, unless one was set meanwhile.
    pub fn set_candidate_account(&self, id: u32, account: &AccountId) -> Result<(), StoreError> {
        self.conn().execute(
            "UPDATE candidates SET account = ?2, \
             max_concurrent = json_extract(agent_json, '$.max_concurrent') \
             WHERE id = ?1 AND account IS NULL",
            params![id, account.as_str()],
        )?;
        Ok(())
    }

    /// Current candidates by id, for refreshing a route's policies.
    pub fn candidates_by_id(&self, ids: &[u32]) -> Result<Vec<Candidate>, StoreError> {
        let mut out = Vec::new();
        let mut stmt = self.conn().prepare_cached(CANDIDATE_BY_ID)?;
        for id in ids {
            if let Some(c) = stmt.query_row([id], candidate_row).optional()? {
                out.push(c?);
            }
        }
        Ok(out)
    }

    /// How many candidates [`Store::candidates_by_id`] read on this
    /// connection: what a test counts them being read by.
    #[cfg(test)]
    pub(crate) fn candidate_reads(&self) -> i32 {
        self.conn()
            .prepare_cached(CANDIDATE_BY_ID)
            .expect("the statement prepares")
            .get_status(rusqlite::StatementStatus::Run)
    }

    fn hydrate(&self, row: ProfileRow) -> Result<Profile, StoreError> {
        let mut stmt = self.conn().prepare(
            "SELECT id, name, enabled, agent_json, policy_json, policy_revision, account \
             FROM candidates WHERE profile_id = ?1 ORDER BY position",
        )?;
        let candidates = stmt
            .query_map([row.id], candidate_row)?
            .collect::<Result<Vec<_>, _>>()?
            .into_iter()
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Profile {
            id: row.id,
            name: row.name,
            revision: row.revision,
            candidates,
            created_at: parse_ts(&row.created_at)?,
            updated_at: parse_ts(&row.updated_at)?,
        })
    }
}

fn profile_row(r: &Row<'_>) -> rusqlite::Result<ProfileRow> {
    Ok(ProfileRow {
        id: r.get("id")?,
        name: r.get("name")?,
        revision: r.get("revision")?,
        created_at: r.get("created_at")?,
        updated_at: r.get("updated_at")?,
    })
}

fn candidate_row(r: &Row<'_>) -> rusqlite::Result<Result<Candidate, StoreError>> {
    let agent: String = r.get("agent_json")?;
    let policy: String = r.get("policy_json")?;
    let id: u32 = r.get("id")?;
    let name: String = r.get("name")?;
    let enabled: bool = r.get("enabled")?;
    let policy_revision: u32 = r.get("policy_revision")?;
    let account: Option<String> = r.get("account")?;
    Ok((|| {
        Ok(Candidate {
            id,
            name,
            enabled,
            agent: from_json("candidate agent", &agent)?,
            policy: from_json("candidate policy", &policy)?,
            policy_revision,
            account: account.as_deref().and_then(AccountId::parse),
        })
    })())
}

fn write_candidates(
    tx: &rusqlite::Transaction<'_>,
    profile_id: u32,
    inputs: &[CandidateWrite],
) -> Result<Result<(), SaveRefusal>, StoreError> {
    // Park existing positions out of the way so reordering cannot collide.
    tx.execute(
        "UPDATE candidates SET position = -1 - position WHERE profile_id = ?1",
        [profile_id],
    )?;
    let kept: Vec<u32> = inputs.iter().filter_map(|(c, _)| c.id).collect();
    let existing = existing_ids(tx, profile_id)?;
    for id in existing.iter().filter(|id| !kept.contains(id)) {
        tx.execute("DELETE FROM candidates WHERE id = ?1", [id])?;
    }
    for (position, input) in inputs.iter().enumerate() {
        match input.0.id {
            Some(id) if existing.contains(&id) => update_candidate(tx, id, position, input)?,
            Some(id) => {
                return Ok(Err(SaveRefusal::ForeignCandidate {
                    index: position,
                    id,
                }))
            }
            None => insert_candidate(tx, profile_id, position, input)?,
        }
    }
    Ok(Ok(()))
}

fn existing_ids(tx: &rusqlite::Transaction<'_>, profile_id: u32) -> Result<Vec<u32>, StoreError> {
    let mut stmt = tx.prepare("SELECT id FROM candidates WHERE profile_id = ?1")?;
    let ids = stmt
        .query_map([profile_id], |r| r.get("id"))?
        .collect::<Result<Vec<u32>, _>>()?;
    Ok(ids)
}

fn update_candidate(
    tx: &rusqlite::Transaction<'_>,
    id: u32,
    position: usize,
    (input, account): &CandidateWrite,
) -> Result<(), StoreError> {
    let policy = to_json(&input.policy);
    tx.execute(
        "UPDATE candidates SET position = ?2, name = ?3, enabled = ?4, agent_json = ?5, \
         policy_revision = policy_revision + (policy_json IS NOT ?6), policy_json = ?6, \
         account = ?7, max_concurrent = ?8 WHERE id = ?1",
        params![
            id,
            position as i64,
            input.name,
            input.enabled,
            to_json(&input.agent),
            policy,
            account.as_str(),
            input.agent.max_concurrent
        ],
    )?;
    Ok(())
}

fn insert_candidate(
    tx: &rusqlite::Transaction<'_>,
    profile_id: u32,
    position: usize,
    (input, account): &CandidateWrite,
) -> Result<(), StoreError> {
    tx.execute(
        // One past every id there has been (migration 0017): a route reads
        // its candidates by id.
        "INSERT INTO candidates (id, profile_id, position, name, enabled, agent_json, \
         policy_json, policy_revision, account, max_concurrent) \
         VALUES ((SELECT last + 1 FROM candidate_ids), ?1, ?2, ?3, ?4, ?5, ?6, 1, ?7, ?8)",
        params![
            profile_id,
            position as i64,
            input.name,
            input.enabled,
            to_json(&input.agent),
            to_json(&input.policy),
            account.as_str(),
            input.agent.max_concurrent
        ],
    )?;
    Ok(())
}

pub(crate) fn is_unique_violation(e: &StoreError) -> bool {
    match e {
        StoreError::Sqlite(rusqlite::Error::SqliteFailure(f, _)) => {
            f.code == rusqlite::ErrorCode::ConstraintViolation
        }
        StoreError::Sqlite(_)
        | StoreError::NotADatabase { .. }
        | StoreError::Corrupt { .. }
        | StoreError::TooNew { .. }
        | StoreError::CreateDir { .. }
        | StoreError::IsDirectory { .. }
        | StoreError::ReadOnly { .. }
        | StoreError::Locked { .. }
        | StoreError::CannotOpen { .. }
        | StoreError::Malformed { .. }
        | StoreError::DiskFull { .. } => false,
    }
}
