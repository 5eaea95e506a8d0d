//! The route engine: the single transition owner of every route, and the
//! public API the desktop shell and the CLI call.
//!
//! Every change to a route — a timer firing, a manual action, an agent
//! report — is planned by the pure state machine in [`crate::route`],
//! committed as one compare-and-set in the [`crate::store`], and only then
//! followed by its effect (launch an attempt, arm a timer, kill a process).
//! Ownership of timers and processes across processes sharing one database
//! is a lease per route; see `docs/engine.md`.
//!
//! By what each owns: this file the handle and its shared state; [`book`]
//! what this engine has in flight (runs, armed timers, held work); `flow`
//! routes started, acted on and reported; `pending` work held until it
//! commits; `ownership` leases, adoption and shutdown; `profiles` and
//! `catalogue` the API over profiles and the catalogue in force; [`views`]
//! every projection the API hands out. Lock order: `docs/architecture.md`.

mod account_names;
mod account_views;
mod accounts;
mod book;
mod burst;
mod catalogue;
mod continuation;
mod detail;
mod dispatch_env;
mod error;
mod failures;
mod flow;
mod housekeeping;
pub mod overlay;
mod ownership;
mod paths;
mod pause;
mod pending;
mod profile_files;
mod profiles;
mod publish;
mod saved;
mod secrets;
mod seed;
mod timeline;
mod types;
mod viewer;
mod views;

use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::broadcast;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::agent::AgentKind;
use crate::clock::Clock;
use crate::route::machine::{Lease, World};
use crate::scheduler::Scheduler;
use crate::store::Store;

pub use crate::runner::readiness::{CredentialPlace, Readiness};
pub use account_views::{
    AccountCandidateView, AccountNotice, AccountStatus, AccountView, AccountsOverview, HourBar,
    MarkView, MAX_RUNNING,
};
pub use catalogue::{
    CatalogueState, FixtureExport, PlaygroundInput, PlaygroundResult, TextPreview,
};
pub use continuation::{ContinuationPreview, ContinueOffer, HandoverOffer};
pub use detail::*;
pub use error::{EngineError, ErrorCode};
pub use housekeeping::{inspect_workdir, AT_REST};
pub use paths::default_db_path;
pub use profile_files::{
    preview_import, read_document, read_document_file, write_document_file, ExistingProfile,
    ImportPreview, ImportTarget,
};
pub use profiles::readiness;
pub use secrets::{secret_places, SecretEnv, SecretPlace};
pub use seed::DEMO_PROFILE;
pub use types::*;
pub use viewer::{RouteViewer, UnreadableRoute};

/// Whether a database file is at a path (an unreadable path is an error).
pub use crate::store::database_exists;
/// Private folders and files (0700, 0600), for the shell's logs, settings
/// and exports.
pub use crate::store::files;

/// Whether log lines on standard error may carry ANSI colours: only when it
/// is a terminal and `NO_COLOR` is not set. Redirected to a file (`2> log`,
/// a service manager's journal) they would land there as escape codes.
pub fn stderr_log_colours() -> bool {
    use std::io::IsTerminal;
    std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// Handle to a running engine; cheap to clone, shareable across threads.
#[derive(Clone)]
pub struct Engine {
    inner: Arc<Inner>,
}

struct Inner {
    store: Mutex<Store>,
    /// A second connection, read-only, for the route list and its counts:
    /// WAL lets it read beside the writer, so the window's list answers
    /// while the store is held for a commit or a burst of adoptions.
    lists: Mutex<Store>,
    /// The catalogue in force: built-in plus the local overlay.
    overlay: Mutex<overlay::Overlay>,
    /// What this engine has in flight.
    book: Mutex<book::Book>,
    /// This engine instance's owner id in route leases.
    instance: String,
    opts: EngineOptions,
    clock: Clock,
    events: broadcast::Sender<RouteEvent>,
    /// One notice per new limit mark.
    notices: broadcast::Sender<AccountNotice>,
    /// Routes another process deleted, as this engine noticed them.
    removals: broadcast::Sender<Vec<u32>>,
    scheduler: Scheduler,
    /// Wakes the task that retries held work.
    retry_wake: tokio::sync::Notify,
    /// Wakes the task that gives queued routes their turn.
    release_wake: tokio::sync::Notify,
    /// Set when `shutdown` starts: its attempts are being killed and
    /// recorded, so the heartbeat leaves them alone.
    shutting_down: std::sync::atomic::AtomicBool,
    /// New dispatches are paused (see [`Engine::set_paused`]).
    paused: std::sync::atomic::AtomicBool,
    stop: CancellationToken,
    tasks: Mutex<Vec<JoinHandle<()>>>,
}

impl Engine {
    /// Opens and migrates the database, seeds the demo profile on first
    /// start, reconciles routes left by a previous run, and arms timers.
    /// Needs a tokio runtime.
    pub async fn open(db_path: &Path, opts: EngineOptions) -> Result<Engine, EngineError> {
        let store = Store::open(db_path)?;
        // Opened after the check and migrations above, of the same file.
        let lists = Store::open_read_only_unchecked(db_path)?;
        let stop = CancellationToken::new();
        let (scheduler, fired, timer_task) = Scheduler::start(stop.child_token());
        let (events, _) = broadcast::channel(1024);
        let (notices, _) = broadcast::channel(64);
        let (removals, _) = broadcast::channel(64);
        let engine = Engine {
            inner: Arc::new(Inner {
                store: Mutex::new(store),
                lists: Mutex::new(lists),
                overlay: Mutex::new(overlay::Overlay::open(overlay::overlay_dir(db_path))),
                book: Mutex::new(book::Book::default()),
                instance: ownership::instance_id(),
                opts,
                clock: Clock::start(),
                events,
                notices,
                removals,
                scheduler,
                retry_wake: tokio::sync::Notify::new(),
                release_wake: tokio::sync::Notify::new(),
                shutting_down: std::sync::atomic::AtomicBool::new(false),
                paused: std::sync::atomic::AtomicBool::new(false),
                stop,
                tasks: Mutex::new(vec![timer_task]),
            }),
        };
        // Routes are read before anything is written, so a damaged file is
        // refused untouched.
        let opening = |e: EngineError| e.opening(db_path);
        engine.remember_published().map_err(opening)?;
        engine.remember_marks().map_err(opening)?;
        // Before any secret leaves the file for the keyring: read there.
        engine.derive_missing_accounts().map_err(opening)?;
        if engine.inner.opts.seed_demo {
            engine.seed_demo().map_err(opening)?;
        }
        engine.reconcile().map_err(opening)?;
        engine.move_secrets_to_keyring().map_err(opening)?;
        engine.spawn_background(fired);
        // Queued routes it took over, or left by its last run, get their turn.
        engine.kick_release();
        Ok(engine)
    }

    /// This instance's owner id, as it appears in route leases.
    pub fn instance(&self) -> &str {
        &self.inner.instance
    }

    pub fn subscribe(&self) -> broadcast::Receiver<RouteEvent> {
        self.inner.events.subscribe()
    }

    /// The ids of routes another process deleted (`recourse routes delete`,
    /// its retention), a batch per look at the database: a window drops
    /// them from its lists without a reload.
    pub fn subscribe_removals(&self) -> broadcast::Receiver<Vec<u32>> {
        self.inner.removals.subscribe()
    }

    /// Every agent kind, as the editor's picker and the CLI show it.
    pub fn agent_kinds(&self) -> Vec<AgentKindInfo> {
        AgentKind::ALL.into_iter().map(AgentKindInfo::of).collect()
    }

    /// One page of the route list (see [`views::route_page`]), read beside
    /// the engine's writes rather than after them.
    pub fn list_routes(&self, query: &RouteQuery) -> Result<RoutePage, EngineError> {
        views::route_page(&self.lists(), query)
    }

    /// How many routes each list filter holds, from an index; read beside
    /// the engine's writes.
    pub fn route_counts(&self) -> Result<RouteCounts, EngineError> {
        views::route_counts(&self.lists())
    }

    pub fn route_detail(&self, id: u32) -> Result<RouteDetail, EngineError> {
        views::route_detail(&self.store(), id)
    }

    /// Attempt `attempt` of route `route_id`, whole: its stored transcript,
    /// or, while this engine runs it, what its agent has said and done so
    /// far.
    pub fn attempt_transcript(
        &self,
        route_id: u32,
        attempt: u32,
    ) -> Result<AttemptTranscript, EngineError> {
        // Bound first: the store's guard must be gone before the fallback
        // reads the route through the same lock.
        let stored = views::attempt_transcript(&self.store(), route_id, attempt);
        stored.or_else(|e| {
            let running = self.route_row(route_id)?.attempts == attempt;
            match self.live_transcript(route_id).filter(|_| running) {
                Some(transcript) => Ok(AttemptTranscript {
                    route_id,
                    attempt,
                    transcript,
                    files: None,
                }),
                None => Err(e),
            }
        })
    }

    fn store(&self) -> MutexGuard<'_, Store> {
        // A panic while holding the lock leaves SQLite consistent (the
        // transaction rolls back), so a poisoned lock is still usable.
        self.inner.store.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The read-only connection of the route list; never held with another lock.
    fn lists(&self) -> MutexGuard<'_, Store> {
        self.inner.lists.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The lease a transition this engine commits now takes: the one
    /// place its length is read.
    fn lease(&self) -> Lease<'_> {
        let length = chrono::Duration::from_std(self.inner.opts.lease).unwrap_or_default();
        Lease {
            owner: &self.inner.instance,
            until: self.inner.clock.now() + length,
        }
    }

    /// The world beyond the route without its accounts: what a refusal
    /// depends on (a dispatch plans in [`Engine::advance`]'s world).
    fn world(&self) -> World<'static> {
        World {
            paused: self.is_paused(),
            ..World::default()
        }
    }

    /// `shutdown` has started: its attempts are being stopped.
    fn is_shutting_down(&self) -> bool {
        self.inner
            .shutting_down
            .load(std::sync::atomic::Ordering::SeqCst)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::agent::{AgentSpec, SimStep};
    use crate::policy::{CandidatePolicy, ClassPolicy, Exhausted};
    use crate::profile::CandidateInput;

    /// The window's list and its counts answer while the engine holds its
    /// store, as it does through a commit or a burst of adoptions at start,
    /// and show what was committed before.
    #[tokio::test]
    async fn the_route_list_answers_while_the_store_is_held() {
        let dir = tempfile::tempdir().unwrap();
        let opts = EngineOptions {
            seed_demo: false,
            ..EngineOptions::default()
        };
        let engine = Engine::open(&dir.path().join("r.db"), opts).await.unwrap();
        let p = engine.create_profile("p").unwrap();
        let agent = AgentSpec::simulated(vec![SimStep::Succeed { after_ms: 60_000 }]);
        let policy = CandidatePolicy::both(ClassPolicy::new(None, None, Exhausted::Stop));
        let p = engine
            .save_candidates(
                p.id,
                p.revision,
                vec![CandidateInput::new("c", agent, policy)],
            )
            .unwrap();
        let run = StartRun {
            profile_id: p.id,
            prompt: "go".into(),
            cwd: None,
        };
        let id = engine.start_run(run).await.unwrap().id;

        let held = engine.store();
        let (tx, rx) = std::sync::mpsc::channel();
        let reader = engine.clone();
        let listing = std::thread::spawn(move || {
            let page = reader.list_routes(&RouteQuery::all(10));
            let counts = reader.route_counts();
            let _ = tx.send((page, counts));
        });
        // Not a speed limit: without its own connection the list waits for
        // the store until it is let go, which here is after this wait.
        let answered = rx.recv_timeout(Duration::from_secs(20));
        drop(held);
        listing.join().unwrap();
        let (page, counts) = answered.expect("the list waited for the engine's store");
        let listed: Vec<u32> = page.unwrap().routes.iter().map(|r| r.id).collect();
        assert_eq!(listed, vec![id], "the committed route is listed");
        assert_eq!(counts.unwrap().all, 1, "and counted");
        engine.shutdown().await;
    }
}
