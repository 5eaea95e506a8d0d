//! Ctrl-C (SIGINT), SIGTERM (what `timeout`, a CI cancellation and `docker
//! stop` send) and SIGHUP (the terminal closed) end a command that follows
//! routes the same way: its running agents are stopped with their process
//! groups and their attempts recorded, so no route is left `running` with
//! nobody owning it.

use anyhow::{Context, Result};
use tokio::signal::unix::{signal, Signal, SignalKind};

/// The three signals, listened to from before the engine opens: from then
/// on none of them kills the process outright (the default, which left the
/// route `running` and the agent's tools working), and one that comes
/// while a route starts is kept until it is looked at.
pub struct Interrupts {
    interrupt: Signal,
    terminate: Signal,
    hangup: Signal,
}

impl Interrupts {
    /// Needs a tokio runtime.
    pub fn listen() -> Result<Interrupts> {
        let on = |kind: SignalKind, name: &str| {
            signal(kind).with_context(|| format!("listening for {name}"))
        };
        Ok(Interrupts {
            interrupt: on(SignalKind::interrupt(), "SIGINT")?,
            terminate: on(SignalKind::terminate(), "SIGTERM")?,
            hangup: on(SignalKind::hangup(), "SIGHUP")?,
        })
    }

    /// The next signal's number.
    pub async fn next(&mut self) -> i32 {
        tokio::select! {
            _ = self.interrupt.recv() => libc::SIGINT,
            _ = self.terminate.recv() => libc::SIGTERM,
            _ = self.hangup.recv() => libc::SIGHUP,
        }
    }

    /// A signal that has already come, if any, without waiting.
    pub async fn already(&mut self) -> Option<i32> {
        tokio::select! {
            biased;
            signal = self.next() => Some(signal),
            () = std::future::ready(()) => None,
        }
    }
}

/// A line on stderr that never panics: after SIGHUP the terminal may be
/// gone, and the shutdown that follows must still run.
pub fn say(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{line}");
}
