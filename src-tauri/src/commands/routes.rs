//! Routes: start one, page through the list and its counts, read one with
//! its attempts, act on one, archive or delete ones at rest, and check a
//! working directory before a run.

use recourse::engine::{
    ActionRequest, AttemptTranscript, ContinuationPreview, RouteCounts, RouteDetail, RoutePage,
    RouteQuery, RouteSnapshot, StartRun, WorkdirCheck,
};
use tauri::State;

use super::Reply;
use crate::{AppState, EngineStatus};

#[tauri::command]
#[specta::specta]
pub async fn start_run(state: State<'_, AppState>, request: StartRun) -> Reply<RouteSnapshot> {
    Ok(state.engine().await?.start_run(request).await?)
}

/// One page of the list; painted from the file before the engine is open.
#[tauri::command]
#[specta::specta]
pub async fn list_routes(state: State<'_, AppState>, query: RouteQuery) -> Reply<RoutePage> {
    state.route_page(&query).await
}

/// How many routes each list filter holds.
#[tauri::command]
#[specta::specta]
pub async fn route_counts(state: State<'_, AppState>) -> Reply<RouteCounts> {
    state.run(|engine| Ok(engine.route_counts()?)).await
}

/// Whether the engine is still starting, ready, or failed to open; the
/// [`EngineStatus`] event says when that changes.
#[tauri::command]
#[specta::specta]
pub async fn engine_status(state: State<'_, AppState>) -> Reply<EngineStatus> {
    Ok(state.engine_status())
}

#[tauri::command]
#[specta::specta]
pub async fn route_detail(state: State<'_, AppState>, id: u32) -> Reply<RouteDetail> {
    state.run(move |engine| Ok(engine.route_detail(id)?)).await
}

/// One attempt's whole transcript and changed files; while this engine
/// runs the attempt, what its agent has said and done so far.
#[tauri::command]
#[specta::specta]
pub async fn attempt_transcript(
    state: State<'_, AppState>,
    route_id: u32,
    attempt: u32,
) -> Reply<AttemptTranscript> {
    state
        .run(move |engine| Ok(engine.attempt_transcript(route_id, attempt)?))
        .await
}

/// A manual action fenced by the generation the person saw, recorded as
/// the app's; a stale one is refused with code `stale` and the UI reloads
/// the route.
#[tauri::command]
#[specta::specta]
pub async fn route_action(
    state: State<'_, AppState>,
    request: ActionRequest,
) -> Reply<RouteSnapshot> {
    Ok(state
        .engine()
        .await?
        .act(request, recourse::route::Actor::App)
        .await?)
}

/// What Continue would resume and Hand over would send (its package), or
/// why each cannot: shown before either is sent.
#[tauri::command]
#[specta::specta]
pub async fn continuation_preview(
    state: State<'_, AppState>,
    route_id: u32,
) -> Reply<ContinuationPreview> {
    state
        .run(move |engine| Ok(engine.continuation_preview(route_id)?))
        .await
}

/// Archives a route at rest (`archived = false` brings it back).
#[tauri::command]
#[specta::specta]
pub async fn archive_route(
    state: State<'_, AppState>,
    id: u32,
    archived: bool,
) -> Reply<RouteSnapshot> {
    state
        .run(move |engine| Ok(engine.archive_route(id, archived)?))
        .await
}

/// Deletes routes at rest with their whole history; the ids deleted.
#[tauri::command]
#[specta::specta]
pub async fn delete_routes(state: State<'_, AppState>, ids: Vec<u32>) -> Reply<Vec<u32>> {
    state
        .run(move |engine| Ok(engine.delete_routes(&ids)?))
        .await
}

/// Where a run with this working directory would run, and what to know
/// first (not a directory: refused; not a git repository: a warning).
#[tauri::command]
#[specta::specta]
pub async fn inspect_workdir(path: Option<String>) -> Reply<WorkdirCheck> {
    tauri::async_runtime::spawn_blocking(move || recourse::engine::inspect_workdir(path.as_deref()))
        .await
        .map_err(|e| crate::error::IpcError::io(&e))
}
