//! Throttle or quota: when the words do not say which window ran out, the
//! distance to the provider's reset does.
//!
//! A throttle (`rate_limited`, transient) clears within minutes; a quota or
//! usage window (`quota_exhausted`, `usage_limit_reached`, hard) clears in
//! hours or days. Providers use one status (429) and often one sentence for
//! both, but a trusted reset hint tells them apart. Two places use it:
//!
//! - a throttle whose reset is further than [`SHORT_THROTTLE_MAX`] after
//!   `occurred_at` is a quota (`retry-after: 604800` on a bare 429);
//! - a tie between a throttle rule and a quota rule (Gemini's "You exceeded
//!   your current quota" with `RESOURCE_EXHAUSTED`) goes to the throttle when
//!   the reset is within the bound and to the quota when it is beyond. Without
//!   a hint the tie stays a conflict, which fails closed.
//!
//! The bound is measured from `occurred_at`, never from a clock, so the result
//! is the same whenever the evidence is classified. A long hint never turns a
//! quota into a throttle or touches any other code.

use chrono::{DateTime, TimeDelta, Utc};
use chrono_tz::Tz;

use super::hints::hint_for;
use super::matcher::RuleMatch;
use super::select::{MatchOutcome, Selection};
use crate::classification::{SemanticCode, Span};
use crate::evidence::Evidence;
use crate::timing::TimingHint;

/// Longest reset a throttle may have; a later reset is a quota window.
///
/// 15 minutes: real throttles reset within a minute or two (OpenAI's
/// per-minute buckets, Anthropic's token buckets, Gemini's `retryDelay` of
/// under 60 s, Azure's "retry after N seconds"), while the windows that are
/// not throttles reset in hours or days (per-day quotas, 5-hour and weekly
/// plan limits, monthly spend caps). Fifteen minutes leaves a wide margin
/// above the first and stays far below the second; a wait that long is also
/// past what retrying with backoff is for.
pub const SHORT_THROTTLE_MAX: TimeDelta = TimeDelta::minutes(15);

/// How far away a trusted reset is, against [`SHORT_THROTTLE_MAX`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Window {
    /// Within the bound: a throttle.
    Short,
    /// Beyond the bound: a quota or usage window.
    Long,
}

impl Window {
    pub(crate) fn of(hint: &TimingHint, occurred_at: DateTime<Utc>) -> Window {
        if hint.reset_at - occurred_at <= SHORT_THROTTLE_MAX {
            Window::Short
        } else {
            Window::Long
        }
    }

    /// How the explanation describes the comparison.
    pub(crate) fn phrase(self) -> &'static str {
        match self {
            Window::Short => "within",
            Window::Long => "beyond",
        }
    }
}

/// The code a selected rule's code becomes once its reset is known.
pub(crate) fn code_for(code: SemanticCode, window: Option<Window>) -> SemanticCode {
    if is_throttle(code) && window == Some(Window::Long) {
        SemanticCode::QuotaExhausted
    } else {
        code
    }
}

/// The text "the provider's reset is N away", for explanations.
pub(crate) fn distance(hint: &TimingHint, occurred_at: DateTime<Utc>) -> String {
    let seconds = (hint.reset_at - occurred_at).num_seconds().max(0);
    crate::timing::words::readable(u64::try_from(seconds).unwrap_or(0))
}

/// A throttle/quota tie that a reset hint settled.
#[derive(Debug, Clone)]
pub(crate) struct Settlement {
    pub hint: TimingHint,
    pub window: Window,
    /// Descriptions of the tied rules that lost, for the sentence.
    pub rivals: Vec<String>,
}

/// Settles a conflict made only of throttle and quota rules by the reset
/// distance, marking the chosen rule selected and the rest outranked.
/// Any other conflict, or one without a trusted hint, is left as it is.
pub(crate) fn settle(
    selection: &mut Selection<'_>,
    evidence: &Evidence,
    local_tz: Tz,
) -> Option<Settlement> {
    let tied = selection.conflicting();
    if tied.is_empty()
        || !tied
            .iter()
            .all(|m| is_throttle(m.rule.code) || is_window(m.rule.code))
    {
        return None;
    }
    let from = earliest_span(&tied);
    let hint = tied
        .iter()
        .find_map(|m| hint_for(m.rule, evidence, from, local_tz))?;
    let window = Window::of(&hint, evidence.occurred_at);
    let wanted = |m: &RuleMatch<'_>| match window {
        Window::Short => is_throttle(m.rule.code),
        Window::Long => is_window(m.rule.code),
    };
    let chosen = tied.iter().find(|m| wanted(m))?.index;
    let mut rivals = Vec::new();
    for (m, outcome) in &mut selection.ranked {
        if *outcome != MatchOutcome::Conflicting {
            continue;
        }
        if m.index == chosen {
            *outcome = MatchOutcome::Selected;
        } else {
            *outcome = MatchOutcome::Outranked;
            rivals.push(m.rule.description.clone());
        }
    }
    Some(Settlement {
        hint,
        window,
        rivals,
    })
}

fn is_throttle(code: SemanticCode) -> bool {
    code == SemanticCode::RateLimited
}

fn is_window(code: SemanticCode) -> bool {
    matches!(
        code,
        SemanticCode::QuotaExhausted | SemanticCode::UsageLimitReached
    )
}

/// Where to read a text hint from: the first tied match (a structured one
/// means the whole message).
fn earliest_span(tied: &[&RuleMatch<'_>]) -> Option<Span> {
    tied.iter()
        .map(|m| m.span)
        .min_by_key(|span| span.map_or(0, |s| s.start))
        .flatten()
}
