//! Matching one rule against one piece of evidence.
//!
//! Structured alternatives are checked field by field; text alternatives run
//! a compiled regex over the sanitized message. Text found on a progress line
//! ("Retrying in 18s (attempt 6/10)", "Waiting for 10 seconds", a package
//! manager's "(2 tries remaining)") is ignored: a retry in progress is not
//! terminal evidence of anything.

use std::ops::Range;
use std::sync::LazyLock;

use regex::Regex;

use super::prefilter::TextHits;
use super::schema::{Matcher, Rule};
use crate::classification::Span;
use crate::evidence::Evidence;

/// Text that marks its line as a retry still in progress. It never matches a
/// line break, so one scan of the whole message finds every such line.
static PROGRESS_LINE: LazyLock<Regex> = LazyLock::new(|| {
    crate::ascii_regex::compile(
        concat!(
            r"(?i)retrying in \d|\(attempt \d+[^\S\n]*/[^\S\n]*\d+\)|\bre-?connecting\.{3}[^\S\n]*\d+[^\S\n]*/[^\S\n]*\d+",
            r"|;[^\S\n]*retrying(?: \d+/\d+ in\b|\.\.\.|…)|attempt \d+ failed\b[^\n]{0,400}?\bretrying (?:after|in|with)\b|retrying with backoff",
            r"|\bwaiting for \d+(?:\.\d+)? ?(?:ms|s|secs?|seconds?)\b|\bsleeping before retrying\b|\bwill retry(?: in \d|, error on last attempt)",
            r"|\bRetrying \(Retry\(total=\d|\(\d+ tries remaining\)|\bretrying \S{1,300} in \d+(?:\.\d+)? seconds as it raised\b",
        ),
    )
    .expect("progress pattern is valid")
});

/// Byte ranges of the message's progress lines, computed once per evidence.
#[derive(Debug, Default)]
pub(crate) struct ProgressLines(Vec<Range<usize>>);

impl ProgressLines {
    /// A progress line, and every following line indented deeper than it
    /// (Claude Code prints the cause of each retry under it: `⎿ TypeError
    /// (fetch failed)`), are progress.
    pub(crate) fn of(message: &str) -> ProgressLines {
        let mut marks = PROGRESS_LINE
            .find_iter(message)
            .map(|m| m.start())
            .peekable();
        let mut lines = Vec::new();
        let mut start = 0;
        let mut parent_indent: Option<usize> = None;
        for line in message.split_inclusive('\n') {
            let range = start..start + line.len();
            let indent = line.len() - line.trim_start_matches([' ', '\t']).len();
            let mut marked = false;
            while marks.next_if(|&at| at < range.end).is_some() {
                marked = true;
            }
            if marked {
                parent_indent = Some(indent);
                lines.push(range.clone());
            } else if parent_indent.is_some_and(|parent| indent > parent) {
                lines.push(range.clone());
            } else {
                parent_indent = None;
            }
            start = range.end;
        }
        ProgressLines(lines)
    }

    fn contains(&self, found: &Range<usize>) -> bool {
        self.0
            .iter()
            .any(|line| line.start <= found.start && found.end <= line.end)
    }

    pub(crate) fn count(&self) -> usize {
        self.0.len()
    }
}

/// One rule that matched, with where and how.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RuleMatch<'r> {
    pub rule: &'r Rule,
    /// Position of the rule in the catalogue (the last tie-breaker).
    pub index: usize,
    /// Matched bytes of the sanitized message, for text alternatives.
    pub span: Option<Span>,
    /// Whether the matching alternative checked a structured field.
    pub structured: bool,
}

/// The first alternative of `rule` that matches `evidence`, if any.
pub(crate) fn match_rule<'r>(
    rule: &'r Rule,
    index: usize,
    evidence: &Evidence,
    progress: &ProgressLines,
    hits: &TextHits<'_>,
) -> Option<RuleMatch<'r>> {
    if !rule.applies_to(evidence.provider) {
        return None;
    }
    rule.matchers
        .iter()
        .enumerate()
        .find_map(|(alternative, matcher)| {
            if !hits.may_match(index, alternative) || !structured_fields_hold(matcher, evidence) {
                return None;
            }
            let span = match &matcher.text {
                None => None,
                Some(regex) => Some(terminal_match(regex, &evidence.message, progress)?),
            };
            Some(RuleMatch {
                rule,
                index,
                span,
                structured: matcher.is_structured(),
            })
        })
}

fn structured_fields_hold(matcher: &Matcher, evidence: &Evidence) -> bool {
    let status_ok = matcher.http_status.is_empty()
        || evidence
            .http_status
            .is_some_and(|s| matcher.http_status.contains(&s));
    let type_ok = matcher.error_type.is_empty()
        || evidence.error_type.as_deref().is_some_and(|t| {
            matcher
                .error_type
                .iter()
                .any(|wanted| wanted.eq_ignore_ascii_case(t.trim()))
        });
    let headers_ok = matcher.header_present.iter().all(|name| {
        evidence
            .headers
            .keys()
            .any(|have| have.eq_ignore_ascii_case(name))
    });
    let exit_ok = matcher.exit_code.is_empty()
        || evidence
            .exit_code
            .is_some_and(|c| matcher.exit_code.contains(&c));
    let phase_ok =
        matcher.phase.is_empty() || evidence.phase.is_some_and(|p| matcher.phase.contains(&p));
    status_ok && type_ok && headers_ok && exit_ok && phase_ok
}

/// First match of `regex` that is not on a progress line.
fn terminal_match(regex: &Regex, message: &str, progress: &ProgressLines) -> Option<Span> {
    regex
        .find_iter(message)
        .map(|m| m.range())
        .find(|range| !progress.contains(range))
        .map(|range| Span {
            start: to_u32(range.start),
            end: to_u32(range.end),
        })
}

fn to_u32(offset: usize) -> u32 {
    u32::try_from(offset).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_code_retry_lines_are_progress() {
        let text = "  ⎿  API Error (529 {\"type\":\"error\"}) · Retrying in 5 seconds… (attempt 2/10)\nAPI Error: 529\n";
        let progress = ProgressLines::of(text);
        assert_eq!(progress.count(), 1, "only the retry line is progress");
        let terminal = text.find("API Error: 529").expect("present");
        assert!(!progress.contains(&(terminal..terminal + 5)));
    }

    #[test]
    fn codex_reconnect_and_gemini_backoff_lines_are_progress() {
        for line in [
            "Reconnecting... 2/5",
            "⚠  stream error: exceeded retry limit, last status: 401 Unauthorized; retrying 1/5 in 214ms…",
            "⚠ Attempt 1 failed with status 429. Retrying with backoff... ApiError",
            "Attempt 1 failed: You have exhausted your capacity on this model. Your quota will reset after 5s.. Retrying after 6173ms...",
            "stream error: stream disconnected before completion: stream closed before response.complete; retrying...",
            "Rate limit exceeded. Waiting for 10 seconds.",
            "warning: spurious network error (2 tries remaining): [7] Couldn't connect to server",
            "Retrying langchain.llms.openai.completion_with_retry.<locals>._completion_with_retry in 4.0 seconds as it raised APIError: HTTP code 502 from API ()",
        ] {
            assert_eq!(ProgressLines::of(line).count(), 1, "{line}");
        }
    }

    #[test]
    fn deeper_indented_lines_under_a_retry_belong_to_it() {
        let text = "API Error (Connection error.) · Retrying in 1 seconds… (attempt 1/10)\n    ⎿  TypeError (fetch failed)\nAPI Error: Connection error.\n";
        let progress = ProgressLines::of(text);
        assert_eq!(progress.count(), 2, "the retry line and its indented cause");
        let last = text.rfind("API Error").expect("present");
        assert!(
            !progress.contains(&(last..last + 9)),
            "the unindented final line is terminal"
        );
    }

    #[test]
    fn final_error_lines_are_not_progress() {
        for line in [
            "■ exceeded retry limit, last status: 401 Unauthorized, request id: 9a57",
            "API Error: 529 {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\"}}",
            "Rate limit reached for gpt-4o. Please try again in 20s.",
        ] {
            assert_eq!(ProgressLines::of(line).count(), 0, "{line}");
        }
    }
}
