//! Whether a candidate can start, told before a run: is its program there,
//! which version is it (`--version`, for the agent CLIs Recourse knows), and
//! are its credentials present — a documented variable set, or the
//! credential file the CLI writes at login. Values are never read or shown:
//! only whether a variable is set and a file exists.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

use crate::agent::{Access, AgentSpec};

/// A `--version` that does not answer within this is given up on.
const VERSION_WITHIN: Duration = Duration::from_secs(10);

/// The pinned versions, from the one place they are recorded.
const PINNED: &str = include_str!("../../agents/package.json");

#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct Readiness {
    /// The program a run would start.
    pub program: String,
    /// Where it was found; `None`: not found.
    pub found: Option<String>,
    /// Its first line of `--version`.
    pub version: Option<String>,
    /// The version Recourse is verified with.
    pub verified: Option<String>,
    pub credentials: Vec<CredentialPlace>,
    /// How to install it, when it is missing.
    pub install: Option<String>,
    /// Anything else that stops a run, in words.
    pub problems: Vec<String>,
    pub ready: bool,
}

/// Where a credential could be, and whether it is there.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct CredentialPlace {
    /// A variable's name, or a file's path.
    pub name: String,
    pub file: bool,
    pub present: bool,
}

/// Checks `agent` as it would run, with `env` the environment it would
/// start in (Recourse's own plus the candidate's variables).
pub async fn check(agent: &AgentSpec, env: &BTreeMap<String, String>) -> Readiness {
    let d = agent.kind.descriptor();
    let Some(facts) = d.readiness.as_ref() else {
        // Any command is run as given; the simulated provider needs nothing.
        let program = agent.program.clone().unwrap_or_default();
        let found = (!program.is_empty())
            .then(|| locate(&program, env))
            .flatten();
        let ready = program.is_empty() || found.is_some();
        return Readiness {
            problems: if ready {
                Vec::new()
            } else {
                vec![format!("{program} is not found on PATH")]
            },
            program,
            found: found.map(|p| p.display().to_string()),
            version: None,
            verified: None,
            credentials: Vec::new(),
            install: None,
            ready,
        };
    };
    let program = agent
        .program
        .clone()
        .or(d.default_program.map(str::to_string))
        .unwrap_or_default();
    let found = locate(&program, env);
    let verified = pinned(facts.package);
    let version = match &found {
        Some(path) => version_of(path, agent, env).await,
        None => None,
    };
    let config = config_dir(agent, env, facts.config_dir_default);
    let home = env.get("HOME").map(PathBuf::from).unwrap_or_default();
    let mut credentials: Vec<CredentialPlace> = facts
        .credential_variables
        .iter()
        .map(|name| CredentialPlace {
            name: name.to_string(),
            file: false,
            present: env.get(*name).is_some_and(|v| !v.is_empty()),
        })
        .collect();
    for file in facts.credential_files {
        let path = match file.strip_prefix("~/") {
            Some(rest) => home.join(rest),
            None => config.join(file),
        };
        credentials.push(CredentialPlace {
            present: path.is_file(),
            name: path.display().to_string(),
            file: true,
        });
    }
    let mut problems = Vec::new();
    if found.is_none() {
        problems.push(format!("{program} is not found on PATH"));
    }
    if !credentials.iter().any(|c| c.present) {
        problems.push(format!(
            "no credentials found: set one of {} or log in with {}",
            facts.credential_variables.join(", "),
            d.label
        ));
    }
    if let (Some(var), Some(Access::Full), true) =
        (facts.full_as_root_needs, agent.access, is_root())
    {
        if !env.contains_key(var) {
            problems.push(format!(
                "{} refuses full access to root unless {var}=1 says it runs in a sandbox; \
                 set it in the candidate's environment only if it does",
                d.label
            ));
        }
    }
    Readiness {
        install: found.is_none().then(|| {
            let at = verified
                .as_deref()
                .map(|v| format!("@{v}"))
                .unwrap_or_default();
            format!("npm install -g {}{at}", facts.package)
        }),
        ready: problems.is_empty(),
        problems,
        program,
        found: found.map(|p| p.display().to_string()),
        version,
        verified,
        credentials,
    }
}

/// Why `agent` cannot resume `session` where its CLI keeps sessions (its
/// descriptor's [`crate::agent::Sessions`]), with `env` the environment it
/// would start in; `None` when the session's file is there, or when the
/// search was too large to finish (the CLI's own refusal then says).
pub fn session_problem(
    agent: &AgentSpec,
    env: &BTreeMap<String, String>,
    session: &str,
) -> Option<String> {
    use crate::agent::{SessionFile, SessionRoot};
    let d = agent.kind.descriptor();
    let Some(resume) = d.resume.as_ref() else {
        return Some(format!("{} cannot resume a session", d.label));
    };
    let home = || env.get("HOME").map(PathBuf::from).unwrap_or_default();
    let root = match resume.sessions.root {
        SessionRoot::ConfigDir => {
            let default = d.readiness.as_ref().map_or("~", |f| f.config_dir_default);
            config_dir(agent, env, default)
        }
        SessionRoot::DataHome => env
            .get("XDG_DATA_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .unwrap_or_else(|| home().join(".local/share")),
    };
    let folder = root.join(resume.sessions.folder);
    if !folder.is_dir() {
        return Some(format!(
            "{}'s session folder {} is gone",
            d.label,
            folder.display()
        ));
    }
    let (depth, needle) = match resume.sessions.file {
        SessionFile::Database(name) => {
            let file = folder.join(name);
            return (!file.is_file())
                .then(|| format!("{}'s sessions file {} is gone", d.label, file.display()));
        }
        SessionFile::Named { depth, prefix } => {
            let end = prefix.map_or(session.len(), |n| {
                session
                    .char_indices()
                    .nth(n)
                    .map_or(session.len(), |(i, _)| i)
            });
            (depth, &session[..end])
        }
    };
    let mut budget = SESSION_SEARCH_ENTRIES;
    match find_named(&folder, needle, depth, &mut budget) {
        Some(true) | None => None,
        Some(false) => Some(format!(
            "no file of session {session} under {}: {} no longer has it",
            folder.display(),
            d.label
        )),
    }
}

/// Most folder entries a session search reads before it gives up.
const SESSION_SEARCH_ENTRIES: usize = 50_000;

/// Whether a file whose name holds `needle` is at most `depth` folders
/// below `dir`; `None` when `budget` ran out first.
fn find_named(dir: &std::path::Path, needle: &str, depth: u8, budget: &mut usize) -> Option<bool> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Some(false);
    };
    for entry in entries.flatten() {
        *budget = budget.checked_sub(1)?;
        let path = entry.path();
        let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        if !is_dir && entry.file_name().to_string_lossy().contains(needle) {
            return Some(true);
        }
        if is_dir && depth > 0 && find_named(&path, needle, depth - 1, budget)? {
            return Some(true);
        }
    }
    Some(false)
}

/// The candidate's config dir, else the CLI's variable in `env`, else its default.
fn config_dir(agent: &AgentSpec, env: &BTreeMap<String, String>, default: &str) -> PathBuf {
    let var = agent.kind.descriptor().config_dir_variable;
    let named = agent
        .config_dir
        .clone()
        .or_else(|| var.and_then(|v| env.get(v).cloned()));
    let dir = named.unwrap_or_else(|| default.to_string());
    match dir.strip_prefix('~') {
        Some(rest) => {
            let home = env.get("HOME").map(PathBuf::from).unwrap_or_default();
            home.join(rest.trim_start_matches('/'))
        }
        None => PathBuf::from(dir),
    }
}

/// `program` as the process would find it: a path as given, a bare name
/// through `PATH`.
fn locate(program: &str, env: &BTreeMap<String, String>) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let runnable = |p: &Path| {
        p.metadata()
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if program.contains('/') {
        let p = PathBuf::from(program);
        return runnable(&p).then_some(p);
    }
    let path = env.get("PATH")?;
    std::env::split_paths(path)
        .map(|dir| dir.join(program))
        .find(|p| runnable(p))
}

/// The first line `PROGRAM --version` prints, run as the candidate would be.
async fn version_of(
    program: &Path,
    agent: &AgentSpec,
    env: &BTreeMap<String, String>,
) -> Option<String> {
    let mut cmd = tokio::process::Command::new(program);
    cmd.arg("--version")
        .env_clear()
        .envs(env)
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true);
    if let (Some(dir), Some(var)) = (
        &agent.config_dir,
        agent.kind.descriptor().config_dir_variable,
    ) {
        cmd.env(var, dir);
    }
    let out = tokio::time::timeout(VERSION_WITHIN, cmd.output())
        .await
        .ok()?
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().find(|l| !l.trim().is_empty())?.trim();
    Some(crate::agent::transcript::cut(line, 200))
}

/// The version `agents/package.json` pins for `package`.
fn pinned(package: &str) -> Option<String> {
    let pkg: serde_json::Value = serde_json::from_str(PINNED).ok()?;
    Some(pkg["dependencies"][package].as_str()?.to_string())
}

fn is_root() -> bool {
    // SAFETY: geteuid takes nothing and cannot fail.
    #[allow(unsafe_code)]
    let uid = unsafe { libc::geteuid() };
    uid == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::AgentKind;

    fn env(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[tokio::test]
    async fn a_missing_cli_names_its_install_command_and_a_key_counts_as_credentials() {
        let home = tempfile::tempdir().unwrap();
        let agent = AgentSpec::default_for(AgentKind::Codex);
        let r = check(
            &agent,
            &env(&[
                ("PATH", "/nonexistent"),
                ("HOME", home.path().to_str().unwrap()),
                ("OPENAI_API_KEY", "sk-test"),
            ]),
        )
        .await;
        assert_eq!(r.found, None);
        assert_eq!(
            r.install.as_deref(),
            Some("npm install -g @openai/codex@0.171.0")
        );
        assert!(r
            .credentials
            .iter()
            .any(|c| c.name == "OPENAI_API_KEY" && c.present));
        assert_eq!(r.problems, ["codex is not found on PATH"]);
        assert!(!r.ready);
    }

    #[tokio::test]
    async fn a_login_file_in_the_config_dir_counts_and_its_value_is_never_read() {
        let home = tempfile::tempdir().unwrap();
        let config = home.path().join("claude-work");
        std::fs::create_dir_all(&config).unwrap();
        std::fs::write(config.join(".credentials.json"), "not read").unwrap();
        let mut agent = AgentSpec::default_for(AgentKind::ClaudeCode);
        agent.config_dir = Some(config.display().to_string());
        let r = check(
            &agent,
            &env(&[("PATH", "/nonexistent"), ("HOME", "/nowhere")]),
        )
        .await;
        let file = r.credentials.iter().find(|c| c.file).unwrap();
        assert!(file.present, "{r:?}");
        assert!(file.name.ends_with("claude-work/.credentials.json"));
        assert!(
            !r.problems.iter().any(|p| p.contains("credentials")),
            "{:?}",
            r.problems
        );
    }

    #[tokio::test]
    async fn the_pinned_cli_is_found_with_its_version() {
        let bin = Path::new(env!("CARGO_MANIFEST_DIR")).join("agents/node_modules/.bin");
        if !bin.join("codex").exists() {
            panic!(
                "{} is missing: scripts/setup.sh installs the pinned CLIs",
                bin.display()
            );
        }
        let agent = AgentSpec::default_for(AgentKind::Codex);
        let home = tempfile::tempdir().unwrap();
        let r = check(
            &agent,
            &env(&[
                ("PATH", &format!("{}:/usr/bin:/bin", bin.display())),
                ("HOME", home.path().to_str().unwrap()),
            ]),
        )
        .await;
        assert!(r.found.is_some(), "{r:?}");
        assert!(
            r.version.as_deref().is_some_and(|v| v.contains("0.171.0")),
            "the real CLI's own answer: {:?}",
            r.version
        );
        assert_eq!(r.verified.as_deref(), Some("0.171.0"));
        assert!(r
            .problems
            .iter()
            .any(|p| p.starts_with("no credentials found")));
    }
}
