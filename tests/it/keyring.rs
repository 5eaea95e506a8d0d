//! Keys at rest, against a real GNOME Keyring (`gnome-keyring-daemon`, the
//! Debian package `scripts/setup.sh` installs) started unlocked with a test
//! password on a session bus of the test's own (`dbus-run-session`), and
//! stopped by the test. Every `recourse` is the real binary pointed at that
//! bus; `secret-tool` (libsecret) reads the keyring back as any other
//! client would.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use recourse::store::Store;

const KEY: &str = "sk-ant-api03-Zq7XbR2mK9pLw4TnV8cY1dF6hJ3sG5aE0uIoPzQxWvBnMkLjHgFdSa";
const NEW_KEY: &str = "sk-ant-api03-Nw8YcS3nL0qMx5UoW9dZ2eG7iK4tH6bF1vJpQaRyXwCnBlKmJhGeTb";
const PROXY: &str = "http://127.0.0.1:3128";

/// A session bus with an unlocked GNOME Keyring on it, stopped on drop.
struct SecretService {
    session: Child,
    address: String,
    _home: tempfile::TempDir,
}

impl SecretService {
    fn start() -> SecretService {
        let home = tempfile::tempdir().unwrap();
        let runtime = home.path().join("run");
        std::fs::create_dir(&runtime).unwrap();
        std::fs::set_permissions(
            &runtime,
            std::os::unix::fs::PermissionsExt::from_mode(0o700),
        )
        .unwrap();
        let mut session = Command::new("dbus-run-session")
            .args([
                "--",
                "sh",
                "-c",
                "echo \"$DBUS_SESSION_BUS_ADDRESS\"; \
                 exec gnome-keyring-daemon --unlock --components=secrets --foreground",
            ])
            .env("HOME", home.path())
            .env("XDG_DATA_HOME", home.path().join("data"))
            .env("XDG_RUNTIME_DIR", &runtime)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            // Its own group: the bus and the daemon are stopped together.
            .process_group(0)
            .spawn()
            .expect("dbus-run-session and gnome-keyring-daemon are installed (scripts/setup.sh)");
        // The login keyring's password; the daemon reads it until EOF.
        let mut stdin = session.stdin.take().unwrap();
        stdin.write_all(b"test-password").unwrap();
        drop(stdin);
        let mut address = String::new();
        BufReader::new(session.stdout.take().unwrap())
            .read_line(&mut address)
            .unwrap();
        let service = SecretService {
            session,
            address: address.trim().to_string(),
            _home: home,
        };
        service.wait_until_serving();
        service
    }

    /// Until the daemon owns the Secret Service name: asked with
    /// `NameHasOwner`, which (unlike a call to the service) cannot start a
    /// second, locked daemon by D-Bus activation.
    fn wait_until_serving(&self) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            let out = Command::new("dbus-send")
                .args([
                    &format!("--bus={}", self.address),
                    "--print-reply",
                    "--dest=org.freedesktop.DBus",
                    "/org/freedesktop/DBus",
                    "org.freedesktop.DBus.NameHasOwner",
                    "string:org.freedesktop.secrets",
                ])
                .output()
                .unwrap();
            if String::from_utf8_lossy(&out.stdout).contains("boolean true") {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("gnome-keyring-daemon did not start serving");
    }

    /// `secret-tool lookup` of item `reference`: its value, or `None`.
    fn lookup(&self, reference: &str) -> Option<String> {
        let out = Command::new("secret-tool")
            .args([
                "lookup",
                "application",
                "recourse",
                "recourse-reference",
                reference,
            ])
            .env("DBUS_SESSION_BUS_ADDRESS", &self.address)
            .output()
            .expect("secret-tool is installed (scripts/setup.sh)");
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
    }

    fn stop(&mut self) {
        crate::common::send_signal(-(self.session.id() as i32), libc::SIGTERM);
        let _ = self.session.wait();
    }
}

impl Drop for SecretService {
    fn drop(&mut self) {
        self.stop();
    }
}

/// `recourse ARGS --db DB`, on `bus` (`None`: the keyring turned off).
fn recourse(bus: Option<&SecretService>, db: &Path, args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_recourse"));
    cmd.args(args).arg("--db").arg(db).stdin(Stdio::null());
    match bus {
        Some(service) => cmd
            .env("DBUS_SESSION_BUS_ADDRESS", &service.address)
            .env_remove("RECOURSE_KEYRING"),
        None => cmd.env("RECOURSE_KEYRING", "off"),
    };
    cmd.output().unwrap()
}

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Runs profile "Keys": its agent was given the key, read from the keyring
/// at dispatch, and the plain proxy.
fn assert_the_agent_gets_the_key(keyring: &SecretService, db: &Path, seen: &Path) {
    ok(&recourse(
        Some(keyring),
        db,
        &["run", "--profile", "Keys", "--prompt", "go"],
    ));
    assert_eq!(
        std::fs::read_to_string(seen).unwrap(),
        format!("{KEY} {PROXY}")
    );
}

/// `recourse profile import FILE --replace`: what it printed.
fn replace(keyring: &SecretService, db: &Path, file: &Path) -> String {
    ok(&recourse(
        Some(keyring),
        db,
        &["profile", "import", file.to_str().unwrap(), "--replace"],
    ))
}

/// A profile whose agent writes the key and the proxy it was given to
/// `out`.
fn document(name: &str, key: &str, out: &Path) -> String {
    let section = crate::common::stop_section_json();
    serde_json::json!({
        "version": 1,
        "name": name,
        "candidates": [{
            "name": "agent",
            "agent": {
                "kind": "generic",
                "program": "sh",
                "args": ["-c", format!("printf '%s %s' \"$ANTHROPIC_API_KEY\" \"$HTTPS_PROXY\" > {}", out.display())],
                "env": { "ANTHROPIC_API_KEY": key, "HTTPS_PROXY": PROXY }
            },
            "transient": section,
            "hard": section
        }]
    })
    .to_string()
}

/// The keyring reference profile `name`'s key is stored as.
fn reference(db: &Path, name: &str) -> String {
    let store = Store::open_read_only(db).unwrap();
    let profile = store.profile_by_name(name).unwrap().unwrap();
    let value = &profile.candidates[0].agent.env["ANTHROPIC_API_KEY"];
    recourse::agent::keyring_reference(value)
        .unwrap_or_else(|| panic!("{name}'s key is a keyring reference, not {value:?}"))
        .to_string()
}

/// Every byte of the database and its side files.
fn database_bytes(db: &Path) -> Vec<u8> {
    let mut all = Vec::new();
    for suffix in ["", "-wal", "-shm"] {
        let mut name = db.as_os_str().to_owned();
        name.push(suffix);
        all.extend(std::fs::read(PathBuf::from(name)).unwrap_or_default());
    }
    all
}

fn holds(bytes: &[u8], text: &str) -> bool {
    bytes.windows(text.len()).any(|w| w == text.as_bytes())
}

/// A folder with a database holding profile "Keys" (its key `KEY`),
/// imported with `keyring` (`None`: turned off); the agent writes what it
/// was given to `seen.txt` there.
struct Imported {
    dir: tempfile::TempDir,
    db: PathBuf,
    seen: PathBuf,
    doc: PathBuf,
}

fn imported(keyring: Option<&SecretService>) -> Imported {
    let dir = tempfile::tempdir().unwrap();
    let (db, seen, doc) = (
        dir.path().join("r.db"),
        dir.path().join("seen.txt"),
        dir.path().join("keys.json"),
    );
    std::fs::write(&doc, document("Keys", KEY, &seen)).unwrap();
    ok(&recourse(
        keyring,
        &db,
        &["profile", "import", doc.to_str().unwrap()],
    ));
    Imported { dir, db, seen, doc }
}

#[test]
fn keys_live_in_the_keyring_reach_the_agent_and_never_leave_in_a_document() {
    let keyring = SecretService::start();
    let Imported { dir, db, seen, doc } = imported(Some(&keyring));

    let first = reference(&db, "Keys");
    assert_eq!(
        keyring.lookup(&first).as_deref(),
        Some(KEY),
        "the keyring holds it"
    );
    assert!(
        !holds(&database_bytes(&db), KEY),
        "the database file does not"
    );
    assert!(
        holds(&database_bytes(&db), PROXY),
        "a plain value stays in the file"
    );

    assert_the_agent_gets_the_key(&keyring, &db, &seen);

    let exported = ok(&recourse(
        Some(&keyring),
        &db,
        &["profile", "export", "Keys"],
    ));
    assert!(
        exported.contains("\"ANTHROPIC_API_KEY\": \"[masked]\"") && exported.contains(PROXY),
        "{exported}"
    );
    assert!(
        !exported.contains(KEY) && !exported.contains("recourse-keyring"),
        "{exported}"
    );
    let file = dir.path().join("exported.json");
    std::fs::write(&file, &exported).unwrap();
    let again = replace(&keyring, &db, &file);
    assert!(
        again.contains("already matches"),
        "the masked key is the stored one: {again}"
    );
    assert_eq!(reference(&db, "Keys"), first);

    std::fs::write(&doc, document("Keys", NEW_KEY, &seen)).unwrap();
    let changed = replace(&keyring, &db, &doc);
    assert!(
        changed.contains("Environment variable ANTHROPIC_API_KEY: (hidden) → (hidden)"),
        "{changed}"
    );
    let second = reference(&db, "Keys");
    assert_ne!(second, first);
    assert_eq!(keyring.lookup(&second).as_deref(), Some(NEW_KEY));
    assert_eq!(
        keyring.lookup(&first),
        None,
        "the replaced key left the keyring"
    );

    ok(&recourse(
        Some(&keyring),
        &db,
        &["profile", "duplicate", "Keys", "Copy"],
    ));
    let copy = reference(&db, "Copy");
    assert_ne!(copy, second, "a copy has an entry of its own");
    assert_eq!(keyring.lookup(&copy).as_deref(), Some(NEW_KEY));
    ok(&recourse(
        Some(&keyring),
        &db,
        &["profile", "delete", "Keys"],
    ));
    assert_eq!(
        keyring.lookup(&second),
        None,
        "a deleted profile's key left the keyring"
    );
    assert_eq!(
        keyring.lookup(&copy).as_deref(),
        Some(NEW_KEY),
        "the copy's stayed"
    );
    assert!(!holds(&database_bytes(&db), NEW_KEY));
}

#[test]
fn keys_found_in_the_database_file_move_to_a_running_keyring_and_are_scrubbed() {
    let Imported {
        dir: _dir,
        db,
        seen,
        ..
    } = imported(None);
    assert!(
        holds(&database_bytes(&db), KEY),
        "no keyring: the key is kept in the file (which only its owner reads)"
    );

    let keyring = SecretService::start();
    let out = recourse(Some(&keyring), &db, &["profile", "create", "Other"]);
    ok(&out);
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("moved 1 secret value from the database file into the keyring"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let moved = reference(&db, "Keys");
    assert_eq!(keyring.lookup(&moved).as_deref(), Some(KEY));
    assert!(
        !holds(&database_bytes(&db), KEY),
        "no copy is left in the database, its log or a free page"
    );
    assert_the_agent_gets_the_key(&keyring, &db, &seen);
}

#[test]
fn a_key_in_a_keyring_that_is_gone_fails_the_attempt_naming_the_variable() {
    let mut keyring = SecretService::start();
    let Imported {
        dir: _dir,
        db,
        seen,
        ..
    } = imported(Some(&keyring));
    let bus = keyring.address.clone();
    keyring.stop();

    let out = Command::new(env!("CARGO_BIN_EXE_recourse"))
        .args(["run", "--profile", "Keys", "--prompt", "go", "--db"])
        .arg(&db)
        .env("DBUS_SESSION_BUS_ADDRESS", &bus)
        .env_remove("RECOURSE_KEYRING")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "the route needs a person");
    assert!(!seen.exists(), "the agent never ran without its key");
    let shown = ok(&recourse(None, &db, &["route", "1"]));
    assert!(
        shown.contains(
            "ANTHROPIC_API_KEY is kept in the keyring, and no keyring is running; its value \
             cannot be passed to the agent"
        ),
        "{shown}"
    );
}
