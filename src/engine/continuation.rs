//! What Continue and Hand over send, found from the route's history: the
//! last attempt's CLI session (and whether it can still be resumed), and
//! the continuation package for the next candidate. The state machine
//! dispatches them (`machine::manual_continuation`); here is the IO they
//! need first, and the preview the app shows before either is sent. The
//! same session facts go into a failed attempt's decision
//! ([`Engine::session_of`]), for automatic continuation and the gate.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{ActionRequest, Engine, EngineError};
use crate::agent::handover::{package, HandoverFacts};
use crate::agent::Transcript;
use crate::classification::Class;
use crate::evaluator::ToolCalls;
use crate::route::machine::{next_eligible, Failure, Session};
use crate::route::{
    continue_message, continue_message_problem, AttemptInput, AttemptRecord, HoldReason,
    ManualAction, RouteRow,
};
use crate::safety::EffectContext;
use crate::store::routes::StoredAttempt;

/// A continuation that can be sent, or why not (in words for the person).
type Offer<T> = Result<T, String>;

impl Engine {
    /// What Continue would resume and Hand over would send on route
    /// `route_id` now, or why each cannot: the app shows it before sending.
    pub fn continuation_preview(&self, route_id: u32) -> Result<ContinuationPreview, EngineError> {
        let row = self.route_row(route_id)?;
        let (continue_refused, continue_offer) = split(self.continue_offer(&row)?);
        let (handover_refused, handover) = split(self.handover_offer(&row)?);
        Ok(ContinuationPreview {
            continue_offer,
            continue_refused,
            handover,
            handover_refused,
        })
    }

    /// What `req` (a continue or a hand-over) sends, or the reason it cannot.
    pub(super) fn continuation_input(
        &self,
        row: &RouteRow,
        req: &ActionRequest,
    ) -> Result<AttemptInput, EngineError> {
        let refused =
            |why: String| EngineError::Conflict(format!("cannot {}: {why}", verb(req.action)));
        match req.action {
            ManualAction::Continue => {
                let offer = self.continue_offer(row)?.map_err(refused)?;
                let message = req.message.clone().unwrap_or(offer.message);
                if let Some(problem) = continue_message_problem(&message) {
                    return Err(EngineError::validation("message", problem));
                }
                Ok(AttemptInput::Continue {
                    of_attempt: offer.of_attempt,
                    session_id: offer.session_id,
                    message,
                    automatic: false,
                })
            }
            ManualAction::Handover => {
                let offer = self.handover_offer(row)?.map_err(refused)?;
                Ok(AttemptInput::Handover {
                    from_attempt: offer.from_attempt,
                    package: offer.package,
                })
            }
            other => Err(EngineError::Conflict(format!(
                "{} sends the route's prompt, not a continuation",
                other.as_str()
            ))),
        }
    }

    /// The last attempt's session, when the current candidate ran it and
    /// its CLI can still resume it.
    fn continue_offer(&self, row: &RouteRow) -> Result<Offer<ContinueOffer>, EngineError> {
        let Some(last) = self.last_attempt(row)? else {
            return Ok(Err("no attempt has run yet".to_string()));
        };
        let candidate = &row.candidates[row.candidate_index as usize];
        let number = last.attempt.number;
        if last.attempt.candidate_index != row.candidate_index {
            return Ok(Err(format!(
                "attempt {number} ran {:?}, not the current candidate {:?}, so there is no \
                 session of it to continue",
                last.attempt.candidate_name, candidate.name
            )));
        }
        let session = self
            .store()
            .transcript(row.id, number)?
            .and_then(|(t, _)| t.session_id);
        let session_id = match self.resumable(row, number, session)? {
            Ok(id) => id,
            Err(why) => return Ok(Err(why)),
        };
        Ok(Ok(ContinueOffer {
            of_attempt: number,
            session_id,
            candidate_name: candidate.name.clone(),
            message: continue_message(&candidate.agent),
        }))
    }

    /// `session`, the session attempt `number` of the route's current
    /// candidate ran in (as its transcript has it), when that candidate's
    /// CLI can resume it now: its kind resumes sessions and is still the
    /// candidate's, and the session's files are where the CLI keeps them.
    fn resumable(
        &self,
        row: &RouteRow,
        number: u32,
        session: Option<String>,
    ) -> Result<Offer<String>, EngineError> {
        let index = row.candidate_index as usize;
        let candidate = &row.candidates[index];
        let kind = candidate.agent.kind;
        let label = kind.descriptor().label;
        if kind.descriptor().resume.is_none() {
            return Ok(Err(format!(
                "{label} candidates cannot resume a session; retry or hand over instead"
            )));
        }
        let now = self.store().candidates_by_id(&[candidate.id])?;
        if let Some(changed) = now.iter().find(|c| c.agent.kind != kind) {
            return Ok(Err(format!(
                "candidate {:?} is now a {} candidate, and attempt {number} ran {label}, whose \
                 session it cannot resume",
                changed.name,
                changed.agent.kind.descriptor().label
            )));
        }
        let Some(session_id) = session else {
            return Ok(Err(match row.manual_reason {
                Some(HoldReason::CannotStart { .. }) => format!(
                    "attempt {number}'s {label} never started, so there is no session to \
                     resume; retry or hand over instead"
                ),
                _ => format!(
                    "attempt {number}'s {label} reported no session id, so there is no session \
                     to resume; retry or hand over instead"
                ),
            }));
        };
        // The route keeps variable names only; the session's place may hang
        // on their values (`XDG_DATA_HOME`, a config dir), read as a
        // dispatch reads them.
        let (agent, _) = super::dispatch_env::agent_at_dispatch(
            &self.store(),
            &super::saved::Saved::default(),
            row,
            index,
        );
        let mut env: BTreeMap<String, String> = std::env::vars().collect();
        env.extend(agent.env.clone());
        let problem = crate::runner::readiness::session_problem(&agent, &env, &session_id);
        if let Some(problem) = problem {
            return Ok(Err(format!(
                "the session of attempt {number} cannot be resumed: {problem}"
            )));
        }
        Ok(Ok(session_id))
    }

    /// What the state machine needs to know of the CLI session failed
    /// attempt `attempt` ran in: what the attempts it continued did (the
    /// gate judges the whole session), and, where the candidate's transient
    /// policy continues automatically and the failure is transient, whether
    /// the session can be resumed and how its tool calls ended. Only then
    /// are the CLI's session folders read.
    pub(super) fn session_of(
        &self,
        row: &RouteRow,
        attempt: &AttemptRecord,
        transcript: &Transcript,
        failure: &Failure,
    ) -> Result<Session, EngineError> {
        let earlier = match &attempt.input {
            AttemptInput::Continue { of_attempt, .. } => {
                Some(self.session_effects(row.id, *of_attempt)?)
            }
            AttemptInput::Prompt | AttemptInput::Handover { .. } => None,
        };
        let candidate = &row.candidates[row.candidate_index as usize];
        let wanted = candidate.policy.transient.auto_continue.enabled
            && failure.classification.class == Class::Transient;
        if !wanted {
            return Ok(Session {
                earlier,
                ..Session::default()
            });
        }
        let session = transcript.session_id.clone();
        Ok(Session {
            resumable: self.resumable(row, attempt.number, session)?.ok(),
            tools: ToolCalls::of(Some(transcript), &failure.effect),
            earlier,
        })
    }

    /// What attempt `number` and the attempts whose session it continued in
    /// turn did; an attempt with no recorded effects (stopped, lost with
    /// its engine) counts as unknown, which fails closed.
    fn session_effects(&self, route_id: u32, number: u32) -> Result<EffectContext, EngineError> {
        let attempts = self.store().attempts(route_id)?;
        let mut merged: Option<EffectContext> = None;
        let mut next = Some(number);
        while let Some(n) = next {
            let stored = attempts.iter().find(|a| a.attempt.number == n);
            let own = stored
                .and_then(|a| a.result.as_ref())
                .and_then(|r| r.effect.clone())
                .unwrap_or_else(EffectContext::nothing_known);
            merged = Some(match merged {
                Some(later) => later.with_earlier(&own),
                None => own,
            });
            // Each continues an earlier attempt, so the walk ends.
            next = stored.and_then(|a| match &a.attempt.input {
                AttemptInput::Continue { of_attempt, .. } if *of_attempt < n => Some(*of_attempt),
                AttemptInput::Continue { .. }
                | AttemptInput::Prompt
                | AttemptInput::Handover { .. } => None,
            });
        }
        Ok(merged.unwrap_or_else(EffectContext::nothing_known))
    }

    /// The next eligible candidate and the package built from the last
    /// attempt's transcript, changed files and failure.
    fn handover_offer(&self, row: &RouteRow) -> Result<Offer<HandoverOffer>, EngineError> {
        let Some(last) = self.last_attempt(row)? else {
            return Ok(Err("no attempt has run yet".to_string()));
        };
        let Some(to) = next_eligible(row) else {
            return Ok(Err(
                "no candidate is left to hand over to in this cycle".to_string()
            ));
        };
        let number = last.attempt.number;
        let stored = self.store().transcript(row.id, number)?;
        let (transcript, files) = match &stored {
            Some((t, f)) => (Some(t), f.as_ref()),
            None => (None, None),
        };
        let from = row.candidates.get(last.attempt.candidate_index as usize);
        let failure = last.result.as_ref().map(|r| {
            let mut words = r.outcome.as_str().to_string();
            if let Some(c) = &r.classification {
                words.push_str(&format!(" ({} {})", c.class.as_str(), c.code.as_str()));
            }
            if let Some(excerpt) = &r.excerpt {
                words.push_str(&format!(": {excerpt}"));
            }
            words
        });
        let text = package(&HandoverFacts {
            attempt: number,
            candidate: &last.attempt.candidate_name,
            agent: from.map_or("an agent", |c| c.agent.kind.descriptor().label),
            transcript,
            files,
            failure: failure.as_deref(),
        });
        Ok(Ok(HandoverOffer {
            from_attempt: number,
            to_candidate: row.candidates[to as usize].name.clone(),
            package: text,
        }))
    }

    fn last_attempt(&self, row: &RouteRow) -> Result<Option<StoredAttempt>, EngineError> {
        Ok(self.store().attempts(row.id)?.pop())
    }
}

fn verb(action: ManualAction) -> &'static str {
    match action {
        ManualAction::Handover => "hand over",
        _ => "continue",
    }
}

fn split<T>(offer: Offer<T>) -> (Option<String>, Option<T>) {
    match offer {
        Ok(t) => (None, Some(t)),
        Err(why) => (Some(why), None),
    }
}

/// What Continue and Hand over would send now, or why each cannot: shown
/// before either is sent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct ContinuationPreview {
    pub continue_offer: Option<ContinueOffer>,
    /// Why Continue cannot be sent (no session id, the kind changed, the
    /// session is gone, …).
    pub continue_refused: Option<String>,
    pub handover: Option<HandoverOffer>,
    pub handover_refused: Option<String>,
}

/// The session Continue resumes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct ContinueOffer {
    pub of_attempt: u32,
    pub session_id: String,
    pub candidate_name: String,
    /// The candidate's continuation message, else the default one.
    pub message: String,
}

/// Where Hand over goes, and the package it sends after the prompt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct HandoverOffer {
    pub from_attempt: u32,
    pub to_candidate: String,
    pub package: String,
}
