//! Background mode: the tray icon, what closing the window does, pausing new
//! dispatches, and quitting with routes still waiting.
//!
//! Closing the window while a route is waiting or running hides it to the
//! tray (asking once, in the window, unless the answer was remembered in
//! [`crate::settings`]); with nothing active it quits as before. With
//! unsaved profile edits in the window (reported by it), every close or
//! quit asks first, in the window, in one question: save, discard or
//! cancel, together with keep-running-or-quit when that is still open. The tray
//! shows how many routes need you, wait and run, and has Open, Pause all new
//! dispatches and Quit. The decisions are pure functions ([`close_decision`],
//! [`status_line`]) so they are tested without a tray.

use std::path::PathBuf;
use std::sync::Mutex;

use recourse::engine::RouteCounts;
use serde::{Deserialize, Serialize};
use tauri::menu::{CheckMenuItem, Menu, MenuItem, PredefinedMenuItem};
use tauri::tray::{TrayIcon, TrayIconBuilder};
use tauri::{AppHandle, Manager, Runtime, State, Wry};
use tauri_plugin_dialog::{DialogExt, MessageDialogButtons, MessageDialogKind};
use tauri_specta::Event;

use crate::error::IpcError;
use crate::settings::{self, CloseChoice, Settings};
use crate::AppState;

/// What a close of the main window does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CloseDecision {
    /// Close the window and quit, as with nothing running.
    Quit,
    /// Hide the window; keep running in the tray.
    Hide,
    /// Keep the window and ask in it; `then` is what follows the answer
    /// when that is already settled (`None`: the question includes it).
    Ask { then: Option<CloseChoice> },
}

/// `unsaved`: the window holds profile edits not yet saved.
pub fn close_decision(
    counts: RouteCounts,
    remembered: Option<CloseChoice>,
    unsaved: bool,
) -> CloseDecision {
    let then = if counts.active() {
        remembered
    } else {
        Some(CloseChoice::Quit)
    };
    match (unsaved, then) {
        (true, then) => CloseDecision::Ask { then },
        (false, Some(CloseChoice::KeepRunning)) => CloseDecision::Hide,
        (false, Some(CloseChoice::Quit)) => CloseDecision::Quit,
        (false, None) => CloseDecision::Ask { then: None },
    }
}

/// The tray's status line (its tooltip and its first, disabled menu item).
pub fn status_line(counts: RouteCounts, paused: bool) -> String {
    let mut parts = Vec::new();
    if counts.needs_you > 0 {
        parts.push(format!("{} need you", counts.needs_you));
    }
    if counts.waiting > 0 {
        parts.push(format!("{} waiting", counts.waiting));
    }
    if counts.running > 0 {
        parts.push(format!("{} running", counts.running));
    }
    let mut line = if parts.is_empty() {
        "Recourse: nothing waiting".to_string()
    } else {
        format!("Recourse: {}", parts.join(", "))
    };
    if paused {
        line.push_str(" (new dispatches paused)");
    }
    line
}

/// What quitting does to what is active, for the confirmation; `None` when
/// nothing is.
pub fn quit_warning(counts: RouteCounts) -> Option<String> {
    if !counts.active() {
        return None;
    }
    let mut text = String::new();
    if counts.waiting > 0 {
        text.push_str(&format!(
            "{} route{} waiting. {} kept with {} deadline{} and taken over when Recourse starts \
             again; a deadline that passes while it is closed fires at the next start.",
            counts.waiting,
            if counts.waiting == 1 { " is" } else { "s are" },
            if counts.waiting == 1 {
                "It is"
            } else {
                "They are"
            },
            if counts.waiting == 1 { "its" } else { "their" },
            if counts.waiting == 1 { "" } else { "s" },
        ));
    }
    if counts.running > 0 {
        if !text.is_empty() {
            text.push(' ');
        }
        text.push_str(&format!(
            "{} agent{} running: {} stopped and {} route{} will need you.",
            counts.running,
            if counts.running == 1 { " is" } else { "s are" },
            if counts.running == 1 {
                "it is"
            } else {
                "they are"
            },
            if counts.running == 1 { "its" } else { "their" },
            if counts.running == 1 { "" } else { "s" },
        ));
    }
    Some(text)
}

/// The main window was asked to close (or the app to quit) and the window
/// must ask first: routes are active and no answer is remembered ("Keep
/// Recourse running in the tray while routes wait?"), or it holds unsaved
/// edits (save, discard or cancel), or both, in one question.
#[derive(Debug, Clone, Serialize, Deserialize, specta::Type, Event)]
pub struct CloseRequested {
    pub counts: RouteCounts,
    /// What quitting would do to them, in words (empty: nothing active).
    pub quit_warning: String,
    /// The profile with unsaved edits, if any.
    pub unsaved: Option<String>,
    /// What happens once answered, when already settled; `None`: the
    /// question asks keep running or quit.
    pub then: Option<CloseChoice>,
}

/// New dispatches were paused or resumed (from the tray or the window).
#[derive(Debug, Clone, Serialize, Deserialize, specta::Type, Event)]
pub struct PauseChanged {
    pub paused: bool,
}

/// The app's background state: settings and the tray's live items.
pub struct Background {
    settings_path: PathBuf,
    settings: Mutex<Settings>,
    /// Updates the tray's status line and pause check, once it exists.
    refresh: Mutex<Option<Refresh>>,
    /// Acts on the running app (set at start; commands stay free of the
    /// runtime type so the mock runtime drives them too).
    control: Mutex<Option<Control>>,
    /// The profile the window holds unsaved edits to, as it last reported.
    unsaved: Mutex<Option<String>>,
}

type Refresh = Box<dyn Fn(&str, bool) + Send + Sync>;
type Control = Box<dyn Fn(Act) + Send + Sync>;

/// What a command asks the running app to do.
#[derive(Debug, Clone, Copy)]
pub enum Act {
    HideWindow,
    Quit,
    /// Tell the window and the tray that pausing changed.
    PauseChanged(bool),
}

impl Background {
    pub fn load(config_dir: &std::path::Path) -> Background {
        let settings_path = settings::path_in(config_dir);
        Background {
            settings: Mutex::new(settings::load(&settings_path)),
            settings_path,
            refresh: Mutex::new(None),
            control: Mutex::new(None),
            unsaved: Mutex::new(None),
        }
    }

    fn unsaved(&self) -> Option<String> {
        self.unsaved
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    pub(crate) fn settings(&self) -> Settings {
        self.settings
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    fn act(&self, act: Act) {
        let control = self.control.lock().unwrap_or_else(|p| p.into_inner());
        match control.as_ref() {
            Some(control) => control(act),
            None => tracing::debug!(?act, "no app to act on"),
        }
    }

    fn save(&self, next: Settings) -> Result<(), IpcError> {
        settings::save(&self.settings_path, &next).map_err(|e| IpcError::io(&e))?;
        *self.settings.lock().unwrap_or_else(|p| p.into_inner()) = next;
        Ok(())
    }

    /// Saves the remembered close answer, the other settings as they are.
    fn remember_close(&self, choice: Option<CloseChoice>) -> Result<Settings, IpcError> {
        let next = Settings {
            close_while_active: choice,
            ..self.settings()
        };
        self.save(next.clone())?;
        Ok(next)
    }
}

fn counts_now<R: Runtime>(app: &AppHandle<R>) -> RouteCounts {
    let Some(engine) = app.state::<AppState>().engine_now() else {
        return RouteCounts::default();
    };
    match engine.route_counts() {
        Ok(counts) => counts,
        Err(err) => {
            tracing::warn!(%err, "cannot count routes");
            RouteCounts::default()
        }
    }
}

/// Lets the commands act on the app: hide the main window, quit, announce
/// a pause change.
pub fn install_control(app: &AppHandle<Wry>) {
    let handle = app.clone();
    let control: Control = Box::new(move |act| match act {
        Act::HideWindow => {
            if let Some(window) = handle.get_webview_window("main") {
                tracing::info!("main window hidden to the tray");
                let _ = window.hide();
            }
        }
        Act::Quit => handle.exit(0),
        Act::PauseChanged(paused) => announce_pause(&handle, paused),
    });
    *app.state::<Background>()
        .control
        .lock()
        .unwrap_or_else(|p| p.into_inner()) = Some(control);
}

/// Builds the tray. Without a StatusNotifier host (a bare X server) the
/// icon has nowhere to show; the app runs on, and closing with active
/// routes still hides the window.
pub fn create_tray(app: &AppHandle<Wry>) -> tauri::Result<()> {
    let paused = is_paused(app);
    let line = status_line(counts_now(app), paused);
    let status = MenuItem::with_id(app, "status", &line, false, None::<&str>)?;
    let open = MenuItem::with_id(app, "open", "Open Recourse", true, None::<&str>)?;
    let pause = CheckMenuItem::with_id(
        app,
        "pause",
        "Pause all new dispatches",
        true,
        paused,
        None::<&str>,
    )?;
    let quit = MenuItem::with_id(app, "quit", "Quit", true, None::<&str>)?;
    let menu = Menu::with_items(
        app,
        &[
            &status,
            &PredefinedMenuItem::separator(app)?,
            &open,
            &pause,
            &PredefinedMenuItem::separator(app)?,
            &quit,
        ],
    )?;
    let mut builder = TrayIconBuilder::with_id("main")
        .tooltip(&line)
        .menu(&menu)
        .show_menu_on_left_click(true)
        .on_menu_event(|app, event| match event.id().as_ref() {
            "open" => show_main(app),
            "pause" => {
                let paused = !is_paused(app);
                set_paused(app, paused);
            }
            "quit" => confirm_quit(app),
            _ => {}
        });
    if let Some(icon) = app.default_window_icon() {
        builder = builder.icon(icon.clone());
    }
    let icon: TrayIcon<Wry> = builder.build(app)?;
    let refresh: Refresh = Box::new(move |line, paused| {
        let _ = status.set_text(line);
        let _ = icon.set_tooltip(Some(line));
        let _ = pause.set_checked(paused);
    });
    *app.state::<Background>()
        .refresh
        .lock()
        .unwrap_or_else(|p| p.into_inner()) = Some(refresh);
    Ok(())
}

/// Updates the tray's status line and pause check; called on every route
/// event and pause change.
pub fn refresh_tray<R: Runtime>(app: &AppHandle<R>) {
    let Some(background) = app.try_state::<Background>() else {
        return;
    };
    let refresh = background.refresh.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(refresh) = refresh.as_ref() {
        let paused = is_paused(app);
        refresh(&status_line(counts_now(app), paused), paused);
    }
}

pub fn show_main<R: Runtime>(app: &AppHandle<R>) {
    if let Some(window) = app.get_webview_window("main") {
        let _ = window.unminimize();
        let _ = window.show();
        let _ = window.set_focus();
    }
}

/// Whether new dispatches are paused; not while the engine is still opening.
fn is_paused<R: Runtime>(app: &AppHandle<R>) -> bool {
    app.state::<AppState>()
        .engine_now()
        .is_some_and(|engine| engine.is_paused())
}

fn set_paused<R: Runtime>(app: &AppHandle<R>, paused: bool) {
    if let Some(engine) = app.state::<AppState>().engine_now() {
        engine.set_paused(paused);
    }
    announce_pause(app, paused);
}

fn announce_pause<R: Runtime>(app: &AppHandle<R>, paused: bool) {
    if let Err(err) = (PauseChanged { paused }).emit(app) {
        tracing::warn!(%err, "could not emit pause change");
    }
    refresh_tray(app);
}

/// Quit from the tray: with unsaved edits the window asks (save, discard,
/// cancel); otherwise, with routes active, a native dialog says what
/// happens to them first.
fn confirm_quit(app: &AppHandle<Wry>) {
    let counts = counts_now(app);
    if let Some(profile) = app.state::<Background>().unsaved() {
        show_main(app);
        ask_in_window(app, counts, Some(profile), Some(CloseChoice::Quit));
        return;
    }
    let Some(warning) = quit_warning(counts) else {
        app.exit(0);
        return;
    };
    let handle = app.clone();
    app.dialog()
        .message(warning)
        .title("Quit Recourse?")
        .kind(MessageDialogKind::Warning)
        .buttons(MessageDialogButtons::OkCancelCustom(
            "Quit".into(),
            "Keep running".into(),
        ))
        .show(move |quit| {
            if quit {
                handle.exit(0);
            }
        });
}

/// The main window was asked to close (its close button, the window
/// manager, Alt+F4).
pub fn on_close_requested(window: &tauri::Window<Wry>, api: &tauri::CloseRequestApi) {
    let app = window.app_handle();
    let counts = counts_now(app);
    let background = app.state::<Background>();
    let remembered = background.settings().close_while_active;
    let unsaved = background.unsaved();
    match close_decision(counts, remembered, unsaved.is_some()) {
        CloseDecision::Quit => {
            tracing::info!(?counts, "main window closed: quitting");
        }
        CloseDecision::Hide => {
            api.prevent_close();
            tracing::info!(?counts, "main window closed: hidden to the tray");
            let _ = window.hide();
        }
        CloseDecision::Ask { then } => {
            api.prevent_close();
            if !ask_in_window(app, counts, unsaved, then) {
                // Hiding keeps the window, and any unsaved edits in it.
                let _ = window.hide();
            }
        }
    }
}

/// Asks the close question in the window; false when it could not be sent.
fn ask_in_window<R: Runtime>(
    app: &AppHandle<R>,
    counts: RouteCounts,
    unsaved: Option<String>,
    then: Option<CloseChoice>,
) -> bool {
    let event = CloseRequested {
        counts,
        quit_warning: quit_warning(counts).unwrap_or_default(),
        unsaved,
        then,
    };
    match event.emit(app) {
        Ok(()) => true,
        Err(err) => {
            tracing::warn!(%err, "could not ask about closing; hiding to the tray");
            false
        }
    }
}

/// The window reports the profile it holds unsaved edits to (`None`: all
/// saved), so that closing or quitting asks first.
#[tauri::command]
#[specta::specta]
pub async fn set_unsaved_edits(
    background: State<'_, Background>,
    profile: Option<String>,
) -> Result<(), IpcError> {
    *background.unsaved.lock().unwrap_or_else(|p| p.into_inner()) = profile;
    Ok(())
}

#[tauri::command]
#[specta::specta]
pub fn get_settings(background: State<'_, Background>) -> Settings {
    background.settings()
}

/// Remembers (or forgets, with `None`) what closing does while routes wait.
#[tauri::command]
#[specta::specta]
pub fn set_close_choice(
    background: State<'_, Background>,
    choice: Option<CloseChoice>,
) -> Result<Settings, IpcError> {
    background.remember_close(choice)
}

/// Saves the settings made in the Settings view (default profile and
/// directory, notifications, retention) after checking them: a problem is
/// a validation error at its field and nothing is saved. A retention that
/// changed is applied at once.
#[tauri::command]
#[specta::specta]
pub async fn set_settings(
    state: State<'_, AppState>,
    background: State<'_, Background>,
    settings: Settings,
) -> Result<Settings, IpcError> {
    let problems = settings.problems();
    if !problems.is_empty() {
        return Err(recourse::engine::EngineError::Validation(problems).into());
    }
    let before = background.settings().retention;
    background.save(settings.clone())?;
    if settings.retention != before {
        crate::housekeeping::prune_now(state.inner(), settings.retention).await;
    }
    Ok(settings)
}

/// The answer to the close question: hide to the tray or quit, remembered
/// when asked.
#[tauri::command]
#[specta::specta]
pub fn answer_close(
    background: State<'_, Background>,
    choice: CloseChoice,
    remember: bool,
) -> Result<(), IpcError> {
    if remember {
        background.remember_close(Some(choice))?;
    }
    background.act(match choice {
        CloseChoice::KeepRunning => Act::HideWindow,
        CloseChoice::Quit => Act::Quit,
    });
    Ok(())
}

#[tauri::command]
#[specta::specta]
pub async fn dispatch_paused(state: State<'_, AppState>) -> Result<bool, IpcError> {
    Ok(state.engine().await?.is_paused())
}

/// Pauses or resumes new dispatches (see `docs/engine.md`).
#[tauri::command]
#[specta::specta]
pub async fn set_dispatch_paused(
    state: State<'_, AppState>,
    background: State<'_, Background>,
    paused: bool,
) -> Result<bool, IpcError> {
    state.engine().await?.set_paused(paused);
    background.act(Act::PauseChanged(paused));
    Ok(paused)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(needs_you: u32, waiting: u32, running: u32) -> RouteCounts {
        RouteCounts {
            needs_you,
            waiting,
            running,
            ..RouteCounts::default()
        }
    }

    #[test]
    fn closing_with_nothing_active_quits_whatever_was_remembered() {
        for remembered in [
            None,
            Some(CloseChoice::KeepRunning),
            Some(CloseChoice::Quit),
        ] {
            assert_eq!(
                close_decision(counts(3, 0, 0), remembered, false),
                CloseDecision::Quit,
                "routes that need a person fire nothing"
            );
        }
    }

    #[test]
    fn closing_while_routes_wait_asks_once_then_follows_the_remembered_answer() {
        let waiting = counts(0, 1, 0);
        assert_eq!(
            close_decision(waiting, None, false),
            CloseDecision::Ask { then: None }
        );
        assert_eq!(
            close_decision(waiting, Some(CloseChoice::KeepRunning), false),
            CloseDecision::Hide
        );
        assert_eq!(
            close_decision(counts(0, 0, 1), Some(CloseChoice::Quit), false),
            CloseDecision::Quit
        );
    }

    #[test]
    fn unsaved_edits_always_ask_first_and_say_what_follows() {
        assert_eq!(
            close_decision(counts(0, 0, 0), Some(CloseChoice::KeepRunning), true),
            CloseDecision::Ask {
                then: Some(CloseChoice::Quit)
            },
            "nothing active: the answer is followed by quitting"
        );
        assert_eq!(
            close_decision(counts(0, 2, 0), Some(CloseChoice::KeepRunning), true),
            CloseDecision::Ask {
                then: Some(CloseChoice::KeepRunning)
            },
            "even hiding asks: the edits would sit unseen in a hidden window"
        );
        assert_eq!(
            close_decision(counts(0, 1, 0), None, true),
            CloseDecision::Ask { then: None },
            "one question covers both the edits and keep-running-or-quit"
        );
    }

    #[test]
    fn the_tray_line_counts_what_needs_you_waits_and_runs() {
        assert_eq!(
            status_line(counts(0, 0, 0), false),
            "Recourse: nothing waiting"
        );
        assert_eq!(
            status_line(counts(2, 1, 0), false),
            "Recourse: 2 need you, 1 waiting"
        );
        assert_eq!(
            status_line(counts(0, 3, 1), true),
            "Recourse: 3 waiting, 1 running (new dispatches paused)"
        );
    }

    #[test]
    fn quitting_says_waits_are_kept_and_running_agents_stopped() {
        assert_eq!(quit_warning(counts(4, 0, 0)), None);
        assert_eq!(
            quit_warning(counts(0, 1, 0)).unwrap(),
            "1 route is waiting. It is kept with its deadline and taken over when Recourse \
             starts again; a deadline that passes while it is closed fires at the next start."
        );
        let both = quit_warning(counts(0, 2, 1)).unwrap();
        assert!(both.starts_with("2 routes are waiting. They are kept with their deadlines"));
        assert!(both.ends_with("1 agent is running: it is stopped and its route will need you."));
    }
}
