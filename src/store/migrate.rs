//! Ordered, append-only schema migrations. Migration N brings the database
//! to `user_version` N; pending ones run in one transaction together with the
//! version bump, so a crash leaves the previous version intact.

use std::path::Path;

use rusqlite::Connection;

use super::StoreError;

/// Every migration, oldest first. Never edit or reorder a shipped entry.
pub const MIGRATIONS: &[(&str, &str)] = &[
    ("0001_init", include_str!("migrations/0001_init.sql")),
    (
        "0002_route_changes",
        include_str!("migrations/0002_route_changes.sql"),
    ),
    (
        "0003_attempt_process",
        include_str!("migrations/0003_attempt_process.sql"),
    ),
    (
        "0004_manual_reason_code",
        include_str!("migrations/0004_manual_reason_code.sql"),
    ),
    (
        "0005_route_search",
        include_str!("migrations/0005_route_search.sql"),
    ),
    (
        "0006_typed_reasons",
        include_str!("migrations/0006_typed_reasons.sql"),
    ),
    (
        "0007_attempt_transcripts",
        include_str!("migrations/0007_attempt_transcripts.sql"),
    ),
    (
        "0008_accounts",
        include_str!("migrations/0008_accounts.sql"),
    ),
    (
        "0009_route_housekeeping",
        include_str!("migrations/0009_route_housekeeping.sql"),
    ),
    (
        "0010_route_snapshots",
        include_str!("migrations/0010_route_snapshots.sql"),
    ),
    (
        "0011_attempt_inputs",
        include_str!("migrations/0011_attempt_inputs.sql"),
    ),
    (
        "0012_manual_actions",
        include_str!("migrations/0012_manual_actions.sql"),
    ),
    (
        "0013_dispatch_holds_purge",
        include_str!("migrations/0013_dispatch_holds_purge.sql"),
    ),
    (
        "0014_engine_leases",
        include_str!("migrations/0014_engine_leases.sql"),
    ),
    (
        "0015_route_removals",
        include_str!("migrations/0015_route_removals.sql"),
    ),
    (
        "0016_route_ids",
        include_str!("migrations/0016_route_ids.sql"),
    ),
    (
        "0017_profile_and_candidate_ids",
        include_str!("migrations/0017_profile_and_candidate_ids.sql"),
    ),
];

/// The `user_version` this build writes and understands.
pub const SCHEMA_VERSION: u32 = MIGRATIONS.len() as u32;

pub(super) fn run(conn: &Connection, path: &Path, found: u32) -> Result<(), StoreError> {
    check_not_newer(path, found)?;
    if found == SCHEMA_VERSION {
        return Ok(());
    }
    // Another process may be migrating the same file: take the write lock,
    // then look again.
    conn.execute_batch("BEGIN IMMEDIATE")?;
    let result = apply_pending(conn, path);
    match result {
        Ok(()) => conn.execute_batch("COMMIT").map_err(StoreError::from),
        Err(e) => {
            conn.execute_batch("ROLLBACK")?;
            Err(e)
        }
    }
}

pub(super) fn check_not_newer(path: &Path, found: u32) -> Result<(), StoreError> {
    if found > SCHEMA_VERSION {
        return Err(StoreError::TooNew {
            path: path.to_path_buf(),
            found,
            supported: SCHEMA_VERSION,
        });
    }
    Ok(())
}

/// Refuses a database whose schema lacks what its `user_version` defines:
/// a table, index or trigger missing or with other SQL (a damaged page of
/// the schema can still read as valid SQL, say a column renamed by one bit,
/// which `integrity_check` passes and every later write then fails on).
/// Objects of its own beside them (a test's log table) are left alone.
/// Compared with the first `found` migrations applied to an empty
/// in-memory database: a few milliseconds.
pub(super) fn check_schema(conn: &Connection, path: &Path, found: u32) -> Result<(), StoreError> {
    let reference = Connection::open_in_memory()?;
    for (_, sql) in MIGRATIONS.iter().take(found as usize) {
        reference.execute_batch(sql)?;
    }
    let ours = schema(conn)?;
    for (name, sql) in schema(&reference)? {
        if ours.get(&name) != Some(&sql) {
            return Err(StoreError::Corrupt {
                path: path.to_path_buf(),
                detail: format!("{name} is not as schema version {found} defines it"),
            });
        }
    }
    Ok(())
}

/// Each schema object's SQL by name.
fn schema(
    conn: &Connection,
) -> Result<std::collections::BTreeMap<String, Option<String>>, StoreError> {
    let mut stmt = conn.prepare("SELECT name, sql FROM sqlite_schema")?;
    let rows = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<Result<_, _>>()?;
    Ok(rows)
}

fn apply_pending(conn: &Connection, path: &Path) -> Result<(), StoreError> {
    let found: u32 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    check_not_newer(path, found)?;
    for (index, (_name, sql)) in MIGRATIONS.iter().enumerate().skip(found as usize) {
        conn.execute_batch(sql)?;
        conn.pragma_update(None, "user_version", index as u32 + 1)?;
    }
    Ok(())
}
