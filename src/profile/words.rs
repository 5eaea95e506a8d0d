//! Field paths of a candidate list in words, for messages a person reads:
//! `candidates[0].transient.retry.initial_interval_seconds` is "Candidate 1
//! “opus” › Transient › First delay", named as the editor labels its fields.
//! The paths stay as they are for placing each error at its field and for
//! the command line, which prints them.

use crate::policy::FieldError;

/// The editor's label of each field, by its path below a candidate.
const LABELS: &[(&str, &str)] = &[
    ("name", "Name"),
    ("enabled", "Enabled"),
    ("agent.program", "Program"),
    ("agent.args", "Extra arguments"),
    ("agent.model", "Model"),
    ("agent.script", "Simulated script"),
    ("agent.simulates", "Fails like"),
    ("agent.env", "Environment variables"),
    ("agent.config_dir", "Config directory"),
    ("agent.timeouts.idle_s", "Idle timeout"),
    ("agent.timeouts.total_s", "Total timeout"),
    ("wait_for_reset.max_wait_seconds", "Longest wait"),
    ("wait_for_reset", "Wait for a trusted provider reset"),
    ("retry.max_retries", "Retries"),
    ("retry.initial_interval_seconds", "First delay"),
    ("retry", "Retry the same candidate"),
    ("on_exhausted", "When recovery is exhausted"),
    ("repeated_failure.threshold", "Identical failures"),
    (
        "repeated_failure",
        "Move on after identical unclassified failures",
    ),
];

/// `path` in words; `names` are the candidates' names in list order. A
/// path this does not know is returned as it is.
pub fn field_words(path: &str, names: &[String]) -> String {
    let Some((index, rest)) = candidate_path(path) else {
        return path.to_string();
    };
    let mut parts = vec![match names.get(index).filter(|n| !n.trim().is_empty()) {
        Some(name) => format!("Candidate {} “{}”", index + 1, name.trim()),
        None => format!("Candidate {}", index + 1),
    }];
    let rest = match rest.split_once('.') {
        Some(("transient", field)) => {
            parts.push("Transient".into());
            field
        }
        Some(("hard", field)) => {
            parts.push("Hard".into());
            field
        }
        Some(("unclassified", field)) => {
            parts.push("Unclassified".into());
            field
        }
        _ => rest,
    };
    if let Some(variable) = rest.strip_prefix("agent.env.") {
        parts.push(format!("Environment variable {variable}"));
    } else if !rest.is_empty() {
        let label = LABELS.iter().find(|(p, _)| *p == rest);
        parts.push(label.map_or(rest.to_string(), |(_, l)| (*l).to_string()));
    }
    parts.join(" › ")
}

/// Every error in words, `; `-separated: what a refused save says.
pub fn errors_in_words(errors: &[FieldError], names: &[String]) -> String {
    let lines: Vec<String> = errors
        .iter()
        .map(|e| format!("{}: {}", field_words(&e.path, names), e.message))
        .collect();
    lines.join("; ")
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
            "name",
            "not a candidate's field"
        );
    }
}
