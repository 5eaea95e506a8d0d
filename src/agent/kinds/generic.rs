//! Any command: exit status 0 is success; otherwise the stderr tail is the
//! evidence. What the command did is unknown, so the gate fails closed.

use crate::agent::kinds::HOUR;
use crate::agent::stream::{raw, CommandLine, Exit, Finished, Seen, StreamAdapter};
use crate::agent::Transcript;
use crate::agent::{AccountFacts, AgentKind, AgentSpec, Descriptor, Launch};
use crate::evidence::{Phase, Provider};
use crate::policy::CandidatePolicy;
use crate::safety::EffectContext;

pub(super) const DESCRIPTOR: Descriptor = Descriptor {
    kind: AgentKind::Generic,
    slug: "generic",
    label: "Any command",
    description: "Runs your command with the prompt on stdin; exit code and stderr tail are the \
                  evidence. Effects are unknown, so failures go to manual recovery.",
    default_program: None,
    config_dir_variable: None,
    provider: Provider::Generic,
    account: AccountFacts::NONE,
    policy_applies: false,
    access: None,
    // A document must be valid as written: a placeholder the person replaces.
    readiness: None,
    starter: || AgentSpec {
        program: Some("your-agent".into()),
        ..AgentSpec::default_for(AgentKind::Generic)
    },
    starter_policy: || CandidatePolicy::default_for_new_candidate(),
    starter_why: "Any command's failures always go to you, because what the command did is unknown; no policy applies, so it starts with immediate skip.",
    hard_wait_s: HOUR,
    launch: Launch::Process {
        command: |agent, prompt| CommandLine {
            stdin: Some(prompt.to_string()),
            ..CommandLine::cli(agent, "false", &[], "", &[])
        },
        adapter: || Box::<Generic>::default(),
    },
    resume: None,
};

/// Whether anything but whitespace came on stdout is all it keeps
/// (`Seen::assistant`): the command's output is its only sign of work.
#[derive(Default)]
pub struct Generic {
    seen: Seen,
    /// The last lines of stdout, for the transcript.
    stdout: Lines,
}

/// The last [`Lines::KEEP`] bytes of lines, whole lines only.
#[derive(Default)]
struct Lines {
    lines: std::collections::VecDeque<String>,
    bytes: usize,
}

impl Lines {
    const KEEP: usize = 16 * 1024;

    fn push(&mut self, line: &str) {
        let line = crate::agent::transcript::cut(line, Self::KEEP);
        self.bytes += line.len() + 1;
        self.lines.push_back(line);
        while self.bytes > Self::KEEP {
            match self.lines.pop_front() {
                Some(gone) => self.bytes -= gone.len() + 1,
                None => break,
            }
        }
    }
}

impl StreamAdapter for Generic {
    fn on_stdout_line(&mut self, line: &str) {
        self.seen.assistant |= !line.trim().is_empty();
        self.stdout.push(line.trim_end_matches(['\n', '\r']));
    }

    fn on_oversized_line(&mut self, _head: &str) {
        self.seen.assistant = true;
    }

    fn effect_so_far(&self) -> EffectContext {
        EffectContext::unknown(self.seen.assistant)
    }

    fn finish(self: Box<Self>, exit: Exit) -> Finished {
        if exit.code == Some(0) {
            return Finished::Succeeded;
        }
        Finished::Failed {
            raw: raw(Provider::Generic, None, &exit, Phase::Exit),
            effect: EffectContext::unknown(exit.stdout_seen),
        }
    }

    /// A command's transcript is the tail of what it printed.
    fn take_transcript(&mut self, exit: &Exit) -> Transcript {
        let mut t = std::mem::take(&mut self.seen.transcript);
        let stdout: Vec<String> = self.stdout.lines.drain(..).collect();
        if !stdout.is_empty() {
            t.output("stdout", &stdout.join("\n"));
        }
        let stderr = String::from_utf8_lossy(&exit.stderr_tail);
        if !stderr.trim().is_empty() {
            t.output("stderr", &stderr);
        }
        t
    }

    fn seen(&self) -> &Seen {
        &self.seen
    }

    fn seen_mut(&mut self) -> &mut Seen {
        &mut self.seen
    }
}
