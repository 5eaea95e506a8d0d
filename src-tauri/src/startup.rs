//! The window first, the engine behind it: `Engine::open` checks the whole
//! database file and adopts every active route, which takes seconds on a
//! large one, so it runs behind the window. Commands await the engine
//! through [`EngineCell::get`]; until it is open, the route list is read
//! from a read-only connection that skips the check, and the UI says the
//! engine is still starting ([`EngineStatus`]).

use recourse::engine::{Engine, RoutePage, RouteQuery, RouteViewer};
use serde::Serialize;
use tokio::sync::watch;

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
pub struct EngineCell(watch::Receiver<Opened>);

/// The one side that fills an [`EngineCell`].
pub struct EngineOpening(watch::Sender<Opened>);

impl EngineCell {
    /// A cell that is filled when the returned [`EngineOpening`] finishes.
    pub fn opening() -> (EngineCell, EngineOpening) {
        let (tx, rx) = watch::channel(None);
        (EngineCell(rx), EngineOpening(tx))
    }

    /// A cell holding an engine already open.
    pub fn ready(engine: Engine) -> EngineCell {
        EngineCell(watch::channel(Some(Ok(engine))).1)
    }

    /// The engine, waiting for it to open; its open error if it failed.
    pub async fn get(&self) -> Result<Engine, IpcError> {
        let mut rx = self.0.clone();
        let opened = match rx.wait_for(Option::is_some).await {
            Ok(opened) => opened.clone(),
            Err(_) => None,
        };
        opened.unwrap_or_else(|| Err(never_opened()))
    }

    /// The engine if it is open now, for what cannot wait (quitting, the tray).
    pub fn now(&self) -> Option<Engine> {
        self.0
            .borrow()
            .as_ref()
            .and_then(|o| o.as_ref().ok())
            .cloned()
    }

    pub fn status(&self) -> EngineStatus {
        match self.0.borrow().as_ref() {
            None => EngineStatus::Starting,
            Some(Ok(_)) => EngineStatus::Ready,
            Some(Err(err)) => EngineStatus::Failed {
                message: err.message.clone(),
            },
        }
    }
}

impl EngineOpening {
    /// Hands every waiting command the engine or the error it failed with.
    pub fn finish(self, opened: Result<Engine, IpcError>) {
        // No receiver left means the app is gone; nothing waits.
        let _ = self.0.send(Some(opened));
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

/// A page of routes: the engine's once it is open; before that, the same
/// query on a read-only connection to the file. A file the glance cannot
/// read (none yet, an older schema) waits for the engine instead.
pub async fn route_page(
    cell: &EngineCell,
    db_path: &std::path::Path,
    query: &RouteQuery,
) -> Result<RoutePage, IpcError> {
    if cell.status() == EngineStatus::Starting {
        match RouteViewer::open_unchecked(db_path) {
            Ok(viewer) => return Ok(viewer.list_routes_page(query)?),
            Err(err) => tracing::debug!(%err, "no route list before the engine is open"),
        }
    }
    Ok(cell.get().await?.list_routes(query)?)
}
