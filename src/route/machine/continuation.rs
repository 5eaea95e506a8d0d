//! Continue and Hand over: manual actions that dispatch with an input other
//! than the route's prompt (see [`AttemptInput`]). The engine finds what
//! they send (the session id, the package) and passes it in; here they are
//! admitted like any action and dispatched through [`dispatch`], so limit
//! marks, the queue and the pause apply. An automatic continuation
//! ([`super::failed`]) is sent the same way, through [`sends`].
//!
//! A continuation that cannot start an agent at once (its account limited
//! or full) is refused rather than left to a later dispatch: a queued route
//! is later released with the plain prompt, which would send the task
//! again where a person asked to continue it.

use chrono::{DateTime, Utc};

use super::{
    accepted_risk, action_record, admit, base, dispatch, next_eligible, Effect, Lease, Plan,
    Refusal, World,
};
use crate::account::AccountNames;
use crate::route::{Ask, AttemptInput, ManualAction, RouteRow, RouteState, TransitionWrite};

/// The action an input stands for, when it is one a person asks for.
fn action_of(input: &AttemptInput) -> Option<ManualAction> {
    match input {
        AttemptInput::Prompt => None,
        AttemptInput::Continue { .. } => Some(ManualAction::Continue),
        AttemptInput::Handover { .. } => Some(ManualAction::Handover),
    }
}

/// A person asked to continue (`input` is a continuation of the last
/// attempt's session) or hand over (`input` carries the package), as `ask`
/// says. Neither sends the prompt as new work, so the route's repeat risk
/// does not ask first; the action is recorded in the route's history.
pub fn manual(
    row: &RouteRow,
    input: AttemptInput,
    ask: Ask,
    lease: Lease<'_>,
    world: World<'_>,
    now: DateTime<Utc>,
) -> Result<Plan, Refusal> {
    let action = ask.action;
    if action_of(&input) != Some(action) {
        return Err(Refusal::Unavailable(
            "a continuation needs what to send: the session to resume or the package to hand over"
                .to_string(),
        ));
    }
    admit(row, action, ask.expected_generation, world)?;
    let risk = accepted_risk(row, ask)?;
    let mut next = base(row, now);
    next.pending_outcome = None;
    if action == ManualAction::Handover {
        let index = next_eligible(row).ok_or(Refusal::NoCandidateLeft)?;
        next.cycle = row.cycle.skip_to(index);
        next.candidate_index = index;
    }
    let plan = dispatch(row, next, TransitionWrite::default(), lease, world, now);
    let mut plan = with_input(plan, input)?;
    plan.write.action = Some(action_record(row, ask, &plan, risk, now));
    Ok(plan)
}

/// The dispatch of `plan` sending `input`; refused when it starts no agent.
fn with_input(mut plan: Plan, input: AttemptInput) -> Result<Plan, Refusal> {
    if sends(&mut plan, input) {
        return Ok(plan);
    }
    Err(Refusal::NotStarted {
        next: Box::new(plan.next),
    })
}

/// Makes `plan`'s dispatch send `input`; `false`, the plan unchanged, when
/// it starts no agent now (a continuation left to a later dispatch would be
/// sent as the plain prompt).
pub(super) fn sends(plan: &mut Plan, input: AttemptInput) -> bool {
    let Effect::Dispatch(attempt) = &mut plan.effect else {
        return false;
    };
    attempt.input = input.clone();
    if let Some(written) = plan.write.dispatch.as_mut() {
        written.input = input;
    }
    true
}

/// Why a dispatch did not start an agent, in words, an account by its name
/// in `names`.
pub(super) fn not_started(next: &RouteRow, names: &AccountNames) -> String {
    match (&next.queued, &next.decision) {
        (Some(q), _) => q.reason.text(names),
        (None, Some(decided)) => decided.text(names).into_owned(),
        (None, None) => match next.state {
            RouteState::RetryScheduled => "new dispatches are paused".to_string(),
            other => format!("after it the route {}", other.after_the_route()),
        },
    }
}
