//! The route engine: the single transition owner of every route, and the
//! public API the desktop shell and the CLI call.
//!
//! Every change to a route — a timer firing, a manual action, an agent
//! report — is planned by the pure state machine in [`route`], committed as
//! one compare-and-set in the [`crate::store`], and only then followed by its
//! effect (launch an attempt, arm a timer, kill a process). Ownership of
//! timers and processes across processes sharing one database is a lease per
//! route; see `docs/engine.md`.

mod error;
mod flow;
pub mod overlay;
mod ownership;
mod pause;
mod pending;
mod profile_files;
mod secrets;
mod seed;
mod types;
mod viewer;

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::broadcast;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::agent::{AgentKind, AttemptTimeouts};
use crate::classification::PolicyClass;
use crate::clock::Clock;
use crate::policy::validate::validate_document;
use crate::policy::{CandidateEntry, FieldError, PolicyDocument, CURRENT_VERSION};
use crate::profile::{CandidateInput, Profile};
use crate::route::{machine, HoldReason, RouteRow, RouteState};
use crate::scheduler::Scheduler;
use crate::store::{profiles::SaveRefusal, ChangeSeq, RouteSearch, Store};

pub use error::EngineError;
pub use profile_files::{
    preview_import, read_document, read_document_file, write_document_file, ExistingProfile,
    ImportPreview, ImportTarget,
};
pub use secrets::{secret_places, SecretEnv, SecretPlace};
pub use seed::DEMO_PROFILE;
pub use types::*;
pub use viewer::{RouteViewer, UnreadableRoute};

/// Private folders and files (0700, 0600), for the shell's logs, settings
/// and exports.
pub use crate::store::files;
/// Where the desktop app and the CLI keep their database by default.
pub use crate::store::{database_exists, default_db_path};

/// Whether log lines on standard error may carry ANSI colours: only when it
/// is a terminal and `NO_COLOR` is not set. Redirected to a file (`2> log`,
/// a service manager's journal) they would land there as escape codes.
pub fn stderr_log_colours() -> bool {
    use std::io::IsTerminal;
    std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// Handle to a running engine; cheap to clone, shareable across threads.
#[derive(Clone)]
pub struct Engine {
    inner: Arc<Inner>,
}

struct Inner {
    store: Mutex<Store>,
    /// The catalogue in force: built-in plus the local overlay.
    overlay: Mutex<overlay::Overlay>,
    /// This engine instance's owner id in route leases.
    instance: String,
    opts: EngineOptions,
    clock: Clock,
    events: broadcast::Sender<RouteEvent>,
    scheduler: Scheduler,
    /// Running attempts by route.
    runs: Mutex<HashMap<u32, RunHandle>>,
    /// Armed timers by route, with the generation they were armed at.
    armed: Mutex<HashMap<u32, u32>>,
    /// Last generation published per route.
    published: Mutex<HashMap<u32, u32>>,
    /// Route changes up to this point have been looked at.
    seen_change: Mutex<ChangeSeq>,
    /// Timer firings and attempt reports not committed yet.
    pending: Mutex<HashMap<pending::WorkKey, pending::Pending>>,
    /// Wakes the task that retries held work.
    retry_wake: tokio::sync::Notify,
    /// Set when `shutdown` starts: its attempts are being killed and
    /// recorded, so the heartbeat leaves them alone.
    shutting_down: std::sync::atomic::AtomicBool,
    /// New dispatches are paused (see [`Engine::set_paused`]).
    paused: std::sync::atomic::AtomicBool,
    stop: CancellationToken,
    tasks: Mutex<Vec<JoinHandle<()>>>,
}

struct RunHandle {
    generation: u32,
    cancel: CancellationToken,
    task: JoinHandle<()>,
}

impl Engine {
    /// Opens and migrates the database, seeds the demo profile on first
    /// start, reconciles routes left by a previous run, and arms timers.
    /// Needs a tokio runtime.
    pub async fn open(db_path: &Path, opts: EngineOptions) -> Result<Engine, EngineError> {
        let store = Store::open(db_path)?;
        let stop = CancellationToken::new();
        let (scheduler, fired, timer_task) = Scheduler::start(stop.child_token());
        let (events, _) = broadcast::channel(1024);
        let engine = Engine {
            inner: Arc::new(Inner {
                store: Mutex::new(store),
                overlay: Mutex::new(overlay::Overlay::open(overlay::overlay_dir(db_path))),
                instance: ownership::instance_id(),
                opts,
                clock: Clock::start(),
                events,
                scheduler,
                runs: Mutex::new(HashMap::new()),
                armed: Mutex::new(HashMap::new()),
                published: Mutex::new(HashMap::new()),
                seen_change: Mutex::new(ChangeSeq::default()),
                pending: Mutex::new(HashMap::new()),
                retry_wake: tokio::sync::Notify::new(),
                shutting_down: std::sync::atomic::AtomicBool::new(false),
                paused: std::sync::atomic::AtomicBool::new(false),
                stop,
                tasks: Mutex::new(vec![timer_task]),
            }),
        };
        // Routes are read before anything is written, so a damaged file is
        // refused untouched.
        let opening = |e: EngineError| e.opening(db_path);
        engine.remember_published().map_err(opening)?;
        if engine.inner.opts.seed_demo {
            engine.seed_demo().map_err(opening)?;
        }
        engine.reconcile().map_err(opening)?;
        engine.move_secrets_to_keyring().map_err(opening)?;
        engine.spawn_background(fired);
        Ok(engine)
    }

    /// This instance's owner id, as it appears in route leases.
    pub fn instance(&self) -> &str {
        &self.inner.instance
    }

    pub fn subscribe(&self) -> broadcast::Receiver<RouteEvent> {
        self.inner.events.subscribe()
    }

    pub fn agent_kinds(&self) -> Vec<AgentKindInfo> {
        AgentKind::ALL.into_iter().map(agent_kind_info).collect()
    }

    pub fn list_profiles(&self) -> Result<Vec<Profile>, EngineError> {
        Ok(self.store().list_profiles()?)
    }

    pub fn get_profile(&self, id: u32) -> Result<Profile, EngineError> {
        self.store()
            .get_profile(id)?
            .ok_or_else(|| EngineError::not_found("profile", id))
    }

    pub fn profile_by_name(&self, name: &str) -> Result<Profile, EngineError> {
        self.store()
            .profile_by_name(name)?
            .ok_or_else(|| EngineError::not_found("profile", format!("{name:?}")))
    }

    pub fn create_profile(&self, name: &str) -> Result<Profile, EngineError> {
        let name = self.distinct_name(name, None)?;
        let now = self.inner.clock.now();
        let id = {
            let store = self.store();
            store
                .create_profile(&name, now)
                .map_err(|e| name_taken(e, &name))?
        };
        self.get_profile(id)
    }

    pub fn rename_profile(&self, id: u32, name: &str) -> Result<Profile, EngineError> {
        let name = self.distinct_name(name, Some(id))?;
        let now = self.inner.clock.now();
        let found = self
            .store()
            .rename_profile(id, &name, now)
            .map_err(|e| name_taken(e, &name))?;
        if !found {
            return Err(EngineError::not_found("profile", id));
        }
        self.get_profile(id)
    }

    pub fn delete_profile(&self, id: u32) -> Result<(), EngineError> {
        let before = self.get_profile(id)?;
        if !self.store().delete_profile(id)? {
            return Err(EngineError::not_found("profile", id));
        }
        self.release_secrets(&before.candidates, &[]);
        Ok(())
    }

    /// Replaces the profile's ordered candidates if the profile is still at
    /// `expected_revision`. Validates everything first; nothing is written
    /// unless all of it is valid.
    pub fn save_candidates(
        &self,
        profile_id: u32,
        expected_revision: u32,
        candidates: Vec<CandidateInput>,
    ) -> Result<Profile, EngineError> {
        validate_candidates(&candidates)?;
        let mut candidates: Vec<CandidateInput> = candidates
            .into_iter()
            .map(|c| CandidateInput {
                name: crate::profile::names::normalize(&c.name),
                policy: c.policy.normalize(),
                ..c
            })
            .collect();
        let existing = self.get_profile(profile_id)?;
        let stowed = self.stow_secrets(&existing.name, &mut candidates, Some(&existing))?;
        let now = self.inner.clock.now();
        let outcome = self
            .store()
            .save_candidates(profile_id, expected_revision, &candidates, now);
        match outcome {
            Ok(Ok(())) => {}
            Ok(Err(r)) => {
                stowed.undo();
                return Err(refused(r, profile_id, expected_revision));
            }
            Err(e) => {
                stowed.undo();
                return Err(e.into());
            }
        }
        self.release_secrets(&existing.candidates, &agents(&candidates));
        self.get_profile(profile_id)
    }

    /// One page of the route list, selected and paged in SQL: only the
    /// page's routes are read. Refuses a limit outside 1 to
    /// [`RouteQuery::MAX_LIMIT`] and over-long search text, naming the field.
    pub fn list_routes(&self, query: &RouteQuery) -> Result<RoutePage, EngineError> {
        route_page(&self.store(), query)
    }

    /// How many routes each list filter holds, from an index.
    pub fn route_counts(&self) -> Result<RouteCounts, EngineError> {
        Ok(RouteCounts::of(&self.store().state_counts()?))
    }

    pub fn route_detail(&self, id: u32) -> Result<RouteDetail, EngineError> {
        let store = self.store();
        let row = store
            .route(id)?
            .ok_or_else(|| EngineError::not_found("route", id))?;
        let attempts = store.attempts(id)?.into_iter().map(attempt_view).collect();
        Ok(RouteDetail {
            snapshot: snapshot(&row),
            attempts,
        })
    }

    /// Sanitized evidence of attempts no catalogue rule classified, each
    /// with what the catalogue in force (local rules included) says now.
    pub fn unclassified_inbox(&self) -> Result<Vec<InboxItem>, EngineError> {
        let found = self.store().unclassified_results()?;
        let catalogue = self.catalogue();
        let tz = crate::timing::machine_local_tz();
        Ok(found
            .into_iter()
            .filter_map(|(route_id, a)| {
                let result = a.result?;
                // Only what nothing recognised: out-of-scope codes (a missing
                // program, a denied permission) are known, not inbox material.
                let classification = result
                    .classification
                    .filter(|c| c.code == crate::classification::SemanticCode::Unknown)?;
                let evidence = result.evidence?;
                let now = catalogue.classify(&evidence, tz);
                Some(InboxItem {
                    route_id,
                    attempt: a.attempt.number,
                    candidate_name: a.attempt.candidate_name,
                    code: classification.code,
                    catalogue_version: classification.catalogue_version,
                    now: now.rule_id.is_some().then(|| summary(&now)),
                    evidence,
                })
            })
            .collect())
    }

    /// The catalogue in force, with the local file re-read when it changed
    /// (by this app, the CLI or an editor) since the last call.
    pub fn catalogue(&self) -> Arc<crate::catalogue::Catalogue> {
        let mut overlay = self.overlay();
        overlay.refresh();
        overlay.catalogue()
    }

    /// The local overlay, refreshed, for reading its state.
    pub fn overlay(&self) -> MutexGuard<'_, overlay::Overlay> {
        self.inner.overlay.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The checks of a proposed local rule (see [`overlay::Overlay::review`]).
    pub fn review_rule(
        &self,
        spec: &crate::catalogue::RuleSpec,
        confirmed: &[String],
    ) -> Result<overlay::RuleReview, EngineError> {
        let samples = overlay::samples(&self.store())?;
        let mut overlay = self.overlay();
        overlay.refresh();
        Ok(overlay.review(spec, &samples, confirmed, crate::timing::machine_local_tz()))
    }

    /// Saves a local rule after its checks pass; the evidence it was made
    /// from (sanitized) becomes a local fixture.
    pub fn save_rule(
        &self,
        spec: &crate::catalogue::RuleSpec,
        confirmed: &[String],
        from: Option<overlay::EvidenceSource>,
    ) -> Result<overlay::SavedRule, EngineError> {
        let samples = overlay::samples(&self.store())?;
        let evidence = match from {
            None => None,
            Some(overlay::EvidenceSource::Attempt { route_id, attempt }) => Some((
                format!(
                    "sanitized evidence of route {route_id} attempt {attempt}, observed by Recourse"
                ),
                self.attempt_evidence(route_id, attempt)?,
            )),
            Some(overlay::EvidenceSource::Pasted(evidence)) => Some((
                "sanitized text pasted into the Recourse playground".to_owned(),
                evidence,
            )),
        };
        let tz = crate::timing::machine_local_tz();
        self.overlay().save(
            spec,
            evidence.as_ref().map(|(s, e)| (s.as_str(), e)),
            &samples,
            confirmed,
            tz,
        )
    }

    /// Removes a local rule and its local fixtures; the new catalogue version.
    pub fn remove_rule(&self, id: &str) -> Result<String, EngineError> {
        self.overlay().remove(id)
    }

    /// The sanitized evidence attempt `attempt` of route `route` kept.
    pub fn attempt_evidence(
        &self,
        route: u32,
        attempt: u32,
    ) -> Result<crate::evidence::Evidence, EngineError> {
        self.store()
            .attempts(route)?
            .into_iter()
            .find(|a| a.attempt.number == attempt)
            .and_then(|a| a.result?.evidence)
            .ok_or_else(|| {
                EngineError::not_found("evidence of route/attempt", format!("{route}/{attempt}"))
            })
    }

    fn store(&self) -> MutexGuard<'_, Store> {
        // A panic while holding the lock leaves SQLite consistent (the
        // transaction rolls back), so a poisoned lock is still usable.
        self.inner.store.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Routes as they are at open count as seen: only later changes made
    /// by other processes are published.
    fn remember_published(&self) -> Result<(), EngineError> {
        let generations = self.store().generations()?;
        self.published().extend(generations.routes);
        *self.seen_change() = generations.seen;
        Ok(())
    }

    fn seed_demo(&self) -> Result<(), EngineError> {
        if self.store().profile_count()? > 0 {
            return Ok(());
        }
        let profile = match self.create_profile(DEMO_PROFILE) {
            Ok(p) => p,
            // Another process seeded it first.
            Err(EngineError::Conflict(_)) => return Ok(()),
            Err(e) => return Err(e),
        };
        self.save_candidates(profile.id, profile.revision, seed::demo_candidates())?;
        Ok(())
    }
}

fn profile_name(name: &str) -> Result<String, EngineError> {
    crate::profile::validate_name(name).map_err(|e| EngineError::Validation(vec![e]))
}

impl Engine {
    /// The name as stored, refused when it only looks different from
    /// another profile's (invisible characters, normalization); `except`
    /// is the profile being renamed or replaced.
    fn distinct_name(&self, name: &str, except: Option<u32>) -> Result<String, EngineError> {
        let name = profile_name(name)?;
        let names = self.store().profile_names()?;
        let look_alike = names
            .iter()
            .filter(|(id, _)| Some(*id) != except)
            .find_map(|(_, other)| Some((other, crate::profile::names::looks_like(&name, other)?)));
        match look_alike {
            Some((other, why)) => Err(EngineError::Conflict(format!(
                "a profile named {other:?} already exists, and {name:?} is the same name to a \
                 reader: {why}"
            ))),
            None => Ok(name),
        }
    }
}

/// The agents of `inputs`.
fn agents(inputs: &[CandidateInput]) -> Vec<crate::agent::AgentSpec> {
    inputs.iter().map(|c| c.agent.clone()).collect()
}

/// The error for a save the store refused.
fn refused(refusal: SaveRefusal, profile_id: u32, expected_revision: u32) -> EngineError {
    match refusal {
        SaveRefusal::ProfileMissing => EngineError::not_found("profile", profile_id),
        SaveRefusal::RevisionMismatch { current } => EngineError::Conflict(format!(
            "the profile was changed elsewhere (revision {current}, you edited {expected_revision}); \
             reload it and apply your edit again"
        )),
        SaveRefusal::ForeignCandidate { index, id } => EngineError::validation(
            format!("candidates[{index}].id"),
            format!("candidate {id} does not belong to this profile"),
        ),
    }
}

fn name_taken(e: crate::store::StoreError, name: &str) -> EngineError {
    if crate::store::profiles::is_unique_violation(&e) {
        EngineError::Conflict(format!("a profile named {name:?} already exists"))
    } else {
        EngineError::Store(e)
    }
}

/// The candidate list is validated as the versioned policy document it is
/// (names, duplicates, every policy limit), and each agent spec; every
/// problem found is reported.
fn validate_candidates(candidates: &[CandidateInput]) -> Result<(), EngineError> {
    let errors = check_candidates(candidates);
    if errors.is_empty() {
        Ok(())
    } else {
        Err(EngineError::Validation(errors))
    }
}

/// Every problem a save of `candidates` would be refused for, at its path
/// (`candidates[1].name`, `candidates[0].agent.program`, …): the save check,
/// and the editor's live check of what only the whole list can tell
/// (duplicate names).
pub fn check_candidates(candidates: &[CandidateInput]) -> Vec<FieldError> {
    let document = PolicyDocument {
        version: CURRENT_VERSION,
        candidates: candidates
            .iter()
            .map(|c| CandidateEntry {
                name: c.name.clone(),
                agent: c.agent.kind.slug().to_string(),
                enabled: c.enabled,
                policy: c.policy.clone(),
            })
            .collect(),
    };
    let mut errors = validate_document(&document);
    for (i, c) in candidates.iter().enumerate() {
        let index = u32::try_from(i).unwrap_or(u32::MAX);
        let prefix = format!("candidates[{index}].agent");
        errors.extend(c.agent.validate(&prefix));
        errors.extend(c.agent.left_out(&prefix));
    }
    errors
}

/// How the editor presents an agent kind: label, what it runs, its program.
fn agent_kind_info(kind: AgentKind) -> AgentKindInfo {
    let (label, description, program) = match kind {
        AgentKind::Simulated => (
            "Simulated provider",
            "Built in. Plays a script of failures and successes; no network, no keys.",
            None,
        ),
        AgentKind::ClaudeCode => (
            "Claude Code",
            "Runs `claude -p` with stream-json output; tool use and assistant text are tracked.",
            Some("claude"),
        ),
        AgentKind::Codex => (
            "Codex CLI",
            "Runs `codex exec --json`; items and turn failures are tracked.",
            Some("codex"),
        ),
        AgentKind::Gemini => (
            "Gemini CLI",
            "Runs `gemini -p` with stream-json output; tool use, assistant text and the CLI's error class are tracked.",
            Some("gemini"),
        ),
        AgentKind::Opencode => (
            "OpenCode",
            "Runs `opencode run --format json`; text, tool and error events are tracked.",
            Some("opencode"),
        ),
        AgentKind::Generic => (
            "Any command",
            "Runs your command with the prompt on stdin; exit code and stderr tail are the \
             evidence. Effects are unknown, so failures go to manual recovery.",
            None,
        ),
    };
    AgentKindInfo {
        kind,
        label: label.to_string(),
        description: description.to_string(),
        default_program: program.map(str::to_string),
        default_timeouts: AttemptTimeouts::default(),
        config_dir_variable: kind.config_dir_variable().map(str::to_string),
    }
}

/// The UI's view of a route row.
pub(crate) fn snapshot(row: &RouteRow) -> RouteSnapshot {
    let index = row.candidate_index as usize;
    let candidate = row.candidates.get(index);
    // The last failure's class and policy speak for the current candidate
    // only if it is the one that failed (not after a skip).
    let current_failed = row.failed_candidate == Some(row.candidate_index);
    let policy_class = row
        .classification
        .as_ref()
        .filter(|_| current_failed)
        .and_then(|c| c.class.policy_class());
    let pending = match row.state {
        RouteState::Running | RouteState::WaitingReset | RouteState::RetryScheduled => {
            row.pending_outcome.filter(|_| current_failed)
        }
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
        last_failure: last_failure(row),
        retry: policy_class.map(|class| retry_progress(row, class)),
        pending_outcome: pending,
        skip_to: machine::next_eligible(row)
            .and_then(|i| row.candidates.get(i as usize))
            .map(|c| c.name.clone()),
        repeat_risk: match &row.manual_reason {
            Some(HoldReason::UnsafeEffect(reason)) => Some(reason.describe().to_string()),
            _ => None,
        },
        deadline: row.deadline,
        manual_reason: row.manual_reason.as_ref().map(|r| r.text().to_string()),
        prompt_excerpt: prompt_excerpt(&row.prompt),
        attempts: row.attempts,
        owner: row.owner.clone(),
        created_at: row.created_at,
        updated_at: row.updated_at,
        actions: machine::valid_actions(row),
    }
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

fn last_failure(row: &RouteRow) -> Option<LastFailure> {
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
        decision: row.decision.clone(),
    })
}

fn summary(c: &crate::classification::Classification) -> ClassificationSummary {
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

fn attempt_view(a: crate::store::routes::StoredAttempt) -> AttemptView {
    let r = a.result;
    AttemptView {
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
        decision: r.as_ref().and_then(|r| r.decision.clone()),
        policy_revision: r.as_ref().and_then(|r| r.policy_revision),
        excerpt: r.and_then(|r| r.excerpt),
    }
}

/// [`Engine::list_routes`] on `store`: the one route-page query, which
/// [`RouteViewer::list_routes_page`] answers with too.
fn route_page(store: &Store, query: &RouteQuery) -> Result<RoutePage, EngineError> {
    if query.limit == 0 || query.limit > RouteQuery::MAX_LIMIT {
        return Err(EngineError::validation(
            "limit",
            format!(
                "must be 1 to {} routes per page, got {}",
                RouteQuery::MAX_LIMIT,
                query.limit
            ),
        ));
    }
    let chars = query.search.chars().count();
    if chars > RouteQuery::MAX_SEARCH_CHARS {
        return Err(EngineError::validation(
            "search",
            format!(
                "must be at most {} characters, got {chars}",
                RouteQuery::MAX_SEARCH_CHARS
            ),
        ));
    }
    // One more than asked tells whether an older page exists.
    let mut rows = store.routes_page(
        query.filter.states(),
        &RouteSearch::new(&query.search),
        query.before,
        query.limit + 1,
    )?;
    let more = rows.len() > query.limit as usize;
    rows.truncate(query.limit as usize);
    Ok(RoutePage {
        routes: rows.iter().map(snapshot).collect(),
        more,
        counts: RouteCounts::of(&store.state_counts()?),
    })
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
