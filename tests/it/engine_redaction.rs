//! Redaction audit: agents print API keys and bearer tokens in their errors
//! (a recording of the real Claude Code relaying a gateway that echoes them,
//! and a command of the generic kind); after running them through the `recourse` binary with trace
//! logging, neither the database files nor any output contain them.

use std::path::{Path, PathBuf};

use crate::common::{recourse_cmd, replay_agent, seed_profile};
use recourse::agent::{AgentKind, AgentSpec};
use recourse::policy::CandidatePolicy;
use recourse::profile::CandidateInput;
use recourse::store::Store;

const PLANTED: [&str; 2] = ["PLANTEDSECRET", "PLANTEDBEARER"];

fn profile(db: &Path, name: &str, agent: AgentSpec) {
    let candidate = CandidateInput::new(
        format!("{name} agent"),
        agent,
        CandidatePolicy::default_for_new_candidate(),
    );
    seed_profile(db, name, &[candidate]);
}

/// Runs the binary with trace logs; returns stdout + stderr.
fn recourse(db: &Path, args: &[&str]) -> String {
    let out = recourse_cmd(db, args).env("RECOURSE_LOG", "trace").output();
    let out = out.expect("recourse runs");
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
    profile(
        &db,
        "claude",
        replay_agent(AgentKind::ClaudeCode, "claude/secret_echo"),
    );
    profile(&db, "generic", leaky_command(dir.path()));
    let mut output = String::new();
    for p in ["claude", "generic"] {
        output += &recourse(
            &db,
            &[
                "run",
                "--profile",
                p,
                "--prompt",
                "Reply with the single word done.",
            ],
        );
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
            excerpt.contains("40"),
            "route {route}: the sanitized evidence was stored, got {excerpt:?}"
        );
    }
}

/// Any command (the generic kind runs whatever it is given): a script in
/// `dir` that prints the planted secrets on stderr and fails with a 401. The
/// secrets live in the script, so the stored candidate holds none.
fn leaky_command(dir: &Path) -> AgentSpec {
    use std::os::unix::fs::PermissionsExt;
    let script = dir.join("leaky.sh");
    std::fs::write(
        &script,
        "#!/bin/sh\necho 'HTTP 401: invalid x-api-key sk-ant-api03-PLANTEDSECRETaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa' >&2\n\
         echo 'Authorization: Bearer PLANTEDBEARERzzzzzzzzzzzzzzzzzzzz planted.person@example.com' >&2\nexit 1\n",
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut agent = AgentSpec::simulated(Vec::new());
    agent.kind = AgentKind::Generic;
    agent.program = Some(script.display().to_string());
    agent
}
