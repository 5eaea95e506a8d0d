//! The durable store: one SQLite file holding profiles, candidates, routes and
//! the append-only attempt history.
//!
//! It owns the connection settings (WAL, a named busy timeout, foreign keys),
//! the ordered migrations checked against `PRAGMA user_version`, and every
//! SQL statement. Other modules never see SQL. A database written by a newer
//! build, a file that is not SQLite, or one that fails `PRAGMA
//! integrity_check` is refused and left untouched: every open checks before
//! anything could write.

pub mod accounts;
pub mod files;
mod migrate;
pub mod profiles;
pub mod routes;

use std::path::{Path, PathBuf};
use std::time::Duration;

use chrono::{DateTime, SecondsFormat, Utc};
use rusqlite::config::DbConfig;
use rusqlite::{Connection, OpenFlags};

pub use migrate::{MIGRATIONS, SCHEMA_VERSION};
pub use routes::{
    Batch, Cas, ChangeSeq, Claim, Generations, OwnedRoute, RouteChanges, RouteSearch,
};

/// How long a statement waits for another process's write lock before
/// failing. Opening for writing waits at most this long too, so a command
/// on a database another process keeps locked fails after about 5 s.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// The check every open runs before anything could write. `integrity_check`
/// rather than `quick_check`: it also compares every index with its table,
/// which is what a damaged index page breaks, and costs little more (see
/// `docs/reliability.md`). `(1)`: the open only needs to know whether there
/// is a problem; `recourse db check` lists them all.
const OPEN_CHECK: &str = "PRAGMA integrity_check(1)";

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
    #[error("{path} is a directory, not a database file")]
    IsDirectory { path: PathBuf },
    #[error("{path} is read-only ({why}); it can be viewed but not changed")]
    ReadOnly { path: PathBuf, why: String },
    #[error(
        "{path} is locked by another process: its write lock was not released within {} s; \
         try again when that process is done",
        BUSY_TIMEOUT.as_secs()
    )]
    Locked { path: PathBuf },
    #[error("cannot open {path}: {detail}")]
    CannotOpen { path: PathBuf, detail: String },
    #[error("cannot create the database folder {path}: {source}")]
    CreateDir {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("stored {what} cannot be read: {detail}")]
    Malformed { what: &'static str, detail: String },
    /// SQLite's "database or disk is full", named: nothing of the change
    /// was written.
    #[error(
        "{path} cannot grow: the disk is full (or the file at its size limit); nothing of this \
         change was written; free some space and it is made again (a run retries by itself)"
    )]
    DiskFull { path: PathBuf },
    #[error("database error: {0}")]
    Sqlite(rusqlite::Error),
}

thread_local! {
    /// The database this thread last used a connection of. Store methods
    /// are synchronous, so an SQLite error converted with `?` comes from
    /// that database: this is how a full disk is named in every error,
    /// whichever of the many statements hit it.
    static IN_USE: std::cell::RefCell<Option<std::sync::Arc<Path>>> =
        const { std::cell::RefCell::new(None) };
}

impl From<rusqlite::Error> for StoreError {
    fn from(e: rusqlite::Error) -> StoreError {
        if e.sqlite_error_code() == Some(rusqlite::ErrorCode::DiskFull) {
            if let Some(path) = IN_USE.with(|p| p.borrow().clone()) {
                return StoreError::DiskFull {
                    path: path.to_path_buf(),
                };
            }
        }
        StoreError::Sqlite(e)
    }
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
    path: std::sync::Arc<Path>,
}

impl Store {
    /// Opens (creating if absent) and migrates the database at `path`, for
    /// reading and writing.
    ///
    /// Before anything is written (the journal mode, migrations, seeding):
    /// the schema version is checked, the schema read, `PRAGMA
    /// integrity_check` run, and the write lock taken and released once, so
    /// a damaged, read-only or locked file is refused with its path and
    /// cause, and left as it was.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        in_use(path);
        refuse_directory(path)?;
        // SQLite would open an unwritable file read-only without a word and
        // leave `-wal` and `-shm` files behind that it then cannot remove.
        if path.exists() && !(writable(path) && writable(folder(path))) {
            return Err(StoreError::ReadOnly {
                why: why_read_only(path),
                path: path.to_path_buf(),
            });
        }
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            files::create_private_dir(dir).map_err(|source| StoreError::CreateDir {
                path: dir.to_path_buf(),
                source,
            })?;
        }
        if !path.exists() {
            if !writable(folder(path)) {
                return Err(StoreError::CannotOpen {
                    path: path.to_path_buf(),
                    detail: format!(
                        "its folder {} is not writable, so the database cannot be created",
                        folder(path).display()
                    ),
                });
            }
            files::create_private_file(path).map_err(|e| StoreError::CannotOpen {
                path: path.to_path_buf(),
                detail: e.to_string(),
            })?;
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(path, flags)
            .map_err(|e| StoreError::from(e).opening(path))?;
        conn.busy_timeout(BUSY_TIMEOUT)?;
        let found = read_user_version(&conn, path)?;
        // Nothing may write before these checks: switching the journal mode
        // rewrites the header of a database still in rollback mode.
        migrate::check_not_newer(path, found)?;
        read_schema(&conn).map_err(|e| e.opening(path))?;
        check_integrity(&conn, path)?;
        migrate::check_schema(&conn, path, found).map_err(|e| e.opening(path))?;
        check_writable(&conn).map_err(|e| e.opening(path))?;
        configure(&conn).map_err(|e| e.opening(path))?;
        migrate::run(&conn, path, found).map_err(|e| e.opening(path))?;
        make_private(path);
        Ok(Store::at(conn, path))
    }

    /// Opens an existing database for reading only (`query_only`): nothing
    /// is created, migrated or written, so a read-only file or folder can be viewed and
    /// a locked database does not delay the reader. The same checks as
    /// [`Store::open`] refuse a newer, foreign or damaged file.
    ///
    /// A database whose schema is older than this build's is opened with
    /// [`Store::open`] instead, which migrates it (and needs write access).
    pub fn open_read_only(path: &Path) -> Result<Store, StoreError> {
        let (conn, found) = connect_read_only(path)?;
        migrate::check_not_newer(path, found)?;
        if found < SCHEMA_VERSION {
            drop(conn);
            return Store::open(path);
        }
        read_schema(&conn).map_err(|e| e.opening(path))?;
        check_integrity(&conn, path)?;
        migrate::check_schema(&conn, path, found).map_err(|e| e.opening(path))?;
        Ok(Store::at(conn, path))
    }

    /// [`Store::open_read_only`] without the integrity check, for a glance
    /// while a [`Store::open`] of the same file runs that check (it takes
    /// most of a second on a large file). Never migrates: an older schema
    /// is [`StoreError::CannotOpen`], and the caller waits for the full open.
    pub fn open_read_only_unchecked(path: &Path) -> Result<Store, StoreError> {
        let (conn, found) = connect_read_only(path)?;
        migrate::check_not_newer(path, found)?;
        if found < SCHEMA_VERSION {
            return Err(StoreError::CannotOpen {
                path: path.to_path_buf(),
                detail: format!("schema version {found} needs migrating first"),
            });
        }
        read_schema(&conn).map_err(|e| e.opening(path))?;
        Ok(Store::at(conn, path))
    }

    /// Every problem `PRAGMA integrity_check` finds in the SQLite file at
    /// `path`, opened read-only (no schema or version checks, nothing
    /// written); empty when it is sound. A file too damaged to check at all
    /// is [`StoreError::Corrupt`].
    pub fn check_file(path: &Path) -> Result<Vec<String>, StoreError> {
        let (conn, _) = connect_read_only(path)?;
        integrity_problems(&conn, "PRAGMA integrity_check").map_err(|e| e.opening(path))
    }

    /// Copies the whole database to a new file `dest` with SQLite's online
    /// backup API: a consistent snapshot even while other processes write.
    /// `dest` must not exist yet (it is created; an existing file would be
    /// overwritten page by page).
    pub fn backup_to(&self, dest: &Path) -> Result<(), StoreError> {
        // A full disk is the copy's.
        in_use(dest);
        // The copy holds what the database holds: only its owner reads it.
        files::create_private_file(dest).map_err(|e| StoreError::CannotOpen {
            path: dest.to_path_buf(),
            detail: e.to_string(),
        })?;
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let mut target = Connection::open_with_flags(dest, flags)
            .map_err(|e| StoreError::from(e).opening(dest))?;
        {
            let backup = rusqlite::backup::Backup::new(&self.conn, &mut target)?;
            // All pages in one step, under one read transaction of the
            // source: writers (WAL) are not blocked. A busy destination
            // cannot happen, it is ours; a busy source is retried.
            let deadline = std::time::Instant::now() + BUSY_TIMEOUT;
            loop {
                match backup.step(-1)? {
                    rusqlite::backup::StepResult::Done => break,
                    _ if std::time::Instant::now() > deadline => {
                        return Err(StoreError::Locked {
                            path: dest.to_path_buf(),
                        })
                    }
                    _ => std::thread::sleep(Duration::from_millis(20)),
                }
            }
        }
        target
            .close()
            .map_err(|(_, e)| StoreError::from(e).opening(dest))?;
        Ok(())
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

    fn at(conn: Connection, path: &Path) -> Store {
        // One plan per statement, whatever is bound to it. Without this,
        // SQLite (built with STAT4) marks some statements — those comparing
        // an indexed column with a parameter under a subquery, an `ORDER BY`
        // or `MIN` — to be parsed and planned again on every new binding,
        // so a cached statement was compiled anew each time it ran (the
        // queued routes' query: on every report of the 10 000-deadline bench).
        if let Err(e) = conn.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true) {
            tracing::warn!("cannot keep query plans stable: {e}");
        }
        Store {
            conn,
            path: std::sync::Arc::from(path),
        }
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The connection; marks this database as the one in use (see
    /// [`IN_USE`]).
    pub(crate) fn conn(&self) -> &Connection {
        self.mark_in_use();
        &self.conn
    }

    pub(crate) fn conn_mut(&mut self) -> &mut Connection {
        self.mark_in_use();
        &mut self.conn
    }

    fn mark_in_use(&self) {
        IN_USE.with(|p| {
            let mut current = p.borrow_mut();
            if current
                .as_ref()
                .is_none_or(|c| !std::sync::Arc::ptr_eq(c, &self.path))
            {
                *current = Some(self.path.clone());
            }
        });
    }
}

/// The user's data folder: `XDG_DATA_HOME`, else `~/.local/share`.
pub fn data_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("XDG_DATA_HOME").filter(|v| !v.is_empty()) {
        return PathBuf::from(d);
    }
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_default();
    home.join(".local").join("share")
}

/// Takes group and other permissions off a database that was opened for
/// writing and its side files (SQLite gives those the database's mode, so
/// they follow once it is private), and off the folder when it is the
/// default data folder (a folder named with `--db` is the user's). Each
/// change is said in the log.
fn make_private(path: &Path) {
    if folder(path) == data_dir().join("recourse") {
        files::tighten_and_say(folder(path), files::PRIVATE_DIR);
    }
    for file in [
        path.to_path_buf(),
        sibling(path, "-wal"),
        sibling(path, "-shm"),
    ] {
        files::tighten_and_say(&file, files::PRIVATE_FILE);
    }
}

/// Marks `path` as the database in use while it is opened or written
/// without a [`Store`] (see [`IN_USE`]).
fn in_use(path: &Path) {
    IN_USE.with(|p| *p.borrow_mut() = Some(std::sync::Arc::from(path)));
}

/// Whether a database file is at `path`. A path that cannot be looked at
/// (a symbolic link loop, a folder it may not search) is an error naming
/// it, never "no database yet".
pub fn database_exists(path: &Path) -> Result<bool, StoreError> {
    match path.try_exists() {
        // A file where a folder should be: nothing there, and creating it
        // names the file in the way.
        Err(e) if e.raw_os_error() == Some(libc::ENOTDIR) => Ok(false),
        Err(e) => Err(StoreError::CannotOpen {
            path: path.to_path_buf(),
            detail: io_words(&e),
        }),
        Ok(found) => Ok(found),
    }
}

/// An IO error's words without Rust's `(os error N)`.
fn io_words(e: &std::io::Error) -> String {
    let text = e.to_string();
    match text.rfind(" (os error ") {
        Some(at) => text[..at].to_string(),
        None => text,
    }
}

/// A directory at the path would otherwise surface as SQLite's "unable to
/// open database file"; a path that cannot be looked at is named with why.
fn refuse_directory(path: &Path) -> Result<(), StoreError> {
    database_exists(path)?;
    if path.is_dir() {
        return Err(StoreError::IsDirectory {
            path: path.to_path_buf(),
        });
    }
    Ok(())
}

/// Opens an existing `path` for reading only and reads its schema version.
///
/// The connection is `query_only`: SQLite refuses every statement that
/// would write. It is still opened read-write when the file allows it, so
/// that closing it removes the `-wal` and `-shm` files as a writer's close
/// does (a read-only connection would leave them behind). A file that is
/// not writable is opened read-only by SQLite itself. A database in WAL
/// mode needs its `-shm` file; in a read-only folder where none exists (a
/// cleanly closed database) SQLite cannot create it, so the file is opened
/// as immutable instead, and so is a file this process cannot write (a
/// read-only connection could not remove the `-wal` and `-shm` files it
/// made). Safe, because without a `-wal` or `-journal` file there is
/// nothing newer to read and no writer at work (a writer in WAL mode keeps
/// its `-wal` file while it has the database open).
fn connect_read_only(path: &Path) -> Result<(Connection, u32), StoreError> {
    in_use(path);
    refuse_directory(path)?;
    if !path.exists() {
        return Err(StoreError::CannotOpen {
            path: path.to_path_buf(),
            detail: "no such file".to_string(),
        });
    }
    let settled = !sibling(path, "-wal").exists() && !sibling(path, "-journal").exists();
    if settled && !(writable(path) && writable(folder(path))) {
        return connect_immutable(path);
    }
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn =
        Connection::open_with_flags(path, flags).map_err(|e| StoreError::from(e).opening(path))?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    conn.pragma_update(None, "query_only", true)?;
    match conn.query_row("PRAGMA user_version", [], |r| r.get::<_, u32>(0)) {
        Ok(found) => Ok((conn, found)),
        Err(e)
            if settled
                && matches!(
                    e.sqlite_error_code(),
                    Some(rusqlite::ErrorCode::ReadOnly | rusqlite::ErrorCode::CannotOpen)
                ) =>
        {
            drop(conn);
            connect_immutable(path)
        }
        Err(e) => Err(StoreError::from(e).opening(path)),
    }
}

/// Opens `path` as immutable: no locks, no `-wal` or `-shm` files.
fn connect_immutable(path: &Path) -> Result<(Connection, u32), StoreError> {
    let conn = Connection::open_with_flags(
        immutable_uri(path),
        OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_NO_MUTEX
            | OpenFlags::SQLITE_OPEN_URI,
    )
    .map_err(|e| StoreError::from(e).opening(path))?;
    let found = read_user_version(&conn, path)?;
    Ok((conn, found))
}

/// `path` with `suffix` appended to its file name (`r.db-wal`).
fn sibling(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// `file:<path>?immutable=1`, the path percent-encoded byte by byte.
fn immutable_uri(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut uri = String::from("file:");
    for &b in absolute.as_os_str().as_bytes() {
        if b.is_ascii_alphanumeric() || b"/-_.~".contains(&b) {
            uri.push(char::from(b));
        } else {
            uri.push_str(&format!("%{b:02X}"));
        }
    }
    uri.push_str("?immutable=1");
    uri
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

/// Refuses a database [`OPEN_CHECK`] finds a problem in. It only reads,
/// and runs after SQLite has replayed a WAL or rolled back a hot journal
/// left by a crash (the first read does that), so it checks the database as
/// it will be used.
fn check_integrity(conn: &Connection, path: &Path) -> Result<(), StoreError> {
    let problems = integrity_problems(conn, OPEN_CHECK).map_err(|e| e.opening(path))?;
    if problems.is_empty() {
        return Ok(());
    }
    tracing::debug!(path = %path.display(), problem = %problems[0], "database failed its integrity check");
    Err(StoreError::Corrupt {
        path: path.to_path_buf(),
        detail: "database disk image is malformed".to_string(),
    })
}

/// The rows of an integrity pragma other than the single `ok`.
fn integrity_problems(conn: &Connection, pragma: &str) -> Result<Vec<String>, StoreError> {
    let mut stmt = conn.prepare(pragma)?;
    let rows = stmt
        .query_map([], |r| r.get::<_, String>(0))?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(rows.into_iter().filter(|r| r != "ok").collect())
}

/// Takes the write lock and gives it back at once, writing nothing: a
/// read-only file or folder, or a lock another process keeps for longer
/// than [`BUSY_TIMEOUT`], is found here rather than at the first real
/// write.
fn check_writable(conn: &Connection) -> Result<(), StoreError> {
    conn.execute_batch("BEGIN IMMEDIATE")?;
    conn.execute_batch("ROLLBACK")?;
    Ok(())
}

impl StoreError {
    /// While opening `path`: a damaged, foreign, read-only or locked file,
    /// or a directory, is named as such.
    pub fn opening(self, path: &Path) -> StoreError {
        let StoreError::Sqlite(e) = self else {
            return self;
        };
        let path_buf = path.to_path_buf();
        match e.sqlite_error_code() {
            Some(rusqlite::ErrorCode::DatabaseCorrupt) => StoreError::Corrupt {
                path: path_buf,
                detail: e.to_string(),
            },
            Some(rusqlite::ErrorCode::NotADatabase) => StoreError::NotADatabase {
                path: path_buf,
                detail: "not an SQLite file".to_string(),
            },
            Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked) => {
                StoreError::Locked { path: path_buf }
            }
            Some(rusqlite::ErrorCode::ReadOnly) => StoreError::ReadOnly {
                why: why_read_only(path),
                path: path_buf,
            },
            Some(rusqlite::ErrorCode::CannotOpen) if path.is_dir() => {
                StoreError::IsDirectory { path: path_buf }
            }
            Some(rusqlite::ErrorCode::CannotOpen) if path.exists() && !writable(folder(path)) => {
                StoreError::ReadOnly {
                    why: why_read_only(path),
                    path: path_buf,
                }
            }
            Some(rusqlite::ErrorCode::CannotOpen) => StoreError::CannotOpen {
                path: path_buf,
                detail: sqlite_message(&e),
            },
            _ => StoreError::Sqlite(e),
        }
    }
}

/// SQLite's own words for the error, without the file name rusqlite
/// appends to some.
fn sqlite_message(e: &rusqlite::Error) -> String {
    match e {
        rusqlite::Error::SqliteFailure(f, _) => {
            rusqlite::ffi::code_to_str(f.extended_code).to_string()
        }
        other => other.to_string(),
    }
}

fn folder(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// Whether this process may write `path` (`access(2)`, so root may).
#[allow(unsafe_code)]
fn writable(path: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: access(2) reads a NUL-terminated path we own.
    unsafe { libc::access(c.as_ptr(), libc::W_OK) == 0 }
}

fn why_read_only(path: &Path) -> String {
    if !writable(path) {
        "the file is not writable".to_string()
    } else if !writable(folder(path)) {
        format!(
            "its folder {} is not writable, and SQLite keeps its journal there",
            folder(path).display()
        )
    } else {
        "SQLite could only open it for reading".to_string()
    }
}

fn configure(conn: &Connection) -> Result<(), StoreError> {
    // A value removed (a key moved to the keyring, a profile deleted) is
    // overwritten with zeros, not left in a free page.
    conn.pragma_update(None, "secure_delete", "ON")?;
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
    fn a_full_database_is_named_even_after_another_was_used_on_the_thread() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a.db"), dir.path().join("b.db"));
        let first = Store::open(&a).unwrap();
        let second = Store::open(&b).unwrap();
        first.profile_count().unwrap();
        // SQLite's own "database or disk is full", at a page limit.
        let pages: u32 = second
            .conn()
            .query_row("PRAGMA page_count", [], |r| r.get(0))
            .unwrap();
        second
            .conn()
            .query_row(&format!("PRAGMA max_page_count = {pages}"), [], |_| Ok(()))
            .unwrap();
        first.profile_count().unwrap();
        let name = "x".repeat(4000);
        let err = (0..64)
            .find_map(|i| {
                second
                    .create_profile(&format!("{name}{i}"), Utc::now())
                    .err()
            })
            .expect("the database filled up");
        assert_eq!(
            err.to_string(),
            format!(
                "{} cannot grow: the disk is full (or the file at its size limit); nothing of \
                 this change was written; free some space and it is made again (a run retries \
                 by itself)",
                b.display()
            ),
            "the file that is full, not the one used before it"
        );
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
    fn immutable_uri_percent_encodes_everything_but_plain_path_characters() {
        assert_eq!(
            immutable_uri(Path::new("/tmp/my db?x=1%#é.db")),
            "file:/tmp/my%20db%3Fx%3D1%25%23%C3%A9.db?immutable=1"
        );
    }
}

#[cfg(test)]
mod id_marks_tests;

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
             cycle_json, created_at, updated_at) \
             VALUES (1, 'p', 'x', 'running', 1, 0, '{}', 't', 't');
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
