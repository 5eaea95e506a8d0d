//! Thin `#[tauri::command]` adapters: each one calls the engine once and maps
//! its error to [`IpcError`].

use serde::Serialize;
use tauri::State;

use crate::error::IpcError;
use crate::AppState;

#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct AppInfo {
    pub version: String,
    pub db_path: String,
    pub log_dir: String,
}

#[tauri::command]
#[specta::specta]
pub fn app_info(state: State<'_, AppState>) -> Result<AppInfo, IpcError> {
    Ok(AppInfo {
        version: env!("CARGO_PKG_VERSION").to_string(),
        db_path: state.db_path.display().to_string(),
        log_dir: state.log_dir.display().to_string(),
    })
}
