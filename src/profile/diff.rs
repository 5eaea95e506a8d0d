//! What importing a profile document would change, field by field, so a
//! person sees it before anything is saved.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use super::document::{ProfileCandidate, ProfileDocument};
use super::words::candidate_field_words;
use crate::agent::masked_args;

/// One difference between the stored profile and the document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
pub struct ProfileChange {
    /// The candidate it concerns; `None` for the profile itself.
    pub candidate: Option<String>,
    /// What changed: `name`, `order`, `candidate`, or a field path inside
    /// the candidate (`transient.retry.max_retries`, `agent.model`).
    pub field: String,
    /// `field` in words, as the editor labels it ("Transient › Retries"):
    /// what a person reads.
    pub what: String,
    /// Absent when the thing is new.
    pub before: Option<String>,
    /// Absent when the thing is removed.
    pub after: Option<String>,
}

impl ProfileChange {
    /// One line in the words the app uses, then before and after:
    /// `Candidate “opus” › Transient › Retries: 3 → 5`.
    pub fn describe(&self) -> String {
        let subject = match (&self.candidate, self.field.as_str()) {
            (Some(c), "candidate") => format!("Candidate “{c}”"),
            (Some(c), _) => format!("Candidate “{c}” › {}", self.what),
            (None, _) => self.what.clone(),
        };
        match (&self.before, &self.after) {
            (None, Some(after)) => format!("{subject}: added ({after})"),
            (Some(before), None) => format!("{subject}: removed ({before})"),
            (Some(before), Some(after)) => format!("{subject}: {before} → {after}"),
            (None, None) => subject,
        }
    }
}

/// Shown instead of an environment value: they often hold keys.
const HIDDEN: &str = "(hidden)";

/// Every change from `current` to `incoming`, in document order: the name,
/// the candidates removed, added and reordered, then each field of each
/// candidate kept.
pub fn changes(current: &ProfileDocument, incoming: &ProfileDocument) -> Vec<ProfileChange> {
    let mut out = Vec::new();
    if current.name != incoming.name {
        out.push(ProfileChange {
            candidate: None,
            field: "name".into(),
            what: "Profile name".into(),
            before: Some(current.name.clone()),
            after: Some(incoming.name.clone()),
        });
    }
    let before: BTreeMap<&str, &ProfileCandidate> = current
        .candidates
        .iter()
        .map(|c| (c.name.as_str(), c))
        .collect();
    let after: BTreeMap<&str, &ProfileCandidate> = incoming
        .candidates
        .iter()
        .map(|c| (c.name.as_str(), c))
        .collect();
    for (position, c) in current.candidates.iter().enumerate() {
        if !after.contains_key(c.name.as_str()) {
            out.push(whole(c, position, false));
        }
    }
    for (position, c) in incoming.candidates.iter().enumerate() {
        if !before.contains_key(c.name.as_str()) {
            out.push(whole(c, position, true));
        }
    }
    let kept_before: Vec<&str> = current
        .candidates
        .iter()
        .map(|c| c.name.as_str())
        .filter(|n| after.contains_key(n))
        .collect();
    let kept_after: Vec<&str> = incoming
        .candidates
        .iter()
        .map(|c| c.name.as_str())
        .filter(|n| before.contains_key(n))
        .collect();
    if kept_before != kept_after {
        out.push(ProfileChange {
            candidate: None,
            field: "order".into(),
            what: "Order of the candidates".into(),
            before: Some(kept_before.join(", ")),
            after: Some(kept_after.join(", ")),
        });
    }
    for c in &incoming.candidates {
        if let Some(old) = before.get(c.name.as_str()) {
            out.extend(field_changes(old, c));
        }
    }
    out
}

fn whole(c: &ProfileCandidate, position: usize, added: bool) -> ProfileChange {
    // The kind as the app labels it, where the editor's list shows it.
    let text = format!(
        "{} at position {}",
        c.agent.kind.descriptor().label,
        position + 1
    );
    ProfileChange {
        candidate: Some(c.name.clone()),
        field: "candidate".into(),
        what: if added { "Added" } else { "Removed" }.into(),
        before: (!added).then(|| text.clone()),
        after: added.then_some(text),
    }
}

fn field_changes(old: &ProfileCandidate, new: &ProfileCandidate) -> Vec<ProfileChange> {
    let before = flatten(old);
    let after = flatten(new);
    let fields: std::collections::BTreeSet<&String> = before.keys().chain(after.keys()).collect();
    fields
        .into_iter()
        .filter(|f| before.get(*f) != after.get(*f))
        .map(|f| {
            let shown = |c: &ProfileCandidate, v: Option<&String>| {
                v.map(|v| {
                    if f.starts_with("agent.env.") {
                        HIDDEN.to_string()
                    } else if f == "agent.args" {
                        masked_args(&c.agent.args)
                            .map_or_else(|| v.clone(), |line| format!("(masked) {line}"))
                    } else {
                        v.clone()
                    }
                })
            };
            let (b, a) = (shown(old, before.get(f)), shown(new, after.get(f)));
            ProfileChange {
                candidate: Some(new.name.clone()),
                field: f.clone(),
                what: candidate_field_words(f),
                // A changed secret reads "(hidden) → (hidden)": it did change.
                before: b,
                after: a,
            }
        })
        .collect()
}

/// `path → compact JSON` of every leaf of a candidate but its name, a switch
/// as `on`/`off`; lists (arguments, a script) are one leaf each.
fn flatten(c: &ProfileCandidate) -> BTreeMap<String, String> {
    let mut value = serde_json::to_value(c).expect("a candidate serializes");
    if let Value::Object(fields) = &mut value {
        fields.remove("name");
    }
    let mut out = BTreeMap::new();
    walk(&value, String::new(), &mut out);
    out
}

fn walk(value: &Value, path: String, out: &mut BTreeMap<String, String>) {
    match value {
        Value::Object(fields) => {
            for (key, v) in fields {
                let child = if path.is_empty() {
                    key.clone()
                } else {
                    format!("{path}.{key}")
                };
                walk(v, child, out);
            }
        }
        Value::Null => {}
        Value::Array(items) if items.is_empty() => {}
        Value::String(s) => {
            out.insert(path, s.clone());
        }
        // A switch as the editor shows it, not `true`/`false`.
        Value::Bool(on) => {
            out.insert(path, if *on { "on" } else { "off" }.to_string());
        }
        Value::Array(_) | Value::Number(_) => {
            out.insert(path, value.to_string());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::document::load;

    /// One candidate "opus" running a CLI, its transient section given.
    fn document(transient: &str) -> ProfileDocument {
        let kind = crate::agent::AgentKind::ALL
            .iter()
            .map(|k| k.descriptor())
            .find(|d| d.default_program.is_some())
            .expect("a kind that runs a CLI");
        let off = r#"{"wait_for_reset": {"enabled": false, "max_wait_seconds": 0},
            "retry": {"enabled": false, "max_retries": 0, "initial_interval_seconds": 0},
            "on_exhausted": "skip"}"#;
        let text = format!(
            r#"{{"version": 1, "name": "P", "candidates": [
                {{"name": "opus", "agent": {{"kind": {}, "env": {{"HTTPS_PROXY": "x"}}}},
                  "transient": {transient}, "hard": {off}}}]}}"#,
            serde_json::to_value(kind.kind).expect("a kind serializes")
        );
        load(&text).expect("a valid document").document
    }

    #[test]
    fn a_changed_field_is_named_in_words_as_the_editor_labels_it() {
        let before = document(
            r#"{"wait_for_reset": {"enabled": false, "max_wait_seconds": 0},
                "retry": {"enabled": true, "max_retries": 3, "initial_interval_seconds": 5},
                "on_exhausted": "skip"}"#,
        );
        let after = document(
            r#"{"wait_for_reset": {"enabled": true, "max_wait_seconds": 60},
                "retry": {"enabled": true, "max_retries": 5, "initial_interval_seconds": 5},
                "on_exhausted": "skip"}"#,
        );
        let found = changes(&before, &after);
        let switch = found
            .iter()
            .find(|c| c.field == "transient.wait_for_reset.enabled")
            .expect("the switch changed");
        assert_eq!(
            switch.describe(),
            "Candidate “opus” › Transient › Wait for a trusted provider reset: off → on",
            "a switch reads as the editor shows it, not `false → true`"
        );
        let named: Vec<(String, String)> = found.into_iter().map(|c| (c.field, c.what)).collect();
        let pair = |f: &str, w: &str| (f.to_string(), w.to_string());
        assert_eq!(
            named,
            [
                pair("transient.retry.max_retries", "Transient › Retries"),
                // A switch is named by its label, not as `enabled`.
                pair(
                    "transient.wait_for_reset.enabled",
                    "Transient › Wait for a trusted provider reset"
                ),
                pair(
                    "transient.wait_for_reset.max_wait_seconds",
                    "Transient › Longest wait"
                ),
            ]
        );
    }

    #[test]
    fn a_change_is_described_in_the_words_the_app_shows() {
        let change =
            |candidate: Option<&str>, field: &str, before: Option<&str>, after: Option<&str>| {
                ProfileChange {
                    candidate: candidate.map(str::to_string),
                    field: field.into(),
                    what: match field {
                        "name" => "Profile name".into(),
                        "candidate" => "Added".into(),
                        f => candidate_field_words(f),
                    },
                    before: before.map(str::to_string),
                    after: after.map(str::to_string),
                }
                .describe()
            };
        assert_eq!(
            change(
                Some("opus"),
                "transient.retry.max_retries",
                Some("3"),
                Some("5")
            ),
            "Candidate “opus” › Transient › Retries: 3 → 5",
            "the field as the editor labels it, not its path"
        );
        assert_eq!(
            change(Some("opus"), "agent.env.KEY", None, Some(HIDDEN)),
            "Candidate “opus” › Environment variable KEY: added ((hidden))"
        );
        assert_eq!(
            change(Some("opus"), "agent.model", Some("big"), None),
            "Candidate “opus” › Model: removed (big)"
        );
        assert_eq!(
            change(None, "name", Some("A"), Some("B")),
            "Profile name: A → B"
        );
        assert_eq!(
            change(Some("opus"), "candidate", None, Some("X at position 1")),
            "Candidate “opus”: added (X at position 1)",
            "a whole candidate is not named twice"
        );
    }

    #[test]
    fn a_whole_candidate_is_named_by_its_kind_as_the_app_labels_it() {
        let before = document(
            r#"{"wait_for_reset": {"enabled": false, "max_wait_seconds": 0},
                "retry": {"enabled": false, "max_retries": 0, "initial_interval_seconds": 0},
                "on_exhausted": "skip"}"#,
        );
        let mut after = before.clone();
        let mut added = after.candidates[0].clone();
        added.name = "second".into();
        after.candidates.push(added.clone());
        let label = added.agent.kind.descriptor().label;
        let [change] = &changes(&before, &after)[..] else {
            panic!("one change: the candidate added");
        };
        assert_eq!(
            change.after.as_deref(),
            Some(format!("{label} at position 2").as_str()),
            "the app's label, not the document's kind name"
        );
        assert_eq!(
            change.describe(),
            format!("Candidate “second”: added ({label} at position 2)")
        );
        let [removed] = &changes(&after, &before)[..] else {
            panic!("one change: the candidate removed");
        };
        assert_eq!(
            removed.describe(),
            format!("Candidate “second”: removed ({label} at position 2)")
        );
    }
}
