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

use super::Reply;
use crate::error::IpcError;
use crate::AppState;

/// Writes profile `id`'s document to `path` (replacing the file there).
#[tauri::command]
#[specta::specta]
pub async fn export_profile(state: State<'_, AppState>, id: u32, path: String) -> Reply<()> {
    let database = state.db_path.clone();
    state
        .run(move |engine| {
            let doc = engine.export_profile(id)?;
            Ok(write_document_file(
                Path::new(&path),
                &database,
                &doc.to_json_pretty(),
            )?)
        })
        .await
}

/// Reads the document at `path` and says what importing it would change;
/// nothing is written. A refusal names each problem in words, as a refused
/// save does and as `recourse profile import` prints it.
#[tauri::command]
#[specta::specta]
pub async fn preview_profile_file(
    state: State<'_, AppState>,
    path: String,
) -> Reply<ImportPreview> {
    let database = state.db_path.clone();
    state
        .run(move |engine| {
            let text = read_document_file(Path::new(&path), &database)?;
            let names = recourse::profile::words::candidate_names(&text);
            engine
                .preview_import(&text)
                .map_err(|e| IpcError::from(e).in_words(&names))
        })
        .await
}

/// Saves a previewed document: a new profile, over `replace` if that
/// profile is still at the revision the preview saw, or, with `copy_as`, as
/// a new profile of that name beside the one of the document's name.
#[tauri::command]
#[specta::specta]
pub async fn import_profile(
    state: State<'_, AppState>,
    document_json: String,
    replace: Option<ExistingProfile>,
    copy_as: Option<String>,
) -> Reply<Profile> {
    let names = recourse::profile::words::candidate_names(&document_json);
    let loaded = read_document(&document_json).map_err(|e| IpcError::from(e).in_words(&names))?;
    let names: Vec<String> = loaded
        .document
        .candidates
        .iter()
        .map(|c| c.name.clone())
        .collect();
    if let Some(name) = copy_as {
        return state
            .run(move |engine| Ok(engine.import_as_copy(&loaded.document, &name)?))
            .await
            .map_err(|e| e.in_words(&names));
    }
    let target = match replace {
        Some(existing) => ImportTarget::Replace {
            id: existing.id,
            expected_revision: existing.revision,
        },
        None => ImportTarget::New,
    };
    state
        .run(move |engine| Ok(engine.import_profile(&loaded.document, target)?))
        .await
        .map_err(|e| e.in_words(&names))
}

/// A copy of profile `id` named `name`.
#[tauri::command]
#[specta::specta]
pub async fn duplicate_profile(
    state: State<'_, AppState>,
    id: u32,
    name: String,
) -> Reply<Profile> {
    state
        .run(move |engine| Ok(engine.duplicate_profile(id, &name)?))
        .await
}
