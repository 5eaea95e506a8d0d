//! One file per agent kind, each holding the kind's [`Descriptor`] and the
//! adapter that reads its output. Adding a CLI: a file here with its
//! descriptor and adapter, its variant in [`AgentKind`] with one line in
//! [`descriptor`], and its recordings under `fixtures/agents/recorded/`
//! (`docs/architecture.md` lists the steps).

mod claude_code;
mod codex;
mod gemini;
mod generic;
mod opencode;
mod simulated;

pub use simulated::{usage_limit_words, SimulatedWords};

use super::stream::{CommandLine, StreamAdapter};
use super::{AccessMap, AgentKind, AgentSpec};
use crate::evidence::Provider;
use crate::policy::{CandidatePolicy, ClassPolicy, Exhausted};

/// Everything Recourse knows about one agent kind.
pub struct Descriptor {
    pub kind: AgentKind,
    /// The agent name in policy and profile documents (`claude-code`).
    pub slug: &'static str,
    /// How the editor and the CLI name it (`Claude Code`).
    pub label: &'static str,
    /// What it runs and what is tracked, in a sentence for the picker.
    pub description: &'static str,
    /// Program run when a candidate names none; `None`: it must be given.
    pub default_program: Option<&'static str>,
    /// The variable the CLI documents for its configuration directory.
    pub config_dir_variable: Option<&'static str>,
    /// Whose wording its evidence is in, for the catalogue.
    pub provider: Provider,
    /// Which of its variables say what account it runs as (see
    /// [`crate::account`]).
    pub account: AccountFacts,
    /// Whether its stream tells effects apart, so a failure can be
    /// recovered by the class policy; `false`: every failure needs a person.
    pub policy_applies: bool,
    /// How it takes access levels; `None`: it cannot be held to one (any
    /// command, the simulated provider).
    pub access: Option<AccessMap>,
    /// A new candidate's agent settings.
    pub starter: fn() -> AgentSpec,
    /// A new candidate's policy, in the editor and from `recourse profile
    /// create --agent`, fitted to how this kind fails. A candidate in a
    /// document that gives no policy still gets immediate skip (the
    /// decision's rule); the editor and the command line show
    /// [`Descriptor::starter_why`] beside these defaults.
    pub starter_policy: fn() -> CandidatePolicy,
    /// Why the starter policy fits this kind, in a sentence.
    pub starter_why: &'static str,
    /// The longest reset wait a hard failure of this kind is worth (its
    /// usage window), offered when that wait is switched on.
    pub hard_wait_s: u32,
    /// How to tell before a run whether it can start: its npm package (the
    /// install command names it), and where its credentials would be.
    pub readiness: Option<ReadinessFacts>,
    pub launch: Launch,
    /// How it resumes a session it reported; `None`: it cannot, so Continue
    /// is never offered for it.
    pub resume: Option<Resume>,
}

/// How a CLI resumes one of its own sessions non-interactively, checked
/// against the pinned CLI (`docs/agents.md`, recordings `resume.*`).
pub struct Resume {
    /// The command line that resumes `session` and sends `message` in place
    /// of the prompt, with the candidate's access flags again (no CLI keeps
    /// them across a resume).
    pub command: fn(&AgentSpec, session: &str, message: &str) -> CommandLine,
    /// Where it keeps its sessions, so a continue whose session is gone is
    /// refused before anything starts.
    pub sessions: Sessions,
}

/// Where a CLI keeps its sessions: a folder under its config dir (the
/// candidate's, else the CLI's variable, else `config_dir_default`) or
/// under the XDG data home, and how one session's file is named there.
pub struct Sessions {
    pub root: SessionRoot,
    /// The folder under the root.
    pub folder: &'static str,
    pub file: SessionFile,
}

pub enum SessionRoot {
    /// The CLI's config dir (`~/.claude`, `$CODEX_HOME`, Gemini CLI's
    /// `$GEMINI_CLI_HOME` or `~`).
    ConfigDir,
    /// `$XDG_DATA_HOME`, else `~/.local/share`.
    DataHome,
}

/// How a session's file is found under [`Sessions::folder`].
pub enum SessionFile {
    /// A file at most `depth` folders down whose name holds the session id,
    /// or its first `prefix` characters when set.
    Named { depth: u8, prefix: Option<usize> },
    /// One database holds every session (OpenCode): the file must exist.
    Database(&'static str),
}

/// What a readiness check looks for. Credential values are never read:
/// only whether a variable is set or a file exists.
pub struct ReadinessFacts {
    /// The npm package the CLI ships in (pinned in `agents/package.json`).
    pub package: &'static str,
    /// Variables the CLI documents for its credentials.
    pub credential_variables: &'static [&'static str],
    /// Credential files it writes when a person logs in: `~/…` from the
    /// home directory, anything else from its config dir (the candidate's,
    /// else `config_dir_default`).
    pub credential_files: &'static [&'static str],
    /// Its config dir when neither the candidate nor the environment names one.
    pub config_dir_default: &'static str,
    /// A variable without which it refuses `full` access to root (Claude
    /// Code: `IS_SANDBOX`, which says it runs in a sandbox; docs/agents.md).
    pub full_as_root_needs: Option<&'static str>,
}

/// The variables that make one candidate's account differ from another's:
/// its credentials and the endpoint they are sent to. Their values are
/// hashed with the install's key, never stored.
pub struct AccountFacts {
    pub credentials: &'static [&'static str],
    pub base_urls: &'static [&'static str],
}

impl AccountFacts {
    /// A kind with no variables of its own (its account is its config dir,
    /// program or script).
    pub const NONE: AccountFacts = AccountFacts {
        credentials: &[],
        base_urls: &[],
    };
}

/// How an attempt of a kind runs.
pub enum Launch {
    /// Played inside Recourse by the runner: the simulated provider.
    InProcess,
    /// A child process, read by the kind's adapter.
    Process {
        command: fn(&AgentSpec, &str) -> CommandLine,
        adapter: fn() -> Box<dyn StreamAdapter>,
    },
}

/// Seconds in an hour, for the usage windows below.
const HOUR: u32 = 3_600;

/// What a CLI on a subscription plan (5-hour usage windows) starts with:
/// transient failures retried 3 times from 10 s, then skip; a hard one waits
/// for its window to reset, up to `window_s`, then skip.
fn waits_for_window(window_s: u32) -> CandidatePolicy {
    CandidatePolicy::new(
        ClassPolicy::new(None, Some((3, 10)), Exhausted::Skip),
        ClassPolicy::new(Some(window_s), None, Exhausted::Skip),
    )
}

pub(super) fn descriptor(kind: AgentKind) -> &'static Descriptor {
    match kind {
        AgentKind::Simulated => &simulated::DESCRIPTOR,
        AgentKind::ClaudeCode => &claude_code::DESCRIPTOR,
        AgentKind::Codex => &codex::DESCRIPTOR,
        AgentKind::Gemini => &gemini::DESCRIPTOR,
        AgentKind::Opencode => &opencode::DESCRIPTOR,
        AgentKind::Generic => &generic::DESCRIPTOR,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_has_its_own_descriptor_and_slug() {
        for kind in AgentKind::ALL {
            let d = kind.descriptor();
            assert_eq!(d.kind, kind, "{} is filed under its own kind", d.slug);
            assert_eq!(AgentKind::from_slug(d.slug), Some(kind));
            assert_eq!((d.starter)().kind, kind, "{}: its starter runs it", d.slug);
            assert!(
                (d.starter)().validate("agent").is_empty(),
                "{}: a new candidate is valid as made",
                d.slug
            );
            assert_eq!(
                crate::policy::validate::validate_policy("c", &(d.starter_policy)()),
                Vec::new(),
                "{}: its starter policy is valid",
                d.slug
            );
            assert!(
                crate::policy::RESET_WAIT_RANGE.contains(&d.hard_wait_s),
                "{}: its hard wait is within the limits",
                d.slug
            );
        }
    }
}
