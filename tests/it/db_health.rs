//! The database file itself: a directory, a read-only file or folder, or a
//! database another process keeps locked is named once with its cause, and
//! commands that only read still work where writing cannot; one unreadable
//! route row does not hide the others; `recourse db check` and `recourse db
//! backup`.

use crate::common::recourse;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use crate::common::{seed_profile, uniform_policy};
use recourse::agent::{AgentSpec, SimStep};
use recourse::policy::Exhausted;
use recourse::profile::CandidateInput;
use recourse::store::Store;

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A database with profile "Quick" (one simulated candidate that
/// succeeds) and `routes` finished routes.
fn database(dir: &Path, routes: usize) -> PathBuf {
    let db = dir.join("r.db");
    let candidate = CandidateInput::new(
        "sim",
        AgentSpec::simulated(vec![SimStep::Succeed { after_ms: 1 }]),
        uniform_policy(None, None, Exhausted::Stop),
    );
    seed_profile(&db, "Quick", &[candidate]);
    let db_arg = db.display().to_string();
    for _ in 0..routes {
        let out = recourse(&[
            "run",
            "--profile",
            "Quick",
            "--prompt",
            "go",
            "--db",
            &db_arg,
        ]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    }
    db
}

/// The files of `dir` with their contents.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files: Vec<(PathBuf, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let path = e.unwrap().path();
            let bytes = if path.is_dir() {
                Vec::new()
            } else {
                std::fs::read(&path).unwrap()
            };
            (path, bytes)
        })
        .collect();
    files.sort();
    files
}

/// The user tests run the binary as when a file must be unwritable: root
/// writes any file, so as root the binary runs as `nobody` (setpriv).
/// `None` when that is not possible here.
#[allow(unsafe_code)]
fn unprivileged() -> Option<(Vec<String>, Option<u32>)> {
    // SAFETY: geteuid(2) has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Some((Vec::new(), None));
    }
    let setpriv = ["/usr/bin/setpriv", "/bin/setpriv"]
        .into_iter()
        .find(|p| Path::new(p).exists())?;
    let nobody = 65534;
    Some((
        vec![
            setpriv.to_string(),
            format!("--reuid={nobody}"),
            format!("--regid={nobody}"),
            "--clear-groups".to_string(),
        ],
        Some(nobody),
    ))
}

fn run_as(prefix: &[String], args: &[&str]) -> Output {
    let mut cmd = match prefix.split_first() {
        Some((program, rest)) => {
            let mut c = Command::new(program);
            c.args(rest).arg(env!("CARGO_BIN_EXE_recourse"));
            c
        }
        None => Command::new(env!("CARGO_BIN_EXE_recourse")),
    };
    cmd.args(args).output().expect("recourse runs")
}

fn chown(path: &Path, uid: Option<u32>) {
    let Some(uid) = uid else { return };
    std::os::unix::fs::chown(path, Some(uid), Some(uid)).unwrap();
}

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

#[test]
fn a_directory_is_named_once_by_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("folder.db");
    std::fs::create_dir(&folder).unwrap();
    let f = folder.display().to_string();
    let commands: [&[&str]; 4] = [
        &["routes"],
        &["route", "1"],
        &["action", "1", "stop", "--generation", "1"],
        &["run", "--profile", "Quick", "--prompt", "go"],
    ];
    for args in commands {
        let mut args = args.to_vec();
        args.extend(["--db", &f]);
        let out = recourse(&args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert_eq!(
            text(&out.stderr),
            format!("error: opening {f}: {f} is a directory, not a database file\n"),
            "{args:?}: the cause once, not SQLite's message three times"
        );
    }
}

#[test]
fn a_read_only_file_or_folder_is_listed_and_refused_for_writing_once() {
    let Some((prefix, uid)) = unprivileged() else {
        eprintln!("skipped: running as root without setpriv, no way to make a file unwritable");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let db = database(dir.path(), 2);
    let listing = recourse(&["routes", "--db", &db.display().to_string()]);
    assert_eq!(listing.status.code(), Some(0));
    let detail = recourse(&["route", "1", "--db", &db.display().to_string()]);
    assert_eq!(detail.status.code(), Some(0));

    // A 0444 file in a folder this user may write.
    chmod(dir.path(), 0o755);
    chown(dir.path(), uid);
    chown(&db, uid);
    chmod(&db, 0o444);
    // A database in a folder this user may not write (0555).
    let locked_dir = dir.path().join("readonly");
    std::fs::create_dir(&locked_dir).unwrap();
    let in_ro_dir = locked_dir.join("r.db");
    std::fs::copy(&db, &in_ro_dir).unwrap();
    chmod(&in_ro_dir, 0o644);
    chown(&in_ro_dir, uid);
    chown(&locked_dir, uid);
    chmod(&locked_dir, 0o555);

    let cases = [
        (db.clone(), "the file is not writable".to_string()),
        (
            in_ro_dir.clone(),
            format!(
                "its folder {} is not writable, and SQLite keeps its journal there",
                locked_dir.display()
            ),
        ),
    ];
    for (path, why) in cases {
        let p = path.display().to_string();
        let parent = path.parent().unwrap().to_path_buf();
        let before = snapshot(&parent);
        let out = run_as(&prefix, &["routes", "--db", &p]);
        assert_eq!(out.status.code(), Some(0), "{p}: {}", text(&out.stderr));
        assert_eq!(out.stdout, listing.stdout, "{p}: listed as before");
        let out = run_as(&prefix, &["route", "1", "--db", &p]);
        assert_eq!(out.status.code(), Some(0), "{p}: {}", text(&out.stderr));
        assert_eq!(out.stdout, detail.stdout, "{p}: shown as before");
        let out = run_as(&prefix, &["db", "check", "--db", &p]);
        assert_eq!(out.status.code(), Some(0), "{p}: {}", text(&out.stderr));
        for args in [
            &["action", "1", "stop", "--generation", "2"][..],
            &["run", "--profile", "Quick", "--prompt", "go"][..],
        ] {
            let mut args = args.to_vec();
            args.extend(["--db", &p]);
            let out = run_as(&prefix, &args);
            assert_eq!(out.status.code(), Some(1), "{args:?}");
            assert_eq!(
                text(&out.stderr),
                format!(
                    "error: opening {p}: {p} is read-only ({why}); it can be viewed but not changed\n"
                ),
                "{args:?}: the cause once"
            );
            assert!(out.stdout.is_empty());
        }
        assert!(snapshot(&parent) == before, "{p}: nothing written");
    }
    let new = locked_dir.join("new.db");
    let n = new.display().to_string();
    // The demo profile: the one profile a database not created yet holds,
    // so `run` goes on to create the database (any other name is refused
    // before anything is opened).
    let out = run_as(
        &prefix,
        &[
            "run",
            "--profile",
            recourse::engine::DEMO_PROFILE,
            "--prompt",
            "go",
            "--db",
            &n,
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        format!(
            "error: opening {n}: cannot open {n}: its folder {} is not writable, so the \
             database cannot be created\n",
            locked_dir.display()
        )
    );
    assert!(!new.exists());
    chmod(&locked_dir, 0o755);
}

#[test]
fn a_locked_database_is_read_at_once_and_refused_for_writing_within_the_busy_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let db = database(dir.path(), 1);
    let p = db.display().to_string();
    // Another process keeps the write lock (a stuck `sqlite3` shell, say).
    let holder = rusqlite::Connection::open(&db).unwrap();
    holder.execute_batch("BEGIN IMMEDIATE").unwrap();
    holder
        .execute("UPDATE routes SET prompt = prompt", [])
        .unwrap();

    for args in [&["routes"][..], &["route", "1"][..], &["db", "check"][..]] {
        let mut args = args.to_vec();
        args.extend(["--db", &p]);
        let started = Instant::now();
        let out = recourse(&args);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {}",
            text(&out.stderr)
        );
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "{args:?}: readers do not wait for the lock ({:?})",
            started.elapsed()
        );
    }
    let locked = format!(
        "error: opening {p}: {p} is locked by another process: its write lock was not released \
         within 5 s; try again when that process is done\n"
    );
    for args in [
        &["action", "1", "stop", "--generation", "2"][..],
        &["run", "--profile", "Quick", "--prompt", "go"][..],
    ] {
        let mut args = args.to_vec();
        args.extend(["--db", &p]);
        let started = Instant::now();
        let out = recourse(&args);
        let took = started.elapsed();
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert_eq!(text(&out.stderr), locked, "{args:?}: the cause once");
        assert!(
            took >= Duration::from_secs(4) && took < Duration::from_secs(9),
            "{args:?}: waits the 5 s busy timeout once, then fails (took {took:?})"
        );
    }
    holder.execute_batch("ROLLBACK").unwrap();
}

#[test]
fn one_unreadable_route_row_is_named_and_the_others_are_listed() {
    let dir = tempfile::tempdir().unwrap();
    let db = database(dir.path(), 4);
    let p = db.display().to_string();
    {
        let c = rusqlite::Connection::open(&db).unwrap();
        c.execute("UPDATE routes SET cycle_json = '{broken' WHERE id = 2", [])
            .unwrap();
        c.execute("UPDATE routes SET generation = 'many' WHERE id = 3", [])
            .unwrap();
    }
    let out = recourse(&["routes", "--db", &p]);
    assert_eq!(out.status.code(), Some(1));
    let listed: Vec<String> = text(&out.stdout)
        .lines()
        .map(|l| l.split_whitespace().take(2).collect::<Vec<_>>().join(" "))
        .collect();
    assert_eq!(
        listed,
        ["route 4", "route 1"],
        "the readable routes, newest first"
    );
    let stderr = text(&out.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 3, "{stderr}");
    assert!(
        lines[0].starts_with(
            "error: route 3 cannot be read: stored route cannot be read: Invalid column type Text at index: 6, name: generation"
        ),
        "{stderr}"
    );
    assert!(
        lines[1].starts_with("error: route 2 cannot be read: stored route cycle cannot be read: "),
        "{stderr}"
    );
    assert_eq!(
        lines[2],
        "error: 2 of 4 routes could not be read; the others are shown"
    );

    let out = recourse(&["routes", "--json", "--db", &p]);
    assert_eq!(out.status.code(), Some(1));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let ids: Vec<u64> = json
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_u64().unwrap())
        .collect();
    assert_eq!(ids, [4, 1]);

    let out = recourse(&["route", "2", "--db", &p]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr)
            .starts_with("error: route 2 cannot be read: stored route cycle cannot be read: "),
        "{}",
        text(&out.stderr)
    );
    let out = recourse(&["route", "1", "--db", &p]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
}

#[test]
fn db_check_says_ok_or_lists_the_problems() {
    let dir = tempfile::tempdir().unwrap();
    let db = database(dir.path(), 2);
    let p = db.display().to_string();
    let out = recourse(&["db", "check", "--db", &p]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        format!("ok: {p} passed SQLite's integrity check\n")
    );

    // Damage only an index: the table rows are intact, so `quick_check`
    // passes, but the index no longer matches them.
    let damaged = index_damaged(&db);
    let before = std::fs::read(&damaged).unwrap();
    let d = damaged.display().to_string();
    let out = recourse(&["db", "check", "--db", &d]);
    assert_eq!(out.status.code(), Some(1));
    assert!(!out.stdout.is_empty(), "the problems are listed");
    assert!(
        text(&out.stderr).starts_with(&format!("error: {d} is damaged: ")),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(
        std::fs::read(&damaged).unwrap(),
        before,
        "check writes nothing"
    );

    let out = recourse(&[
        "db",
        "check",
        "--db",
        &dir.path().join("none.db").display().to_string(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).starts_with("error: no database at "));
}

/// A copy of `db` whose index on `routes.state` now claims to index
/// `profile_name`: every page is well formed (`quick_check` passes), but
/// the index entries no longer match the rows (`integrity_check` fails).
fn index_damaged(db: &Path) -> PathBuf {
    let copy = db.with_file_name("index-damaged.db");
    std::fs::copy(db, &copy).unwrap();
    let c = rusqlite::Connection::open(&copy).unwrap();
    c.execute_batch(
        "PRAGMA writable_schema = ON; \
         UPDATE sqlite_schema SET sql = 'CREATE INDEX routes_by_state ON routes (profile_name)' \
         WHERE name = 'routes_by_state';",
    )
    .unwrap();
    drop(c);
    let c = rusqlite::Connection::open(&copy).unwrap();
    let quick: String = c.query_row("PRAGMA quick_check", [], |r| r.get(0)).unwrap();
    assert_eq!(quick, "ok", "the damage is one quick_check does not see");
    copy
}

#[test]
fn db_backup_copies_a_database_that_opens_and_never_replaces_by_accident() {
    let dir = tempfile::tempdir().unwrap();
    let db = database(dir.path(), 3);
    let p = db.display().to_string();
    let dest = dir.path().join("copy.db");
    let d = dest.display().to_string();
    let out = recourse(&["db", "backup", &d, "--db", &p]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), format!("backed up {p} to {d}\n"));
    let original = Store::open(&db).unwrap().routes().unwrap();
    let copied = Store::open(&dest).unwrap().routes().unwrap();
    assert_eq!(copied, original, "the copy opens and holds the same routes");
    assert_eq!(original.len(), 3);
    let listing = recourse(&["routes", "--db", &d]);
    assert_eq!(listing.status.code(), Some(0));
    assert_eq!(text(&listing.stdout).lines().count(), 3);

    std::fs::write(&dest, b"precious").unwrap();
    let out = recourse(&["db", "backup", &d, "--db", &p]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        format!("error: {d} already exists; pass --force to replace it\n")
    );
    assert_eq!(std::fs::read(&dest).unwrap(), b"precious", "left as it was");
    let out = recourse(&["db", "backup", &d, "--force", "--db", &p]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(Store::open(&dest).unwrap().routes().unwrap(), original);

    let out = recourse(&["db", "backup", &p, "--force", "--db", &p]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        format!("error: {p} is the database itself\n")
    );
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        names.iter().all(|n| !n.contains(".partial-")),
        "no partial copy left: {names:?}"
    );
}

/// A `--db` that is a symbolic link loop (or any path that cannot be looked
/// at) is an open error naming it, never "no profiles yet" or "no routes
/// yet", and nothing is created.
#[test]
fn a_symbolic_link_loop_as_db_is_an_open_error_for_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.db"), dir.path().join("b.db"));
    std::os::unix::fs::symlink(&b, &a).unwrap();
    std::os::unix::fs::symlink(&a, &b).unwrap();
    let db = a.display().to_string();
    let commands: &[&[&str]] = &[
        &["profile", "list"],
        &["profile", "show", "Work"],
        &["routes"],
        &["route", "1"],
        &["run", "--profile", "Work", "--prompt", "go"],
        &["profile", "create", "Work"],
        &["db", "check"],
        &["recover"],
    ];
    for args in commands {
        let mut args = args.to_vec();
        args.extend(["--db", &db]);
        let out = recourse(&args);
        assert_eq!(
            out.status.code(),
            Some(1),
            "{args:?}: {}",
            text(&out.stdout)
        );
        assert!(
            out.stdout.is_empty(),
            "{args:?} printed {}",
            text(&out.stdout)
        );
        let said = text(&out.stderr);
        assert!(
            said.contains(&format!(
                "cannot open {db}: Too many levels of symbolic links"
            )),
            "{args:?} names the file and why: {said}"
        );
    }
    let mut left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    left.sort();
    assert_eq!(
        left,
        ["a.db", "b.db"],
        "only the two links, nothing created"
    );
}
