//! The app's housekeeping: retention applied when the engine opens, every
//! few hours while it runs and when the setting changes; and opening the
//! folders that hold the database and the logs in the file manager.

use std::path::PathBuf;
use std::time::Duration;

use recourse::engine::Retention;
use serde::{Deserialize, Serialize};
use tauri::{AppHandle, Manager, State};

use crate::background::Background;
use crate::error::IpcError;
use crate::AppState;

/// How often retention runs while the app is open.
const EVERY: Duration = Duration::from_secs(6 * 3600);

/// Applies the retention setting now and then every [`EVERY`], for as long
/// as the app runs (the task ends with the runtime).
pub fn start(app: &AppHandle) {
    let app = app.clone();
    tauri::async_runtime::spawn(async move {
        loop {
            let retention = app.state::<Background>().settings().retention;
            prune_now(app.state::<AppState>().inner(), retention).await;
            tokio::time::sleep(EVERY).await;
        }
    });
}

/// Applies `retention` once; what it removed, or why it could not, goes to
/// the log.
pub async fn prune_now(state: &AppState, retention: Retention) {
    if retention == Retention::default() {
        return;
    }
    match state.run(move |engine| Ok(engine.prune(retention)?)).await {
        Ok(pruned) if pruned.detail_rows + pruned.routes_deleted > 0 => tracing::info!(
            routes = pruned.routes_deleted,
            details = pruned.detail_rows,
            "retention removed old routes and attempt details"
        ),
        Ok(_) => {}
        Err(err) => tracing::warn!(error = %err.message, "retention could not run"),
    }
}

/// A folder Recourse keeps its files in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum Folder {
    /// Where the database (and the local catalogue beside it) is.
    Database,
    /// Where the daily log files are.
    Logs,
}

impl Folder {
    fn path(self, state: &AppState) -> PathBuf {
        match self {
            Folder::Database => state
                .db_path
                .parent()
                .map_or_else(|| PathBuf::from("."), PathBuf::from),
            Folder::Logs => state.log_dir.clone(),
        }
    }
}

/// Opens one of Recourse's own folders in the desktop's file manager
/// (`xdg-open`); only these two, never a path from the window.
#[tauri::command]
#[specta::specta]
pub async fn open_folder(state: State<'_, AppState>, folder: Folder) -> Result<(), IpcError> {
    let path = folder.path(state.inner());
    std::process::Command::new("xdg-open")
        .arg(&path)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map(|mut child| {
            // Reaped when the file manager has been asked, so no zombie stays.
            std::thread::spawn(move || child.wait());
        })
        .map_err(|e| {
            IpcError::io(&format!(
                "cannot open {} (xdg-open: {e}); open it yourself",
                path.display()
            ))
        })
}
