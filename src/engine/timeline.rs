//! A route drawn over time: each attempt from start to end, the time
//! between attempts with why it passed (a provider reset, a scheduled retry,
//! a person's turn), and marks for what happened at one instant (a skip, a
//! stop, a person starting the next attempt). Read from the stored history
//! and the route row; the typed decision of each failed attempt says what
//! its gap was, and each recorded manual action is a mark of its own (for
//! routes from before actions were recorded, they are inferred).

use chrono::{DateTime, Utc};

use super::{GapReason, TimelineEntry};
use crate::evaluator::Decision;
use crate::route::{AttemptOutcome, Decided, HoldReason, RouteRow, RouteState};
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

/// The timeline of `row` from its attempts and manual actions, oldest first.
pub(crate) fn timeline(
    row: &RouteRow,
    attempts: &[StoredAttempt],
    actions: &[StoredAction],
) -> Vec<TimelineEntry> {
    let mut entries = from_attempts(row, attempts);
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

fn from_attempts(row: &RouteRow, attempts: &[StoredAttempt]) -> Vec<TimelineEntry> {
    let mut entries = Vec::new();
    for (i, stored) in attempts.iter().enumerate() {
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
        let next = attempts.get(i + 1).map(|n| &n.attempt);
        let after = After {
            from: r.finished_at,
            next_start: next.map(|n| n.started_at),
            route: row,
        };
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
            AttemptOutcome::Failed => {
                let same_candidate = next.is_none_or(|n| n.candidate_index == a.candidate_index);
                match r.decision.as_ref() {
                    Some(Decided::Typed(Decision::WaitForReset { until, .. })) => after.timed(
                        &mut entries,
                        GapReason::ResetWait,
                        *until,
                        "waiting for the provider's reset".into(),
                        same_candidate,
                    ),
                    Some(Decided::Typed(Decision::Retry {
                        at,
                        ordinal,
                        max_retries,
                        delay_seconds,
                        ..
                    })) => after.timed(
                        &mut entries,
                        GapReason::Retry,
                        *at,
                        format!(
                            "retry {ordinal} of {max_retries} after {}",
                            crate::timing::words::exact(u64::from(*delay_seconds))
                        ),
                        same_candidate,
                    ),
                    Some(Decided::Typed(
                        skip @ (Decision::Skip { .. } | Decision::SkipRepeated { .. }),
                    )) => {
                        let to = next.map_or("the next candidate", |n| n.candidate_name.as_str());
                        let why = if let Decision::SkipRepeated { identical, .. } = skip {
                            format!(" after {identical} identical unclassified failures")
                        } else {
                            String::new()
                        };
                        entries.push(mark(r.finished_at, &format!("skipped to {to}{why}")));
                    }
                    Some(Decided::Typed(Decision::Continue {
                        ordinal,
                        max_continuations,
                        ..
                    })) => entries.push(mark(
                        r.finished_at,
                        &format!(
                            "continued its session automatically ({ordinal} of {max_continuations})"
                        ),
                    )),
                    Some(
                        Decided::Typed(Decision::Stop { .. } | Decision::Manual { .. })
                        | Decided::MovedOn
                        // A hold is a dispatch's record, never an attempt's.
                        | Decided::Held { .. }
                        | Decided::Words(_),
                    )
                    | None => after.person(&mut entries),
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
}

impl After<'_> {
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
        // Ended by a person: an action before the deadline, or no attempt
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
            None => self.route.updated_at,
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
            route: self.route,
        }
        .person(entries);
    }
}
