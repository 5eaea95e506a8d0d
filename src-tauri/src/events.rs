//! Forwards engine route events to the window as a typed event, and raises a
//! desktop notification when a route newly needs manual recovery.

use recourse::engine::{RouteEvent, RouteState};
use serde::{Deserialize, Serialize};
use tauri::AppHandle;
use tauri_plugin_notification::NotificationExt;
use tauri_specta::Event;
use tokio::sync::broadcast::{error::RecvError, Receiver};

/// A route committed a transition. The UI drops an event whose generation is
/// not above the last one it saw for that route.
#[derive(Debug, Clone, Serialize, Deserialize, specta::Type, Event)]
pub struct RouteChanged(pub RouteEvent);

pub fn forward(app: AppHandle, mut events: Receiver<RouteEvent>) {
    tauri::async_runtime::spawn(async move {
        loop {
            match events.recv().await {
                Ok(event) => {
                    if event.snapshot.state == RouteState::NeedsManual {
                        notify_needs_manual(&app, &event);
                    }
                    if let Err(err) = RouteChanged(event).emit(&app) {
                        tracing::warn!(%err, "could not emit route event");
                    }
                }
                // The UI reloads the route list on its own when it falls behind.
                Err(RecvError::Lagged(missed)) => tracing::warn!(missed, "route events lagged"),
                Err(RecvError::Closed) => break,
            }
        }
    });
}

fn notify_needs_manual(app: &AppHandle, event: &RouteEvent) {
    let snap = &event.snapshot;
    let body = snap
        .manual_reason
        .clone()
        .unwrap_or_else(|| "Automatic recovery ended.".into());
    let shown = app
        .notification()
        .builder()
        .title(format!(
            "Route {} needs you ({})",
            snap.id, snap.candidate_name
        ))
        .body(body)
        .show();
    if let Err(err) = shown {
        tracing::info!(%err, route = snap.id, "desktop notification unavailable");
    }
}
