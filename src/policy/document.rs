//! The versioned policy document: an ordered list of candidates, each with a
//! complete [`CandidatePolicy`], and [`load`], the one way to read it.
//!
//! `load` accepts the current version and the legacy generic action maps
//! (a document without `version`), validates everything, and returns the
//! normalized current-version document. Unknown versions and unknown fields
//! are errors, never silently defaulted.

use super::validate::{validate_document, FieldError, PolicyError};
use super::{legacy, CandidatePolicy, ClassPolicy, UnclassifiedPolicy, CURRENT_VERSION};
use crate::classification::PolicyClass;
use serde::de::DeserializeOwned;
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
/// (the profile document carries one inside it).
pub fn load_value(value: Value) -> Result<LoadedDocument, PolicyError> {
    let Value::Object(fields) = &value else {
        return Err(shape("document", "expected a JSON object"));
    };
    let (document, source) = match fields.get("version") {
        Some(version) => (
            read_current(version, value.clone())?,
            DocumentSource::Current,
        ),
        None if looks_current(&value) => {
            return Err(shape(
                "version",
                "missing; a current policy document starts with \"version\": 1",
            ))
        }
        None => (
            legacy::convert(&from_value(value)?).map_err(invalid)?,
            DocumentSource::Legacy,
        ),
    };
    let errors = validate_document(&document);
    if !errors.is_empty() {
        return Err(invalid(errors));
    }
    Ok(LoadedDocument {
        document: document.normalize(),
        source,
    })
}

fn read_current(version: &Value, value: Value) -> Result<PolicyDocument, PolicyError> {
    if version.as_u64() != Some(u64::from(CURRENT_VERSION)) {
        return Err(PolicyError::UnsupportedVersion {
            found: version.to_string(),
        });
    }
    from_value(value)
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

/// Deserializes with the path of the first offending field.
fn from_value<T: DeserializeOwned>(value: Value) -> Result<T, PolicyError> {
    serde_path_to_error::deserialize(value).map_err(|error| {
        let path = field_path(error.path());
        shape(path, error.into_inner().to_string())
    })
}

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
    let mut out = String::new();
    for segment in path.iter() {
        match segment {
            Segment::Seq { index } => out.push_str(&format!("[{index}]")),
            Segment::Map { key } | Segment::Enum { variant: key } if is_plain_name(key) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(key);
            }
            Segment::Map { key } | Segment::Enum { variant: key } => {
                out.push_str(&format!("[{}]", Value::from(key.as_str())));
            }
            Segment::Unknown => out.push_str(if out.is_empty() { "?" } else { ".?" }),
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
        let Err(PolicyError::Shape { path, message }) = load(&text) else {
            panic!("the old nested form must be a shape error");
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
        let Err(PolicyError::Shape { path, message }) = load(&text) else {
            panic!("unknown field must be a shape error");
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
        let Err(PolicyError::Shape { path, message }) = load(r#"{"": 0}"#) else {
            panic!("unknown keys must be a shape error");
        };
        assert_eq!(
            path, r#"[""]"#,
            "the empty key is quoted, not an empty path"
        );
        assert!(message.starts_with("unknown field ``"), "{message}");
        let text = CURRENT.replace("\"max_retries\": 3", "\"max_retries\": 3, \"a.b\": 1");
        let Err(PolicyError::Shape { path, .. }) = load(&text) else {
            panic!("unknown keys must be a shape error");
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
}
