//! Forwards engine route events to the window as a typed event, and raises a
//! desktop notification when a route newly needs manual recovery.

use std::collections::HashMap;

use recourse::engine::RouteEvent;
use recourse::route::RouteState;
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
        let mut last_state = HashMap::new();
        loop {
            match events.recv().await {
                Ok(event) => {
                    if entered_needs_manual(&mut last_state, &event) {
                        notify_needs_manual(&app, &event);
                    }
                    if let Err(err) = RouteChanged(event).emit(&app) {
                        tracing::warn!(%err, "could not emit route event");
                    }
                    crate::background::refresh_tray(&app);
                }
                // Each event carries a full snapshot, so the next one for a
                // route (or the Refresh button) catches the UI up.
                Err(RecvError::Lagged(missed)) => tracing::warn!(missed, "route events lagged"),
                Err(RecvError::Closed) => break,
            }
        }
    });
}

/// True when this event moves its route into `NeedsManual`; a route already
/// there (re-published after adoption, say) does not notify again.
fn entered_needs_manual(last_state: &mut HashMap<u32, RouteState>, event: &RouteEvent) -> bool {
    let state = event.snapshot.state;
    let before = last_state.insert(event.route_id, state);
    state == RouteState::NeedsManual && before != Some(RouteState::NeedsManual)
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
    match shown {
        Ok(()) => tracing::info!(route = snap.id, "desktop notification sent"),
        Err(err) => tracing::info!(%err, route = snap.id, "desktop notification unavailable"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Utc;
    use recourse::engine::RouteSnapshot;

    fn event(route_id: u32, generation: u32, state: RouteState) -> RouteEvent {
        let snapshot = RouteSnapshot {
            id: route_id,
            profile_name: "Demo".into(),
            state,
            generation,
            candidate_index: 0,
            candidate_name: "sim".into(),
            candidate_count: 1,
            last_failure: None,
            retry: None,
            pending_outcome: None,
            skip_to: None,
            repeat_risk: None,
            deadline: None,
            manual_reason: None,
            prompt_excerpt: String::new(),
            attempts: 1,
            owner: None,
            created_at: Utc::now(),
            updated_at: Utc::now(),
            actions: Vec::new(),
        };
        RouteEvent {
            route_id,
            generation,
            snapshot,
        }
    }

    #[test]
    fn only_the_move_into_needs_manual_notifies() {
        let mut last = HashMap::new();
        assert!(!entered_needs_manual(
            &mut last,
            &event(1, 1, RouteState::Running)
        ));
        assert!(entered_needs_manual(
            &mut last,
            &event(1, 2, RouteState::NeedsManual)
        ));
        assert!(
            !entered_needs_manual(&mut last, &event(1, 3, RouteState::NeedsManual)),
            "a route re-published while already waiting for a person does not notify twice"
        );
        assert!(!entered_needs_manual(
            &mut last,
            &event(1, 4, RouteState::Running)
        ));
        assert!(
            entered_needs_manual(&mut last, &event(1, 5, RouteState::NeedsManual)),
            "a second failure notifies again"
        );
    }

    #[test]
    fn a_route_first_seen_in_needs_manual_notifies_once() {
        let mut last = HashMap::new();
        assert!(entered_needs_manual(
            &mut last,
            &event(7, 9, RouteState::NeedsManual)
        ));
        assert!(
            !entered_needs_manual(&mut last, &event(2, 1, RouteState::Stopped)),
            "other routes are tracked apart"
        );
    }
}
