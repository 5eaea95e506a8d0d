//! The checks each fuzz target runs on one input, in one place so the fuzz
//! targets (`fuzz/fuzz_targets/*.rs`) and the stable replay of kept inputs
//! (`tests/fuzz_regressions.rs`, which includes this file with `#[path]`)
//! assert exactly the same things.
//!
//! Each check asserts only what the library promises: no panic, bounded
//! evidence, an idempotent sanitizer that removes the key forms its rules
//! name, hints inside the trust window, and policy documents that either load
//! to a valid normalized form that round-trips or fail with a field path.

use std::collections::BTreeMap;

use chrono::{DateTime, TimeZone, Utc};
use recourse::evidence::{sanitize, Evidence, Provider, RawEvidence, MAX_MESSAGE_BYTES};
use recourse::policy::validate::validate_document;
use recourse::policy::{load, DocumentSource, LoadedDocument, PolicyDocument, PolicyError};
use recourse::timing::{hint_from_headers, hint_from_text, is_trusted};
use serde_json::{Map, Value};

/// One target's checks on one input; a failed check panics.
pub type Check = fn(&[u8]);

/// Every target by name (the folder names under `fuzz/regressions/`).
pub const TARGETS: [(&str, Check); 5] = [
    ("evidence_from_raw", evidence_from_raw),
    ("hint_from_text", hint_text),
    ("sanitize", sanitize_text),
    ("policy_document", policy_document),
    ("policy_structured", policy_structured),
];

/// `Evidence::from_raw` on arbitrary bytes (the first 64 also serve as a
/// header value and error type): no panic, a bounded message.
pub fn evidence_from_raw(data: &[u8]) {
    let (header_value, message) = data.split_at(data.len().min(64));
    let occurred_at = Utc.with_ymd_and_hms(2025, 6, 14, 17, 56, 6).unwrap();
    let raw = RawEvidence::new(Provider::Generic, message, occurred_at)
        .with_http_status(429)
        .with_headers(BTreeMap::from([(
            "anthropic-ratelimit-requests-reset".to_owned(),
            String::from_utf8_lossy(header_value).into_owned(),
        )]))
        .with_error_type(Some(String::from_utf8_lossy(header_value).into_owned()));
    let evidence = Evidence::from_raw(raw);
    assert!(
        evidence.message.len() <= MAX_MESSAGE_BYTES,
        "the message is cut to MAX_MESSAGE_BYTES, got {}",
        evidence.message.len()
    );
}

/// Timing hints from text and headers at an instant and zone taken from the
/// first 8 bytes: every hint returned is inside the trust window.
pub fn hint_text(data: &[u8]) {
    let Some((seed, rest)) = data.split_first_chunk::<8>() else {
        return;
    };
    let seconds = i64::from_le_bytes(*seed) % 8_000_000_000;
    let Some(occurred_at) = DateTime::from_timestamp(seconds, 0) else {
        return;
    };
    let text = String::from_utf8_lossy(rest);
    let zone = chrono_tz::TZ_VARIANTS[usize::from(seed[0]) % chrono_tz::TZ_VARIANTS.len()];
    if let Some(hint) = hint_from_text(&text, occurred_at, zone) {
        assert!(
            is_trusted(hint.reset_at, occurred_at),
            "text hint {hint:?} is outside the trust window of {occurred_at}"
        );
    }
    let headers = BTreeMap::from([
        (
            "retry-after".to_owned(),
            text.chars().take(40).collect::<String>(),
        ),
        (
            "x-ratelimit-reset-tokens".to_owned(),
            text.chars().skip(40).take(40).collect(),
        ),
    ]);
    if let Some(hint) = hint_from_headers(&headers, occurred_at) {
        assert!(
            is_trusted(hint.reset_at, occurred_at),
            "header hint {hint:?} is outside the trust window of {occurred_at}"
        );
    }
}

/// Key forms the sanitizer matches wherever they appear, even glued to the
/// text before them (`docs/evidence.md`, markers table).
const PLANTED_SECRETS: [&str; 7] = [
    "sk-ant-api03-Zq8vKx2LmN4pR7tW",
    "glpat-Zq8vKx2LmN4pR7tW9yB1",
    "ghp_Zq8vKx2LmN4pR7tW9yB1cD3fG5h",
    "AKIAZQ8VKX2LMN4PR7TW",
    "AIzaSyZq8vKx2LmN4pR7tW9yB1cD3fG5h",
    "github_pat_Zq8vKx2LmN4pR7tW9yB1cD3fG5h",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.Zq8vKx2LmN4pR7tW",
];

/// `sanitize` alone on arbitrary text: no panic, idempotent, and a key
/// planted anywhere in the text (which one and where come from the first
/// byte) does not survive.
pub fn sanitize_text(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let once = sanitize(&text);
    assert_eq!(sanitize(&once), once, "sanitize is idempotent");
    let Some((&choice, rest)) = data.split_first() else {
        return;
    };
    let rest = String::from_utf8_lossy(rest);
    let secret = PLANTED_SECRETS[usize::from(choice) % PLANTED_SECRETS.len()];
    let mut at = usize::from(choice) * rest.len() / 256;
    while !rest.is_char_boundary(at) {
        at -= 1;
    }
    let planted = format!("{}{secret}{}", &rest[..at], &rest[at..]);
    let cleaned = sanitize(&planted);
    assert!(
        !cleaned.contains(secret),
        "planted key {secret} survived sanitizing: {cleaned:?}"
    );
}

/// `policy::load` on arbitrary bytes (lossily decoded), then the checks of
/// [`policy_text`].
pub fn policy_document(data: &[u8]) {
    policy_text(&String::from_utf8_lossy(data));
}

/// A JSON document (up to the first NUL byte; a minimal valid document if it
/// does not parse) mutated by the 3-byte operations after the NUL, so inputs
/// seeded from `fixtures/policy/` reach every field of the schema. Then the
/// checks of [`policy_text`].
pub fn policy_structured(data: &[u8]) {
    let (json, ops) = match data.iter().position(|&b| b == 0) {
        Some(nul) => (&data[..nul], &data[nul + 1..]),
        None => (data, &data[data.len()..]),
    };
    let mut value: Value = serde_json::from_slice(json).unwrap_or_else(|_| minimal_document());
    for op in ops.chunks_exact(3).take(MAX_MUTATIONS) {
        mutate(&mut value, [op[0], op[1], op[2]]);
    }
    let text = serde_json::to_string(&value).expect("a JSON value serializes");
    policy_text(&text);
}

/// What a policy document promises, loaded or not:
/// - `load` either gives a valid, normalized document whose serialization
///   loads back to the same document, or an error whose every item has a
///   field path and a message;
/// - a document that deserializes without `load`'s checks normalizes
///   idempotently, its validation errors carry paths, and when it has none,
///   `load` of its serialization gives exactly its normalized form.
fn policy_text(text: &str) {
    match load(text) {
        Ok(loaded) => check_loaded(&loaded),
        Err(error) => check_error(&error),
    }
    if let Ok(document) = serde_json::from_str::<PolicyDocument>(text) {
        check_unvalidated(&document);
    }
}

fn check_loaded(loaded: &LoadedDocument) {
    let document = &loaded.document;
    let errors = validate_document(document);
    assert!(errors.is_empty(), "a loaded document validates: {errors:?}");
    assert_eq!(
        &document.normalize(),
        document,
        "a loaded document is already normalized"
    );
    let text = serde_json::to_string(document).expect("a document serializes");
    let again = load(&text).expect("the serialized form of a loaded document loads");
    assert_eq!(&again.document, document, "serialization round-trips");
    assert_eq!(
        again.source,
        DocumentSource::Current,
        "a serialized document is in the current form"
    );
}

fn check_error(error: &PolicyError) {
    let errors = error.errors();
    assert!(!errors.is_empty(), "{error:?} lists at least one problem");
    for item in &errors {
        assert!(!item.path.trim().is_empty(), "{item:?} names a field path");
        assert!(!item.message.trim().is_empty(), "{item:?} says why");
    }
    assert!(!error.to_string().is_empty(), "{error:?} displays");
}

fn check_unvalidated(document: &PolicyDocument) {
    let normalized = document.normalize();
    assert_eq!(
        normalized.normalize(),
        normalized,
        "normalize is idempotent"
    );
    let errors = validate_document(document);
    for item in &errors {
        assert!(!item.path.trim().is_empty(), "{item:?} names a field path");
    }
    if errors.is_empty() {
        let text = serde_json::to_string(document).expect("a document serializes");
        assert_eq!(
            load(&text).map(|loaded| loaded.document),
            Ok(normalized),
            "a valid document loads as its normalized form"
        );
    }
}

/// Bounds the nesting a mutated value can reach (each operation adds at
/// most one level), far below what serializing it would need in stack.
const MAX_MUTATIONS: usize = 256;

/// Field names and words of the schema, current and legacy.
const WORDS: [&str; 28] = [
    "version",
    "candidates",
    "name",
    "agent",
    "enabled",
    "transient",
    "hard",
    "wait_for_reset",
    "retry",
    "on_exhausted",
    "max_wait_seconds",
    "max_retries",
    "initial_interval_seconds",
    "rules",
    "on_error",
    "policy",
    "skip",
    "stop",
    "try_next",
    "retry_same",
    "rate_limited",
    "provider_overloaded",
    "usage_limit_reached",
    "auth_invalid",
    "context_length_exceeded",
    "unknown",
    "claude-code",
    "",
];

/// Values at and around every limit, and of every JSON type.
fn interesting(selector: u8) -> Value {
    let values = [
        Value::from(0),
        Value::from(1),
        Value::from(-1),
        Value::from(10),
        Value::from(11),
        Value::from(3600),
        Value::from(3601),
        Value::from(86_400),
        Value::from(604_800),
        Value::from(604_801),
        Value::from(u32::MAX),
        Value::from(u64::from(u32::MAX) + 1),
        Value::from(u64::MAX),
        Value::from(i64::MIN),
        Value::from(1.5),
        Value::from(1e300),
        Value::from(true),
        Value::from(false),
        Value::Null,
        Value::Array(Vec::new()),
        Value::Object(Map::new()),
        Value::from(" "),
        Value::from("x".repeat(300)),
    ];
    let word_count = WORDS.len();
    let index = usize::from(selector) % (values.len() + word_count);
    match values.get(index) {
        Some(value) => value.clone(),
        None => Value::from(WORDS[index - values.len()]),
    }
}

/// A valid current document with one candidate, the fallback for inputs
/// whose JSON part does not parse.
fn minimal_document() -> Value {
    let section = serde_json::json!({
        "wait_for_reset": {"enabled": true, "max_wait_seconds": 300},
        "retry": {"enabled": true, "max_retries": 3, "initial_interval_seconds": 5},
        "on_exhausted": "skip"
    });
    serde_json::json!({
        "version": 1,
        "candidates": [{"name": "a", "agent": "claude-code",
                        "transient": section.clone(), "hard": section}]
    })
}

/// One step from a value to a child.
#[derive(Clone)]
enum Step {
    Key(String),
    Index(usize),
}

/// Every node of `value` as the steps that reach it, in document order.
fn node_paths(value: &Value) -> Vec<Vec<Step>> {
    fn walk(value: &Value, prefix: &mut Vec<Step>, out: &mut Vec<Vec<Step>>) {
        out.push(prefix.clone());
        match value {
            Value::Object(map) => {
                for (key, child) in map {
                    prefix.push(Step::Key(key.clone()));
                    walk(child, prefix, out);
                    prefix.pop();
                }
            }
            Value::Array(items) => {
                for (index, child) in items.iter().enumerate() {
                    prefix.push(Step::Index(index));
                    walk(child, prefix, out);
                    prefix.pop();
                }
            }
            Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) => {}
        }
    }
    let mut out = Vec::new();
    walk(value, &mut Vec::new(), &mut out);
    out
}

fn node_mut<'a>(mut value: &'a mut Value, path: &[Step]) -> &'a mut Value {
    for step in path {
        value = match (step, value) {
            (Step::Key(key), Value::Object(map)) => map.get_mut(key).expect("path from node_paths"),
            (Step::Index(index), Value::Array(items)) => &mut items[*index],
            (Step::Key(_) | Step::Index(_), _) => unreachable!("node_paths follows the value"),
        };
    }
    value
}

/// Applies one operation `[what, which node, argument]`.
fn mutate(value: &mut Value, [what, which, argument]: [u8; 3]) {
    let paths = node_paths(value);
    let node = node_mut(value, &paths[usize::from(which) % paths.len()]);
    let word = WORDS[usize::from(argument) % WORDS.len()];
    match what % 6 {
        0 => *node = interesting(argument),
        1 => remove_child(node, argument),
        2 => {
            if let Value::Object(map) = node {
                map.insert(word.to_owned(), interesting(argument / 7));
            }
        }
        3 => {
            if let Value::Array(items) = node {
                if let Some(first) = items.first().cloned() {
                    items.push(first);
                }
            }
        }
        4 => *node = Value::Array(vec![node.take()]),
        _ => {
            let inner = node.take();
            *node = Value::Object(Map::from_iter([(word.to_owned(), inner)]));
        }
    }
}

fn remove_child(node: &mut Value, argument: u8) {
    match node {
        Value::Object(map) => {
            let key = map
                .keys()
                .nth(usize::from(argument) % map.len().max(1))
                .cloned();
            if let Some(key) = key {
                map.remove(&key);
            }
        }
        Value::Array(items) if !items.is_empty() => {
            items.remove(usize::from(argument) % items.len());
        }
        Value::Array(_) | Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) => {}
    }
}
