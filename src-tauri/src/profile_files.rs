//! Profiles as files in the app: export to a path the person picked in the
//! native save dialog, preview what importing a file would change, import
//! it, and duplicate a profile. Thin adapters over the engine, which reads
//! and writes the same documents as `recourse profile`.

use std::path::Path;

use recourse::engine::{
    read_document, read_document_file, write_document_file, ExistingProfile, ImportPreview,
    ImportTarget,
};
use recourse::profile::Profile;
use tauri::State;

use crate::error::IpcError;
use crate::AppState;

type Reply<T> = Result<T, IpcError>;

/// Writes profile `id`'s document to `path` (replacing the file there).
#[tauri::command]
#[specta::specta]
pub async fn export_profile(state: State<'_, AppState>, id: u32, path: String) -> Reply<()> {
    let doc = state.engine().await?.export_profile(id)?;
    write_document_file(Path::new(&path), &doc.to_json_pretty())?;
    Ok(())
}

/// Reads the document at `path` and says what importing it would change;
/// nothing is written.
#[tauri::command]
#[specta::specta]
pub async fn preview_profile_file(
    state: State<'_, AppState>,
    path: String,
) -> Reply<ImportPreview> {
    let text = read_document_file(Path::new(&path))?;
    Ok(state.engine().await?.preview_import(&text)?)
}

/// Saves a previewed document: a new profile, or over `replace` if that
/// profile is still at the revision the preview saw.
#[tauri::command]
#[specta::specta]
pub async fn import_profile(
    state: State<'_, AppState>,
    document_json: String,
    replace: Option<ExistingProfile>,
) -> Reply<Profile> {
    let loaded = read_document(&document_json)?;
    let target = match replace {
        Some(existing) => ImportTarget::Replace {
            id: existing.id,
            expected_revision: existing.revision,
        },
        None => ImportTarget::New,
    };
    Ok(state
        .engine()
        .await?
        .import_profile(&loaded.document, target)?)
}

/// A copy of profile `id` named `name`.
#[tauri::command]
#[specta::specta]
pub async fn duplicate_profile(
    state: State<'_, AppState>,
    id: u32,
    name: String,
) -> Reply<Profile> {
    Ok(state.engine().await?.duplicate_profile(id, &name)?)
}
