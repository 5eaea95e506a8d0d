//! Reading a document past its first problem, so a refusal lists every
//! field a person has to fix, not one per attempt.
//!
//! serde stops at the first error. [`read_all`] records it, puts a stand-in
//! where it was (the value a valid template has at that place, or nothing
//! when the field may be left out) and reads again, until the document
//! reads or a problem leaves nothing to stand in. The places it stood in for
//! are returned too: a check that reads one of them would judge the
//! stand-in, not the person's value, so callers skip those checks.

use serde::de::DeserializeOwned;
use serde_json::Value;
use serde_path_to_error::Segment;

use super::document::{field_path, written_path, PathPart};
use super::validate::FieldError;

/// The most problems listed: a document with thousands of wrong fields is
/// refused after this many, with how many more there are (or that there
/// may be more).
pub const MAX_PROBLEMS: usize = 50;

/// What [`read_all`] found.
pub struct Reading<T> {
    /// The document with stand-ins; `None` when a problem left nothing to
    /// stand in, or after [`MAX_PROBLEMS`].
    pub value: Option<T>,
    /// Every problem, each once, in the order serde met them.
    pub errors: Vec<FieldError>,
    /// The paths whose value is a stand-in (or a default) in `value`.
    pub patched: Vec<String>,
    /// False when reading stopped at [`MAX_PROBLEMS`]: there may be more.
    pub complete: bool,
}

/// One step of a path into a JSON value.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Step {
    Key(String),
    Index(usize),
}

/// Reads `value` as `T`, listing every problem. Paths start with `prefix`
/// (empty for a whole document). `stand_in` gives a valid value for a
/// place, by its path below `prefix` as a JSON pointer (`/transient/retry`);
/// a problem at or under a path in `reported` is the caller's, already
/// listed: it is stood in for the same way but not listed again.
pub fn read_all<T: DeserializeOwned>(
    mut value: Value,
    prefix: &str,
    stand_in: &dyn Fn(&str) -> Option<Value>,
    reported: &[String],
) -> Reading<T> {
    let mut reading = Reading {
        value: None,
        errors: Vec::new(),
        patched: Vec::new(),
        complete: true,
    };
    // The objects an unknown field was taken out of.
    let mut misspelt_in: Vec<Vec<Step>> = Vec::new();
    // Each round fixes one place, so a round per problem and one per
    // stand-in of a field taken out; the bound only guards a mistake.
    for _ in 0..4 * MAX_PROBLEMS {
        let error = match serde_path_to_error::deserialize::<_, T>(&value) {
            Ok(read) => {
                reading.value = Some(read);
                return reading;
            }
            Err(error) => error,
        };
        let path = joined(prefix, &field_path(error.path()));
        let found = steps(error.path());
        let message = error.into_inner().to_string();
        let Some(mut steps) = found else {
            // A place with no path to stand in at: listed, and the end.
            reading.errors.push(FieldError::new(path, message));
            return reading;
        };
        let mut record = |at: &[Step]| {
            let place = joined(prefix, &field_path_of(at));
            if !reported.iter().any(|r| is_under(&place, r)) {
                reading.errors.push(FieldError::new(&path, &message));
            }
        };
        if let Some(field) = quoted_after(&message, "missing field `") {
            if steps.last() != Some(&Step::Key(field.to_string())) {
                steps.push(Step::Key(field.to_string()));
            }
            let place = joined(prefix, &field_path_of(&steps));
            if reading.patched.contains(&place) {
                // A field taken out earlier with nothing to stand in.
                return reading;
            }
            // Next to an unknown field it is most likely that field
            // misspelt (`treshold`): one problem, listed once.
            if !misspelt_in.contains(&steps[..steps.len() - 1].to_vec()) {
                record(&steps);
            }
            let Some(valid) = stand_in(&pointer(&steps)) else {
                return reading;
            };
            if !insert(&mut value, &steps, valid) {
                return reading;
            }
            reading.patched.push(place);
        } else if let Some(field) = quoted_after(&message, "unknown field `") {
            record(&steps);
            if steps.last() != Some(&Step::Key(field.to_string())) {
                steps.push(Step::Key(field.to_string()));
            }
            // Nothing reads an unknown field: taking it out changes no
            // other check.
            if !remove(&mut value, &steps) {
                return reading;
            }
            misspelt_in.push(steps[..steps.len() - 1].to_vec());
        } else {
            record(&steps);
            let place = joined(prefix, &field_path_of(&steps));
            if reading.patched.contains(&place) {
                return reading;
            }
            let fixed = match stand_in(&pointer(&steps)) {
                Some(valid) => insert(&mut value, &steps, valid),
                // Left out: its default, or "missing" next round.
                None => matches!(steps.last(), Some(Step::Key(_))) && remove(&mut value, &steps),
            };
            if !fixed {
                return reading;
            }
            reading.patched.push(place);
        }
        if reading.errors.len() >= MAX_PROBLEMS {
            reading.complete = false;
            return reading;
        }
    }
    reading.complete = false;
    reading
}

/// Whether `path` is `under` or inside it (`a.b[2].c` is under `a.b`, not
/// under `a.bc`).
pub fn is_under(path: &str, under: &str) -> bool {
    path.strip_prefix(under)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('.') || rest.starts_with('['))
}

/// `errors` (in the order to list them) at most [`MAX_PROBLEMS`] of them
/// and then how many more there are; `complete` false says there may be
/// more than were found.
pub fn listed(mut errors: Vec<FieldError>, complete: bool) -> Vec<FieldError> {
    if errors.len() > MAX_PROBLEMS {
        let more = errors.len() - MAX_PROBLEMS;
        errors.truncate(MAX_PROBLEMS);
        errors.push(FieldError::new(
            "document",
            format!(
                "{more}{} more problem{} not listed here",
                if complete { "" } else { " or" },
                if more == 1 && complete { "" } else { "s" }
            ),
        ));
    } else if !complete {
        errors.push(FieldError::new(
            "document",
            format!("reading stopped after {MAX_PROBLEMS} problems; there may be more after these"),
        ));
    }
    errors
}

/// "1 problem", "12 problems" (with `noun` "problem") for a list made by
/// [`listed`]: past [`MAX_PROBLEMS`] its last line says how many more there
/// are (or may be), and is not one of them.
pub fn how_many(listed: usize, noun: &str) -> String {
    match listed {
        1 => format!("1 {noun}"),
        n if n > MAX_PROBLEMS => format!("at least {MAX_PROBLEMS} {noun}s"),
        n => format!("{n} {noun}s"),
    }
}

/// The document's own keys (`name`, `version`) first, then the list, then
/// each candidate in order (`candidates[10]` after `candidates[2]`).
pub fn path_order(path: &str) -> (u8, usize, String) {
    let Some(rest) = path.strip_prefix("candidates") else {
        return (0, 0, path.to_string());
    };
    let index = rest
        .strip_prefix('[')
        .and_then(|r| r.split(']').next())
        .and_then(|n| n.parse::<usize>().ok())
        .map_or(0, |n| n + 1);
    (1, index, path.to_string())
}

fn steps(path: &serde_path_to_error::Path) -> Option<Vec<Step>> {
    path.iter()
        .map(|segment| match segment {
            Segment::Seq { index } => Some(Step::Index(*index)),
            Segment::Map { key } => Some(Step::Key(key.clone())),
            Segment::Enum { .. } | Segment::Unknown => None,
        })
        .collect()
}

/// `steps` as [`field_path`] writes a path.
fn field_path_of(steps: &[Step]) -> String {
    written_path(steps.iter().map(|step| match step {
        Step::Index(i) => PathPart::Index(*i),
        Step::Key(key) => PathPart::Key(key),
    }))
}

/// `inner` (a path as [`field_path`] writes it) below `prefix`.
fn joined(prefix: &str, inner: &str) -> String {
    match (prefix, inner) {
        ("", inner) => inner.to_string(),
        (prefix, "document") => prefix.to_string(),
        (prefix, inner) if inner.starts_with('[') => format!("{prefix}{inner}"),
        (prefix, inner) => format!("{prefix}.{inner}"),
    }
}

/// `steps` as a JSON pointer (`/candidates/0/name`).
fn pointer(steps: &[Step]) -> String {
    steps
        .iter()
        .map(|step| match step {
            Step::Key(key) => format!("/{}", key.replace('~', "~0").replace('/', "~1")),
            Step::Index(i) => format!("/{i}"),
        })
        .collect()
}

/// The text between `open` (at the start of `text`) and the next backtick.
fn quoted_after<'a>(text: &'a str, open: &str) -> Option<&'a str> {
    text.strip_prefix(open)?
        .split_once('`')
        .map(|(inside, _)| inside)
}

fn parent_of<'a>(value: &'a mut Value, steps: &[Step]) -> Option<&'a mut Value> {
    let mut at = value;
    for step in steps {
        at = match (step, at) {
            (Step::Key(key), Value::Object(fields)) => fields.get_mut(key)?,
            (Step::Index(i), Value::Array(items)) => items.get_mut(*i)?,
            _ => return None,
        };
    }
    Some(at)
}

/// Puts `new` at `steps` (replacing what is there); false when the place
/// does not exist.
fn insert(value: &mut Value, steps: &[Step], new: Value) -> bool {
    let Some((last, parent)) = steps.split_last() else {
        *value = new;
        return true;
    };
    match (last, parent_of(value, parent)) {
        (Step::Key(key), Some(Value::Object(fields))) => {
            fields.insert(key.clone(), new);
            true
        }
        (Step::Index(i), Some(Value::Array(items))) if *i < items.len() => {
            items[*i] = new;
            true
        }
        _ => false,
    }
}

/// Takes the field at `steps` out of its object; false when it is not one.
fn remove(value: &mut Value, steps: &[Step]) -> bool {
    let Some((Step::Key(key), parent)) = steps.split_last() else {
        return false;
    };
    match parent_of(value, parent) {
        Some(Value::Object(fields)) => fields.remove(key).is_some(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn many(n: usize) -> Vec<FieldError> {
        (0..n)
            .map(|i| FieldError::new(format!("candidates[{i}].name"), "must not be empty"))
            .collect()
    }

    #[test]
    fn past_the_cap_the_list_says_how_many_more() {
        let list = listed(many(MAX_PROBLEMS), true);
        assert_eq!(list.len(), MAX_PROBLEMS, "the cap itself is listed whole");
        let list = listed(many(MAX_PROBLEMS + 1), true);
        assert_eq!(
            list[MAX_PROBLEMS],
            FieldError::new("document", "1 more problem not listed here")
        );
        let list = listed(many(MAX_PROBLEMS + 3), false);
        assert_eq!(
            list[MAX_PROBLEMS],
            FieldError::new("document", "3 or more problems not listed here"),
            "reading stopped: what was found is the least there is"
        );
    }

    #[test]
    fn a_list_past_the_cap_is_counted_without_its_last_line() {
        assert_eq!(
            how_many(listed(many(1), true).len(), "problem"),
            "1 problem"
        );
        assert_eq!(
            how_many(listed(many(MAX_PROBLEMS), true).len(), "error"),
            "50 errors"
        );
        assert_eq!(
            how_many(listed(many(MAX_PROBLEMS + 1900), true).len(), "problem"),
            "at least 50 problems",
            "the line saying how many more is not a 51st problem"
        );
    }

    #[test]
    fn a_path_is_under_itself_and_its_ancestors_only() {
        assert!(is_under("candidates[2].hard.retry", "candidates[2]"));
        assert!(is_under("candidates[2]", "candidates[2]"));
        assert!(is_under("candidates[2].agent", "candidates"));
        assert!(!is_under("candidates[20].agent", "candidates[2]"));
        assert!(!is_under("candidates[2].agents", "candidates[2].agent"));
    }
}
