//! The local catalogue overlay on disk, beside the database:
//! `<data dir>/catalogue/rules.toml` and `<data dir>/catalogue/fixtures/`.
//!
//! [`Overlay`] keeps the merged catalogue and re-reads the file before each
//! use, so a rule written by another process, the CLI or an editor acts on
//! the next classification. A broken file never breaks classification: the
//! built-in catalogue stays in force and the error names the file, the rule
//! and why. Reviewing, saving and removing a rule run the shared checks of
//! [`crate::catalogue::checks`] first and write nothing when they refuse.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;

use crate::catalogue::bundled::{builtin_fixtures, negative_corpus, NamedFixture};
use crate::catalogue::checks::{check_rule, RuleChecks, Sample};
use crate::catalogue::local::{LocalError, LocalFile};
use crate::catalogue::{builtin, Catalogue, CatalogueError, Fixture, RuleSpec};
use crate::classification::{Scope, SemanticCode};
use crate::evidence::Evidence;
use crate::policy::FieldError;
use crate::store::{Store, StoreError};

use super::EngineError;

/// The local rules file in the overlay folder.
pub const RULES_FILE: &str = "rules.toml";
/// The local fixtures folder in the overlay folder.
pub const FIXTURES_DIR: &str = "fixtures";
/// Past attempts a proposed rule is tried on, newest first.
const PAST_ATTEMPTS: u32 = 500;

/// The overlay folder for the database at `db_path`.
pub fn overlay_dir(db_path: &Path) -> PathBuf {
    db_path.parent().unwrap_or(Path::new(".")).join("catalogue")
}

/// The catalogue in force: built-in, plus the local file when it is valid.
pub struct Overlay {
    /// `None`: built-in only (`--builtin-only`).
    dir: Option<PathBuf>,
    /// The file's text when last read (`None`: no file).
    source: Option<String>,
    local: LocalFile,
    catalogue: Arc<Catalogue>,
    error: Option<String>,
}

impl Overlay {
    /// The built-in catalogue alone; no file is read.
    pub fn builtin_only() -> Overlay {
        Overlay {
            dir: None,
            source: None,
            local: LocalFile::default(),
            catalogue: Arc::new(builtin().clone()),
            error: None,
        }
    }

    /// The overlay of folder `dir`, read now.
    pub fn open(dir: PathBuf) -> Overlay {
        let mut overlay = Overlay {
            dir: Some(dir),
            ..Overlay::builtin_only()
        };
        overlay.reload(read_optional(&overlay.rules_path()));
        overlay
    }

    /// Re-reads the file; merges again only when its text changed.
    pub fn refresh(&mut self) {
        if self.dir.is_some() {
            let now = read_optional(&self.rules_path());
            if now.as_ref().ok() != Some(&self.source) || self.error.is_some() {
                self.reload(now);
            }
        }
    }

    fn reload(&mut self, source: Result<Option<String>, String>) {
        let parsed = match &source {
            Ok(None) => None,
            Ok(Some(text)) => Some(
                LocalFile::parse(text)
                    .and_then(|local| Ok((local.merge(builtin())?, local)))
                    .map_err(|e| e.to_string()),
            ),
            Err(e) => Some(Err(e.clone())),
        };
        (self.local, self.catalogue, self.error) = match parsed {
            None => (LocalFile::default(), Arc::new(builtin().clone()), None),
            Some(Ok((merged, local))) => (local, Arc::new(merged), None),
            Some(Err(e)) => (
                LocalFile::default(),
                Arc::new(builtin().clone()),
                Some(format!(
                    "local catalogue {} is not used: {e}",
                    self.rules_path().display()
                )),
            ),
        };
        self.source = source.unwrap_or(None);
    }

    pub fn catalogue(&self) -> Arc<Catalogue> {
        Arc::clone(&self.catalogue)
    }

    /// Why the local file is not in force, naming the file and the rule.
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    pub fn local(&self) -> &LocalFile {
        &self.local
    }

    pub fn rules_path(&self) -> PathBuf {
        self.dir
            .as_deref()
            .unwrap_or(Path::new("."))
            .join(RULES_FILE)
    }

    fn fixtures_dir(&self) -> PathBuf {
        self.rules_path().with_file_name(FIXTURES_DIR)
    }

    /// The local fixtures, and a message for each file that cannot be used.
    pub fn local_fixtures(&self) -> (Vec<NamedFixture>, Vec<String>) {
        let mut found = Vec::new();
        let mut problems = Vec::new();
        let Ok(entries) = std::fs::read_dir(self.fixtures_dir()) else {
            return (found, problems);
        };
        let mut paths: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .collect();
        paths.sort();
        for path in paths {
            let name = format!(
                "local/{}",
                path.file_name().unwrap_or_default().to_string_lossy()
            );
            match std::fs::read_to_string(&path)
                .map_err(|e| e.to_string())
                .and_then(|text| Fixture::parse(&text).map_err(|e| e.to_string()))
            {
                Ok(fixture) => found.push(NamedFixture { name, fixture }),
                Err(e) => problems.push(format!("{}: {e}", path.display())),
            }
        }
        (found, problems)
    }

    /// The names of the fixtures, built-in then local, that expect each
    /// rule, by rule id: what the rule browser and `catalogue show` list.
    pub fn fixtures_by_rule(&self) -> BTreeMap<String, Vec<String>> {
        let mut by_rule: BTreeMap<String, Vec<String>> = BTreeMap::new();
        let local = self.local_fixtures().0;
        for named in builtin_fixtures().iter().chain(&local) {
            if let Some(id) = &named.fixture.expect.rule_id {
                by_rule
                    .entry(id.clone())
                    .or_default()
                    .push(named.name.clone());
            }
        }
        by_rule
    }

    /// The checks of `spec` as it would act once reviewed, and every reason
    /// a save would be refused given the `confirmed` fixture names and the
    /// `evidence` it is made from (a rule must decide its own text).
    pub fn review(
        &self,
        spec: &RuleSpec,
        evidence: Option<&Evidence>,
        samples: &[Sample],
        confirmed: &[String],
        tz: chrono_tz::Tz,
    ) -> RuleReview {
        self.review_as(spec, evidence, samples, confirmed, tz, true)
    }

    /// [`Overlay::review`]; `class_known` false: `spec`'s code stands in for
    /// one not chosen yet, so a tie with a rule of another class is not said.
    fn review_as(
        &self,
        spec: &RuleSpec,
        evidence: Option<&Evidence>,
        samples: &[Sample],
        confirmed: &[String],
        tz: chrono_tz::Tz,
        class_known: bool,
    ) -> RuleReview {
        let mut refusals = Vec::new();
        if let Some(error) = &self.error {
            refusals.push(FieldError::new(
                "rule",
                format!("{error}; fix or remove that file first"),
            ));
        }
        if spec.code == SemanticCode::Unknown.as_str() {
            refusals.push(FieldError::new(
                "code",
                "choose which failure this is: its code's class decides what policies do with it",
            ));
            // The checks' outcome needs the code, but whether the rule is
            // well formed and matches its own text does not: judged with a
            // stand-in code, a bad pattern is said before a code is chosen.
            let stand_in = RuleSpec {
                code: SemanticCode::TaskFailed.as_str().to_owned(),
                scope: Scope::OutOfScope,
                ..spec.clone()
            };
            let judged = self.review_as(&stand_in, evidence, samples, &[], tz, false);
            let found: Vec<FieldError> = judged
                .refusals
                .into_iter()
                .filter(|f| {
                    !matches!(f.path.as_str(), "code" | "confirmed_fixtures")
                        && !refusals.contains(f)
                })
                .collect();
            refusals.extend(found);
            return RuleReview {
                rule_id: spec.id.clone(),
                checks: None,
                refusals,
            };
        }
        let acting = RuleSpec {
            reviewed: Some(true),
            ..spec.clone()
        };
        let proposed = match self.local.with_rule(acting).merge(builtin()) {
            Ok(proposed) => proposed,
            Err(e) => {
                refusals.push(field_of(&e));
                return RuleReview {
                    rule_id: spec.id.clone(),
                    checks: None,
                    refusals,
                };
            }
        };
        let rule = proposed
            .rules
            .iter()
            .find(|r| r.id == spec.id.trim())
            .expect("the merged catalogue holds the rule just added");
        let mut fixtures = builtin_fixtures().to_vec();
        fixtures.extend(self.local_fixtures().0);
        let checks = check_rule(
            &self.catalogue,
            &proposed,
            rule,
            samples,
            &fixtures,
            negative_corpus(),
            tz,
        );
        refusals.extend(
            checks
                .broadness
                .iter()
                .map(|reason| FieldError::new("pattern", reason.clone())),
        );
        refusals.extend(
            checks
                .unconfirmed(confirmed)
                .into_iter()
                .map(|reason| FieldError::new("confirmed_fixtures", reason)),
        );
        if let Some(reason) =
            evidence.and_then(|e| own_text::refusal(&proposed, spec.id.trim(), e, tz, class_known))
        {
            refusals.push(FieldError::new("pattern", reason));
        }
        RuleReview {
            rule_id: spec.id.clone(),
            checks: Some(checks),
            refusals,
        }
    }

    /// Saves `spec` after its checks pass, with `evidence` (sanitized) as a
    /// new local fixture; `reviewed` says whether a person reviewed it.
    pub fn save(
        &mut self,
        spec: &RuleSpec,
        evidence: Option<(&str, &Evidence)>,
        samples: &[Sample],
        confirmed: &[String],
        tz: chrono_tz::Tz,
    ) -> Result<SavedRule, EngineError> {
        self.refresh();
        let review = self.review(spec, evidence.map(|(_, e)| e), samples, confirmed, tz);
        let refusals = review.refusals;
        let local = self.local.with_rule(spec.clone());
        let fixture = evidence.and_then(|(source, evidence)| {
            let acting = self.local.with_rule(RuleSpec {
                reviewed: Some(true),
                ..spec.clone()
            });
            acting
                .merge(builtin())
                .ok()
                .and_then(|merged| fixture_for(&merged, spec, source, evidence, tz))
        });
        if !refusals.is_empty() {
            return Err(EngineError::Validation(refusals));
        }
        let dir = self.dir.clone().ok_or_else(|| {
            EngineError::Io("the built-in catalogue cannot be changed here".to_owned())
        })?;
        let fixture_path = match &fixture {
            Some(text) => {
                let path = self.free_fixture_path(spec.id.trim());
                write_atomically(&path, text)?;
                Some(path)
            }
            None => None,
        };
        write_atomically(&dir.join(RULES_FILE), &local.to_toml())?;
        self.refresh();
        Ok(SavedRule {
            rule_id: spec.id.trim().to_owned(),
            catalogue_version: self.catalogue.version.clone(),
            rules_path: self.rules_path().display().to_string(),
            fixture_path: fixture_path.map(|p| p.display().to_string()),
        })
    }

    /// Removes local rule `id` and the local fixtures that expect it.
    pub fn remove(&mut self, id: &str) -> Result<String, EngineError> {
        self.refresh();
        if let Some(error) = &self.error {
            return Err(EngineError::Conflict(format!(
                "{error}; fix or remove that file first"
            )));
        }
        let local = self
            .local
            .without_rule(id)
            .ok_or_else(|| EngineError::not_found("local rule", id))?;
        for named in self.local_fixtures().0 {
            if named.fixture.expect.rule_id.as_deref() == Some(id) {
                let file = named.name.trim_start_matches("local/");
                let path = self.fixtures_dir().join(file);
                std::fs::remove_file(&path).map_err(|e| io_error(&path, &e))?;
            }
        }
        write_atomically(&self.rules_path(), &local.to_toml())?;
        self.refresh();
        Ok(self.catalogue.version.clone())
    }

    fn free_fixture_path(&self, id: &str) -> PathBuf {
        let stem = id.replace('.', "-");
        (1..)
            .map(|n| self.fixtures_dir().join(format!("{stem}-{n}.toml")))
            .find(|p| !p.exists())
            .expect("some name is free")
    }
}

/// The evidence a new local rule is made from; it becomes a local fixture.
#[derive(Debug, Clone)]
pub enum EvidenceSource {
    /// What a failed attempt kept (an inbox item).
    Attempt { route_id: u32, attempt: u32 },
    /// Text pasted into the playground, already sanitized.
    Pasted(Evidence),
}

/// A proposed rule's checks and what stands in the way of saving it.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct RuleReview {
    pub rule_id: String,
    /// Absent when the rule itself is invalid (see `refusals`).
    pub checks: Option<RuleChecks>,
    /// Every reason a save is refused now, each at its field
    /// (`id`, `pattern`, `overrides`, `confirmed_fixtures`, `rule`).
    pub refusals: Vec<FieldError>,
}

/// Where a saved rule went.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct SavedRule {
    pub rule_id: String,
    pub catalogue_version: String,
    pub rules_path: String,
    pub fixture_path: Option<String>,
}

/// The fixture text for `evidence` under `merged`, or `None` when the rule
/// `spec` does not decide it.
fn fixture_for(
    merged: &Catalogue,
    spec: &RuleSpec,
    source: &str,
    evidence: &Evidence,
    tz: chrono_tz::Tz,
) -> Option<String> {
    let got = merged.classify(evidence, tz);
    if got.rule_id.as_deref() != Some(spec.id.trim()) {
        return None;
    }
    Some(Fixture::recorded(evidence, &got, spec.description.trim(), source).to_toml())
}

/// The field a local-file error is about.
fn field_of(e: &LocalError) -> FieldError {
    let field = match e {
        LocalError::ReusedId(_) => "id",
        LocalError::UnknownOverride { .. } | LocalError::DoubleOverride { .. } => "overrides",
        LocalError::Rule(rule) => match rule {
            CatalogueError::BadId(_) | CatalogueError::DuplicateId(_) => "id",
            CatalogueError::EmptyDescription { .. } => "description",
            CatalogueError::BadPriority { .. } => "priority",
            CatalogueError::UnknownProvider { .. } | CatalogueError::NoProviders { .. } => {
                "providers"
            }
            CatalogueError::BadRegex { .. } | CatalogueError::EmptyMatcher { .. } => "pattern",
            CatalogueError::ScopeMismatch { .. } | CatalogueError::UnknownCode { .. } => "code",
            CatalogueError::Syntax(_)
            | CatalogueError::BadVersion(_)
            | CatalogueError::NoMatchers { .. }
            | CatalogueError::BadHttpStatus { .. }
            | CatalogueError::Prefilter(_)
            | CatalogueError::TimingNotActionable { .. }
            | CatalogueError::LocalOnlyField { .. } => "rule",
        },
        LocalError::Syntax(_) => "rule",
    };
    match e {
        LocalError::Rule(CatalogueError::BadRegex { source, .. }) => {
            FieldError::new(field, regex_words::regex_words(source))
        }
        _ => FieldError::new(field, e.to_string()),
    }
}

/// The inbox, then the newest past attempts with evidence, as samples.
pub(crate) fn samples(store: &Store) -> Result<Vec<Sample>, StoreError> {
    let inbox = store.inbox_results()?;
    let past = store.failed_results_with_evidence(PAST_ATTEMPTS)?;
    let seen: Vec<(u32, u32)> = inbox.iter().map(|(r, a)| (*r, a.attempt.number)).collect();
    let inbox = inbox.into_iter().map(|s| (true, s));
    let past = past
        .into_iter()
        .filter(|(r, a)| !seen.contains(&(*r, a.attempt.number)))
        .map(|s| (false, s));
    Ok(inbox
        .chain(past)
        .filter_map(|(in_inbox, (route, a))| {
            let which = format!("route {route}, attempt {}", a.attempt.number);
            Some(Sample {
                // Shown as written, in the app and the CLI: words, not a tag.
                label: if in_inbox {
                    format!("From the inbox — {which}")
                } else {
                    format!("Past attempt — {which}")
                },
                evidence: a.result?.evidence?,
            })
        })
        .collect())
}

/// The file's text, `None` when there is no file.
fn read_optional(path: &Path) -> Result<Option<String>, String> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e.to_string()),
    }
}

/// Writes 0600 through a temporary file and a rename, so a reader (the
/// engine in another process) never sees half a file.
fn write_atomically(path: &Path, text: &str) -> Result<(), EngineError> {
    crate::store::files::write_private(path, text.as_bytes()).map_err(|e| io_error(path, &e))
}

fn io_error(path: &Path, e: &std::io::Error) -> EngineError {
    EngineError::Io(format!("could not write {}: {e}", path.display()))
}

mod own_text;
mod regex_words;
#[cfg(test)]
mod tests;
