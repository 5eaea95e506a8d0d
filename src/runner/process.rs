//! Child-process attempts: launch the agent CLI, feed its stdout lines to the
//! kind's adapter, keep a bounded stderr tail, and on cancel kill and reap.

use std::process::Stdio;

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, Command};
use tokio_util::sync::CancellationToken;

use super::adapters::{self, Exit, Finished};
use super::{Launch, RunReport};
use crate::engine::AgentKind;
use crate::evidence::{Phase, Provider, RawEvidence};
use crate::safety::{EffectContext, PromptDelivery};

/// Bytes of stderr kept (the tail).
const STDERR_TAIL: usize = 8192;

pub(super) async fn run(launch: &Launch, cancel: CancellationToken) -> RunReport {
    let line = adapters::command_line(&launch.agent, &launch.prompt);
    let mut cmd = Command::new(&line.program);
    cmd.args(&line.args)
        .stdin(if line.stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    // Its own process group, so a kill reaches the tools it started too.
    #[cfg(unix)]
    cmd.process_group(0);
    if let Some(dir) = &launch.cwd {
        cmd.current_dir(dir);
    }
    let child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => return spawn_failed(launch, &line.program, &e),
    };
    supervise(child, launch, line.stdin, &cancel).await
}

async fn supervise(
    mut child: Child,
    launch: &Launch,
    stdin_text: Option<String>,
    cancel: &CancellationToken,
) -> RunReport {
    if let (Some(text), Some(mut stdin)) = (stdin_text, child.stdin.take()) {
        // A child that exits without reading stdin is reported by its exit.
        let _ = stdin.write_all(text.as_bytes()).await;
    }
    let mut adapter = adapters::for_kind(launch.agent.kind);
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let read_err = tokio::spawn(read_tail(stderr));
    let mut stdout_seen = false;
    let read_out = async {
        if let Some(out) = stdout {
            let mut lines = BufReader::new(out).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                stdout_seen |= !line.trim().is_empty();
                adapter.on_stdout_line(&line);
            }
        }
    };
    tokio::select! {
        () = cancel.cancelled() => {
            kill_and_reap(&mut child).await;
            read_err.abort();
            return RunReport::Killed;
        }
        () = read_out => {}
    }
    let status = tokio::select! {
        () = cancel.cancelled() => {
            kill_and_reap(&mut child).await;
            read_err.abort();
            return RunReport::Killed;
        }
        s = child.wait() => s,
    };
    let stderr_tail = read_err.await.unwrap_or_default();
    let exit = Exit {
        code: status.ok().and_then(|s| s.code()),
        stderr_tail,
        stdout_seen,
        occurred_at: launch.clock.now(),
    };
    match adapter.finish(exit) {
        Finished::Succeeded => RunReport::Succeeded,
        Finished::Failed { raw, effect } => RunReport::Failed { raw, effect },
    }
}

async fn kill_and_reap(child: &mut Child) {
    #[cfg(unix)]
    if let Some(pid) = child.id().and_then(|p| i32::try_from(p).ok()) {
        // SAFETY: kill(2) on our own child's process group; no memory involved.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
    // `kill` sends SIGKILL to the leader and waits, so it is reaped here.
    if let Err(e) = child.kill().await {
        tracing::warn!("killing the agent process failed: {e}");
    }
}

async fn read_tail(stderr: Option<tokio::process::ChildStderr>) -> Vec<u8> {
    let Some(mut err) = stderr else {
        return Vec::new();
    };
    let mut tail = Vec::new();
    let mut buf = [0u8; 4096];
    while let Ok(n) = err.read(&mut buf).await {
        if n == 0 {
            break;
        }
        tail.extend_from_slice(&buf[..n]);
        if tail.len() > STDERR_TAIL {
            tail.drain(..tail.len() - STDERR_TAIL);
        }
    }
    tail
}

fn spawn_failed(launch: &Launch, program: &str, e: &std::io::Error) -> RunReport {
    let raw = RawEvidence {
        provider: provider_of(launch.agent.kind),
        message: format!("cannot start {program}: {e}").into_bytes(),
        phase: Some(Phase::Spawn),
        http_status: None,
        headers: Default::default(),
        error_type: None,
        exit_code: None,
        occurred_at: launch.clock.now(),
        correlation: None,
    };
    let effect = EffectContext {
        prompt_delivery: Some(PromptDelivery::NotDelivered),
        assistant_output_seen: Some(false),
        tool_activity_seen: Some(false),
        partial_result_seen: Some(false),
        evidence_current: None,
    };
    RunReport::Failed { raw, effect }
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
