//! A disk that fills while `recourse run` works: every error names the
//! database file, the run waits and finishes when space returns, and the
//! log lines on a redirected stderr are plain text (no colour codes).
//!
//! The disk is a real 1 MiB tmpfs, mounted in a mount namespace of this
//! test's own (`unshare -rm`), so nothing outside it is touched.

use std::path::Path;
use std::process::Command;

const SCRIPT: &str = r#"
set -eu
mnt="$1"; bin="$2"; doc="$3"; db="$mnt/r.db"
mount -t tmpfs -o size=1m tmpfs "$mnt"
"$bin" profile import "$doc" --db "$db" >/dev/null
RECOURSE_LOG=warn "$bin" run --profile Slow --prompt go --db "$db" >"$mnt/../run.out" 2>"$mnt/../run.err" &
run=$!
# The disk fills once the route is stored (a busy machine may take seconds).
for _ in $(seq 1 300); do
  "$bin" routes --db "$db" 2>/dev/null | grep -q "^route 1 " && break
  sleep 0.1
done
dd if=/dev/zero of="$mnt/fill" bs=1k 2>/dev/null || true
for _ in $(seq 1 200); do
  grep -q "cannot grow" "$mnt/../run.err" && break
  sleep 0.1
done
rm "$mnt/fill"
wait "$run" && echo "run exit 0" || echo "run exit $?"
"$bin" routes --db "$db"
"#;

#[test]
fn a_full_disk_is_named_and_the_run_finishes_when_space_returns() {
    let dir = tempfile::tempdir().unwrap();
    let mnt = dir.path().join("disk");
    std::fs::create_dir(&mnt).unwrap();
    let doc = dir.path().join("slow.json");
    std::fs::write(&doc, SLOW).unwrap();
    let out = Command::new("unshare")
        .args(["-rm", "sh", "-c", SCRIPT, "sh"])
        .arg(&mnt)
        .arg(env!("CARGO_BIN_EXE_recourse"))
        .arg(&doc)
        .output()
        .expect("unshare runs");
    let said = String::from_utf8_lossy(&out.stdout);
    let err = std::fs::read_to_string(dir.path().join("run.err")).unwrap_or_default();
    assert!(
        out.status.success(),
        "{said}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let db = mnt.join("r.db");
    assert!(
        err.contains(&format!("{} cannot grow: the disk is full", db.display())),
        "the full disk is named with the database file: {err}"
    );
    assert!(
        !err.contains("database error: database or disk is full"),
        "never the unnamed SQLite message: {err}"
    );
    assert!(
        !err.contains('\u{1b}'),
        "stderr is a file here: no colour codes: {err:?}"
    );
    assert!(
        said.contains("run exit 0"),
        "the run finished: {said}\n{err}"
    );
    assert!(
        said.lines().any(|l| l.starts_with("route 1 succeeded ")),
        "nothing lost: the route succeeded once space returned: {said}"
    );
    assert!(
        Path::new(&mnt).read_dir().unwrap().next().is_none(),
        "the mount was the namespace's own"
    );
}

/// One simulated candidate: an overload after 1.5 s (reported while the
/// disk is full), then a success after its retry.
const SLOW: &str = r#"{
  "version": 1,
  "name": "Slow",
  "candidates": [{
    "name": "sim",
    "agent": { "kind": "simulated", "script": [
      { "outcome": "overloaded", "after_ms": 1500 },
      { "outcome": "succeed", "after_ms": 200 }
    ] },
    "transient": {
      "wait_for_reset": { "enabled": false, "max_wait_seconds": 0 },
      "retry": { "enabled": true, "max_retries": 3, "initial_interval_seconds": 1 },
      "on_exhausted": "stop"
    },
    "hard": {
      "wait_for_reset": { "enabled": false, "max_wait_seconds": 0 },
      "retry": { "enabled": false, "max_retries": 0, "initial_interval_seconds": 0 },
      "on_exhausted": "stop"
    }
  }]
}"#;
