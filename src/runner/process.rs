//! Child-process attempts: launch the agent CLI in its own process group,
//! feed its stdout lines to the kind's adapter, keep a bounded stderr tail,
//! and end the attempt when the agent exits, a deadline passes, or it is
//! cancelled. However it ends, the whole process group is killed and the
//! agent reaped before the report is returned.
//!
//! Bounds: a stdout line is kept up to [`MAX_LINE`] bytes (the rest is
//! dropped and the adapter told), stderr to its last [`STDERR_TAIL`] bytes,
//! invalid UTF-8 is decoded lossily, and stdin is written concurrently with
//! reading so a large prompt cannot deadlock against a chatty agent.

use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::mpsc;
use tokio::time::{sleep_until, Instant};
use tokio_util::sync::CancellationToken;

use super::adapters::{self, Exit, Finished, StreamAdapter};
use super::group::AgentProcess;
use super::{Launch, RunReport};
use crate::agent::{AgentKind, AgentSpec};
use crate::classification::RuntimeFailure;
use crate::evidence::{Phase, Provider, RawEvidence};
use crate::safety::EffectContext;

/// Bytes of stderr kept (the tail).
const STDERR_TAIL: usize = 8192;
/// Bytes of one stdout line kept; the rest of the line is dropped.
pub const MAX_LINE: usize = 1 << 20;
/// How long output may still arrive after the agent exited: a background
/// child it left holding the pipes does not keep the attempt open.
const EXIT_GRACE: Duration = Duration::from_secs(2);

enum Output {
    Line { bytes: Vec<u8>, oversized: bool },
    Stderr(Vec<u8>),
}

pub(super) async fn run(launch: &Launch, cancel: CancellationToken) -> RunReport {
    let line = adapters::command_line(&launch.agent, &launch.prompt);
    if let Some(dir) = &launch.cwd {
        if !dir.is_dir() {
            let why = format!("working directory {} does not exist", dir.display());
            return spawn_failed(launch, &line.program, why);
        }
    }
    let mut cmd = command(&launch.agent, &line);
    if let Some(dir) = &launch.cwd {
        cmd.current_dir(dir);
    }
    match cmd.spawn() {
        Ok(child) => {
            let process = child.id().and_then(AgentProcess::of);
            if let (Some(tx), Some(process)) = (&launch.spawned, process) {
                let _ = tx.send(process);
            }
            supervise(child, process, launch, line.stdin, &cancel).await
        }
        Err(e) => {
            let why = spawn_error(&line.program, &e);
            spawn_failed(launch, &line.program, why)
        }
    }
}

fn command(agent: &AgentSpec, line: &adapters::CommandLine) -> Command {
    let mut cmd = Command::new(&line.program);
    cmd.args(&line.args)
        .envs(&agent.env)
        .stdin(if line.stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    if let (Some(dir), Some(var)) = (&agent.config_dir, config_dir_variable(agent.kind)) {
        cmd.env(var, dir);
    }
    // Its own process group, so a kill reaches the tools it started too.
    cmd.process_group(0);
    die_with_parent(&mut cmd);
    cmd
}

/// The variable each CLI documents for its configuration directory.
pub fn config_dir_variable(kind: AgentKind) -> Option<&'static str> {
    match kind {
        AgentKind::ClaudeCode => Some("CLAUDE_CONFIG_DIR"),
        AgentKind::Codex => Some("CODEX_HOME"),
        AgentKind::Gemini => Some("GEMINI_CLI_HOME"),
        AgentKind::Opencode => Some("OPENCODE_CONFIG_DIR"),
        AgentKind::Generic | AgentKind::Simulated => None,
    }
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
    cancel: &CancellationToken,
) -> RunReport {
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

    let mut adapter = adapters::for_kind(launch.agent.kind);
    let timeouts = launch.agent.timeouts;
    let idle = Duration::from_secs(u64::from(timeouts.idle_s));
    let total_deadline = Instant::now() + Duration::from_secs(u64::from(timeouts.total_s));
    let mut idle_deadline = Instant::now() + idle;
    let mut stderr_tail = Tail::default();
    let mut stdout_seen = false;
    let mut pipes_open = true;
    let mut exited: Option<(std::io::Result<ExitStatus>, Instant)> = None;

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
                    output_seen: stdout_seen,
                }));
            }
            () = sleep_until(total_deadline), if exited.is_none() => {
                break Some(Ended::TimedOut(RuntimeFailure::TotalTimeout {
                    total_s: timeouts.total_s,
                    output_seen: stdout_seen,
                }));
            }
            () = sleep_until(grace_end.unwrap_or_else(Instant::now)), if grace_end.is_some() => {
                break None;
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
            return match end {
                Ended::Cancelled => RunReport::Killed,
                Ended::TimedOut(failure) => {
                    timed_out(launch, failure, adapter.as_ref(), stderr_tail.finish())
                }
            };
        }
        None => exited.map(|(s, _)| s),
    };
    let exit = Exit {
        code: status.and_then(|s| s.ok()).and_then(|s| s.code()),
        stderr_tail: stderr_tail.finish(),
        stdout_seen,
        occurred_at: launch.clock.now(),
    };
    match adapter.finish(exit) {
        Finished::Succeeded => RunReport::Succeeded,
        Finished::Failed { raw, effect } => RunReport::Failed { raw, effect },
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

async fn read_lines(out: impl AsyncRead + Unpin, tx: mpsc::Sender<Output>) {
    let mut reader = BufReader::with_capacity(64 * 1024, out);
    let mut line = Vec::new();
    let mut oversized = false;
    loop {
        let (consumed, complete) = match reader.fill_buf().await {
            Ok([]) | Err(_) => break,
            Ok(buf) => {
                let (chunk, complete) = match buf.iter().position(|&b| b == b'\n') {
                    Some(i) => (&buf[..=i], true),
                    None => (buf, false),
                };
                let room = MAX_LINE.saturating_sub(line.len());
                oversized |= chunk.len() > room;
                line.extend_from_slice(&chunk[..chunk.len().min(room)]);
                (chunk.len(), complete)
            }
        };
        reader.consume(consumed);
        if complete {
            let bytes = std::mem::take(&mut line);
            if tx.send(Output::Line { bytes, oversized }).await.is_err() {
                return;
            }
            oversized = false;
        }
    }
    if !line.is_empty() {
        let _ = tx
            .send(Output::Line {
                bytes: line,
                oversized,
            })
            .await;
    }
}

async fn read_chunks(mut err: impl AsyncRead + Unpin, tx: mpsc::Sender<Output>) {
    let mut buf = vec![0u8; 4096];
    while let Ok(n) = err.read(&mut buf).await {
        if n == 0 || tx.send(Output::Stderr(buf[..n].to_vec())).await.is_err() {
            break;
        }
    }
}

/// The last [`STDERR_TAIL`] bytes; when bytes were dropped, the partial
/// first line goes too, so no fragment of a cut secret is kept.
#[derive(Default)]
struct Tail {
    bytes: Vec<u8>,
    cut: bool,
}

impl Tail {
    fn push(&mut self, chunk: &[u8]) {
        self.bytes.extend_from_slice(chunk);
        if self.bytes.len() > STDERR_TAIL {
            self.bytes.drain(..self.bytes.len() - STDERR_TAIL);
            self.cut = true;
        }
    }

    fn finish(mut self) -> Vec<u8> {
        if self.cut {
            match self.bytes.iter().position(|&b| b == b'\n') {
                Some(i) => drop(self.bytes.drain(..=i)),
                None => self.bytes.clear(),
            }
        }
        self.bytes
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
        effect: adapter.effect_so_far(),
    }
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

fn spawn_failed(launch: &Launch, program: &str, why: String) -> RunReport {
    let name = Path::new(program)
        .file_name()
        .map_or(program.to_string(), |n| n.to_string_lossy().into_owned());
    let message = if why.starts_with("working directory") {
        format!("cannot start {name}: {why}")
    } else {
        format!("cannot start {name}: {why} ({program})")
    };
    let raw = runtime_evidence(launch, message.into_bytes(), Phase::Spawn);
    let effect = EffectContext::not_delivered();
    RunReport::Runtime {
        failure: RuntimeFailure::SpawnFailed,
        raw,
        effect,
    }
}

/// Evidence the runner itself writes: no status, no headers, no exit code.
fn runtime_evidence(launch: &Launch, message: Vec<u8>, phase: Phase) -> RawEvidence {
    RawEvidence::new(provider_of(launch.agent.kind), message, launch.clock.now()).with_phase(phase)
}

pub(super) fn provider_of(kind: AgentKind) -> Provider {
    match kind {
        AgentKind::Simulated => Provider::Simulated,
        AgentKind::ClaudeCode => Provider::ClaudeCode,
        AgentKind::Codex => Provider::Codex,
        AgentKind::Gemini => Provider::Gemini,
        AgentKind::Opencode => Provider::Opencode,
        AgentKind::Generic => Provider::Generic,
    }
}
