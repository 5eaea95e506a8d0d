//! Deadline timers for routes: one tokio task, a sorted deadline map and a
//! single `sleep_until` on the earliest entry.
//!
//! No polling: an idle scheduler with thousands of pending deadlines is one
//! parked task. At most one deadline is pending per key; arming again
//! replaces it. A firing carries the generation it was armed for, so the
//! route engine's compare-and-set discards a timer that lost a race.

use std::collections::{BTreeSet, HashMap};

use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio::time::{sleep_until, Instant};
use tokio_util::sync::CancellationToken;

/// A deadline that came due.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fired {
    pub key: u32,
    pub generation: u32,
}

enum Command {
    Arm {
        key: u32,
        generation: u32,
        at: Instant,
    },
    Disarm {
        key: u32,
    },
}

/// Handle to the timer task; cheap to clone.
#[derive(Clone)]
pub struct Scheduler {
    commands: mpsc::UnboundedSender<Command>,
}

impl Scheduler {
    /// Starts the timer task; it ends when `cancel` fires.
    pub fn start(
        cancel: CancellationToken,
    ) -> (Scheduler, mpsc::UnboundedReceiver<Fired>, JoinHandle<()>) {
        let (commands, rx) = mpsc::unbounded_channel();
        let (fired_tx, fired_rx) = mpsc::unbounded_channel();
        let task = tokio::spawn(run(rx, fired_tx, cancel));
        (Scheduler { commands }, fired_rx, task)
    }

    /// Arms (or re-arms) the deadline of `key`.
    pub fn arm(&self, key: u32, generation: u32, at: Instant) {
        // A send fails only after shutdown, when nothing should fire anyway.
        let _ = self.commands.send(Command::Arm {
            key,
            generation,
            at,
        });
    }

    pub fn disarm(&self, key: u32) {
        let _ = self.commands.send(Command::Disarm { key });
    }
}

#[derive(Default)]
struct Deadlines {
    by_time: BTreeSet<(Instant, u32)>,
    by_key: HashMap<u32, (Instant, u32)>,
}

impl Deadlines {
    fn arm(&mut self, key: u32, generation: u32, at: Instant) {
        self.disarm(key);
        self.by_time.insert((at, key));
        self.by_key.insert(key, (at, generation));
    }

    fn disarm(&mut self, key: u32) {
        if let Some((at, _)) = self.by_key.remove(&key) {
            self.by_time.remove(&(at, key));
        }
    }

    fn earliest(&self) -> Option<Instant> {
        self.by_time.first().map(|(at, _)| *at)
    }

    /// Removes and returns every deadline at or before `now`.
    fn take_due(&mut self, now: Instant) -> Vec<Fired> {
        let mut due = Vec::new();
        while let Some(&(at, key)) = self.by_time.first() {
            if at > now {
                break;
            }
            self.by_time.remove(&(at, key));
            if let Some((_, generation)) = self.by_key.remove(&key) {
                due.push(Fired { key, generation });
            }
        }
        due
    }
}

async fn run(
    mut commands: mpsc::UnboundedReceiver<Command>,
    fired: mpsc::UnboundedSender<Fired>,
    cancel: CancellationToken,
) {
    let mut deadlines = Deadlines::default();
    loop {
        let next = deadlines.earliest();
        tokio::select! {
            () = cancel.cancelled() => return,
            cmd = commands.recv() => match cmd {
                Some(Command::Arm { key, generation, at }) => deadlines.arm(key, generation, at),
                Some(Command::Disarm { key }) => deadlines.disarm(key),
                None => return,
            },
            () = sleep_until(next.unwrap_or_else(Instant::now)), if next.is_some() => {
                for f in deadlines.take_due(Instant::now()) {
                    if fired.send(f).is_err() {
                        return;
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn secs(s: u64) -> Instant {
        Instant::now() + Duration::from_secs(s)
    }

    #[tokio::test(start_paused = true)]
    async fn deadlines_fire_in_time_order_and_not_before() {
        let cancel = CancellationToken::new();
        let (s, mut fired, task) = Scheduler::start(cancel.clone());
        s.arm(1, 7, secs(10));
        s.arm(2, 3, secs(5));
        let start = Instant::now();
        assert_eq!(
            fired.recv().await,
            Some(Fired {
                key: 2,
                generation: 3
            })
        );
        assert_eq!(
            start.elapsed(),
            Duration::from_secs(5),
            "fires exactly at its deadline"
        );
        assert_eq!(
            fired.recv().await,
            Some(Fired {
                key: 1,
                generation: 7
            })
        );
        assert_eq!(start.elapsed(), Duration::from_secs(10));
        cancel.cancel();
        task.await.unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn rearming_replaces_and_disarming_cancels() {
        let cancel = CancellationToken::new();
        let (s, mut fired, task) = Scheduler::start(cancel.clone());
        s.arm(1, 1, secs(5));
        s.arm(1, 2, secs(8));
        s.arm(2, 1, secs(6));
        s.disarm(2);
        s.arm(3, 1, secs(20));
        let got = fired.recv().await.unwrap();
        assert_eq!(
            got,
            Fired {
                key: 1,
                generation: 2
            },
            "only the replacement fires"
        );
        let got = fired.recv().await.unwrap();
        assert_eq!(got.key, 3, "the disarmed key never fires");
        cancel.cancel();
        task.await.unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn past_deadline_fires_at_once() {
        let cancel = CancellationToken::new();
        let (s, mut fired, task) = Scheduler::start(cancel.clone());
        let start = Instant::now();
        s.arm(9, 4, start - Duration::from_secs(30));
        assert_eq!(
            fired.recv().await,
            Some(Fired {
                key: 9,
                generation: 4
            })
        );
        assert_eq!(
            start.elapsed(),
            Duration::ZERO,
            "no wait for an overdue deadline"
        );
        cancel.cancel();
        task.await.unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn ten_thousand_idle_deadlines_fire_once_each() {
        let cancel = CancellationToken::new();
        let (s, mut fired, task) = Scheduler::start(cancel.clone());
        for key in 0..10_000u32 {
            s.arm(key, key, secs(3600 + u64::from(key % 97)));
        }
        let mut seen = std::collections::HashSet::new();
        for _ in 0..10_000 {
            let f = fired.recv().await.unwrap();
            assert_eq!(f.key, f.generation);
            assert!(seen.insert(f.key), "key {} fired twice", f.key);
        }
        cancel.cancel();
        task.await.unwrap();
    }
}
