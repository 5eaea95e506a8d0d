//! What Recourse keeps on disk is its owner's alone: the data folder is
//! created 0700, the database and its `-wal` and `-shm` files, backups and
//! exported documents 0600, and a looser database or data folder found at
//! open is tightened, saying so on stderr.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output};

use crate::common::recourse_on;
use recourse::store::Store;

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// `recourse ARGS` with the default database under `data` (no `--db`).
fn recourse(data: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_recourse"))
        .args(args)
        .env("XDG_DATA_HOME", data)
        .env_remove("RECOURSE_DB")
        .output()
        .unwrap()
}

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn the_data_folder_database_side_files_exports_and_backups_are_private() {
    let data = tempfile::tempdir().unwrap();
    ok(&recourse(
        data.path(),
        &["profile", "create", "Work", "--agent", "simulated"],
    ));
    let folder = data.path().join("recourse");
    let db = folder.join("recourse.db");
    assert_eq!(mode(&folder), 0o700, "the data folder is created 0700");
    assert_eq!(mode(&db), 0o600, "the database is created 0600");
    // An open connection keeps the side files; SQLite gives them the
    // database's mode.
    let store = Store::open(&db).unwrap();
    store.list_profiles().unwrap();
    for side in ["recourse.db-wal", "recourse.db-shm"] {
        let path = folder.join(side);
        assert!(path.exists(), "{side} exists while the database is open");
        assert_eq!(mode(&path), 0o600, "{side}");
    }
    let export = data.path().join("work.json");
    ok(&recourse(
        data.path(),
        &["profile", "export", "Work", export.to_str().unwrap()],
    ));
    assert_eq!(mode(&export), 0o600, "an exported document");
    let backup = data.path().join("copy.db");
    ok(&recourse(
        data.path(),
        &["db", "backup", backup.to_str().unwrap()],
    ));
    assert_eq!(
        mode(&backup),
        0o600,
        "a backup holds what the database holds"
    );
    drop(store);
}

#[test]
fn a_looser_database_and_data_folder_are_tightened_at_open_and_it_is_said() {
    let data = tempfile::tempdir().unwrap();
    let folder = data.path().join("recourse");
    std::fs::create_dir(&folder).unwrap();
    let db = folder.join("recourse.db");
    drop(Store::open(&db).unwrap());
    // As an older build left them.
    std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o644)).unwrap();

    let listed = recourse(data.path(), &["profile", "list"]);
    ok(&listed);
    assert_eq!(
        mode(&db),
        0o644,
        "a command that only reads changes nothing"
    );

    let out = recourse(data.path(), &["profile", "create", "Work"]);
    ok(&out);
    assert_eq!(mode(&folder), 0o700);
    assert_eq!(mode(&db), 0o600);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains(&format!(
            "{} was readable by others (644); its permissions are now 600",
            db.display()
        )) && said.contains(&format!(
            "{} was readable by others (755); its permissions are now 700",
            folder.display()
        )),
        "each change is said: {said}"
    );
    let again = recourse(data.path(), &["profile", "create", "Home"]);
    ok(&again);
    assert!(again.stderr.is_empty(), "said once, when changed");
}

#[test]
fn a_folder_named_with_db_is_left_as_it_is() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let db = dir.path().join("mine.db");
    let out = recourse_on(&db, &["profile", "create", "Work"]);
    ok(&out);
    assert_eq!(mode(dir.path()), 0o755, "the user's folder is the user's");
    assert_eq!(mode(&db), 0o600, "the database in it is still private");
}
