//! Recourse desktop shell: wires the engine into Tauri. Commands are thin
//! adapters (see `commands`); every type crossing IPC is exported to
//! `ui/src/bindings.ts` by tauri-specta.

mod background;
mod chooser;
mod commands;
mod constants;
mod error;
mod events;
mod housekeeping;
mod logging;
mod settings;
mod startup;

use std::path::PathBuf;

use recourse::engine::{Engine, EngineOptions};
use tauri::{Manager, RunEvent};
use tauri_specta::{collect_commands, collect_events, Builder};

pub use chooser::{child_main as choose_path_child, CHOOSE_PATH_ARG};
pub use error::{ErrorCode, IpcError};
pub use startup::{EngineCell, EngineOpening, EngineStatus};

/// How long the engine's open waits for the window's first route list at
/// most (see [`EngineOpening::after_first_list`]).
const FIRST_LIST_WAITS: std::time::Duration = std::time::Duration::from_secs(2);

/// Shared state the commands read.
pub struct AppState {
    engine: EngineCell,
    pub db_path: PathBuf,
    pub log_dir: PathBuf,
}

impl AppState {
    pub fn new(engine: EngineCell, db_path: PathBuf, log_dir: PathBuf) -> AppState {
        AppState {
            engine,
            db_path,
            log_dir,
        }
    }

    /// The engine, once open; its open error as an [`IpcError`] if it failed.
    pub async fn engine(&self) -> Result<Engine, IpcError> {
        self.engine.get().await
    }

    /// The engine if it is open now.
    pub fn engine_now(&self) -> Option<Engine> {
        self.engine.now()
    }

    pub fn engine_status(&self) -> EngineStatus {
        self.engine.status()
    }

    /// Runs engine work on the blocking pool once the engine is open (a
    /// database read or write may wait out another process's lock): how
    /// every command calls a synchronous engine method.
    pub async fn run<T: Send + 'static>(
        &self,
        work: impl FnOnce(&Engine) -> Result<T, IpcError> + Send + 'static,
    ) -> Result<T, IpcError> {
        let engine = self.engine().await?;
        tauri::async_runtime::spawn_blocking(move || work(&engine))
            .await
            .map_err(|e| IpcError::io(&e))?
    }

    /// A page of routes, painted before the engine is open (see [`startup`]).
    pub async fn route_page(
        &self,
        query: &recourse::engine::RouteQuery,
    ) -> Result<recourse::engine::RoutePage, IpcError> {
        startup::route_page(&self.engine, &self.db_path, query).await
    }
}

/// The command/event registry; also what the bindings exporter reads.
/// Generic over the runtime so tests can drive it on Tauri's mock runtime.
pub fn specta_builder<R: tauri::Runtime>() -> Builder<R> {
    Builder::<R>::new()
        .commands(collect_commands![
            commands::app_info,
            commands::profiles::agent_kinds,
            commands::profiles::list_profiles,
            commands::profiles::create_profile,
            commands::profiles::rename_profile,
            commands::profiles::delete_profile,
            commands::profiles::save_candidates,
            commands::profiles::check_policy,
            commands::profiles::check_agent,
            commands::profiles::check_candidates,
            commands::profiles::secret_env,
            commands::profiles::readiness,
            commands::profiles::policy_summary,
            commands::profiles::describe_schedule,
            commands::profiles::describe_unclassified,
            commands::profiles::preview_policy,
            commands::profiles::preview_error_text,
            commands::profile_files::export_profile,
            commands::profile_files::preview_profile_file,
            commands::profile_files::import_profile,
            commands::profile_files::duplicate_profile,
            commands::routes::start_run,
            commands::routes::list_routes,
            commands::routes::route_counts,
            commands::routes::engine_status,
            commands::routes::route_detail,
            commands::routes::attempt_transcript,
            commands::routes::continuation_preview,
            commands::routes::route_action,
            commands::routes::archive_route,
            commands::routes::delete_routes,
            commands::routes::inspect_workdir,
            commands::accounts::accounts,
            commands::accounts::clear_account,
            commands::accounts::set_max_running,
            commands::catalogue::catalogue_rules,
            commands::catalogue::classify_text,
            commands::catalogue::unclassified_inbox,
            commands::catalogue::export_fixture,
            commands::catalogue::propose_rule,
            commands::catalogue::review_rule,
            commands::catalogue::save_rule,
            commands::catalogue::remove_local_rule,
            background::get_settings,
            background::set_close_choice,
            background::answer_close,
            background::dispatch_paused,
            background::set_dispatch_paused,
            background::set_unsaved_edits,
            background::set_settings,
            housekeeping::open_folder,
            chooser::choose_path,
        ])
        .events(collect_events![
            events::RouteChanged,
            events::RoutesRemoved,
            events::AccountMarked,
            background::CloseRequested,
            background::PauseChanged,
            startup::EngineStatus
        ])
        .constant("POLICY_LIMITS", constants::PolicyLimits::current())
        .constant("PROVIDERS", recourse::evidence::Provider::ALL)
        .constant("PROVIDER_WORDS", constants::provider_words())
        .constant(
            "PASTABLE_PROVIDERS",
            recourse::evidence::Provider::pastable(),
        )
        .constant(
            "PROVIDERS_SEEING_EVERY_RULE",
            recourse::evidence::Provider::ALL
                .into_iter()
                .filter(|p| p.sees_every_rule())
                .collect::<Vec<_>>(),
        )
        .constant(
            "DISPATCHING_ACTIONS",
            recourse::route::transitions::dispatching_actions(),
        )
        .constant("MANUAL_ACTIONS", recourse::route::ManualAction::ALL)
        .constant(
            "DEFAULT_CONTINUE_MESSAGE",
            recourse::route::DEFAULT_CONTINUE_MESSAGE,
        )
        .constant("ACTION_HELP", constants::action_help())
        .constant("ACTION_LABEL", constants::action_label())
        .constant("STATE_TEXT", constants::state_text())
        .constant("AT_REST", recourse::engine::AT_REST)
        .constant("MAX_RETENTION_DAYS", crate::settings::MAX_RETENTION_DAYS)
        .constant("ROUTE_FILTER_STATES", constants::route_filter_states())
        .constant("RULE_CODES", constants::rule_codes())
        .constant("CODE_WORDS", constants::code_words())
        .constant(
            "CONCURRENCY_LIMITS",
            constants::ConcurrencyLimits::current(),
        )
}

/// Writes the TypeScript bindings to `path`.
pub fn export_bindings(path: &std::path::Path) -> Result<(), String> {
    specta_builder::<tauri::Wry>()
        .export(
            specta_typescript::Typescript::default()
                .header("// Generated by tauri-specta from src-tauri. Do not edit.\n"),
            path,
        )
        .map_err(|e| e.to_string())
}

pub fn run() {
    let builder = specta_builder::<tauri::Wry>();
    let app = tauri::Builder::default()
        // First: a second launch hands its arguments to this one and exits
        // before it opens the database; this one shows its window.
        .plugin(tauri_plugin_single_instance::init(|app, _args, _cwd| {
            tracing::info!("second launch: focusing the running window");
            background::show_main(app);
        }))
        .plugin(tauri_plugin_notification::init())
        .plugin(tauri_plugin_dialog::init())
        .plugin(tauri_plugin_autostart::init(
            tauri_plugin_autostart::MacosLauncher::LaunchAgent,
            None,
        ))
        .invoke_handler(builder.invoke_handler())
        .on_window_event(|window, event| {
            if let tauri::WindowEvent::CloseRequested { api, .. } = event {
                if window.label() == "main" {
                    background::on_close_requested(window, api);
                }
            }
        })
        .setup(move |app| {
            builder.mount_events(app);
            let log_dir = app.path().app_log_dir()?;
            app.manage(LogGuard(logging::init(&log_dir)));
            app.manage(background::Background::load(&app.path().app_config_dir()?));
            let db_path = recourse::engine::default_db_path();
            tracing::info!(db = %db_path.display(), "starting Recourse");
            let (cell, opening) = EngineCell::opening();
            app.manage(AppState::new(cell, db_path.clone(), log_dir));
            background::install_control(app.handle());
            // The window loads while the engine checks the database and
            // adopts its routes; commands wait for it. On a thread of its
            // own: the open is seconds of file reads and writes on a large
            // database, which would hold one of the async workers the
            // window's requests are served on, and it runs at a lower
            // priority than the window's painting.
            let handle = app.handle().clone();
            std::thread::Builder::new()
                .name("engine-open".into())
                .spawn(move || {
                    tauri::async_runtime::block_on(opening.after_first_list(FIRST_LIST_WAITS));
                    startup::behind_the_window();
                    let opened = tauri::async_runtime::block_on(Engine::open(
                        &db_path,
                        EngineOptions::default(),
                    ));
                    engine_opened(&handle, opening, opened.map_err(IpcError::from));
                })?;
            Ok(())
        })
        .build(tauri::generate_context!("../tauri.conf.json"))
        .expect("Recourse could not start");
    app.run(|handle, event| match event {
        RunEvent::Exit => {
            // Kill and reap agent processes before the runtime goes away.
            // An engine still opening has started none.
            if let Some(engine) = handle.state::<AppState>().engine_now() {
                tauri::async_runtime::block_on(engine.shutdown());
            }
        }
        // The native file dialogs run their own GTK loop on another thread
        // (rfd, through the dialog plugin); once one has been shown, the
        // event loop does not end by itself when the last window is gone.
        RunEvent::WindowEvent {
            event: tauri::WindowEvent::Destroyed,
            ..
        } if handle.webview_windows().is_empty() => handle.exit(0),
        _ => {}
    });
}

/// Wires an engine that has opened into the app (route events, the tray),
/// then tells waiting commands and the window.
fn engine_opened(
    handle: &tauri::AppHandle,
    opening: EngineOpening,
    opened: Result<Engine, IpcError>,
) {
    let status = match &opened {
        Ok(engine) => {
            tracing::info!("engine ready");
            events::forward(handle.clone(), engine.subscribe());
            events::forward_notices(handle.clone(), engine.subscribe_accounts());
            events::forward_removals(handle.clone(), engine.subscribe_removals());
            EngineStatus::Ready
        }
        Err(err) => {
            tracing::error!(error = %err.message, "the database could not be opened");
            EngineStatus::Failed {
                message: err.message.clone(),
            }
        }
    };
    let ready = opened.is_ok();
    opening.finish(opened);
    if ready {
        housekeeping::start(handle);
        let tray_handle = handle.clone();
        let on_main = handle.run_on_main_thread(move || {
            if let Err(err) = background::create_tray(&tray_handle) {
                tracing::warn!(%err, "no tray icon");
            }
        });
        if let Err(err) = on_main {
            tracing::warn!(%err, "no tray icon");
        }
    }
    if let Err(err) = tauri_specta::Event::emit(&status, handle) {
        tracing::warn!(%err, "could not emit the engine status");
    }
}

/// Keeps the log file writer alive for the life of the app.
struct LogGuard(#[allow(dead_code)] Option<tracing_appender::non_blocking::WorkerGuard>);

#[cfg(test)]
mod tests {
    use std::path::Path;

    /// The fake backend of the UI tests answers `agent_kinds` with what the
    /// real one does, written from the descriptors: no copy kept by hand.
    /// Regenerate with `UPDATE_BINDINGS=1 cargo test -p recourse-app bindings`.
    #[test]
    fn committed_agent_kinds_of_the_ui_test_backend_are_up_to_date() {
        let committed =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../ui/tests/ui/harness/agent-kinds.json");
        let kinds = recourse::agent::AgentKind::ALL.map(recourse::engine::AgentKindInfo::of);
        let fresh = serde_json::to_string_pretty(&kinds).unwrap() + "\n";
        if std::env::var_os("UPDATE_BINDINGS").is_some() {
            std::fs::write(&committed, &fresh).unwrap();
            return;
        }
        let committed_text = std::fs::read_to_string(&committed).unwrap_or_default();
        assert!(
            committed_text == fresh,
            "ui/tests/ui/harness/agent-kinds.json is stale: run `UPDATE_BINDINGS=1 cargo test -p recourse-app bindings` and commit it"
        );
    }

    /// Regenerate with `UPDATE_BINDINGS=1 cargo test -p recourse-app bindings`.
    #[test]
    fn committed_bindings_are_up_to_date() {
        let committed = Path::new(env!("CARGO_MANIFEST_DIR")).join("../ui/src/bindings.ts");
        let fresh =
            std::env::temp_dir().join(format!("recourse-bindings-{}.ts", std::process::id()));
        super::export_bindings(&fresh).expect("export bindings");
        let fresh_text = std::fs::read_to_string(&fresh).unwrap();
        let _ = std::fs::remove_file(&fresh);
        if std::env::var_os("UPDATE_BINDINGS").is_some() {
            std::fs::write(&committed, &fresh_text).unwrap();
            return;
        }
        let committed_text = std::fs::read_to_string(&committed).unwrap_or_default();
        assert!(
            committed_text == fresh_text,
            "ui/src/bindings.ts is stale: run `UPDATE_BINDINGS=1 cargo test -p recourse-app bindings` and commit it"
        );
    }
}
