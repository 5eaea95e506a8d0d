//! Forwards engine route events to the window as a typed event, and raises a
//! desktop notification when a route newly needs manual recovery.

use std::collections::HashMap;

use recourse::engine::RouteEvent;
use recourse::route::RouteState;
use serde::{Deserialize, Serialize};
use tauri::{AppHandle, Manager};
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
                    let wanted = app
                        .try_state::<crate::background::Background>()
                        .map(|b| b.settings().notify)
                        .unwrap_or_default();
                    if let Some(note) = notice(&mut last_state, &event, wanted) {
                        notify(&app, &event, note);
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

/// What a desktop notification is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Notice {
    NeedsYou,
    Succeeded,
    Waiting,
}

/// The notice this event gives when it moves its route into a state the
/// person asked to hear about (`wanted`, from Settings); a route already
/// there (re-published after adoption, say) gives none again.
fn notice(
    last_state: &mut HashMap<u32, RouteState>,
    event: &RouteEvent,
    wanted: crate::settings::Notifications,
) -> Option<Notice> {
    let state = event.snapshot.state;
    let before = last_state.insert(event.route_id, state);
    if before == Some(state) {
        return None;
    }
    match state {
        RouteState::NeedsManual if wanted.needs_you => Some(Notice::NeedsYou),
        RouteState::Succeeded if wanted.succeeded => Some(Notice::Succeeded),
        RouteState::WaitingReset if wanted.waiting => Some(Notice::Waiting),
        RouteState::NeedsManual
        | RouteState::Succeeded
        | RouteState::WaitingReset
        | RouteState::Running
        | RouteState::RetryScheduled
        | RouteState::Stopped => None,
    }
}

fn notify(app: &AppHandle, event: &RouteEvent, notice: Notice) {
    let snap = &event.snapshot;
    let (title, body) = match notice {
        Notice::NeedsYou => (
            format!("Route {} needs you ({})", snap.id, snap.candidate_name),
            snap.manual_reason
                .clone()
                .unwrap_or_else(|| "Automatic recovery ended.".into()),
        ),
        Notice::Succeeded => (
            format!("Route {} succeeded ({})", snap.id, snap.candidate_name),
            snap.prompt_excerpt.clone(),
        ),
        Notice::Waiting => (
            format!(
                "Route {} waits for a provider reset ({})",
                snap.id, snap.candidate_name
            ),
            snap.deadline.map_or_else(
                || "Its next attempt runs at the reset.".into(),
                |at| format!("Its next attempt runs at {}.", at.format("%H:%M:%S UTC")),
            ),
        ),
    };
    let shown = app.notification().builder().title(title).body(body).show();
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
            provider_reset_at: None,
            manual_reason: None,
            cannot_start: false,
            prompt_excerpt: String::new(),
            cwd: None,
            archived_at: None,
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

    fn entered_needs_manual(last: &mut HashMap<u32, RouteState>, event: &RouteEvent) -> bool {
        notice(last, event, crate::settings::Notifications::default()) == Some(Notice::NeedsYou)
    }

    #[test]
    fn success_and_reset_waits_notify_only_when_asked_for() {
        use crate::settings::Notifications;
        let all = Notifications {
            needs_you: false,
            succeeded: true,
            waiting: true,
        };
        let mut last = HashMap::new();
        assert_eq!(
            notice(&mut last, &event(1, 1, RouteState::WaitingReset), all),
            Some(Notice::Waiting)
        );
        assert_eq!(
            notice(&mut last, &event(1, 2, RouteState::Succeeded), all),
            Some(Notice::Succeeded)
        );
        assert_eq!(
            notice(&mut last, &event(2, 1, RouteState::NeedsManual), all),
            None,
            "needing you was turned off"
        );
        let mut last = HashMap::new();
        assert_eq!(
            notice(
                &mut last,
                &event(3, 1, RouteState::Succeeded),
                Notifications::default()
            ),
            None,
            "success is quiet by default"
        );
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
