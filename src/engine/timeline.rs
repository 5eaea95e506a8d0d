//! A route drawn over time: each attempt from start to end, the time
//! between attempts with why it passed (a provider reset, a scheduled retry,
//! a person's turn), and marks for what happened at one instant (a skip, a
//! stop, a person starting the next attempt, a dispatch an account's limit
//! held back). Read from the stored history and the route row; the typed
//! decision of each failed attempt or held dispatch says what its gap was,
//! a person's action inside a wait ends it (the route waits for them from
//! then on), and each recorded manual action is a mark of its own (for
//! routes from before actions were recorded, they are inferred).

use chrono::{DateTime, Utc};

use super::{GapReason, TimelineEntry};
use crate::account::AccountNames;
use crate::evaluator::Decision;
use crate::route::{AttemptOutcome, Decided, HoldReason, RouteRow, RouteState};
use crate::store::accounts::StoredHold;
use crate::store::routes::{StoredAction, StoredAttempt};

/// Marks inferred from the history where a person must have acted; a
/// recorded action at the same instant replaces them.
const STARTED_AGAIN: &str = "started again by you";
const RETRIED_NOW: &str = "retried now by you";
const SKIPPED_NOW: &str = "skipped now by you";
const WAIT_CANCELLED: &str = "wait cancelled by you";
const STOPPED: &str = "stopped by you";
const INFERRED: [&str; 5] = [
    STARTED_AGAIN,
    RETRIED_NOW,
    SKIPPED_NOW,
    WAIT_CANCELLED,
    STOPPED,
];

/// The timeline of `row` from its attempts, held dispatches and manual
/// actions, oldest first, each account by its name in `names`.
pub(crate) fn timeline(
    row: &RouteRow,
    attempts: &[StoredAttempt],
    holds: &[StoredHold],
    actions: &[StoredAction],
    names: &AccountNames,
) -> Vec<TimelineEntry> {
    let mut entries = from_history(row, attempts, holds, actions, names);
    entries.retain(|e| match e {
        TimelineEntry::Mark { at, label } => {
            !(INFERRED.contains(&label.as_str()) && actions.iter().any(|a| a.record.at == *at))
        }
        TimelineEntry::Attempt { .. } | TimelineEntry::Gap { .. } => true,
    });
    for a in actions {
        let r = &a.record;
        let label = format!("{} {}", r.action.as_str().replace('-', " "), r.by.words());
        // After marks of the same instant (an earlier action's), but before
        // the attempt it started or the wait it began.
        let place = entries
            .iter()
            .position(|e| match e {
                TimelineEntry::Attempt { start, .. } | TimelineEntry::Gap { start, .. } => {
                    *start >= r.at
                }
                TimelineEntry::Mark { at, .. } => *at > r.at,
            })
            .unwrap_or(entries.len());
        entries.insert(place, mark(r.at, &label));
    }
    entries
}

/// A dispatch in the history: an attempt that ran, or one a limit held back.
enum Dispatch<'a> {
    Ran(&'a StoredAttempt),
    Held(&'a StoredHold),
}

impl Dispatch<'_> {
    fn at(&self) -> DateTime<Utc> {
        match self {
            Dispatch::Ran(s) => s.attempt.started_at,
            Dispatch::Held(h) => h.record.at,
        }
    }

    fn candidate(&self) -> (u32, &str) {
        match self {
            Dispatch::Ran(s) => (s.attempt.candidate_index, &s.attempt.candidate_name),
            Dispatch::Held(h) => (h.record.candidate_index, &h.record.candidate_name),
        }
    }
}

fn from_history(
    row: &RouteRow,
    attempts: &[StoredAttempt],
    holds: &[StoredHold],
    actions: &[StoredAction],
    names: &AccountNames,
) -> Vec<TimelineEntry> {
    // In time order; a hold before an attempt of the same instant (its
    // policy skipped to that attempt's candidate).
    let mut dispatches: Vec<Dispatch<'_>> = holds
        .iter()
        .map(Dispatch::Held)
        .chain(attempts.iter().map(Dispatch::Ran))
        .collect();
    dispatches.sort_by_key(|d| (d.at(), matches!(d, Dispatch::Ran(_))));
    let mut entries = Vec::new();
    for (i, dispatch) in dispatches.iter().enumerate() {
        let next = dispatches.get(i + 1);
        let (candidate_index, _) = dispatch.candidate();
        let same_candidate = next.is_none_or(|n| n.candidate().0 == candidate_index);
        let next_name = next.map(|n| n.candidate().1);
        let after = |from| After {
            from,
            next_start: next.map(Dispatch::at),
            route: row,
            actions,
        };
        match dispatch {
            Dispatch::Held(h) => {
                let r = &h.record;
                let learned = if r.mark.route_id == row.id {
                    String::new()
                } else {
                    format!(", learned from route {}", r.mark.route_id)
                };
                entries.push(mark(
                    r.at,
                    &format!(
                        "not dispatched to {}: {} limited{learned}",
                        r.candidate_name,
                        names.of(&r.mark.account)
                    ),
                ));
                after(r.at).decided(&mut entries, &r.decision, same_candidate, next_name);
            }
            Dispatch::Ran(stored) => {
                let a = &stored.attempt;
                let result = stored.result.as_ref();
                entries.push(TimelineEntry::Attempt {
                    number: a.number,
                    candidate_name: a.candidate_name.clone(),
                    start: a.started_at,
                    end: result.map(|r| r.finished_at),
                    outcome: result.map(|r| r.outcome),
                });
                let Some(r) = result else { continue };
                let after = after(r.finished_at);
                match r.outcome {
                    AttemptOutcome::Succeeded => {}
                    AttemptOutcome::Killed => {
                        entries.push(mark(r.finished_at, "stopped while it ran"));
                        after.person(&mut entries);
                    }
                    AttemptOutcome::Interrupted => {
                        entries.push(mark(r.finished_at, "interrupted: its engine was gone"));
                        after.person(&mut entries);
                    }
                    AttemptOutcome::Failed => match r.decision.as_ref() {
                        Some(Decided::Typed(d)) => {
                            after.decided(&mut entries, d, same_candidate, next_name);
                        }
                        Some(
                            Decided::MovedOn
                            // A hold is a dispatch's record, never an attempt's.
                            | Decided::Held { .. }
                            | Decided::Words(_),
                        )
                        | None => after.person(&mut entries),
                    },
                }
            }
        }
    }
    entries
}

fn mark(at: DateTime<Utc>, label: &str) -> TimelineEntry {
    TimelineEntry::Mark {
        at,
        label: label.to_string(),
    }
}

/// What followed an attempt that ended at `from`.
struct After<'a> {
    from: DateTime<Utc>,
    /// When the next attempt started, if one did.
    next_start: Option<DateTime<Utc>>,
    route: &'a RouteRow,
    /// The route's recorded manual actions: one inside a wait ends it.
    actions: &'a [StoredAction],
}

impl After<'_> {
    /// What the failed attempt's (or held dispatch's) `decision` made of
    /// the time after it; `next_name` is the next dispatch's candidate.
    fn decided(
        &self,
        entries: &mut Vec<TimelineEntry>,
        decision: &Decision,
        same_candidate: bool,
        next_name: Option<&str>,
    ) {
        match decision {
            Decision::WaitForReset { until, .. } => self.timed(
                entries,
                GapReason::ResetWait,
                *until,
                "waiting for the provider's reset".into(),
                same_candidate,
            ),
            Decision::Retry {
                at,
                ordinal,
                max_retries,
                delay_seconds,
                ..
            } => self.timed(
                entries,
                GapReason::Retry,
                *at,
                format!(
                    "retry {ordinal} of {max_retries} after {}",
                    crate::timing::words::exact(u64::from(*delay_seconds))
                ),
                same_candidate,
            ),
            skip @ (Decision::Skip { .. } | Decision::SkipRepeated { .. }) => {
                let to = next_name.unwrap_or("the next candidate");
                let why = if let Decision::SkipRepeated { identical, .. } = skip {
                    format!(" after {identical} identical unclassified failures")
                } else {
                    String::new()
                };
                entries.push(mark(self.from, &format!("skipped to {to}{why}")));
            }
            Decision::Continue {
                ordinal,
                max_continuations,
                ..
            } => entries.push(mark(
                self.from,
                &format!("continued its session automatically ({ordinal} of {max_continuations})"),
            )),
            Decision::Stop { .. } | Decision::Manual { .. } => self.person(entries),
        }
    }

    /// The first manual action strictly after the wait began and before
    /// `before` (`None`: no end known) that started no attempt: a person
    /// cancelled the wait or stopped the route there.
    fn ended_by_person(&self, before: Option<DateTime<Utc>>) -> Option<DateTime<Utc>> {
        self.actions
            .iter()
            .map(|a| &a.record)
            .find(|r| {
                r.at > self.from && before.is_none_or(|b| r.at < b) && r.dispatched().is_none()
            })
            .map(|r| r.at)
    }

    /// The route waited for a person: until the next attempt (which a
    /// person started), or still, when this was the last attempt.
    fn person(&self, entries: &mut Vec<TimelineEntry>) {
        let label = match (self.next_start, self.route.state) {
            (Some(_), _) => "waited for you",
            (None, RouteState::Stopped) => STOPPED,
            (None, _) => "needs you",
        };
        entries.push(TimelineEntry::Gap {
            start: self.from,
            end: self.next_start,
            due: None,
            why: GapReason::Person,
            label: label.to_string(),
        });
        if let Some(at) = self.next_start {
            entries.push(mark(at, STARTED_AGAIN));
        }
    }

    /// A wait or retry due at `due`: it ran out, was cut short by a person,
    /// or is still pending.
    fn timed(
        &self,
        entries: &mut Vec<TimelineEntry>,
        why: GapReason,
        due: DateTime<Utc>,
        label: String,
        same_candidate: bool,
    ) {
        let pending = self.next_start.is_none() && self.route.state.is_waiting();
        // A person cancelled it (or stopped the route) and a later action
        // went on: the wait ends there, and the route waited for them.
        if let (Some(next), Some(cut)) = (self.next_start, self.ended_by_person(self.next_start)) {
            entries.push(TimelineEntry::Gap {
                start: self.from,
                end: Some(cut),
                due: Some(due),
                why,
                label,
            });
            After {
                from: cut,
                next_start: Some(next),
                ..*self
            }
            .person(entries);
            return;
        }
        // Ended by a person: an action before the deadline, or no dispatch
        // after it (the wait was cancelled or the route stopped).
        let ended = match self.next_start {
            Some(at) => at,
            None if pending => {
                entries.push(TimelineEntry::Gap {
                    start: self.from,
                    end: None,
                    due: Some(due),
                    why,
                    label,
                });
                return;
            }
            None => self.ended_by_person(None).unwrap_or(self.route.updated_at),
        };
        entries.push(TimelineEntry::Gap {
            start: self.from,
            end: Some(ended),
            due: Some(due),
            why,
            label,
        });
        let early = ended + chrono::Duration::seconds(1) < due;
        match self.next_start {
            Some(at) if !same_candidate => entries.push(mark(at, SKIPPED_NOW)),
            Some(at) if early => entries.push(mark(at, RETRIED_NOW)),
            Some(_) => {}
            None => {
                let label = match &self.route.manual_reason {
                    Some(HoldReason::WaitCancelled) => WAIT_CANCELLED,
                    Some(HoldReason::StoppedByYou { .. }) => STOPPED,
                    _ => "ended",
                };
                entries.push(mark(ended, label));
                self.person_after(entries, ended);
            }
        }
    }

    /// The person's turn from `at` on, after a wait a person ended.
    fn person_after(&self, entries: &mut Vec<TimelineEntry>, at: DateTime<Utc>) {
        After {
            from: at,
            next_start: None,
            ..*self
        }
        .person(entries);
    }
}
