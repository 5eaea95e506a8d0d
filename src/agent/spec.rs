//! How a candidate is launched: its [`AgentSpec`] (program, arguments,
//! model, environment, config dir, deadlines), validated field by field,
//! and the simulated provider's script. Pure data; the runner turns it into
//! a process.

use std::collections::BTreeMap;
use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Access, AgentKind};
use crate::policy::FieldError;
use crate::timing::words;

/// One scripted outcome of the simulated provider.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type, JsonSchema)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum SimStep {
    /// Finishes the task.
    Succeed { after_ms: u32 },
    /// HTTP 529 `overloaded_error` before any output.
    Overloaded { after_ms: u32 },
    /// HTTP 429 with a `retry-after` header before any output.
    RateLimited { after_ms: u32, retry_after_s: u32 },
    /// Subscription usage limit that resets `resets_in_s` after the failure.
    UsageLimit { after_ms: u32, resets_in_s: u32 },
    /// A tool ran, then the connection was reset: not safe to replay.
    ToolThenReset { after_ms: u32 },
    /// A failure text no catalogue rule knows.
    Unrecognised { after_ms: u32, message: String },
}

impl SimStep {
    pub fn after_ms(&self) -> u32 {
        match self {
            SimStep::Succeed { after_ms }
            | SimStep::Overloaded { after_ms }
            | SimStep::RateLimited { after_ms, .. }
            | SimStep::UsageLimit { after_ms, .. }
            | SimStep::ToolThenReset { after_ms }
            | SimStep::Unrecognised { after_ms, .. } => *after_ms,
        }
    }
}

/// How to launch a candidate.
// Its `Debug` (below) masks secret-looking `env` values and arguments.
#[derive(Clone, PartialEq, Serialize, Deserialize, specta::Type, JsonSchema)]
pub struct AgentSpec {
    pub kind: AgentKind,
    /// What the agent may do: mapped to the CLI's own flags. `None` (a
    /// candidate saved before access levels) passes no flag, so the CLI
    /// keeps its own default, which in print mode refuses most changes.
    #[serde(default)]
    pub access: Option<Access>,
    /// Executable; defaults per kind (`claude`, `codex`, …). Required for `generic`.
    #[serde(default)]
    pub program: Option<String>,
    /// Extra arguments placed before the prompt.
    #[serde(default)]
    pub args: Vec<String>,
    #[serde(default)]
    pub model: Option<String>,
    /// Simulated provider only: attempt N of this candidate in a route plays
    /// step N (the last step repeats).
    #[serde(default)]
    pub script: Vec<SimStep>,
    /// Simulated provider only: the CLI whose words its failures are in, as
    /// that CLI prints them (Claude Code when unset).
    #[serde(default)]
    pub simulates: Option<AgentKind>,
    /// Variables added to the agent's environment (a proxy, another
    /// account's key). Values that look like secrets are never logged.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// The CLI's own configuration directory, passed as the variable that
    /// CLI documents (`CLAUDE_CONFIG_DIR`, `CODEX_HOME`, `GEMINI_CLI_HOME`,
    /// `OPENCODE_CONFIG_DIR`).
    #[serde(default)]
    pub config_dir: Option<String>,
    /// When an attempt that has gone quiet, or runs too long, is ended.
    #[serde(default)]
    pub timeouts: AttemptTimeouts,
    /// The provider account it runs as, by name: candidates with the same
    /// label share one account (its limit marks and concurrency limit);
    /// none: derived from its kind, config dir and credentials.
    #[serde(default)]
    pub account: Option<String>,
    /// At most this many agents of its account run at once (an account's
    /// limit is the smallest one set on its candidates); none: no limit.
    #[serde(default)]
    pub max_concurrent: Option<u32>,
    /// What Continue sends when it resumes this candidate's session, in
    /// place of the default message (the person may still edit it per press).
    #[serde(default)]
    pub continue_message: Option<String>,
}

/// Attempt deadlines: the process group is killed when one passes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type, JsonSchema)]
pub struct AttemptTimeouts {
    /// Seconds without any output on stdout or stderr.
    pub idle_s: u32,
    /// Seconds since the attempt started.
    pub total_s: u32,
}

impl AttemptTimeouts {
    /// Inclusive bounds, checked by candidate validation.
    pub const IDLE_S: std::ops::RangeInclusive<u32> = 10..=86_400;
    pub const TOTAL_S: std::ops::RangeInclusive<u32> = 10..=604_800;
}

impl Default for AttemptTimeouts {
    /// A quarter hour of silence (a long build prints nothing through the
    /// agent's stream), four hours in all.
    fn default() -> Self {
        AttemptTimeouts {
            idle_s: 900,
            total_s: 14_400,
        }
    }
}

impl AgentSpec {
    /// Bounds of `max_concurrent`.
    pub const MAX_CONCURRENT: std::ops::RangeInclusive<u32> = 1..=64;

    /// Every problem with this spec, each at `{prefix}.{field}`
    /// (`candidates[2].agent.timeouts.idle_s`).
    pub fn validate(&self, prefix: &str) -> Vec<FieldError> {
        let agent = self;
        let mut errors = Vec::new();
        let mut err = |field: &str, message: String| {
            errors.push(FieldError::new(format!("{prefix}.{field}"), message))
        };
        let has_program = agent
            .program
            .as_deref()
            .is_some_and(|p| !p.trim().is_empty());
        match agent.kind {
            AgentKind::Simulated if agent.script.is_empty() => err(
                "script",
                "a simulated candidate needs at least one scripted step".into(),
            ),
            AgentKind::Generic if !has_program => err(
                "program",
                format!(
                    "{} needs a program: write a command on PATH, or its path",
                    agent.kind.descriptor().label
                ),
            ),
            _ if agent.simulates.is_some() && agent.kind != AgentKind::Simulated => err(
                "simulates",
                "only a simulated candidate can simulate another agent's failures".into(),
            ),
            AgentKind::Simulated
                if agent.simulates.is_some_and(|k| {
                    !k.descriptor().policy_applies || k == AgentKind::Simulated
                }) =>
            {
                err(
                    "simulates",
                    "a simulated candidate can fail like claude-code, codex, gemini or opencode"
                        .into(),
                )
            }
            AgentKind::Simulated
            | AgentKind::ClaudeCode
            | AgentKind::Codex
            | AgentKind::Gemini
            | AgentKind::Opencode
            | AgentKind::Generic => {}
        }
        let t = agent.timeouts;
        let (idle, total) = (AttemptTimeouts::IDLE_S, AttemptTimeouts::TOTAL_S);
        if !idle.contains(&t.idle_s) {
            err("timeouts.idle_s", words::outside(&idle, t.idle_s));
        }
        if !total.contains(&t.total_s) {
            err("timeouts.total_s", words::outside(&total, t.total_s));
        } else if idle.contains(&t.idle_s) && t.idle_s > t.total_s {
            err(
                "timeouts.idle_s",
                format!(
                    "must be at most the total timeout, {} ({} is too long)",
                    words::exact(u64::from(t.total_s)),
                    words::exact(u64::from(t.idle_s))
                ),
            );
        }
        if agent.env.len() > MAX_ENV_VARS {
            err(
                "env",
                format!(
                    "at most {MAX_ENV_VARS} variables ({} is too many)",
                    agent.env.len()
                ),
            );
        }
        for (name, value) in &agent.env {
            let field = format!("env.{}", bounded_name(name));
            let valid_name = name
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && name.len() <= 128;
            if !valid_name {
                err(
                    &field,
                    "a variable name is letters, digits and _, not starting with a digit, at most 128 long".into(),
                );
            }
            if value.contains('\0') || value.len() > 8192 {
                err(
                    &field,
                    "a value holds no NUL byte and is at most 8192 bytes".into(),
                );
            }
        }
        if let Some(level) = agent.access {
            match agent.kind.descriptor().access {
                None => err(
                    "access",
                    format!(
                        "a {} candidate takes no access level: Recourse cannot hold it to one",
                        agent.kind.slug()
                    ),
                ),
                Some(map) if (map.flags)(level).is_none() => err(
                    "access",
                    format!(
                        "{} cannot be held to {} access",
                        agent.kind.descriptor().label,
                        level.words()
                    ),
                ),
                Some(map) => {
                    if let Some(arg) = map.contradiction(&agent.args) {
                        err(
                            "args",
                            format!(
                                "{arg:?} sets what the access level sets and contradicts it \
                                 ({}): remove it, or choose the level instead",
                                level.as_str()
                            ),
                        );
                    }
                }
            }
        }
        if let Some(dir) = &agent.config_dir {
            if agent.kind.descriptor().config_dir_variable.is_none() {
                err(
                    "config_dir",
                    format!(
                        "a {} candidate has no configuration directory; set a variable in env instead",
                        agent.kind.slug()
                    ),
                );
            } else if dir.trim().is_empty() || dir.contains('\0') {
                err("config_dir", "must be a directory path".into());
            }
        }
        if let Some(label) = &agent.account {
            if let Some(why) = crate::account::label_problem(label) {
                err("account", why);
            }
        }
        if let Some(message) = &agent.continue_message {
            if agent.kind.descriptor().resume.is_none() {
                err(
                    "continue_message",
                    format!(
                        "a {} candidate cannot resume a session, so it takes no continuation message",
                        agent.kind.slug()
                    ),
                );
            } else if let Some(problem) = crate::route::continue_message_problem(message) {
                err("continue_message", problem);
            }
        }
        if let Some(n) = agent.max_concurrent {
            let range = Self::MAX_CONCURRENT;
            if !range.contains(&n) {
                err(
                    "max_concurrent",
                    format!(
                        "must be {} to {} {}",
                        range.start(),
                        range.end(),
                        crate::amount::too_few_or_many(*range.start(), n)
                    ),
                );
            }
        }
        errors
    }

    /// Every `env` value still [`MASKED`] when it is saved: left out of an
    /// exported document, with no stored value to keep in its place (see
    /// `ProfileDocument::with_kept_secrets`).
    pub fn left_out(&self, prefix: &str) -> Vec<FieldError> {
        self.env
            .iter()
            .filter(|(_, value)| *value == MASKED)
            .map(|(name, _)| {
                FieldError::new(
                    format!("{prefix}.env.{}", bounded_name(name)),
                    format!(
                        "{MASKED} stands for a secret an exported document leaves out, and this \
                         profile has no value of its own to keep; type the value"
                    ),
                )
            })
            .collect()
    }

    /// A simulated-provider agent that plays `script`; no process, no network.
    pub fn simulated(script: Vec<SimStep>) -> AgentSpec {
        AgentSpec {
            script,
            ..AgentSpec::default_for(AgentKind::Simulated)
        }
    }

    /// `kind` with its default program, no arguments, no model, no
    /// environment and the default deadlines.
    pub fn default_for(kind: AgentKind) -> AgentSpec {
        AgentSpec {
            kind,
            access: None,
            program: None,
            args: Vec::new(),
            model: None,
            script: Vec::new(),
            simulates: None,
            env: BTreeMap::new(),
            config_dir: None,
            timeouts: AttemptTimeouts::default(),
            account: None,
            max_concurrent: None,
            continue_message: None,
        }
    }
}

/// Most variables one candidate may set.
const MAX_ENV_VARS: usize = 64;

/// A field path never carries a whole hostile key.
fn bounded_name(name: &str) -> String {
    if name.chars().count() <= 64 {
        name.to_string()
    } else {
        format!("{}…", name.chars().take(64).collect::<String>())
    }
}

/// Shown in place of a masked value, and written in a profile document in
/// place of a secret value, which a document never carries.
pub const MASKED: &str = "[masked]";

/// What the database holds in place of an `env` value kept in the desktop
/// keyring: this prefix and the item's reference (32 hexadecimal digits).
const KEYRING_PREFIX: &str = "recourse-keyring:";

/// The keyring reference an `env` value stands for, if it is one.
pub fn keyring_reference(value: &str) -> Option<&str> {
    let reference = value.strip_prefix(KEYRING_PREFIX)?;
    (reference.len() == 32 && reference.bytes().all(|b| b.is_ascii_hexdigit())).then_some(reference)
}

/// The `env` value that stands for keyring item `reference`.
pub fn keyring_value(reference: &str) -> String {
    format!("{KEYRING_PREFIX}{reference}")
}

/// Whether an `env` value is a secret that a document leaves out: kept in
/// the keyring, or looking like one ([`looks_secret`]).
pub fn is_secret_value(name: &str, value: &str) -> bool {
    keyring_reference(value).is_some() || looks_secret(name, value)
}

/// Whether `NAME=value` holds something the evidence sanitizer would redact
/// (an API key, a token, a password, credentials in a URL, a home path):
/// one notion of "looks like a secret" for evidence and for logs, not a
/// second keyword list to keep in step with it.
pub fn looks_secret(name: &str, value: &str) -> bool {
    let pair = format!("{name}={value}");
    crate::evidence::sanitize::sanitize(&pair) != pair
}

/// Masks secret-looking `env` values and arguments (see [`looks_secret`]),
/// so a `{:?}` in a log line cannot print a key.
impl fmt::Debug for AgentSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Destructured, so a new field cannot be added without a decision
        // here about whether it may be printed.
        let AgentSpec {
            kind,
            access,
            program,
            args,
            model,
            script,
            simulates,
            env,
            config_dir,
            timeouts,
            account,
            max_concurrent,
            continue_message,
        } = self;
        f.debug_struct("AgentSpec")
            .field("kind", kind)
            .field("access", access)
            .field("program", program)
            .field("args", &MaskedArgs(args))
            .field("model", model)
            .field("script", script)
            .field("simulates", simulates)
            .field("env", &MaskedEnv(env))
            .field("config_dir", config_dir)
            .field("timeouts", timeouts)
            .field("account", account)
            .field("max_concurrent", max_concurrent)
            .field("continue_message", continue_message)
            .finish()
    }
}

/// `{"HTTPS_PROXY": "http://127.0.0.1:3128", "ANTHROPIC_API_KEY": "[masked]"}`.
struct MaskedEnv<'a>(&'a BTreeMap<String, String>);

impl fmt::Debug for MaskedEnv<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map()
            .entries(self.0.iter().map(|(name, value)| {
                let shown = if looks_secret(name, value) {
                    MASKED
                } else {
                    value.as_str()
                };
                (name, shown)
            }))
            .finish()
    }
}

/// The arguments as one command line with what the sanitizer redacts
/// masked (`--api-key X` is one secret over two arguments), or `None` when
/// nothing in them looks secret: the one rule for showing arguments, in the
/// debug log and in a profile import's change list.
pub fn masked_args(args: &[String]) -> Option<String> {
    let line = args.join(" ");
    let clean = crate::evidence::sanitize::sanitize(&line);
    (clean != line).then_some(clean)
}

/// [`masked_args`] as `{:?}` shows it.
struct MaskedArgs<'a>(&'a [String]);

impl fmt::Debug for MaskedArgs<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match masked_args(self.0) {
            None => f.debug_list().entries(self.0).finish(),
            Some(clean) => f.debug_tuple("sanitized").field(&clean).finish(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "sk-ant-api03-Zq7XbR2mK9pLw4TnV8cY1dF6hJ3sG5aE0uIoPzQxWvBnMkLjHgFdSa";

    fn spec_with(env: &[(&str, &str)], args: &[&str]) -> AgentSpec {
        let mut spec = AgentSpec::simulated(Vec::new());
        spec.kind = AgentKind::ClaudeCode;
        spec.args = args.iter().map(|a| a.to_string()).collect();
        spec.env = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        spec
    }

    #[test]
    fn refused_timeouts_are_said_in_durations() {
        let said = |idle_s: u32, total_s: u32| -> Vec<String> {
            let mut spec = spec_with(&[], &[]);
            spec.timeouts = AttemptTimeouts { idle_s, total_s };
            spec.validate("a")
                .into_iter()
                .map(|e| format!("{}: {}", e.path, e.message))
                .collect()
        };
        assert_eq!(
            said(5, 1_209_600),
            [
                "a.timeouts.idle_s: must be at least 10 s (5 s is too short)",
                "a.timeouts.total_s: must be at most 7 d (14 d is too long)"
            ]
        );
        assert_eq!(
            said(86_400, 14_400),
            ["a.timeouts.idle_s: must be at most the total timeout, 4 h (1 d is too long)"],
            "an idle timeout past the total one is compared with it, in the same units"
        );
    }

    #[test]
    fn debug_output_never_shows_a_secret_env_value_or_argument() {
        let spec = spec_with(
            &[
                ("ANTHROPIC_API_KEY", KEY),
                ("OPENAI_KEY_FOR_WORK", "sk-proj-abcdefghijklmnopqrstuvwx"),
                ("GH_TOKEN", "plain"),
                ("HTTPS_PROXY", "http://alice:hunter2@proxy.example:3128"),
            ],
            &["--api-key", "hunter2-but-longer"],
        );
        let debug = format!("{spec:?} {spec:#?}");
        for secret in [KEY, "sk-proj-abcdefghijklmnopqrstuvwx", "plain", "hunter2"] {
            assert!(!debug.contains(secret), "{secret} leaked: {debug}");
        }
        assert!(
            debug.contains("ANTHROPIC_API_KEY"),
            "the names stay readable"
        );
        assert!(debug.contains(MASKED));
    }

    #[test]
    fn debug_output_keeps_values_that_are_not_secrets() {
        let spec = spec_with(
            &[
                ("HTTPS_PROXY", "http://127.0.0.1:3128"),
                ("CLAUDE_CODE_MAX_RETRIES", "1"),
            ],
            &["--max-turns", "5"],
        );
        let debug = format!("{spec:?}");
        assert!(
            debug.contains(r#""HTTPS_PROXY": "http://127.0.0.1:3128""#),
            "{debug}"
        );
        assert!(debug.contains(r#""CLAUDE_CODE_MAX_RETRIES": "1""#));
        assert!(debug.contains(r#"["--max-turns", "5"]"#), "{debug}");
        assert!(!debug.contains(MASKED), "nothing to mask: {debug}");
    }
}

#[cfg(test)]
mod access_tests {
    use super::*;

    fn with(kind: AgentKind, access: Option<Access>, args: &[&str]) -> Vec<FieldError> {
        let mut spec = AgentSpec::default_for(kind);
        spec.access = access;
        spec.args = args.iter().map(|a| a.to_string()).collect();
        if kind == AgentKind::Generic {
            spec.program = Some("x".into());
        }
        spec.validate("agent")
    }

    #[test]
    fn an_extra_argument_that_sets_the_level_again_is_refused_naming_both() {
        let errors = with(AgentKind::Gemini, Some(Access::Edit), &["--yolo"]);
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert_eq!(errors[0].path, "agent.args");
        assert_eq!(
            errors[0].message,
            "\"--yolo\" sets what the access level sets and contradicts it (edit): remove it, or \
             choose the level instead"
        );
        let errors = with(
            AgentKind::Codex,
            Some(Access::ReadOnly),
            &["--sandbox=danger-full-access"],
        );
        assert_eq!(errors[0].path, "agent.args", "{errors:?}");
        assert!(
            with(AgentKind::ClaudeCode, None, &["--permission-mode", "plan"]).is_empty(),
            "a candidate without a level keeps its own flags, as before levels"
        );
    }

    #[test]
    fn an_any_command_candidate_without_a_program_is_refused_at_the_program_in_words() {
        for program in [None, Some("   ".to_string())] {
            let mut spec = AgentSpec::default_for(AgentKind::Generic);
            spec.program = program;
            let errors = spec.validate("agent");
            assert_eq!(errors.len(), 1, "{errors:?}");
            assert_eq!(
                errors[0].path, "agent.program",
                "said at the field to fill in"
            );
            // Named as the editor's picker names the kind, with what to write.
            assert_eq!(
                errors[0].message,
                "Any command needs a program: write a command on PATH, or its path"
            );
        }
    }

    #[test]
    fn a_level_on_a_kind_that_takes_none_is_refused() {
        let errors = with(AgentKind::Generic, Some(Access::Edit), &[]);
        assert_eq!(errors[0].path, "agent.access");
        assert_eq!(
            errors[0].message,
            "a generic candidate takes no access level: Recourse cannot hold it to one"
        );
        assert!(with(AgentKind::Opencode, Some(Access::ReadOnly), &[]).is_empty());
    }
}
