//! The profile document: a profile as a file a person can keep in git, edit
//! in `$EDITOR`, move to another machine and import again.
//!
//! It is the policy document (`recourse policy check` reads the same
//! candidates, legacy action maps included) plus the profile's `name` and,
//! per candidate, how to launch it: `agent` is an object (`kind`, `program`,
//! `args`, `model`, `env`, `config_dir`, `timeouts`, `account` (a label),
//! `max_concurrent`, and `script` and `simulates` for the simulated
//! provider) or just the policy document's agent name
//! (`"claude-code"`), meaning that kind with its defaults. [`load`] is the one
//! way to read it: duplicate keys, unknown fields and newer versions are
//! refused, and every invalid value is reported with its path.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{validate_name, Candidate, CandidateInput, Profile};
use crate::agent::{AgentKind, AgentSpec, MASKED};
use crate::policy::document::{parse_without_duplicates, read_value, Refused};
use crate::policy::read::{listed, path_order, read_all};
use crate::policy::{
    CandidatePolicy, ClassPolicy, DocumentSource, FieldError, PolicyError, UnclassifiedPolicy,
};

/// The profile document version this build writes and reads.
pub const PROFILE_VERSION: u32 = 1;

/// The largest document read (1 MiB): far above any real profile, small
/// enough that a log or `/dev/zero` given by mistake is refused at once.
pub const MAX_DOCUMENT_BYTES: u64 = 1024 * 1024;

/// A profile and its ordered candidates.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(
    title = "Recourse profile document",
    description = "A dynamic profile: its name and ordered candidate agents, each with how it is launched and its complete per-class recovery policy."
)]
pub struct ProfileDocument {
    /// Document format version; this build reads 1.
    pub version: u32,
    /// The profile's name (1–80 characters), unique in a database.
    pub name: String,
    /// Tried in this order; the first enabled one starts a route.
    pub candidates: Vec<ProfileCandidate>,
}

/// One candidate: identity, how to launch it, and what it does per failure
/// class.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProfileCandidate {
    /// Unique within the profile.
    pub name: String,
    /// A disabled candidate is never chosen.
    #[serde(default = "enabled_by_default")]
    pub enabled: bool,
    pub agent: AgentSpec,
    /// Temporary failures: overload, transport, short throttling.
    pub transient: ClassPolicy,
    /// Account, quota, credentials and configuration failures.
    pub hard: ClassPolicy,
    /// Failures no rule classifies always wait for a person, unless this
    /// opts in to moving on once after 2–10 identical ones with no output
    /// and no effects. Absent: off.
    #[serde(default)]
    pub unclassified: UnclassifiedPolicy,
}

fn enabled_by_default() -> bool {
    true
}

/// A document read by [`load`] and the form it was written in.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadedProfile {
    pub document: ProfileDocument,
    /// `Legacy` when candidates used the old generic action maps.
    pub source: DocumentSource,
}

/// Why a profile document could not be read. Nothing is written for any of
/// them.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProfileError {
    #[error("larger than 1 MiB; refusing to read it")]
    TooLarge,
    #[error("not valid JSON: {message}")]
    Syntax { message: String },
    /// JSON, but not a document to read field by field: not an object, a
    /// key given twice, no `version` on a current document.
    #[error("{path}: {message}")]
    Shape { path: String, message: String },
    #[error("version: {}", version_message(found))]
    UnsupportedVersion { found: String },
    /// Fields unknown, missing, of the wrong type or breaking the rules;
    /// every problem is listed.
    #[error("{}", list(errors))]
    Invalid { errors: Vec<FieldError> },
}

fn version_message(found: &str) -> String {
    match found.parse::<u64>() {
        Ok(n) if n > u64::from(PROFILE_VERSION) => format!(
            "{n} is newer than this build reads ({PROFILE_VERSION}); update Recourse to import it"
        ),
        _ => format!("unsupported profile document version {found}; this build reads version {PROFILE_VERSION}"),
    }
}

fn list(errors: &[FieldError]) -> String {
    let each: Vec<String> = errors.iter().map(FieldError::to_string).collect();
    each.join("; ")
}

impl ProfileError {
    /// Every problem as `path: message` items, whatever the variant.
    pub fn errors(&self) -> Vec<FieldError> {
        match self {
            ProfileError::TooLarge | ProfileError::Syntax { .. } => {
                vec![FieldError::new("document", self.to_string())]
            }
            ProfileError::Shape { path, message } => vec![FieldError::new(path, message)],
            ProfileError::UnsupportedVersion { found } => {
                vec![FieldError::new("version", version_message(found))]
            }
            ProfileError::Invalid { errors } => errors.clone(),
        }
    }
}

/// Reads, validates and normalizes a profile document. An invalid one is
/// refused with every problem (at most
/// [`MAX_PROBLEMS`](crate::policy::read::MAX_PROBLEMS)), each once, in
/// document order.
pub fn load(text: &str) -> Result<LoadedProfile, ProfileError> {
    if text.len() as u64 > MAX_DOCUMENT_BYTES {
        return Err(ProfileError::TooLarge);
    }
    let value = parse_without_duplicates(text).map_err(from_policy)?;
    let Value::Object(mut fields) = value else {
        return Err(shape("document", "expected a JSON object"));
    };
    if let Some(found) = fields.get("version").and_then(Value::as_u64) {
        if found > u64::from(PROFILE_VERSION) {
            return Err(ProfileError::UnsupportedVersion {
                found: found.to_string(),
            });
        }
    }
    let mut errors = Vec::new();
    match fields.remove("$schema") {
        None | Some(Value::String(_)) => {}
        Some(_) => errors.push(FieldError::new(
            "$schema",
            "expected a string (the schema's address)",
        )),
    }
    let name = match fields.remove("name") {
        Some(Value::String(name)) => validate_name(&name).unwrap_or_else(|e| {
            errors.push(e);
            name
        }),
        Some(_) => {
            errors.push(FieldError::new("name", "expected a string"));
            String::new()
        }
        None => {
            errors.push(FieldError::new("name", "missing field `name`"));
            String::new()
        }
    };
    let mut reported = Vec::new();
    let agents = take_agents(&mut fields, &mut errors, &mut reported);
    let mut complete = true;
    let policies = match read_value(Value::Object(fields), &reported) {
        Ok(loaded) => Some(loaded),
        Err(Refused::Problems {
            errors: found,
            complete: all,
        }) => {
            errors.extend(found);
            complete = all;
            None
        }
        Err(Refused::Policy(other)) => return Err(from_policy(other)),
    };
    let loaded = match policies {
        Some(loaded) if errors.is_empty() => loaded,
        _ => {
            errors.sort_by_key(|e| path_order(&e.path));
            return Err(ProfileError::Invalid {
                errors: listed(errors, complete),
            });
        }
    };
    let candidates = loaded
        .document
        .candidates
        .into_iter()
        .zip(agents.into_iter().flatten())
        .map(|(entry, agent)| ProfileCandidate {
            name: super::names::normalize(&entry.name),
            enabled: entry.enabled,
            agent,
            transient: entry.policy.transient,
            hard: entry.policy.hard,
            unclassified: entry.policy.unclassified,
        })
        .collect();
    Ok(LoadedProfile {
        document: ProfileDocument {
            version: PROFILE_VERSION,
            name,
            candidates,
        },
        source: loaded.source,
    })
}

/// Takes each candidate's `agent` out of the document, leaving the policy
/// document's agent name in its place, and checks it. An agent that cannot
/// be read is `None`; its problems go to `errors` and its place to
/// `reported`, so the policy reader neither lists it again nor checks what
/// depends on it.
fn take_agents(
    fields: &mut Map<String, Value>,
    errors: &mut Vec<FieldError>,
    reported: &mut Vec<String>,
) -> Vec<Option<AgentSpec>> {
    let Some(Value::Array(candidates)) = fields.get_mut("candidates") else {
        // The policy loader names a missing or mistyped list.
        return Vec::new();
    };
    let mut agents = Vec::with_capacity(candidates.len());
    for (index, candidate) in candidates.iter_mut().enumerate() {
        let Value::Object(candidate) = candidate else {
            let path = format!("candidates[{index}]");
            errors.push(FieldError::new(&path, "expected an object"));
            reported.push(path);
            agents.push(None);
            continue;
        };
        let path = format!("candidates[{index}].agent");
        let spec = match candidate.get("agent") {
            // The policy reader says it is missing.
            None => None,
            Some(Value::String(slug)) => match AgentKind::from_slug(slug) {
                Some(kind) => Some(AgentSpec::default_for(kind)),
                None => {
                    errors.push(FieldError::new(
                        &path,
                        format!(
                            "unknown variant `{slug}`, expected one of {}",
                            agent_names()
                        ),
                    ));
                    reported.push(path);
                    None
                }
            },
            Some(object @ Value::Object(_)) => {
                let (spec, found) = agent_spec(&path, object.clone());
                errors.extend(found);
                if spec.is_none() {
                    reported.push(path);
                }
                spec
            }
            Some(_) => {
                errors.push(FieldError::new(
                    &path,
                    "expected an agent object or an agent name like \"claude-code\"",
                ));
                reported.push(path);
                None
            }
        };
        if let Some(spec) = &spec {
            errors.extend(spec.validate(&format!("candidates[{index}].agent")));
            candidate.insert("agent".into(), Value::from(spec.kind.slug()));
        }
        agents.push(spec);
    }
    agents
}

/// An agent object, refusing fields `AgentSpec` does not have (a typo such
/// as `modle` must not be dropped silently). `None` when a field's value
/// could not be read: its checks would judge a stand-in.
fn agent_spec(path: &str, mut value: Value) -> (Option<AgentSpec>, Vec<FieldError>) {
    // Every kind's spec has the same fields.
    let known = serde_json::to_value(AgentSpec::default_for(AgentKind::ALL[0]))
        .expect("an agent spec serializes");
    let mut errors = Vec::new();
    if let (Value::Object(given), Value::Object(known)) = (&mut value, &known) {
        let unknown: Vec<String> = given
            .keys()
            .filter(|k| !known.contains_key(*k))
            .cloned()
            .collect();
        let expected: Vec<String> = known.keys().map(|k| format!("`{k}`")).collect();
        for field in unknown {
            given.remove(&field);
            errors.push(FieldError::new(
                format!("{path}.{field}"),
                format!(
                    "unknown field `{field}`, expected one of {}",
                    expected.join(", ")
                ),
            ));
        }
    }
    let read = read_all::<AgentSpec>(value, path, &|at| known.pointer(at).cloned(), &[]);
    errors.extend(read.errors);
    (read.value.filter(|_| read.patched.is_empty()), errors)
}

fn agent_names() -> String {
    let names: Vec<String> = AgentKind::ALL
        .iter()
        .map(|k| format!("`{}`", k.slug()))
        .collect();
    names.join(", ")
}

fn from_policy(error: PolicyError) -> ProfileError {
    match error {
        PolicyError::Syntax { message } => ProfileError::Syntax { message },
        PolicyError::Shape { path, message } => ProfileError::Shape { path, message },
        PolicyError::UnsupportedVersion { found } => ProfileError::UnsupportedVersion { found },
        PolicyError::Invalid { errors } => ProfileError::Invalid { errors },
    }
}

fn shape(path: impl Into<String>, message: impl Into<String>) -> ProfileError {
    ProfileError::Shape {
        path: path.into(),
        message: message.into(),
    }
}

impl ProfileDocument {
    /// The document of a stored profile.
    pub fn from_profile(profile: &Profile) -> ProfileDocument {
        ProfileDocument {
            version: PROFILE_VERSION,
            name: profile.name.clone(),
            candidates: profile.candidates.iter().map(candidate_entry).collect(),
        }
    }

    /// Pretty JSON with a trailing newline, keys in the order a person
    /// reads them (`version`, `name`, `candidates`; a candidate's `name`
    /// first); agent fields left at their defaults (no program, no args, no
    /// env…) are left out, so the file reads like what a person would write.
    pub fn to_json_pretty(&self) -> String {
        let out = DocumentOut {
            version: self.version,
            name: &self.name,
            candidates: self.candidates.iter().map(CandidateOut::from).collect(),
        };
        let mut text = serde_json::to_string_pretty(&out).expect("a profile document serializes");
        text.push('\n');
        text
    }

    /// The document as it may leave the database: every secret `env`
    /// value (kept in the keyring, or looking like a key) written as
    /// [`MASKED`]. A document in a file, on the screen or in an editor
    /// never carries one.
    pub fn without_secrets(&self) -> ProfileDocument {
        let mut doc = self.clone();
        for c in &mut doc.candidates {
            for (name, value) in &mut c.agent.env {
                if crate::agent::is_secret_value(name, value) {
                    *value = MASKED.to_string();
                }
            }
        }
        doc
    }

    /// The document with each [`MASKED`] value replaced by what
    /// `existing`'s candidate of the same name holds for that variable, so
    /// an exported document imported over its profile keeps its secrets.
    /// A value with nothing to keep stays [`MASKED`], which validation
    /// refuses.
    pub fn with_kept_secrets(&self, existing: Option<&Profile>) -> ProfileDocument {
        let mut doc = self.clone();
        let Some(existing) = existing else {
            return doc;
        };
        for c in &mut doc.candidates {
            let Some(stored) = existing.candidates.iter().find(|s| s.name == c.name) else {
                continue;
            };
            for (name, value) in &mut c.agent.env {
                if value == MASKED {
                    if let Some(kept) = stored.agent.env.get(name) {
                        value.clone_from(kept);
                    }
                }
            }
        }
        doc
    }

    /// The candidates to save, keeping the ids of `existing`'s candidates
    /// with the same name so running routes pick up their new policies.
    pub fn to_inputs(&self, existing: Option<&Profile>) -> Vec<CandidateInput> {
        let ids: BTreeMap<&str, u32> = existing
            .map(|p| {
                p.candidates
                    .iter()
                    .map(|c| (c.name.as_str(), c.id))
                    .collect()
            })
            .unwrap_or_default();
        self.candidates
            .iter()
            .map(|c| CandidateInput {
                id: ids.get(c.name.as_str()).copied(),
                name: super::names::normalize(&c.name),
                enabled: c.enabled,
                agent: c.agent.clone(),
                policy: CandidatePolicy {
                    transient: c.transient.clone(),
                    hard: c.hard.clone(),
                    unclassified: c.unclassified,
                },
            })
            .collect()
    }
}

fn candidate_entry(c: &Candidate) -> ProfileCandidate {
    ProfileCandidate {
        name: c.name.clone(),
        enabled: c.enabled,
        agent: c.agent.clone(),
        transient: c.policy.transient.clone(),
        hard: c.policy.hard.clone(),
        unclassified: c.policy.unclassified,
    }
}

/// [`ProfileDocument`] as written to a file.
#[derive(Serialize)]
struct DocumentOut<'a> {
    version: u32,
    name: &'a str,
    candidates: Vec<CandidateOut<'a>>,
}

#[derive(Serialize)]
struct CandidateOut<'a> {
    name: &'a str,
    enabled: bool,
    agent: AgentOut<'a>,
    transient: &'a ClassPolicy,
    hard: &'a ClassPolicy,
    unclassified: &'a UnclassifiedPolicy,
}

impl<'a> From<&'a ProfileCandidate> for CandidateOut<'a> {
    fn from(c: &'a ProfileCandidate) -> Self {
        let a = &c.agent;
        CandidateOut {
            name: &c.name,
            enabled: c.enabled,
            agent: AgentOut {
                kind: a.kind,
                access: a.access,
                program: a.program.as_deref(),
                args: &a.args,
                model: a.model.as_deref(),
                env: &a.env,
                config_dir: a.config_dir.as_deref(),
                timeouts: a.timeouts,
                script: &a.script,
                simulates: a.simulates,
                account: a.account.as_deref(),
                max_concurrent: a.max_concurrent,
                continue_message: a.continue_message.as_deref(),
            },
            transient: &c.transient,
            hard: &c.hard,
            unclassified: &c.unclassified,
        }
    }
}

/// [`AgentSpec`]'s fields, the ones at their defaults left out.
#[derive(Serialize)]
struct AgentOut<'a> {
    kind: AgentKind,
    /// Left out only for a candidate saved before access levels (legacy).
    #[serde(skip_serializing_if = "Option::is_none")]
    access: Option<crate::agent::Access>,
    #[serde(skip_serializing_if = "Option::is_none")]
    program: Option<&'a str>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    args: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    model: Option<&'a str>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    env: &'a BTreeMap<String, String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    config_dir: Option<&'a str>,
    timeouts: crate::agent::AttemptTimeouts,
    #[serde(skip_serializing_if = "<[crate::agent::SimStep]>::is_empty")]
    script: &'a [crate::agent::SimStep],
    #[serde(skip_serializing_if = "Option::is_none")]
    simulates: Option<AgentKind>,
    /// The label only: a derived account's hash never leaves the database.
    #[serde(skip_serializing_if = "Option::is_none")]
    account: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_concurrent: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    continue_message: Option<&'a str>,
}

/// The JSON Schema of the current document, generated from the Rust types
/// (committed as `schemas/profile.schema.json`). `$schema` is allowed as a
/// top-level key so editors can be pointed at it.
pub fn json_schema() -> Value {
    let mut schema =
        serde_json::to_value(schemars::schema_for!(ProfileDocument)).expect("a schema serializes");
    if let Some(Value::Object(properties)) = schema.get_mut("properties") {
        properties.insert(
            "$schema".into(),
            serde_json::json!({
                "description": "Where this schema is, for editors; ignored on import.",
                "type": "string"
            }),
        );
    }
    schema
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every problem `load` lists for `text`, as `path: message`.
    fn problems(text: &str) -> Vec<String> {
        let error = load(text).expect_err("refused");
        error.errors().iter().map(ToString::to_string).collect()
    }

    const SECTION: &str = r#"{"wait_for_reset": {"enabled": false, "max_wait_seconds": 0},
        "retry": {"enabled": false, "max_retries": 0, "initial_interval_seconds": 0},
        "on_exhausted": "skip"}"#;

    fn candidate(name: &str, agent: &str) -> String {
        format!(
            r#"{{"name": "{name}", "agent": {agent}, "transient": {SECTION}, "hard": {SECTION}}}"#
        )
    }

    #[test]
    fn problems_of_the_profile_its_agents_and_its_policies_are_all_listed_once() {
        let cli = AgentKind::ALL
            .into_iter()
            .find(|k| k.descriptor().default_program.is_some())
            .expect("a kind that runs a CLI");
        let slug = format!("\"{}\"", cli.slug());
        let later = candidate("b", &slug).replacen("\"skip\"", "\"later\"", 1);
        let text = format!(
            r#"{{"version": 1, "name": 7, "$schema": 1, "candidates": [
                5, {later}, {}, {}, {{"name": "e", "transient": {SECTION}}}]}}"#,
            candidate("c", r#"{"kind": "nope", "modle": "x"}"#),
            candidate("d", "true"),
        );
        let found = problems(&text);
        let paths: Vec<&str> = found
            .iter()
            .map(|line| line.split(": ").next().unwrap())
            .collect();
        assert_eq!(
            paths,
            [
                "$schema",
                "name",
                "candidates[0]",
                "candidates[1].transient.on_exhausted",
                "candidates[2].agent.kind",
                "candidates[2].agent.modle",
                "candidates[3].agent",
                "candidates[4]",
                "candidates[4]",
            ],
            "each problem once; nothing about what stood in for them: {found:#?}"
        );
        assert!(found[7].ends_with("missing field `agent`"), "{found:#?}");
        assert!(found[8].ends_with("missing field `hard`"), "{found:#?}");
    }
}
