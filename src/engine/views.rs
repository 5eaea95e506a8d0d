//! Every projection the engine hands out — route snapshots, pages, details,
//! attempts — from stored rows. The engine and the read-only
//! [`super::RouteViewer`] answer with the same functions.

use super::{
    ActionView, AttemptTranscript, AttemptView, ClassificationSummary, EngineError, HoldView,
    LastFailure, RetryProgress, RouteCounts, RouteDetail, RoutePage, RouteQuery, RouteSnapshot,
    UnavailableAction,
};
use crate::account::AccountNames;
use crate::agent::{TranscriptSummary, Usage};
use crate::classification::{Classification, PolicyClass, SemanticCode};
use crate::evaluator::Decision;
use crate::route::{machine, Decided, HoldReason, QueueReason, RouteRow, RouteState};
use crate::store::accounts::StoredHold;
use crate::store::routes::{RouteScope, StoredAction, StoredAttempt};
use crate::store::{RouteSearch, Store};

/// The names of the accounts `rows` speak of, read from the saved
/// candidates only when one does (queued for its account, or held by its
/// limit): publishing a transition reads nothing more otherwise. Unreadable
/// names fall back to the accounts' kinds and hashes, never the ids.
pub(crate) fn names_for<'r>(
    store: &Store,
    rows: impl IntoIterator<Item = &'r RouteRow>,
) -> AccountNames {
    let speaks = |row: &RouteRow| {
        row.queued
            .as_ref()
            .is_some_and(|q| !matches!(q.reason, QueueReason::GlobalFull))
            || matches!(row.decision, Some(Decided::Held { .. }))
    };
    if !rows.into_iter().any(speaks) {
        return AccountNames::default();
    }
    super::account_views::account_names(store).unwrap_or_else(|e| {
        tracing::warn!("cannot read the accounts' names: {e}");
        AccountNames::default()
    })
}

impl super::Engine {
    /// `row` as the UI sees it, its accounts named (see [`names_for`]).
    pub(super) fn snapshot_of(&self, row: &RouteRow) -> RouteSnapshot {
        snapshot(row, &names_for(&self.store(), [row]))
    }

    /// `rows` as the UI sees them, the accounts' names read once.
    pub(super) fn snapshots(&self, rows: &[RouteRow]) -> Vec<RouteSnapshot> {
        let names = names_for(&self.store(), rows);
        rows.iter().map(|r| snapshot(r, &names)).collect()
    }

    /// Every account's name: a refusal may speak of any candidate's.
    pub(super) fn account_names(&self) -> AccountNames {
        super::account_views::account_names(&self.store()).unwrap_or_else(|e| {
            tracing::warn!("cannot read the accounts' names: {e}");
            AccountNames::default()
        })
    }
}

/// The UI's view of a route row, its accounts by their names in `names`.
pub(crate) fn snapshot(row: &RouteRow, names: &AccountNames) -> RouteSnapshot {
    let index = row.candidate_index as usize;
    let candidate = row.candidates.get(index);
    // The last failure's class and policy speak for the current candidate
    // only if it is the one that failed (not after a skip).
    let current_failed = row.failed_candidate == Some(row.candidate_index);
    let skip_to = next_candidate(row);
    let policy_class = row
        .classification
        .as_ref()
        .filter(|_| current_failed)
        .and_then(|c| c.class.policy_class());
    let pending = match row.state {
        RouteState::Running
        | RouteState::WaitingReset
        | RouteState::RetryScheduled
        | RouteState::Queued => row.pending_outcome.filter(|_| current_failed),
        RouteState::NeedsManual | RouteState::Stopped | RouteState::Succeeded => None,
    };
    RouteSnapshot {
        id: row.id,
        profile_name: row.profile_name.clone(),
        state: row.state,
        generation: row.generation,
        candidate_index: row.candidate_index,
        candidate_name: candidate.map(|c| c.name.clone()).unwrap_or_default(),
        candidate_count: row.candidates.len() as u32,
        last_failure: last_failure(row, names),
        retry: policy_class.map(|class| retry_progress(row, class)),
        pending_outcome: pending,
        skip_to: skip_to.map(str::to_string),
        repeat_risk: machine::repeat_risk(row).map(|r| r.text()),
        deadline: row.deadline,
        provider_reset_at: row
            .classification
            .as_ref()
            .filter(|_| current_failed)
            .and_then(|c| c.reset_at),
        manual_reason: row
            .manual_reason
            .as_ref()
            .map(|r| r.text_then(skip_to).into_owned()),
        cannot_start: matches!(row.manual_reason, Some(HoldReason::CannotStart { .. })),
        queued: row.queued.as_ref().map(|q| q.reason.text(names)),
        account: row.account().map(|a| a.to_string()),
        prompt_excerpt: prompt_excerpt(&row.prompt),
        cwd: row.cwd.clone(),
        archived_at: row.archived_at,
        attempts: row.attempts,
        owner: row.owner.clone(),
        created_at: row.created_at,
        updated_at: row.updated_at,
        actions: machine::valid_actions(row),
        unavailable: machine::unavailable(row)
            .into_iter()
            .map(|(action, why)| UnavailableAction { action, why })
            .collect(),
    }
}

/// The candidate Skip now would run, by name.
fn next_candidate(row: &RouteRow) -> Option<&str> {
    machine::next_eligible(row)
        .and_then(|i| row.candidates.get(i as usize))
        .map(|c| c.name.as_str())
}

fn retry_progress(row: &RouteRow, class: PolicyClass) -> RetryProgress {
    let policy = row.policy.as_ref().or(row
        .candidates
        .get(row.candidate_index as usize)
        .map(|c| &c.policy));
    let retry = policy.map(|p| p.section(class).retry);
    RetryProgress {
        class,
        ordinal: row.cycle.usage_of(row.cycle.current, class).retries_used,
        max: retry.filter(|r| r.enabled).map_or(0, |r| r.max_retries),
    }
}

fn last_failure(row: &RouteRow, names: &AccountNames) -> Option<LastFailure> {
    let classification = row.classification.as_ref()?;
    let index = row.failed_candidate.unwrap_or(row.candidate_index);
    Some(LastFailure {
        candidate_index: index,
        candidate_name: row
            .candidates
            .get(index as usize)
            .map(|c| c.name.clone())
            .unwrap_or_default(),
        classification: summary(classification),
        decision: row.decision.as_ref().map(|d| {
            let cause = match &row.manual_reason {
                Some(HoldReason::CannotStart { cause }) => Some(cause.as_str()),
                _ => None,
            };
            decision_text(d, Some(classification), cause, next_candidate(row), names)
        }),
    })
}

/// A decision in words. For a program that would not start, the cause and
/// the fix lead, in the words the route's headline uses, rather than the
/// failure's class: "unclassified (spawn_failed)" tells a person nothing.
/// `cause`: the failure's message (`cannot start claude: not found on PATH`).
fn decision_text(
    decided: &Decided,
    classification: Option<&Classification>,
    cause: Option<&str>,
    next: Option<&str>,
    names: &AccountNames,
) -> String {
    let spawn = classification.is_some_and(|c| c.code == SemanticCode::SpawnFailed);
    match (spawn, cause, decided) {
        (true, Some(cause), Decided::Typed(Decision::Manual { .. })) => HoldReason::CannotStart {
            cause: cause.to_string(),
        }
        .text_then(next)
        .into_owned(),
        (true, Some(cause), _) => format!("{cause}; {}", decided.text(names)),
        _ => decided.text(names).into_owned(),
    }
}

pub(crate) fn summary(c: &Classification) -> ClassificationSummary {
    ClassificationSummary {
        code: c.code,
        class: c.class,
        rule_id: c.rule_id.clone(),
        catalogue_version: c.catalogue_version.clone(),
    }
}

/// The first line, at most 80 characters; `…` marks anything left out.
fn prompt_excerpt(prompt: &str) -> String {
    const MAX_CHARS: usize = 80;
    let prompt = prompt.trim();
    let line = prompt.lines().next().unwrap_or_default();
    let cut: String = line.chars().take(MAX_CHARS).collect();
    if cut.len() == prompt.len() {
        cut
    } else {
        format!("{cut}…")
    }
}

/// `next`: the candidate Skip now would run now, which a spawn failure's
/// advice names.
fn attempt_view(
    a: StoredAttempt,
    transcript: Option<TranscriptSummary>,
    in_inbox: bool,
    next: Option<&str>,
    names: &AccountNames,
) -> AttemptView {
    let r = a.result;
    AttemptView {
        input: a.attempt.input,
        number: a.attempt.number,
        generation: a.attempt.generation,
        candidate_index: a.attempt.candidate_index,
        candidate_name: a.attempt.candidate_name,
        invocation_id: a.attempt.invocation_id,
        started_at: a.attempt.started_at,
        finished_at: r.as_ref().map(|r| r.finished_at),
        outcome: r.as_ref().map(|r| r.outcome),
        classification: r
            .as_ref()
            .and_then(|r| r.classification.as_ref().map(summary)),
        decision: r.as_ref().and_then(|r| {
            let d = r.decision.as_ref()?;
            Some(decision_text(
                d,
                r.classification.as_ref(),
                r.excerpt.as_deref(),
                next,
                names,
            ))
        }),
        policy_revision: r.as_ref().and_then(|r| r.policy_revision),
        exit_code: r
            .as_ref()
            .and_then(|r| r.evidence.as_ref())
            .and_then(|e| e.exit_code),
        in_inbox,
        excerpt: r.and_then(|r| r.excerpt),
        transcript,
    }
}

fn hold_view(h: StoredHold, names: &AccountNames) -> HoldView {
    let r = h.record;
    HoldView {
        account_name: names.of(&r.mark.account).into_owned(),
        generation: h.generation,
        candidate_index: r.candidate_index,
        candidate_name: r.candidate_name,
        at: r.at,
        account: r.mark.account.to_string(),
        from_route: r.mark.route_id,
        classification: summary(&r.mark.classification()),
        until: r.mark.until,
        text: Decided::Held {
            account: r.mark.account.clone(),
            model: r.mark.model.clone(),
            until: r.mark.until,
            decision: r.decision,
        }
        .text(names)
        .into_owned(),
    }
}

/// One route with its attempts and what each agent said and did, in brief,
/// and its held dispatches.
pub(crate) fn route_detail(store: &Store, id: u32) -> Result<RouteDetail, EngineError> {
    let row = store
        .route(id)?
        .ok_or_else(|| EngineError::not_found("route", id))?;
    let stored = store.attempts(id)?;
    let actions = store.manual_actions(id)?;
    let held = store.holds(id)?;
    let names = super::account_views::account_names(store)?;
    let timeline = super::timeline::timeline(&row, &stored, &held, &actions, &names);
    let mut summaries = store.transcript_summaries(id)?;
    let inbox = store.inbox_attempts(id)?;
    let totals = summaries.iter().fold(Usage::default(), |sum, (_, s)| {
        sum.plus(Usage {
            input_tokens: s.input_tokens,
            output_tokens: s.output_tokens,
            cost_usd: s.cost_usd,
            ..Usage::default()
        })
    });
    let next = next_candidate(&row);
    let attempts: Vec<AttemptView> = stored
        .into_iter()
        .map(|a| {
            let at = summaries.iter().position(|(n, _)| *n == a.attempt.number);
            let in_inbox = inbox.contains(&a.attempt.number);
            attempt_view(
                a,
                at.map(|i| summaries.swap_remove(i).1),
                in_inbox,
                next,
                &names,
            )
        })
        .collect();
    let holds = held.into_iter().map(|h| hold_view(h, &names)).collect();
    Ok(RouteDetail {
        refused_notice: refused_notice(&row, &attempts),
        snapshot: snapshot(&row, &names),
        prompt: row.prompt.clone(),
        profile_id: row.profile_id,
        timeline,
        attempts,
        totals,
        cwd: row.cwd.clone().or_else(|| {
            std::env::current_dir()
                .ok()
                .map(|d| d.display().to_string())
        }),
        holds,
        manual_actions: actions.into_iter().map(action_view).collect(),
    })
}

fn action_view(a: StoredAction) -> ActionView {
    ActionView {
        generation: a.generation,
        action: a.record.action,
        by: a.record.by,
        at: a.record.at,
        from: a.record.from,
        attempt: a.record.dispatched(),
        text: a.record.text(),
    }
}

/// A success whose agent was refused tool uses says so, naming them and
/// the access level that refused them.
fn refused_notice(row: &RouteRow, attempts: &[AttemptView]) -> Option<String> {
    if row.state != RouteState::Succeeded {
        return None;
    }
    let last = attempts.last()?;
    let refused = &last.transcript.as_ref()?.refused;
    if refused.is_empty() {
        return None;
    }
    let mut names: Vec<&str> = Vec::new();
    for name in refused {
        if !names.contains(&name.as_str()) {
            names.push(name);
        }
    }
    let access = row
        .candidates
        .get(last.candidate_index as usize)
        .map(|c| match c.agent.access {
            Some(level) => format!("its access is {}", level.words()),
            None => "it has no access level, so the CLI's own default applied".to_string(),
        })
        .unwrap_or_default();
    let n = refused.len();
    Some(format!(
        "succeeded, but the agent was refused {n} tool use{} ({}): {access}",
        if n == 1 { "" } else { "s" },
        names.join(", ")
    ))
}

/// One attempt's stored transcript.
pub(crate) fn attempt_transcript(
    store: &Store,
    route_id: u32,
    attempt: u32,
) -> Result<AttemptTranscript, EngineError> {
    let (transcript, files) = store.transcript(route_id, attempt)?.ok_or_else(|| {
        EngineError::not_found(
            "transcript of route/attempt",
            format!("{route_id}/{attempt}"),
        )
    })?;
    Ok(AttemptTranscript {
        route_id,
        attempt,
        transcript,
        files,
    })
}

/// The one route-page query: one page of the list, selected and paged in
/// SQL. Refuses a limit outside 1 to [`RouteQuery::MAX_LIMIT`] and
/// over-long search text, naming the field.
pub(crate) fn route_page(store: &Store, query: &RouteQuery) -> Result<RoutePage, EngineError> {
    if query.limit == 0 || query.limit > RouteQuery::MAX_LIMIT {
        return Err(EngineError::validation(
            "limit",
            format!(
                "must be 1 to {} routes per page {}",
                RouteQuery::MAX_LIMIT,
                crate::amount::too_few_or_many(1, query.limit)
            ),
        ));
    }
    let chars = query.search.chars().count();
    if chars > RouteQuery::MAX_SEARCH_CHARS {
        return Err(EngineError::validation(
            "search",
            format!(
                "must be at most {} characters ({chars} is too many)",
                RouteQuery::MAX_SEARCH_CHARS
            ),
        ));
    }
    // One more than asked tells whether an older page exists.
    let scope = if query.filter.archived() {
        RouteScope::Archived
    } else {
        RouteScope::Listed
    };
    let mut rows = store.routes_page(
        scope,
        query.filter.states(),
        &RouteSearch::new(&query.search),
        query.before,
        query.limit + 1,
    )?;
    let more = rows.len() > query.limit as usize;
    rows.truncate(query.limit as usize);
    let names = names_for(store, &rows);
    Ok(RoutePage {
        routes: rows.iter().map(|r| snapshot(r, &names)).collect(),
        more,
        counts: route_counts(store)?,
    })
}

/// How many routes each list filter holds, from an index.
pub(crate) fn route_counts(store: &Store) -> Result<RouteCounts, EngineError> {
    let archived = store.state_counts(RouteScope::Archived)?;
    Ok(RouteCounts::of(
        &store.state_counts(RouteScope::Listed)?,
        archived.iter().map(|(_, n)| n).sum(),
    ))
}

#[cfg(test)]
mod tests {
    use super::prompt_excerpt;

    #[test]
    fn prompt_excerpt_is_the_first_line_cut_to_80_characters() {
        assert_eq!(prompt_excerpt("  Fix the test  "), "Fix the test");
        assert_eq!(prompt_excerpt("Fix it\nthen ship"), "Fix it…");
        let long = "é".repeat(100);
        assert_eq!(prompt_excerpt(&long), format!("{}…", "é".repeat(80)));
    }
}
