//! A database file Recourse cannot use — written by a newer build, not
//! SQLite, damaged or truncated — is refused with an error naming the file,
//! by `Engine::open` and by every CLI command that opens one, and the file
//! is left byte-for-byte as it was, with no journal files beside it.

use std::path::{Path, PathBuf};

use crate::common::recourse_on;
use recourse::engine::{Engine, EngineOptions, RouteQuery, RouteViewer};
use recourse::store::{Store, SCHEMA_VERSION};

/// A bad file, how to make it, and the error it must give (`{}` is the path).
struct Case {
    name: &'static str,
    make: fn(&Path),
    error: String,
}

const DAMAGED: &str =
    "{} is damaged (database disk image is malformed); the file was left untouched: \
                       restore it from a backup, or move it aside to start a new database";

fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "newer schema, rollback journal",
            make: newer_schema,
            error: format!(
                "{{}} has schema version 99, newer than this build understands ({SCHEMA_VERSION}); \
                 use a newer Recourse or another database file"
            ),
        },
        Case {
            name: "not SQLite",
            make: |p| std::fs::write(p, b"my notes, not a database\n".repeat(300)).unwrap(),
            error:
                "{} is not a Recourse database (not an SQLite file); the file was left untouched"
                    .to_string(),
        },
        Case {
            name: "garbage pages after a valid first page",
            make: |p| damage(p, |bytes| bytes[4096..].fill(0xA5)),
            error: DAMAGED.to_string(),
        },
        Case {
            name: "garbage after a valid header",
            make: |p| damage(p, |bytes| bytes[100..].fill(0x5A)),
            error: DAMAGED.to_string(),
        },
        Case {
            name: "an index that no longer matches its table (quick_check passes)",
            make: |p| {
                damage(p, |_| {});
                let c = rusqlite::Connection::open(p).unwrap();
                c.execute_batch(
                    "INSERT INTO routes (id, profile_name, prompt, state, generation, \
                     candidate_index, cycle_json, created_at, updated_at) \
                     VALUES (1, 'Work', 'x', 'succeeded', 1, 0, '{}', 't', 't'); \
                     PRAGMA writable_schema = ON; \
                     UPDATE sqlite_schema \
                     SET sql = 'CREATE INDEX routes_by_state ON routes (profile_name)' \
                     WHERE name = 'routes_by_state';",
                )
                .unwrap();
            },
            error: DAMAGED.to_string(),
        },
        Case {
            // What the corruption trial met: integrity_check passes, and
            // every write of an attempt result would then fail.
            name: "a bit flipped in the schema text: a column renamed",
            make: |p| {
                damage(p, |bytes| {
                    let at = bytes
                        .windows(11)
                        .position(|w| w == b"effect_json")
                        .expect("the schema text is in the file");
                    bytes[at + 7] ^= 0x10; // effect_json -> effect_zson
                })
            },
            error: format!(
                "{{}} is damaged (attempt_results is not as schema version {SCHEMA_VERSION} \
                 defines it); the file was left untouched: restore it from a backup, or move it \
                 aside to start a new database"
            ),
        },
        Case {
            name: "truncated to half",
            make: |p| damage(p, |bytes| bytes.truncate(bytes.len() / 2)),
            error: DAMAGED.to_string(),
        },
    ]
}

/// A database in rollback-journal mode whose `user_version` is newer than
/// this build: switching it to WAL would rewrite its header.
fn newer_schema(path: &Path) {
    let c = rusqlite::Connection::open(path).unwrap();
    c.execute_batch("CREATE TABLE notes (text TEXT); INSERT INTO notes VALUES ('keep me');")
        .unwrap();
    c.pragma_update(None, "user_version", 99).unwrap();
}

/// A real Recourse database with a profile, then `edit`ed on disk.
fn damage(path: &Path, edit: fn(&mut Vec<u8>)) {
    {
        let store = Store::open(path).unwrap();
        store.create_profile("Work", chrono::Utc::now()).unwrap();
    }
    let mut bytes = std::fs::read(path).unwrap();
    assert!(bytes.len() > 8192, "the database spans several pages");
    edit(&mut bytes);
    std::fs::write(path, bytes).unwrap();
}

/// The files of `dir` with their contents.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files: Vec<(PathBuf, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let path = e.unwrap().path();
            let bytes = std::fs::read(&path).unwrap();
            (path, bytes)
        })
        .collect();
    files.sort();
    files
}

fn expected(case: &Case, path: &Path) -> String {
    case.error.replace("{}", &path.display().to_string())
}

#[tokio::test]
async fn engine_open_refuses_each_bad_file_and_leaves_it_untouched() {
    for case in cases() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("recourse.db");
        (case.make)(&path);
        let before = snapshot(dir.path());
        for opts in [
            EngineOptions::default(),
            EngineOptions {
                seed_demo: false,
                adopt_orphans: false,
                ..EngineOptions::default()
            },
        ] {
            let error = Engine::open(&path, opts)
                .await
                .err()
                .unwrap_or_else(|| panic!("{}: the engine must refuse the file", case.name));
            assert_eq!(error.to_string(), expected(&case, &path), "{}", case.name);
            assert_eq!(error.code().as_str(), "store", "{}", case.name);
        }
        assert!(
            snapshot(dir.path()) == before,
            "{}: the file is unchanged and nothing was created beside it",
            case.name
        );
    }
}

/// The app's glance at the route list while its engine is still opening
/// skips the integrity check, so it may read a damaged file; it must still
/// write nothing, and refuse what is not its own (the engine's open then
/// reports the damage).
#[test]
fn the_unchecked_glance_at_each_bad_file_writes_nothing() {
    for case in cases() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("recourse.db");
        (case.make)(&path);
        let before = snapshot(dir.path());
        let not_ours = case.name.starts_with("newer schema") || case.name == "not SQLite";
        match RouteViewer::open_unchecked(&path) {
            Ok(_) if not_ours => panic!("{}: must be refused, not read", case.name),
            Ok(viewer) => {
                let _ = viewer.list_routes_page(&RouteQuery::all(100));
            }
            Err(error) => assert_eq!(error.to_string(), expected(&case, &path), "{}", case.name),
        }
        assert!(
            snapshot(dir.path()) == before,
            "{}: the file is unchanged and nothing was created beside it",
            case.name
        );
    }
}

#[test]
fn every_cli_command_that_opens_the_database_refuses_each_bad_file() {
    let commands: [&[&str]; 4] = [
        &["routes"],
        &["route", "1"],
        &["action", "1", "stop", "--generation", "1"],
        &["run", "--profile", "Work", "--prompt", "go"],
    ];
    for case in cases() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("recourse.db");
        (case.make)(&path);
        let before = snapshot(dir.path());
        for args in commands {
            let out = recourse_on(&path, args);
            assert_eq!(out.status.code(), Some(1), "{} {args:?}", case.name);
            assert_eq!(
                String::from_utf8_lossy(&out.stderr),
                format!(
                    "error: opening {}: {}\n",
                    path.display(),
                    expected(&case, &path)
                ),
                "{} {args:?}: one line naming the file and why",
                case.name
            );
            assert!(
                out.stdout.is_empty(),
                "{} {args:?}: nothing printed",
                case.name
            );
        }
        assert!(
            snapshot(dir.path()) == before,
            "{}: the file is unchanged and nothing was created beside it",
            case.name
        );
    }
}

#[tokio::test]
async fn a_zero_length_file_is_a_new_empty_database() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("recourse.db");
    std::fs::write(&path, b"").unwrap();
    let opts = EngineOptions {
        seed_demo: false,
        ..EngineOptions::default()
    };
    let engine = Engine::open(&path, opts)
        .await
        .expect("SQLite reads an empty file as an empty database");
    assert!(engine
        .list_routes(&RouteQuery::all(1))
        .unwrap()
        .routes
        .is_empty());
    engine.shutdown().await;
}

#[tokio::test]
async fn a_directory_or_a_file_in_the_way_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("folder.db");
    std::fs::create_dir(&folder).unwrap();
    let error = Engine::open(&folder, EngineOptions::default())
        .await
        .err()
        .unwrap();
    assert_eq!(
        error.to_string(),
        format!("{} is a directory, not a database file", folder.display())
    );
    let file = dir.path().join("file");
    std::fs::write(&file, b"x").unwrap();
    let error = Engine::open(&file.join("recourse.db"), EngineOptions::default())
        .await
        .err()
        .unwrap();
    assert!(
        error.to_string().starts_with(&format!(
            "cannot create the database folder {}: ",
            file.display()
        )),
        "{error}"
    );
}
