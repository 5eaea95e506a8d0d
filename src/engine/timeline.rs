//! A route drawn over time: each attempt from start to end, the time
//! between attempts with why it passed (a provider reset, a scheduled retry,
//! a person's turn), and marks for what happened at one instant (a skip, a
//! stop, a person starting the next attempt). Read from the stored history
//! and the route row; the typed decision of each failed attempt says what
//! its gap was.

use chrono::{DateTime, Utc};

use crate::evaluator::Decision;
use crate::route::{AttemptOutcome, Decided, HoldReason, RouteRow, RouteState};
use crate::store::routes::StoredAttempt;
use serde::{Deserialize, Serialize};

/// One piece of a route's timeline, in time order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TimelineEntry {
    /// An attempt from its start to its end (`None`: still running).
    Attempt {
        number: u32,
        candidate_name: String,
        start: DateTime<Utc>,
        end: Option<DateTime<Utc>>,
        outcome: Option<AttemptOutcome>,
    },
    /// Time between attempts, and why; `end` is `None` while it lasts (a
    /// pending wait ends at `due`, a person's turn has no end known).
    Gap {
        start: DateTime<Utc>,
        end: Option<DateTime<Utc>>,
        due: Option<DateTime<Utc>>,
        why: GapReason,
        label: String,
    },
    /// Something that happened at one instant (a skip, a stop).
    Mark { at: DateTime<Utc>, label: String },
}

/// Why a route was between attempts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum GapReason {
    /// Waiting for the provider's reset.
    ResetWait,
    /// A scheduled retry.
    Retry,
    /// Waiting for a person.
    Person,
}

/// The timeline of `row` from its attempts, oldest first.
pub(crate) fn timeline(row: &RouteRow, attempts: &[StoredAttempt]) -> Vec<TimelineEntry> {
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
                        format!("retry {ordinal} of {max_retries} after {delay_seconds} s"),
                        same_candidate,
                    ),
                    Some(Decided::Typed(Decision::Skip { .. })) => {
                        let to = next.map_or("the next candidate", |n| n.candidate_name.as_str());
                        entries.push(mark(r.finished_at, &format!("skipped to {to}")));
                    }
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
            (None, RouteState::Stopped) => "stopped by you",
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
            entries.push(mark(at, "started again by you"));
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
            Some(at) if !same_candidate => entries.push(mark(at, "skipped now by you")),
            Some(at) if early => entries.push(mark(at, "retried now by you")),
            Some(_) => {}
            None => {
                let label = match &self.route.manual_reason {
                    Some(HoldReason::WaitCancelled) => "wait cancelled by you",
                    Some(HoldReason::StoppedByYou) => "stopped by you",
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
