//! The versioned policy document: an ordered list of candidates, each with a
//! complete [`CandidatePolicy`], and [`load`], the one way to read it.
//!
//! `load` accepts the current version and the legacy generic action maps
//! (a document without `version`), validates everything, and returns the
//! normalized current-version document. Unknown versions and unknown fields
//! are errors, never silently defaulted.

use super::read::{is_under, listed, path_order, read_all};
use super::validate::{validate_document, validate_read, FieldError, PolicyError};
use super::{legacy, CandidatePolicy, ClassPolicy, UnclassifiedPolicy, CURRENT_VERSION};
use crate::classification::PolicyClass;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_path_to_error::Segment;

/// A route's candidates in order, with their policies.
///
/// No `specta::Type` here or on [`CandidateEntry`]: an entry's JSON is its
/// flat conversion form, which a derive on the Rust struct would misdescribe.
/// [`CandidatePolicy`] and its parts are what cross IPC.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicyDocument {
    /// Always [`CURRENT_VERSION`] once loaded.
    pub version: u32,
    pub candidates: Vec<CandidateEntry>,
}

/// One candidate of a dynamic profile.
///
/// In JSON the policy's sections sit next to the identity fields
/// (`{"name", "agent", "enabled", "transient", "hard", "unclassified"}`), so
/// field paths read
/// `candidates[2].hard.retry.max_retries`; [`CandidateEntryJson`] is that
/// shape.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "CandidateEntryJson", into = "CandidateEntryJson")]
pub struct CandidateEntry {
    /// Unique within the document; what people and timelines call it.
    pub name: String,
    /// Which agent adapter runs it (`claude-code`, `codex`, `simulated`, …).
    pub agent: String,
    /// Disabled candidates are never chosen as the next candidate.
    pub enabled: bool,
    pub policy: CandidatePolicy,
}

/// The flat JSON form of [`CandidateEntry`]. Spelled out rather than using
/// `#[serde(flatten)]`, which does not work with `deny_unknown_fields`.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct CandidateEntryJson {
    name: String,
    agent: String,
    #[serde(default = "enabled_by_default")]
    enabled: bool,
    transient: ClassPolicy,
    hard: ClassPolicy,
    /// Optional: a document written before it existed reads as off.
    #[serde(default)]
    unclassified: UnclassifiedPolicy,
}

fn enabled_by_default() -> bool {
    true
}

impl From<CandidateEntryJson> for CandidateEntry {
    fn from(json: CandidateEntryJson) -> CandidateEntry {
        CandidateEntry {
            name: json.name,
            agent: json.agent,
            enabled: json.enabled,
            policy: CandidatePolicy {
                transient: json.transient,
                hard: json.hard,
                unclassified: json.unclassified,
            },
        }
    }
}

impl From<CandidateEntry> for CandidateEntryJson {
    fn from(entry: CandidateEntry) -> CandidateEntryJson {
        CandidateEntryJson {
            name: entry.name,
            agent: entry.agent,
            enabled: entry.enabled,
            transient: entry.policy.transient,
            hard: entry.policy.hard,
            unclassified: entry.policy.unclassified,
        }
    }
}

impl CandidateEntry {
    /// A new candidate with the new-candidate default policy (immediate skip).
    pub fn new(name: impl Into<String>, agent: impl Into<String>) -> CandidateEntry {
        CandidateEntry {
            name: name.into(),
            agent: agent.into(),
            enabled: true,
            policy: CandidatePolicy::default_for_new_candidate(),
        }
    }
}

impl PolicyDocument {
    /// The same document with every disabled section in stored form.
    pub fn normalize(&self) -> PolicyDocument {
        let candidates = self
            .candidates
            .iter()
            .map(|entry| CandidateEntry {
                policy: entry.policy.normalize(),
                ..entry.clone()
            })
            .collect();
        PolicyDocument {
            version: CURRENT_VERSION,
            candidates,
        }
    }
}

/// Which form the input was in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum DocumentSource {
    Current,
    /// A generic action map, normalized as the policy decision prescribes.
    Legacy,
}

/// A validated, normalized document and the form it was read from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoadedDocument {
    pub document: PolicyDocument,
    pub source: DocumentSource,
}

/// Reads a current or legacy policy document from JSON text, validates it
/// and returns it normalized.
pub fn load(json: &str) -> Result<LoadedDocument, PolicyError> {
    load_value(parse_without_duplicates(json)?)
}

/// [`load`] for a document already parsed with [`parse_without_duplicates`]
/// (the profile document carries one inside it). An invalid document is
/// refused with every problem, at most [`MAX_PROBLEMS`](super::read::MAX_PROBLEMS) of them.
pub fn load_value(value: Value) -> Result<LoadedDocument, PolicyError> {
    read_value(value, &[]).map_err(|error| match error {
        Refused::Policy(error) => error,
        Refused::Problems {
            mut errors,
            complete,
        } => {
            // By candidate; within one, in the order found: serde's, then
            // the checks' (each section in the editor's order).
            errors.sort_by_key(|e| {
                let (part, candidate, _) = path_order(&e.path);
                (part, candidate)
            });
            invalid(listed(errors, complete))
        }
    })
}

/// Why [`read_value`] refused a document.
#[derive(Debug)]
pub enum Refused {
    /// Its form: not an object, an unknown version.
    Policy(PolicyError),
    /// Its fields, each problem once, unsorted; `complete` false when
    /// reading stopped at [`MAX_PROBLEMS`](super::read::MAX_PROBLEMS).
    Problems {
        errors: Vec<FieldError>,
        complete: bool,
    },
}

/// [`load_value`] of a document some of whose places the caller has
/// already found wrong and listed (`reported`): problems at or under them
/// are not listed again, and no check reads them.
pub fn read_value(value: Value, reported: &[String]) -> Result<LoadedDocument, Refused> {
    let Value::Object(fields) = &value else {
        return Err(Refused::Policy(shape("document", "expected a JSON object")));
    };
    let current = match fields.get("version") {
        Some(version) if version.as_u64() != Some(u64::from(CURRENT_VERSION)) => {
            return Err(Refused::Policy(PolicyError::UnsupportedVersion {
                found: version.to_string(),
            }))
        }
        Some(_) => true,
        None if looks_current(&value) => {
            return Err(Refused::Policy(shape(
                "version",
                "missing; a current policy document starts with \"version\": 1",
            )))
        }
        None => false,
    };
    let stood_in = |patched: &[String], path: &str| {
        patched
            .iter()
            .chain(reported)
            .any(|s| is_under(s, path) || is_under(path, s))
    };
    if !current {
        let template = serde_json::to_value(legacy::LegacyCandidate {
            name: String::new(),
            agent: String::new(),
            enabled: true,
            on_error: None,
            rules: std::collections::BTreeMap::new(),
        })
        .expect("a legacy candidate serializes");
        let read = read_all::<legacy::LegacyDocument>(
            value,
            "",
            &|at| candidate_stand_in(&template, at),
            reported,
        );
        let mut errors = read.errors;
        let document = match read.value.map(|legacy| legacy::convert(&legacy)) {
            Some(Ok(document)) if errors.is_empty() && read.patched.is_empty() => document,
            Some(Err(invalid)) => {
                // A conversion problem of a candidate read with a stand-in
                // may be the stand-in's.
                errors.extend(invalid.into_iter().filter(|e| {
                    !stood_in(&read.patched, candidate_of(&e.path).unwrap_or(&e.path))
                }));
                return Err(problems(errors, read.complete));
            }
            _ => return Err(problems(errors, read.complete)),
        };
        return checked(document);
    }
    let template =
        serde_json::to_value(CandidateEntry::new("", "")).expect("a candidate entry serializes");
    let read =
        read_all::<PolicyDocument>(value, "", &|at| candidate_stand_in(&template, at), reported);
    let mut errors = read.errors;
    if let Some(document) = &read.value {
        errors.extend(validate_read(document, &|path| {
            stood_in(&read.patched, path)
        }));
    }
    match read.value {
        Some(document) if errors.is_empty() => Ok(LoadedDocument {
            document: document.normalize(),
            source: DocumentSource::Current,
        }),
        _ => Err(problems(errors, read.complete)),
    }
}

/// A legacy document converted: checked like a current one.
fn checked(document: PolicyDocument) -> Result<LoadedDocument, Refused> {
    let errors = validate_document(&document);
    if !errors.is_empty() {
        return Err(problems(errors, true));
    }
    Ok(LoadedDocument {
        document: document.normalize(),
        source: DocumentSource::Legacy,
    })
}

fn problems(errors: Vec<FieldError>, complete: bool) -> Refused {
    Refused::Problems { errors, complete }
}

/// What a valid candidate (`template`) has at `at`
/// (`/candidates/3/hard/on_exhausted`); a whole candidate for a candidate
/// that is not an object. Nothing outside the list of candidates.
fn candidate_stand_in(template: &Value, at: &str) -> Option<Value> {
    let rest = at.strip_prefix("/candidates/")?;
    let (index, inside) = rest.split_once('/').unwrap_or((rest, ""));
    index.parse::<usize>().ok()?;
    if inside.is_empty() {
        return Some(template.clone());
    }
    template.pointer(&format!("/{inside}")).cloned()
}

/// `candidates[2]` of a path below it.
fn candidate_of(path: &str) -> Option<&str> {
    let end = path.strip_prefix("candidates[")?.find(']')?;
    Some(&path[..end + "candidates[".len() + 1])
}

/// A document without `version` whose candidates carry a section of the
/// current form (`transient`, `hard` or `unclassified`) was meant to be
/// current, not legacy.
fn looks_current(value: &Value) -> bool {
    value
        .get("candidates")
        .and_then(Value::as_array)
        .is_some_and(|candidates| candidates.iter().any(has_class_section))
}

fn has_class_section(candidate: &Value) -> bool {
    PolicyClass::ALL
        .into_iter()
        .map(PolicyClass::as_str)
        .chain([UNCLASSIFIED])
        .any(|section| candidate.get(section).is_some())
}

/// The key of a candidate's [`UnclassifiedPolicy`] section.
const UNCLASSIFIED: &str = "unclassified";

/// JSON text as a value, refusing a key given twice in one object (with its
/// path): serde_json keeps the last one silently, so
/// `{"rate_limited": "stop", "rate_limited": "try_next"}` would read as
/// `try_next` and a repeated `transient` section would replace the first.
pub fn parse_without_duplicates(json: &str) -> Result<Value, PolicyError> {
    let duplicate = std::cell::RefCell::new(None);
    let mut deserializer = serde_json::Deserializer::from_str(json);
    let seed = StrictValue {
        path: String::new(),
        duplicate: &duplicate,
    };
    let parsed = serde::de::DeserializeSeed::deserialize(seed, &mut deserializer)
        .and_then(|value| deserializer.end().map(|()| value));
    match (parsed, duplicate.into_inner()) {
        (_, Some((path, key))) => Err(shape(
            path,
            format!("duplicate key `{key}`; each key may appear only once"),
        )),
        (Ok(value), None) => Ok(value),
        (Err(e), None) => Err(PolicyError::Syntax {
            message: e.to_string(),
        }),
    }
}

/// Builds a [`Value`] like serde_json does, remembering the first repeated
/// key as (path, key).
struct StrictValue<'a> {
    path: String,
    duplicate: &'a std::cell::RefCell<Option<(String, String)>>,
}

impl StrictValue<'_> {
    fn child(&self, segment: String) -> Self {
        StrictValue {
            path: format!("{}{segment}", self.path),
            duplicate: self.duplicate,
        }
    }

    fn key_segment(&self, key: &str) -> String {
        match (is_plain_name(key), self.path.is_empty()) {
            (true, true) => key.to_string(),
            (true, false) => format!(".{key}"),
            (false, _) => format!("[{}]", Value::from(key)),
        }
    }
}

impl<'de> serde::de::DeserializeSeed<'de> for StrictValue<'_> {
    type Value = Value;

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for StrictValue<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(self.child(format!("[{}]", items.len())))? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut fields = serde_json::Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let child = self.child(self.key_segment(&key));
            if fields.contains_key(&key) {
                let path = child.path.clone();
                *self.duplicate.borrow_mut() = Some((path, key));
                return Err(serde::de::Error::custom("duplicate key"));
            }
            let value = map.next_value_seed(child)?;
            fields.insert(key, value);
        }
        Ok(Value::Object(fields))
    }
}

/// A deserialization path as `candidates[2].hard.retry`; `document` for the
/// root. A key that is not a plain name is quoted (`candidates[0][""]`), so
/// no path is ever empty.
pub fn field_path(path: &serde_path_to_error::Path) -> String {
    written_path(path.iter().map(|segment| match segment {
        Segment::Seq { index } => PathPart::Index(*index),
        Segment::Map { key } | Segment::Enum { variant: key } => PathPart::Key(key),
        Segment::Unknown => PathPart::Unknown,
    }))
}

/// One step of a path as [`written_path`] writes it.
pub(super) enum PathPart<'a> {
    Index(usize),
    Key(&'a str),
    Unknown,
}

/// The one way a path is written, whether serde or a reader found it.
pub(super) fn written_path<'a>(parts: impl Iterator<Item = PathPart<'a>>) -> String {
    let mut out = String::new();
    for part in parts {
        match part {
            PathPart::Index(index) => out.push_str(&format!("[{index}]")),
            PathPart::Key(key) if is_plain_name(key) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(key);
            }
            PathPart::Key(key) => out.push_str(&format!("[{}]", Value::from(key))),
            PathPart::Unknown => out.push_str(if out.is_empty() { "?" } else { ".?" }),
        }
    }
    if out.is_empty() {
        "document".to_string()
    } else {
        out
    }
}

fn is_plain_name(key: &str) -> bool {
    !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

fn shape(path: impl Into<String>, message: impl Into<String>) -> PolicyError {
    PolicyError::Shape {
        path: path.into(),
        message: message.into(),
    }
}

fn invalid(errors: Vec<FieldError>) -> PolicyError {
    PolicyError::Invalid { errors }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::read::MAX_PROBLEMS;
    use crate::policy::Exhausted;

    const CURRENT: &str = r#"{
        "version": 1,
        "candidates": [{
            "name": "opus", "agent": "claude-code",
            "transient": {
                "wait_for_reset": {"enabled": false, "max_wait_seconds": 60},
                "retry": {"enabled": true, "max_retries": 3, "initial_interval_seconds": 5},
                "on_exhausted": "skip"
            },
            "hard": {
                "wait_for_reset": {"enabled": true, "max_wait_seconds": 300},
                "retry": {"enabled": false, "max_retries": 0, "initial_interval_seconds": 0},
                "on_exhausted": "stop"
            }
        }]
    }"#;

    /// Every problem `load` finds in `text`.
    fn problems(text: &str) -> Vec<FieldError> {
        match load(text) {
            Err(PolicyError::Invalid { errors }) => errors,
            other => panic!("refused for its fields: {other:?}"),
        }
    }

    #[test]
    fn current_document_loads_normalized() {
        let loaded = load(CURRENT).expect("valid document");
        assert_eq!(loaded.source, DocumentSource::Current);
        let entry = &loaded.document.candidates[0];
        assert!(entry.enabled, "enabled defaults to true");
        assert_eq!(
            entry.policy.transient.wait_for_reset.max_wait_seconds, 0,
            "disabled wait is stored normalized"
        );
        assert_eq!(entry.policy.hard.on_exhausted, Exhausted::Stop);
    }

    #[test]
    fn normalized_output_loads_back_unchanged() {
        let loaded = load(CURRENT).unwrap();
        let text = serde_json::to_string(&loaded.document).unwrap();
        assert_eq!(load(&text).unwrap().document, loaded.document);
    }

    #[test]
    fn a_candidate_entry_serializes_flat() {
        let entry = CandidateEntry::new("opus", "claude-code");
        let value = serde_json::to_value(&entry).unwrap();
        let keys: Vec<&str> = value
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            keys,
            vec![
                "agent",
                "enabled",
                "hard",
                "name",
                "transient",
                "unclassified"
            ],
            "the sections sit next to name and agent, with no `policy` wrapper"
        );
    }

    #[test]
    fn a_nested_policy_key_is_an_unknown_field() {
        let text = CURRENT.replace(
            "\"agent\": \"claude-code\",",
            "\"agent\": \"claude-code\", \"policy\": {},",
        );
        let [FieldError { path, message }] = &problems(&text)[..] else {
            panic!("the old nested form must be refused, once");
        };
        assert_eq!(path, "candidates[0].policy");
        assert!(message.starts_with("unknown field `policy`"), "{message}");
    }

    #[test]
    fn unknown_version_is_an_error() {
        let text = CURRENT.replace("\"version\": 1", "\"version\": 2");
        assert_eq!(
            load(&text),
            Err(PolicyError::UnsupportedVersion { found: "2".into() })
        );
    }

    #[test]
    fn unknown_field_names_its_path() {
        let text = CURRENT.replace("\"max_retries\": 3", "\"max_retries\": 3, \"jitter\": true");
        let [FieldError { path, message }] = &problems(&text)[..] else {
            panic!("an unknown field must be refused, once");
        };
        assert_eq!(path, "candidates[0].transient.retry.jitter");
        assert!(message.starts_with("unknown field `jitter`"), "{message}");
    }

    #[test]
    fn current_document_without_version_is_not_read_as_legacy() {
        let text = CURRENT.replace("\"version\": 1,", "");
        assert_eq!(
            load(&text),
            Err(shape(
                "version",
                "missing; a current policy document starts with \"version\": 1"
            ))
        );
    }

    #[test]
    fn a_new_candidate_entry_is_enabled_and_skips_immediately() {
        let entry = CandidateEntry::new("opus", "claude-code");
        assert!(entry.enabled);
        assert_eq!(entry.policy, CandidatePolicy::default_for_new_candidate());
    }

    #[test]
    fn an_empty_or_unusual_key_still_has_a_path() {
        let found = problems(r#"{"": 0}"#);
        let FieldError { path, message } = &found[0];
        assert_eq!(
            path, r#"[""]"#,
            "the empty key is quoted, not an empty path"
        );
        assert!(message.starts_with("unknown field ``"), "{message}");
        let text = CURRENT.replace("\"max_retries\": 3", "\"max_retries\": 3, \"a.b\": 1");
        let [FieldError { path, .. }] = &problems(&text)[..] else {
            panic!("an unknown key must be refused, once");
        };
        assert_eq!(path, r#"candidates[0].transient.retry["a.b"]"#);
    }

    #[test]
    fn a_duplicated_key_is_a_shape_error_with_its_path() {
        let legacy = r#"{"candidates": [{"name": "a", "agent": "codex",
            "rules": {"rate_limited": "stop", "rate_limited": "try_next"}}]}"#;
        assert_eq!(
            load(legacy),
            Err(shape(
                "candidates[0].rules.rate_limited",
                "duplicate key `rate_limited`; each key may appear only once"
            )),
            "serde_json alone keeps the last one: try_next would win silently"
        );
        let twice = CURRENT.replace("\"version\": 1", "\"version\": 1, \"version\": 1");
        assert_eq!(
            load(&twice),
            Err(shape(
                "version",
                "duplicate key `version`; each key may appear only once"
            )),
            "even when both say the same"
        );
        let odd = r#"{"candidates": [{"a.b": 1, "a.b": 2}]}"#;
        assert_eq!(
            load(odd),
            Err(shape(
                r#"candidates[0]["a.b"]"#,
                "duplicate key `a.b`; each key may appear only once"
            ))
        );
    }

    #[test]
    fn the_same_key_in_two_objects_is_not_a_duplicate() {
        assert!(load(CURRENT).is_ok(), "every section repeats `enabled`");
    }

    #[test]
    fn a_typed_policy_from_the_app_refuses_a_duplicated_section_too() {
        // The desktop shell deserializes `CandidatePolicy` straight from
        // IPC JSON; derived struct fields refuse a repeat on their own.
        let section = r#"{"wait_for_reset": {"enabled": false, "max_wait_seconds": 0},
            "retry": {"enabled": false, "max_retries": 0, "initial_interval_seconds": 0},
            "on_exhausted": "skip"}"#;
        let text =
            format!(r#"{{"transient": {section}, "hard": {section}, "transient": {section}}}"#);
        let error = serde_json::from_str::<CandidatePolicy>(&text).unwrap_err();
        assert!(
            error.to_string().starts_with("duplicate field `transient`"),
            "{error}"
        );
    }

    #[test]
    fn non_object_and_non_json_inputs_are_rejected() {
        assert_eq!(load("[]"), Err(shape("document", "expected a JSON object")));
        assert!(matches!(load("{"), Err(PolicyError::Syntax { .. })));
    }

    /// CURRENT with a second candidate "sonnet" like the first.
    fn two_candidates() -> String {
        let value: Value = serde_json::from_str(CURRENT).unwrap();
        let mut second = value["candidates"][0].clone();
        second["name"] = Value::from("sonnet");
        let mut value = value;
        value["candidates"].as_array_mut().unwrap().push(second);
        value.to_string()
    }

    fn paths(errors: &[FieldError]) -> Vec<&str> {
        errors.iter().map(|e| e.path.as_str()).collect()
    }

    #[test]
    fn an_unknown_word_in_two_candidates_is_listed_for_each() {
        let text =
            two_candidates().replace("\"on_exhausted\":\"stop\"", "\"on_exhausted\":\"later\"");
        let found = problems(&text);
        assert_eq!(
            paths(&found),
            [
                "candidates[0].hard.on_exhausted",
                "candidates[1].hard.on_exhausted"
            ],
            "serde stops at the first; the second is listed too, each once: {found:?}"
        );
        assert!(found
            .iter()
            .all(|e| e.message.starts_with("unknown variant `later`")));
    }

    #[test]
    fn a_wrong_word_and_a_number_out_of_range_are_both_listed() {
        let text = CURRENT
            .replace("\"on_exhausted\": \"stop\"", "\"on_exhausted\": \"later\"")
            .replace("\"max_retries\": 3", "\"max_retries\": 11")
            .replace(
                "\"initial_interval_seconds\": 0",
                "\"initial_interval_seconds\": \"soon\"",
            );
        let found = problems(&text);
        assert_eq!(
            paths(&found),
            [
                "candidates[0].hard.on_exhausted",
                "candidates[0].hard.retry.initial_interval_seconds",
                "candidates[0].transient.retry.max_retries",
            ],
            "the range is checked in the section read as written: {found:?}"
        );
        assert_eq!(
            found[2].message,
            "must be 1–10 when enabled (11 is too many)"
        );
    }

    #[test]
    fn no_problem_is_made_up_from_what_stood_in_for_a_wrong_value() {
        // The stand-in for "three" is a valid candidate's 0 retries, which
        // an enabled retry refuses: that would be a problem the person
        // does not have.
        let text = CURRENT.replace("\"max_retries\": 3", "\"max_retries\": \"three\"");
        let found = problems(&text);
        assert_eq!(paths(&found), ["candidates[0].transient.retry.max_retries"]);
        assert!(
            found[0]
                .message
                .starts_with("invalid type: string \"three\""),
            "{found:?}"
        );
        // A candidate whose name stood in is not a duplicate of another.
        let text = two_candidates().replace("\"name\":\"sonnet\"", "\"name\":5");
        let found = problems(&text);
        assert_eq!(paths(&found), ["candidates[1].name"], "{found:?}");
    }

    #[test]
    fn thousands_of_problems_are_listed_up_to_the_cap_with_how_many_more() {
        let value: Value = serde_json::from_str(CURRENT).unwrap();
        let mut out_of_range = value["candidates"][0].clone();
        out_of_range["transient"]["retry"]["max_retries"] = Value::from(0);
        let many = |candidate: &Value| {
            let list: Vec<Value> = (0..2000)
                .map(|i| {
                    let mut c = candidate.clone();
                    c["name"] = Value::from(format!("c{i}"));
                    c
                })
                .collect();
            serde_json::json!({"version": 1, "candidates": list}).to_string()
        };
        let found = problems(&many(&out_of_range));
        assert_eq!(found.len(), MAX_PROBLEMS + 1, "the cap and one line more");
        assert_eq!(found[0].path, "candidates[0].transient.retry.max_retries");
        assert_eq!(
            found[MAX_PROBLEMS],
            FieldError::new("document", "1950 more problems not listed here")
        );
        let mut wrong_word = value["candidates"][0].clone();
        wrong_word["hard"]["on_exhausted"] = Value::from("later");
        let found = problems(&many(&wrong_word));
        assert_eq!(found.len(), MAX_PROBLEMS + 1);
        assert_eq!(
            found[MAX_PROBLEMS],
            FieldError::new(
                "document",
                "reading stopped after 50 problems; there may be more after these"
            ),
            "reading a word's problems one by one stops at the cap"
        );
    }
}
