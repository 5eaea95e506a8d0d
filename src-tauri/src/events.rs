//! Forwards engine route events to the window as a typed event, and raises a
//! desktop notification when a route newly needs manual recovery, and one
//! per new limit mark on an account (not one per route it holds back).

use std::collections::HashMap;

use chrono::{DateTime, Local, Utc};
use recourse::engine::{AccountNotice, RouteEvent};
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

/// Routes another process deleted (`recourse routes delete`, retention):
/// the window drops them from its lists and counts.
#[derive(Debug, Clone, Serialize, Deserialize, specta::Type, Event)]
pub struct RoutesRemoved(pub Vec<u32>);

/// Forwards every batch of routes deleted elsewhere to the window, and the
/// tray's counts follow.
pub fn forward_removals(app: AppHandle, removals: Receiver<Vec<u32>>) {
    each(removals, "route removals", move |ids| {
        if let Err(err) = RoutesRemoved(ids).emit(&app) {
            tracing::warn!(%err, "could not emit the removal event");
        }
        crate::background::refresh_tray(&app);
    });
}

/// Runs `on` for every message of `rx` until the engine drops its sender;
/// a receiver that fell behind says how much it missed and goes on.
fn each<T: Clone + Send + 'static>(
    mut rx: Receiver<T>,
    what: &'static str,
    mut on: impl FnMut(T) + Send + 'static,
) {
    tauri::async_runtime::spawn(async move {
        loop {
            match rx.recv().await {
                Ok(message) => on(message),
                Err(RecvError::Lagged(missed)) => tracing::warn!(missed, "{what} lagged"),
                Err(RecvError::Closed) => break,
            }
        }
    });
}

/// An account was marked limited: the Accounts view reloads.
#[derive(Debug, Clone, Serialize, Deserialize, specta::Type, Event)]
pub struct AccountMarked(pub AccountNotice);

/// How long after a mark its notification waits, so it counts the routes
/// the mark holds back in the moments after it.
const NOTICE_SETTLES: std::time::Duration = std::time::Duration::from_secs(2);

/// One desktop notification per new limit mark ("Claude Code (work)
/// limited until 1:02 PM; 4 routes waiting"), and the typed event.
pub fn forward_notices(app: AppHandle, notices: Receiver<AccountNotice>) {
    each(notices, "account notices", move |notice| {
        if let Err(err) = AccountMarked(notice.clone()).emit(&app) {
            tracing::warn!(%err, "could not emit the account event");
        }
        let app = app.clone();
        tauri::async_runtime::spawn(async move {
            tokio::time::sleep(NOTICE_SETTLES).await;
            let waiting = waiting_now(&app, &notice.account).await;
            notify_limited(&app, &notice, waiting.unwrap_or(notice.waiting));
        });
    });
}

/// Routes waiting on `account` now.
async fn waiting_now(app: &AppHandle, account: &str) -> Option<u32> {
    let state = tauri::Manager::state::<crate::AppState>(app);
    let account = account.to_string();
    let all = state.run(move |engine| Ok(engine.accounts()?)).await.ok()?;
    all.accounts
        .iter()
        .find(|a| a.id == account)
        .map(|a| a.waiting.len() as u32)
}

fn notify_limited(app: &AppHandle, notice: &AccountNotice, waiting: u32) {
    let text = limited_text(notice, waiting, Local::now());
    let shown = app
        .notification()
        .builder()
        .title("Account limited")
        .body(&text)
        .show();
    match shown {
        Ok(()) => tracing::info!(account = %notice.account, "desktop notification sent"),
        Err(err) => tracing::info!(%err, "desktop notification unavailable"),
    }
}

/// `Claude Code (work) limited until 1:02 PM; 4 routes waiting`, the time in
/// the desktop's zone (with the date when not today).
fn limited_text(notice: &AccountNotice, waiting: u32, now: DateTime<Local>) -> String {
    let until = match notice.until {
        None => "until cleared".to_string(),
        Some(at) => format!("until {}", local_time(at, now)),
    };
    let routes = match waiting {
        1 => "1 route waiting".to_string(),
        n => format!("{n} routes waiting"),
    };
    format!("{} limited {until}; {routes}", notice.name)
}

fn local_time(at: DateTime<Utc>, now: DateTime<Local>) -> String {
    let at = at.with_timezone(&now.timezone());
    if at.date_naive() == now.date_naive() {
        at.format("%-I:%M %p").to_string()
    } else {
        at.format("%b %-d, %-I:%M %p").to_string()
    }
}

/// How long a burst of route events gathers after its first one before
/// the tray and the desktop notifications catch up with it: an adoption or
/// a reset releases hundreds of routes within a few hundred milliseconds.
const BURST_GATHERS: std::time::Duration = std::time::Duration::from_millis(250);

/// Forwards every route event to the window as it comes; the tray's counts
/// and the desktop notifications follow once per burst (one count query,
/// "12 routes need you"), not once per event.
pub fn forward(app: AppHandle, mut events: Receiver<RouteEvent>) {
    tauri::async_runtime::spawn(async move {
        let mut last_state = HashMap::new();
        loop {
            let emit = |event: &RouteEvent| {
                if let Err(err) = RouteChanged(event.clone()).emit(&app) {
                    tracing::warn!(%err, "could not emit route event");
                }
            };
            let Some(burst) = gather(&mut events, BURST_GATHERS, emit).await else {
                break;
            };
            let wanted = app
                .try_state::<crate::background::Background>()
                .map(|b| b.settings().notify)
                .unwrap_or_default();
            let notes: Vec<(Notice, &RouteEvent)> = burst
                .iter()
                .filter_map(|event| notice(&mut last_state, event, wanted).map(|n| (n, event)))
                .collect();
            for (title, body) in notifications(&notes, Local::now()) {
                notify(&app, &title, &body);
            }
            crate::background::refresh_tray(&app);
        }
    });
}

/// The next burst: the first event, then every other that arrives within
/// `window` of it, each passed to `each` as it comes. `None` once the
/// engine is gone.
async fn gather(
    events: &mut Receiver<RouteEvent>,
    window: std::time::Duration,
    mut each: impl FnMut(&RouteEvent),
) -> Option<Vec<RouteEvent>> {
    let mut burst = Vec::new();
    let mut until = None;
    loop {
        let next = match until {
            None => events.recv().await,
            Some(at) => match tokio::time::timeout_at(at, events.recv()).await {
                Ok(next) => next,
                Err(_) => return Some(burst),
            },
        };
        match next {
            Ok(event) => {
                each(&event);
                burst.push(event);
                until.get_or_insert_with(|| tokio::time::Instant::now() + window);
            }
            // Each event carries a full snapshot, so the next one for a
            // route (or the Refresh button) catches the UI up.
            Err(RecvError::Lagged(missed)) => tracing::warn!(missed, "route events lagged"),
            Err(RecvError::Closed) if burst.is_empty() => return None,
            Err(RecvError::Closed) => return Some(burst),
        }
    }
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
        | RouteState::Stopped
        | RouteState::Queued => None,
    }
}

/// The desktop notifications of one burst's notices: one per kind of
/// notice, naming the route when it is alone ("Route 4 on “Claude Code
/// (work)” needs you") and counting them when not ("12 routes need you").
fn notifications(notes: &[(Notice, &RouteEvent)], now: DateTime<Local>) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for kind in [Notice::NeedsYou, Notice::Waiting, Notice::Succeeded] {
        let of_kind: Vec<&RouteEvent> = notes
            .iter()
            .filter(|(n, _)| *n == kind)
            .map(|(_, e)| *e)
            .collect();
        match of_kind.as_slice() {
            [] => {}
            [one] => out.push(one_route(one, kind, now)),
            many => out.push(many_routes(many, kind)),
        }
    }
    out
}

/// The candidate in quotes, as every dialog names one: a name often holds
/// parentheses (`Claude Code (simulated)`) and colons of its own, so a
/// title in parentheses around it would nest them.
/// Instants in the desktop's zone, as the account notice says them.
fn one_route(event: &RouteEvent, notice: Notice, now: DateTime<Local>) -> (String, String) {
    let snap = &event.snapshot;
    let route = format!("Route {} on “{}”", snap.id, snap.candidate_name);
    match notice {
        Notice::NeedsYou => (
            format!("{route} needs you"),
            snap.manual_reason
                .as_deref()
                .map_or_else(|| "Automatic recovery ended.".into(), sentence),
        ),
        Notice::Succeeded => (format!("{route} succeeded"), snap.prompt_excerpt.clone()),
        Notice::Waiting => (
            format!("{route} waits for a provider reset"),
            snap.deadline.map_or_else(
                || "Its next attempt runs at the reset.".into(),
                |at| format!("Its next attempt runs at {}.", local_time(at, now)),
            ),
        ),
    }
}

/// A reason the engine words as a fragment (`not safe to recover
/// automatically — …`), as a body that stands alone: upper-case first.
fn sentence(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map_or_else(String::new, |first| {
        first.to_uppercase().chain(chars).collect()
    })
}

/// Routes listed by id, the first few, newest last.
const NAMED: usize = 5;

fn many_routes(events: &[&RouteEvent], notice: Notice) -> (String, String) {
    let n = events.len();
    let title = match notice {
        Notice::NeedsYou => format!("{n} routes need you"),
        Notice::Succeeded => format!("{n} routes succeeded"),
        Notice::Waiting => format!("{n} routes wait for a provider reset"),
    };
    let ids: Vec<String> = events
        .iter()
        .take(NAMED)
        .map(|e| e.route_id.to_string())
        .collect();
    let more = match n.saturating_sub(NAMED) {
        0 => String::new(),
        rest => format!(" and {rest} more"),
    };
    (title, format!("Routes {}{more}.", ids.join(", ")))
}

fn notify(app: &AppHandle, title: &str, body: &str) {
    let shown = app.notification().builder().title(title).body(body).show();
    match shown {
        Ok(()) => tracing::info!(title, "desktop notification sent"),
        Err(err) => tracing::info!(%err, "desktop notification unavailable"),
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
            queued: None,
            account: None,
            prompt_excerpt: String::new(),
            cwd: None,
            archived_at: None,
            attempts: 1,
            owner: None,
            created_at: Utc::now(),
            updated_at: Utc::now(),
            actions: Vec::new(),
            unavailable: Vec::new(),
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
    fn a_limit_notice_names_the_account_its_end_in_local_time_and_the_routes_waiting() {
        use chrono::TimeZone;
        let now = Local.with_ymd_and_hms(2026, 12, 2, 12, 0, 0).unwrap();
        let until = now.with_timezone(&Utc) + chrono::Duration::minutes(62);
        let notice = AccountNotice {
            account: "work".into(),
            name: "work".into(),
            code: recourse::classification::SemanticCode::UsageLimitReached,
            until: Some(until),
            waiting: 1,
        };
        assert_eq!(
            limited_text(&notice, 4, now),
            "work limited until 1:02 PM; 4 routes waiting"
        );
        let tomorrow = AccountNotice {
            until: Some(until + chrono::Duration::days(1)),
            ..notice.clone()
        };
        assert_eq!(
            limited_text(&tomorrow, 4, now),
            "work limited until Dec 3, 1:02 PM; 4 routes waiting",
            "another day is named"
        );
        let cleared = AccountNotice {
            until: None,
            ..notice
        };
        assert_eq!(
            limited_text(&cleared, 1, now),
            "work limited until cleared; 1 route waiting"
        );
    }

    #[test]
    fn a_burst_gives_one_notification_per_kind_counting_its_routes() {
        let needs: Vec<RouteEvent> = (1..=12)
            .map(|id| event(id, 2, RouteState::NeedsManual))
            .collect();
        let done = event(40, 3, RouteState::Succeeded);
        let mut notes: Vec<(Notice, &RouteEvent)> =
            needs.iter().map(|e| (Notice::NeedsYou, e)).collect();
        notes.push((Notice::Succeeded, &done));
        assert_eq!(
            notifications(&notes, Local::now()),
            vec![
                (
                    "12 routes need you".to_string(),
                    "Routes 1, 2, 3, 4, 5 and 7 more.".to_string()
                ),
                ("Route 40 on “sim” succeeded".to_string(), String::new()),
            ],
            "twelve routes needing you are one notification, a lone success names its route"
        );
        assert_eq!(
            notifications(&[(Notice::NeedsYou, &needs[0])], Local::now()),
            vec![(
                "Route 1 on “sim” needs you".to_string(),
                "Automatic recovery ended.".to_string()
            )]
        );
    }

    #[test]
    fn a_route_that_needs_you_says_why_as_a_sentence() {
        let mut held = event(2, 1, RouteState::NeedsManual);
        held.snapshot.manual_reason = Some("no catalogue rule recognised the failure".into());
        assert_eq!(
            one_route(&held, Notice::NeedsYou, Local::now()).1,
            "No catalogue rule recognised the failure",
            "the engine's fragment stands alone in the body, so it starts upper-case"
        );
    }

    #[test]
    fn a_reset_wait_names_its_next_attempt_in_local_time_as_the_account_notice_does() {
        use chrono::TimeZone;
        let now = Local.with_ymd_and_hms(2026, 12, 2, 12, 0, 0).unwrap();
        let mut waiting = event(3, 1, RouteState::WaitingReset);
        waiting.snapshot.deadline = Some(now.with_timezone(&Utc) + chrono::Duration::minutes(62));
        assert_eq!(
            one_route(&waiting, Notice::Waiting, now).1,
            "Its next attempt runs at 1:02 PM.",
            "the desktop's zone and the account notice's format, not 13:02:00 UTC"
        );
    }

    #[test]
    fn a_candidate_named_with_parentheses_is_quoted_not_wrapped_in_more() {
        let mut named = event(4, 1, RouteState::NeedsManual);
        named.snapshot.candidate_name = "Claude Code (simulated)".into();
        let titles: Vec<String> = [Notice::NeedsYou, Notice::Succeeded, Notice::Waiting]
            .into_iter()
            .map(|kind| one_route(&named, kind, Local::now()).0)
            .collect();
        assert_eq!(
            titles,
            [
                "Route 4 on “Claude Code (simulated)” needs you",
                "Route 4 on “Claude Code (simulated)” succeeded",
                "Route 4 on “Claude Code (simulated)” waits for a provider reset",
            ],
            "not “Route 4 needs you (Claude Code (simulated))”"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn events_arriving_together_are_one_burst_each_forwarded_as_it_comes() {
        let (tx, mut rx) = tokio::sync::broadcast::channel(64);
        for id in 1..=12 {
            tx.send(event(id, 1, RouteState::NeedsManual)).unwrap();
        }
        let late = tx.clone();
        tokio::spawn(async move {
            tokio::time::sleep(std::time::Duration::from_secs(1)).await;
            late.send(event(99, 1, RouteState::NeedsManual)).unwrap();
        });
        let mut forwarded = 0;
        let burst = gather(&mut rx, BURST_GATHERS, |_| forwarded += 1)
            .await
            .unwrap();
        assert_eq!(burst.len(), 12, "the twelve sent together");
        assert_eq!(forwarded, 12, "each forwarded to the window on arrival");
        let next = gather(&mut rx, BURST_GATHERS, |_| {}).await.unwrap();
        assert_eq!(
            next.iter().map(|e| e.route_id).collect::<Vec<_>>(),
            vec![99],
            "an event a second later starts the next burst"
        );
        drop(tx);
        assert!(gather(&mut rx, BURST_GATHERS, |_| {}).await.is_none());
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
