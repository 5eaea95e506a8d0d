//! Accounts: the Accounts view's overview, clearing an account's limit
//! marks, and the global maximum of running agents.

use recourse::engine::AccountsOverview;
use tauri::State;

use super::Reply;
use crate::AppState;

/// Every account with its state, marks, routes and last 24 hours.
#[tauri::command]
#[specta::specta]
pub async fn accounts(state: State<'_, AppState>) -> Reply<AccountsOverview> {
    state.run(|engine| Ok(engine.accounts()?)).await
}

/// Removes every limit mark of `account` (its id); how many went.
#[tauri::command]
#[specta::specta]
pub async fn clear_account(state: State<'_, AppState>, account: String) -> Reply<u32> {
    state
        .run(move |engine| Ok(engine.clear_account(&account)?))
        .await
}

/// Sets the global maximum of running agents (`None`: no maximum), which
/// every process on the database obeys.
#[tauri::command]
#[specta::specta]
pub async fn set_max_running(state: State<'_, AppState>, max: Option<u32>) -> Reply<()> {
    state
        .run(move |engine| Ok(engine.set_max_running(max)?))
        .await
}
