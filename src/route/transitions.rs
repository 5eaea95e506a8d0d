//! The route's transition table: the states each event can lead to from each
//! state, and so the manual actions a state offers.
//!
//! The [`super::machine`] asks this table whether an event applies before it
//! plans anything; a test there runs every state × event pair against the
//! machine, and a test here keeps the table in `docs/architecture.md` equal to
//! this one, so the three cannot drift apart.

use super::{ManualAction, RouteState};

/// Something that happens to a route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// Its pending wait or retry came due.
    TimerFired,
    /// Its running attempt succeeded.
    AttemptSucceeded,
    /// Its running attempt failed; the evaluator's decision picks the target.
    AttemptFailed,
    /// Its running attempt was found without its engine (a restart).
    Interrupted,
    /// A slot it queued for may be free: its account's probe answered, an
    /// agent ended, a limit was raised. A new route is created queued and
    /// released at once, in one transaction.
    Released,
    /// A person asked for an action.
    Manual(ManualAction),
}

impl Event {
    pub const ALL: [Event; 12] = [
        Event::TimerFired,
        Event::AttemptSucceeded,
        Event::AttemptFailed,
        Event::Interrupted,
        Event::Released,
        Event::Manual(ManualAction::RetryNow),
        Event::Manual(ManualAction::SkipNow),
        Event::Manual(ManualAction::CancelWait),
        Event::Manual(ManualAction::Stop),
        Event::Manual(ManualAction::Resume),
        Event::Manual(ManualAction::Continue),
        Event::Manual(ManualAction::Handover),
    ];
}

/// Where a continue or a hand-over can end: the agent runs, or nothing
/// happens (one that cannot start an agent at once is refused, never queued
/// to be released later with the plain prompt).
const CONTINUATION: &[RouteState] = &[RouteState::Running];

/// Where a dispatch can end: the agent runs; it waits for a slot; or its
/// account is limited and the candidate's policy decides as if the failure
/// had just happened (wait, retry, skip to the next candidate, or a person).
const DISPATCH: &[RouteState] = &[
    RouteState::Running,
    RouteState::Queued,
    RouteState::WaitingReset,
    RouteState::RetryScheduled,
    RouteState::NeedsManual,
];

/// Where a person's retry now can end: the agent runs, or it waits for a
/// slot. A limit in force on the candidate's account refuses it: the held
/// dispatch would let the policy skip or stop instead of what was asked.
const RETRY_NOW: &[RouteState] = &[RouteState::Running, RouteState::Queued];

/// The states `event` can lead to from `state`; empty when it does not apply
/// there (refused, or already done).
pub fn after(state: RouteState, event: Event) -> &'static [RouteState] {
    use ManualAction::{CancelWait, Continue, Handover, Resume, RetryNow, SkipNow, Stop};
    use RouteState::{
        NeedsManual, Queued, RetryScheduled, Running, Stopped, Succeeded, WaitingReset,
    };
    const NONE: &[RouteState] = &[];
    match state {
        Running => match event {
            Event::AttemptSucceeded => &[Succeeded],
            // A failure's decision, or the dispatch of a skip or an
            // automatic continuation.
            Event::AttemptFailed => DISPATCH,
            Event::Interrupted => &[NeedsManual],
            Event::Manual(Stop) => &[Stopped],
            Event::TimerFired
            | Event::Released
            | Event::Manual(RetryNow | SkipNow | CancelWait | Resume | Continue | Handover) => NONE,
        },
        WaitingReset | RetryScheduled => match event {
            Event::TimerFired | Event::Manual(SkipNow) => DISPATCH,
            Event::Manual(RetryNow) => RETRY_NOW,
            Event::Manual(CancelWait) => &[NeedsManual],
            Event::Manual(Stop) => &[Stopped],
            Event::AttemptSucceeded
            | Event::AttemptFailed
            | Event::Interrupted
            | Event::Released
            | Event::Manual(Resume | Continue | Handover) => NONE,
        },
        Queued => match event {
            Event::Released | Event::Manual(SkipNow) => DISPATCH,
            Event::Manual(CancelWait) => &[NeedsManual],
            Event::Manual(Stop) => &[Stopped],
            Event::TimerFired
            | Event::AttemptSucceeded
            | Event::AttemptFailed
            | Event::Interrupted
            | Event::Manual(RetryNow | Resume | Continue | Handover) => NONE,
        },
        NeedsManual => match event {
            Event::Manual(SkipNow) => DISPATCH,
            Event::Manual(RetryNow) => RETRY_NOW,
            Event::Manual(Continue | Handover) => CONTINUATION,
            Event::Manual(Stop) => &[Stopped],
            Event::TimerFired
            | Event::AttemptSucceeded
            | Event::AttemptFailed
            | Event::Interrupted
            | Event::Released
            | Event::Manual(CancelWait | Resume) => NONE,
        },
        Stopped => match event {
            Event::Manual(Resume) => DISPATCH,
            Event::Manual(Continue | Handover) => CONTINUATION,
            Event::TimerFired
            | Event::AttemptSucceeded
            | Event::AttemptFailed
            | Event::Interrupted
            | Event::Released
            | Event::Manual(RetryNow | SkipNow | CancelWait | Stop) => NONE,
        },
        Succeeded => NONE,
    }
}

/// The manual actions `state` offers, in display order.
pub fn actions(state: RouteState) -> impl Iterator<Item = ManualAction> {
    ManualAction::ALL
        .into_iter()
        .filter(move |a| !after(state, Event::Manual(*a)).is_empty())
}

/// Whether `action` starts an agent: it leads to `running` from some state.
pub fn dispatches(action: ManualAction) -> bool {
    RouteState::ALL
        .into_iter()
        .any(|state| after(state, Event::Manual(action)).contains(&RouteState::Running))
}

/// The manual actions that start an agent, for views that warn before one.
pub fn dispatching_actions() -> Vec<ManualAction> {
    ManualAction::ALL
        .into_iter()
        .filter(|a| dispatches(*a))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_skip_resume_continue_and_handover_dispatch_and_cancel_and_stop_do_not() {
        assert_eq!(
            dispatching_actions(),
            [
                ManualAction::RetryNow,
                ManualAction::SkipNow,
                ManualAction::Resume,
                ManualAction::Continue,
                ManualAction::Handover
            ]
        );
    }

    const DOC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/architecture.md");
    const BEGIN: &str = "<!-- transitions:begin (generated by src/route/transitions.rs) -->\n";
    const END: &str = "<!-- transitions:end -->";

    fn event_name(event: Event) -> String {
        match event {
            Event::TimerFired => "timer fired".into(),
            Event::AttemptSucceeded => "attempt succeeded".into(),
            Event::AttemptFailed => "attempt failed".into(),
            Event::Interrupted => "interrupted".into(),
            Event::Released => "released".into(),
            Event::Manual(action) => format!("`{}`", action.as_str()),
        }
    }

    /// The table as markdown: one row per state, one column per event.
    fn markdown() -> String {
        let mut out = String::from("| from \\ event |");
        for event in Event::ALL {
            out += &format!(" {} |", event_name(event));
        }
        out += &format!("\n|---|{}\n", "---|".repeat(Event::ALL.len()));
        for state in RouteState::ALL {
            out += &format!("| {} |", state.as_str());
            for event in Event::ALL {
                let to: Vec<&str> = after(state, event).iter().map(|s| s.as_str()).collect();
                let cell = if to.is_empty() {
                    "–".into()
                } else {
                    to.join(", ")
                };
                out += &format!(" {cell} |");
            }
            out += "\n";
        }
        out
    }

    #[test]
    fn the_documented_transition_table_is_the_code_table() {
        let doc = std::fs::read_to_string(DOC).expect("docs/architecture.md is readable");
        let expected = markdown();
        if std::env::var_os("UPDATE_DOCS").is_some() {
            let (head, rest) = doc.split_once(BEGIN).expect("begin marker");
            let (_, tail) = rest.split_once(END).expect("end marker");
            std::fs::write(DOC, format!("{head}{BEGIN}{expected}{END}{tail}")).unwrap();
            return;
        }
        let table = doc
            .split_once(BEGIN)
            .and_then(|(_, rest)| rest.split_once(END))
            .map(|(table, _)| table)
            .expect("docs/architecture.md has the transition table markers");
        assert_eq!(
            table, expected,
            "the docs drifted from the code; rerun with UPDATE_DOCS=1 to regenerate"
        );
    }
}
