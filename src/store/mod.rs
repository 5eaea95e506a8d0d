//! The durable store: one SQLite file holding profiles, candidates, routes and
//! the append-only attempt history.
//!
//! It owns the connection settings (WAL, a named busy timeout, foreign keys),
//! the ordered migrations checked against `PRAGMA user_version`, and every
//! SQL statement. Other modules never see SQL. A database written by a newer
//! build, or a file that is not SQLite, is refused and left untouched.

mod migrate;
pub mod profiles;
pub mod routes;

use std::path::{Path, PathBuf};
use std::time::Duration;

use chrono::{DateTime, SecondsFormat, Utc};
use rusqlite::{Connection, OpenFlags};

pub use migrate::{MIGRATIONS, SCHEMA_VERSION};
pub use routes::{
    AttemptRecord, AttemptResultRecord, Cas, ChangeSeq, Claim, Generations, NewRoute, RouteChanges,
    RouteRow, TransitionWrite,
};

/// How long a statement waits for another process's write lock before failing.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// Everything that can go wrong in the store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{path} is not a Recourse database ({detail}); the file was left untouched")]
    NotADatabase { path: PathBuf, detail: String },
    #[error(
        "{path} has schema version {found}, newer than this build understands ({supported}); \
         use a newer Recourse or another database file"
    )]
    TooNew {
        path: PathBuf,
        found: u32,
        supported: u32,
    },
    #[error(
        "{path} is damaged ({detail}); the file was left untouched: restore it from a backup, \
         or move it aside to start a new database"
    )]
    Corrupt { path: PathBuf, detail: String },
    #[error("cannot create the database folder {path}: {source}")]
    CreateDir {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("stored {what} cannot be read: {detail}")]
    Malformed { what: &'static str, detail: String },
    #[error("database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
}

/// How a connection journals and syncs its commits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JournalSettings {
    /// `PRAGMA journal_mode`, e.g. `wal`.
    pub journal_mode: String,
    /// `PRAGMA synchronous`: 0 off, 1 normal, 2 full, 3 extra.
    pub synchronous: i64,
}

/// An open database. Not `Sync`: the engine keeps it behind a mutex.
pub struct Store {
    conn: Connection,
}

impl Store {
    /// Opens (creating if absent) and migrates the database at `path`.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| StoreError::CreateDir {
                path: dir.to_path_buf(),
                source,
            })?;
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(path, flags)?;
        conn.busy_timeout(BUSY_TIMEOUT)?;
        let found = read_user_version(&conn, path)?;
        // Nothing may write before these checks: switching the journal mode
        // rewrites the header of a database still in rollback mode.
        migrate::check_not_newer(path, found)?;
        read_schema(&conn).map_err(|e| e.opening(path))?;
        configure(&conn).map_err(|e| e.opening(path))?;
        migrate::run(&conn, path, found).map_err(|e| e.opening(path))?;
        Ok(Store { conn })
    }

    /// The journal mode and `synchronous` level this connection runs with,
    /// as SQLite reports them (benchmarks configure their baseline the same).
    pub fn journal_settings(&self) -> Result<JournalSettings, StoreError> {
        let journal_mode = self
            .conn
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))?;
        let synchronous = self
            .conn
            .query_row("PRAGMA synchronous", [], |r| r.get(0))?;
        Ok(JournalSettings {
            journal_mode,
            synchronous,
        })
    }

    pub(crate) fn conn(&self) -> &Connection {
        &self.conn
    }

    pub(crate) fn conn_mut(&mut self) -> &mut Connection {
        &mut self.conn
    }
}

/// `--db`, else `RECOURSE_DB`, else `<data dir>/recourse/recourse.db` where the
/// data dir is `XDG_DATA_HOME` or `~/.local/share`.
pub fn default_db_path() -> PathBuf {
    if let Some(p) = std::env::var_os("RECOURSE_DB").filter(|v| !v.is_empty()) {
        return PathBuf::from(p);
    }
    data_dir().join("recourse").join("recourse.db")
}

fn data_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("XDG_DATA_HOME").filter(|v| !v.is_empty()) {
        return PathBuf::from(d);
    }
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_default();
    home.join(".local").join("share")
}

/// Reading the header first is what tells a foreign file apart, before any
/// statement could write to it.
fn read_user_version(conn: &Connection, path: &Path) -> Result<u32, StoreError> {
    conn.query_row("PRAGMA user_version", [], |r| r.get::<_, u32>(0))
        .map_err(|e| StoreError::from(e).opening(path))
}

/// Reads the schema, which a damaged first page or schema page fails.
fn read_schema(conn: &Connection) -> Result<(), StoreError> {
    conn.query_row("SELECT COUNT(*) FROM sqlite_master", [], |r| {
        r.get::<_, i64>(0)
    })?;
    Ok(())
}

impl StoreError {
    /// While opening `path`: a damaged or foreign file is named as such.
    pub fn opening(self, path: &Path) -> StoreError {
        let StoreError::Sqlite(e) = self else {
            return self;
        };
        match e.sqlite_error_code() {
            Some(rusqlite::ErrorCode::DatabaseCorrupt) => StoreError::Corrupt {
                path: path.to_path_buf(),
                detail: e.to_string(),
            },
            Some(rusqlite::ErrorCode::NotADatabase) => StoreError::NotADatabase {
                path: path.to_path_buf(),
                detail: "not an SQLite file".to_string(),
            },
            _ => StoreError::Sqlite(e),
        }
    }
}

fn configure(conn: &Connection) -> Result<(), StoreError> {
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    Ok(())
}

pub(crate) fn ts(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Millis, true)
}

pub(crate) fn parse_ts(s: &str) -> Result<DateTime<Utc>, StoreError> {
    DateTime::parse_from_rfc3339(s)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|e| StoreError::Malformed {
            what: "timestamp",
            detail: format!("{s:?}: {e}"),
        })
}

pub(crate) fn from_json<T: serde::de::DeserializeOwned>(
    what: &'static str,
    s: &str,
) -> Result<T, StoreError> {
    serde_json::from_str(s).map_err(|e| StoreError::Malformed {
        what,
        detail: e.to_string(),
    })
}

pub(crate) fn to_json<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string(v).expect("engine types serialize to JSON")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_migrations_run_on_an_empty_database() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.db");
        let store = Store::open(&path).unwrap();
        let v: u32 = store
            .conn()
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap();
        assert_eq!(v, SCHEMA_VERSION, "every migration applied");
        let mode: String = store
            .conn()
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .unwrap();
        assert_eq!(mode, "wal");
        let settings = store.journal_settings().unwrap();
        assert_eq!(
            (settings.journal_mode.as_str(), settings.synchronous),
            ("wal", 1),
            "WAL with synchronous NORMAL, as configured"
        );
        drop(store);
        Store::open(&path).expect("reopening a current database is a no-op");
    }

    #[test]
    fn database_newer_than_the_code_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.db");
        {
            let c = Connection::open(&path).unwrap();
            c.pragma_update(None, "user_version", SCHEMA_VERSION + 1)
                .unwrap();
        }
        let err = Store::open(&path).err().expect("newer schema refused");
        assert_eq!(
            err.to_string(),
            format!(
                "{} has schema version {}, newer than this build understands ({}); \
                 use a newer Recourse or another database file",
                path.display(),
                SCHEMA_VERSION + 1,
                SCHEMA_VERSION
            )
        );
    }

    #[test]
    fn non_sqlite_file_is_refused_and_left_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("notes.db");
        let bytes = b"these are my notes, not a database\n".repeat(200);
        std::fs::write(&path, &bytes).unwrap();
        let err = Store::open(&path).err().expect("foreign file refused");
        assert_eq!(
            err.to_string(),
            format!(
                "{} is not a Recourse database (not an SQLite file); the file was left untouched",
                path.display()
            )
        );
        assert_eq!(
            std::fs::read(&path).unwrap(),
            bytes,
            "file content unchanged"
        );
    }

    #[test]
    fn default_path_honours_environment_in_order() {
        // One test owns these variables so parallel tests cannot interleave.
        std::env::set_var("RECOURSE_DB", "/tmp/x/custom.db");
        assert_eq!(default_db_path(), PathBuf::from("/tmp/x/custom.db"));
        std::env::remove_var("RECOURSE_DB");
        std::env::set_var("XDG_DATA_HOME", "/tmp/xdg");
        assert_eq!(
            default_db_path(),
            PathBuf::from("/tmp/xdg/recourse/recourse.db")
        );
        std::env::remove_var("XDG_DATA_HOME");
        std::env::set_var("HOME", "/home/someone");
        assert_eq!(
            default_db_path(),
            PathBuf::from("/home/someone/.local/share/recourse/recourse.db")
        );
    }
}

#[cfg(test)]
mod append_only_tests {
    use super::*;

    #[test]
    fn attempt_history_cannot_be_rewritten_or_deleted() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("r.db")).unwrap();
        let c = store.conn();
        c.execute_batch(
            "INSERT INTO routes (id, profile_name, prompt, state, generation, candidate_index, \
             candidates_json, cycle_json, created_at, updated_at) \
             VALUES (1, 'p', 'x', 'running', 1, 0, '[]', '{}', 't', 't');
             INSERT INTO attempts (route_id, number, generation, candidate_index, candidate_name, \
             invocation_id, started_at) VALUES (1, 1, 1, 0, 'c', 'i1', 't');
             INSERT INTO attempt_results (attempt_id, finished_at, outcome) VALUES (1, 't', 'failed');",
        )
        .unwrap();
        for sql in [
            "UPDATE attempts SET candidate_name = 'other'",
            "DELETE FROM attempts",
            "UPDATE attempt_results SET outcome = 'succeeded'",
            "DELETE FROM attempt_results",
        ] {
            let err = c.execute(sql, []).expect_err(sql);
            assert!(
                err.to_string().contains("append-only"),
                "{sql} refused by trigger, got {err}"
            );
        }
    }
}
