//! Redaction audit: fake agents print API keys and bearer tokens in their
//! errors; after running them through the `recourse` binary with trace
//! logging, neither the database files nor any output contain them.

use std::path::{Path, PathBuf};
use std::process::Command;

use chrono::Utc;
use recourse::engine::pipeline;
use recourse::engine::{AgentKind, AgentSpec, CandidateInput};
use recourse::store::Store;

const PLANTED: [&str; 2] = ["PLANTEDSECRET", "PLANTEDBEARER"];

fn fake(kind: AgentKind, script: &str) -> AgentSpec {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/agents")
        .join(script);
    AgentSpec {
        kind,
        program: Some(path.display().to_string()),
        args: Vec::new(),
        model: None,
        script: Vec::new(),
    }
}

fn profile(db: &Path, name: &str, agent: AgentSpec) {
    let mut store = Store::open(db).unwrap();
    let id = store.create_profile(name, Utc::now()).unwrap();
    let candidate = CandidateInput {
        id: None,
        name: format!("{name} agent"),
        enabled: true,
        agent,
        policy: pipeline::default_policy(),
    };
    store
        .save_candidates(id, 1, &[candidate], Utc::now())
        .unwrap()
        .unwrap();
}

/// Runs the binary with trace logs; returns stdout + stderr.
fn recourse(db: &Path, args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_recourse"))
        .args(args)
        .arg("--db")
        .arg(db)
        .env("RECOURSE_LOG", "trace")
        .output()
        .expect("recourse runs");
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn assert_clean(what: &str, bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes);
    for secret in PLANTED {
        assert!(
            !text.contains(secret),
            "{what} contains the planted {secret}"
        );
    }
}

#[test]
fn planted_secrets_reach_neither_the_database_nor_the_logs() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("audit.db");
    profile(&db, "claude", fake(AgentKind::ClaudeCode, "claude-code.sh"));
    profile(&db, "generic", fake(AgentKind::Generic, "generic.sh"));
    let mut output = String::new();
    for p in ["claude", "generic"] {
        output += &recourse(&db, &["run", "--profile", p, "--prompt", "scenario:secret"]);
    }
    output += &recourse(&db, &["routes", "--json"]);
    output += &recourse(&db, &["route", "1", "--json"]);
    output += &recourse(&db, &["route", "2"]);
    assert_clean("CLI output and logs", output.as_bytes());
    for suffix in ["", "-wal", "-shm"] {
        let file = PathBuf::from(format!("{}{suffix}", db.display()));
        if let Ok(bytes) = std::fs::read(&file) {
            assert_clean(&file.display().to_string(), &bytes);
        }
    }
    let store = Store::open(&db).unwrap();
    for route in [1, 2] {
        let attempts = store.attempts(route).unwrap();
        let excerpt = attempts[0]
            .result
            .as_ref()
            .and_then(|r| r.excerpt.clone())
            .unwrap_or_default();
        assert!(
            excerpt.contains("401"),
            "route {route}: the sanitized evidence was stored, got {excerpt:?}"
        );
    }
}
