//! The window first, the engine behind it: `Engine::open` checks the whole
//! database file and adopts every active route, which takes seconds on a
//! large one, so it runs behind the window. Commands await the engine
//! through [`EngineCell::get`]; until it is open, the route list is read
//! from a read-only connection that skips the check, and the UI says the
//! engine is still starting ([`EngineStatus`]). The open waits for that
//! first list ([`EngineOpening::after_first_list`]): its check reads the
//! whole file, which on 2 cores took the CPU the window's first page needed.

use recourse::engine::{Engine, RoutePage, RouteQuery, RouteViewer};
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use tokio::sync::{watch, Notify};

use crate::error::{ErrorCode, IpcError};

/// Where the engine stands; emitted when it is open or has failed to open.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type, tauri_specta::Event)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum EngineStatus {
    /// Checking the database and taking over its routes.
    Starting,
    Ready,
    /// The database could not be opened (damaged, newer, locked…); every
    /// command that needs the engine fails with this message.
    Failed {
        message: String,
    },
}

type Opened = Option<Result<Engine, IpcError>>;

/// The engine, once open, for every command to await.
pub struct EngineCell {
    opened: watch::Receiver<Opened>,
    /// Told when the first route list was asked for before the engine opened.
    first_list: Arc<Notify>,
}

/// The one side that fills an [`EngineCell`].
pub struct EngineOpening {
    opened: watch::Sender<Opened>,
    first_list: Arc<Notify>,
}

impl EngineCell {
    /// A cell that is filled when the returned [`EngineOpening`] finishes.
    pub fn opening() -> (EngineCell, EngineOpening) {
        let (tx, rx) = watch::channel(None);
        let first_list = Arc::new(Notify::new());
        (
            EngineCell {
                opened: rx,
                first_list: first_list.clone(),
            },
            EngineOpening {
                opened: tx,
                first_list,
            },
        )
    }

    /// A cell holding an engine already open.
    pub fn ready(engine: Engine) -> EngineCell {
        EngineCell {
            opened: watch::channel(Some(Ok(engine))).1,
            first_list: Arc::new(Notify::new()),
        }
    }

    /// The engine, waiting for it to open; its open error if it failed.
    pub async fn get(&self) -> Result<Engine, IpcError> {
        let mut rx = self.opened.clone();
        let opened = match rx.wait_for(Option::is_some).await {
            Ok(opened) => opened.clone(),
            Err(_) => None,
        };
        opened.unwrap_or_else(|| Err(never_opened()))
    }

    /// The engine if it is open now, for what cannot wait (quitting, the tray).
    pub fn now(&self) -> Option<Engine> {
        self.opened
            .borrow()
            .as_ref()
            .and_then(|o| o.as_ref().ok())
            .cloned()
    }

    pub fn status(&self) -> EngineStatus {
        match self.opened.borrow().as_ref() {
            None => EngineStatus::Starting,
            Some(Ok(_)) => EngineStatus::Ready,
            Some(Err(err)) => EngineStatus::Failed {
                message: err.message.clone(),
            },
        }
    }
}

impl EngineOpening {
    /// Waits until the window has had its first route list from the file
    /// (or learned it must wait for the engine), at most `at_most` (a
    /// window that asks for none, hidden at login, does not hold the engine
    /// back). True when the list came first.
    pub async fn after_first_list(&self, at_most: Duration) -> bool {
        tokio::time::timeout(at_most, self.first_list.notified())
            .await
            .is_ok()
    }

    /// Hands every waiting command the engine or the error it failed with.
    pub fn finish(self, opened: Result<Engine, IpcError>) {
        // No receiver left means the app is gone; nothing waits.
        let _ = self.opened.send(Some(opened));
    }
}

/// The task opening the engine ended without a result (it panicked).
fn never_opened() -> IpcError {
    IpcError {
        code: ErrorCode::Store,
        message: "the engine stopped while opening the database; see the log".to_string(),
        fields: Vec::new(),
    }
}

/// Lowers the calling thread's scheduling priority (nice 10; on Linux a
/// thread's own): the engine's open, at start, reads the whole database
/// file, and a profile at 100 000 routes had it take most of a core while
/// WebKit painted the first list (rasterizing it took another). Its
/// thread ends once the engine is open and wired in, so nothing else runs
/// at this priority.
pub fn behind_the_window() {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: setpriority reads its three integers only; on Linux `0`
        // with PRIO_PROCESS names the calling thread alone.
        #[allow(unsafe_code)]
        let rc = unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, BEHIND) };
        if rc != 0 {
            tracing::debug!(err = %std::io::Error::last_os_error(), "the engine opens at normal priority");
        }
    }
}

/// The nice value of [`behind_the_window`].
#[cfg(target_os = "linux")]
const BEHIND: i32 = 10;

/// A page of routes: the engine's once it is open; before that, the same
/// query on a read-only connection to the file. A file the glance cannot
/// read (none yet, an older schema) waits for the engine instead. Both on
/// the blocking pool: a page read must not hold one of the async workers
/// the window's other requests are served on.
pub async fn route_page(
    cell: &EngineCell,
    db_path: &std::path::Path,
    query: &RouteQuery,
) -> Result<RoutePage, IpcError> {
    if cell.status() == EngineStatus::Starting {
        let (path, q) = (db_path.to_path_buf(), query.clone());
        let glance = blocking(move || match RouteViewer::open_unchecked(&path) {
            Ok(viewer) => Ok(Some(viewer.list_routes_page(&q)?)),
            Err(err) => {
                tracing::debug!(%err, "no route list before the engine is open");
                Ok(None)
            }
        })
        .await;
        // Served or not, the engine's open may start now.
        cell.first_list.notify_one();
        if let Some(page) = glance? {
            return Ok(page);
        }
    }
    let (engine, q) = (cell.get().await?, query.clone());
    blocking(move || Ok(engine.list_routes(&q)?)).await
}

/// Runs `work` on the blocking pool.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, IpcError> + Send + 'static,
) -> Result<T, IpcError> {
    tauri::async_runtime::spawn_blocking(work)
        .await
        .map_err(|e| IpcError::io(&e))?
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    /// This thread's nice value.
    fn nice() -> i32 {
        // SAFETY: getpriority reads its two integers only; `0` names the calling thread.
        #[allow(unsafe_code)]
        unsafe {
            libc::getpriority(libc::PRIO_PROCESS, 0)
        }
    }

    #[test]
    fn the_engine_opens_at_a_lower_priority_than_the_rest_of_the_app() {
        let before = nice();
        let opener = std::thread::spawn(|| {
            super::behind_the_window();
            nice()
        })
        .join()
        .unwrap();
        assert_eq!(
            opener,
            (before + super::BEHIND).min(19),
            "the opening thread yields to the window"
        );
        assert_eq!(nice(), before, "the other threads keep their priority");
    }
}
