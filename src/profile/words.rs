//! Problems of a profile document or a candidate list in words, for
//! messages a person reads: `candidates[0].transient.retry.initial_interval_seconds`
//! is "Candidate 1 “opus” › Transient › First delay", named as the editor
//! labels its fields, and serde's `unknown variant `foo`, expected …` is
//! "“foo” is not an agent kind Recourse knows; it knows …". A refused save, a
//! refused import in the app and `recourse profile import` all say it this
//! way. The paths stay as they are for placing each error at its field; the
//! command line prints each one after its words.

use crate::agent::AgentKind;
use crate::policy::FieldError;

/// The editor's label of each field, by its path below a candidate.
const LABELS: &[(&str, &str)] = &[
    ("name", "Name"),
    ("enabled", "Enabled"),
    ("agent", "Agent"),
    ("agent.kind", "Agent kind"),
    ("agent.access", "Access"),
    ("agent.program", "Program"),
    ("agent.args", "Extra arguments"),
    ("agent.model", "Model"),
    ("agent.script", "Simulated script"),
    ("agent.simulates", "Fails like"),
    ("agent.env", "Environment variables"),
    ("agent.config_dir", "Config directory"),
    ("agent.continue_message", "Continuation message"),
    ("agent.account", "Account"),
    ("agent.max_concurrent", "Most running at once"),
    ("agent.timeouts", "Timeouts"),
    ("agent.timeouts.idle_s", "Idle timeout"),
    ("agent.timeouts.total_s", "Total timeout"),
    ("wait_for_reset.max_wait_seconds", "Longest wait"),
    ("wait_for_reset", "Wait for a trusted provider reset"),
    ("retry.max_retries", "Retries"),
    ("retry.initial_interval_seconds", "First delay"),
    ("retry", "Retry the same candidate"),
    ("on_exhausted", "When recovery is used up"),
    (
        "auto_continue",
        "Continue the agent's session automatically",
    ),
    ("auto_continue.max_continuations", "Continuations"),
    ("repeated_failure.threshold", "Identical failures"),
    (
        "repeated_failure",
        "Move on after identical unclassified failures",
    ),
];

/// The document's own fields, outside any candidate.
const DOCUMENT_LABELS: &[(&str, &str)] = &[
    ("name", "Profile name"),
    ("version", "Version"),
    ("candidates", "Candidates"),
];

/// `path` in words; `names` are the candidates' names in list order. A
/// path this does not know is returned as it is.
pub fn field_words(path: &str, names: &[String]) -> String {
    let Some((index, rest)) = candidate_path(path) else {
        return DOCUMENT_LABELS
            .iter()
            .find(|(p, _)| *p == path)
            .map_or(path.to_string(), |(_, l)| (*l).to_string());
    };
    let mut parts = vec![match names.get(index).filter(|n| !n.trim().is_empty()) {
        Some(name) => format!("Candidate {} “{}”", index + 1, name.trim()),
        None => format!("Candidate {}", index + 1),
    }];
    if !rest.is_empty() {
        parts.push(candidate_field_words(rest));
    }
    parts.join(" › ")
}

/// A field below a candidate in words, as the editor labels it:
/// `transient.retry.max_retries` is "Transient › Retries", a switch's
/// `retry.enabled` is its label. A path this does not know is returned as
/// it is.
pub fn candidate_field_words(path: &str) -> String {
    let (section, rest) = match path.split_once('.').unwrap_or((path, "")) {
        ("transient", field) => (Some("Transient"), field),
        ("hard", field) => (Some("Hard"), field),
        ("unclassified", field) => (Some("Unclassified"), field),
        _ => (None, path),
    };
    let label = |p: &str| LABELS.iter().find(|(q, _)| *q == p).map(|(_, l)| *l);
    let field = if let Some(variable) = rest.strip_prefix("agent.env.") {
        Some(format!("Environment variable {variable}"))
    } else if rest.is_empty() {
        None
    } else {
        let switch = rest.strip_suffix(".enabled").and_then(label);
        Some(
            label(rest)
                .or(switch)
                .map_or(rest.to_string(), str::to_string),
        )
    };
    section
        .map(str::to_string)
        .into_iter()
        .chain(field)
        .collect::<Vec<_>>()
        .join(" › ")
}

/// One problem in words: where, then why. A problem with the whole file
/// (its syntax, its size) has no place.
pub fn error_words(error: &FieldError, names: &[String]) -> String {
    let (path, message) = reword(&error.path, &error.message);
    match path.as_str() {
        "document" | "file" => capitalized(&message),
        _ => format!("{}: {message}", field_words(&path, names)),
    }
}

/// Where `error` is in the document: its path, or the missing field's own
/// path when it names one (`candidates[0].hard.on_exhausted`, not
/// `candidates[0].hard`). What the command line prints after the words.
pub fn error_path(error: &FieldError) -> String {
    reword(&error.path, &error.message).0
}

/// Every error in words, one a line: what a refused save or import says.
/// Lines, not `; `: an error's own words may hold a `;`, and the app lists
/// each problem on its own.
pub fn errors_in_words(errors: &[FieldError], names: &[String]) -> String {
    let lines: Vec<String> = errors.iter().map(|e| error_words(e, names)).collect();
    lines.join("\n")
}

/// The candidates' names of a document's text, in order, as far as it can
/// be read: what [`error_words`] calls them when the document itself was
/// refused. Empty when the text is not JSON.
pub fn candidate_names(text: &str) -> Vec<String> {
    let Ok(value) = serde_json::from_str::<serde_json::Value>(text) else {
        return Vec::new();
    };
    let Some(candidates) = value.get("candidates").and_then(|c| c.as_array()) else {
        return Vec::new();
    };
    candidates
        .iter()
        .map(|c| {
            c.get("name")
                .and_then(|n| n.as_str())
                .unwrap_or_default()
                .to_string()
        })
        .collect()
}

/// serde's and serde_json's messages in words, and the place they name:
/// a missing field is placed at that field, an unknown one at the object
/// it is in. Any other message (the validator's own words) is kept.
fn reword(path: &str, message: &str) -> (String, String) {
    if let Some(field) = between(message, "missing field `", "`") {
        let at = match path {
            "document" => field.to_string(),
            p if last_segment(p) == field => p.to_string(),
            p => format!("{p}.{field}"),
        };
        return (at, "missing; the document must give it".to_string());
    }
    if let Some(rest) = message.strip_prefix("unknown field `") {
        let (field, expected) = rest.split_once('`').unwrap_or((rest, ""));
        let at = if last_segment(path) == field {
            parent(path)
        } else {
            path.to_string()
        };
        let known = one_of(expected);
        let said = if known.is_empty() {
            format!("“{field}” is not a field Recourse knows here")
        } else {
            format!(
                "“{field}” is not a field Recourse knows here; it knows {}",
                known.join(", ")
            )
        };
        return (at, said);
    }
    if let Some(rest) = message.strip_prefix("unknown variant `") {
        let (given, expected) = rest.split_once('`').unwrap_or((rest, ""));
        return (path.to_string(), unknown_choice(given, &one_of(expected)));
    }
    for prefix in ["invalid type: ", "invalid value: "] {
        if let Some(rest) = message.strip_prefix(prefix) {
            if let Some((found, expected)) = rest.rsplit_once(", expected ") {
                return (
                    path.to_string(),
                    format!(
                        "expected {}, found {}",
                        expected_words(expected),
                        found_words(found)
                    ),
                );
            }
        }
    }
    if let Some(rest) = message.strip_prefix("not valid JSON: ") {
        return (path.to_string(), syntax_words(rest));
    }
    (path.to_string(), message.to_string())
}

/// `given` is not one of `known`; agent kinds (by serde's name or the
/// document's slug) are named as the app labels them too.
fn unknown_choice(given: &str, known: &[String]) -> String {
    let kind_of = |name: &str| {
        AgentKind::ALL.into_iter().find(|k| {
            k.slug() == name || serde_json::to_value(k).is_ok_and(|v| v.as_str() == Some(name))
        })
    };
    if !known.is_empty() && known.iter().all(|k| kind_of(k).is_some()) {
        let each: Vec<String> = known
            .iter()
            .filter_map(|name| kind_of(name).map(|k| format!("{name} ({})", k.descriptor().label)))
            .collect();
        return format!(
            "“{given}” is not an agent kind Recourse knows; it knows {}",
            each.join(", ")
        );
    }
    if known.is_empty() {
        return format!("“{given}” is not a value Recourse knows here");
    }
    format!("“{given}” is not one of {}", known.join(", "))
}

/// The names in serde's `one of `a`, `b``, `` `a` or `b` `` or `` `a` ``.
fn one_of(expected: &str) -> Vec<String> {
    expected
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

/// serde's name of an expected type, in words.
fn expected_words(expected: &str) -> String {
    match expected {
        "u8" | "u16" | "u32" | "u64" | "usize" => "a whole number, 0 or more".to_string(),
        "i8" | "i16" | "i32" | "i64" | "isize" => "a whole number".to_string(),
        "f32" | "f64" => "a number".to_string(),
        "a string" | "a borrowed string" => "text in double quotes".to_string(),
        "a boolean" => "true or false".to_string(),
        "a sequence" => "a list in [ ]".to_string(),
        "a map" => "an object in { }".to_string(),
        e if e.starts_with("struct ") || e.contains("tagged enum") => {
            "an object in { }".to_string()
        }
        other => other.to_string(),
    }
}

/// serde's description of a value found, in words.
fn found_words(found: &str) -> String {
    if let Some(text) = found.strip_prefix("string ") {
        let text = text.trim_matches('"');
        return format!("the text “{text}”");
    }
    for prefix in ["integer ", "floating point "] {
        if let Some(n) = found.strip_prefix(prefix) {
            return format!("the number {}", n.trim_matches('`'));
        }
    }
    if let Some(b) = found.strip_prefix("boolean ") {
        return b.trim_matches('`').to_string();
    }
    match found {
        "unit value" | "null" => "null".to_string(),
        "sequence" => "a list".to_string(),
        "map" => "an object".to_string(),
        other => other.to_string(),
    }
}

/// serde_json's syntax message (`expected value at line 3 column 5`) in
/// words, with where in the file.
fn syntax_words(message: &str) -> String {
    let (reason, place) = match message.rsplit_once(" at line ") {
        Some((reason, at)) => match at.split_once(" column ") {
            Some((line, column)) => (reason, format!(" at line {line}, column {column}")),
            None => (message, String::new()),
        },
        None => (message, String::new()),
    };
    let why = match reason {
        "EOF while parsing a string" => {
            "the file ends inside a text value (a closing \" is missing)"
        }
        "EOF while parsing an object" => {
            "the file ends before an object is closed (a } is missing)"
        }
        "EOF while parsing a list" => "the file ends before a list is closed (a ] is missing)",
        "EOF while parsing a value" => "the file ends where a value should be",
        "expected value" => "a value was expected here",
        "expected `,` or `}`" => "a comma or } was expected here",
        "expected `,` or `]`" => "a comma or ] was expected here",
        "expected `:`" => "a : was expected after the key",
        "trailing comma" => "a comma before a closing bracket is not allowed",
        "key must be a string" => "a key must be text in double quotes",
        "trailing characters" => "there is more text after the end of the document",
        "invalid number" => "this is not a valid number",
        "invalid escape" => "this \\ escape is not valid in a text value",
        "control character (\\u0000-\\u001F) found while parsing a string" => {
            "a line break or control character inside a text value"
        }
        other => other,
    };
    format!("the file is not valid JSON{place}: {why}")
}

/// `text` with its first letter upper-case: a lower-case phrase (an error's
/// cause, a rule's description) made to start a sentence.
pub(crate) fn capitalized(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// The text between `open` and the next `close`.
fn between<'a>(text: &'a str, open: &str, close: &str) -> Option<&'a str> {
    let rest = text.strip_prefix(open)?;
    rest.split_once(close).map(|(inside, _)| inside)
}

fn last_segment(path: &str) -> &str {
    path.rsplit('.').next().unwrap_or(path)
}

fn parent(path: &str) -> String {
    path.rsplit_once('.')
        .map_or("document".to_string(), |(p, _)| p.to_string())
}

/// `candidates[3].rest` as (3, `rest`).
fn candidate_path(path: &str) -> Option<(usize, &str)> {
    let rest = path.strip_prefix("candidates[")?;
    let (index, rest) = rest.split_once(']')?;
    let rest = rest.strip_prefix('.').unwrap_or(rest);
    Some((index.parse().ok()?, rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_is_named_by_candidate_class_and_the_field_label() {
        let names = vec!["opus".to_string(), "  ".to_string()];
        assert_eq!(
            field_words(
                "candidates[0].transient.retry.initial_interval_seconds",
                &names
            ),
            "Candidate 1 “opus” › Transient › First delay"
        );
        assert_eq!(
            field_words("candidates[1].agent.env.HTTPS_PROXY", &names),
            "Candidate 2 › Environment variable HTTPS_PROXY"
        );
        assert_eq!(
            field_words("candidates[0].hard.wait_for_reset.max_wait_seconds", &names),
            "Candidate 1 “opus” › Hard › Longest wait"
        );
        assert_eq!(
            field_words(
                "candidates[0].unclassified.repeated_failure.threshold",
                &names
            ),
            "Candidate 1 “opus” › Unclassified › Identical failures",
            "the opt-in section is named as the editor labels it"
        );
        assert_eq!(
            field_words("name", &names),
            "Profile name",
            "the document's own field"
        );
    }

    /// One candidate "opus" of the first kind that runs a CLI, with
    /// `agent` as given and `transient` replaced when `transient` is some.
    fn document(agent: &str, transient: Option<&str>) -> String {
        let section = r#"{"wait_for_reset": {"enabled": false, "max_wait_seconds": 0},
            "retry": {"enabled": false, "max_retries": 0, "initial_interval_seconds": 0},
            "on_exhausted": "skip"}"#;
        format!(
            r#"{{"version": 1, "name": "P", "candidates": [
                {{"name": "opus", "agent": {agent},
                  "transient": {}, "hard": {section}}}]}}"#,
            transient.unwrap_or(section)
        )
    }

    /// What the app and `recourse profile import` say about `text`.
    fn refusal(text: &str) -> String {
        let error = crate::profile::document::load(text).expect_err("refused");
        errors_in_words(&error.errors(), &candidate_names(text))
    }

    #[test]
    fn an_unknown_agent_kind_is_named_with_the_kinds_recourse_knows() {
        let kind = AgentKind::ALL[1].descriptor();
        let said = refusal(&document(r#"{"kind": "foo"}"#, None));
        assert!(
            said.starts_with(
                "Candidate 1 “opus” › Agent kind: “foo” is not an agent kind Recourse knows; it knows "
            ),
            "which candidate, which field, why: {said}"
        );
        assert!(
            said.contains(&format!("({})", kind.label)),
            "each kind by the name the app shows too: {said}"
        );
        let said = refusal(&document(r#""foo""#, None));
        assert!(
            said.starts_with(
                "Candidate 1 “opus” › Agent: “foo” is not an agent kind Recourse knows; it knows "
            ) && said.contains(&format!("{} ({})", kind.slug, kind.label)),
            "the short form names each kind by its document name and its label: {said}"
        );
    }

    #[test]
    fn an_unknown_choice_a_missing_field_and_a_wrong_type_are_said_in_words() {
        let agent = format!("\"{}\"", AgentKind::ALL[1].slug());
        let later = r#"{"wait_for_reset": {"enabled": false, "max_wait_seconds": 0},
            "retry": {"enabled": false, "max_retries": 0, "initial_interval_seconds": 0},
            "on_exhausted": "later"}"#;
        assert_eq!(
            refusal(&document(&agent, Some(later))),
            "Candidate 1 “opus” › Transient › When recovery is used up: “later” is not one of skip, stop"
        );
        let missing = r#"{"wait_for_reset": {"enabled": false, "max_wait_seconds": 0},
            "retry": {"enabled": false, "max_retries": 0, "initial_interval_seconds": 0}}"#;
        assert_eq!(
            refusal(&document(&agent, Some(missing))),
            "Candidate 1 “opus” › Transient › When recovery is used up: missing; the document must give it",
            "placed at the missing field, not at its section"
        );
        let text = r#"{"wait_for_reset": {"enabled": false, "max_wait_seconds": 0},
            "retry": {"enabled": true, "max_retries": "three", "initial_interval_seconds": 5},
            "on_exhausted": "skip"}"#;
        assert_eq!(
            refusal(&document(&agent, Some(text))),
            "Candidate 1 “opus” › Transient › Retries: expected a whole number, 0 or more, found the text “three”"
        );
        let kind = serde_json::to_value(AgentKind::ALL[0]).unwrap();
        let said = refusal(&document(
            &format!(r#"{{"kind": {kind}, "modle": "x"}}"#),
            None,
        ));
        assert!(
            said.starts_with(
                "Candidate 1 “opus” › Agent: “modle” is not a field Recourse knows here; it knows "
            ),
            "an unknown field is placed at the object it is in: {said}"
        );
    }

    #[test]
    fn every_wrong_word_is_said_not_only_the_first() {
        let agent = format!("\"{}\"", AgentKind::ALL[1].slug());
        let later = r#"{"wait_for_reset": {"enabled": false, "max_wait_seconds": 0},
            "retry": {"enabled": false, "max_retries": 0, "initial_interval_seconds": 0},
            "on_exhausted": "later"}"#;
        let text = document(&agent, Some(later)).replace(
            r#""on_exhausted": "skip"}}]"#,
            r#""on_exhausted": "later"}}]"#,
        );
        let names = ["opus".to_string()];
        let why = "“later” is not one of skip, stop";
        assert_eq!(
            refusal(&text),
            format!(
                "{}: {why}\n{}: {why}",
                field_words("candidates[0].hard.on_exhausted", &names),
                field_words("candidates[0].transient.on_exhausted", &names),
            ),
            "both sections, each once, in document order"
        );
        let misspelt = r#"{"wait_for_reset": {"enabled": false, "max_wait_seconds": 0},
            "retry": {"enabled": false, "max_retries": 0, "intial_interval_seconds": 0},
            "on_exhausted": "skip"}"#;
        let said = refusal(&document(&agent, Some(misspelt)));
        assert!(
            said.starts_with(
                "Candidate 1 “opus” › Transient › Retry the same candidate: “intial_interval_seconds” is not a field Recourse knows here"
            ) && !said.contains("missing"),
            "a misspelt field is one problem, not also a missing one: {said}"
        );
    }

    #[test]
    fn a_syntax_error_says_where_in_the_file_and_why() {
        assert_eq!(
            refusal("{\"version\": 1, \"name\": \"X\", \"candi"),
            "The file is not valid JSON at line 1, column 34: the file ends inside a text value (a closing \" is missing)"
        );
        assert_eq!(
            refusal("{\"version\": 1,\n \"name\": \"X\",\n}"),
            "The file is not valid JSON at line 3, column 1: a comma before a closing bracket is not allowed"
        );
    }

    #[test]
    fn a_message_that_is_already_words_is_kept() {
        let error = FieldError::new("candidates[0].name", "must not be empty");
        assert_eq!(
            error_words(&error, &[]),
            "Candidate 1 › Name: must not be empty"
        );
    }
}
