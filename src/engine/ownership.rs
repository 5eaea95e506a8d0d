//! Ownership across processes sharing one database, restart reconciliation,
//! and shutdown.
//!
//! Each route with a pending timer or a running attempt has one owner (an
//! engine instance id) holding a lease it renews by heartbeat. Only the owner
//! arms the route's timer or runs its process; the actor that commits a
//! dispatch takes the lease in the same transaction. A route whose owner is
//! gone (lease expired, or its process no longer exists) is adopted by an
//! engine that adopts orphans: waits are re-armed at their stored deadline,
//! a route found mid-dispatch goes to manual recovery. Changes committed by
//! other processes are noticed through `PRAGMA data_version`.

use std::time::Duration;

use chrono::{DateTime, Utc};
use tokio::sync::mpsc;
use tracing::{error, warn};

use super::book::RunHandle;
use super::{Engine, EngineError, RouteSnapshot};
use crate::route::{machine, Interruption, RouteRow, RouteState};
use crate::runner::{boot_id, AgentProcess};
use crate::scheduler::Fired;
use crate::store::Claim;

/// How often the engine looks for changes made by other processes.
const SYNC_EVERY: Duration = Duration::from_secs(1);

/// The heartbeat's own state between ticks.
struct Beat {
    last_renew: tokio::time::Instant,
    renew_every: Duration,
    /// `PRAGMA data_version` at the last tick.
    seen_version: Option<i64>,
}

/// `pid<pid>-<nanos>-s<process start>-b<boot id>`: unique per engine
/// instance (several engines may live in one process), and naming its
/// process exactly, so another engine on this machine can tell a live owner
/// from a dead one whatever its lease says.
pub(super) fn instance_id() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() % 1_000_000_000_000)
        .unwrap_or_default();
    let pid = std::process::id();
    match (AgentProcess::of(pid), boot_id()) {
        (Some(me), Some(boot)) => format!("pid{pid}-{nanos}-s{}-b{boot}", me.start),
        _ => format!("pid{pid}-{nanos}"),
    }
}

/// An owner is gone when nothing runs its routes any more. An owner on
/// this machine and boot is judged by its process alone: alive with its
/// start time, it is not gone however late its lease (stopped with Ctrl-Z,
/// or its renewal's commit failed on a full disk, it still holds its agents);
/// dead, it is gone within its lease. Any other owner (another machine, an
/// id from before owners named their start) is gone once its lease ran
/// out, or when its pid no longer exists here.
pub(super) fn owner_gone(
    owner: Option<&str>,
    lease_until: Option<DateTime<Utc>>,
    now: DateTime<Utc>,
) -> bool {
    let Some(owner) = owner else { return true };
    let id = OwnerId::parse(owner);
    if let Some(process) = id.and_then(|id| id.here()) {
        return !process.process_alive();
    }
    if lease_until.is_none_or(|t| t < now) {
        return true;
    }
    match id {
        Some(id) if std::path::Path::new("/proc/self").exists() => {
            !std::path::Path::new(&format!("/proc/{}", id.pid)).exists()
        }
        Some(_) | None => false,
    }
}

/// What an owner id says of its process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct OwnerId<'a> {
    pid: u32,
    /// Start time and boot id, when the id carries them.
    process: Option<(u64, &'a str)>,
}

impl<'a> OwnerId<'a> {
    fn parse(owner: &'a str) -> Option<OwnerId<'a>> {
        let mut parts = owner.strip_prefix("pid")?.split('-');
        let pid = parts.next()?.parse().ok()?;
        let _nanos = parts.next()?;
        let start = parts.next().and_then(|p| p.strip_prefix('s')?.parse().ok());
        let boot = parts.next().and_then(|p| p.strip_prefix('b'));
        Some(OwnerId {
            pid,
            process: start.zip(boot),
        })
    }

    /// Its process, when it ran on this machine in this boot.
    fn here(self) -> Option<AgentProcess> {
        let (start, boot) = self.process?;
        (boot_id().as_deref() == Some(boot)).then_some(AgentProcess {
            pid: self.pid,
            start,
        })
    }
}

impl Engine {
    /// Routes as they are at open count as seen: only later changes made
    /// by other processes are published.
    pub(super) fn remember_published(&self) -> Result<(), EngineError> {
        let generations = self.store().generations()?;
        let mut book = self.book();
        book.published.extend(generations.routes);
        book.archived.extend(generations.archived);
        book.seen_change = generations.seen;
        Ok(())
    }

    /// Adopts orphaned routes (if this engine adopts orphans): re-arms their
    /// waits, sends mid-dispatch ones to manual recovery. Reads only active
    /// routes owned by someone else, so finished history costs nothing, and
    /// takes over all orphaned waits in one transaction.
    pub(super) fn reconcile(&self) -> Result<(), EngineError> {
        if !self.inner.opts.adopt_orphans {
            return Ok(());
        }
        self.adopt_orphans().map(drop)
    }

    /// Active routes whose owner is gone (its lease expired, or its process
    /// no longer exists), newest first: what [`Engine::recover_orphans`]
    /// would take over.
    pub fn orphaned_routes(&self) -> Result<Vec<RouteSnapshot>, EngineError> {
        Ok(self.snapshots(&self.orphans()?))
    }

    /// Active routes of other owners whose owner is gone, newest first,
    /// read whole; the others are judged from their owner and lease alone
    /// (every heartbeat does this, so it reads no other row).
    fn orphans(&self) -> Result<Vec<RouteRow>, EngineError> {
        let now = self.inner.clock.now();
        let gone: Vec<u32> = self
            .store()
            .active_owners(Some(&self.inner.instance))?
            .into_iter()
            .filter(|(_, owner, lease)| owner_gone(owner.as_deref(), *lease, now))
            .map(|(id, _, _)| id)
            .collect();
        let mut rows = Vec::with_capacity(gone.len());
        for id in gone {
            // Read again: it may have moved since (another engine adopted
            // it); the judgement is made again on the whole row below.
            rows.extend(self.store().route(id)?);
        }
        Ok(rows)
    }

    /// Takes over every orphaned route now, whatever
    /// `EngineOptions::adopt_orphans` says (`recourse recover`): a route
    /// found `running` goes to manual recovery (never replayed), a wait is
    /// owned and re-armed at its stored deadline and then followed by this
    /// engine. Returns the routes it handled as they were when it took them
    /// (a wait before its timer could fire: later transitions are events),
    /// oldest first.
    pub fn recover_orphans(&self) -> Result<Vec<RouteSnapshot>, EngineError> {
        let mut rows = self.adopt_orphans()?;
        rows.sort_unstable_by_key(|r| r.id);
        Ok(self.snapshots(&rows))
    }

    /// The orphaned routes this pass handled, as committed or taken.
    fn adopt_orphans(&self) -> Result<Vec<RouteRow>, EngineError> {
        let rows = self.orphans()?;
        let now = self.inner.clock.now();
        let mut handled = Vec::new();
        let mut waits = Vec::new();
        for row in rows {
            if !owner_gone(row.owner.as_deref(), row.lease_until, now) {
                continue;
            }
            if row.state == RouteState::Running && !self.kill_orphaned_agent(&row)? {
                // Called interrupted now, a retry could run beside it; the
                // next heartbeat tries again.
                continue;
            }
            match machine::interrupted(&row, Interruption::EngineStopped, now) {
                Some(plan) => match self.commit(plan)? {
                    crate::store::Cas::Won(row) => handled.push(row),
                    crate::store::Cas::Lost(current) | crate::store::Cas::WorldChanged(current) => {
                        tracing::debug!(route = current.id, "another engine adopted it first");
                    }
                },
                None => waits.push(row),
            }
        }
        handled.extend(self.adopt_waits(&waits)?);
        Ok(handled)
    }

    /// An engine that died may leave its agent's tools running (the agent
    /// itself dies with it): the group goes before the attempt is called
    /// interrupted, so a retry can never run beside it. True when nothing of
    /// it remains.
    fn kill_orphaned_agent(&self, row: &RouteRow) -> Result<bool, EngineError> {
        let Some((pid, start)) = self.store().latest_attempt_process(row.id)? else {
            return Ok(true);
        };
        let process = crate::runner::AgentProcess { pid, start };
        let gone = process.kill_and_wait_blocking(super::flow::AGENT_GONE_WITHIN);
        if !gone {
            tracing::warn!(
                route = row.id,
                pid,
                "the orphaned agent's process group survived SIGKILL; the route stays as it is"
            );
        }
        Ok(gone)
    }

    /// Takes over waiting routes still as they were read and re-arms their
    /// stored deadlines (a past one fires at once); queued ones keep their
    /// place and get their turn. Returns the routes taken, as taken.
    fn adopt_waits(&self, waits: &[RouteRow]) -> Result<Vec<RouteRow>, EngineError> {
        if waits.is_empty() {
            return Ok(Vec::new());
        }
        let claims: Vec<Claim<'_>> = waits
            .iter()
            .map(|row| Claim {
                id: row.id,
                expected_generation: row.generation,
                expected_owner: row.owner.as_deref(),
            })
            .collect();
        let lease = self.lease();
        let taken = self
            .store()
            .take_ownerships(&claims, lease.owner, lease.until)?;
        let mut adopted = Vec::new();
        for (row, taken) in waits.iter().zip(taken) {
            if !taken {
                continue;
            }
            match (row.state, row.deadline) {
                (RouteState::Queued, _) => self.kick_release(),
                (_, Some(deadline)) => self.arm(row.id, row.generation, deadline),
                (_, None) => continue,
            }
            adopted.push(machine::taken_over(row.clone(), lease));
        }
        Ok(adopted)
    }

    pub(super) fn spawn_background(&self, mut fired: mpsc::UnboundedReceiver<Fired>) {
        let engine = self.clone();
        let stop = self.inner.stop.clone();
        // Every firing due by the time the last burst committed goes in the
        // next one; off the async workers, as a commit may wait.
        let timers = tokio::spawn(async move {
            let mut due = Vec::new();
            loop {
                tokio::select! {
                    () = stop.cancelled() => return,
                    n = fired.recv_many(&mut due, usize::MAX) => if n == 0 { return },
                }
                let e = engine.clone();
                let batch = std::mem::take(&mut due);
                if let Err(e) = tokio::task::spawn_blocking(move || e.on_timers(&batch)).await {
                    error!("firing due timers failed: {e}");
                }
            }
        });
        let engine = self.clone();
        let stop = self.inner.stop.clone();
        let heartbeat = tokio::spawn(async move {
            let mut tick = tokio::time::interval(SYNC_EVERY);
            let mut beat = Beat {
                last_renew: tokio::time::Instant::now(),
                renew_every: (engine.inner.opts.lease / 3).max(SYNC_EVERY),
                seen_version: None,
            };
            loop {
                tokio::select! {
                    () = stop.cancelled() => return,
                    _ = tick.tick() => {}
                }
                // Off the async workers: it reads and writes the store.
                let e = engine.clone();
                match tokio::task::spawn_blocking(move || {
                    let result = e.heartbeat(&mut beat);
                    (beat, result)
                })
                .await
                {
                    Ok((next, result)) => {
                        beat = next;
                        if let Err(e) = result {
                            error!("heartbeat failed: {e}");
                        }
                    }
                    Err(e) => {
                        error!("heartbeat failed: {e}");
                        return;
                    }
                }
            }
        });
        let retries = tokio::spawn(super::pending::retry_loop(
            self.clone(),
            self.inner.stop.clone(),
        ));
        let releases = tokio::spawn(super::accounts::release_loop(
            self.clone(),
            self.inner.stop.clone(),
        ));
        let mut tasks = self.inner.tasks.lock().unwrap_or_else(|p| p.into_inner());
        tasks.push(timers);
        tasks.push(heartbeat);
        tasks.push(retries);
        tasks.push(releases);
    }

    fn heartbeat(&self, beat: &mut Beat) -> Result<(), EngineError> {
        if beat.last_renew.elapsed() >= beat.renew_every {
            beat.last_renew = tokio::time::Instant::now();
            let lease = self.lease();
            // Each step on its own: a lock that fails one still lets the
            // others try (and held work is never dropped for it).
            let now = self.inner.clock.now();
            if let Err(e) = self.store().renew_leases(lease.owner, lease.until, now) {
                warn!("renewing route leases failed: {e}");
            }
            self.retry_pending();
            if let Err(e) = self.check_overdue() {
                warn!("checking this engine's routes failed: {e}");
            }
            self.reconcile()?;
        }
        let version = self.store().data_version()?;
        if beat.seen_version.is_some_and(|v| v != version) {
            self.sync_external()?;
            // Another process may have freed a slot, or marked, cleared or
            // probed an account.
            self.notice_marks();
            self.kick_release();
        }
        beat.seen_version = Some(version);
        Ok(())
    }

    /// Another process committed: drop timers and kill attempts of routes
    /// this engine no longer owns at the generation it acted on, publish
    /// every route that changed (a new one, a transition, an archive mark)
    /// and the ids of routes deleted. Reads only the routes changed since
    /// the last look.
    fn sync_external(&self) -> Result<(), EngineError> {
        let since = self.book().seen_change;
        let changes = self.store().routes_changed_since(since)?;
        let removed: Vec<u32> = {
            let mut book = self.book();
            changes
                .removed
                .iter()
                .copied()
                .filter(|id| {
                    book.archived.remove(id);
                    book.published.remove(id).is_some()
                })
                .collect()
        };
        if !removed.is_empty() {
            // No subscriber is fine: nobody is watching.
            let _ = self.inner.removals.send(removed);
        }
        for row in &changes.rows {
            let mine = row.owner.as_deref() == Some(self.inner.instance.as_str());
            let (armed_at, published, archived) = {
                let book = self.book();
                (
                    book.armed.get(&row.id).copied(),
                    book.published.get(&row.id).copied(),
                    book.archived.contains(&row.id),
                )
            };
            if armed_at.is_some_and(|g| g != row.generation || !mine) {
                self.disarm(row.id);
            }
            if self
                .run_at(row.id)
                .is_some_and(|g| g != row.generation || !mine)
            {
                self.kill(row.id);
            }
            if published != Some(row.generation) || archived != row.archived_at.is_some() {
                self.publish(row);
            }
        }
        self.book().seen_change = changes.seen;
        Ok(())
    }

    /// Kills and reaps every agent process, stops timers, and hands this
    /// instance's waiting routes over to whoever opens the database next.
    pub async fn shutdown(&self) {
        self.inner
            .shutting_down
            .store(true, std::sync::atomic::Ordering::SeqCst);
        let runs: Vec<RunHandle> = self.book().runs.drain().map(|(_, r)| r).collect();
        for run in &runs {
            run.cancel.cancel();
        }
        for run in runs {
            if let Err(e) = run.task.await {
                error!("attempt task failed during shutdown: {e}");
            }
        }
        self.inner.stop.cancel();
        let tasks: Vec<_> = self
            .inner
            .tasks
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .drain(..)
            .collect();
        for t in tasks {
            if let Err(e) = t.await {
                error!("engine task failed during shutdown: {e}");
            }
        }
        if let Err(e) = self.store().release_ownership(&self.inner.instance) {
            error!("releasing route leases failed: {e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_live_owner_here_is_not_gone_whatever_its_lease() {
        let now = Utc::now();
        let lapsed = Some(now - chrono::Duration::seconds(60));
        let me = instance_id();
        assert!(
            OwnerId::parse(&me).and_then(OwnerId::here).is_some(),
            "this machine's ids name their process: {me}"
        );
        assert!(
            !owner_gone(Some(&me), lapsed, now),
            "a lapsed lease is not proof of death: the owner's process lives"
        );
        assert!(owner_gone(None, None, now), "no owner");
    }

    #[test]
    fn a_dead_owner_here_is_gone_within_its_lease() {
        let now = Utc::now();
        let later = Some(now + chrono::Duration::seconds(10));
        let me = instance_id();
        // This process's id with another start time: a pid reused by a
        // stranger, so the owner that had it is gone.
        let (head, boot) = me.rsplit_once("-b").unwrap();
        let (head, _) = head.rsplit_once("-s").unwrap();
        let reused = format!("{head}-s1-b{boot}");
        assert!(owner_gone(Some(&reused), later, now));
    }

    #[test]
    fn an_owner_from_elsewhere_or_before_goes_with_its_lease() {
        let now = Utc::now();
        let later = Some(now + chrono::Duration::seconds(10));
        let lapsed = Some(now - chrono::Duration::seconds(1));
        let mine = format!("pid{}-1", std::process::id());
        let other_boot = format!("pid{}-1-s5-bdeadbeef", std::process::id());
        for owner in [&mine, &other_boot] {
            assert!(
                !owner_gone(Some(owner), later, now),
                "{owner}: within its lease"
            );
            assert!(
                owner_gone(Some(owner), lapsed, now),
                "{owner}: lease lapsed"
            );
        }
        if std::path::Path::new("/proc/self").exists() {
            assert!(
                owner_gone(Some("pid4294967-1"), later, now),
                "a pid that does not exist is gone even within its lease"
            );
        }
    }
}
