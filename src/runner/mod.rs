//! The agent runner: launches one attempt of a candidate and reports how it
//! ended as raw evidence plus effect context.
//!
//! Real agents are child processes ([`process`]) whose output their kind's
//! adapter (`agent::kinds`) interprets; the simulated provider
//! ([`simulated`]) plays a script in-process. Either way a cancelled attempt is killed and reaped
//! before [`run`] returns.

pub mod group;
mod process;
pub mod readiness;
mod simulated;
mod streams;
pub mod worktree;

pub use group::{boot_id, AgentProcess};
pub use streams::MAX_LINE;

use std::path::PathBuf;

use tokio_util::sync::CancellationToken;

use crate::agent::{AgentSpec, FilesChanged, Launch as KindLaunch, Transcript};
use crate::classification::RuntimeFailure;
use crate::clock::Clock;
use crate::evidence::RawEvidence;
use crate::safety::EffectContext;

/// Everything one attempt needs.
#[derive(Debug, Clone)]
pub struct Launch {
    pub agent: AgentSpec,
    pub prompt: String,
    pub cwd: Option<PathBuf>,
    /// Zero-based attempt number of this candidate within the route.
    pub step: u32,
    pub clock: Clock,
    /// Told the agent's process once it started, so it can be stored.
    pub spawned: Option<tokio::sync::mpsc::UnboundedSender<AgentProcess>>,
    /// Told the transcript as it grows, a few times a second.
    pub progress: Option<tokio::sync::watch::Sender<Transcript>>,
    /// Told once, at the agent's first assistant output: a probe's first
    /// sign that its account's limit has lifted.
    pub answered: Option<tokio::sync::mpsc::UnboundedSender<()>>,
    /// Resume this session of the CLI and send its message instead of the
    /// prompt (a continuation).
    pub resume: Option<ResumeSession>,
}

/// The CLI session a continuation resumes, and what it says there.
#[derive(Debug, Clone, PartialEq)]
pub struct ResumeSession {
    pub session_id: String,
    pub message: String,
}

/// Why `dir` cannot be an agent's working directory, naming it, in words
/// true of what is there: missing, a file, or something else that is not
/// a directory; `None` when it is a directory.
pub fn not_a_directory(dir: &std::path::Path) -> Option<String> {
    let shown = dir.display();
    match std::fs::metadata(dir) {
        Ok(found) if found.is_dir() => None,
        Ok(found) if found.is_file() => Some(format!("{shown} is a file, not a directory")),
        Ok(_) => Some(format!("{shown} is not a directory")),
        Err(_) => Some(format!("{shown} does not exist")),
    }
}

/// An attempt that could not start for a reason found before its agent
/// was launched (`why`, in words): recorded as a spawn failure of its
/// program, with nothing delivered.
pub fn cannot_start(launch: &Launch, why: &str) -> Ran {
    let program = match launch.agent.kind.descriptor().launch {
        KindLaunch::InProcess => launch.agent.kind.descriptor().slug.to_string(),
        KindLaunch::Process { command, .. } => command(&launch.agent, "").program,
    };
    Ran {
        report: process::not_startable(launch, &program, why),
        transcript: Transcript::default(),
        files: None,
    }
}

/// An attempt, ended: how, what the agent said and did, and which files of
/// its working directory (a git repository) it changed.
#[derive(Debug, Clone, PartialEq)]
pub struct Ran {
    pub report: RunReport,
    pub transcript: Transcript,
    pub files: Option<FilesChanged>,
}

/// How an attempt ended.
#[derive(Debug, Clone, PartialEq)]
pub enum RunReport {
    Succeeded,
    Failed {
        raw: RawEvidence,
        effect: EffectContext,
    },
    /// The runner itself knows what went wrong (the program would not start,
    /// a deadline passed): classified from `failure`, not by the catalogue.
    Runtime {
        failure: RuntimeFailure,
        raw: RawEvidence,
        effect: EffectContext,
    },
    /// Cancelled: the process was killed and reaped.
    Killed,
}

/// Runs the attempt until it ends or `cancel` fires.
pub async fn run(launch: Launch, cancel: CancellationToken) -> Ran {
    let descriptor = launch.agent.kind.descriptor();
    // The simulated provider starts no process and writes no file: a tree
    // read around it would only credit it with other people's edits, for
    // four git processes an attempt.
    let dir = match descriptor.launch {
        KindLaunch::InProcess => None,
        KindLaunch::Process { .. } => launch.cwd.clone().or_else(|| std::env::current_dir().ok()),
    };
    let before = match &dir {
        Some(d) => worktree::snapshot(d).await,
        None => None,
    };
    let (report, transcript) = match (&descriptor.launch, &launch.resume, &descriptor.resume) {
        (KindLaunch::Process { command, adapter }, None, _) => {
            let line = command(&launch.agent, &launch.prompt);
            process::run(&launch, line, adapter(), cancel).await
        }
        (KindLaunch::Process { adapter, .. }, Some(r), Some(resume)) => {
            let line = (resume.command)(&launch.agent, &r.session_id, &r.message);
            process::run(&launch, line, adapter(), cancel).await
        }
        // Never the prompt in place of a continuation: that would send
        // the task again where a person asked to continue it.
        (_, Some(_), _) => (process::cannot_resume(&launch), Transcript::default()),
        (KindLaunch::InProcess, None, _) => simulated::run(&launch, cancel).await,
    };
    let after = match (&dir, &before) {
        (Some(d), Some(_)) => worktree::snapshot(d).await,
        _ => None,
    };
    let files = match (dir, before, after) {
        (Some(d), Some(before), Some(after)) => Some(worktree::changes(&d, &before, &after).await),
        _ => None,
    };
    Ran {
        report,
        transcript,
        files,
    }
}
