//! Who an attempt's agent process is, across processes: its pid (which is
//! also its process group id) and the start time the kernel gives it, so an
//! engine that did not start it can make sure it is gone before it records
//! the attempt as killed or interrupted, without killing a stranger that
//! reused the number.
//!
//! A group is still ours when its leader is alive with the start time we
//! stored, or when the leader is gone but members of the group remain (Linux
//! does not hand out a pid that is still some group's id, so the group has
//! existed without a break since we started it).

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// This boot of this machine (`/proc/sys/kernel/random/boot_id`), so a
/// process start time read here can be told from one read on another
/// machine or before a reboot; `None` where the kernel does not say.
pub fn boot_id() -> Option<String> {
    let id = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
    let id: String = id
        .trim()
        .chars()
        .filter(|c| c.is_ascii_hexdigit())
        .collect();
    (!id.is_empty()).then_some(id)
}

/// An attempt's agent process as stored with the attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentProcess {
    pub pid: u32,
    /// Clock ticks since boot at which it started (`/proc/PID/stat` field 22).
    pub start: u64,
}

impl AgentProcess {
    /// The process as the kernel sees it now; `None` when it is gone.
    pub fn of(pid: u32) -> Option<AgentProcess> {
        let stat = Stat::read(pid)?;
        Some(AgentProcess {
            pid,
            start: stat.start,
        })
    }

    /// This very process (not its group) still runs: the pid is alive with
    /// the same start time and is no zombie. For an engine that owns
    /// routes, which need not lead a group.
    pub fn process_alive(self) -> bool {
        Stat::read(self.pid).is_some_and(|s| s.start == self.start && !s.zombie)
    }

    /// Anything of this attempt's process group still runs.
    pub fn alive(self) -> bool {
        match Stat::read(self.pid) {
            // Another start time: the pid was reused, so our group had ended.
            Some(leader) if leader.start != self.start => false,
            Some(leader) if !leader.zombie => true,
            // A zombie leader or none: the group lives while members remain.
            _ => members(self.pid) > 0,
        }
    }

    /// Kills the whole group if it is still ours; waits up to `within` for
    /// it to be gone. True when nothing of it remains.
    pub async fn kill_and_wait(self, within: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + within;
        while self.kill_if_alive() {
            if tokio::time::Instant::now() >= deadline {
                return !self.alive();
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        true
    }

    /// SIGKILL to the group if it is still ours; false when it is gone.
    pub fn kill_if_alive(self) -> bool {
        if !self.alive() {
            return false;
        }
        if let Ok(pgid) = i32::try_from(self.pid) {
            // SAFETY: kill(2) on a process group verified as ours just now.
            #[allow(unsafe_code)]
            unsafe {
                libc::kill(-pgid, libc::SIGKILL);
            }
        }
        true
    }
}

impl AgentProcess {
    /// [`Self::kill_and_wait`] for code that cannot await (reconciliation at
    /// open and on heartbeats). A SIGKILLed group is gone in milliseconds.
    pub fn kill_and_wait_blocking(self, within: Duration) -> bool {
        let deadline = std::time::Instant::now() + within;
        while self.kill_if_alive() {
            if std::time::Instant::now() >= deadline {
                return !self.alive();
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        true
    }
}

struct Stat {
    pgid: i32,
    start: u64,
    zombie: bool,
}

impl Stat {
    fn read(pid: u32) -> Option<Stat> {
        let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // The command name (field 2) may hold spaces and parentheses.
        let rest = text.get(text.rfind(')')? + 1..)?;
        let fields: Vec<&str> = rest.split_whitespace().collect();
        // `rest` starts at field 3 (state): field N is fields[N - 3].
        Some(Stat {
            zombie: *fields.first()? == "Z",
            pgid: fields.get(2)?.parse().ok()?,
            start: fields.get(19)?.parse().ok()?,
        })
    }
}

/// Living members of process group `pgid`.
fn members(pgid: u32) -> usize {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return 0;
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(Stat::read)
        .filter(|s| !s.zombie && i64::from(s.pgid) == i64::from(pgid))
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_read_and_alive() {
        let me = AgentProcess::of(std::process::id()).expect("our own /proc entry");
        assert!(me.alive());
        let stranger = AgentProcess {
            start: me.start + 1,
            ..me
        };
        assert!(
            !stranger.alive(),
            "the same pid with another start time is someone else"
        );
    }
}
