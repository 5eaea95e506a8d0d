//! Child-process attempts: launch the agent CLI in its own process group,
//! feed its stdout lines to the kind's adapter, keep a bounded stderr tail,
//! and end the attempt when the agent exits, a deadline passes, or it is
//! cancelled. However it ends, the whole process group is killed and the
//! agent reaped before the report is returned.
//!
//! Bounds ([`super::streams`]): a stdout line is kept up to its bound (the
//! rest is dropped and the adapter told), stderr to its tail, invalid UTF-8
//! is decoded lossily, and stdin is written concurrently with reading so a
//! large prompt cannot deadlock against a chatty agent.

use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use tokio::io::AsyncWriteExt;
use tokio::process::{Child, Command};
use tokio::sync::mpsc;
use tokio::time::{sleep_until, Instant};
use tokio_util::sync::CancellationToken;

use super::group::AgentProcess;
use super::streams::{read_chunks, read_lines, Output, Tail};
use super::{Launch, RunReport};
use crate::agent::{AgentSpec, CommandLine, Exit, Finished, StreamAdapter, Transcript};
use crate::classification::RuntimeFailure;
use crate::evidence::{Phase, RawEvidence};
use crate::safety::{EffectContext, PromptDelivery};

/// How long output may still arrive after the agent exited: a background
/// child it left holding the pipes does not keep the attempt open.
const EXIT_GRACE: Duration = Duration::from_secs(2);

/// Runs `line` and reads its output with `adapter`, the kind's own.
pub(super) async fn run(
    launch: &Launch,
    line: CommandLine,
    adapter: Box<dyn StreamAdapter>,
    cancel: CancellationToken,
) -> (RunReport, Transcript) {
    let not_started = |report| (report, Transcript::default());
    if let Some(why) = launch.cwd.as_deref().and_then(super::not_a_directory) {
        let why = format!("working directory {why}");
        return not_started(spawn_failed(launch, &line.program, why));
    }
    // The spec's Debug masks secret-looking env values and arguments; the
    // command line is not logged, as it holds the prompt.
    tracing::debug!(agent = ?launch.agent, step = launch.step, "starting the agent");
    // Values kept in the keyring are read now, for this process only.
    let env = launch.agent.env.clone();
    let env = match tokio::task::spawn_blocking(move || crate::keyring::resolve_env(&env)).await {
        Ok(Ok(env)) => env,
        Ok(Err(why)) => return not_started(spawn_failed(launch, &line.program, why)),
        Err(e) => return not_started(spawn_failed(launch, &line.program, e.to_string())),
    };
    let mut cmd = command(&launch.agent, &env, &line);
    if let Some(dir) = &launch.cwd {
        cmd.current_dir(dir);
    }
    match cmd.spawn() {
        Ok(child) => {
            let process = child.id().and_then(AgentProcess::of);
            if let (Some(tx), Some(process)) = (&launch.spawned, process) {
                let _ = tx.send(process);
            }
            supervise(child, process, launch, line.stdin, adapter, &cancel).await
        }
        Err(e) => {
            let why = spawn_error(&line.program, &e);
            not_started(spawn_failed(launch, &line.program, why))
        }
    }
}

fn command(
    agent: &AgentSpec,
    env: &std::collections::BTreeMap<String, String>,
    line: &CommandLine,
) -> Command {
    let mut cmd = Command::new(&line.program);
    cmd.args(&line.args)
        .envs(env)
        .envs(line.env.iter().map(|(k, v)| (k, v)))
        .stdin(if line.stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    if let (Some(dir), Some(var)) = (
        &agent.config_dir,
        agent.kind.descriptor().config_dir_variable,
    ) {
        cmd.env(var, dir);
    }
    // Its own process group, so a kill reaches the tools it started too.
    cmd.process_group(0);
    die_with_parent(&mut cmd);
    cmd
}

/// The agent gets SIGKILL when the thread that started it dies, so a
/// killed engine (SIGKILL, OOM) does not leave it working unsupervised.
/// Tokio starts children from a runtime worker thread, which lives as long
/// as the runtime.
#[cfg(target_os = "linux")]
fn die_with_parent(cmd: &mut Command) {
    // SAFETY: getpid is async-signal-safe; captured before fork.
    #[allow(unsafe_code)]
    let parent = unsafe { libc::getpid() };
    // SAFETY: the closure runs in the forked child before exec and calls
    // only async-signal-safe functions (prctl, getppid, _exit).
    #[allow(unsafe_code)]
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // The parent died between fork and prctl: the signal was missed.
            if libc::getppid() != parent {
                libc::_exit(137);
            }
            Ok(())
        });
    }
}

#[cfg(not(target_os = "linux"))]
fn die_with_parent(_cmd: &mut Command) {}

async fn supervise(
    mut child: Child,
    group: Option<AgentProcess>,
    launch: &Launch,
    stdin_text: Option<String>,
    mut adapter: Box<dyn StreamAdapter>,
    cancel: &CancellationToken,
) -> (RunReport, Transcript) {
    if let (Some(text), Some(mut stdin)) = (stdin_text, child.stdin.take()) {
        // Written alongside reading: an agent that prints a lot before it
        // reads cannot block us. One that exits unread is reported by its exit.
        tokio::spawn(async move {
            let _ = stdin.write_all(text.as_bytes()).await;
        });
    }
    let (tx, mut rx) = mpsc::channel(16);
    let readers = [
        child
            .stdout
            .take()
            .map(|out| tokio::spawn(read_lines(out, tx.clone()))),
        child
            .stderr
            .take()
            .map(|err| tokio::spawn(read_chunks(err, tx.clone()))),
    ];
    drop(tx);

    let timeouts = launch.agent.timeouts;
    let idle = Duration::from_secs(u64::from(timeouts.idle_s));
    let total_deadline = Instant::now() + Duration::from_secs(u64::from(timeouts.total_s));
    let mut idle_deadline = Instant::now() + idle;
    let mut stderr_tail = Tail::default();
    let mut stdout_seen = false;
    let mut progress = Progress {
        to: launch.progress.as_ref(),
        last: None,
        pending: false,
    };
    let mut pipes_open = true;
    let mut exited: Option<(std::io::Result<ExitStatus>, Instant)> = None;
    let mut answered = launch.answered.clone();

    let ended = loop {
        if exited.is_some() && !pipes_open {
            break None;
        }
        let grace_end = exited.as_ref().map(|(_, at)| *at + EXIT_GRACE);
        tokio::select! {
            // Deadlines before output: a chatty agent cannot starve them.
            biased;
            () = cancel.cancelled(), if exited.is_none() => break Some(Ended::Cancelled),
            status = child.wait(), if exited.is_none() => {
                exited = Some((status, Instant::now()));
            }
            () = sleep_until(idle_deadline), if exited.is_none() => {
                break Some(Ended::TimedOut(RuntimeFailure::IdleTimeout {
                    idle_s: timeouts.idle_s,
                    output_seen: stdout_seen || stderr_tail.any_output(),
                }));
            }
            () = sleep_until(total_deadline), if exited.is_none() => {
                break Some(Ended::TimedOut(RuntimeFailure::TotalTimeout {
                    total_s: timeouts.total_s,
                    output_seen: stdout_seen || stderr_tail.any_output(),
                }));
            }
            () = sleep_until(grace_end.unwrap_or_else(Instant::now)), if grace_end.is_some() => {
                break None;
            }
            () = sleep_until(progress.due().unwrap_or_else(Instant::now)), if progress.due().is_some() => {
                progress.send(&adapter.seen().transcript);
            }
            msg = rx.recv(), if pipes_open => match msg {
                Some(Output::Line { bytes, oversized }) => {
                    idle_deadline = Instant::now() + idle;
                    let text = String::from_utf8_lossy(&bytes);
                    stdout_seen |= !text.trim().is_empty();
                    if oversized {
                        adapter.on_oversized_line(&text);
                    } else {
                        adapter.on_stdout_line(&text);
                    }
                    progress.tell(&adapter.seen().transcript);
                    if answered.is_some() && adapter.seen().assistant {
                        if let Some(tx) = answered.take() {
                            let _ = tx.send(());
                        }
                    }
                }
                Some(Output::Stderr(chunk)) => {
                    idle_deadline = Instant::now() + idle;
                    stderr_tail.push(&chunk);
                }
                None => pipes_open = false,
            },
        }
    };
    // Whatever is left of the group (a dev server, a tool) goes with it.
    kill_group(group);
    for reader in readers.into_iter().flatten() {
        reader.abort();
    }
    let status = match ended {
        Some(end) => {
            reap(&mut child).await;
            let stderr_tail = stderr_tail.finish();
            let exit = Exit {
                code: None,
                stderr_tail: stderr_tail.clone(),
                stdout_seen,
                occurred_at: launch.clock.now(),
            };
            let transcript = adapter.take_transcript(&exit);
            let report = match end {
                Ended::Cancelled => RunReport::Killed,
                Ended::TimedOut(failure) => {
                    timed_out(launch, failure, adapter.as_ref(), stderr_tail)
                }
            };
            return (report, transcript);
        }
        None => exited.map(|(s, _)| s),
    };
    let exit = Exit {
        code: status.and_then(|s| s.ok()).and_then(|s| s.code()),
        stderr_tail: stderr_tail.finish(),
        stdout_seen,
        occurred_at: launch.clock.now(),
    };
    let transcript = adapter.take_transcript(&exit);
    let report = match adapter.finish(exit) {
        Finished::Succeeded => RunReport::Succeeded,
        Finished::Failed { raw, effect } => RunReport::Failed { raw, effect },
    };
    (report, transcript)
}

/// Hands the live transcript to whoever watches the attempt, at most four
/// times a second: a chatty agent does not flood the UI. What a burst of
/// lines left unsent goes out when the quarter second is up, so a quiet
/// agent is never shown as it was before its last burst.
struct Progress<'a> {
    to: Option<&'a tokio::sync::watch::Sender<Transcript>>,
    last: Option<Instant>,
    /// A change not sent yet.
    pending: bool,
}

impl Progress<'_> {
    const EVERY: Duration = Duration::from_millis(250);

    fn tell(&mut self, transcript: &Transcript) {
        if self.to.is_none() {
            return;
        }
        if self.last.is_some_and(|t| t.elapsed() < Self::EVERY) {
            self.pending = true;
            return;
        }
        self.send(transcript);
    }

    /// When the change held back is due.
    fn due(&self) -> Option<Instant> {
        self.last.filter(|_| self.pending).map(|t| t + Self::EVERY)
    }

    fn send(&mut self, transcript: &Transcript) {
        if let Some(to) = self.to {
            self.last = Some(Instant::now());
            self.pending = false;
            to.send_replace(transcript.clone());
        }
    }
}

enum Ended {
    Cancelled,
    TimedOut(RuntimeFailure),
}

/// Once the agent is reaped its pid may be handed out again: the group is
/// killed only while it is still verifiably ours.
fn kill_group(group: Option<AgentProcess>) {
    if let Some(group) = group {
        group.kill_if_alive();
    }
}

async fn reap(child: &mut Child) {
    // `kill` sends SIGKILL to the leader and waits, so it is reaped here.
    if let Err(e) = child.kill().await {
        tracing::warn!("killing the agent process failed: {e}");
    }
}

fn timed_out(
    launch: &Launch,
    failure: RuntimeFailure,
    adapter: &dyn StreamAdapter,
    stderr_tail: Vec<u8>,
) -> RunReport {
    let mut message = failure.classify("").explanation.into_bytes();
    if !stderr_tail.is_empty() {
        message.push(b'\n');
        message.extend_from_slice(&stderr_tail);
    }
    RunReport::Runtime {
        failure,
        raw: runtime_evidence(launch, message, Phase::Stream),
        effect: effect_at_deadline(adapter.effect_so_far(), failure.output_seen()),
    }
}

/// A deadline cuts the agent off at no known boundary. Once it printed
/// anything at all, on stdout or stderr, it was running with the prompt, and
/// what it did in the silence since is unknown, even when no line was one
/// the adapter counts as the stream starting (Codex's `thread.started`,
/// Gemini's `init`, a warning on stderr): delivery is ambiguous, so the gate
/// sends it to a person. With no output at all the adapter's view stands.
fn effect_at_deadline(mut effect: EffectContext, output_seen: bool) -> EffectContext {
    if output_seen {
        effect.prompt_delivery = Some(PromptDelivery::Ambiguous);
    }
    effect
}

/// `claude: not found on PATH`, `/opt/x/codex: not executable`.
fn spawn_error(program: &str, e: &std::io::Error) -> String {
    let on_path = !program.contains('/');
    match e.kind() {
        std::io::ErrorKind::NotFound if on_path => "not found on PATH".to_string(),
        std::io::ErrorKind::NotFound => "no such file".to_string(),
        std::io::ErrorKind::PermissionDenied => "not executable (permission denied)".to_string(),
        _ => e.to_string(),
    }
}

/// A continuation for a kind that cannot resume a session: nothing starts.
pub(super) fn cannot_resume(launch: &Launch) -> RunReport {
    let label = launch.agent.kind.descriptor().label;
    spawn_failed(
        launch,
        label,
        "it cannot resume a session, and the prompt is not sent in its place".to_string(),
    )
}

fn spawn_failed(launch: &Launch, program: &str, why: String) -> RunReport {
    if why.starts_with("working directory") {
        return not_startable(launch, program, &why);
    }
    // A program given by path is named whole, so the person sees which one
    // failed; a bare name on PATH is named once, by `not_startable`.
    let why = if program.contains('/') {
        let home = std::env::var("HOME").unwrap_or_default();
        format!("{why} ({})", shown_path(program, &home))
    } else {
        why
    };
    not_startable(launch, program, &why)
}

/// `cannot start NAME: WHY`, for a cause that is not the program itself
/// (a working directory, a variable the profile no longer sets).
pub(super) fn not_startable(launch: &Launch, program: &str, why: &str) -> RunReport {
    let name = Path::new(program)
        .file_name()
        .map_or(program.to_string(), |n| n.to_string_lossy().into_owned());
    let message = format!("cannot start {name}: {why}");
    let raw = runtime_evidence(launch, message.into_bytes(), Phase::Spawn);
    let effect = EffectContext::not_delivered();
    RunReport::Runtime {
        failure: RuntimeFailure::SpawnFailed,
        raw,
        effect,
    }
}

/// The program as the user configured it, so they can see which one failed:
/// it is not a secret. Under `home` it is written `~/…`, which the evidence
/// sanitizer keeps (a `/home/u/…` path it replaces with `[path]`, as the
/// user's name is in it).
fn shown_path(program: &str, home: &str) -> String {
    let home = home.trim_end_matches('/');
    match program.strip_prefix(home) {
        Some(rest) if !home.is_empty() && rest.starts_with('/') => format!("~{rest}"),
        _ => program.to_string(),
    }
}

/// Evidence the runner itself writes: no status, no headers, no exit code.
fn runtime_evidence(launch: &Launch, message: Vec<u8>, phase: Phase) -> RawEvidence {
    RawEvidence::new(
        launch.agent.kind.descriptor().provider,
        message,
        launch.clock.now(),
    )
    .with_phase(phase)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_program_under_home_is_shown_from_tilde_and_others_as_configured() {
        for (program, home, shown) in [
            (
                "/home/ann/.local/bin/claude",
                "/home/ann",
                "~/.local/bin/claude",
            ),
            (
                "/home/ann/.local/bin/claude",
                "/home/ann/",
                "~/.local/bin/claude",
            ),
            (
                "/home/anne/bin/claude",
                "/home/ann",
                "/home/anne/bin/claude",
            ),
            (
                "/opt/claude-2/bin/agent",
                "/home/ann",
                "/opt/claude-2/bin/agent",
            ),
            ("/opt/claude-2/bin/agent", "", "/opt/claude-2/bin/agent"),
            ("/opt/claude-2/bin/agent", "/", "/opt/claude-2/bin/agent"),
            ("claude", "/home/ann", "claude"),
        ] {
            assert_eq!(
                shown_path(program, home),
                shown,
                "{program} with HOME={home}"
            );
        }
    }

    #[test]
    fn after_output_a_deadline_makes_delivery_ambiguous() {
        let quiet = EffectContext {
            prompt_delivery: Some(PromptDelivery::NotDelivered),
            assistant_output_seen: Some(false),
            tool_activity_seen: Some(false),
            partial_result_seen: Some(false),
            evidence_current: None,
        };
        assert_eq!(
            effect_at_deadline(quiet.clone(), false),
            quiet,
            "nothing printed: the adapter's view stands"
        );
        assert_eq!(
            effect_at_deadline(quiet, true).prompt_delivery,
            Some(PromptDelivery::Ambiguous),
            "a start line the adapter does not count is still output"
        );
    }
}
