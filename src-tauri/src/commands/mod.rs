//! The `#[tauri::command]` adapters, one module per area: profiles (with
//! their live checks and previews), routes, accounts, the catalogue, and
//! profiles as files. Each calls the engine (or a pure library function) once and maps
//! its error to [`IpcError`].
//!
//! One style: every command is `async` (Tauri runs a synchronous one on the
//! main thread, where a slow read would freeze the window); engine work that
//! reads or writes the database goes through [`AppState::run`] on the
//! blocking pool; the engine's two async calls (start a run, act on a
//! route) are awaited; pure functions are called directly.

pub mod accounts;
pub mod catalogue;
pub mod profile_files;
pub mod profiles;
pub mod routes;

use serde::Serialize;
use tauri::State;

use crate::error::IpcError;
use crate::AppState;

pub type Reply<T> = Result<T, IpcError>;

#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct AppInfo {
    pub version: String,
    pub db_path: String,
    pub log_dir: String,
}

#[tauri::command]
#[specta::specta]
pub async fn app_info(state: State<'_, AppState>) -> Reply<AppInfo> {
    Ok(AppInfo {
        version: env!("CARGO_PKG_VERSION").to_string(),
        db_path: state.db_path.display().to_string(),
        log_dir: state.log_dir.display().to_string(),
    })
}
